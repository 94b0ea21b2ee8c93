"""Step 0 of the data flow in DESIGN.md: matmul & co. written as einsum specs.

Each ``*_spec`` function is pure: it converts its operands with
``np.asanyarray``, checks them the way numpy's function does (same exception
class, a message naming the shapes), and returns ``(subscripts, operands)`` such
that ``numpy.einsum(subscripts, *operands)`` equals the numpy function's result
in shape, dtype and values:

    matmul_spec(a, b)            "...ik,...kj->...ij" (1-d operands promoted/removed)
    dot_spec(a, b)               "...k,lkm->...lm"   (last axis of a, second-to-last of b)
    tensordot_spec(a, b, axes)   letters for every axis, contracted pairs shared
    inner_spec(a, b)             "...k,lk->...l"     (last axes of both)
    outer_spec(a, b)             "i,j->ij" on the raveled operands
    vdot_spec(a, b)              "i,i->" on the raveled operands, a conjugated

Why ellipses: matmul's batch axes broadcast (size 1 against N) exactly like
einsum's ellipsis dims do, and for dot/inner an ellipsis for a's free axes
keeps any number of them within einsum's 52-letter alphabet.

The public wrappers at the end (``matmul``, ``dot``, ...) run the spec through
``einplan.einsum`` and add what einsum does not know: the ufunc casting rule of
matmul/outer, dot's strict ``out`` check, tensordot's 0-d array result.
"""
from __future__ import annotations

import cmath
import functools
import operator

import numpy as np

from . import _native
from . import api as _api
from .api import einsum
from .nest import thread_cap
from .deferral import defer, protocol_reason, time_dtype_reason

__all__ = [
    "matmul_spec", "dot_spec", "tensordot_spec", "inner_spec", "outer_spec", "vdot_spec",
    "matmul", "dot", "tensordot", "inner", "outer", "vdot",
]

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
_MATMUL_SIGNATURE = "(n?,k),(k,m?)->(n?,m?)"


class _TooManyLetters(ValueError):
    """More distinct axes than einsum's 52 letters."""


def _letters(start: int, count: int) -> str:
    if start + count > len(_LETTERS):
        raise _TooManyLetters(
            f"the operands need {start + count} distinct einsum subscripts; "
            f"einsum has only {len(_LETTERS)} letters")
    return _LETTERS[start:start + count]


def _not_aligned(a, b, axis_a: int, axis_b: int) -> ValueError:
    """numpy.dot's wording for a contracted axis whose extents differ."""
    shape_a = ",".join(map(str, a.shape))
    shape_b = ",".join(map(str, b.shape))
    return ValueError(
        f"shapes ({shape_a}) and ({shape_b}) not aligned: "
        f"{a.shape[axis_a]} (dim {axis_a}) != {b.shape[axis_b]} (dim {axis_b})")


# the spec of two operands of 2+ dimensions depends on nothing else
_MATMUL_SPECS = {(na, nb): "...ik,...kj->...ij" for na in range(2, 33) for nb in range(2, 33)}


def matmul_spec(a, b) -> tuple[str, tuple]:
    """numpy.matmul as an einsum spec.

    "...ik,...kj->...ij"; a 1-d a is a row (its axis is k and no i appears in
    the output), a 1-d b is a column (no j). Batch axes broadcast through the
    ellipsis; k must match exactly (einsum alone would broadcast k of size 1).
    """
    if a.__class__ is not np.ndarray or b.__class__ is not np.ndarray:
        a, b = np.asanyarray(a), np.asanyarray(b)
    spec = _MATMUL_SPECS.get((a.ndim, b.ndim))
    if spec is not None and a.shape[-1] == b.shape[-2]:   # both >= 2-d, k matches
        return spec, (a, b)
    for iop, op in enumerate((a, b)):
        if op.ndim == 0:
            raise ValueError(
                f"matmul: Input operand {iop} does not have enough dimensions "
                f"(has 0, gufunc core with signature {_MATMUL_SIGNATURE} requires 1)")
    k_a = a.shape[-1]
    k_b = b.shape[0] if b.ndim == 1 else b.shape[-2]
    if k_a != k_b:
        raise ValueError(
            f"matmul: Input operand 1 has a mismatch in its core dimension 0, "
            f"with gufunc signature {_MATMUL_SIGNATURE} (size {k_b} is different "
            f"from {k_a}); shapes {a.shape} and {b.shape}")
    term_a, out_a = ("k", "") if a.ndim == 1 else ("...ik", "...i")
    term_b, out_b = ("k", "") if b.ndim == 1 else ("...kj", "...j")
    # both 2+-d: one ellipsis in the output, i then j
    output = "...ij" if out_a and out_b else out_a or out_b
    return f"{term_a},{term_b}->{output}", (a, b)


def dot_spec(a, b) -> tuple[str, tuple]:
    """numpy.dot as an einsum spec.

    A 0-d operand multiplies elementwise (",...->..."). Otherwise the last
    axis of a is summed against b's only axis (b 1-d) or second-to-last axis;
    the output is a's free axes, then b's free axes, no broadcasting between them:
    a (2,3,4) . b (5,4,6) -> "...k,lkm->...lm" -> (2,3,5,6).
    """
    a, b = np.asanyarray(a), np.asanyarray(b)
    if a.ndim == 0 or b.ndim == 0:
        return _scalar_product(a, b)
    axis_b = 0 if b.ndim == 1 else b.ndim - 2
    if a.shape[-1] != b.shape[axis_b]:
        raise _not_aligned(a, b, a.ndim - 1, axis_b)
    if b.ndim == 1:
        return "...k,k->...", (a, b)
    # 'k' is the contracted label; b's other axes take the letters after it
    free_b = _letters(_LETTERS.index("k") + 1, b.ndim - 1)
    term_b = free_b[:-1] + "k" + free_b[-1]
    return f"...k,{term_b}->...{free_b}", (a, b)


def inner_spec(a, b) -> tuple[str, tuple]:
    """numpy.inner as an einsum spec: last axes summed, e.g. "...k,lk->...l".

    A 0-d operand multiplies elementwise, as numpy.inner does.
    """
    a, b = np.asanyarray(a), np.asanyarray(b)
    if a.ndim == 0 or b.ndim == 0:
        return _scalar_product(a, b)
    if a.shape[-1] != b.shape[-1]:
        raise _not_aligned(a, b, a.ndim - 1, b.ndim - 1)
    free_b = _letters(_LETTERS.index("k") + 1, b.ndim - 1)
    return f"...k,{free_b}k->...{free_b}", (a, b)


def _scalar_product(a, b) -> tuple[str, tuple]:
    # dot/inner with a 0-d operand is multiply: ",...->..." or "...,->..."
    term_a = "" if a.ndim == 0 else "..."
    term_b = "" if b.ndim == 0 else "..."
    return f"{term_a},{term_b}->...", (a, b)


def _check_distinct(*axis_lists):
    for axes_x in axis_lists:
        if len(set(axes_x)) != len(axes_x):
            raise ValueError("duplicate axes are not allowed in tensordot")


def tensordot_spec(a, b, axes=2) -> tuple[str, tuple]:
    """numpy.tensordot as an einsum spec.

    ``axes`` is an int N (a's last N axes against b's first N; N <= 0 gives
    the outer product, as in numpy) or a pair (axes_a, axes_b) of ints or
    sequences, negative axes counted from the end. Output: a's free axes in
    order, then b's. a (2,3,4), b (4,3,5), axes=([1,2],[1,0]) -> "abc,cbd->ad".
    Errors as numpy: duplicate axes and extent mismatches -> ValueError,
    out-of-range axes -> IndexError, non-integer axes -> TypeError.
    """
    a, b = np.asanyarray(a), np.asanyarray(b)
    try:
        iter(axes)
    except TypeError:
        n = operator.index(axes)
        axes_a, axes_b = list(range(-n, 0)), list(range(n))
    else:
        axes_a, axes_b = axes
        axes_a = _axis_list(axes_a)
        axes_b = _axis_list(axes_b)
    if len(axes_a) != len(axes_b):
        raise ValueError(
            f"shape-mismatch for sum: {len(axes_a)} axes of a against "
            f"{len(axes_b)} axes of b")
    # checks in numpy's order, so the first error found has numpy's class
    _check_distinct(axes_a, axes_b)
    for i, (ax_a, ax_b) in enumerate(zip(axes_a, axes_b)):
        axes_a[i] = ax_a = _normalize_axis(ax_a, a.ndim, "a")
        axes_b[i] = ax_b = _normalize_axis(ax_b, b.ndim, "b")
        if a.shape[ax_a] != b.shape[ax_b]:
            raise ValueError(
                f"shape-mismatch for sum: axis {ax_a} of a has extent "
                f"{a.shape[ax_a]}, axis {ax_b} of b has extent {b.shape[ax_b]}")
    # numpy.tensordot fails in transpose when e.g. axes 0 and -2 of a 2-d
    # operand name the same axis; einsum would silently take a diagonal
    _check_distinct(axes_a, axes_b)

    letters = _letters(0, a.ndim + b.ndim - len(axes_a))
    term_a = letters[:a.ndim]
    term_b = [""] * b.ndim
    for ax_a, ax_b in zip(axes_a, axes_b):
        term_b[ax_b] = term_a[ax_a]
    free_b = iter(letters[a.ndim:])
    term_b = "".join(label or next(free_b) for label in term_b)
    out_a = "".join(term_a[ax] for ax in range(a.ndim) if ax not in axes_a)
    out_b = "".join(term_b[ax] for ax in range(b.ndim) if ax not in axes_b)
    return f"{term_a},{term_b}->{out_a}{out_b}", (a, b)


def _axis_list(axes) -> list[int]:
    try:
        axes = list(axes)
    except TypeError:  # one int means one axis
        axes = [axes]
    return [operator.index(ax) for ax in axes]


def _normalize_axis(axis: int, ndim: int, name: str) -> int:
    if not -ndim <= axis < ndim:
        raise IndexError(
            f"tensordot: axis {axis} is out of range for {name} with {ndim} dimension(s)")
    return axis + ndim if axis < 0 else axis


def outer_spec(a, b) -> tuple[str, tuple]:
    """numpy.outer as an einsum spec: "i,j->ij" on a.ravel(), b.ravel().

    ravel is a view for contiguous operands and a copy otherwise, as in numpy.
    """
    a, b = np.asanyarray(a), np.asanyarray(b)
    return "i,j->ij", (a.ravel(), b.ravel())


def _vdot_vectors(a, b):
    a, b = np.asanyarray(a).ravel(), np.asanyarray(b).ravel()
    if a.size != b.size:
        raise ValueError(f"vdot: vectors have different lengths ({a.size} != {b.size})")
    return a, b


def vdot_spec(a, b) -> tuple[str, tuple]:
    """numpy.vdot as an einsum spec: "i,i->" on the raveled operands.

    A complex a is conjugated here (einsum has no conjugate flag); that copy
    is O(size), the same order as the product itself. Extents must match.
    ``vdot`` itself conjugates inside the loop nest's kernel where it can
    (``conjugated_dot``).
    """
    a, b = _vdot_vectors(a, b)
    if a.dtype.kind == "c":
        a = np.conjugate(a)
    return "i,i->", (a, b)


def conjugated_dot(a, b):
    """sum(conj(a) * b) of two 1-d complex arrays of one dtype on the loop
    nest, a conjugated in its kernel (no conjugated copy: the copy costs
    more than the dot, which reads each element once); None where that does
    not apply (mixed dtypes, real, fewer than two elements)."""
    if a.dtype != b.dtype or a.dtype.kind != "c" or a.size < 2:
        return None
    item = a.dtype.itemsize
    if a.strides[0] % item or b.strides[0] % item:
        return None
    out = np.empty((), a.dtype)
    _conjugated_dot_call(a.dtype.name, a.size, a.strides[0] // item, b.strides[0] // item)(
        (a, b), out)
    return out[()]


@functools.lru_cache(maxsize=64)
def _conjugated_dot_call(dtype, n, sa, sb):
    # validating a descriptor costs ~13 us, running a short dot ~1 us
    threads = thread_cap(3 * n, np.dtype(dtype).itemsize)
    return _native.prepare_nest(dtype, 2, [(n, sa, sb, 0)], split=0 if threads > 1 else -1,
                                threads=threads, conj=True)


def as_blas_result(res, blas: bool = True):
    """A complex result as numpy's dot / matmul / tensordot / inner / vdot give it.

    Those hand complex products to BLAS (matmul only sums of more than one
    product; dot / inner / tensordot / vdot every one but a product with a
    0-d operand), which scales each sum s by alpha = 1+0j: (re - im*0) +
    (re*0 + im)j, so an element with an inf or a nan in one part has nan in
    both ([inf+0j, 1+1j] @ [1, 2] is nan+nanj; einsum's plain sum is
    inf+nanj).  Finite elements are untouched (no pass over them but the
    isfinite test).
    """
    if not blas:
        return res
    if isinstance(res, np.complexfloating):
        # a scalar (vdot, a dot of vectors): cmath's test costs 50 ns, the
        # array path below 8 us
        if cmath.isfinite(res):
            return res
    elif getattr(getattr(res, "dtype", None), "kind", None) != "c":
        return res
    arr = np.asarray(res)
    bad = ~np.isfinite(arr)
    if not bad.any():
        return res
    with np.errstate(invalid="ignore"):
        s = arr[bad]
        arr[bad] = (s.real - s.imag * 0) + 1j * (s.real * 0 + s.imag)
    return arr[()] if arr.ndim == 0 and not isinstance(res, np.ndarray) else res


def _summed(subscripts: str) -> bool:
    """Whether the spec sums a label (an index of an input not in the output)."""
    ins, out = subscripts.split("->")
    return bool(set(ins.replace(",", "").replace(".", "")) - set(out))


# Public wrappers. einsum is imported when called: api.py sits downstream of
# this module in the data flow.

def _with_out(out, kw=None):
    """Keyword arguments with out= only when given (dask's dot takes none)."""
    kw = dict(kw or {})
    if out is not None:
        kw["out"] = out
    return kw


def _numpy_reason(*args):
    return protocol_reason(args) or time_dtype_reason(args)


def matmul(a, b, out=None, *, dtype=None):
    """numpy.matmul(a, b, out=out, dtype=dtype) run through einplan.einsum."""
    reason = _numpy_reason(a, b, out)
    if reason is None and (dtype is not None or isinstance(out, tuple)):
        reason = "matmul's dtype= / tuple out=: numpy's ufunc"
    if reason is None and isinstance(out, np.ndarray) and out.ndim > max(np.ndim(a), np.ndim(b)):
        reason = "matmul's out= broadcasts over more dimensions: numpy's ufunc"
    if reason is not None:
        kw = {} if dtype is None else {"dtype": dtype}
        return defer(reason, np.matmul, a, b, **_with_out(out, kw))
    subscripts, operands = matmul_spec(a, b)
    if out is None:   # a new result is C-ordered, as numpy's matmul makes it
        res = einsum(subscripts, *operands, order="C")
    else:
        # matmul is a ufunc: its out= follows the ufunc rule 'same_kind'
        res = einsum(subscripts, *operands, out=out, casting="same_kind")
    k = np.shape(operands[0])[-1] if np.ndim(operands[0]) else 1
    return as_blas_result(res, _summed(subscripts) and k > 1)


def dot(a, b, out=None):
    """numpy.dot(a, b, out=out) run through einplan.einsum."""
    reason = _numpy_reason(a, b, out)
    if reason is not None:
        return defer(reason, np.dot, a, b, **_with_out(out))
    try:
        subscripts, operands = dot_spec(a, b)
    except _TooManyLetters as exc:
        return defer(str(exc), np.dot, a, b, **_with_out(out))
    if out is not None:
        _check_dot_out(out, operands)
    # a new result is C-ordered: numpy's dot makes it so
    return as_blas_result(einsum(subscripts, *operands, out=out, order="C"),
                          all(np.ndim(op) for op in operands))


def _check_dot_out(out, operands: tuple) -> None:
    # numpy.dot takes no casting: out must be exactly the result's dtype and
    # shape and C-contiguous
    a, b = operands
    dtype = np.result_type(a, b)
    if a.ndim == 0 or b.ndim == 0:
        shape = a.shape or b.shape
    else:
        shape = a.shape[:-1] + b.shape[:-2] + b.shape[-1:] if b.ndim > 1 else a.shape[:-1]
    if (not isinstance(out, np.ndarray) or out.dtype != dtype or out.shape != shape
            or not out.flags.c_contiguous):
        raise ValueError(
            "output array is not acceptable (must have the right datatype, "
            f"number of dimensions, and be a C-Array): expected {dtype} {shape}")


def tensordot(a, b, axes=2):
    """numpy.tensordot(a, b, axes) run through einplan.einsum (always an ndarray)."""
    # numpy.tensordot returns a C-ordered array, 0-d for a full contraction
    return tensordot_in_order(a, b, axes, "C")


def tensordot_in_order(a, b, axes, order):
    """tensordot with the result written in ``order`` ('C' or 'F')."""
    reason = _numpy_reason(a, b)
    if reason is None:
        try:
            subscripts, operands = tensordot_spec(a, b, axes)
        except _TooManyLetters as exc:
            # numpy's tensordot reshapes to a matrix product: any number of axes
            reason = str(exc)
    if reason is not None:
        res = defer(reason, np.tensordot, a, b, axes)      # C-ordered, as numpy's
        return res.copy(order="F") if order == "F" and res.ndim > 1 else res
    return as_blas_result(np.asarray(einsum(subscripts, *operands, order=order)))


def inner(a, b):
    """numpy.inner(a, b) run through einplan.einsum."""
    reason = _numpy_reason(a, b)
    if reason is not None:
        return defer(reason, np.inner, a, b)
    try:
        subscripts, operands = inner_spec(a, b)
    except _TooManyLetters as exc:
        return defer(str(exc), np.inner, a, b)
    return as_blas_result(einsum(subscripts, *operands, order="C"), all(np.ndim(op) for op in operands))


def outer(a, b, out=None):
    """numpy.outer(a, b, out=out) run through einplan.einsum."""
    reason = _numpy_reason(a, b, out)
    if reason is not None:
        return defer(reason, np.outer, a, b, **_with_out(out))
    subscripts, operands = outer_spec(a, b)
    # numpy.outer is multiply.outer: ufunc casting 'same_kind' for out=
    return einsum(subscripts, *operands, out=out, casting="same_kind")


def vdot(a, b):
    """numpy.vdot(a, b) run through einplan.einsum."""
    reason = _numpy_reason(a, b)
    if reason is not None:
        return defer(reason, np.vdot, a, b)
    x, y = _vdot_vectors(a, b)
    if _api._recorder is None and (res := conjugated_dot(x, y)) is not None:
        return as_blas_result(res)
    subscripts, operands = vdot_spec(x, y)
    return as_blas_result(einsum(subscripts, *operands))
