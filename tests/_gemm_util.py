"""Helpers shared by the test modules (not a test module, not a conftest):
random operands, `_native.gemm` descriptors built from labelled strided numpy
views, and checks against a float64 oracle with a rigorous rounding-error
bound."""
from __future__ import annotations

import numpy as np

from einplan.operands import random_array


def estrides(x):
    """Element strides of ndarray x (its byte strides are multiples of itemsize)."""
    out = []
    for s in x.strides:
        assert s % x.itemsize == 0, (x.strides, x.itemsize)
        out.append(s // x.itemsize)
    return out


def describe(A, la, B, lb, C, lc, m, n, k, batch=""):
    """Role groups for `gemm` from labelled arrays.

    la, lb, lc label the axes of A, B, C (one letter per axis); m, n, k, batch
    are strings of labels, outer to inner.  Each group axis gets its extent
    and its element stride in every operand holding that role
    (m: A, C; n: B, C; k: A, B; batch: A, B, C)."""
    ops = {"A": (A, la), "B": (B, lb), "C": (C, lc)}
    holders = {"m": "AC", "n": "BC", "k": "AB", "batch": "ABC"}
    out = {}
    for role, labels in (("m", m), ("n", n), ("k", k), ("batch", batch)):
        axes = []
        for lab in labels:
            ext, strides = None, []
            for op in holders[role]:
                arr, lbl = ops[op]
                pos = lbl.index(lab)
                e = arr.shape[pos]
                assert ext is None or ext == e, (lab, ext, e)
                ext = e
                strides.append(estrides(arr)[pos])
            axes.append((ext, *strides))
        out[role] = tuple(axes)
    return out["m"], out["n"], out["k"], out["batch"]


def expected(A, la, B, lb, C0, lc, alpha, beta):
    """(reference, bound): float64 result of alpha*A.B + beta*C0 and a bound
    on |got - reference| for a dtype with unit roundoff u = eps/2, given as
    the magnitude it scales: |alpha| |A|.|B| + |beta| |C0| (beta == 0: C0 ignored)."""
    spec = f"{la},{lb}->{lc}"
    a64, b64 = A.astype(np.float64), B.astype(np.float64)
    ref = alpha * np.einsum(spec, a64, b64)
    mag = abs(alpha) * np.einsum(spec, np.abs(a64), np.abs(b64))
    if beta != 0:
        c64 = C0.astype(np.float64)
        ref = ref + beta * c64
        mag = mag + abs(beta) * np.abs(c64)
    return ref, mag


def assert_close(got, ref, mag, K, dtype):
    """|got - ref| <= (K + 4) * eps * mag elementwise (Higham's gamma_K bound
    with room for alpha/beta scaling and the split over KC blocks), and no NaN."""
    eps = np.finfo(dtype).eps
    got64 = np.asarray(got, dtype=np.float64)
    assert not np.isnan(got64).any(), "NaN in the result"
    tol = (K + 4) * eps * mag + np.finfo(dtype).tiny
    err = np.abs(got64 - ref)
    bad = err > tol
    assert not bad.any(), (
        f"{bad.sum()} of {bad.size} elements off; worst err {err.max():.3g}, "
        f"first bad index {np.argwhere(bad)[0].tolist()}")


def assert_sum_close(got, want, dtype, k, ulps=16):
    """got equals want, sums of k terms, to within ulps * (k + 3) epsilons of
    dtype times want's largest magnitude (the loop-nest kernels' tests)."""
    eps = np.finfo(np.dtype(dtype)).eps
    scale = max(1.0, float(np.max(np.abs(want))) if np.size(want) else 1.0)
    np.testing.assert_allclose(got, want, rtol=0, atol=ulps * (k + 3) * eps * scale)


def rand(shape, dtype=np.float64, seed=0, rng=None):
    """Random values of ``dtype`` (normal floats, both parts of a complex,
    0/1 booleans, small integers) from ``rng``, or from a generator seeded
    with ``seed`` (the same array for the same seed)."""
    return random_array(np.random.default_rng(seed) if rng is None else rng, shape, dtype)


def embed(shape, dtype, fill, kind="row", pad=3):
    """(C, big): C of `shape` (2-D or more) viewing into `big`, a 1-D buffer
    full of `fill`, so writes outside C can be detected.

    kind: "row" (C order), "col" (Fortran order), "strided" (every other
    element along each axis, with gaps), "reversed" (C order, every axis
    reversed: negative strides), "padded" (C order with 3 unused elements
    after each run of the last axis: contiguous runs, gaps between them)."""
    shape = tuple(shape)
    nd = len(shape)
    if kind == "strided":
        full = tuple(2 * s + 1 for s in shape)
    elif kind == "padded":
        full = shape[:-1] + (shape[-1] + 3,)
    else:
        full = shape
    size = int(np.prod(full))
    big = np.full(size + 2 * pad, fill, dtype=dtype)
    inner = big[pad:pad + size]
    if kind == "row":
        C = inner.reshape(full)
    elif kind == "col":
        C = inner.reshape(full[::-1]).transpose(tuple(range(nd))[::-1])
    elif kind == "strided":
        C = inner.reshape(full)[tuple(slice(1, None, 2) for _ in shape)]
    elif kind == "reversed":
        C = inner.reshape(full)[tuple(slice(None, None, -1) for _ in shape)]
    elif kind == "padded":
        C = inner.reshape(full)[..., :shape[-1]]
    else:
        raise ValueError(kind)
    assert C.shape == shape
    return C, big


def outside_mask(C, big):
    """Boolean mask over `big`: True where C does not reach."""
    mask = np.ones(big.shape, dtype=bool)
    if C.size:
        base = big.__array_interface__["data"][0]
        start = (C.__array_interface__["data"][0] - base) // big.itemsize
        idx = np.full(C.shape, start, dtype=np.int64)
        for ax, s in enumerate(estrides(C)):
            sh = [1] * C.ndim
            sh[ax] = C.shape[ax]
            idx = idx + (np.arange(C.shape[ax]) * s).reshape(sh)
        mask[idx.ravel()] = False
    return mask


# the widest n each kernel set's smm kernels take (8 vectors)
SMM_MAX_N = {"avx512": {np.float32: 128, np.float64: 64},
             "avx2": {np.float32: 64, np.float64: 32}}


def smm_max_n(dtype=np.float32):
    """The widest real n the smm kernels of the kernel set in use take (None
    for a set without them)."""
    from einplan import _native
    return SMM_MAX_N.get(_native.isa(), {}).get(np.dtype(dtype).type)


def smm_in_use(dtype=np.float32):
    """Whether the kernel set in use has the in-place small-GEMM (smm) kernels:
    asks ep_gemm_schedule where it would send 500 GEMMs of 8 x 8 x 8."""
    from einplan import _native
    groups = (((8, 8, 8),), ((8, 1, 1),), ((8, 1, 8),), ((500, 64, 64, 64),))
    return _native.prepare_gemm(dtype, *groups).schedule(nthreads=2)["path"] == "smm"
