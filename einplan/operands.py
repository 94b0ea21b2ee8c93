"""Beside step 1 of the data flow (drawn in einplan/__init__.py): describe the operands.

``OperandInfo`` holds what planning needs from an array: shape, strides in
ELEMENTS (numpy gives bytes; they are converted here, once, and every later
stage uses elements) and dtype.  ``resolve_dtype`` mirrors numpy.einsum's
dtype rules (``np.result_type`` over the operands, ``dtype=``, ``casting=``)
including its TypeError wording; ``plan_key`` is the hashable cache key.
``Virtual`` is an operand given by its shape, dtype and strides only (explain,
the CLI and the profiler plan for layouts without holding data).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.lib.stride_tricks import as_strided

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


_PTRDIFF_MAX = 2**63 - 1


def check_span(info: OperandInfo, what: str) -> None:
    """ValueError if the array's shape and strides claim more bytes than a pointer spans.

    numpy never builds such an array itself, but ``as_strided`` can (e.g.
    strides of 2**62 bytes); reading through it would wrap pointer
    arithmetic.  Broadcast (stride 0) and size-0 arrays span nothing.
    """
    if info.strides is None or 0 in info.shape:
        return
    span = sum((e - 1) * abs(st) for e, st in zip(info.shape, info.strides))
    nbytes = (span + 1) * info.dtype.itemsize
    if nbytes > _PTRDIFF_MAX:
        raise ValueError(
            f"{what} with shape {info.shape} and element strides {info.strides} "
            f"spans {nbytes} bytes, more than a pointer can address")


def describe_operands(operands) -> tuple[OperandInfo, ...]:
    return tuple(describe(op) for op in operands)


def check_options(order, casting) -> tuple[str, str]:
    """Normalized ``(order, casting)``; errors worded like numpy's.

    As numpy: ``order`` is case-insensitive ('c' == 'C'), None means 'K',
    bytes are decoded; a non-string is a TypeError, an unknown value a
    ValueError.  ``casting`` is case-sensitive.
    """
    if order is None:
        order = "K"
    if isinstance(order, bytes):
        order = order.decode("latin-1")
    if not isinstance(order, str):
        raise TypeError(f"order must be str, not {type(order).__name__}")
    if order.upper() not in _ORDERS:
        raise ValueError(f"order must be one of 'C', 'F', 'A', or 'K' (got {order!r})")
    if isinstance(casting, bytes):
        casting = casting.decode("latin-1")
    if not isinstance(casting, str):
        raise TypeError(f"casting must be str, not {type(casting).__name__}")
    if casting not in _CASTINGS:
        raise ValueError("casting must be one of 'no', 'equiv', 'safe', 'same_kind', "
                         f"'unsafe' (got {casting!r})")
    return order.upper(), casting


def resolve_dtype(dtypes, dtype=None, casting="safe", out_dtype=None) -> np.dtype:
    """The dtype the contraction is computed in, with numpy.einsum's casting checks.

    These are the rules of numpy's iterator as numpy.einsum sets it up: the
    computation dtype is ``dtype=`` or, without it, ``np.result_type`` of the
    operands AND ``out=`` (so bool operands with a complex ``out=`` are summed
    as complex, not OR-ed); every operand is cast to it under ``casting``;
    ``out=`` is read and written, so the cast must pass ``casting`` both ways.
    numpy converts every operand to an array first, so Python scalars are not
    "weak" here: ``einsum('i,->i', float32_array, 2.0)`` is float64.  Every
    engine and every fallback computes in the dtype returned here.
    """
    if dtype is not None:
        res = np.dtype(dtype)
        if not res.isnative:  # the iterator computes in native byte order
            res = res.newbyteorder("=")
    elif out_dtype is not None:
        res = np.result_type(*dtypes, out_dtype)
    else:
        res = np.result_type(*dtypes) if dtypes else np.dtype(np.float64)
    for i, dt in enumerate(dtypes):
        if not np.can_cast(dt, res, casting=casting):
            raise TypeError(f"Iterator operand {i} dtype could not be cast from "
                            f"{dt!r} to {res!r} according to the rule '{casting}'")
    if out_dtype is not None:
        out_dtype = np.dtype(out_dtype)
        if not np.can_cast(out_dtype, res, casting=casting):
            raise TypeError(f"Iterator operand {len(dtypes)} dtype could not be cast from "
                            f"{out_dtype!r} to {res!r} according to the rule '{casting}'")
        if not np.can_cast(res, out_dtype, casting=casting):
            raise TypeError(f"Iterator requested dtype could not be cast from {res!r} "
                            f"to {out_dtype!r}, the operand {len(dtypes)} "
                            f"dtype, according to the rule '{casting}'")
    return res


# optimize= values for which numpy.einsum runs its pairwise Python path
# (bmm_einsum: matmul / multiply per pair in the operands' own dtypes, the
# last one writing into out= by ufunc rules or ``out[...] = ab``) instead of
# its single iterator.  einplan's default optimize=True keeps numpy's
# default (optimize=False) dtype semantics.
def numpy_pairwise_dtypes(optimize, dtypes, dtype, out_dtype) -> bool:
    """True where numpy.einsum's result dtype or casting differs from the
    iterator's rules: an explicit path finder or path with two or more
    operands whose dtypes, ``dtype=`` or ``out=`` dtype are not all one, or
    not in native byte order."""
    if optimize is True or optimize is False or len(dtypes) < 2:
        return False
    kinds = set(dtypes)
    if dtype is not None:
        kinds.add(np.dtype(dtype))
    if out_dtype is not None:
        kinds.add(np.dtype(out_dtype))
    # the iterator also casts byte-swapped operands to native order (a cast
    # casting='no' forbids); the pairwise ufuncs take them as they are
    return len(kinds) > 1 or not all(k.isnative for k in kinds)


def optimize_key(optimize):
    """numpy's optimize values as something hashable (explicit paths as tuples).

    As numpy.einsum_path: True, False, None, a string, ``['einsum_path', ...]``
    or ``(name, memory_limit)``; anything else (0, 1, 2.5, np.True_,
    ('greedy',)) is a TypeError before anything else is looked at.
    """
    if not (optimize is True or optimize is False or optimize is None
            or isinstance(optimize, str)):
        try:
            ok = len(optimize) > 0 and (
                optimize[0] == "einsum_path"
                or (len(optimize) == 2 and isinstance(optimize[0], str)
                    and isinstance(optimize[1], (int, float))))
        except TypeError:
            ok = False
        if not ok:
            raise TypeError(f"Did not understand the path: {optimize}")
    if isinstance(optimize, (list, tuple)):
        return tuple(tuple(x) if isinstance(x, (list, tuple)) else x for x in optimize)
    return optimize


def check_path_name(optimize, inputs, output) -> None:
    """KeyError for a path finder numpy does not know ('dp', 'auto', ...),
    raised where numpy's einsum_path looks it up: more than two operands
    and some label contracted away."""
    name = optimize[0] if isinstance(optimize, tuple) and len(optimize) == 2 \
        and isinstance(optimize[0], str) and optimize[0] != "einsum_path" else optimize
    if (isinstance(name, str) and name not in ("greedy", "optimal") and len(inputs) > 2
            and not set("".join(inputs)) <= set(output)):
        raise KeyError(f"Path name {name} not found")


def plan_key(inputs, output, infos, out_info, options) -> tuple:
    """Hashable key for the plan cache.

    Everything a plan depends on: terms, shapes, element strides, dtypes,
    alignment, the out= layout and the options (dtype, order, casting, optimize).
    Data pointers are NOT part of it: a plan is reused for new arrays.
    """
    # the dtype itself, not its .str: structured dtypes with other fields,
    # StringDType and datetime units differ where their strings may not
    ops = tuple((i.shape, i.strides, i.dtype, i.aligned) for i in infos)
    out = None if out_info is None else (out_info.shape, out_info.strides,
                                         out_info.dtype, out_info.aligned)
    return (tuple(inputs), output, ops, out, options)


# -- dense layouts and shape-only operands ----------------------------------------

def dense_strides(extents, order="C", unit=1) -> tuple[int, ...]:
    """Element strides of a dense array of these extents in C (last axis
    fastest) or F order; the fastest axis has stride ``unit``.  An extent 0
    counts as 1, so no stride is 0."""
    if order == "F":
        return tuple(reversed(dense_strides(tuple(reversed(extents)), "C", unit)))
    strides, acc = [], unit
    for e in reversed(extents):
        strides.append(acc)
        acc *= max(int(e), 1)
    return tuple(reversed(strides))


def layout_name(shape, strides) -> str:
    """'C order', 'F order' or 'strided' (axes of extent 1 ignored)."""
    if strides is None:
        return "not element-strided"
    dims = [(e, s) for e, s in zip(shape, strides) if e != 1]
    extents = [e for e, _ in dims]
    if all(s == c for (_, s), c in zip(dims, dense_strides(extents))):
        return "C order"
    if all(s == f for (_, s), f in zip(dims, dense_strides(extents, "F"))):
        return "F order"
    return "strided"


def strided_empty(shape, strides, dtype, fill=None) -> np.ndarray:
    """A fresh array with exactly these element strides (any sign), over
    ``np.empty`` memory or, with ``fill(n)``, over the n elements it returns."""
    lo = sum((e - 1) * s for e, s in zip(shape, strides) if s < 0)
    hi = sum((e - 1) * s for e, s in zip(shape, strides) if s > 0)
    n = hi - lo + 1 if all(shape) else 1
    base = np.empty(n, dtype) if fill is None else fill(n)
    item = np.dtype(dtype).itemsize
    return as_strided(base[-lo:], shape, tuple(s * item for s in strides))


def is_shape(x) -> bool:
    return isinstance(x, (tuple, list)) and all(isinstance(v, (int, np.integer)) for v in x)


class Virtual:
    """An operand given by shape/dtype/strides only (no data)."""

    def __init__(self, shape, dtype, strides=None):
        self.shape = tuple(int(e) for e in shape)
        self.dtype = np.dtype(dtype)
        self.strides = tuple(strides) if strides is not None else dense_strides(self.shape)

    def info(self) -> OperandInfo:
        layout = layout_name(self.shape, self.strides)
        return OperandInfo(self.shape, self.strides, self.dtype, True,
                           layout == "C order", layout == "F order")

    def placeholder(self) -> np.ndarray:
        """A zero-stride view with this shape and dtype: enough for parse_spec."""
        return as_strided(np.zeros(1, self.dtype), self.shape, (0,) * len(self.shape),
                          writeable=False)

    def materialize(self, rng) -> np.ndarray:
        """Random data in exactly this layout (for measured runs)."""
        return strided_empty(self.shape, self.strides, self.dtype,
                             lambda n: random_array(rng, (n,), self.dtype))


def random_array(rng, shape, dtype) -> np.ndarray:
    """An array of random values of ``dtype`` (0-d for shape ()): normal
    floats (complex: both parts), 0/1 booleans, small integers."""
    dt = np.dtype(dtype)
    if dt.kind == "c":
        x = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    elif dt.kind == "f":
        x = rng.standard_normal(shape)
    elif dt.kind == "b":
        x = rng.integers(0, 2, shape)
    else:
        x = rng.integers(-3, 4, shape)
    return np.asarray(x).astype(dt)


def as_operand(x, dtype):
    """ndarray, or a Virtual for a shape / shape-dtype object (e.g.
    ``jax.ShapeDtypeStruct``; numpy-style byte ``.strides`` when it has them)."""
    if isinstance(x, (np.ndarray, Virtual)):
        return x
    if is_shape(x):
        return Virtual(x, dtype or np.float64)
    if hasattr(x, "shape") and hasattr(x, "dtype"):
        st = getattr(x, "strides", None)
        dt = np.dtype(x.dtype)
        if st is not None:
            st = tuple(int(s) // dt.itemsize for s in st)
        return Virtual(tuple(x.shape), dt, st)
    return np.asanyarray(x)
