"""The public ``einsum``: steps 1 -> 2 -> 3 of the data flow in DESIGN.md.

    parse_spec (1) -> describe operands (1') -> make_plan (2, cached) -> run_plan (3)

numpy.einsum's signature and semantics; only ``optimize`` defaults to True
(pairwise order from opt_einsum), which changes the order of floating-point
sums, never the result's shape or dtype.

Hot path: a call on plain ndarrays (and a plain ndarray ``out=``, if any)
is looked up by (subscripts, shapes, strides, dtypes, alignment, and the
options when they are not the defaults) in a small dict that maps straight
to the cached plan and a prepared runner, skipping the parse and the operand
description (numpy.einsum's optimizer was turned off by default because
planning cost 10-30x on small arrays: einplan must not pay it).
"""
from __future__ import annotations

import threading

import numpy as np

from . import _native
from .deferral import defer, protocol_reason
from .execute import run_plan, simple_runner
from .operands import describe, describe_operands, numpy_pairwise_dtypes
from .options import CASTING_OMITTED, OPTIMIZE_OMITTED, Options
from .planner import make_plan
from .spec import parse_spec

_DEFAULT_OPTIONS = Options()
_ndarray = np.ndarray
_FAST_MAX = 1024          # entries of the hot-path dict (cleared when full)
_fast: dict = {}
_fast_lock = threading.Lock()
# set by einplan.profile while a profile is open (None: one test per call)
_recorder = None


def _py_fast_key(operands, out):
    """Hashable description of a default-options call on plain ndarrays, or
    None (the compiled ``_native.call_key`` does the same ~5x faster)."""
    subs = operands[0] if operands else None
    if subs.__class__ is not str:
        return None
    key = [subs]
    for op in operands[1:]:
        if op.__class__ is not _ndarray:
            return None
        key += (op.shape, op.strides, op.dtype, op.flags.aligned)
    if out is not None:
        # writeable is part of the key: a read-only out= must reach the check
        if out.__class__ is not _ndarray:
            return None
        key += (None, out.shape, out.strides, out.dtype, out.flags.aligned,
                out.flags.writeable)
    return tuple(key)


_fast_key = _native.call_key or _py_fast_key


def _given(out, dtype, order, casting, optimize) -> dict:
    """The options the caller gave, for numpy.einsum (whose default optimize
    is False, einplan's True)."""
    kw = {} if out is None else {"out": out}
    if dtype is not None:
        kw["dtype"] = dtype
    if order != "K":
        kw["order"] = order
    if casting is not CASTING_OMITTED:
        kw["casting"] = casting
    if optimize is not OPTIMIZE_OMITTED:
        kw["optimize"] = optimize
    return kw


def einsum(*operands, out=None, dtype=None, order="K", casting=CASTING_OMITTED,
           optimize=OPTIMIZE_OMITTED):
    """Evaluate the Einstein summation convention on the operands (numpy.einsum).

    >>> einsum("ij,jk->ik", a, b)          # string form
    >>> einsum(a, [0, 1], b, [1, 2], [0, 2])  # interleaved form
    """
    rec = _recorder
    if rec is not None and not rec.busy.on:
        return rec.einsum(operands, out, dtype, order, casting, optimize)
    default = (dtype is None and order == "K" and casting is CASTING_OMITTED
               and optimize is OPTIMIZE_OMITTED)
    key = _fast_key(operands, out)
    if key is not None and not default:
        # other options key a plan of their own (matmul's out= passes
        # casting='same_kind' on every call); an explicit path list cannot
        opts = (dtype, order, casting, optimize)
        try:
            hash(opts)
        except TypeError:
            key = None
        else:
            key = key + (opts,)
    if key is not None:
        hit = _fast.get(key)
        if hit is not None:
            plan, runner = hit
            if runner is not None:
                return runner(operands[1:]) if out is None else runner(operands[1:], out)
            return run_plan(plan, operands[1:], out)

    reason = protocol_reason(operands if out is None else operands + (out,))
    if reason is not None:
        return defer(reason, np.einsum, *operands, **_given(out, dtype, order, casting, optimize))
    spec, arrays = parse_spec(operands)
    options = _DEFAULT_OPTIONS if default else Options.make(dtype, order, casting, optimize)
    out_info = None
    if out is not None:
        if not isinstance(out, np.ndarray):
            raise TypeError("'out' must be an array")
        # numpy's pairwise path checks the casts first (its fallback raises)
        if not out.flags.writeable and not numpy_pairwise_dtypes(
                options.optimize, [a.dtype for a in arrays], options.dtype, out.dtype):
            raise ValueError("output array is read-only")
        out_info = describe(out)
    plan = make_plan(spec, describe_operands(arrays), options, out_info)
    if key is not None:
        with _fast_lock:
            if len(_fast) >= _FAST_MAX:
                _fast.clear()
            _fast[key] = (plan, simple_runner(plan, out is not None))
    return run_plan(plan, arrays, out)
