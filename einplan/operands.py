"""Step 1' of the data flow in DESIGN.md: describe the operands.

``OperandInfo`` holds what planning needs from an array: shape, strides in
ELEMENTS (numpy gives bytes; they are converted here, once, and every later
stage uses elements) and dtype.  ``resolve_dtype`` mirrors numpy.einsum's
dtype rules (``np.result_type`` over the operands, ``dtype=``, ``casting=``)
including its TypeError wording; ``plan_key`` is the hashable cache key.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

_CASTINGS = ("no", "equiv", "safe", "same_kind", "unsafe")
_ORDERS = ("C", "F", "A", "K")


@dataclass(frozen=True)
class OperandInfo:
    shape: tuple[int, ...]
    strides: tuple[int, ...] | None   # elements; None if a byte stride is not a multiple of itemsize
    dtype: np.dtype
    aligned: bool = True
    c_contiguous: bool = False
    f_contiguous: bool = False
    is_constant: bool = False


def describe(arr: np.ndarray) -> OperandInfo:
    """OperandInfo of one ndarray (byte strides -> element strides)."""
    item = arr.itemsize
    bs = arr.strides
    if item and all(s % item == 0 for s in bs):
        strides = tuple(s // item for s in bs)
    else:
        strides = None  # e.g. a field of a structured array: not expressible in elements
    flags = arr.flags
    return OperandInfo(arr.shape, strides, arr.dtype, flags.aligned,
                       flags.c_contiguous, flags.f_contiguous)


def describe_operands(operands) -> tuple[OperandInfo, ...]:
    return tuple(describe(op) for op in operands)


def check_options(order, casting):
    """ValueErrors worded like numpy's for bad ``order=`` / ``casting=``."""
    if order not in _ORDERS:
        raise ValueError(f"order must be one of 'C', 'F', 'A', or 'K' (got {order!r})")
    if casting not in _CASTINGS:
        raise ValueError("casting must be one of 'no', 'equiv', 'safe', 'same_kind', "
                         f"'unsafe' (got {casting!r})")


def resolve_dtype(dtypes, dtype=None, casting="safe", out_dtype=None) -> np.dtype:
    """The dtype the contraction is computed in, like numpy.einsum.

    numpy converts every operand to an array first, so Python scalars are not
    "weak" here: ``einsum('i,->i', float32_array, 2.0)`` is float64.
    """
    if dtype is None:
        res = np.result_type(*dtypes) if dtypes else np.dtype(np.float64)
    else:
        res = np.dtype(dtype)
        for i, dt in enumerate(dtypes):
            if not np.can_cast(dt, res, casting=casting):
                raise TypeError(f"Iterator operand {i} dtype could not be cast from "
                                f"dtype('{dt}') to dtype('{res}') according to the rule "
                                f"'{casting}'")
    if out_dtype is not None and not np.can_cast(res, out_dtype, casting=casting):
        raise TypeError(f"Iterator requested dtype could not be cast from dtype('{res}') "
                        f"to dtype('{np.dtype(out_dtype)}'), the operand {len(dtypes)} "
                        f"dtype, according to the rule '{casting}'")
    return res


def optimize_key(optimize):
    """numpy's optimize values as something hashable (explicit paths as tuples)."""
    if isinstance(optimize, (list, tuple)):
        return tuple(tuple(x) if isinstance(x, (list, tuple)) else x for x in optimize)
    return optimize


def plan_key(inputs, output, infos, out_info, options) -> tuple:
    """Hashable key for the plan cache.

    Everything a plan depends on: terms, shapes, element strides, dtypes,
    alignment, the out= layout and the options (dtype, order, casting, optimize).
    Data pointers are NOT part of it: a plan is reused for new arrays.
    """
    ops = tuple((i.shape, i.strides, i.dtype.str, i.aligned) for i in infos)
    out = None if out_info is None else (out_info.shape, out_info.strides,
                                         out_info.dtype.str, out_info.aligned)
    return (tuple(inputs), output, ops, out, options)
