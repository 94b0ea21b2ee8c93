"""The small in-place GEMM path (smm: batches of tiny matrices, no packing)
against numpy, at every n up to the kernel's limit and around it, with C rows
that are not contiguous to each other, beta 0 over NaN and beta 1."""
import numpy as np
import pytest

from einplan import _native
from _gemm_util import smm_max_n as kernel_smm_max_n


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [1, 2, 7, 8, 15, 16, 17, 31, 32, 33, 47, 48, 63, 64, 65, 80,
                               96, 113, 128, 129])
# m: every leftover of the 8-, 6- and 3-row tiles (one tile of the rows
# left); k: shorter than, a multiple of and past the split of k into chains
@pytest.mark.parametrize("m,k", [(1, 3), (3, 5), (4, 4), (5, 1), (9, 17), (7, 2), (13, 6),
                                 (16, 16), (23, 9), (10, 7), (14, 11), (2, 33)])
def test_batched_small_gemm(dtype, n, m, k):
    rng = np.random.default_rng(n * 100 + m * 10 + k)
    nb = 5
    A = rng.standard_normal((nb, m, k)).astype(dtype)
    B = rng.standard_normal((nb, k, n)).astype(dtype)
    # C rows padded: row stride n + 3, and a NaN-filled pad that must stay untouched
    Cbuf = np.full((nb, m, n + 3), np.nan, dtype)
    C = Cbuf[:, :, :n]
    it = A.itemsize
    m_g = [(m, A.strides[1] // it, Cbuf.strides[1] // it)]
    n_g = [(n, 1, 1)]
    k_g = [(k, A.strides[2] // it, B.strides[1] // it)]
    b_g = [(nb, A.strides[0] // it, B.strides[0] // it, Cbuf.strides[0] // it)]
    ref = np.matmul(A.astype(np.float64), B)
    call = _native.prepare_gemm(dtype, m_g, n_g, k_g, b_g)
    smm_max_n = kernel_smm_max_n(dtype)
    if smm_max_n:                          # the path under test is taken
        want = "gemv" if 1 in (m, n) else "smm" if n <= smm_max_n else "gemm"
        assert call.schedule()["path"] == want, call.schedule()
    _native.gemm(A, B, C, m_g, n_g, k_g, b_g, 1.0, 0.0)        # beta 0 over NaN
    tol = dict(rtol=1e-5, atol=1e-5 * k) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12 * k)
    np.testing.assert_allclose(C, ref, **tol)
    assert np.isnan(Cbuf[:, :, n:]).all(), "wrote outside C"
    _native.gemm(A, B, C, m_g, n_g, k_g, b_g, 2.0, 1.0)        # C = 2 AB + C
    np.testing.assert_allclose(C, 3 * ref, **tol)
    assert np.isnan(Cbuf[:, :, n:]).all(), "wrote outside C"


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
# k strides of B: contiguous (the packing transposes), 2 (rows compacted
# first), 11 (element by element)
@pytest.mark.parametrize("ks", [1, 2, 11])
@pytest.mark.parametrize("threads", [1, 2])
def test_smm_gathers_b_whose_n_is_not_unit_stride(isa, dtype, ks, threads):
    """B laid out as n rows along k ('bik,bjk->bij'): the smm path gathers
    its K x N block per batch index into rows of N (ep_smm.c) while the
    block fits L1 (past it, below), and the next batch's A and B are
    fetched ahead.  Every n to the kernel's limit and
    past it, m leftovers of every tile, batches walked backwards, beta 0
    over NaN and beta 1, one and two threads (batches and rows shared)."""
    rng = np.random.default_rng(ks * 7 + threads)
    smm_max_n = kernel_smm_max_n(dtype)
    l1d = _native.kernel_config()["caches"]["l1d"] or 32768
    for n, m, k, nb in [(2, 3, 5, 7), (4, 18, 91, 9), (7, 13, 1, 4), (8, 32, 64, 6),
                        (17, 9, 33, 3), (33, 5, 17, 2), (64, 23, 8, 3), (65, 4, 3, 2),
                        (128, 2, 9, 2), (129, 3, 4, 2), (24, 60, 12, 1), (64, 5, 200, 2)]:
        A = rng.standard_normal((nb, m, k)).astype(dtype)[::-1]
        Bbuf = rng.standard_normal((nb, n, k * ks)).astype(dtype)
        B = Bbuf[::-1, :, ::ks]                       # (nb, n, k), n rows apart
        Cbuf = np.full((nb, m, n + 3), np.nan, dtype)
        C = Cbuf[:, :, :n]
        it = A.itemsize
        m_g = [(m, A.strides[1] // it, Cbuf.strides[1] // it)]
        n_g = [(n, B.strides[1] // it, 1)]
        k_g = [(k, A.strides[2] // it, B.strides[2] // it)]
        b_g = [(nb, A.strides[0] // it, B.strides[0] // it, Cbuf.strides[0] // it)]
        ref = np.matmul(A.astype(np.float64), B.transpose(0, 2, 1).astype(np.float64))
        call = _native.prepare_gemm(dtype, m_g, n_g, k_g, b_g)
        if smm_max_n and n > 1 and m > 1:             # the path under test is taken
            # gathered while B's block fits L1, packed past it
            fits = n <= smm_max_n and k * n * A.itemsize <= l1d
            want = "smm" if fits else "gemm"
            assert call.schedule(threads)["path"] == want, (n, m, k, call.schedule(threads))
        call(A, B, C, 1.0, 0.0, threads)                # beta 0 over NaN
        tol = dict(rtol=1e-5, atol=1e-5 * k) if dtype == np.float32 else \
            dict(rtol=1e-12, atol=1e-12 * k)
        np.testing.assert_allclose(C, ref, **tol)
        assert np.isnan(Cbuf[:, :, n:]).all(), "wrote outside C"
        call(A, B, C, 2.0, 1.0, threads)                # C = 2 AB + C
        np.testing.assert_allclose(C, 3 * ref, **tol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_avx512_smm_gathers_a_b_past_l1_for_many_rows(dtype):
    """A gathered B past L1 but within a quarter of L2 ('ijk,jkl->il' with
    l sliced): the AVX-512 set, whose smm streams B from L2, takes it when
    four tiles of rows or more read it (the gather then costs at most a
    quarter of B's reads) and packs for a few rows; the AVX2 set keeps B's
    block in L1 and packs.  Results are numpy's either way."""
    rng = np.random.default_rng(11)
    l1d = _native.kernel_config()["caches"]["l1d"] or 32768
    l2 = _native.kernel_config()["caches"]["l2"] or 524288
    n = 10
    k = 3 * l1d // (2 * n * np.dtype(dtype).itemsize)      # B's block 1.5 L1
    assert k * n * np.dtype(dtype).itemsize <= l2 // 4
    for m, many in ((128, True), (5, False)):
        A = rng.standard_normal((m, k)).astype(dtype)
        B = rng.standard_normal((k, 2 * n)).astype(dtype)[:, ::2]
        C = np.empty((m, n), dtype)
        it = A.itemsize
        m_g = [(m, A.strides[0] // it, n)]
        n_g = [(n, B.strides[1] // it, 1)]
        k_g = [(k, 1, B.strides[0] // it)]
        call = _native.prepare_gemm(dtype, m_g, n_g, k_g, [])
        want = "smm" if many and _native.isa() == "avx512" else "gemm"
        if kernel_smm_max_n(dtype):
            assert call.schedule(1)["path"] == want, (m, call.schedule(1))
        call(A, B, C, 1.0, 0.0, 1)
        tol = dict(rtol=1e-4, atol=1e-4 * k) if dtype == np.float32 else \
            dict(rtol=1e-12, atol=1e-12 * k)
        np.testing.assert_allclose(C, A.astype(np.float64) @ B, **tol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_avx2_smm_keeps_b_in_l1(dtype):
    """With 16 registers the smm tiles stream their block of B once per few
    rows: AVX2 takes smm only while that K x block fits half of L1d, and
    packs beyond (AVX-512 takes smm at any k)."""
    if "avx2" not in _native.available_isas():
        pytest.skip(reason="the CPU has no AVX2")
    old = _native.isa()
    _native.set_isa("avx2")
    try:
        l1d = _native.kernel_config()["caches"]["l1d"] or 32768
        it = np.dtype(dtype).itemsize
        cols = {4: 24, 8: 12}[it]                    # 3 vectors per block
        paths = {}
        for k in (l1d // 2 // (cols * it), l1d // 2 // (cols * it) + 1):
            rng = np.random.default_rng(k)
            A = rng.standard_normal((40, k)).astype(dtype)
            B = rng.standard_normal((k, 32)).astype(dtype)
            C = np.empty((40, 32), dtype)
            g = ([(40, k, 32)], [(32, 1, 1)], [(k, 1, 32)])
            paths[k] = _native.prepare_gemm(dtype, *g).schedule()["path"]
            _native.gemm(A, B, C, *g)
            np.testing.assert_allclose(C, A.astype(np.float64) @ B, rtol=1e-4, atol=1e-3)
        assert list(paths.values()) == ["smm", "gemm"], paths
    finally:
        _native.set_isa(old)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_partial_last_panel_every_width(dtype):
    """Every width of the last n panel (1 .. NR-1 and beyond): the narrow
    micro-kernels that cover a partial panel store exactly n columns."""
    rng = np.random.default_rng(3)
    m, k = 70, 300
    A = rng.standard_normal((m, k)).astype(dtype)
    for n in range(13, 110):
        B = rng.standard_normal((k, n)).astype(dtype)
        Cbuf = np.full((m, n + 5), np.nan, dtype)
        C = Cbuf[:, :n]
        it = A.itemsize
        _native.gemm(A, B, C, [(m, k, n + 5)], [(n, 1, 1)], [(k, 1, n)], [], 1.0, 0.0)
        ref = A.astype(np.float64) @ B
        tol = dict(rtol=1e-4, atol=1e-3) if dtype == np.float32 else dict(rtol=1e-11, atol=1e-10)
        np.testing.assert_allclose(C, ref, **tol)
        assert np.isnan(Cbuf[:, n:]).all(), f"n={n}: wrote outside C"


def test_explain_says_the_smm_path_gathers_b(isa):
    """explain names the gather of a B whose n is not unit-stride on the
    smm path, and no longer says B is read in place."""
    import einplan
    rng = np.random.default_rng(5)
    # (m = 10: past the edges the loop nest is priced for)
    a = rng.standard_normal((40, 10, 91))
    b = rng.standard_normal((40, 18, 91))
    text = str(einplan.explain("bij,bkj->bki", a, b))
    np.testing.assert_allclose(einplan.einsum("bij,bkj->bki", a, b),
                               np.einsum("bij,bkj->bki", a, b), rtol=1e-12, atol=1e-12)
    if not kernel_smm_max_n(np.float64):
        assert "smm:" not in text
        return
    assert "smm:" in text, text
    assert "B, whose n is not unit-stride, is gathered per GEMM" in text, text
    assert "A, B and C are read in place" not in text, text


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_smm_runs_a_far_a_in_blocks_of_k_of_either_measured_size(dtype):
    """A whose columns lie a page or more apart runs k in blocks; the first
    such calls alternate the two block sizes they time (16 and 32 columns),
    so consecutive calls take both: each equals numpy, with beta 0 over NaN
    and beta 1."""
    rng = np.random.default_rng(71)
    m, k, n = 5, 1600, 9          # rows of one pass over B under every kernel set
    rows = 4096 // np.dtype(dtype).itemsize + 3        # columns a page and a bit apart
    A = np.asfortranarray(rng.standard_normal((rows, k)).astype(dtype))[:m]
    assert A.strides[1] >= 4096
    B = rng.standard_normal((k, n)).astype(dtype)
    it = A.itemsize
    m_g = [(m, 1, n)]
    n_g = [(n, 1, 1)]
    k_g = [(k, A.strides[1] // it, n)]
    call = _native.prepare_gemm(dtype, m_g, n_g, k_g)
    if kernel_smm_max_n(dtype):
        assert call.schedule()["path"] == "smm", call.schedule()
    ref = A.astype(np.float64) @ B
    tol = dict(rtol=1e-4, atol=1e-4 * np.sqrt(k)) if dtype == np.float32 else \
        dict(rtol=1e-11, atol=1e-11 * k)
    for _ in range(4):
        C = np.full((m, n), np.nan, dtype)
        _native.gemm(A, B, C, m_g, n_g, k_g, (), 1.0, 0.0)
        np.testing.assert_allclose(C, ref, **tol)
        _native.gemm(A, B, C, m_g, n_g, k_g, (), 1.0, 1.0)
        np.testing.assert_allclose(C, 2 * ref, **tol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_smm_times_only_far_calls_big_enough_to_time(dtype):
    """While the block of k for a far A is measured, a GEMM too small to time
    well (m = 5, n = 2, k = 21: about what a clock read costs) takes its turn
    untimed, one of k no longer than the smaller block takes no turn at all,
    and a big one is timed; once the block is chosen, and on a kernel set
    without the smm path, no call takes a turn.  Each equals numpy."""
    K = _native._kernels
    smm = bool(kernel_smm_max_n(dtype))
    rng = np.random.default_rng(5)
    rows = 4096 // np.dtype(dtype).itemsize + 3        # columns a page and a bit apart
    it = np.dtype(dtype).itemsize
    tol = dict(rtol=1e-4, atol=1e-3) if dtype == np.float32 else dict(rtol=1e-11, atol=1e-10)

    def run(m, k, n):
        """(measuring before the call, turns it took, multiply-adds it timed)"""
        A = np.asfortranarray(rng.standard_normal((rows, k)).astype(dtype))[:m]
        B = rng.standard_normal((k, n)).astype(dtype)
        m_g, n_g, k_g = [(m, 1, n)], [(n, 1, 1)], [(k, A.strides[1] // it, n)]
        path = _native.prepare_gemm(dtype, m_g, n_g, k_g).schedule()["path"]
        assert (path == "smm") == smm, path
        C = np.full((m, n), np.nan, dtype)
        pick, turns, work = K.smm_far_state()
        _native.gemm(A, B, C, m_g, n_g, k_g, (), 1.0, 0.0)
        _, turns2, work2 = K.smm_far_state()
        np.testing.assert_allclose(C, A.astype(np.float64) @ B, **tol)
        return smm and pick < 0, turns2 - turns, work2 - work

    measuring, turns, work = run(5, 21, 2)
    assert (turns, work) == ((1, 0) if measuring else (0, 0))      # a turn, untimed
    _, turns, work = run(5, 16, 2)
    assert (turns, work) == (0, 0)                                 # both ways the same
    measuring, turns, work = run(5, 1600, 9)
    assert (turns, work) == ((1, 5 * 1600 * 9) if measuring else (0, 0))   # timed


def _run_checked(A, B, dtype, threads):
    """C = A @ B through prepare_gemm, beta 0 over NaN and then C = 2 AB + C,
    checked against float64; returns the path the schedule took."""
    it = np.dtype(dtype).itemsize
    m, k = A.shape
    n = B.shape[1]
    Cbuf = np.full((m, n + 2), np.nan, dtype)
    C = Cbuf[:, :n]
    m_g = [(m, A.strides[0] // it, Cbuf.strides[0] // it)]
    n_g = [(n, B.strides[1] // it, 1)]
    k_g = [(k, A.strides[1] // it, B.strides[0] // it)]
    call = _native.prepare_gemm(dtype, m_g, n_g, k_g)
    ref = A.astype(np.float64) @ B.astype(np.float64)
    tol = dict(rtol=1e-4, atol=1e-4 * np.sqrt(k)) if dtype == np.float32 else \
        dict(rtol=1e-11, atol=1e-11 * k)
    call(A, B, C, 1.0, 0.0, threads)            # beta 0 over NaN
    np.testing.assert_allclose(C, ref, **tol)
    assert np.isnan(Cbuf[:, n:]).all(), "wrote outside C"
    call(A, B, C, 2.0, 1.0, threads)            # C = 2 AB + C
    np.testing.assert_allclose(C, 3 * ref, **tol)
    return call.schedule(threads)["path"]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("threads", [1, 2])
def test_smm_runs_far_apart_columns_in_blocks_over_chunks_of_rows(isa, dtype, threads):
    """A unit-stride along m with its columns a page or more apart runs k in
    blocks of a few columns over chunks of rows whose C stays in L2: more
    rows than one chunk (a part-chunk left over, per thread too), k
    forwards and backwards and not a whole number of blocks, B in place
    and gathered, beta 0 over NaN and beta 1 with alpha 2.  With the
    columns closer than a page (and k long) it takes the packed path, and
    so does float32 under AVX-512 whose rows of C end in a partial vector."""
    rng = np.random.default_rng(97 + threads)
    l2 = _native.kernel_config()["caches"]["l2"] or (1 << 20)
    it = np.dtype(dtype).itemsize
    n = 32 if dtype == np.float32 else 24          # whole vectors under every ISA
    chunk = l2 // 4 // (n * it) // 24 * 24      # rows of C in a quarter of L2
    m = max(2 * chunk + 37, 4096 // it + 5)
    paths = []
    for k in (75, 200):
        for kdir in (1, -1):
            A = np.asfortranarray(rng.standard_normal((m, k)).astype(dtype))[:, ::kdir]
            assert abs(A.strides[1]) >= 4096
            for ks in (None, 3):                # B by rows of n; B n rows apart, gathered
                if ks is None:
                    B = rng.standard_normal((k, n)).astype(dtype)
                else:
                    B = rng.standard_normal((n, k * ks)).astype(dtype)[:, ::ks].T
                paths.append((ks, _run_checked(A, B, dtype, threads)))
    near = []
    for mm, k in ((61, 700), (150, 1000)):      # columns closer than a page
        A = np.asfortranarray(rng.standard_normal((mm, k)).astype(dtype))
        near.append(_run_checked(A, rng.standard_normal((k, 9)).astype(dtype), dtype,
                                 threads))
    if kernel_smm_max_n(dtype):   # the paths under test are taken: B in place always
        smm = [p == "smm" for ks, p in paths if ks is None]      # (AVX2: while B fits
        assert (sum(smm) >= 1 if isa == "avx2" else all(smm)), paths   # L1), gathered B too
        assert sum(p == "smm" for ks, p in paths if ks) >= 1, paths
        assert near == ["gemm", "gemm"], near
    A = np.asfortranarray(rng.standard_normal((m, 200)).astype(dtype))
    ragged = _run_checked(A, rng.standard_normal((200, 24)).astype(dtype), dtype, threads)
    if isa == "avx512" and dtype == np.float32:
        assert ragged == "gemm", ragged


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("threads", [1, 2])
def test_smm_runs_a_tall_a_in_chunks_of_rows_across_its_column_blocks(dtype, threads):
    """Rows of C wider than one block of columns (the kernel runs blocks of
    a few vectors) over a tall A: the rows in chunks that every block runs
    before the next chunk (A and C kept in L2 between the blocks) -- many
    chunks and a part-chunk left over that is not a whole number of tiles,
    the last vector of a row whole or masked, beta 0 over NaN and beta 1."""
    rng = np.random.default_rng(53 + threads)
    lanes = 8 if dtype == np.float32 else 4
    for n in (7 * lanes, 8 * lanes - 2, 8 * lanes):
        m, k = 1000 + 13, 48
        A = rng.standard_normal((m, k)).astype(dtype)
        B = rng.standard_normal((k, n)).astype(dtype)
        path = _run_checked(A, B, dtype, threads)
        if kernel_smm_max_n(dtype) and n <= kernel_smm_max_n(dtype):
            assert path == "smm", (n, path)
