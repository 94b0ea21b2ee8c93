"""``contract``: C = alpha * einsum(subscripts, a, b) + beta * C, BLAS style.

The signature of ``pytblis.contract`` (the call PySCF's ``lib.contract`` makes
when its einsum backend is pytblis), so code written for a TBLIS-style backend
can take einplan:

    contract(subscripts, a, b, alpha=1.0, beta=0.0, out=None,
             conja=False, conjb=False, allow_partial_trace=False,
             complex_real_contractions=True)

Semantics, as pytblis:
  * ``out=None``: a new array ``alpha * einsum(...)``; ``beta`` must be 0
    (ValueError: there is no C to scale).  It is C-ordered, or F-ordered
    inside ``einplan.tblis.use_default_array_order("F")``: pytblis's default
    array order, not numpy.einsum's 'K'.  A full contraction returns a 0-d
    ndarray, as pytblis does (einsum returns a scalar).
  * ``out`` given: it must have the result's shape; it is updated in place
    and returned.  ``beta == 0`` never reads ``out`` (NaN or garbage in it is
    ignored), as in BLAS.
  * ``conja`` / ``conjb`` conjugate a complex operand (a copy of it).
  * Partial traces (an index in one operand only) are always taken, and a
    real operand with a complex one is always handled:
    ``allow_partial_trace`` and ``complex_real_contractions`` are accepted
    and have nothing left to switch.
  * dtypes follow numpy's promotion (pytblis refuses mixed precisions);
    a complex alpha or beta makes a real product complex; ``out`` receives
    the result with casting 'same_kind'.

Where alpha and beta are applied: when the plan is one GEMM step writing the
output (most two-operand contractions), inside the kernel's C update (the
micro-kernel scales its accumulators by alpha and adds beta * C as it stores
them), so there is no temporary and no second pass.  Every other plan (the
loop engine's steps, pre-sums, a cast or overlapping ``out``, a complex
alpha/beta) computes the product with ``einsum`` and then applies alpha and
beta in one more pass over C, in ``scale_accumulate``.
"""
from __future__ import annotations

import numbers

import numpy as np

from . import api as _api
from .execute import _step_gemm, allocate
from .operands import describe, describe_operands
from .plan import OUT, GemmStep
from .options import DEFAULT_ARRAY_ORDER, Options
from .planner import make_plan
from .spec import parse_spec

__all__ = ["contract", "scale_accumulate", "runs_in_kernel"]

_DEFAULT = Options()
_NEW_ARRAY = {"C": Options(order="C"), "F": Options(order="F")}


def _scalar(x):
    # numpy scalars become Python ones: weak in promotion (NEP 50), so a
    # float64 alpha does not turn a float32 contraction into float64
    if isinstance(x, np.generic):
        x = x.item()
    if not isinstance(x, numbers.Number):
        raise TypeError(f"alpha and beta must be numbers, got {type(x).__name__}")
    return x


def contract(subscripts, a, b, alpha=1.0, beta=0.0, out=None, conja=False, conjb=False,
             allow_partial_trace=False, complex_real_contractions=True):
    """C = alpha * einsum(subscripts, a, b) + beta * C (see the module docstring)."""
    alpha, beta = _scalar(alpha), _scalar(beta)
    if not isinstance(subscripts, str):
        raise TypeError("contract: subscripts must be a string")
    a, b = np.asarray(a), np.asarray(b)
    if conja and a.dtype.kind == "c":
        a = np.conjugate(a)
    if conjb and b.dtype.kind == "c":
        b = np.conjugate(b)
    if out is None and beta != 0:
        raise ValueError("contract: beta must be 0 when out is None "
                         "(there is no C for beta to scale)")
    if out is not None and not isinstance(out, np.ndarray):
        raise TypeError("contract: 'out' must be an array")
    rec = _api._recorder
    if rec is not None and not rec.busy.on:
        return rec.record("einplan.contract", _contract, (subscripts, a, b),
                          (subscripts, a, b, alpha, beta, out), out)
    return _contract(subscripts, a, b, alpha, beta, out)


def _contract(subscripts, a, b, alpha, beta, out):
    spec, arrays = parse_spec((subscripts, a, b))
    dtype = np.result_type(a.dtype, b.dtype, alpha, beta)
    out_info = None
    if out is not None:
        if not out.flags.writeable:
            raise ValueError("output array is read-only")
        out_info = describe(out)
    order = DEFAULT_ARRAY_ORDER.get()
    options = _DEFAULT if out is not None else _NEW_ARRAY[order]
    plan = make_plan(spec, describe_operands(arrays), options, out_info)
    if runs_in_kernel(plan, dtype, alpha, beta, out, arrays):
        return _in_kernel(plan, arrays, alpha, beta, out)
    return scale_accumulate(subscripts, arrays, alpha, beta, out, dtype, order)


def runs_in_kernel(plan, dtype, alpha, beta, out, arrays) -> bool:
    """True when alpha and beta go into the kernel: one GEMM step writes the
    output in the result dtype, alpha and beta are real, out shares no memory
    with the operands."""
    step = plan.only_step
    if not isinstance(step, GemmStep) or step.c != OUT:
        return False
    if np.dtype(plan.dtype) != dtype or isinstance(alpha, complex) or isinstance(beta, complex):
        return False
    if out is not None and any(np.may_share_memory(out, x) for x in arrays):
        return False
    return True


def _in_kernel(plan, arrays, alpha, beta, out):
    step = plan.steps[0]
    C = out if out is not None else allocate(plan.out_buffer, np.dtype(plan.dtype), pooled=True)
    A, B = arrays[step.a], arrays[step.b]
    gemm = _step_gemm(step)
    alpha, beta = float(alpha), float(beta)
    mode = step.complex_mode
    if mode in ("", "1m"):        # real, or complex by 1m: one kernel call
        gemm(A, B, C, alpha, beta)
        return C
    # "cc": complex C as its real and imaginary float views; real alpha, beta
    Cr, Ci = C.real, C.imag
    Ar, Ai, Br, Bi = A.real, A.imag, B.real, B.imag
    gemm(Ar, Br, Cr, alpha, beta)     # Cr = a ArBr + b Cr
    gemm(Ai, Bi, Cr, -alpha, 1.0)     #    - a AiBi
    gemm(Ar, Bi, Ci, alpha, beta)     # Ci = a ArBi + b Ci
    gemm(Ai, Br, Ci, alpha, 1.0)      #    + a AiBr
    return C


def scale_accumulate(subscripts, arrays, alpha, beta, out, dtype, order="C"):
    """C = alpha * einsum + beta * C for plans whose last step is not one GEMM
    into C: the product from ``einplan.einsum`` (a new one in ``order``), then
    one pass that scales and adds (beta == 0 still never reads C)."""
    if out is None:
        res = np.asarray(_api.einsum(subscripts, *arrays, order=order))
        if alpha != 1 or res.dtype != dtype:
            res = np.multiply(res, alpha, dtype=dtype)
        return np.asarray(res)          # a 0-d product stays an array
    if beta == 0:
        _api.einsum(subscripts, *arrays, out=out, casting="same_kind")
        if alpha != 1:
            np.multiply(out, alpha, out=out, casting="same_kind")
        return out
    prod = np.asarray(_api.einsum(subscripts, *arrays))
    if beta != 1:
        np.multiply(out, beta, out=out, casting="same_kind")
    if alpha != 1:
        prod = np.multiply(prod, alpha, dtype=np.result_type(prod.dtype, alpha))
    np.add(out, prod, out=out, casting="same_kind")
    return out
