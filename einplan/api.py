"""The public ``einsum``: steps 1 -> 2 -> 3 of the data flow in DESIGN.md.

    parse_spec (1) -> describe operands (1') -> make_plan (2, cached) -> run_plan (3)

numpy.einsum's signature and semantics; only ``optimize`` defaults to True
(pairwise order from opt_einsum), which changes the order of floating-point
sums, never the result's shape or dtype.
"""
from __future__ import annotations

import numpy as np

from .execute import run_plan
from .operands import describe, describe_operands
from .planner import Options, make_plan
from .spec import parse_spec

_DEFAULT_OPTIONS = Options()


def einsum(*operands, out=None, dtype=None, order="K", casting="safe", optimize=True):
    """Evaluate the Einstein summation convention on the operands (numpy.einsum).

    >>> einsum("ij,jk->ik", a, b)          # string form
    >>> einsum(a, [0, 1], b, [1, 2], [0, 2])  # interleaved form
    """
    spec, arrays = parse_spec(operands)
    if dtype is None and order == "K" and casting == "safe" and optimize is True:
        options = _DEFAULT_OPTIONS  # hot path: no validation, no new object
    else:
        options = Options.make(dtype, order, casting, optimize)
    out_info = None
    if out is not None:
        if not isinstance(out, np.ndarray):
            raise TypeError("'out' must be an array")
        if not out.flags.writeable:
            raise ValueError("output array is read-only")
        out_info = describe(out)
    plan = make_plan(spec, describe_operands(arrays), options, out_info)
    return run_plan(plan, arrays, out)
