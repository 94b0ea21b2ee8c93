"""The loop-nest engine's small-edge kernel (a short loop held in registers
around the vectorised row): every path of ep_nest_short_template.h under
every ISA this CPU runs, every dtype, through NestCall descriptors, and the
planner's choice of it for thin GEMMs (recorded in the NestStep, printed by
explain, results equal to numpy's for strided, negative and broadcast
layouts)."""
import math
import re

import numpy as np
import pytest

import einplan
from einplan import _native, nest, planner
from einplan.plan import GemmStep, NestStep

from _gemm_util import assert_sum_close, estrides, rand

K = _native._kernels
pytestmark = pytest.mark.skipif(K is None, reason="compiled kernels not built")
DTYPES = ["float32", "float64", "complex64", "complex128"]


def _close(got, want, dtype, k):
    assert_sum_close(got, want, dtype, k, ulps=32)


_st = estrides


def _run(dtype, loops, ins, out, isa, short=True, split=-1, threads=1):
    call = _native.prepare_nest(dtype, len(ins), loops, split=split, threads=threads,
                                short=short)
    call(tuple(ins), out, isa=isa)
    return out


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("S", [1, 2, 3, 5, 8])
@pytest.mark.parametrize("n", [1, 3, 4, 9, 17, 40, 67])
def test_sum_over_short_loop(isa, dtype, S, n, one_thread):
    """'ij,kj->ik' as i > j (short, summed) > k (row): each output row written
    once.  The row's input unit-stride, strided and constant along i (copied
    once per call), strided and moving along i (copied per row), negative;
    the output unit-stride or strided."""
    rng = np.random.default_rng(S * 100 + n)
    m = 6
    A = rand((m, S), dtype, rng=rng)                       # the per-(i, j) factors
    Bc = rand((S, n), dtype, rng=rng)                      # [j][k], unit along k
    Bt = np.ascontiguousarray(rand((n, S), dtype, rng=rng)).T    # [j][k], stride S along k
    C3 = rand((m, S, 2 * n), dtype, rng=rng)[:, :, ::-2]  # moves along i, stride -2 along k
    want_c, want_t = A @ Bc, A @ Bt
    want_3 = np.einsum("ij,ijk->ik", A, C3)
    sa = _st(A)
    for out_stride in (1, 3):
        big = np.full((m, out_stride * n), np.nan, dtype)
        o = big[:, ::out_stride]
        so = _st(o)
        for B, want in ((Bc, want_c), (Bt, want_t)):
            sb = _st(B)
            o[...] = np.nan
            _run(dtype, [(m, sa[0], 0, so[0]), (S, sa[1], sb[0], 0), (n, 0, sb[1], so[1])],
                 (A, B), o, isa)
            _close(o, want, dtype, S)
        o[...] = np.nan
        s3 = _st(C3)
        _run(dtype, [(m, sa[0], s3[0], so[0]), (S, sa[1], s3[1], 0), (n, 0, s3[2], so[1])],
             (A, C3), o, isa)
        _close(o, want_3, dtype, S)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_thin_gemms_with_rows_shorter_than_a_vector_take_the_packed_engine(
        dtype, one_thread):
    """A complex thin GEMM whose nest would run the small-edge kernel on
    rows shorter than a vector goes to the packed 1m engine, which runs it
    1.4-2.5x faster ('ij,jk->ik' (1.97M,8) x (8,3) c64: 52 ms in the nest,
    21 packed, numpy 39), the reason on its step; rows of a vector or more
    stay in the nest."""
    rng = np.random.default_rng(91)
    lanes = {"avx512": 64, "avx2": 32}.get(_native.isa(), 16) // (np.dtype(dtype).itemsize // 2)
    a = rand((100000, 4), dtype, rng=rng)
    for n in (2, 3):
        b = rand((4, n), dtype, rng=rng)
        (step,) = _steps("ij,jk->ik", a, b)
        # no small-edge step with such rows is left (other kernel sets may
        # take the register-tile kernel instead); AVX-512 takes the engine
        assert not planner._short_complex_rows(step, np.dtype(dtype)), step
        if _native.isa() == "avx512" and isinstance(step, GemmStep):
            assert step.why.startswith(("gemm: the nest's complex rows would be shorter",
                                        "gemm by predicted cost")), step
        elif _native.isa() == "avx512":
            # a CPU of two full-width FMA units may price the register tiles
            # below the small-edge kernel: they are priced against the engine
            assert step.ctile and "by predicted cost" in step.why, step
        _close(einplan.einsum("ij,jk->ik", a, b), a @ b, dtype, 4)
    b = rand((2, lanes // 2), dtype, rng=rng)
    (step,) = _steps("ij,jk->ik", a[:, :2], b)
    assert isinstance(step, NestStep), step
    _close(einplan.einsum("ij,jk->ik", a[:, :2], b), a[:, :2] @ b, dtype, 2)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_axpy_rows_along_a_long_output_row_are_priced_against_1m(dtype, one_thread):
    """A complex thin GEMM whose nest runs contiguous rows of many vectors
    (the output's unit stride along the long operand's) is priced against
    the packed 1m engine as a real one is, and takes the nest, which reads
    the long operand in place ('ij,jk->ki' (7516,9):F x (9,5) c64: 170 us
    packed, 36 in the nest); rows of a few vectors are not priced so and
    stay packed."""
    rng = np.random.default_rng(93)
    a = np.asfortranarray(rand((7516, 9), dtype, rng=rng))
    b = rand((9, 5), dtype, rng=rng)
    (step,) = _steps("ij,jk->ki", a, b)
    if _native.isa() == "avx512":
        assert planner._complex_vector_rows(step, np.dtype(dtype)), step
        assert isinstance(step, NestStep) and step.row == "prod/contig", step
        assert step.why.startswith("nest by predicted compute"), step
    else:
        # narrower kernel sets take the register-tile kernel there (priced
        # against 1m by ctile_by_cost): a nest either way
        assert isinstance(step, NestStep), step
    _close(einplan.einsum("ij,jk->ki", a, b), (a @ b).T, dtype, 9)
    x, y = rand((11, 24, 5), dtype, rng=rng), rand((11, 5, 15), dtype, rng=rng)[::-1]
    einplan.set_num_threads(2)    # where the nest's price would win
    planner.clear_cache()
    (step,) = _steps("bij,bjk->bik", x, y)
    # not a nest of those rows: packed (AVX-512) or the register-tile kernel
    assert isinstance(step, GemmStep) or step.ctile, step
    _close(einplan.einsum("bij,bjk->bik", x, y), x @ y, dtype, 5)


def test_a_summed_loop_outside_a_long_row_is_held_in_registers():
    """The plain nest of 'bij,bjk->bik' (65,14,4) F x (65,4,80) runs the
    summed j outermost, re-reading and re-writing the whole output for each
    j; the small-edge kernel holds j in registers around the rows of k
    (contiguous, 80 long: neither short nor strided) and writes each output
    row once."""
    rng = np.random.default_rng(71)
    a = np.asfortranarray(rng.standard_normal((65, 14, 4)))
    b = rng.standard_normal((65, 4, 80))
    (step,) = einplan.explain("bij,bjk->bik", a, b).plan.steps
    assert isinstance(step, NestStep) and step.short == 4, step
    assert [lp.labels for lp in step.loops][-2:] == ["j", "k"], step.loops
    _close(einplan.einsum("bij,bjk->bik", a, b), a @ b, "float64", 4)


def test_dots_of_a_short_loop_share_the_loads_of_the_input_constant_along_it():
    """'bij,bkj->bki' (154,6,120) x (154,4,120):T f32: the plain nest runs
    each of the 24 dots a batch on its own; the small-edge kernel runs the
    6 (or 4) dots of a row of 120 at once, each vector of the input
    constant along them loaded once (Zen 3, 2 threads: 77 us plain, 47 so,
    numpy 191).  Rows shorter than SHARE_ROW_VECTORS vectors stay plain."""
    rng = np.random.default_rng(72)
    a = rng.standard_normal((154, 6, 120)).astype(np.float32)
    b = rng.standard_normal((4, 154, 120)).astype(np.float32).transpose(1, 0, 2)
    (step,) = einplan.explain("bij,bkj->bki", a, b).plan.steps
    assert isinstance(step, NestStep) and step.short in (4, 6), step
    assert step.loops[-1].labels == "j", step.loops
    _close(einplan.einsum("bij,bkj->bki", a, b), np.einsum("bij,bkj->bki", a, b), "float32", 120)
    n = nest.SHARE_ROW_VECTORS * nest.vector_lanes(4) - 2
    if n > nest.SHORT_ROW:  # shorter rows take the kernel anyway (16-byte vectors)
        short = rng.standard_normal((500, 8, n)).astype(np.float32)
        (step,) = einplan.explain("bij,bkj->bki", short, short[:, :3]).plan.steps
        assert isinstance(step, NestStep) and step.short == 0, step


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("S", [1, 2, 3, 4, 5, 8])
def test_complex_rows_up_to_eight_vectors_run_as_real(isa, dtype, S, one_thread):
    """'ij,jk->ik' complex with k up to eight vectors (of its reals, 8 *
    lanes complex elements: NS_CREAL_VECTORS), B shared by
    every row: the real kernel's sum over 2 S on B expanded to [[br, bi],
    [-bi, br]] blocks (S in chunks of EP_NEST_SHORT / 2, the later ones
    adding); longer rows take the complex kernel.  Rows end to end (the real
    kernel runs short ones across) and apart in a NaN-filled output whose
    gaps must stay NaN; enough rows for whole periods and a few; an outer
    summed loop whose second visit adds; the factors side by side along j
    (the real kernel's case) and strided."""
    rng = np.random.default_rng(300 + S)
    lanes = (64 if isa == "avx512" else 32 if isa == "avx2" else 16) // np.dtype(dtype).itemsize
    longer = {2 * lanes + 1, 3 * lanes, 4 * lanes - 1, 6 * lanes + 1, 8 * lanes, 8 * lanes + 1}
    for n in sorted(set(range(1, 2 * lanes + 1)) | longer):
        for R, fs in ((2, 1), (7, 1), (61, 1), (7, 2), (61, 2)):
            # factors (t, i, j): side by side (the real kernel's) or apart
            A = rand((2, R, fs * S), dtype, rng=rng)[:, :, ::fs]
            B = rand((2, S, n), dtype, rng=rng)                     # shared rows (t, j, k)
            sa, sb = _st(A), _st(B)
            for gap in (0, 2):
                big = np.full((R, n + gap), np.nan, dtype)
                o = big[:, :n]
                so = _st(o)
                _run(dtype, [(R, sa[1], 0, so[0]), (S, sa[2], sb[1], 0), (n, 0, sb[2], so[1])],
                     (A[0], B[0]), o, isa)
                _close(o, A[0] @ B[0], dtype, S)
                if gap:
                    assert np.isnan(big[:, n:]).all()
                o[...] = np.nan
                _run(dtype, [(2, sa[0], sb[0], 0), (R, sa[1], 0, so[0]), (S, sa[2], sb[1], 0),
                             (n, 0, sb[2], so[1])], (A, B), o, isa)
                _close(o, np.einsum("tij,tjk->ik", A, B), dtype, 2 * S)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("S", [1, 2, 3, 4, 5, 8])
@pytest.mark.parametrize("n", [1, 2, 5, 8, 16, 33, 100])
def test_short_dots(isa, dtype, S, n, one_thread):
    """'ij,jk->ik' as i > k (short, kept) > j (row, summed): S dots at once.
    B unit-stride along j, strided (copied once), and an input moving along
    both i and k ('ij,ikj->ik', copied per row when strided); a factor
    constant along the row ('ij,jk,ik->ik' folded: 'ikj,ik->ik')."""
    rng = np.random.default_rng(S * 1000 + n)
    m = 7
    A = rand((m, n), dtype, rng=rng)
    Bf = np.asfortranarray(rand((n, S), dtype, rng=rng))     # unit along j
    Bc = rand((n, S), dtype, rng=rng)                        # stride S along j
    o = np.full((m, S), np.nan, dtype)
    sa, so = _st(A), _st(o)
    for B in (Bf, Bc):
        sb = _st(B)
        o[...] = np.nan
        _run(dtype, [(m, sa[0], 0, so[0]), (S, 0, sb[1], so[1]), (n, sa[1], sb[0], 0)],
             (A, B), o, isa)
        _close(o, A @ B, dtype, n)
    for D in (rand((m, S, n), dtype, rng=rng), rand((m, S, 3 * n), dtype, rng=rng)[:, :, ::3]):
        sd = _st(D)
        o[...] = np.nan
        _run(dtype, [(m, sa[0], sd[0], so[0]), (S, 0, sd[1], so[1]), (n, sa[1], sd[2], 0)],
             (A, D), o, isa)
        _close(o, np.einsum("ij,ikj->ik", A, D), dtype, n)
    # one input constant along the row: a factor per (i, k)
    F = rand((m, S), dtype, rng=rng)
    D = rand((m, S, n), dtype, rng=rng)
    sd, sf = _st(D), _st(F)
    o[...] = np.nan
    _run(dtype, [(m, sd[0], sf[0], so[0]), (S, sd[1], sf[1], so[1]), (n, sd[2], 0, 0)],
         (D, F), o, isa)
    _close(o, D.sum(2) * F, dtype, n)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("S", [1, 3, 8])
def test_short_dots_against_shared_vectors_a_block_of_rows_at_a_time(isa, dtype, S, one_thread):
    """'ij,kj->ik' with k short and the rows of A unit-stride: each of B's S
    vectors against a block of rows, a vector of rows at a time, the rows
    past whole vectors one by one.  Row counts below, at and past a vector
    and past a block; rows of 2 up to five vectors and one more (the other
    path); the output (i, k) C order, or strided inside a NaN-filled array
    whose untouched elements must stay NaN; a second visit adding."""
    rng = np.random.default_rng(41 + S)
    lanes = (64 if isa == "avx512" else 32 if isa == "avx2" else 16) // np.dtype(dtype).itemsize
    for n in sorted({2, 3, 7, 15, 16, 33, 5 * lanes, 5 * lanes + 1}):
        for m in (3, lanes, 37, 300):
            A = rand((m, n + 2), dtype, rng=rng)[:, 1:n + 1]
            B = rand((S, n), dtype, rng=rng)
            want = A @ B.T
            sa, sb = _st(A), _st(B)
            for step in (1, 3):
                big = np.full((m + 1, step * S + 1), np.nan, dtype)
                o = big[:m, :step * S:step]
                so = _st(o)
                loops = [(m, sa[0], 0, so[0]), (S, 0, sb[0], so[1]), (n, sa[1], sb[1], 0)]
                _run(dtype, loops, (A, B), o, isa)
                _close(o, want, dtype, n)
                rest = np.ones(big.shape, bool)
                rest[:m, :step * S:step] = False
                assert np.isnan(big[rest]).all()
                _run(dtype, [(2, 0, 0, 0)] + loops, (A, B), o, isa)
                _close(o, 2 * want, dtype, 2 * n)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("S", [1, 2, 3, 4, 5, 6, 7, 8])
def test_short_dots_of_a_block_of_rows_have_the_bits_of_one_row(isa, dtype, S, one_thread):
    """'ij,jk->ik' with k short, B copied once: rows two to four at a time,
    each vector of the copy loaded once for the block.  Each row's dots
    have the bits of the same row run alone, whatever its place in a block
    or past the last whole one; rows longer than the ones a vector of rows
    at a time takes (NS_DOTV_VECTORS), ending mid-vector, not aligned to a
    vector, past one L1 chunk of the copy; the output strided inside a
    NaN-filled array whose other elements stay NaN."""
    rng = np.random.default_rng(70 + S)
    lanes = (64 if isa == "avx512" else 32 if isa == "avx2" else 16) // np.dtype(dtype).itemsize
    for n in (5 * lanes + 1, 6 * lanes + lanes // 2 + 1, 1000):
        for m in (2, 3, 4, 5, 7, 9):
            A = rand((m, n + 3), dtype, rng=rng)[:, 1:n + 1]
            B = rand((n, S), dtype, rng=rng)            # stride S along j: copied
            sa, sb = _st(A), _st(B)
            alone = np.full((m, S), np.nan, dtype)
            for r in range(m):
                sr = _st(alone[r:r + 1])
                _run(dtype, [(1, sa[0], 0, sr[0]), (S, 0, sb[1], sr[1]), (n, sa[1], sb[0], 0)],
                     (A[r:r + 1], B), alone[r:r + 1], isa)
            big = np.full((m + 1, 2 * S + 1), np.nan, dtype)
            o = big[:m, :2 * S:2]
            so = _st(o)
            _run(dtype, [(m, sa[0], 0, so[0]), (S, 0, sb[1], so[1]), (n, sa[1], sb[0], 0)],
                 (A, B), o, isa)
            assert o.tobytes() == alone.tobytes(), (n, m)
            _close(o, A @ B, dtype, n)
            rest = np.ones(big.shape, bool)
            rest[:m, :2 * S:2] = False
            assert np.isnan(big[rest]).all()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [5, 7, 9, 12, 15, 16, 17, 24, 31, 32, 33])
def test_rows_of_one_to_two_vectors_against_a_shared_operand(isa, dtype, n, one_thread):
    """'ij,jk->ik' with k the row and B the same for every row (a GEMM's
    small operand): rows of one to two vectors, the last vector overlapping
    the one before it.  Each row written fresh, all rows summed into one
    output row (later rows add to the overlap, which must not count twice),
    B strided (copied once), and no factor at all (one input)."""
    rng = np.random.default_rng(n)
    m, S = 11, 3
    A = rand((m, S), dtype, rng=rng)
    for B in (rand((S, n), dtype, rng=rng), np.asfortranarray(rand((S, n), dtype, rng=rng))):
        sa, sb = _st(A), _st(B)
        o = np.full((m, n), np.nan, dtype)
        so = _st(o)
        _run(dtype, [(m, sa[0], 0, so[0]), (S, sa[1], sb[0], 0), (n, 0, sb[1], so[1])],
             (A, B), o, isa)
        _close(o, A @ B, dtype, S)
        row = np.full(n, np.nan, dtype)
        _run(dtype, [(m, sa[0], 0, 0), (S, sa[1], sb[0], 0), (n, 0, sb[1], 1)],
             (A, B), row, isa)
        _close(row, (A @ B).sum(0), dtype, m * S)
        o[...] = np.nan
        _run(dtype, [(m, 0, so[0]), (S, sb[0], 0), (n, sb[1], so[1])], (B,), o, isa)
        _close(o, np.broadcast_to(B.sum(0), (m, n)), dtype, S)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("S", [2, 3, 5, 8])
@pytest.mark.parametrize("n", [2, 3, 4, 5, 6, 7, 8, 12, 15, 16])
def test_rows_shorter_than_a_vector_run_across(isa, dtype, S, n, one_thread):
    """'ij,jk->ik' with k the row, rows of at most a vector back to back in
    the output (a point set times a small matrix): the kernel runs the
    output in whole vectors across rows, the rows short of a whole period
    after them.  A in C order, F order and with a gap between rows; the
    rows summed over an outer loop (later passes add); two threads over the
    rows.  Each A ends at its last element (a read past a row's end shows
    under the sanitizer)."""
    rng = np.random.default_rng(S * 100 + n)
    B = rand((S, n), dtype, rng=rng)
    sb = _st(B)
    for m in (16, 37, 203):
        for A in (rand((m, S), dtype, rng=rng), np.asfortranarray(rand((m, S), dtype, rng=rng)),
                  rand((m, 2 * S), dtype, rng=rng)[:, :S]):
            sa = _st(A)
            for threads in (1, 2):
                o = np.full((m, n), np.nan, dtype)
                _run(dtype, [(m, sa[0], 0, n), (S, sa[1], sb[0], 0), (n, 0, sb[1], 1)],
                     (A, B), o, isa, split=0, threads=threads)
                _close(o, A @ B, dtype, S)
        A3 = rand((3, m, S), dtype, rng=rng)
        s3 = _st(A3)
        o = np.full((m, n), np.nan, dtype)
        _run(dtype, [(3, s3[0], 0, 0), (m, s3[1], 0, n), (S, s3[2], sb[0], 0),
                     (n, 0, sb[1], 1)], (A3, B), o, isa)
        _close(o, np.einsum("bij,jk->ik", A3, B), dtype, 3 * S)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("S", [1, 2, 3, 8])
@pytest.mark.parametrize("n", [2, 4, 8])
def test_rows_of_a_power_of_two_interleave_in_registers(isa, dtype, S, n, one_thread):
    """Rows of 2, 4 or 8 (fewer than a vector) back to back in the output
    against factors unit-stride along the rows ('ij...,jk...->ik...' with a
    broadcast row: A in F order): a vector of rows at a time, each column a
    vector, interleaved in registers; row counts around whole vectors (the
    rest after them), a later pass adding to the output: numpy's results."""
    lanes = nest.vector_lanes(np.dtype(dtype).itemsize)
    rng = np.random.default_rng(S * 10 + n)
    B = rand((S, n), dtype, rng=rng)
    sb = _st(B)
    for m in (lanes - 1, lanes, 3 * lanes + 5):
        A = np.asfortranarray(rand((m, S), dtype, rng=rng))
        sa = _st(A)
        o = _run(dtype, [(m, sa[0], 0, n), (S, sa[1], sb[0], 0), (n, 0, sb[1], 1)], (A, B),
                 np.full((m, n), np.nan, dtype), isa)
        _close(o, A @ B, dtype, S)
        A2 = np.asfortranarray(rand((m, S, 2), dtype, rng=rng)).transpose(2, 0, 1)
        s2 = _st(A2)
        o2 = _run(dtype, [(2, s2[0], 0, 0), (m, s2[1], 0, n), (S, s2[2], sb[0], 0),
                          (n, 0, sb[1], 1)], (A2, B), np.full((m, n), np.nan, dtype), isa)
        _close(o2, np.einsum("bij,jk->ik", A2, B), dtype, 2 * S)


def test_point_sets_times_a_small_matrix_take_the_rows_across():
    """The planner prices the rows run across (nest.runs_across) and takes
    them for a point set times a 3 x 3 or 4 x 4 matrix: the small-edge
    kernel with the short matrix's rows as the kernel's rows."""
    lanes = nest.VECTOR_BITS.get(_native.isa(), 128) // 8 // 4
    rng = np.random.default_rng(7)
    for n in (3, 4):
        if n > lanes:
            continue
        a = rng.standard_normal((20000, n)).astype(np.float32)
        b = rng.standard_normal((n, n)).astype(np.float32)
        (step,) = _nest_steps("ij,jk->ik", a, b)
        assert step.short == n and step.row.startswith("short-sum")
        outer, row = step.loops[-3], step.loops[-1]
        assert nest.runs_across(outer, row, 1, lanes)
        np.testing.assert_allclose(einplan.einsum("ij,jk->ik", a, b), a @ b, rtol=1e-5,
                                   atol=1e-5)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [1025, 2048, 3001])
def test_long_rows_copied_in_chunks(isa, dtype, n, one_thread):
    """Rows longer than the kernel's copy chunk (1024): a strided input
    copied once per chunk, one copied per row and chunk, rows summed into
    one output row, and (real dtypes) S dots whose chunks add up."""
    rng = np.random.default_rng(n)
    m, S = 3, 5
    A = rand((m, S), dtype, rng=rng)
    Bt = np.ascontiguousarray(rand((n, S), dtype, rng=rng)).T      # stride S along the row
    C3 = rand((m, S, 2 * n), dtype, rng=rng)[:, :, ::2]             # moves along i, stride 2
    sa, sb, s3 = _st(A), _st(Bt), _st(C3)
    o = np.full((m, n), np.nan, dtype)
    so = _st(o)
    _run(dtype, [(m, sa[0], 0, so[0]), (S, sa[1], sb[0], 0), (n, 0, sb[1], so[1])],
         (A, Bt), o, isa)
    _close(o, A @ Bt, dtype, S)
    o[...] = np.nan
    _run(dtype, [(m, sa[0], s3[0], so[0]), (S, sa[1], s3[1], 0), (n, 0, s3[2], so[1])],
         (A, C3), o, isa)
    _close(o, np.einsum("ij,ijk->ik", A, C3), dtype, S)
    row = np.full(n, np.nan, dtype)
    _run(dtype, [(m, sa[0], 0, 0), (S, sa[1], sb[0], 0), (n, 0, sb[1], 1)], (A, Bt), row, isa)
    _close(row, (A @ Bt).sum(0), dtype, m * S)
    if dtype.startswith("float"):
        X = rand((m, n), dtype, rng=rng)
        d = np.full((m, S), np.nan, dtype)
        sx, sd = _st(X), _st(d)
        _run(dtype, [(m, sx[0], 0, sd[0]), (S, 0, sb[0], sd[1]), (n, sx[1], sb[1], 0)],
             (X, Bt), d, isa)
        _close(d, X @ Bt.T, dtype, n)


@pytest.mark.parametrize("dtype", DTYPES)
def test_short_rows_accumulate_and_split(isa, dtype):
    """Rows summed into one output (the loop around the kernel is summed:
    first visit stores, later ones add), no loop around the kernel at all
    (one row), two threads over the rows, and a descriptor that does not
    fit the kernel (the output moving along both loops) running the plain
    nest instead."""
    rng = np.random.default_rng(3)
    m, S, n = 9, 3, 21
    A, B = rand((m, S), dtype, rng=rng), rand((m, S, n), dtype, rng=rng)
    o = np.full(n, np.nan, dtype)
    _run(dtype, [(m, S, S * n, 0), (S, 1, n, 0), (n, 0, 1, 1)], (A, B), o, isa)
    _close(o, np.einsum("ij,ijk->k", A, B), dtype, m * S)
    o = np.full(n, np.nan, dtype)
    _run(dtype, [(S, 1, n, 0), (n, 0, 1, 1)], (A, B), o, isa)
    _close(o, A[0] @ B[0], dtype, S)
    for threads in (1, 2):
        o = np.full((m, n), np.nan, dtype)
        _run(dtype, [(m, S, S * n, n), (S, 1, n, 0), (n, 0, 1, 1)], (A, B), o, isa,
             split=0, threads=threads)
        _close(o, np.einsum("ij,ijk->ik", A, B), dtype, S)
    o = np.full((m, S, n), np.nan, dtype)
    _run(dtype, [(m, S, S * n, S * n), (S, 1, n, n), (n, 0, 1, 1)], (A, B), o, isa)
    _close(o, A[:, :, None] * B, dtype, 1)


def _nest_steps(subscripts, *ops):
    from einplan.operands import describe_operands
    from einplan.planner import make_plan
    from einplan.spec import parse_spec
    spec, arrays = parse_spec((subscripts,) + ops)
    return [s for s in make_plan(spec, describe_operands(arrays)).steps
            if isinstance(s, NestStep)]


THIN = [
    ("ij,jk->ik", (200, 40), (40, 3)),        # short n: dots along k
    ("ij,kj->ik", (300, 3), (53, 3)),         # short k: the sum over it in registers
    ("ij,jk->ik", (301, 3), (3, 4)),          # short k and n
    ("bij,bkj->bki", (9, 61, 3), (9, 5, 3)),  # batched
    ("ij,jk->ki", (200, 5), (5, 2)),
]


def _layouts(shape, dtype, rng):
    a = rand(shape, dtype, rng=rng)
    yield a
    yield np.asfortranarray(a)
    yield rand(shape[:-1] + (2 * shape[-1],), dtype, rng=rng)[..., ::2]
    yield a[::-1]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("subs,sa,sb", THIN)
def test_thin_gemms_match_numpy(isa, dtype, subs, sa, sb):
    """Thin GEMMs through einsum under every ISA: the same results as numpy
    for C, Fortran, strided and negative-stride operands, and broadcast."""
    rng = np.random.default_rng(len(subs) + sa[0])
    for a in _layouts(sa, dtype, rng):
        for b in _layouts(sb, dtype, rng):
            got = einplan.einsum(subs, a, b)
            want = np.einsum(subs, a, b)
            _close(got, want, dtype, max(sa + sb))
    b = rand(sb[-2:], dtype, rng=rng)
    a = rand((4,) + sa[-2:], dtype, rng=rng)
    terms = subs.split("->")[0].split(",")
    if len(terms[0]) == 2 and len(terms[1]) == 2:
        bsubs = f"...{terms[0]},{terms[1]}->...{subs.split('->')[1]}"
        _close(einplan.einsum(bsubs, a, b), np.einsum(bsubs, a, b), dtype, max(sa + sb))


@pytest.mark.parametrize("subs,sa,sb", THIN)
def test_thin_gemms_choose_the_small_edge_kernel(subs, sa, sb):
    """The plan records the small-edge kernel (NestStep.short, its row
    name) and explain prints it; a GEMM with no short edge does not take it."""
    a, b = np.ones(sa), np.ones(sb)
    text = str(einplan.explain(subs, a, b))
    steps = _nest_steps(subs, a, b)
    assert len(steps) == 1 and steps[0].short >= 2, steps
    assert steps[0].row.startswith("short-"), steps[0].row
    assert "small-edge kernel" in text, text
    steps = _nest_steps("ij,jk->ik", np.ones((64, 64)), np.ones((64, 64)))
    assert all(s.short == 0 for s in steps)


def test_dots_of_rows_interleaved_from_beyond_l2_run_one_row_at_a_time():
    """Long contiguous dot rows already right around their short loop take
    the small-edge kernel's S dots at once only when the S rows it
    interleaves stay in L2: 'abc,ac->b' (6675, 3, 423) f32 would interleave
    3 streams of a 34 MB operand and runs the plain rows instead (3.2 ms as
    3 dots at once, 1.8 ms a row at a time)."""
    A, C = np.empty((6675, 3, 423), np.float32), np.empty((6675, 423), np.float32)
    (st,) = _nest_steps("abc,ac->b", A, C)
    assert st.short == 0 and st.row == "sum/contig", st
    rng = np.random.default_rng(12)
    A, C = rng.standard_normal((300, 3, 423)), rng.standard_normal((300, 423))
    _close(einplan.einsum("abc,ac->b", A, C), np.einsum("abc,ac->b", A, C), "float64", 300 * 423)



def test_sums_of_rows_interleaved_from_beyond_l2_run_one_row_at_a_time():
    """The sum form likewise: 'abc,ab->c' (7092, 4, 518) x (7092, 4):F f32
    (a and b do not merge) would hold b and interleave 4 rows of a 59 MB
    operand per step of a (13 GB/s on a Zen 4) and runs the plain rows into
    one output row instead (rows_into_one, one call per a).  The same rows
    in L2, or re-read from L1 by the loop around b ('abcd,dbef->aecf' with
    c and a between d and b, both constant in B), keep the kernel."""
    B = np.asfortranarray(np.ones((7092, 4), np.float32))
    (st,) = _nest_steps("abc,ab->c", np.empty((7092, 4, 518), np.float32), B)
    assert st.short == 0 and st.row == "prod/contig", st
    (st,) = _nest_steps("abc,ab->c", np.empty((60, 4, 518), np.float32),
                        np.asfortranarray(np.ones((60, 4), np.float32)))
    assert st.short == 4, st
    A = np.asfortranarray(np.empty((2, 5, 2, 6176), np.float32))
    B = np.empty((6176, 5, 365, 1), np.float32)[::-1, :, :, ::-1]
    (st,) = _nest_steps("abcd,dbef->aecf", A, B)
    assert st.short == 5 and st.row.startswith("short-sum"), st
    rng = np.random.default_rng(13)
    A = rng.standard_normal((700, 4, 518)).astype(np.float32)
    B = np.asfortranarray(rng.standard_normal((700, 4)).astype(np.float32))
    _close(einplan.einsum("abc,ab->c", A, B), np.einsum("abc,ab->c", A, B), "float32", 2800)

def _steps(subscripts, *ops):
    from einplan.operands import describe_operands
    from einplan.planner import make_plan
    from einplan.spec import parse_spec
    spec, arrays = parse_spec((subscripts,) + ops)
    return make_plan(spec, describe_operands(arrays)).steps


def _ctile_prices(why):
    """(register-tile kcycles, its threads, packed kcycles, its threads)
    from a step's reason (the prices end it, or a note on the output's
    layout follows them after a semicolon)."""
    m = re.search(r"register-tile kernel ([\d.]+) kcycles on (\d+) thread\(s\), "
                  r"packed GEMM engine \(1m\) ([\d.]+) kcycles on (\d+)(;|$)", why)
    assert m, why
    return float(m[1]), int(m[2]), float(m[3]), int(m[4])


def test_engines_priced_at_the_threads_they_run_with(restore_threads):
    """'ij,kj->ik', both F order, complex64: the register-tile kernel runs
    its three loops innermost (W = k, K = j, V = i), so a second thread
    shares W out when it spans two strips or more ((500, 12) x (500, 12))
    and none is used when W is one strip and V short ((1000, 64) x (6,
    64)), while the packed engine shares the GEMM out.  Each engine's
    cycles are shared by the threads it runs with, and the engine that runs
    is the one the prices pick (nest.ctile_gemm_margin())."""
    from einplan.plan import GemmStep
    rng = np.random.default_rng(12)
    for i, j, k, kernel_threads in ((500, 12, 500, 2), (1000, 64, 6, 1)):
        a = np.asfortranarray(rand((i, j), "complex64", rng=rng))
        b = np.asfortranarray(rand((k, j), "complex64", rng=rng))
        prices = {}
        for threads in (1, 2):
            einplan.set_num_threads(threads)
            (step,) = _steps("ij,kj->ik", a, b)
            cn, tn, cg, tg = prices[threads] = _ctile_prices(step.why)
            assert (tn, tg) == (min(threads, kernel_threads), threads), step.why
            want = GemmStep if cg < nest.ctile_gemm_margin() * cn else NestStep
            assert isinstance(step, want) and step.why.startswith(f"{step.engine} by"), step
            assert getattr(step, "ctile", True), step
        assert prices[2][0] == pytest.approx(prices[1][0] / kernel_threads, rel=0.05)
        assert prices[2][2] == pytest.approx(prices[1][2] / 2, rel=0.05)
        _close(einplan.einsum("ij,kj->ik", a[:300], b), a[:300] @ b.T, "complex64", 12)


def test_avx512_short_k_complex_gemm_takes_the_cheaper_engine(use_isa, one_thread):
    """With the AVX-512 kernel set the packed 1m engine runs within 20% of
    its price and the register-tile kernel over it, so the cheaper by price
    runs: 'ij,kj->ik' (500, 8) x (500, 8) F order c64, priced at about half
    the kernel's, takes the packed engine (0.77x -> 1.9x numpy); the AVX2
    kernel set keeps its margin."""
    from einplan.plan import GemmStep
    if "avx512" not in _native.available_isas():
        pytest.skip(reason="the AVX-512 kernel set needs an AVX-512 CPU")
    use_isa("avx512")
    rng = np.random.default_rng(13)
    a = np.asfortranarray(rand((500, 8), "complex64", rng=rng))
    b = np.asfortranarray(rand((500, 8), "complex64", rng=rng))
    (step,) = _steps("ij,kj->ik", a, b)
    cn, _, cg, _ = _ctile_prices(step.why)
    assert 0.5 * cn < cg < cn, step.why
    assert isinstance(step, GemmStep), step
    _close(einplan.einsum("ij,kj->ik", a, b), a @ b.T, "complex64", 8)


def test_short_dots_are_priced_per_dot_and_per_call(one_thread):
    """The small-edge kernel's dots cost a share of a horizontal sum and a
    store each, whatever their length, and each call of the kernel its
    set-up: 'ij,kj->ik' (40000, 15) x (8, 15) f64 (650 us as 8 dots a row,
    234 packed) and 'bij,bkj->bki' (3, 38664, 15) with A's b innermost x
    (3, 3, 15) f64 (a call per i, A transposed into a copy each: 4.1 ms,
    1.9 packed) take the packed engine; with three dots a row
    ('ij,kj->ik' (40000, 15) x (3, 15) f64: 263 us, 305 numpy) the
    small-edge kernel stays on AVX-512; on AVX2, whose dots run a row at a
    time, the smm path takes them (240 us, the dots 457)."""
    from einplan.plan import GemmStep
    rng = np.random.default_rng(43)
    a = rand((40000, 15), "float64", rng=rng)
    three = NestStep if _native.isa() == "avx512" else GemmStep if _native.isa() == "avx2" \
        else (NestStep, GemmStep)
    for S, engine in [(8, GemmStep), (3, three)]:
        w = rand((S, 15), "float64", rng=rng)
        (step,) = _steps("ij,kj->ik", a, w)
        assert isinstance(step, engine), (S, step)
        _close(einplan.einsum("ij,kj->ik", a, w), a @ w.T, "float64", 15)
    A = np.ascontiguousarray(rand((38664, 15, 3), "float64", rng=rng)).transpose(2, 0, 1)
    W = rand((3, 3, 15), "float64", rng=rng)
    (step,) = _steps("bij,bkj->bki", A, W)
    assert isinstance(step, GemmStep), step
    _close(einplan.einsum("bij,bkj->bki", A, W), np.einsum("bij,bkj->bki", A, W), "float64", 15)


def test_a_copy_of_rows_pages_apart_is_priced_per_element(one_thread):
    """The small-edge kernel copies an input strided along its row before
    the dots; elements a page or more apart cost a TLB walk and a line
    each, not a cycle: 'bij,bjk->bik' (4,2,448) x (4,448,9368)[..., ::2]
    f32 (B's rows 37 KB apart along j) took 42 ms in the nest, 12 ms on
    the packed engine (numpy 18), which it now takes; B's rows near each
    other keep the kernel's copy cheap."""
    from einplan import nest
    from einplan.plan import GemmStep
    rng = np.random.default_rng(44)
    a = rand((4, 2, 448), "float32", rng=rng)
    b = rand((4, 448, 9368), "float32", rng=rng)[..., ::2]
    (step,) = _steps("bij,bjk->bik", a, b)
    assert isinstance(step, GemmStep), step
    _close(einplan.einsum("bij,bjk->bik", a, b), np.einsum("bij,bjk->bik", a, b), "float32", 448)
    assert nest._copy_cycles(9368, 4) == nest.FAR_COPY > 4 * nest._copy_cycles(3, 4)


def test_dots_of_a_narrow_gemm_priced_against_the_smm_path(one_thread):
    """'ij,jk->ik' with n of one vector and long rows of A: the smm path
    broadcasts an element of A per row and k (a cycle each, 74 us for
    (200,1000) x (1000,n) whatever n), the small-edge kernel's dots run
    four rows at a time against B's copy: f32 n = 5, 23 us (numpy 24) on
    avx512.  Both are priced (the nest's dots by the rows a block runs,
    nest.short_dot_block_rows); f64 with n = 8, two rows at a time, stays
    on the smm path (73 us; the dots 121), as do a few rows, whose dots
    wait on B's copy.  Against the packed engine the dots are priced only
    up to planner.SHORT_DOTS_PACKED a row: 'ijk,jkl->il' (578,33,35) x
    (33,35,7):T f64, k of two axes, stays packed (487 us; the dots 690,
    priced below it)."""
    rng = np.random.default_rng(44)
    a32 = rand((200, 1000), "float32", rng=rng)
    b32 = rand((1000, 5), "float32", rng=rng)
    (step,) = _steps("ij,jk->ik", a32, b32)
    if _native.isa() == "avx512":
        assert step.why.startswith(f"{step.engine} by predicted compute"), step
        assert isinstance(step, NestStep) and step.row.startswith("short-dots"), step
        assert nest.short_dot_block_rows(step) == 4
        a64 = rand((200, 1000), "float64", rng=rng)
        b64 = rand((1000, 8), "float64", rng=rng)
        (step64,) = _steps("ij,jk->ik", a64, b64)
        assert isinstance(step64, GemmStep) and step64.kernel.path.value == "smm", step64
        # a few rows: B's copy, an element a cycle, costs the dots as much
        # as their arithmetic ((8,1000) x (1000,6) f32: 6.8 us, smm 5.0)
        (few,) = _steps("ij,jk->ik", a32[:8], rand((1000, 6), "float32", rng=rng))
        assert isinstance(few, GemmStep) and few.kernel.path.value == "smm", few
        _close(einplan.einsum("ij,jk->ik", a64, b64), a64 @ b64, "float64", 1000)
    a3 = rand((578, 33, 35), "float64", rng=rng)
    b3 = np.ascontiguousarray(rand((7, 35, 33), "float64", rng=rng)).T
    (step3,) = _steps("ijk,jkl->il", a3, b3)
    assert isinstance(step3, GemmStep) and step3.kernel.path.value == "gemm", step3
    _close(einplan.einsum("ijk,jkl->il", a3, b3), np.einsum("ijk,jkl->il", a3, b3), "float64",
           1155)
    _close(einplan.einsum("ij,jk->ik", a32, b32), a32 @ b32, "float32", 1000)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_four_dots_a_row_priced_against_the_packed_engine(dtype, one_thread):
    """'ij,jk->ik' (300, 12000) x (12000, 8)[:, ::2]: n = 4 with B strided
    along n goes neither to the smm path nor to the GEMV; the packed engine
    copies all of A into panels for one tile of 4 columns padded to NR.
    The small-edge kernel's 4 dots a row, reading A once in place, are
    priced against it where they fit one vector (1 thread, Zen 3: f32 1.3
    ms, packed 4.0; f64 4.2 / 5.6).  Wider vectors of dots are not priced
    ('ij,jk->ik' (2000, 1000) x (1000, 8) f64 on AVX2: 5.7 ms as dots,
    2.4 packed)."""
    from einplan.planner import SHORT_DOTS_PACKED
    rng = np.random.default_rng(46)
    a = rand((300, 12000), dtype, rng=rng)
    b = rand((12000, 8), dtype, rng=rng)[:, ::2]
    (step,) = _steps("ij,jk->ik", a, b)
    lanes = nest.vector_lanes(np.dtype(dtype).itemsize)
    if 4 <= min(SHORT_DOTS_PACKED, lanes):
        assert step.why.startswith(f"{step.engine} by predicted compute"), step
        assert isinstance(step, NestStep) and step.row.startswith("short-dots"), step
    else:
        assert isinstance(step, GemmStep) and not step.why, step
    _close(einplan.einsum("ij,jk->ik", a, b), a @ b, dtype, 12000)
    if lanes >= 8:
        return
    b8 = rand((1000, 16), dtype, rng=rng)[:, ::2]
    (wide,) = _steps("ij,jk->ik", a[:, :1000], b8)
    assert isinstance(wide, GemmStep) and not wide.why, wide


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_long_rows_of_dots_run_in_the_small_edge_kernel(dtype, one_thread):
    """Dots of rows past one chunk of the kernel's copy add up chunk by
    chunk, each summed in a vector's lanes: rows up to nest.SHORT_DOT_ROW
    take the small-edge kernel ('ijk,jkl->il' (70,3,1952) x (3,1952,2) f64:
    267 us as strided rows, 118 us as dots, numpy 147; 'ij,jk->ik'
    (636,14765) x (14765,4) f32: 3.5 ms on the smm path, 1.6 ms, numpy
    2.7).  Their sums stay within a few ulps per chunk of numpy's."""
    rng = np.random.default_rng(45)
    a = rand((70, 3, 1952), dtype, rng=rng)
    b = rand((3, 1952, 2), dtype, rng=rng)
    (step,) = _steps("ijk,jkl->il", a, b)
    assert isinstance(step, NestStep) and step.row.startswith("short-dots"), step
    _close(einplan.einsum("ijk,jkl->il", a, b), np.einsum("ijk,jkl->il", a, b), dtype, 5856)
    x = rng.random((9, 14765)).astype(dtype)           # all positive: no cancellation
    y = rng.random((14765, 3)).astype(dtype)
    want = np.array([[math.fsum(x[i].astype(np.float64) * y[:, k].astype(np.float64))
                      for k in range(3)] for i in range(9)])
    got = einplan.einsum("ij,jk->ik", x, y)
    (dots,) = _steps("ij,jk->ik", x, y)
    if isinstance(dots, NestStep) and dots.row.startswith("short-dots"):
        np.testing.assert_allclose(got, want, rtol=16 * np.finfo(dtype).eps)
    else:           # the smm path on narrower kernel sets: k summed in turn
        _close(got, want, dtype, 14765)


def test_small_edge_kernel_into_a_strided_output_row_is_priced_per_element():
    """The small-edge kernel stores a strided output row element by element,
    each store a read and a write of its line in L2: the same short step
    'ia,ibc->abc' run along b (its output row 6 apart) is priced above the
    row work and traffic by that term, so on a machine where the passes over
    the output slab cost more than the other path the plan avoids the
    strided row ((2,158) (2,16046)[:, ::2] (2,6) f32 on a 2 MiB-L2 AVX-512
    core: 0.42x numpy along b, 0.57-0.74x along bc)."""
    import dataclasses
    from einplan import cost
    from einplan.plan import NestLoop
    rng = np.random.default_rng(17)
    a, c = rand((2, 158), "float32", rng=rng), rand((2, 6), "float32", rng=rng)
    bc = rand((2, 16046, 6), "float32", rng=rng)
    short = [st for st in _steps("ia,ibc->abc", a, bc)
             if isinstance(st, NestStep) and st.short]
    assert short and abs(short[0].loops[-1].strides[-1]) == 1, short
    along_b = dataclasses.replace(short[0], threads=1, loops=(
        NestLoop("a", 158, (1, 0, 96276)), NestLoop("c", 6, (0, 1, 1)),
        NestLoop("i", 2, (158, 96276, 0)), NestLoop("b", 16046, (0, 6, 6))))
    term = 158 * 6 * 16046 * 2 * 6 * 4 / cost.L2_BANDWIDTH
    priced = cost.nest_seconds(along_b, "float32")
    old = cost.L2_BANDWIDTH
    try:
        cost.L2_BANDWIDTH = float("inf")
        unpriced = cost.nest_seconds(along_b, "float32")
    finally:
        cost.L2_BANDWIDTH = old
    assert priced - unpriced >= cost.OVERLAP * term * 0.999, (priced, unpriced, term)
    b = rand((2, 2 * 16046), "float32", rng=rng)[:, ::2]
    _close(einplan.einsum("ia,ib,ic->abc", a, b, c),
           np.einsum("ia,ib,ic->abc", a, b, c), "float32", 2)


def test_small_edge_row_strided_in_the_output_is_priced_per_lane():
    """Among the small-edge kernel's candidates a row strided in the output
    stores its lanes one by one, an extract and a store each
    (SHORT_SCATTER): 'ij...,jk...->ik...' (80,5,4,3) x (5,465,1,1) f32 runs
    its row along the broadcast axes (12, unit stride in the output) with
    'k' around it, not along 'k' (465, 12 apart in the output: 0.59x numpy
    there, 1.66x along the broadcast axes on an AVX2 Zen 4) -- in numpy's
    layout, given by out=.  A fresh output is laid out as the packed engine
    would write it, (i, A, k), where the row runs along k, unit stride in
    the output, and the nest still wins (86 us; 115 packed, numpy 110)."""
    rng = np.random.default_rng(23)
    a = rand((80, 5, 4, 3), "float32", rng=rng)
    b = rand((5, 465, 1, 1), "float32", rng=rng)
    out = np.empty((80, 465, 4, 3), np.float32)
    (st,) = einplan.explain("ij...,jk...->ik...", a, b, out=out).to_dict()["steps"]
    assert [lp["labels"] for lp in st["nest"]["loops"]][-2:] == ["j", "AB"], st["nest"]
    want = np.einsum("ij...,jk...->ik...", a, b)
    _close(einplan.einsum("ij...,jk...->ik...", a, b, out=out), want, "float32", 5)
    report = einplan.explain("ij...,jk...->ik...", a, b)
    (st,) = report.to_dict()["steps"]
    rows = [lp["labels"] for lp in st["nest"]["loops"]][-2:]
    moved = "as the packed engine would write it" in str(report)
    # (the AVX-512 kernels' prices, where it was measured, take the packed
    # engine's layout; other kernel sets price it otherwise, either way by
    # the nests' predicted times)
    assert moved or _native.isa() != "avx512", str(report)
    assert rows == (["j", "k"] if moved else ["j", "AB"]), st["nest"]
    _close(einplan.einsum("ij...,jk...->ik...", a, b), want, "float32", 5)


def test_small_edge_copies_once_under_a_loop_it_stays_put_along():
    """A candidate row along which an input must be copied takes, right
    around the short loop, a loop that input stays put along, so it is
    copied once per call of the kernel: 'bij,bkj->bki' (215,312,3)[..., ::2]
    x (215,167,3) F f32 with j = 3 runs its row along 'k' (unit stride in
    the output, B's rows copied once per b) under 'i', not along 'i' (167
    apart in the output: 0.38x numpy there, 1.76x along 'k')."""
    from einplan.nest import NestLoop, _short_edge
    loops = [NestLoop("j", 3, (2, 35905, 0)), NestLoop("i", 312, (6, 0, 167)),
             NestLoop("b", 215, (1872, 1, 52104)), NestLoop("k", 167, (0, 215, 1))]
    order = _short_edge(loops, 4, 2)
    assert [lp.labels for lp in order][-3:] == ["i", "j", "k"], order
    rng = np.random.default_rng(31)
    a = rand((215, 312, 6), "float32", rng=rng)[..., ::2]
    b = np.asfortranarray(rand((215, 167, 3), "float32", rng=rng))
    (st,) = einplan.explain("bij,bkj->bki", a, b).to_dict()["steps"]
    assert [lp["labels"] for lp in st["nest"]["loops"]][-1] == "k", st["nest"]
    _close(einplan.einsum("bij,bkj->bki", a, b), np.einsum("bij,bkj->bki", a, b), "float32", 3)


def test_thin_gemm_engine_by_predicted_cost():
    """A GEMM with an edge below MIN_GEMM_EDGE is planned on both engines
    and the cheaper by predicted compute runs, the reason recorded in the
    step and printed by explain: a narrow n ('ij,jk->ki' n = 2, k = 1500,
    B read at stride 2: the nest gathers it a chunk at a time) goes to the
    engine the rule picks from the two prices it records; a short k and n
    whose smm rows would be mostly start-up ('abc,cd->adb' n = 3, k = 4)
    stays in the nest's small-edge kernel."""
    from einplan.plan import GemmStep
    rng = np.random.default_rng(5)
    a, b = rand((3000, 1500), "float32", rng=rng), rand((1500, 2), "float32", rng=rng)
    (step,) = _steps("ij,jk->ki", a, b)
    assert step.why.startswith(f"{step.engine} by predicted"), step
    cn, cg = (float(x) for x in re.findall(r"([0-9.]+) kcycles", step.why))
    assert (step.engine == "gemm") == (cg < nest.GEMM_CYCLE_MARGIN * cn), step.why
    assert isinstance(step, GemmStep if step.engine == "gemm" else NestStep)
    assert f"{step.engine} by predicted compute" in str(einplan.explain("ij,jk->ki", a, b))
    _close(einplan.einsum("ij,jk->ki", a, b), np.einsum("ij,jk->ki", a, b), "float32", 1500)
    a, b = rand((2710, 8, 4), "float32", rng=rng), rand((4, 3), "float32", rng=rng)
    (step,) = _steps("abc,cd->adb", a, b)
    assert isinstance(step, NestStep) and step.why.startswith("nest by predicted"), step
    assert step.short >= 2
    assert "nest by predicted compute" in str(einplan.explain("abc,cd->adb", a, b))
    _close(einplan.einsum("abc,cd->adb", a, b), np.einsum("abc,cd->adb", a, b), "float32", 4)
    # a GEMM with every edge at least MIN_GEMM_EDGE is not priced twice
    (step,) = _steps("ij,jk->ik", np.ones((64, 64)), np.ones((64, 64)))
    assert isinstance(step, GemmStep) and step.why == ""


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_one_tile_gemm_priced_on_both_engines(dtype):
    """A GEMM whose m and n both fit one register tile (nest.is_one_tile)
    is planned on both engines and priced: an outer product of long dots
    ('...i,...i->...' 5 x 4 dots of 148254, or longer so that the four
    rows of one operand are twice this core's L2) runs in the nest, its row
    in blocks that stay in L2, or on the GEMM engine's GEMV path (the rows
    read once in place, k shared by the threads), the reason in the step and
    in explain; sliced
    and reversed operands give numpy's result; complex is priced by the
    register-tile kernel's rule instead; m or n past one tile is not priced
    twice."""
    from einplan.plan import GemmStep
    rng = np.random.default_rng(11)
    k = max(148254, nest.l2_bytes() // (2 * np.dtype(dtype).itemsize))
    a, b = rand((1, 4, k), dtype, rng=rng), rand((5, 1, k), dtype, rng=rng)
    s = "...i,...i->..."
    (step,) = _steps(s, a, b)
    assert step.why.startswith(f"{step.engine} by predicted"), step
    if isinstance(step, NestStep):
        assert step.block > 0
    else:
        # the GEMM engine's GEMV path: A's rows dotted in place, never packed
        assert step.kernel.path.value == "gemv", step
    assert f"{step.engine} by predicted compute" in str(einplan.explain(s, a, b))
    for x, y in [(a, b), (a[..., ::-1], b[..., ::-1]), (a[..., ::2], b[..., 1::2]),
                 (a[..., :-3], b[..., 3:])]:
        _close(einplan.einsum(s, x, y), np.einsum(s, x, y), dtype, x.shape[-1])
    for m, n, k in [(4, 4, 4), (8, 8, 9), (5, 7, 3000)]:
        x, y = rand((m, k), dtype, rng=rng), rand((k, n), dtype, rng=rng)
        (step,) = _steps("ik,kj->ij", x, y)
        assert step.why.startswith(f"{step.engine} by predicted"), step
        _close(einplan.einsum("ik,kj->ij", x, y), x @ y, dtype, k)
    c = rand((8, 2000), "complex128", rng=rng)
    (step,) = _steps("ik,jk->ij", c, c)
    assert "register-tile kernel" in step.why, step      # nest.ctile_by_cost's rule
    _close(einplan.einsum("ik,jk->ij", c, c), c @ c.T, "complex128", 2000)
    (step,) = _steps("ik,kj->ij", np.ones((9, 64)), np.ones((64, 9)))
    assert isinstance(step, GemmStep) and step.why == ""


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_short_k_gemm_priced_on_both_engines(dtype):
    """A GEMM with k at most a short loop (nest.is_short_k), whatever m and
    n, is planned on both engines and priced: (4000, 4) x (4, 100) runs the
    small-edge kernel (k in registers, the packed engine's micro-kernel
    calls costing more than their 4 rank-1 updates); k of 16 is not priced
    twice."""
    from einplan.plan import GemmStep
    rng = np.random.default_rng(12)
    for subs, sa, sb in [("ij,jk->ik", (4000, 4), (4, 100)), ("ik,jk->ij", (300, 5), (2000, 5)),
                         ("ij,kj->ik", (3000, 7), (259, 7))]:
        # (its products priced as one FMA an element: 'ij,kj->ik' (12675, 7) x
        # (259, 7) f64 ran 2.3 ms in the nest, 3.3 ms packed)
        x, y = rand(sa, dtype, rng=rng), rand(sb, dtype, rng=rng)[::-1]
        (step,) = _steps(subs, x, y)
        assert isinstance(step, NestStep) and step.why.startswith("nest by predicted"), step
        assert step.short in (4, 5, 7) and step.row.startswith("short-sum")
        _close(einplan.einsum(subs, x, y), np.einsum(subs, x, y), dtype, sa[1])
    (step,) = _steps("ij,jk->ik", np.ones((4000, 16)), np.ones((16, 100)))
    assert isinstance(step, GemmStep) and step.why == ""


def test_rows_gathered_in_chunks_are_priced_as_vector_rows(monkeypatch):
    """A row whose inputs run at strides of 1 or 2 (nest.gathers_row) is
    gathered into L1 a chunk at a time and run contiguous: priced as a
    vector row plus a vector operation per gathered input, not element by
    element; other strides, or a row under four vectors, are not."""
    from einplan.plan import NestLoop
    lanes = 8
    row = lambda n, *st: [NestLoop("i", 100, (100, 0, 1)), NestLoop("j", n, st)]
    assert nest.gathers_row(row(1500, 1, 2, 0), lanes)
    assert nest.gathers_row(row(1500, -2, 0), lanes)
    assert not nest.gathers_row(row(1500, 1, 1, 0), lanes)      # contiguous already
    assert not nest.gathers_row(row(1500, 1, 3, 0), lanes)
    assert not nest.gathers_row(row(1500, 1, 2, 4), lanes)      # output strided
    assert not nest.gathers_row(row(4 * lanes - 1, 1, 2, 0), lanes)
    # 'ij,jk->ki' (3000, 1500) x (1500, 2) f32 as a nest: B's row at stride 2
    # (the small-edge kernel's dots, which take it at 0.79 ms to this row's
    # 1.1, left out, and the register tiles, which take a V of 2 under the
    # generic set's vectors of 4)
    monkeypatch.setattr(nest, "SHORT_DOT_ROW", 1024)
    monkeypatch.setattr(nest, "_ctile_order", lambda *a, **k: None)
    from einplan.plan import KernelKind, OUT
    sizes = {"i": 3000, "j": 1500, "k": 2}
    step = nest.nest_step(KernelKind.GEMM, [(0, "ij", (1500, 1)), (1, "jk", (2, 1))], OUT, "ki",
                          {"k": 3000, "i": 1}, sizes, np.dtype(np.float32))
    lanes_now = max(1, nest.VECTOR_BITS.get(_native.isa(), 128) // 8 // 4)
    assert step.row == "sum/strided" and nest.gathers_row(step.loops, lanes_now)
    # about three vector operations per lanes elements, far from two per element
    assert nest.nest_cycles(step, "float32") < 3000 * 1500 * 2 * 4 / lanes_now


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_rows_of_more_than_half_a_vector_against_a_shared_x(isa, dtype, one_thread):
    """Rows of the small-edge kernel between half a vector and one, against
    an x every row shares ('ij,jk->ik' with k that long): on 512-bit kernel
    sets two overlapping half vectors a row; summed over an outer loop too
    (every pass after the first adds to the output).  numpy's results, by
    the kernel and through einsum (whichever engine the planner takes)."""
    rng = np.random.default_rng(31)
    lanes = (64 if isa == "avx512" else 32 if isa == "avx2" else 16) // np.dtype(dtype).itemsize
    for n in range(max(2, lanes // 2), lanes + 1):
        for S in (1, 3, 8):
            a = rand((301, S), dtype, rng=rng)
            b = rand((S, n), dtype, rng=rng)
            o = np.full((302, n), np.nan, dtype)
            sa, sb, so = _st(a), _st(b), _st(o)
            _run(dtype, [(301, sa[0], 0, so[0]), (S, sa[1], sb[0], 0), (n, 0, sb[1], so[1])],
                 (a, b), o[:301], isa)
            _close(o[:301], a @ b, dtype, S)
            assert np.isnan(o[301]).all()
            _close(einplan.einsum("ij,jk->ik", a, b), np.einsum("ij,jk->ik", a, b), dtype, S)
            a3 = rand((3, 301, S), dtype, rng=rng)
            _close(einplan.einsum("bij,jk->ik", a3, b), np.einsum("bij,jk->ik", a3, b),
                   dtype, 3 * S)
            o = rand((301, n), dtype, rng=rng)
            einplan.einsum("ij,jk->ik", a, b, out=o)
            _close(o, np.einsum("ij,jk->ik", a, b), dtype, S)


def test_rows_run_across_only_where_enough_rows_repay_their_weights():
    """The small-edge kernel builds its weight vectors lane by lane on each
    call, so it runs rows across in vectors only from across_min_rows rows
    a call (twice the rows those vectors' lanes cover, at least a vector's);
    the model prices the same rule."""
    from types import SimpleNamespace as Loop
    assert nest.across_min_rows(3, 8) == 64      # 3 vectors x 4 rows each, 8 lanes
    assert nest.across_min_rows(8, 8) == 8
    assert nest.across_min_rows(2, 16) == 128
    for lanes in (4, 8, 16):
        for n in range(2, lanes + 1):
            least = nest.across_min_rows(n, lanes)
            assert least >= lanes
            L = Loop(extent=n, strides=(1, 0, 1))
            for rows, want in ((least - 1, False), (least, True)):
                outer = Loop(extent=rows, strides=(0, 1, n))
                assert nest.runs_across(outer, L, 0, lanes) is want, (n, lanes, rows)


def test_rows_interleave_only_with_factors_unit_stride_along_them():
    """The model takes the interleaved rows (nest.interleaves) for rows of 2,
    4 or 8 fewer than a vector whose factors are unit-stride along the rows,
    priced below the rows run across; the planner runs the broadcast call
    'ij...,jk...->ik...' (231,2,2,1) x (2,910,1,1) so (0.24x numpy across)
    in numpy's layout, given by out= (a fresh output is laid out (i, A, k),
    rows along k)."""
    from types import SimpleNamespace as Loop
    for lanes in (4, 8, 16):
        for n in (2, 3, 4, 6, 8):
            L = Loop(extent=n, strides=(1, 0, 1))
            for fro, rows in ((1, lanes), (1, lanes - 1), (5, 4 * lanes)):
                outer = Loop(extent=rows, strides=(0, fro, n))
                want = n < lanes and n in (2, 4, 8) and fro == 1 and rows >= lanes
                assert nest.interleaves(outer, L, 0, lanes, 2) is want, (lanes, n, fro, rows)
                if want:
                    assert (nest.interleave_vector_ops(n, 3)
                            < nest.across_vector_ops(n, 3, lanes, 4)), (lanes, n)
    a = np.random.default_rng(3).standard_normal((231, 2, 2, 1)).astype(np.float32)
    b = np.random.default_rng(4).standard_normal((2, 910, 1, 1)).astype(np.float32)
    from einplan.operands import describe, describe_operands
    from einplan.planner import make_plan
    from einplan.spec import parse_spec
    out = np.empty((231, 910, 2, 1), np.float32)
    spec, arrays = parse_spec(("ij...,jk...->ik...", a, b))
    (step,) = make_plan(spec, describe_operands(arrays), out_info=describe(out)).steps
    assert step.short == 2 and step.row.startswith("short-sum"), step
    assert nest.interleaves(step.loops[-3], step.loops[-1], 0, nest.vector_lanes(4), 2)
    np.testing.assert_allclose(einplan.einsum("ij...,jk...->ik...", a, b, out=out),
                               np.einsum("ij...,jk...->ik...", a, b), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_short_rows_just_below_and_above_the_across_threshold(isa, dtype, one_thread):
    """'ij...,jk...->ik...' with a broadcast output row of n: rows a call
    either side of across_min_rows, every kernel set: numpy's results."""
    rng = np.random.default_rng(41)
    lanes = nest.vector_lanes(np.dtype(dtype).itemsize)
    for n in (2, 3):
        least = nest.across_min_rows(n, lanes)
        for rows in (least - 1, least, least + 5):
            a = rand((13, 7, 1, n), dtype, rng=rng)
            b = rand((7, rows, 1, 1), dtype, rng=rng)
            _close(einplan.einsum("ij...,jk...->ik...", a, b),
                   np.einsum("ij...,jk...->ik...", a, b), dtype, 7)


@pytest.mark.parametrize("dtype", DTYPES)
def test_threads_share_out_the_row_when_the_output_varies_along_it(isa, dtype, restore_threads):
    """'ab,a->b' with a short a and a long b: no loop around the small-edge
    kernel's two, so the threads take parts of the row itself (the output
    varies along it: disjoint writes).  Rows whose length leaves each part
    ragged, unit-stride and strided inputs, an outer loop summed into the
    output (later passes add); numpy's results."""
    rng = np.random.default_rng(7)
    for n in (61, 1000, 4099):
        for S in (2, 5):
            A = rand((S, n), dtype, rng=rng)
            As = rand((S, 2 * n), dtype, rng=rng)[:, ::2]
            v = rand((S,), dtype, rng=rng)
            for X in (A, As):
                sx, sv = _st(X), _st(v)
                o = np.full((n,), np.nan, dtype)
                _run(dtype, [(S, sx[0], sv[0], 0), (n, sx[1], 0, 1)], (X, v), o, isa,
                     split=1, threads=2)
                _close(o, v @ X, dtype, S)
            A3 = rand((3, S, n), dtype, rng=rng)
            s3 = _st(A3)
            o = np.full((n,), np.nan, dtype)
            _run(dtype, [(3, s3[0], 0, 0), (S, s3[1], sv[0], 0), (n, s3[2], 0, 1)], (A3, v), o,
                 isa, split=2, threads=2)
            _close(o, np.einsum("kab,a->b", A3, v), dtype, 3 * S)
    einplan.set_num_threads(2)
    g, w = rand((2, 815904), "float64", rng=rng), rand((2,), "float64", rng=rng)
    (step,) = einplan.explain("ab,a->b", g, w).plan.steps
    assert isinstance(step, NestStep) and step.short and step.split == len(step.loops) - 1, step
    _close(einplan.einsum("ab,a->b", g, w), w @ g, "float64", 2)


def test_a_summed_loop_around_a_kept_row_prices_its_output_visits(one_thread):
    """'ia,ib,ic->abc' (7,2) x (7,2820) x (7,1593) f64: as one nest, i sits
    outside the row c and every visit after the first loads and stores the
    output row again (16 ms; 25 ms with c a [:, ::2] slice, gathered a chunk
    at a time); an outer product first, then the small-edge kernel holding
    i = 7 in registers, writes each output element once (12-13 ms, numpy
    13-15).  Both layouts take the path; the priced output visit is what
    decides it."""
    rng = np.random.default_rng(12)
    a = rand((7, 2), "float64", rng=rng)
    b = rand((7, 2820), "float64", rng=rng)
    for c in (rand((7, 1593), "float64", rng=rng), rand((7, 3186), "float64", rng=rng)[:, ::2]):
        steps = _steps("ia,ib,ic->abc", a, b, c)
        assert len(steps) == 2 and steps[-1].short == 7, steps
    small = (a, b[:, :300], c[:, :200])
    _close(einplan.einsum("ia,ib,ic->abc", *small), np.einsum("ia,ib,ic->abc", *small),
           "float64", 7)


def test_output_rows_revisited_from_l2_price_their_loads_and_stores(one_thread):
    """'ia,ib,ic->abc' (4,4) x (4,46) x (4,51387) f64: as one nest, the
    output rows of 411 KB (past L1, in L2) are visited once per i, each
    visit after the first a load and a store from L2 with no memory traffic
    beside it: 20 ms into a written output; an outer product, then the
    small-edge kernel with i in registers: 11-12 ms.  The one nest's
    predicted time counts those visits, and the path wins."""
    rng = np.random.default_rng(14)
    a = rand((4, 8), "float64", rng=rng)[:, ::2]
    b = rand((4, 46), "float64", rng=rng)
    c = rand((4, 51387), "float64", rng=rng)[::-1]
    steps = _steps("ia,ib,ic->abc", a, b, c)
    assert len(steps) == 2 and steps[-1].short == 4, steps
    small = (a, b[:, :9], c[:, :700])
    _close(einplan.einsum("ia,ib,ic->abc", *small), np.einsum("ia,ib,ic->abc", *small),
           "float64", 4)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("S", [2, 3, 5, 8])
def test_one_input_summed_over_a_short_loop_per_row(isa, dtype, S, one_thread):
    """'abc->ac' with b short: one input, no factor, each row's S x n block
    its own (the input moves along the rows), the output row written once.
    Rows shorter than half a vector, between half and one vector (two
    overlapping half vectors loaded per row on 512-bit sets), of one to two
    vectors and longer; rows end to end or apart; the output contiguous or
    strided inside a NaN-filled array whose gaps must stay NaN; an outer
    summed loop whose second visit adds.  Each input ends at its last
    element (a read past it shows under the sanitizer)."""
    rng = np.random.default_rng(77 + S)
    lanes = (64 if isa == "avx512" else 32 if isa == "avx2" else 16) // np.dtype(dtype).itemsize
    for n in sorted({1, 2, lanes // 2, lanes // 2 + 1, lanes - 1, lanes, 2 * lanes + 3}):
        for R in (1, 2, 19):
            for gap in (0, 3):
                A = rand((R, S * n + gap), dtype, rng=rng)[:, :S * n].reshape(R, S, n)
                want = A.sum(1)
                sa = _st(A)
                for ostep in (1, 2):
                    big = np.full((R, ostep * n), np.nan, dtype)
                    o = big[:, ::ostep]
                    so = _st(o)
                    loops = [(R, sa[0], so[0]), (S, sa[1], 0), (n, sa[2], so[1])]
                    _run(dtype, loops, (A,), o, isa)
                    _close(o, want, dtype, S)
                    if ostep == 2:
                        assert np.isnan(big[:, 1::2]).all()
                    _run(dtype, [(2, 0, 0)] + loops, (A,), o, isa)
                    _close(o, 2 * want, dtype, 2 * S)


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_sum_over_a_short_loop_of_one_operand_holds_its_rows_in_registers(dtype, one_thread):
    """'abc->ac' (and 'abc->ca') with b of 2 to 8: the small-edge kernel
    sums b around the row c, each output row written once, where the plain
    nest put b outermost and went over the output b times ('abc->ac'
    (1021,7,7) f64: 48 us, numpy 34; held, 8.5 us).  Equal to numpy for C
    order, a read backwards and every other a."""
    rng = np.random.default_rng(5)
    for shape in ((1021, 7, 7), (300, 8, 20), (2000, 3, 5), (64, 2, 100)):
        A = rand(shape, dtype, rng=rng)
        for X in (A, A[::-1], A[::2]):
            for spec in ("abc->ac", "abc->ca"):
                (step,) = einplan.explain(spec, X).plan.steps
                assert isinstance(step, NestStep) and step.short == shape[1], (shape, step)
                assert step.row.startswith("short-sum"), step.row
                _close(einplan.einsum(spec, X), np.einsum(spec, X), dtype, shape[1])


def test_small_edge_traffic_counts_the_rows_held_in_registers(one_thread):
    """The small-edge kernel's candidates are priced with the loop it holds
    in registers in their traffic: 'bij,bkj->bki' (4,3,1189) sliced x
    (4,1341,1189) f64 holding b (4) under i reads B's 51 MB once per i;
    holding i (3) under b and k, once (1.9x faster).  A candidate of rows of
    two along an output loop is not taken: 'bij,bkj->bki' (17855,296,2) x
    (17855,2,2) F f64 as 5.3M such rows ran 6x slower than the plain nest.
    Both equal numpy."""
    rng = np.random.default_rng(8)
    A = rng.standard_normal((4, 3, 2378))[..., ::2]
    B = rng.standard_normal((1341, 4, 1189)).transpose(1, 0, 2)
    (step,) = einplan.explain("bij,bkj->bki", A, B).plan.steps
    assert isinstance(step, NestStep) and step.short == 3, step
    assert [lp.labels for lp in step.loops] == ["b", "k", "i", "j"], step.loops
    _close(einplan.einsum("bij,bkj->bki", A, B), np.einsum("bij,bkj->bki", A, B),
           np.float64, 1189)
    A = np.asfortranarray(rng.standard_normal((17855, 296, 2)))
    B = np.asfortranarray(rng.standard_normal((17855, 2, 2)))
    (step,) = einplan.explain("bij,bkj->bki", A, B).plan.steps
    assert not (isinstance(step, NestStep) and step.short and step.loops[-1].extent <= 2), step
    _close(einplan.einsum("bij,bkj->bki", A, B), np.einsum("bij,bkj->bki", A, B),
           np.float64, 2)


def test_sums_held_over_rows_in_l1_are_priced_a_load_per_element(one_thread):
    """The small-edge kernel summing S rows into an output row that it
    stores once per S elements is priced a load per element (and 1/S of a
    store) when the S rows stay in L1, so a chain's path ending in such a
    step wins over one ending in a GEMM of 3x the FLOPs: 'ij,jk,kl,lm->im'
    (777,9) x (9,16) x (16,3) x (3,1840) f32 on one thread takes numpy's
    greedy order, the last step 'il,lm->im' with l = 3 held (125 us; the
    other order's k = 9 GEMM 362 us).  Rows past L1 keep the price of a
    store too."""
    from einplan.cost import nest_seconds
    rng = np.random.default_rng(14)
    ops = (rng.standard_normal((777, 9)).astype(np.float32),
           rng.standard_normal((16, 9)).astype(np.float32).T,
           rng.standard_normal((16, 3)).astype(np.float32),
           rng.standard_normal((3, 1840)).astype(np.float32))
    steps = _steps("ij,jk,kl,lm->im", *ops)
    last = steps[-1]
    assert isinstance(last, NestStep) and last.short == 3, steps
    assert last.row == "short-sum/contig" and [lp.extent for lp in last.loops] == [777, 3, 1840]
    got = einplan.einsum("ij,jk,kl,lm->im", *ops)
    want = np.einsum("ij,jk,kl,lm->im", *ops, optimize=True)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    # the same step with rows of 45 KB (past L1) costs more per element
    near = _nest_steps("il,lm->im", np.empty((777, 3), np.float32),
                       np.empty((3, 1840), np.float32))[0]
    far = _nest_steps("il,lm->im", np.empty((20, 3), np.float32),
                      np.empty((3, 71880), np.float32))[0]
    assert near.short == far.short == 3 and far.row == near.row == "short-sum/contig"
    per = [nest_seconds(s, "float32") / math.prod(lp.extent for lp in s.loops)
           for s in (near, far)]
    assert per[0] < per[1], per
