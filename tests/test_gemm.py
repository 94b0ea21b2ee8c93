"""The whole packed GEMM through `einplan._native.gemm` on role groups built
from strided numpy views (permuted, reversed, broadcast, sliced with gaps,
multi-axis, batched, empty), against numpy and `gemm_reference`, with 1 and 2
threads -- and the two thread counts bitwise identical."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))
from _gemm_util import assert_close, describe, embed, expected, outside_mask, rand  # noqa: E402

import einplan  # noqa: E402
from einplan import _native  # noqa: E402

K = _native._kernels

DTYPES = (np.float32, np.float64)
SENTINEL = -7.25


# Each case: dtype -> (A, la, B, lb, (C shape, C kind), lc, m, n, k, batch).
# Labels name the axes of each array; m, n, k, batch list them outer to inner.
def _plain(dt):
    return (rand((40, 50), dt, 1), "mk", rand((50, 60), dt, 2), "kn",
            ((40, 60), "row"), "mn", "m", "n", "k", "")


def _permuted(dt):
    # A a transposed 3-D tensor: m = (a, c) has the k axis between its axes
    A = rand((9, 48, 6), dt, 3).transpose(2, 1, 0)          # labels a k c
    return (A, "akc", rand((48, 50), dt, 4), "kn",
            ((6, 9, 50), "row"), "acn", "ac", "n", "k", "")


def _design_doc(dt):
    # abcd,dbef->aecf: m = (a, c), n = (e, f), k = (d, b); no transposed copies
    A = rand((5, 6, 6, 8), dt, 5)
    B = rand((8, 6, 8, 6), dt, 6)
    return (A, "abcd", B, "dbef", ((5, 8, 6, 6), "strided"), "aecf",
            "ac", "ef", "db", "")


def _reversed(dt):
    A = rand((70, 40), dt, 7)[::-1, ::-1]
    B = rand((40, 55), dt, 8)[::-1, :]
    return (A, "mk", B, "kn", ((70, 55), "reversed"), "mn", "m", "n", "k", "")


def _reversed_col(dt):
    # C column-major and reversed in n; A's k reversed inside a gap
    A = rand((33, 90), dt, 9)[:, ::-2]
    B = np.asfortranarray(rand((45, 61), dt, 10))[:, ::-1]
    return (A, "mk", B, "kn", ((33, 61), "col"), "mn", "m", "n", "k", "")


def _broadcast_mn(dt):
    A = np.broadcast_to(rand(40, dt, 11), (60, 40))          # stride 0 along m
    B = np.broadcast_to(rand((40, 1), dt, 12), (40, 50))     # stride 0 along n
    return (A, "mk", B, "kn", ((60, 50), "row"), "mn", "m", "n", "k", "")


def _broadcast_k(dt):
    A = np.broadcast_to(rand((60, 1), dt, 13), (60, 45))     # stride 0 along k
    B = rand((45, 70), dt, 14)
    return (A, "mk", B, "kn", ((60, 70), "col"), "mn", "m", "n", "k", "")


def _sliced_gaps(dt):
    # every group multi-axis with gaps: m = (i, j), n = (p, q), k = (k, l)
    A = rand((9, 12, 40, 3), dt, 15)[1:8:2, ::3, 5:35, ::2]      # i j k l: 4 4 30 2
    B = rand((90, 4, 5, 14), dt, 16)[::3, 1:3, 1:4, ::2]        # k l p q: 30 2 3 7
    return (A, "ijkl", B, "klpq", ((4, 4, 3, 7), "strided"), "ijpq",
            "ij", "pq", "kl", "")


def _batch(dt):
    return (rand((5, 20, 30), dt, 17), "bmk", rand((5, 30, 25), dt, 18), "bkn",
            ((5, 20, 25), "row"), "bmn", "m", "n", "k", "b")


def _batch_2axes(dt):
    # two batch axes, B broadcast along one, C's batch axes interleaved
    A = rand((3, 4, 10, 12), dt, 19).transpose(0, 2, 1, 3)      # x m y k
    B = np.broadcast_to(rand((4, 12, 9), dt, 20), (3, 4, 12, 9))  # x y k n
    return (A, "xmyk", B, "xykn", ((10, 3, 9, 4), "strided"), "mxny",
            "m", "n", "k", "xy")


def _batch_big(dt):
    # per-batch GEMMs large enough that threads split each one
    return (rand((2, 130, 130), dt, 21), "bmk", rand((2, 130, 130), dt, 22), "bkn",
            ((2, 130, 130), "col"), "bmn", "m", "n", "k", "b")


def _thin_m(dt):
    # fewer m blocks than threads: the threads share the jr loop
    return (rand((5, 150), dt, 23), "mk", rand((150, 300), dt, 24), "kn",
            ((5, 300), "row"), "mn", "m", "n", "k", "")


def _many_axes(dt):
    A = rand((2, 2, 2, 2, 2, 2, 9), dt, 25)
    return (A, "abcdefk", rand((9, 10), dt, 26), "kn",
            ((2, 2, 2, 2, 2, 2, 10), "strided"), "abcdefn", "abcdef", "n", "k", "")


def _outer(dt):
    # empty k group: extent 1, an outer product
    return (rand(30, dt, 27), "m", rand(40, dt, 28), "n",
            ((30, 40), "row"), "mn", "m", "n", "", "")


def _no_groups(dt):
    # every group empty: one scalar product
    return (rand((), dt, 29), "", rand((), dt, 30), "",
            ((1,), "row"), "z", "", "", "", "")


def _k_zero(dt):
    return (rand((20, 0), dt, 31), "mk", rand((0, 30), dt, 32), "kn",
            ((20, 30), "strided"), "mn", "m", "n", "k", "")


def _k_zero_big(dt):
    # k == 0 with C larger than the scaling block (256), batched, 2 threads
    return (rand((2, 300, 0), dt, 33), "bmk", rand((2, 0, 270), dt, 34), "bkn",
            ((2, 300, 270), "col"), "bmn", "m", "n", "k", "b")


def _k_zero_axis(dt):
    # k group of two axes, one of extent 0
    return (rand((20, 5, 0), dt, 35), "mkl", rand((5, 0, 30), dt, 36), "kln",
            ((20, 30), "row"), "mn", "m", "n", "kl", "")


def _k_zero_multiaxis(dt):
    # k == 0 scaling through multi-axis m and n groups crossing the 256 blocks
    A = rand((3, 100, 0), dt, 43)
    B = rand((0, 2, 150), dt, 44)
    return (A, "abk", B, "kcd", ((3, 2, 100, 150), "strided"), "acbd",
            "ab", "cd", "k", "")


def _empty_m(dt):
    return (rand((0, 10), dt, 37), "mk", rand((10, 30), dt, 38), "kn",
            ((0, 30), "row"), "mn", "m", "n", "k", "")


def _empty_n(dt):
    return (rand((20, 10), dt, 39), "mk", rand((10, 0), dt, 40), "kn",
            ((20, 0), "row"), "mn", "m", "n", "k", "")


def _empty_batch(dt):
    return (rand((0, 4, 5), dt, 41), "bmk", rand((0, 5, 6), dt, 42), "bkn",
            ((0, 4, 6), "row"), "bmn", "m", "n", "k", "b")


CASES = {f.__name__[1:]: f for f in (
    _plain, _permuted, _design_doc, _reversed, _reversed_col, _broadcast_mn,
    _broadcast_k, _sliced_gaps, _batch, _batch_2axes, _batch_big, _thin_m,
    _many_axes, _outer, _no_groups, _k_zero, _k_zero_big, _k_zero_axis, _k_zero_multiaxis,
    _empty_m, _empty_n, _empty_batch)}

ALPHA_BETA = [(1.0, 0.0), (-0.5, 1.5), (0.75, -1.0)]


def _run(case, dt, alpha, beta, nthreads):
    A, la, B, lb, (cshape, ckind), lc, m, n, k, batch = CASES[case](dt)
    if lc == "z":                         # the scalar case: C is one element
        lc = ""
    C, big = embed(cshape, dt, SENTINEL, kind=ckind)
    Cv = C.reshape(()) if lc == "" else C
    c_init = rand(cshape, dt, 99).reshape(Cv.shape)
    if beta == 0:
        c_init[...] = np.nan                         # beta == 0 never reads C
    Cv[...] = c_init
    outside = outside_mask(C, big)
    A0, B0 = A.copy(), B.copy()
    groups = describe(A, la, B, lb, Cv, lc, m, n, k, batch)

    einplan.set_num_threads(nthreads)
    assert einplan.get_num_threads() == nthreads
    out = _native.gemm(A, B, Cv, *groups, alpha=alpha, beta=beta)
    assert out is Cv

    Kx = int(np.prod([ax[0] for ax in groups[2]]))
    ref, mag = expected(A, la, B, lb, c_init, lc, alpha, beta)
    assert_close(Cv, ref, mag, Kx, dt)
    assert (big[outside] == SENTINEL).all(), "GEMM wrote outside C"
    assert np.array_equal(A, A0) and np.array_equal(B, B0), "GEMM modified an input"

    # the numpy oracle of the same contract agrees within rounding
    Cr, _ = embed(cshape, dt, SENTINEL, kind=ckind)
    Crv = Cr.reshape(()) if lc == "" else Cr
    Crv[...] = c_init
    _native.gemm_reference(A, B, Crv, *describe(A, la, B, lb, Crv, lc, m, n, k, batch),
                           alpha=alpha, beta=beta)
    assert_close(Crv, ref, mag, Kx, dt)
    return np.array(Cv, copy=True)


@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
@pytest.mark.parametrize("case", list(CASES))
def test_gemm_groups(restore_threads, case, dtype):
    for alpha, beta in ALPHA_BETA:
        r1 = _run(case, dtype, alpha, beta, 1)
        r2 = _run(case, dtype, alpha, beta, 2)
        assert np.array_equal(r1, r2), \
            f"1 and 2 threads differ (max {np.abs(r1 - r2).max() if r1.size else 0})"


@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
def test_k_zero_beta(restore_threads, dtype):
    """k == 0: C = beta*C exactly; beta == 0 writes zeros (over NaN)."""
    for nt in (1, 2):
        einplan.set_num_threads(nt)
        # 400 x 300: large enough that 2 threads are used
        A, B = np.empty((400, 0), dtype), np.empty((0, 300), dtype)
        for beta in (0.0, 2.0, -0.5):
            C = rand((400, 300), dtype, 7)
            C[::7, ::5] = np.nan if beta == 0 else C[::7, ::5]
            C0 = C.copy()
            m, n, k, batch = describe(A, "mk", B, "kn", C, "mn", "m", "n", "k")
            _native.gemm(A, B, C, m, n, k, batch, alpha=3.0, beta=beta)
            want = np.zeros_like(C0) if beta == 0 else (C0 * dtype(beta))
            assert np.array_equal(C, want)


def test_empty_group_is_extent_one():
    A = np.array([[2.0]])
    B = np.array([[3.0]])
    C = np.array([[5.0]])
    _native.gemm(A, B, C, (), (), (), (), alpha=1.0, beta=1.0)
    assert C[0, 0] == 11.0


def test_batch_results_are_independent(restore_threads):
    """Each batch of a batched GEMM equals the same GEMM run alone (bitwise)."""
    dt = np.float64
    A, B = rand((7, 33, 41), dt, 1), rand((7, 41, 29), dt, 2)
    for nt in (1, 2):
        einplan.set_num_threads(nt)
        C = np.zeros((7, 33, 29), dt)
        _native.gemm(A, B, C, *describe(A, "bmk", B, "bkn", C, "bmn", "m", "n", "k", "b"))
        for i in range(7):
            Ci = np.zeros((33, 29), dt)
            _native.gemm(A[i], B[i], Ci, *describe(A[i], "mk", B[i], "kn", Ci, "mn",
                                                    "m", "n", "k"))
            assert np.array_equal(C[i], Ci)


def test_integer_valued_exact(restore_threads):
    """Integer data small enough to be exact: any order of summation gives
    numpy's result exactly, also across KC blocks and threads."""
    rng = np.random.default_rng(0)
    for dt in DTYPES:
        kc = K.blocking(dt)["kc"]
        A = rng.integers(-3, 4, (61, 2 * kc + 5)).astype(dt)
        B = rng.integers(-3, 4, (2 * kc + 5, 53)).astype(dt)
        want = A.astype(np.int64) @ B.astype(np.int64)
        for nt in (1, 2):
            einplan.set_num_threads(nt)
            C = np.full((61, 53), np.nan, dt)
            _native.gemm(A, B, C, *describe(A, "mk", B, "kn", C, "mn", "m", "n", "k"))
            assert np.array_equal(C, want.astype(dt))


# Small blocking (EINPLAN_BLOCKING=MC,KC,NC) so that every loop -- jc, pc,
# ic, jr, ir -- runs several blocks with fringes, under every ISA and with
# 1 and 2 threads; in a subprocess since blocking is read once per ISA.
_SMALL_BLOCKING_SCRIPT = textwrap.dedent("""
    import sys, numpy as np
    sys.path.insert(0, sys.argv[1])
    from _gemm_util import assert_close, describe, embed, expected, rand
    import einplan
    from einplan import _native
    K = _native._kernels
    shapes = [(37, 101, 50), (1, 130, 33), (70, 1, 20), (17, 49, 17), (64, 96, 32)]
    for isa in K.available_isas():
        K.set_isa(isa)
        for dt in (np.float32, np.float64):
            bk = K.blocking(dt)
            assert bk["kc"] == 16, bk
            for M, N, Kx in shapes:
                for kind in ("row", "col", "strided"):
                    A = rand((M, Kx), dt, M)
                    B = rand((Kx, N), dt, N)[:, ::-1]
                    res = []
                    for nt in (1, 2):
                        einplan.set_num_threads(nt)
                        C, big = embed((M, N), dt, -7.25, kind=kind)
                        C0 = rand((M, N), dt, 3)
                        C[...] = C0
                        _native.gemm(A, B, C, *describe(A, "mk", B, "kn", C, "mn",
                                                        "m", "n", "k"),
                                     alpha=0.5, beta=-2.0)
                        ref, mag = expected(A, "mk", B, "kn", C0, "mn", 0.5, -2.0)
                        assert_close(C, ref, mag, Kx, dt)
                        assert (big == -7.25).sum() == big.size - C.size, (isa, M, N, Kx)
                        res.append(C.copy())
                    assert np.array_equal(res[0], res[1]), (isa, dt, M, N, Kx, kind)
            # multi-axis groups: blocks start in the middle of an axis
            A = rand((5, 3, 7, 11), dt, 1)[:, :, ::-1]            # a b c d
            B = rand((11, 3, 9, 13), dt, 2)[:, :, :, ::2]         # d b e f
            res = []
            for nt in (1, 2):
                einplan.set_num_threads(nt)
                C, big = embed((5, 9, 7, 7), dt, -7.25, kind="strided")   # a e c f
                C0 = rand(C.shape, dt, 3)
                C[...] = C0
                _native.gemm(A, B, C, *describe(A, "abcd", B, "dbef", C, "aecf",
                                                "ac", "ef", "db"), alpha=1.5, beta=0.25)
                ref, mag = expected(A, "abcd", B, "dbef", C0, "aecf", 1.5, 0.25)
                assert_close(C, ref, mag, 33, dt)
                assert (big == -7.25).sum() == big.size - C.size, (isa, "multi-axis")
                res.append(C.copy())
            assert np.array_equal(res[0], res[1]), (isa, dt, "multi-axis")
    print("OK")
""")


def test_small_blocking_all_loops():
    env = dict(os.environ, EINPLAN_BLOCKING="16,16,48")
    env.pop("EINPLAN_ISA", None)
    r = subprocess.run([sys.executable, "-c", _SMALL_BLOCKING_SCRIPT,
                        os.path.dirname(os.path.abspath(__file__))],
                       env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "OK", r.stderr[-3000:]


_UNALIGNED_SCRIPT = textwrap.dedent("""
    import sys, numpy as np
    sys.path.insert(0, sys.argv[1])
    from _gemm_util import assert_close, describe, expected
    from einplan import _native
    K = _native._kernels

    def unaligned(shape, dt, off, order):
        dt = np.dtype(dt)
        n = int(np.prod(shape))
        buf = np.zeros(n * dt.itemsize + 64, np.uint8)
        x = buf[off:off + n * dt.itemsize].view(dt).reshape(shape, order=order)
        assert not x.flags.aligned
        return x

    rng = np.random.default_rng(0)
    for isa in K.available_isas():
        K.set_isa(isa)
        for dt in (np.float32, np.float64):
            for M, N, Kx in [(37, 53, 41), (130, 90, 200)]:
                for order in "CF":
                    A = unaligned((M, Kx), dt, 1, order)
                    B = unaligned((Kx, N), dt, 3, order)
                    C = unaligned((M, N), dt, 5, order)
                    A[...] = rng.standard_normal(A.shape)
                    B[...] = rng.standard_normal(B.shape)
                    C[...] = rng.standard_normal(C.shape)
                    C0 = C.copy()
                    try:
                        _native.gemm(A, B, C, *describe(A, "mk", B, "kn", C, "mn",
                                                        "m", "n", "k"), alpha=1.0, beta=0.5)
                    except ValueError:
                        assert np.array_equal(C, C0)    # refusing is fine too
                        continue
                    ref, mag = expected(A, "mk", B, "kn", C0, "mn", 1.0, 0.5)
                    assert_close(C, ref, mag, Kx, dt)
    print("OK")
""")


def test_unaligned_operands_never_crash():
    """numpy allows arrays whose data is not aligned to the itemsize: the
    kernel computes them correctly (or refuses with ValueError), never
    faults on an aligned SIMD access."""
    env = dict(os.environ)
    env.pop("EINPLAN_ISA", None)
    r = subprocess.run([sys.executable, "-c", _UNALIGNED_SCRIPT,
                        os.path.dirname(os.path.abspath(__file__))],
                       env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "OK", \
        f"rc {r.returncode}: {r.stderr[-3000:]}"


# ------------------------------------------------------------ m == 1 / n == 1
# The GEMV path (no packing): dot products when the matrix is contiguous
# along k, axpy when it is contiguous along the output, a gather otherwise;
# output blocks of 256 and k blocks of 4096 (ep_gemv.h), under every ISA.

GEMV_J = [1, 3, 4, 5, 256, 257, 600]
GEMV_K = [1, 9, 300, 4097]
GEMV_MAX_WORK = 1_100_000       # skip the largest J x K pairs (runtime)


def _gemv_operands(orient, layout, J, Kx, dt, seed):
    """n1: C[m] = A[m, k] B[k]; m1: C[n] = A[k] B[k, n].  `layout` is that of
    the matrix: "krow" (contiguous along k), "jrow" (contiguous along the
    output), "gather" (neither; the vector strided too)."""
    if layout == "krow":
        mat = rand((J, Kx), dt, seed)
    elif layout == "jrow":
        mat = np.asfortranarray(rand((J, Kx), dt, seed))
    else:
        mat = rand((Kx, 2 * J), dt, seed).T[::-2]          # strides (-2, 2J)
    vec = rand(2 * Kx, dt, seed + 1)
    vec = vec[::2] if layout == "gather" else vec[:Kx]
    if orient == "n1":
        return mat, "mk", vec, "k", "m", "m", "", "k"
    return vec, "k", mat.T, "kn", "n", "", "n", "k"


@pytest.mark.parametrize("layout", ["krow", "jrow", "gather"])
@pytest.mark.parametrize("orient", ["n1", "m1"])
@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
@pytest.mark.parametrize("isa", K.available_isas() if K is not None else [])
def test_gemv_path(restore_threads, isa, dtype, orient, layout):
    prev = K.isa()
    K.set_isa(isa)
    try:
        for J in GEMV_J:
            for Kx in GEMV_K:
                if J * Kx > GEMV_MAX_WORK:
                    continue
                A, la, B, lb, lc, m, n, k = _gemv_operands(orient, layout, J, Kx,
                                                          dtype, J + Kx)
                alpha, beta = ALPHA_BETA[(J + Kx) % len(ALPHA_BETA)]
                res = []
                for nt in ((1, 2) if J * Kx >= 100_000 else (1,)):
                    einplan.set_num_threads(nt)
                    C, big = embed((J,), dtype, SENTINEL, kind="strided")
                    c_init = rand(J, dtype, 5)
                    if beta == 0:
                        c_init[...] = np.nan
                    C[...] = c_init
                    _native.gemm(A, B, C, *describe(A, la, B, lb, C, lc, m, n, k),
                                 alpha=alpha, beta=beta)
                    ref, mag = expected(A, la, B, lb, c_init, lc, alpha, beta)
                    assert_close(C, ref, mag, Kx, dtype)
                    assert (big[outside_mask(C, big)] == SENTINEL).all()
                    res.append(C.copy())
                assert all(np.array_equal(res[0], r) for r in res[1:]), \
                    f"J={J} K={Kx}: 1 and 2 threads differ"
    finally:
        K.set_isa(prev)


@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
@pytest.mark.parametrize("isa", K.available_isas() if K is not None else [])
def test_gemv_path_of_a_few_columns(restore_threads, isa, dtype):
    """A's rows contiguous along one k axis against 2 to 4 columns of B, k
    past 16384 (the nest's dots take shorter rows): the GEMV path dots each row of A, read once in place,
    with B's columns 1024 values of k at a time (ep_gemv.h), gathered when
    B is strided, reversed or column-major, read in place when they run
    along k at unit stride ("T"; past L1: the smm kernel takes B in L1, or
    rows of B at unit stride); A's rows from two axes, reversed; k a
    multiple of the block and not; over two output blocks of 256 rows;
    alpha and beta.  Rows of one block and k of two threads' share at two
    threads share k (partial sums in thread order: the same bits call after
    call), else 1 and 2 threads are bitwise equal.  Five columns, or k
    strided in A, take other paths."""
    prev = K.isa()
    K.set_isa(isa)
    try:
        # (B's n strided or reversed and past L1: the smm kernel takes unit-
        # stride rows of B, or B in L1)
        for M, N, Kx, lay in [(24, 4, 17409, "slice"), (3, 2, 20000, "slice"),
                              (257, 3, 16385, "F"), (40, 4, 17408, "neg"), (5, 5, 17000, "C"),
                              (30, 4, 16384, "slice"), (6, 3, 20001, "T"), (4, 2, 40000, "T"),
                              (3, 4, 50000, "neg")]:
            A = rand((M, Kx), dtype, M + Kx)
            B = rand((Kx, 2 * N), dtype, N)
            B = {"slice": B[:, ::2], "C": B[:, :N], "F": np.asfortranarray(B[:, :N]),
                 "neg": B[::-1, N - 1::-1], "T": rand((N, Kx), dtype, N).T}[lay]
            alpha, beta = ALPHA_BETA[(M + Kx) % len(ALPHA_BETA)]
            by_k = N <= 4 and M <= 256 and Kx >= 2 * 16385
            sched = _native.prepare_gemm(dtype, *describe(A, "mk", B, "kn", A[:, :N], "mn",
                                                          "m", "n", "k")).schedule(2)
            assert (sched["loop"] == "k") == by_k, (M, N, Kx, sched)
            res = []
            for nt in (1, 2, 2):
                einplan.set_num_threads(nt)
                C, big = embed((M, N), dtype, SENTINEL, kind="strided")
                c_init = rand((M, N), dtype, 5)
                if beta == 0:
                    c_init[...] = np.nan
                C[...] = c_init
                groups = describe(A, "mk", B, "kn", C, "mn", "m", "n", "k")
                path = _native.prepare_gemm(dtype, *groups).schedule()["path"]
                assert (path == "gemv") == (N <= 4 and Kx > 16384), (M, N, Kx, path)
                _native.gemm(A, B, C, *groups, alpha=alpha, beta=beta)
                ref, mag = expected(A, "mk", B, "kn", c_init, "mn", alpha, beta)
                assert_close(C, ref, mag, Kx, dtype)
                assert (big[outside_mask(C, big)] == SENTINEL).all()
                res.append(C.copy())
            assert np.array_equal(res[1], res[2]), f"M={M}: two calls at 2 threads differ"
            if not by_k:
                assert np.array_equal(res[0], res[1]), f"M={M}: 1 and 2 threads differ"
        # m from two axes, one reversed: 'abk,kn->abn'
        A = rand((3, 7, 16400), dtype, 9)[:, ::-1]
        B = rand((16400, 6), dtype, 10)[:, ::2]
        C = np.zeros((3, 7, 3), dtype)
        groups = describe(A, "abk", B, "kn", C, "abn", "ab", "n", "k")
        assert _native.prepare_gemm(dtype, *groups).schedule()["path"] == "gemv"
        _native.gemm(A, B, C, *groups)
        ref, mag = expected(A, "abk", B, "kn", np.zeros_like(C), "abn", 1.0, 0.0)
        assert_close(C, ref, mag, 16400, dtype)
        # k strided in A: not this path
        A = rand((9, 40000), dtype, 11)[:, ::2]
        B = rand((20000, 4), dtype, 12)
        C = np.zeros((9, 4), dtype)
        groups = describe(A, "mk", B, "kn", C, "mn", "m", "n", "k")
        assert _native.prepare_gemm(dtype, *groups).schedule()["path"] != "gemv"
    finally:
        K.set_isa(prev)


def _gemv_multiaxis(dt):
    # output group of two axes crossing the 256 block, k of two axes
    # crossing the 4096 block with a gap (irregular k offsets), batched
    A = rand((2, 3, 100, 2, 2101), dt, 50)[..., :2100]          # b i j k l
    B = rand((2, 2, 2100 * 2), dt, 51)[..., ::2]                  # b k l(strided)
    return (A, "bijkl", B, "bkl", ((2, 3, 100), "reversed"), "bij",
            "ij", "", "kl", "b")


def _gemv_batch_many(dt):
    # many small GEMVs: threads over batches
    A = rand((40, 30, 50), dt, 52)
    B = rand((40, 50), dt, 53)
    return (A, "bmk", B, "bk", ((40, 30), "col"), "bm", "m", "", "k", "b")


def _gemv_m1_batch(dt):
    # m == 1 with a batch: C[b, n] = A[b, k] B[b, k, n]
    A = rand((3, 700), dt, 54)[:, ::-1]
    B = rand((3, 700, 300), dt, 55)
    return (A, "bk", B, "bkn", ((3, 300), "strided"), "bn", "", "n", "k", "b")


def _broadcast_k_of_b(dt):
    # B broadcast along k: in-place B panels (small m) read with k stride 0
    A = rand((60, 45), dt, 56)
    B = np.broadcast_to(rand((1, 70), dt, 57), (45, 70))
    return (A, "mk", B, "kn", ((60, 70), "row"), "mn", "m", "n", "k", "")


def _unaligned_b_rows(dt):
    # B n-contiguous but its rows not 64-byte aligned (in-place B panels)
    A = rand((50, 45), dt, 58)
    B = rand((45, 101), dt, 59)[:, 3:100]
    return (A, "mk", B, "kn", ((50, 97), "row"), "mn", "m", "n", "k", "")


def _large_m_packed_b(dt):
    # m above the in-place-B limit (256): B packed even when n-contiguous
    return (rand((300, 40), dt, 60), "mk", rand((40, 70), dt, 61), "kn",
            ((300, 70), "row"), "mn", "m", "n", "k", "")


def _short_k_wide(dt):
    # k = 21, C rows contiguous along n: the macro-kernel's short-k order
    # (strips of B panels inside the MR panels), m over two MC blocks, n over
    # several strips with a fringe
    return (rand((77, 21), dt, 62), "mk", rand((21, 1203), dt, 63), "kn",
            ((77, 1203), "row"), "mn", "m", "n", "k", "")


def _short_k_limit(dt):
    # k = 64, the longest k of the short-k order; m = 50 reads B in place on
    # the kernel sets that do so up to 256 rows (generic, AVX-512)
    return (rand((50, 64), dt, 64), "mk", rand((64, 700), dt, 65), "kn",
            ((50, 700), "row"), "mn", "m", "n", "k", "")


def _short_k_gapped_n(dt):
    # short k, n = (e, f) with C contiguous along f but gaps between its
    # rows: the panels across a gap are scattered tiles
    return (rand((13, 30), dt, 66), "mk", rand((30, 40, 29), dt, 67), "kef",
            ((13, 40, 29), "padded"), "mef", "m", "ef", "k", "")


for _f in (_gemv_multiaxis, _gemv_batch_many, _gemv_m1_batch, _broadcast_k_of_b,
           _unaligned_b_rows, _large_m_packed_b, _short_k_wide, _short_k_limit,
           _short_k_gapped_n):
    CASES[_f.__name__[1:]] = _f


@pytest.mark.parametrize("dtype", DTYPES, ids=["f32", "f64"])
@pytest.mark.parametrize("case", ["gemv_multiaxis", "gemv_batch_many", "gemv_m1_batch",
                                  "broadcast_k_of_b", "unaligned_b_rows",
                                  "large_m_packed_b", "short_k_wide", "short_k_limit",
                                  "short_k_gapped_n"])
def test_gemm_groups_more(restore_threads, case, dtype):
    test_gemm_groups(None, case, dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("isa", K.available_isas() if K is not None else [])
def test_packs_compact_rows_strided_along_k(restore_threads, isa, dtype):
    """A row-major A and a B stored (n, k), both sliced along k (stride 2, 3,
    -2; 9 takes the element loop): each panel's rows compacted a chunk of k at
    a time, then transposed as contiguous rows are; k around the chunk (64)
    and the transposes, every leftover row of a panel.  Then a column-major
    A and a row-major B sliced along m and n (stride 2); with few rows of A
    (7, 200, 300), B's panels are packed one at a time from rows far apart,
    the rows ahead prefetched."""
    prev = K.isa()
    K.set_isa(isa)
    try:
        for M, N, Kx in [(7, 149, 8), (13, 131, 65), (37, 57, 130), (64, 40, 400),
                         (7, 200, 300)]:
            cases = [(rand((M, Kx * abs(ks)), dtype, M)[:, ::ks], "mk",      # k strided
                      rand((N, Kx * abs(ks)), dtype, N)[:, ::ks], "nk") for ks in (2, 3, -2, 9)]
            # a column-major A and a row-major B sliced along m and n: whole
            # panels swept a row at a time from every other element
            cases.append((np.asfortranarray(rand((2 * M, Kx), dtype, M + 1))[::2], "mk",
                          rand((Kx, 2 * N), dtype, N + 1)[:, ::2], "kn"))
            for A, la, B, lb in cases:
                C0 = rand((M, N), dtype, 3)
                C = C0.copy()
                groups = describe(A, la, B, lb, C, "mn", "m", "n", "k")
                _native.gemm(A, B, C, *groups, alpha=0.5, beta=-2.0)
                ref, mag = expected(A, la, B, lb, C0, "mn", 0.5, -2.0)
                assert_close(C, ref, mag, Kx, dtype)
    finally:
        K.set_isa(prev)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("isa", K.available_isas() if K is not None else [])
def test_transposing_packs(restore_threads, isa, dtype):
    """Operands contiguous along k on the packed path -- A row-major ('ik')
    and B stored as (n, k) ('jk') -- pack through register transposes of 8
    (float) / 4 (double) rows with AVX2 and wider, and of an AVX2 micro-panel's
    6 rows of A at once; every leftover row, k not a multiple of the transpose
    (k = 8, 9, 17 and 400 around the 6-row float transpose's stop one step
    short of the end), and gathered (multi-axis) rows."""
    prev = K.isa()
    K.set_isa(isa)
    try:
        for M, N, Kx in [(1, 150, 9), (7, 149, 8), (8, 200, 17), (13, 131, 33),
                         (37, 257, 4), (64, 140, 400), (9, 51, 1)]:
            A = rand((M, Kx), dtype, M)                      # m k, k contiguous
            Bt = rand((N, Kx), dtype, N)                     # n k, k contiguous
            for nt in (1, 2):
                einplan.set_num_threads(nt)
                C0 = rand((M, N), dtype, 3)
                C = C0.copy()
                groups = describe(A, "mk", Bt, "nk", C, "mn", "m", "n", "k")
                path = _native.prepare_gemm(dtype, *groups).schedule()["path"]
                assert path in ("gemm", "gemv") or Kx == 1   # k = 1: B's n stride is 1
                _native.gemm(A, Bt, C, *groups, alpha=0.5, beta=-2.0)
                ref, mag = expected(A, "mk", Bt, "nk", C0, "mn", 0.5, -2.0)
                assert_close(C, ref, mag, Kx, dtype)
        # rows gathered from two axes: 'abk' x 'cdk' -> 'abcd', m = (a, b), n = (c, d)
        A = rand((3, 5, 21), dtype, 1)[:, ::-1]
        B = rand((4, 13, 21), dtype, 2)[::-1, :, :]
        C = np.zeros((3, 5, 4, 13), dtype)
        groups = describe(A, "abk", B, "cdk", C, "abcd", "ab", "cd", "k")
        _native.gemm(A, B, C, *groups)
        ref, mag = expected(A, "abk", B, "cdk", np.zeros_like(C), "abcd", 1.0, 0.0)
        assert_close(C, ref, mag, 21, dtype)
    finally:
        K.set_isa(prev)


def test_b_taken_in_place_or_packed_as_measured(isa, restore_threads):
    """Past one MR panel of rows, a GEMM whose B the kernel could read in
    place takes it in place and packed in turn until the process has timed
    both for its kind of call, then keeps the faster: every call gives the
    same bits either way, the schedule reports the state ('measuring', then
    'in place' or 'packed', direct_b following it) and explain names it."""
    einplan.set_num_threads(1)
    rng = np.random.default_rng(5)
    measured = 0
    l2 = _native.kernel_config()["caches"]["l2"] or 512 << 10
    for dtype in ("float32", "float64"):
        # B in a quarter of L2, and B past all of it: packed, that one goes a
        # panel at a time
        row = 300 * np.dtype(dtype).itemsize
        near_n, far_n = l2 // 4 // row, l2 // row + 100
        for m, n in ((12, near_n), (40, near_n), (40, far_n)):
            A = rng.standard_normal((m, 300)).astype(dtype)
            B = rng.standard_normal((300, n)).astype(dtype)
            plan = einplan.plan("ij,jk->ik", A, B)
            (step,) = plan._plan.steps
            planned = step.native.planned()
            if planned["b_measured"] is None:
                continue
            measured += 1
            assert planned["b_by_panel"] == (n == far_n), (isa, dtype, m, n)
            first = plan(A, B)
            np.testing.assert_allclose(first, A.astype("f8") @ B.astype("f8"),
                                       rtol=1e-4 if dtype == "float32" else 1e-12, atol=1e-3)
            # each way runs until it has done ep_schedule.c's EP_B_WAY_WORK
            # flops (256 Mi); its first call is not timed
            flops = 2 * m * n * 300
            states = []
            for _ in range(2 * ((256 << 20) // flops + 2) + 8):
                assert np.array_equal(plan(A, B), first), (isa, dtype, m)
                sched = step.native.call_schedule()[0]
                states.append(sched["b_measured"])
                if states[-1] != "measuring":
                    break
            assert states[-1] in ("in place", "packed"), (isa, dtype, m, states[-3:])
            assert sched["direct_b"] == (states[-1] == "in place")
            for _ in range(3):   # the choice stays
                assert np.array_equal(plan(A, B), first)
            assert step.native.call_schedule()[0]["b_measured"] == states[-1]
            text = str(einplan.explain("ij,jk->ik", A, B))
            assert "whichever this process measures faster" in text, text
            assert ("when packed, one NR panel at a time" in text) == (n == far_n), text
    assert measured, f"no GEMM of {isa} measured how to take B"


def test_b_always_packed_in_one_kc_block_goes_a_panel_at_a_time(isa, restore_threads):
    """Past the rows that may read B in place, a B past half of L2 is packed
    one NR panel at a time, just before the A panels meet it (all of m in
    one MC block), when it is one KC block, or its panels pack from runs
    along k (k at unit stride: F order), or at most four MR panels of A meet
    it; a B of more KC blocks read along n by more rows is packed whole.
    Results equal numpy's either way; explain says so without the measured
    case's 'when packed'."""
    einplan.set_num_threads(1)
    rng = np.random.default_rng(43)
    l2 = _native.kernel_config()["caches"]["l2"] or (1 << 20)
    for dtype in ("float32", "float64"):
        es = np.dtype(dtype).itemsize
        m, k = 300, 64
        n = l2 // (k * es) + 100
        blocking = _native.kernel_config()["blocking"][dtype]
        # K of three KC blocks: a K a little past KC is taken in one stretched block
        far_k = max(40 * k, 3 * blocking["kc"])
        for mm, kk, lay in [(m, k, "C"), (m, far_k, "C"), (None, far_k, "C"),
                            (60, far_k, "F"), (60, far_k, "C")]:
            A = rng.standard_normal((mm or 6, kk)).astype(dtype)
            B = rng.standard_normal((kk, n if kk == k else 700)).astype(dtype)
            if mm is None:                   # four MR panels of rows
                A = rng.standard_normal((4 * blocking["mr"], kk)).astype(dtype)
            elif mm != m:
                A = A[:mm]
            if lay == "F":
                B = np.asfortranarray(B)
            plan = einplan.plan("ij,jk->ik", A, B)
            (step,) = plan._plan.steps
            planned = step.native.planned()
            # (rows the kernel set may read B in place for are measured: by
            # panel when packed)
            measured = planned["b_measured"] is not None
            assert planned["path"] == "gemm" and (A.shape[0] < m or not measured), planned
            one_block = kk <= planned["kc"]
            assert one_block == (kk == k), planned
            rows = -(-A.shape[0] // planned["mr"]) * planned["mr"]
            fits = (rows + planned["nr"]) * planned["kc"] * es <= 0.75 * l2
            by_panel = fits and (measured or one_block or lay == "F"
                                 or rows <= 4 * planned["mr"])
            assert planned["b_by_panel"] == by_panel, (isa, dtype, A.shape, lay, planned)
            np.testing.assert_allclose(plan(A, B), A.astype("f8") @ B.astype("f8"),
                                       rtol=1e-4 if dtype == "float32" else 1e-12,
                                       atol=1e-3 if dtype == "float32" else 1e-9)
            text = str(einplan.explain("ij,jk->ik", A, B))
            assert ("one NR panel at a time, just before the A panels meet it" in text) \
                == by_panel, text


def test_b_in_place_pages_apart_runs_short_k_blocks(isa, restore_threads):
    """B read in place with its rows a page or more apart and spanning more
    pages than ep_schedule.c's EP_TLB_PAGES (1024) is walked in K blocks of
    at most EP_IN_PLACE_PAGES (128) rows, each panel's rows fetched a panel
    ahead (ep_ukr.h); one MR panel of rows and past it (B in place or
    packed a panel at a time, as measured) take the same KC.  Results equal
    numpy's for B forwards and backwards along k, sliced rows, 1 and 2
    threads, K a whole number of blocks and not.  A B of fewer pages keeps
    the blocking's KC."""
    rng = np.random.default_rng(31)
    capped = []
    for dtype in (np.float32, np.float64):
        it = np.dtype(dtype).itemsize
        n = 4160 // it                       # rows 4160 bytes apart
        for k in (1100, 1280):               # 4.6 and 5.3 MB of rows
            for layout in ("C", "neg", "slice"):
                if layout == "slice":
                    B = rng.standard_normal((k, n + 24)).astype(dtype)[:, 8:n + 8]
                else:
                    B = rng.standard_normal((k, n)).astype(dtype)
                    B = B[::-1] if layout == "neg" else B
                assert abs(B.strides[0]) >= 4096 and k * abs(B.strides[0]) > 1024 * 4096
                for m in (3, 9):
                    A = rng.standard_normal((m, k)).astype(dtype)
                    C = np.full((m, n), np.nan, dtype)
                    call = K.GemmCall(dtype, *describe(A, "mk", B, "kn", C, "mn",
                                                       "m", "n", "k"))
                    sched = call.schedule(nthreads=1)
                    if sched["path"] != "gemm" or not (sched["direct_b"] or sched["b_measured"]):
                        continue                 # this kernel set packs such a B
                    assert sched["kc"] <= 128 and sched["kc"] * -(-k // sched["kc"]) >= k, sched
                    assert -(-k // sched["kc"]) == -(-k // 128), (k, sched["kc"])
                    capped.append((dtype, m))
                    ref = A.astype(np.float64) @ B.astype(np.float64)
                    for nt in (1, 2):
                        for _ in range(3):       # a measured B: both ways in turn
                            C[...] = np.nan
                            call(A, B, C, nthreads=nt)
                            assert_close(C, ref, np.abs(A) @ np.abs(B), k, dtype)
        # the same rows, fewer of them: B within EP_TLB_PAGES keeps its KC
        B = rng.standard_normal((600, n)).astype(dtype)
        A = rng.standard_normal((3, 600)).astype(dtype)
        C = np.zeros((3, n), dtype)
        sched = K.GemmCall(dtype, *describe(A, "mk", B, "kn", C, "mn", "m", "n", "k")
                           ).schedule(nthreads=1)
        if sched["path"] == "gemm" and sched["direct_b"]:
            assert sched["kc"] > 128, sched
    # one MR panel of rows reads B in place under every kernel set
    assert {(np.float32, 3), (np.float64, 3)} <= set(capped), capped
    # a C past L2 would be re-visited per block from L3: its B keeps its KC
    l2 = _native.kernel_config()["caches"]["l2"] or 512 << 10
    n = l2 // (16 * 4) + 64
    A = rng.standard_normal((16, 300)).astype(np.float32)
    B = rng.standard_normal((300, n)).astype(np.float32)
    C = np.zeros((16, n), np.float32)
    sched = K.GemmCall(np.float32, *describe(A, "mk", B, "kn", C, "mn", "m", "n", "k")
                       ).schedule(nthreads=1)
    assert 300 * n * 4 > 1024 * 4096
    if sched["path"] == "gemm" and (sched["direct_b"] or sched["b_measured"]):
        assert sched["kc"] == 300, sched
