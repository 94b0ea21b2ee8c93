"""Micro-kernels of every ISA this CPU runs, through the test twin
`_kernels.ukr`, and the whole GEMM under each ISA (`_kernels.set_isa`) at the
tile and KC edges; EINPLAN_ISA at import (subprocess)."""
import os
import subprocess
import zlib
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))
from _gemm_util import assert_close, describe, embed, expected, outside_mask, rand  # noqa: E402

from einplan import _native  # noqa: E402

from conftest import ISAS, RUN_ISAS  # noqa: E402

K = _native._kernels

ISA_NAMES = ("generic", "avx2", "avx512")
DTYPES = (np.float32, np.float64)
SENTINEL = -7.25          # exactly representable in both dtypes


def aligned(n, dtype, align=64):
    """A C-contiguous 1-D array of n elements whose data is `align`-byte aligned."""
    dtype = np.dtype(dtype)
    nb = max(n, 1) * dtype.itemsize      # an empty slice may not keep the offset
    raw = np.empty(nb + align, dtype=np.uint8)
    off = (-raw.ctypes.data) % align
    out = raw[off:off + nb].view(dtype)[:n]
    assert out.ctypes.data % align == 0 and out.flags.c_contiguous and out.size == n
    return out


def kc_of(isa, dtype):
    """KC of `dtype` when `isa` runs (blocking() reports the ISA in use)."""
    prev = K.isa()
    K.set_isa(isa)
    try:
        return K.blocking(dtype)["kc"]
    finally:
        K.set_isa(prev)


def resolve_k(sym, kc):
    return {"0": 0, "1": 1, "7": 7, "KC-1": kc - 1, "KC+1": kc + 1}[sym]


# ------------------------------------------------------------ basics

def test_isa_list_and_tiles():
    assert len(ISAS) >= 1 and ISAS[0] == "generic"
    assert all(i in ISA_NAMES for i in ISAS)
    assert list(ISAS) == sorted(ISAS, key=ISA_NAMES.index)     # best last
    assert K.isa() in ISAS
    assert _native.isa() == K.isa()
    for isa in ISAS:
        for dt in DTYPES:
            mr, nr = K.tile(isa, dt)
            assert 1 <= mr <= 16 and 1 <= nr <= 64          # EP_MAX_MR / EP_MAX_NR
            # packed B rows are 64-byte aligned vector loads
            assert (nr * np.dtype(dt).itemsize) % 64 == 0 or isa == "generic"


def test_blocking_consistent_with_tile(use_isa):
    for isa in ISAS:
        use_isa(isa)
        for dt in DTYPES:
            bk = K.blocking(dt)
            assert (bk["mr"], bk["nr"]) == K.tile(isa, dt)
            assert bk["kc"] >= 1
            assert bk["mc"] >= bk["mr"] and bk["mc"] % bk["mr"] == 0
            assert bk["nc"] >= bk["nr"] and bk["nc"] % bk["nr"] == 0


def test_set_isa_switches_and_refuses_unknown(use_isa):
    for isa in ISAS:
        use_isa(isa)
        assert K.isa() == isa == _native.isa()
    with pytest.raises(ValueError):
        K.set_isa("sse9")
    with pytest.raises(ValueError):
        _native.set_isa("AVX2")          # names are exact


@pytest.mark.skipif(K is not None and len(K.available_isas()) == 3,
                    reason="every ISA is supported here: nothing higher to refuse")
def test_set_isa_refuses_unsupported(use_isa):
    for name in ISA_NAMES:
        if name not in ISAS:
            with pytest.raises(ValueError):
                K.set_isa(name)
            with pytest.raises(ValueError):
                K.ukr(name, aligned(0, np.float64), aligned(0, np.float64),
                      np.zeros(64 * 64), 0, 64, 1, 1.0, 0.0)


# ------------------------------------------------------------ the micro-kernel

LAYOUTS = {
    # name: (rs_c, cs_c) as functions of (MR, NR)
    "rows": lambda mr, nr: (nr + 3, 1),               # C stored by rows (padded)
    "cols": lambda mr, nr: (1, mr + 2),               # C stored by columns
    "general": lambda mr, nr: (3, 3 * mr + 1),        # neither stride 1
    "negative": lambda mr, nr: (-(nr + 1), -1),       # reversed rows
    "mixed": lambda mr, nr: (2 * nr + 1, -2),         # rows forward, columns back
}
ALPHA_BETA = [(1.0, 0.0), (1.0, 1.0), (-0.7, 0.3), (0.0, 2.5), (2.5, 0.0)]


def tile_view(buf, p0, rs, cs, mr, nr):
    """An ndarray whose data pointer is &buf[p0] and whose memory covers
    exactly the MR x NR tile reached through (rs, cs) from it."""
    span = [(mr - 1) * rs, (nr - 1) * cs]
    lo = -sum(s for s in span if s < 0)
    hi = sum(s for s in span if s > 0)
    assert p0 - lo >= 0 and p0 + hi < buf.size
    item = buf.itemsize
    return np.lib.stride_tricks.as_strided(buf[p0:], shape=(2, 2),
                                           strides=(-lo * item, hi * item))


@pytest.mark.parametrize("ab", ALPHA_BETA, ids=lambda ab: f"a{ab[0]}_b{ab[1]}")
@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("ksym", ["0", "1", "7", "KC-1", "KC+1"])
@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
@pytest.mark.parametrize("isa", RUN_ISAS)
def test_ukr(isa, dtype, ksym, layout, ab):
    alpha, beta = ab
    mr, nr = K.tile(isa, dtype)
    k = resolve_k(ksym, kc_of(isa, dtype))
    seed = zlib.crc32(f"{isa}{ksym}{layout}".encode()) & 0xFFFF
    a = aligned(k * mr, dtype)
    b = aligned(k * nr, dtype)
    a[...] = rand(a.size, dtype, seed)
    b[...] = rand(b.size, dtype, seed + 1)
    a0, b0 = a.copy(), b.copy()

    rs, cs = LAYOUTS[layout](mr, nr)
    span = [(mr - 1) * rs, (nr - 1) * cs]
    lo = -sum(s for s in span if s < 0)
    hi = sum(s for s in span if s > 0)
    buf = np.full(lo + hi + 9, SENTINEL, dtype=dtype)
    p0 = lo + 4
    idx = p0 + np.arange(mr)[:, None] * rs + np.arange(nr)[None, :] * cs
    assert len(np.unique(idx)) == mr * nr
    c_init = rand((mr, nr), dtype, seed + 2)
    if beta == 0:
        c_init[...] = np.nan        # beta == 0 never reads C
        c_init[0, 0] = np.inf
    buf[idx] = c_init
    c = tile_view(buf, p0, rs, cs, mr, nr)

    out = K.ukr(isa, a, b, c, k, rs, cs, alpha, beta)
    assert out is c

    A = a0.reshape(k, mr).T          # A[i, p] = a[p*MR + i]
    B = b0.reshape(k, nr)            # B[p, j] = b[p*NR + j]
    ref, mag = expected(A, "ip", B, "pj", c_init, "ij", alpha, beta)
    assert_close(buf[idx], ref, mag, k, dtype)
    rest = np.ones(buf.size, dtype=bool)
    rest[idx.ravel()] = False
    assert (buf[rest] == SENTINEL).all(), "micro-kernel wrote outside its tile"
    assert np.array_equal(a, a0) and np.array_equal(b, b0), "packed panels modified"


@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
@pytest.mark.parametrize("isa", RUN_ISAS)
def test_ukr_matches_generic_exactly_on_integers(isa, dtype):
    """Small integers: every kernel must give the exact result."""
    mr, nr = K.tile(isa, dtype)
    k = 33
    rng = np.random.default_rng(5)
    a = aligned(k * mr, dtype)
    b = aligned(k * nr, dtype)
    a[...] = rng.integers(-4, 5, a.size)
    b[...] = rng.integers(-4, 5, b.size)
    c = rng.integers(-9, 10, (mr, nr)).astype(dtype)
    want = 2 * (a.reshape(k, mr).T.astype(np.int64) @ b.reshape(k, nr).astype(np.int64)) \
        - 3 * c.astype(np.int64)
    K.ukr(isa, a, b, c, k, nr, 1, 2.0, -3.0)
    assert np.array_equal(c, want.astype(dtype))


@pytest.mark.parametrize("isa", RUN_ISAS)
def test_ukr_twin_checks_its_arguments(isa):
    dt = np.float64
    mr, nr = K.tile(isa, dt)
    k = 4
    a, b = aligned(k * mr, dt), aligned(k * nr, dt)
    a[...] = 1
    b[...] = 1
    c = np.zeros((mr, nr), dt)
    with pytest.raises(ValueError):            # unknown ISA name
        K.ukr("neon", a, b, c, k, nr, 1)
    with pytest.raises(ValueError):            # a too short
        K.ukr(isa, a[:-1], b, c, k, nr, 1)
    with pytest.raises(ValueError):            # b too short
        K.ukr(isa, a, b[:-1], c, k, nr, 1)
    mis = aligned(k * mr + 1, dt)[1:]           # 8 bytes off alignment
    with pytest.raises(ValueError):
        K.ukr(isa, mis, b, c, k, nr, 1)
    with pytest.raises(ValueError):            # C tile past the end of c
        K.ukr(isa, a, b, c, k, nr + 1, 1)
    with pytest.raises(ValueError):            # C tile before the start of c
        K.ukr(isa, a, b, c, k, -nr, 1)
    with pytest.raises(ValueError):            # read-only C
        cr = c.copy()
        cr.flags.writeable = False
        K.ukr(isa, a, b, cr, k, nr, 1)
    with pytest.raises(TypeError):             # mixed dtypes
        K.ukr(isa, a, b.astype(np.float32), c, k, nr, 1)
    with pytest.raises(TypeError):             # non-float
        K.ukr(isa, a.view(np.int64), b.view(np.int64), c.view(np.int64), k, nr, 1)
    assert (c == 0).all()
    K.ukr(isa, a, b, c, k, nr, 1)
    assert (c == k).all()


@pytest.mark.parametrize("pos", [0, 1, 2])
def test_ukr_twin_rejects_non_arrays(pos):
    """None (or a list) for a, b or c is a TypeError, not an AttributeError."""
    isa = ISAS[0]
    mr, nr = K.tile(isa, np.float64)
    ops = [aligned(mr, np.float64), aligned(nr, np.float64), np.zeros((mr, nr))]
    ops[pos] = None
    with pytest.raises(TypeError):
        K.ukr(isa, *ops, 1, nr, 1)


# ------------------------------------------------------------ whole GEMM per ISA

C_LAYOUTS = ["row", "col", "strided"]


def _gemm_case(isa, dtype, M, N, Kx, layout, alpha, beta, seed, gemm=_native.gemm):
    A = rand((M, Kx), dtype, seed)
    B = rand((Kx, N), dtype, seed + 1)
    if layout == "col":
        A, B = np.asfortranarray(A), np.asfortranarray(B)
    elif layout == "strided":
        A = np.repeat(np.repeat(A, 2, 0), 3, 1)[::2, ::3]      # gaps in both axes
        B = np.repeat(B[:, ::-1], 2, 1)[:, ::-2]                # gaps, n stride -2
    C, big = embed((M, N), dtype, SENTINEL, kind=layout)
    c_init = rand((M, N), dtype, seed + 2)
    if beta == 0:
        c_init[...] = np.nan
    C[...] = c_init
    outside = outside_mask(C, big)
    m, n, k, batch = describe(A, "mk", B, "kn", C, "mn", "m", "n", "k")
    out = gemm(A, B, C, m, n, k, batch, alpha, beta)
    assert out is C
    ref, mag = expected(A, "mk", B, "kn", c_init, "mn", alpha, beta)
    assert_close(C, ref, mag, Kx, dtype)
    assert (big[outside] == SENTINEL).all(), \
        f"{isa} M={M} N={N} K={Kx} {layout}: GEMM wrote outside C"


@pytest.mark.parametrize("layout", C_LAYOUTS)
@pytest.mark.parametrize("ksym", ["0", "1", "KC-1", "KC+1"])
@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
@pytest.mark.parametrize("isa", RUN_ISAS)
def test_gemm_edges_per_isa(one_thread, use_isa, isa, dtype, ksym, layout):
    use_isa(isa)
    assert K.isa() == isa
    bk = K.blocking(dtype)
    MR, NR = bk["mr"], bk["nr"]
    Kx = resolve_k(ksym, bk["kc"])
    ms = [0, 1, MR - 1, MR, MR + 1, 2 * MR + 1]
    ns = [0, 1, NR - 1, NR, NR + 1, 2 * NR + 1]
    t = 0
    for M in ms:
        for N in ns:
            alpha, beta = ALPHA_BETA[t % len(ALPHA_BETA)]
            t += 1
            _gemm_case(isa, dtype, M, N, Kx, layout, alpha, beta, seed=M * 131 + N)


# ------------------------------------------------------------ EINPLAN_ISA

def _isa_in_subprocess(value):
    env = dict(os.environ)
    env.pop("EINPLAN_ISA", None)
    if value is not None:
        env["EINPLAN_ISA"] = value
    code = ("import einplan, numpy as np; from einplan import _native; "
            "A = np.arange(6.).reshape(2, 3); C = np.zeros((2, 2)); "
            "_native.gemm(A, A.T.copy(), C, ((2, 3, 2),), ((2, 1, 1),), ((3, 1, 2),)); "
            "assert (C == A @ A.T).all(); print(einplan.isa())")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def test_einplan_isa_env():
    best = _isa_in_subprocess(None)
    assert best == ISAS[-1]
    for name in ISA_NAMES:
        got = _isa_in_subprocess(name)
        if name in ISAS:
            assert got == name, f"EINPLAN_ISA={name} not honoured"
        else:
            assert got == best, f"EINPLAN_ISA={name} above the CPU was not refused"
    assert _isa_in_subprocess("bogus") == best
    assert _isa_in_subprocess("") == best


@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
@pytest.mark.parametrize("isa", RUN_ISAS)
def test_gemm_edges_packed_path(one_thread, use_isa, isa, dtype):
    """m == 1 / n == 1 and narrow n through the packed five loops too: the
    descriptor is handed a schedule forced to the packed path (no GEMV, no
    smm, no B read in place), which ep_gemm runs."""
    use_isa(isa)
    bk = K.blocking(dtype)
    MR, NR = bk["mr"], bk["nr"]
    for Kx in (1, bk["kc"] + 1):
        for layout in C_LAYOUTS:
            for M, N in ((1, 1), (1, NR + 1), (MR + 1, 1), (1, 2 * NR + 1),
                         (2 * MR + 1, 1), (MR - 1, NR)):
                a, b = ALPHA_BETA[(M + N) % len(ALPHA_BETA)]
                _gemm_case(isa, dtype, M, N, Kx, layout, a, b, seed=M + N,
                           gemm=K.gemm_packed_path)
