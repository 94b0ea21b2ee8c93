"""The loop-nest engine (ep_nest): every row kernel under every ISA this CPU
runs (``NestCall(..., isa=)``), summation accuracy, threads, and the planner's
decisions around it (the fallbacks it leaves to numpy are named and counted)."""
import numpy as np
import pytest

import einplan
from einplan import _native, nest

from conftest import RUN_ISAS  # noqa: E402
from einplan.plan import OUT, NestStep

from _gemm_util import assert_sum_close, estrides, rand

K = _native._kernels
DTYPES = ["float32", "float64", "complex64", "complex128"]
# lengths around every vector width (4..16 lanes, 4 accumulators) and past
# one summation block (2048 elements: the pairwise combination of blocks)
LENGTHS = [1, 3, 7, 8, 16, 31, 64, 65, 130, 2049, 5000]


def _rand(rng, shape, dtype):
    return rand(shape, dtype, rng=rng)


def _close(got, want, dtype, k):
    assert_sum_close(got, want, dtype, k, ulps=32)


def _into_one_row_and_again(dtype, nin, loops, ins, want, R, isa):
    """Rows summed into one output row: written over NaNs, then visited twice
    more by an outer loop of 2 whose first visit overwrites, the second adds."""
    n = loops[-1][0]
    o = np.full(n, np.nan, dtype)
    _native.prepare_nest(dtype, nin, loops)(ins, o, isa=isa)
    _close(o, want, dtype, R)
    again = [(2,) + (0,) * (nin + 1)] + loops
    _native.prepare_nest(dtype, nin, again)(ins, o, isa=isa)
    _close(o, 2 * want, dtype, 2 * R)


_strides = estrides


@pytest.mark.parametrize("isa", RUN_ISAS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", LENGTHS)
def test_row_sum_paths(isa, dtype, n, one_thread):
    """row_sum: contiguous (SIMD) for 1, 2, 3 inputs, strided (gather), and a
    stride-0 input folded into the row's scale."""
    rng = np.random.default_rng(n)
    x, y, z = (_rand(rng, 2 * n, dtype) for _ in range(3))
    out = np.empty((), dtype)
    for nin, ins, st, want in [
            (1, (x,), (1,), x[:n].sum()),
            (2, (x, y), (1, 1), (x[:n] * y[:n]).sum()),
            (3, (x, y, z), (1, 1, 1), (x[:n] * y[:n] * z[:n]).sum()),
            (2, (x, y), (2, 1), (x[::2] * y[:n]).sum()),
            (2, (x, y), (1, 0), x[:n].sum() * y[0])]:
        call = _native.prepare_nest(dtype, nin, [(n,) + st + (0,)])
        call(ins, out, isa=isa)
        _close(out, want, dtype, n)


@pytest.mark.parametrize("isa", RUN_ISAS)
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("n", LENGTHS)
def test_conjugated_dot(isa, dtype, n, one_thread):
    """numpy.vdot's sum(conj(x) * y) with x conjugated in the kernel:
    contiguous (SIMD lanes and the scalar tail) and strided, pairwise past
    one block."""
    rng = np.random.default_rng(n + 5)
    x, y = _rand(rng, 2 * n, dtype), _rand(rng, 2 * n, dtype)
    out = np.empty((), dtype)
    for sx, sy in [(1, 1), (2, 1), (1, -1), (-2, 2)]:
        a = x[::sx][:n] if sx > 0 else x[2 * n - 2::-2]
        b = y[::sy][:n] if sy > 0 else y[n - 1::-1]   # a reversed view: stride -1 from y[n-1]
        _native.prepare_nest(dtype, 2, [(n, sx, sy, 0)], conj=True)(
            (x if sx > 0 else a, y if sy > 1 else b), out, isa=isa)
        _close(out, np.vdot(a, b), dtype, n)


def test_conjugated_dot_descriptor_is_checked():
    """conj only for a complex dot of two inputs over one loop."""
    x = np.ones(4, np.complex128)
    out = np.empty((), np.complex128)
    for dtype, loops in [("float64", [(4, 1, 1, 0)]), ("complex128", [(4, 1, 1, 1)]),
                         ("complex128", [(2, 2, 2, 0), (2, 1, 1, 0)])]:
        a = x.real.copy() if dtype == "float64" else x
        o = out.real.copy() if dtype == "float64" else (np.empty(4, dtype) if loops[0][3] else out)
        with pytest.raises(ValueError, match="invalid nest descriptor"):
            _native.prepare_nest(dtype, 2, loops, conj=True)((a, a), o)


@pytest.mark.parametrize("isa", RUN_ISAS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", LENGTHS[:-2])
def test_row_prod_paths(isa, dtype, n, one_thread):
    """row_prod into the output: contiguous (SIMD), strided, first visit
    stores and later visits add (a sum over an outer loop), stride-0 input."""
    rng = np.random.default_rng(n + 1)
    A, B = _rand(rng, (3, n), dtype), _rand(rng, (n, 3), dtype)
    A2 = _rand(rng, (3, n), dtype)
    v = _rand(rng, 3, dtype)
    out = np.full(n, np.nan, dtype)
    cases = [
        (1, (A,), [(3, n, 0), (n, 1, 1)], A.sum(0)),                       # 'ij->j'
        (2, (A, B), [(3, n, 1, 0), (n, 1, 3, 1)], (A * B.T).sum(0)),       # 'ij,ji->j'
        (3, (A, A, A), [(3, n, n, n, 0), (n, 1, 1, 1, 1)], (A ** 3).sum(0)),
        (2, (A, v), [(3, n, 1, 0), (n, 1, 0, 1)], (A * v[:, None]).sum(0)),  # axpy form
        # two contiguous inputs times a scale ('ij,ij,i->j': complex products per lane pair)
        (3, (A, A2, v), [(3, n, n, 1, 0), (n, 1, 1, 0, 1)], (A * A2 * v[:, None]).sum(0)),
    ]
    for nin, ins, loops, want in cases:
        out[...] = np.nan
        _native.prepare_nest(dtype, nin, loops)(ins, out, isa=isa)
        _close(out, want, dtype, 3)
    # a strided output and strided inputs
    o2 = np.full(2 * n, np.nan, dtype)
    _native.prepare_nest(dtype, 2, [(n, 3, 1, 2)])((A.ravel(), B.ravel()), o2, isa=isa)
    _close(o2[::2], A.ravel()[::3][:n] * B.ravel()[:n], dtype, 1)


@pytest.mark.parametrize("isa", RUN_ISAS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_short_strided_rows_four_at_a_time(isa, dtype, one_thread):
    """Short rows of a [:, ::2] slice, reversed, or at stride -2, alone
    ('ab->a') or times a unit-stride, reversed or sliced input ('ab,ab->a',
    either input first): four rows side by side, their lane sums in one
    butterfly, the elements past whole vectors in scalar chains; one to nine
    rows (fewer than four, and a last block repeating rows), rows of 8 to 64,
    the last row ending on its allocation's last element."""
    rng = np.random.default_rng(37)
    for n in (8, 9, 16, 19, 33, 64):
        for R in (1, 2, 3, 4, 5, 7, 9):
            W, V = _rand(rng, (R, 2 * n - 1), dtype), _rand(rng, (R, 2 * n - 1), dtype)
            Y = _rand(rng, (R, n), dtype)
            ins = [(W[:, ::2], 2 * n - 1, 2), (W[:, n - 1::-1], 2 * n - 1, -1),
                   (W[:, ::-2], 2 * n - 1, -2)]
            others = [(Y, n, 1), (Y[:, ::-1], n, -1), (V[:, ::2], 2 * n - 1, 2),
                      (V[:, ::-2], 2 * n - 1, -2)]
            o = np.full(R, np.nan, dtype)
            for a, ra, sa in ins:
                _native.prepare_nest(dtype, 1, [(R, ra, 1), (n, sa, 0)])((a,), o, isa=isa)
                _close(o, a.sum(1), dtype, n)
                for b, rb, sb in others:
                    _native.prepare_nest(dtype, 2, [(R, ra, rb, 1), (n, sa, sb, 0)])(
                        (a, b), o, isa=isa)
                    _close(o, (a * b).sum(1), dtype, n)
                    _native.prepare_nest(dtype, 2, [(R, rb, ra, 1), (n, sb, sa, 0)])(
                        (b, a), o, isa=isa)
                    _close(o, (a * b).sum(1), dtype, n)


@pytest.mark.parametrize("isa", RUN_ISAS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [15, 16, 17, 64, 255, 257, 600, 2049])
def test_rows_gathered_into_l1(isa, dtype, n, one_thread):
    """Rows with inputs strided by -1, 2 or -2 ('a,a->a' with a reversed
    operand, a sliced one, an axis reversed outside a unit one): sums of
    SIMD vectors taken from the strided loads (real and complex), products
    of real rows at strides 1 and 2 from vector loads, the others gathered
    into L1 in chunks, then the SIMD row -- real ones the same bits as the
    rows copied contiguous; with one or two inputs, a scale, and a later visit
    that adds; stride-2 rows that end on their allocation's last element."""
    rng = np.random.default_rng(n + 5)
    x, y = _rand(rng, 2 * n + 1, dtype), _rand(rng, 2 * n + 1, dtype)
    xe, ye = x[:2 * n - 1].copy(), y[:2 * n - 1].copy()   # allocations of the rows alone
    v = _rand(rng, 2, dtype)
    rev = x[n - 1::-1]          # x[n-1], x[n-2], ... x[0]: stride -1 from x[n-1]
    rev2 = x[2 * n - 2::-2]     # x[2n-2], x[2n-4], ... x[0]: stride -2
    for sx, sy, a, b in [(-1, 1, rev, y[:n]), (2, 1, x[::2][:n], y[:n]),
                         (1, 2, x[:n], y[::2][:n]), (2, -1, x[::2][:n], y[n - 1::-1]),
                         (-1, -1, rev, y[n - 1::-1]), (2, 2, x[::2][:n], y[::2][:n]),
                         (-2, 1, rev2, y[:n]), (1, -2, x[:n], y[2 * n - 2::-2]),
                         (-2, 2, rev2, y[::2][:n]), (2, 2, xe[::2], ye[::2]),
                         (2, 1, xe[::2], y[:n])]:
        xs = a if sx < 0 else a.base if a.base is not None and a.base.size < x.size else x
        ys = b if sy < 0 else b.base if b.base is not None and b.base.size < y.size else y
        out = np.empty((), dtype)
        _native.prepare_nest(dtype, 2, [(n, sx, sy, 0)])((xs, ys), out, isa=isa)
        _close(out, (a * b).sum(), dtype, n)
        _native.prepare_nest(dtype, 1, [(n, sx, 0)])((xs,), out, isa=isa)
        _close(out, a.sum(), dtype, n)
        o = np.full(n, np.nan, dtype)
        _native.prepare_nest(dtype, 2, [(n, sx, sy, 1)])((xs, ys), o, isa=isa)
        _close(o, a * b, dtype, 1)
        if not np.issubdtype(dtype, np.complexfloating):
            oc = np.empty(n, dtype)
            _native.prepare_nest(dtype, 2, [(n, 1, 1, 1)])((a.copy(), b.copy()), oc, isa=isa)
            assert o.tobytes() == oc.tobytes(), (sx, sy)
        _native.prepare_nest(dtype, 1, [(n, sx, 1)])((xs,), o, isa=isa)
        _close(o, a, dtype, 1)
        # two rows: the scale v[r] (constant along the row), the second adds
        _native.prepare_nest(dtype, 3, [(2, 0, 0, 1, 0), (n, sx, sy, 0, 1)])(
            (xs, ys, v), o, isa=isa)
        _close(o, a * b * v.sum(), dtype, 2)


@pytest.mark.parametrize("isa", RUN_ISAS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_rows_and_tiles(isa, dtype, one_thread):
    """The loop around the row in one call (short dots, short sums) and the
    two innermost loops in tiles ('ab,ba->ab', 'ab,ba->a', 'ab,ba->b')."""
    rng = np.random.default_rng(7)
    for m, n in [(5, 3), (300, 7), (37, 70), (130, 131)]:
        A, B = _rand(rng, (m, n), dtype), _rand(rng, (n, m), dtype)
        for tile in (0, 8, 64):
            o = np.empty((m, n), dtype)
            _native.prepare_nest(dtype, 2, [(m, n, 1, n), (n, 1, m, 1)], tile=tile)(
                (A, B), o, isa=isa)
            _close(o, A * B.T, dtype, 1)
            o = np.empty(m, dtype)
            _native.prepare_nest(dtype, 2, [(m, n, 1, 1), (n, 1, m, 0)], tile=tile)(
                (A, B), o, isa=isa)
            _close(o, (A * B.T).sum(1), dtype, n)
            # the same strided dots times a scale per row ('ab,ba,a->a')
            u = _rand(rng, m, dtype)
            o = np.empty(m, dtype)
            _native.prepare_nest(dtype, 3, [(m, n, 1, 1, 1), (n, 1, m, 0, 0)], tile=tile)(
                (A, B, u), o, isa=isa)
            _close(o, (A * B.T).sum(1) * u, dtype, n)
            o = np.empty(n, dtype)
            _native.prepare_nest(dtype, 2, [(m, n, 1, 0), (n, 1, m, 1)], tile=tile)(
                (A, B), o, isa=isa)
            _close(o, (A * B.T).sum(0), dtype, m)
        # a GEMV's dot form with a strided vector shared by every row
        v = _rand(rng, 2 * n, dtype)
        o = np.empty(m, dtype)
        _native.prepare_nest(dtype, 2, [(m, n, 0, 1), (n, 1, 2, 0)])((A, v), o, isa=isa)
        _close(o, A @ v[::2], dtype, n)


@pytest.mark.parametrize("isa", RUN_ISAS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [3, 7, 8, 9, 17, 2047, 2048, 2049, 5635])
def test_gemv_with_a_strided_vector_gathered_once(isa, dtype, n, one_thread):
    """A GEMV's dot form whose vector is strided ('...ij,j->...i' with a
    sliced or reversed j): the vector, shared by every row, is gathered
    once -- on the stack up to 2048 elements, in the thread's scratch
    buffer beyond -- and the rows run contiguous; the vector as either
    input, strides 2, -1, -2, 3, -3, rows around the four-row groups, a scale
    per row and a later visit that adds."""
    rng = np.random.default_rng(n)
    x = _rand(rng, 3 * n + 1, dtype)
    u = _rand(rng, 9, dtype)
    for R in (3, 4, 9):
        A = _rand(rng, (R, n), dtype)
        for sv in (2, -1, -2, 3, -3):
            vec = x[::sv][:n] if sv > 0 else x[::sv][-n:]
            base = x if sv > 0 else vec    # the data pointer at element 0
            o = np.full(R, np.nan, dtype)
            _native.prepare_nest(dtype, 2, [(R, n, 0, 1), (n, 1, sv, 0)])((A, base), o, isa=isa)
            _close(o, A @ vec, dtype, n)
            _native.prepare_nest(dtype, 2, [(R, 0, n, 1), (n, sv, 1, 0)])((base, A), o, isa=isa)
            _close(o, A @ vec, dtype, n)
            # the rows times u[r], then every row summed into one element
            _native.prepare_nest(dtype, 3, [(R, n, 0, 1, 1), (n, 1, sv, 0, 0)])(
                (A, base, u), o, isa=isa)
            _close(o, (A @ vec) * u[:R], dtype, n)
            s = np.empty((), dtype)
            _native.prepare_nest(dtype, 2, [(R, n, 0, 0), (n, 1, sv, 0)])((A, base), s, isa=isa)
            _close(s, (A @ vec).sum(), dtype, n * R)


@pytest.mark.parametrize("isa", RUN_ISAS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_short_rows_against_a_shared_vector(isa, dtype, one_thread):
    """Rows of 1..9 against one vector shared by every row ('...ij,j->...i'
    with j = 5; the real kernels hold the vector in registers for rows of
    2..8): the vector as either input, contiguous, strided or reversed rows,
    row counts around the four-row groups (two and three real rows run the
    four-row chains, the last row standing in for the missing ones, so the
    same bits as those rows among four), a scale per row, a later visit
    that adds, and every row summed into one element."""
    rng = np.random.default_rng(3)
    u = _rand(rng, 13, dtype)
    for n in range(1, 10):
        v = _rand(rng, 2 * n, dtype)
        for R in (1, 2, 3, 4, 7, 13):
            M = _rand(rng, (R, 2 * n), dtype)
            rev = M[:, n - 1::-1]     # the data pointer at element 0 of each row
            for A, Av, sa in [(M[:, :n], M, 1), (M[:, ::2], M, 2), (rev, rev, -1)]:
                ra = M.strides[0] // M.itemsize
                for vec, vb, sv in [(v[:n], v, 1), (v[::2], v, 2)]:
                    o = np.full(R, np.nan, dtype)
                    _native.prepare_nest(dtype, 2, [(R, ra, 0, 1), (n, sa, sv, 0)])(
                        (Av, vb), o, isa=isa)
                    _close(o, A @ vec, dtype, n)
                    # (real rows; contiguous ones, four may take rows_dotv)
                    if R in (2, 3) and sa != 1 and np.dtype(dtype).kind == "f":
                        M4 = np.concatenate([M, M[-1:].repeat(4 - R, 0)])
                        Av4 = M4 if sa != -1 else M4[:, n - 1::-1]
                        o4 = np.full(4, np.nan, dtype)
                        _native.prepare_nest(dtype, 2, [(4, ra, 0, 1), (n, sa, sv, 0)])(
                            (Av4, vb), o4, isa=isa)
                        np.testing.assert_array_equal(o, o4[:R])
                    _native.prepare_nest(dtype, 2, [(R, 0, ra, 1), (n, sv, sa, 0)])(
                        (vb, Av), o, isa=isa)
                    _close(o, A @ vec, dtype, n)
                    _native.prepare_nest(dtype, 3, [(R, ra, 0, 1, 1), (n, sa, sv, 0, 0)])(
                        (Av, vb, u), o, isa=isa)
                    _close(o, (A @ vec) * u[:R], dtype, n)
                    t = np.empty((), dtype)
                    _native.prepare_nest(dtype, 2, [(R, ra, 0, 0), (n, sa, sv, 0)])(
                        (Av, vb), t, isa=isa)
                    _close(t, (A @ vec).sum(), dtype, n * R)


@pytest.mark.parametrize("isa", RUN_ISAS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_rows_of_sums(isa, dtype, one_thread):
    """Summed rows of one or two inputs, four rows at a time ('ab->a',
    'ab,ab->a' with b from one vector to 64 and past, dot rows up to 1 KB
    (93: PySCF's 'jiab,iajb'); strided 'bii->b'):
    every row count around the groups of four (the last group overlapping
    rows already summed), a row length with and without a scalar tail, the
    rows summed into one element, and a scale."""
    rng = np.random.default_rng(12)
    for n in (3, 4, 8, 9, 37, 84, 93, 128, 129, 200, 256, 512, 513, 1030):
        for R in (1, 2, 3, 4, 5, 6, 7, 9):
            A, B = _rand(rng, (R, n), dtype), _rand(rng, (R, n), dtype)
            u = _rand(rng, R, dtype)
            o = np.full(R, np.nan, dtype)
            _native.prepare_nest(dtype, 1, [(R, n, 1), (n, 1, 0)])((A,), o, isa=isa)
            _close(o, A.sum(1), dtype, n)
            _native.prepare_nest(dtype, 2, [(R, n, n, 1), (n, 1, 1, 0)])((A, B), o, isa=isa)
            _close(o, (A * B).sum(1), dtype, n)
            _native.prepare_nest(dtype, 3, [(R, n, n, 1, 1), (n, 1, 1, 0, 0)])(
                (A, B, u), o, isa=isa)
            _close(o, (A * B).sum(1) * u, dtype, n)
            s = np.full((), np.nan, dtype)
            _native.prepare_nest(dtype, 1, [(R, n, 0), (n, 1, 0)])((A,), s, isa=isa)
            _close(s, A.sum(), dtype, n * R)
            # strided rows ('bii->b'): the scalar four-row path
            W = _rand(rng, (R, 2 * n), dtype)
            _native.prepare_nest(dtype, 1, [(R, 2 * n, 1), (n, 2, 0)])((W,), o, isa=isa)
            _close(o, W[:, ::2].sum(1), dtype, n)
            # strided dots, and two or three rows in the four-row chains
            _native.prepare_nest(dtype, 2, [(R, 2 * n, n, 1), (n, 2, 1, 0)])((W, B), o, isa=isa)
            _close(o, (W[:, ::2] * B).sum(1), dtype, n)


@pytest.mark.parametrize("isa", RUN_ISAS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_short_rows_summed_over_a_contiguous_block(isa, dtype, one_thread):
    """'ab->b' with b of 1 to 65 and a long: the (R, n) block is one stream
    whose element e adds to output e mod n (vectors of lcm(n, lanes)); the
    tail past the last whole period, a second visit adding to the first (an
    outer summed loop), and the rows running backwards in memory (the block
    read from its last row's start)."""
    rng = np.random.default_rng(13)
    for n in list(range(1, 34)) + [36, 40, 48, 63, 64, 65]:
        for R in (16, 17, 101):
            A = _rand(rng, (2, R, n), dtype)
            o = np.full(n, np.nan, dtype)
            _native.prepare_nest(dtype, 1, [(R, n, 0), (n, 1, 1)])((A[0],), o, isa=isa)
            _close(o, A[0].sum(0), dtype, R)
            _native.prepare_nest(dtype, 1, [(2, R * n, 0), (R, n, 0), (n, 1, 1)])(
                (A,), o, isa=isa)
            _close(o, A.sum((0, 1)), dtype, 2 * R)
            Ar = A[0, ::-1]
            o = np.full(n, np.nan, dtype)
            _native.prepare_nest(dtype, 1, [(R, -n, 0), (n, 1, 1)])((Ar,), o, isa=isa)
            _close(o, A[0].sum(0), dtype, R)


@pytest.mark.parametrize("isa", RUN_ISAS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_rows_summed_into_one_row_held_in_registers(isa, dtype, one_thread):
    """Rows of 2 elements to 16 vectors summed into one output row whose period
    is too long for the one-stream path (b = 33, 37, ...): the output row held
    in registers while the rows stream, the part past whole vectors in
    scalars; rows apart by more than their length or backwards, a second
    visit adding to the first.  Rows of a vector up to 16 elements too: a row
    stored and re-loaded per row, its last vector overlapping the one before
    it, stalled on store forwarding ('iij->j' (603,603,11) f64, 0.78x numpy);
    rows shorter than a vector, one load each from the row's start, the
    last rows in scalars where that load would pass the last row's end."""
    rng = np.random.default_rng(17)
    dt = np.dtype(dtype)
    lanes = (64 if isa == "avx512" else 32 if isa == "avx2" else 16) // (
        dt.itemsize // 2 if dt.kind == "c" else dt.itemsize)
    for n in sorted({17, 33, 37, 61, 16 * lanes - 1, 16 * lanes, 16 * lanes + 1}
                    | {m for m in (lanes, lanes + 3, 16) if lanes <= m <= 16}
                    | {m for m in (2, 3, lanes - 1) if m >= 2}):
        for R in (16, 45):
            W = _rand(rng, (2, R, n + 5), dtype)
            # (the last row one element short of its allocation's end: a
            # vector's load from a row's start must stop at the last row)
            tight = np.ascontiguousarray(W[0, :, :n + 1])
            for A, rs in [(W[0, :, :n], n + 5), (W[0, ::-1, :n], -(n + 5)),
                          (tight[:, :n], n + 1)]:
                o = np.full(n, np.nan, dtype)
                _native.prepare_nest(dtype, 1, [(R, rs, 0), (n, 1, 1)])((A,), o, isa=isa)
                _close(o, A.sum(0), dtype, R)
            _native.prepare_nest(dtype, 1, [(2, R * (n + 5), 0), (R, n + 5, 0), (n, 1, 1)])(
                (W[:, :, :n],), o, isa=isa)
            _close(o, W[:, :, :n].sum((0, 1)), dtype, 2 * R)


@pytest.mark.parametrize("isa", RUN_ISAS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_rows_at_stride_two_summed_into_one_row_held_in_registers(isa, dtype, one_thread):
    """Rows of a [..., ::2] slice summed into one output row (alone, times a
    scale per row, times a contiguous or a stride-2 row of a second input in
    either order): the row held in registers, each stride-2 vector the even
    lanes of two loads and the row's last vector the odd lanes of two loads
    starting one element early, so nothing past the row's last element is
    read -- each row here ends on its array's last element."""
    rng = np.random.default_rng(23)
    lanes = (64 if isa == "avx512" else 32 if isa == "avx2" else 16) // np.dtype(dtype).itemsize
    for n in sorted({lanes + 1, 17, 2 * lanes + 3, 33, 16 * lanes + lanes - 1} - {16 * lanes}):
        for R in (16, 45):
            for nin, loops, ins, want in _stride_two_rows(rng, R, n, dtype):
                if nin == 1 and n < 17:
                    continue
                _into_one_row_and_again(dtype, nin, loops, ins, want, R, isa)


def _stride_two_rows(rng, R, n, dtype):
    """(inputs, loops, operands, sum) of R rows of a [:, ::2] slice X summed
    into one row, alone, scaled by u, times a stride-2 row of Y or a
    contiguous row of C in either order, and with both; each row of X ends
    on its array's last element."""
    X = _rand(rng, (R, 2 * n - 1), dtype)
    Y = _rand(rng, (R, 2 * n - 1), dtype)
    C = _rand(rng, (R, n), dtype)
    u = _rand(rng, R, dtype)
    x, y, c = X[:, ::2], Y[:, ::2], C
    rx = 2 * n - 1
    return [(1, [(R, rx, 0), (n, 2, 1)], (X,), x.sum(0)),
            (2, [(R, rx, 1, 0), (n, 2, 0, 1)], (X, u), (x * u[:, None]).sum(0)),
            (2, [(R, rx, rx, 0), (n, 2, 2, 1)], (X, Y), (x * y).sum(0)),
            (2, [(R, rx, n, 0), (n, 2, 1, 1)], (X, C), (x * c).sum(0)),
            (2, [(R, n, rx, 0), (n, 1, 2, 1)], (C, X), (x * c).sum(0)),
            (3, [(R, rx, n, 1, 0), (n, 2, 1, 0, 1)], (X, C, u), (x * c * u[:, None]).sum(0)),
            (3, [(R, rx, rx, 1, 0), (n, 2, 2, 0, 1)], (X, Y, u), (x * y * u[:, None]).sum(0)),
            (3, [(R, n, rx, 1, 0), (n, 1, 2, 0, 1)], (C, X, u), (x * c * u[:, None]).sum(0))]


@pytest.mark.parametrize("isa", RUN_ISAS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_long_rows_at_stride_two_summed_into_one_row_four_at_a_time(isa, dtype, one_thread):
    """Rows of a [..., ::2] slice longer than the registers hold ('abc,a->bc'
    with c sliced) summed into one output row four at a time, alone, scaled,
    times a contiguous or a stride-2 row in either order: row counts that
    leave one to three rows, a tail past whole vectors, each row ending on
    its array's last element (so a load past it would read outside)."""
    rng = np.random.default_rng(37)
    lanes = (64 if isa == "avx512" else 32 if isa == "avx2" else 16) // np.dtype(dtype).itemsize
    for n in (17 * lanes, 17 * lanes + 3, 1031):
        for R in (2, 3, 4, 7, 18):
            for nin, loops, ins, want in _stride_two_rows(rng, R, n, dtype):
                _into_one_row_and_again(dtype, nin, loops, ins, want, R, isa)


@pytest.mark.parametrize("isa", RUN_ISAS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_products_of_rows_summed_into_one_row(isa, dtype, one_thread):
    """'ij,ij->j': two inputs' rows multiplied and summed into one output row
    -- one period stream when both blocks run end to end in one direction
    (forwards or both backwards), the row held in registers when they do not
    (one reversed, rows apart by more than their length), rows shorter than a
    vector with mixed directions through the plain rows; a second visit
    adding to the first."""
    rng = np.random.default_rng(19)
    for n in (1, 3, 4, 7, 8, 12, 16, 20, 33, 64):
        for R in (16, 45):
            X = _rand(rng, (R, n + 3), dtype)
            Y = _rand(rng, (R, n + 3), dtype)
            want = (X[:, :n] * Y[:, :n]).sum(0)
            cases = [
                (np.ascontiguousarray(X[:, :n]), n, np.ascontiguousarray(Y[:, :n]), n),
                (np.ascontiguousarray(X[::-1, :n])[::-1], -n,
                 np.ascontiguousarray(Y[::-1, :n])[::-1], -n),
                (np.ascontiguousarray(X[::-1, :n])[::-1], -n, Y[:, :n], n + 3),
                (X[:, :n], n + 3, np.ascontiguousarray(Y[:, :n]), n),
            ]
            for A, ra, B, rb in cases:
                o = np.full(n, np.nan, dtype)
                _native.prepare_nest(dtype, 2, [(R, ra, rb, 0), (n, 1, 1, 1)])(
                    (A, B), o, isa=isa)
                _close(o, want, dtype, R)
                _native.prepare_nest(dtype, 2, [(2, 0, 0, 0), (R, ra, rb, 0),
                                                (n, 1, 1, 1)])((A, B), o, isa=isa)
                _close(o, 2 * want, dtype, 2 * R)


@pytest.mark.parametrize("isa", RUN_ISAS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_short_rows_scaled_or_at_stride_two_summed_into_one_row_run_in_periods(
        isa, dtype, one_thread):
    """Rows shorter than a vector, end to end, summed into one output row
    with a scale per row ('ab,a->b', the scales contiguous or at stride 2)
    or with an input at stride 2 ('ab,ab->b' with one input [:, ::2], either
    or both, or one input alone with rows of a vector up to 16): one period
    stream, the scales spread to their lanes by a permute; row counts that end inside a period and past the last whole
    one, and a second visit adding to the first; periods of one vector (n
    dividing it) and of three run several periods a step in their own
    accumulators, the last steps' scales past the rows' end one period at
    a time."""
    rng = np.random.default_rng(43)
    lanes = (64 if isa == "avx512" else 32 if isa == "avx2" else 16) // np.dtype(dtype).itemsize
    for n in sorted({2, 3, 4, 5, 6, 7, max(2, lanes - 1)}):
        for R in (16, 45, 1001, 4103):
            A = _rand(rng, (R, n), dtype)
            B2 = _rand(rng, (R, 2 * n), dtype)
            A2 = _rand(rng, (R, 2 * n), dtype)
            w2 = _rand(rng, 2 * R, dtype)
            for w, fs in ((w2[:R].copy(), 1), (w2[::2], 2)):
                _into_one_row_and_again(dtype, 2, [(R, n, fs, 0), (n, 1, 0, 1)], (A, w),
                                        (A * w[:, None]).sum(0), R, isa)
            for x, sx, y, sy in ((A, 1, B2, 2), (A2, 2, A, 1), (A2, 2, B2, 2)):
                want = (x[:, ::sx] * y[:, ::sy]).sum(0)
                _into_one_row_and_again(dtype, 2, [(R, n * sx, n * sy, 0), (n, sx, sy, 1)],
                                        (x, y), want, R, isa)
    # one input's rows of a vector up to 16 elements at stride 2
    for n in sorted({lanes, lanes + 1, 11, 16} & set(range(lanes, 17))):
        for R in (16, 45, 1001):
            A2 = _rand(rng, (R, 2 * n), dtype)
            _into_one_row_and_again(dtype, 1, [(R, 2 * n, 0), (n, 2, 1)], (A2,),
                                    A2[:, ::2].sum(0), R, isa)


def test_short_rows_summed_into_one_row_are_planned_as_a_period_stream(one_thread):
    """The planner runs a long sum into one short output row as the period
    stream ('ab,a->b' (163404, 3) f32 0.81x numpy in transposed tiles;
    'abc,bc->ac' with bc[:, ::2] 0.62x a row at a time), and keeps a GEMM
    whose outer loop would read an input again ('ij,jk->ik' n = 3) out of
    it; results equal numpy's."""
    rng = np.random.default_rng(47)
    x = rng.standard_normal(20000).astype(np.float32)
    cases = [("ab,a->b", rng.standard_normal((10001, 3)).astype(np.float32), x[:10001]),
             ("ab,a->b", rng.standard_normal((10000, 5)), rng.standard_normal(20000)[::2]),
             ("abc,bc->ac", rng.standard_normal((1, 7001, 4)).astype(np.float32)[::-1],
              rng.standard_normal((7001, 8)).astype(np.float32)[:, ::2])]
    for subs, a, b in cases:
        (step,) = _plan_steps(subs, a, b)
        if a.shape[-1] >= nest.vector_lanes(a.itemsize):     # rows of a vector or more
            assert step.row != "prod/period", (subs, step)   # (5 f64 under AVX2) take others
        else:
            assert isinstance(step, NestStep) and step.row == "prod/period", (subs, step)
            assert "row prod/period" in str(einplan.explain(subs, a, b))
        np.testing.assert_allclose(einplan.einsum(subs, a, b), np.einsum(subs, a, b),
                                   rtol=2e-4, atol=1e-3)
    a = np.asfortranarray(rng.standard_normal((9, 3000)))
    (step,) = _plan_steps("ij,jk->ik", a, rng.standard_normal((3000, 3)))
    assert not (isinstance(step, NestStep) and step.row == "prod/period"), step


@pytest.mark.parametrize("isa", RUN_ISAS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_summed_loop_shared_by_threads_sums_into_private_copies(isa, dtype,
                                                                  restore_threads):
    """Two threads sharing a loop the output is summed along, the output
    small: each sums its part into a private copy, the copies added in
    thread order -- the period stream's rows ('ab,a->b'), and a plain nest
    whose output is not a single row (the loop shared out outside two
    output loops); the same bits on every run, a second visit adding to the
    first, an output with a gap between its rows."""
    einplan.set_num_threads(2)
    rng = np.random.default_rng(53)
    R, n = 5003, 3
    A = _rand(rng, (R, n), dtype)
    w = _rand(rng, R, dtype)
    want = (A * w[:, None]).sum(0)
    call = _native.prepare_nest(dtype, 2, [(R, n, 1, 0), (n, 1, 0, 1)], split=0, threads=2)
    o = np.full(n, np.nan, dtype)
    call((A, w), o, isa=isa)
    _close(o, want, dtype, R)
    first = o.copy()
    call((A, w), o, isa=isa)
    np.testing.assert_array_equal(o, first)
    _native.prepare_nest(dtype, 2, [(2, 0, 0, 0), (R, n, 1, 0), (n, 1, 0, 1)], split=1,
                         threads=2)((A, w), o, isa=isa)
    _close(o, 2 * want, dtype, 2 * R)
    B = _rand(rng, (R, 4, 5), dtype)
    obuf = np.full((4, 7), np.nan, dtype)
    _native.prepare_nest(dtype, 1, [(R, 20, 0), (4, 5, 7), (5, 1, 1)], split=0, threads=2)(
        (B,), obuf, isa=isa)
    _close(obuf[:, :5], B.sum(0), dtype, R)
    assert np.isnan(obuf[:, 5:]).all(), "wrote outside the output"


def test_a_small_output_summed_along_the_outermost_loop_shares_that_loop(restore_threads):
    """A GEMV's axpy form with the output's row under the summed loop
    ('ab,a->b' (22925, 316)[:, ::2] f64: one thread 5.6 ms against numpy's
    two BLAS threads 3.6): at two threads the planner shares the summed
    loop out, each thread summing into a private copy of the output (the
    same bits on every run); an output past the copies' bound keeps one
    thread."""
    einplan.set_num_threads(2)
    rng = np.random.default_rng(61)
    a = rng.standard_normal((3000, 632))[:, ::2]
    x = rng.standard_normal(3000)
    (step,) = _plan_steps("ab,a->b", a, x)
    assert step.split == 0 and step.native.threads() == 2, step
    got = einplan.einsum("ab,a->b", a, x)
    np.testing.assert_allclose(got, np.einsum("ab,a->b", a, x), rtol=1e-10)
    np.testing.assert_array_equal(einplan.einsum("ab,a->b", a, x), got)
    wide = rng.standard_normal((300, 2 * (nest.PART_MAX + 1)))[:, ::2]
    (step,) = _plan_steps("ab,a->b", wide, x[:300])
    assert step.native.threads() == 1 or step.split != 0, step


def test_period_rows_are_shared_by_threads(restore_threads):
    """At two threads the planner shares a long period stream's rows out
    ('ab,a->b' (163404, 3) f32: 0.44x numpy's two BLAS threads with the
    3-long output loop shared, 2:1), and the result equals numpy's."""
    einplan.set_num_threads(2)
    rng = np.random.default_rng(59)
    a = rng.standard_normal((163404, 3)).astype(np.float32)
    x = rng.standard_normal(163404).astype(np.float32)
    (step,) = _plan_steps("ab,a->b", a, x)
    assert step.row == "prod/period" and step.split == len(step.loops) - 2, step
    assert step.native.threads() == 2, step
    np.testing.assert_allclose(einplan.einsum("ab,a->b", a, x), np.einsum("ab,a->b", a, x),
                               rtol=2e-4, atol=1e-3)


def _plan_steps(subscripts, *ops):
    from einplan.operands import describe_operands
    from einplan.planner import make_plan
    from einplan.spec import parse_spec
    spec, arrays = parse_spec((subscripts,) + ops)
    return make_plan(spec, describe_operands(arrays)).steps


@pytest.mark.parametrize("isa", RUN_ISAS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_scaled_rows_summed_into_one_row(isa, dtype, one_thread):
    """'ij,i->j' (a GEMV's axpy form: each row times the vector's element)
    and 'ij,ij,i->j': the output row held in registers (scalars for rows
    shorter than a vector, one to three whole vectors unrolled, more in a
    loop), rows in pairs, the part past whole vectors as the row's last
    vector (overlapping); an odd row count, rows apart by more than their
    length or reversed, and a second visit adding to the first."""
    rng = np.random.default_rng(29)
    dt = np.dtype(dtype)
    lanes = (64 if isa == "avx512" else 32 if isa == "avx2" else 16) // (
        dt.itemsize // 2 if dt.kind == "c" else dt.itemsize)
    for n in sorted({1, 2, 3, lanes - 1, lanes, lanes + 1, 2 * lanes, 3 * lanes + 1, 6, 12,
                     37, 16 * lanes, 17 * lanes - 1}):
        for R in (16, 45):
            W = _rand(rng, (R, n + 3), dtype)
            V = _rand(rng, (R, n + 3), dtype)
            u = _rand(rng, R, dtype)
            for A, ra in [(W[:, :n], n + 3), (W[::-1, :n], -(n + 3))]:
                want = (A * u[:, None]).sum(0)
                o = np.full(n, np.nan, dtype)
                _native.prepare_nest(dtype, 2, [(R, ra, 1, 0), (n, 1, 0, 1)])((A, u), o, isa=isa)
                _close(o, want, dtype, R)
                _native.prepare_nest(dtype, 2, [(2, 0, 0, 0), (R, ra, 1, 0), (n, 1, 0, 1)])(
                    (A, u), o, isa=isa)
                _close(o, 2 * want, dtype, 2 * R)
                o = np.full(n, np.nan, dtype)
                _native.prepare_nest(dtype, 3, [(R, ra, n + 3, 1, 0), (n, 1, 1, 0, 1)])(
                    (A, V, u), o, isa=isa)
                _close(o, (A * V[:, :n] * u[:, None]).sum(0), dtype, R)


@pytest.mark.parametrize("isa", RUN_ISAS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_long_rows_summed_into_one_row_four_at_a_time(isa, dtype, one_thread):
    """Rows longer than the registers hold ('ij,jk->ki' with i = 1: a GEMV's
    axpy form; 'ab->b', 'ij,ij->j' with long rows) added into the output
    four at a time: row counts that leave one to three rows (left out of
    the last block's sum), a scale per row, two inputs, rows reversed, a
    second visit adding, a tail past whole vectors."""
    rng = np.random.default_rng(31)
    for n in (300, 1031):
        for R in (1, 2, 3, 4, 5, 7, 18):
            X, Y = _rand(rng, (R, n + 1), dtype), _rand(rng, (R, n + 1), dtype)
            u = _rand(rng, R, dtype)
            for A, ra in [(X[:, :n], n + 1), (X[::-1, :n], -(n + 1))]:
                o = np.full(n, np.nan, dtype)
                _native.prepare_nest(dtype, 1, [(R, ra, 0), (n, 1, 1)])((A,), o, isa=isa)
                _close(o, A.sum(0), dtype, R)
                _native.prepare_nest(dtype, 2, [(R, ra, 1, 0), (n, 1, 0, 1)])((A, u), o, isa=isa)
                _close(o, (A * u[:, None]).sum(0), dtype, R)
                _native.prepare_nest(dtype, 3, [(2, 0, 0, 0, 0), (R, ra, n + 1, 1, 0),
                                                (n, 1, 1, 0, 1)])((A, Y, u), o, isa=isa)
                _close(o, 2 * (A * Y[:, :n] * u[:, None]).sum(0), dtype, 2 * R)


@pytest.mark.parametrize("isa", RUN_ISAS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_tiles_copy_crossed_inputs(isa, dtype, one_thread):
    """Rectangular tiles (a side whole, the other blocked) whose inputs
    strided along the row are copied per tile into contiguous rows: 'ab,ba->ab'
    with B reversed or sliced along its unit axis, the tile's rows end to end
    (one row: 'ab,ab->ab' with A in F order, a dot 'ab,ba->'), summed rows
    ('ab,ba->a'), and edges that do not divide the extents."""
    rng = np.random.default_rng(13)
    for m, n in [(37, 11), (300, 7), (9, 130), (64, 64)]:
        A = _rand(rng, (m, n), dtype)
        Bw = _rand(rng, (n, 2 * m), dtype)
        for B, sb in [(Bw[::-1, :m], (-2 * m, 1)), (Bw[:, ::2], (2 * m, 2)),
                      (Bw[:, :m], (2 * m, 1))]:
            for ti, tj in [(8, n), (m, 3), (5, 7), (16, 16)]:
                kw = dict(tile=ti, tile_row=tj)
                o = np.full((m, n), np.nan, dtype)
                _native.prepare_nest(dtype, 2, [(m, n, sb[1], n), (n, 1, sb[0], 1)], **kw)(
                    (A, B), o, isa=isa)
                _close(o, A * B.T, dtype, 1)
                o = np.full(m, np.nan, dtype)
                _native.prepare_nest(dtype, 2, [(m, n, sb[1], 1), (n, 1, sb[0], 0)], **kw)(
                    (A, B), o, isa=isa)
                _close(o, (A * B.T).sum(1), dtype, n)
                o = np.empty((), dtype)
                _native.prepare_nest(dtype, 2, [(m, n, sb[1], 0), (n, 1, sb[0], 0)], **kw)(
                    (A, B), o, isa=isa)
                _close(o, (A * B.T).sum(), dtype, m * n)
        # A in F order times C-order D: A copied per tile, its rows end to end
        F = np.asfortranarray(A)
        D = _rand(rng, (m, n), dtype)
        o = np.full((m, n), np.nan, dtype)
        _native.prepare_nest(dtype, 2, [(m, 1, n, n), (n, m, 1, 1)], tile=8, tile_row=n)(
            (F, D), o, isa=isa)
        _close(o, A * D, dtype, 1)


@pytest.mark.parametrize("isa", RUN_ISAS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_rows_summed_into_one_row_keep_infs(isa, dtype, one_thread):
    """An inf or nan in the last rows of a sum into one output row ('ab->b',
    the GEMV's axpy form 'ab,a->b' with unit weights) gives numpy's inf or
    nan: a last block of fewer than four rows adds only its own rows (the
    repeated row's 0 weight made inf * 0 = nan)."""
    for n in (5, 33, 300, 1031):
        for R in (5, 6, 7, 17):
            for val in (np.inf, -np.inf, np.nan):
                for row in (0, R - 1):
                    A = np.ones((R, n), dtype)
                    A[row, n // 2] = val
                    u = np.ones(R, dtype)
                    want = np.einsum("ab->b", A)
                    o = np.full(n, np.nan, dtype)
                    _native.prepare_nest(dtype, 1, [(R, n, 0), (n, 1, 1)])((A,), o, isa=isa)
                    np.testing.assert_array_equal(o, want)
                    if dtype.startswith("float"):
                        o[...] = 0
                        _native.prepare_nest(dtype, 2, [(R, n, 1, 0), (n, 1, 0, 1)])(
                            (A, u), o, isa=isa)
                        np.testing.assert_array_equal(o, np.einsum("ab,a->b", A, u))


@pytest.mark.parametrize("isa", RUN_ISAS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_short_outer_rows_run_in_periods(isa, dtype, one_thread):
    """An outer product whose rows (one shared row x times a scale per row)
    are shorter than 17 elements and end to end in the output runs in
    vectors of lcm(n, lanes) elements, the scales spread by a permute: rows
    of every length that is not a whole number of vectors, row counts around
    the period and past it (the rows left run one by one), scales at unit,
    wider and negative strides, written once then added to (an outer summed
    loop of 2); each element has the bits of y * x."""
    rng = np.random.default_rng(37)
    for n in (1, 2, 3, 5, 6, 7, 9, 12, 15):
        for R in (16, 17, 61, 200):
            x = _rand(rng, (n,), dtype)
            yw = _rand(rng, (3 * R,), dtype)
            for y, fy in [(yw[:R], 1), (yw[::3], 3), (yw[R - 1::-1], -1)]:
                want = y[:, None] * x[None, :]
                o = np.full((R, n), np.nan, dtype)
                _native.prepare_nest(dtype, 2, [(R, 0, fy, n), (n, 1, 0, 1)])((x, y), o, isa=isa)
                np.testing.assert_array_equal(o, want)
                o = np.full((R, n), np.nan, dtype)
                _native.prepare_nest(dtype, 2, [(2, 0, 0, 0), (R, 0, fy, n), (n, 1, 0, 1)])(
                    (x, y), o, isa=isa)
                np.testing.assert_array_equal(o, want + want)


@pytest.mark.parametrize("isa", RUN_ISAS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_short_shared_row_at_a_stride_is_gathered_once(isa, dtype, one_thread):
    """An outer product whose shared row x is short and strided (A in F
    order: 'bij,bkj->bki' (7,6,1) x (7,65502,1), i of A at stride 7) gathers
    x once into a contiguous row, then runs as a contiguous one: rows of
    every length up to 16, x at strides 2, 7 and -3, output rows end to end
    and apart (another kernel takes those), written once then added to."""
    rng = np.random.default_rng(41)
    for n in (1, 3, 6, 8, 9, 16):
        for R in (16, 61):
            y = _rand(rng, (R,), dtype)
            for sx in (2, 7, -3):
                xw = _rand(rng, (abs(sx) * n,), dtype)
                x = xw[::sx] if sx > 0 else xw[::sx][:n]
                want = y[:, None] * x[None, :]
                for ow in (n, n + 5):
                    o = np.full((R, ow), np.nan, dtype)
                    _native.prepare_nest(dtype, 2, [(2, 0, 0, 0), (R, 0, 1, ow), (n, sx, 0, 1)])(
                        (x, y), o, isa=isa)
                    np.testing.assert_array_equal(o[:, :n], want + want)


@pytest.mark.parametrize("isa", RUN_ISAS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_rows_at_a_small_stride_are_picked_by_permutes(isa, dtype, one_thread):
    """Elementwise rows with one input at a stride of 3 to 7 ('abc,cba->abc'
    with a = 3: B's rows at stride 3), alone, times a contiguous row (either
    input), or with a scale per row too: under AVX-512 each vector's lanes
    are picked from whole vectors by permutes, a vector only while its loads
    end inside the row (the strided input's last row ends on its
    allocation's last element), the rest element by element; output rows
    end to end and apart, written over NaNs and then added to."""
    rng = np.random.default_rng(53)
    st = np.lib.stride_tricks.as_strided
    for S in (3, 4, 5, 6, 7):
        for n in (9, 16, 17, 19, 33, 40, 65):
            for R in (1, 4):
                rx = S * n + 2
                xf = _rand(rng, ((R - 1) * rx + (n - 1) * S + 1,), dtype)
                it = xf.itemsize
                x = st(xf, (R, n), (rx * it, S * it))
                y = _rand(rng, (R, n), dtype)
                w = _rand(rng, (R,), dtype)
                for ow in (n, n + 3):
                    cases = [((x,), [(R, rx, ow), (n, S, 1)], x),
                             ((x, y), [(R, rx, n, ow), (n, S, 1, 1)], x * y),
                             ((y, x), [(R, n, rx, ow), (n, 1, S, 1)], y * x),
                             ((x, y, w), [(R, rx, n, 1, ow), (n, S, 1, 0, 1)],
                              x * y * w[:, None])]
                    for ins, loops, want in cases:
                        nin = len(ins)
                        o = np.full((R, ow), np.nan, dtype)
                        _native.prepare_nest(dtype, nin, loops)(ins, o, isa=isa)
                        np.testing.assert_allclose(o[:, :n], want, rtol=1e-6 if dtype == "float32" else 1e-13)
                        again = [(2,) + (0,) * (nin + 1)] + loops
                        _native.prepare_nest(dtype, nin, again)(ins, o, isa=isa)
                        np.testing.assert_allclose(o[:, :n], 2 * want,
                                                   rtol=1e-6 if dtype == "float32" else 1e-13)


@pytest.mark.parametrize("isa", RUN_ISAS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_crossed_inputs_meet_in_registers(isa, dtype, one_thread):
    """Tiles of two inputs crossed in their unit strides (x unit along the
    row, y unit along the loop around it) run the transposing kernel, y read
    in place a vector of columns at a time: every output form (elementwise,
    every row into one, a sum per row at unit and wider strides, one sum),
    written once and then added to (an outer summed loop of 2), x's rows and
    y's columns walked backwards, y's rows at stride 2 (a slice: the last
    vector of rows loads no element past its last), x's rows at stride 2
    (a slice whose last row ends on its allocation's last element), and
    tiles whose edges leave rows and columns past the last vector."""
    rng = np.random.default_rng(29)
    for m, n in [(37, 11), (9, 130), (64, 64), (3, 5), (300, 7), (17, 33)]:
        Aw = _rand(rng, (m, n), dtype)
        Ao = _rand(rng, (m, 2 * n - 1), dtype)     # its [:, ::2] ends on the array's end
        Bw = _rand(rng, (n, 2 * m), dtype)
        Bo = _rand(rng, (n, 2 * m - 1), dtype)
        for A, xs, xr in [(Aw, 1, n), (Aw[::-1], 1, -n), (Ao[:, ::2], 2, 2 * n - 1)]:
            for B, ys, yi in [(Bw[:, :m], 1, 2 * m), (Bw[::-1, :m], 1, -2 * m),
                              (Bo[:, ::2], 2, 2 * m - 1)]:
                P = A * B.T
                for ti, tj in [(m, n), (5, 7), (8, 2048), (m, 3)]:
                    kw = dict(tile=ti, tile_row=tj)
                    outs = [((m, n), n, 1, P), ((n,), 0, 1, P.sum(0)), ((m,), 1, 0, P.sum(1)),
                            ((2 * m,), 2, 0, P.sum(1)), ((), 0, 0, P.sum())]
                    for shape, orr, oi, want in outs:
                        o = np.full(shape, np.nan, dtype)
                        loops = [(2, 0, 0, 0), (m, xr, ys, orr), (n, xs, yi, oi)]
                        _native.prepare_nest(dtype, 2, loops, transposed=True, **kw)(
                            (A, B), o, isa=isa)
                        got = o[::2] if shape == (2 * m,) else o
                        _close(got, 2 * want, dtype, 2 * m * n)


@pytest.mark.parametrize("isa", RUN_ISAS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fewer_crossed_rows_than_a_vector(isa, dtype, one_thread):
    """Tiles of 2 .. lanes-1 rows of y, adjacent, load each of y's columns as
    a whole vector (lanes past the rows unused) and transpose: every output
    form, written once and added to, x's rows apart, at stride 2 along
    them, or one shared row (stride 0), y's columns just its rows apart (so that the last columns'
    loads would pass its end: copies of y end on their allocation, which the
    sanitizer build checks) or further, and columns left past the vectors."""
    lanes = (64 if isa == "avx512" else 32 if isa == "avx2" else 16) // np.dtype(dtype).itemsize
    rng = np.random.default_rng(41)
    for R in range(2, lanes):
        for n in sorted({lanes - 1, lanes + 1, 2 * lanes + 3, 5 * lanes - 1, 67}):
            for yi in (R, R + 3):
                yw = _rand(rng, ((n - 1) * yi + R,), dtype).copy()   # ends on its last row
                B = np.lib.stride_tricks.as_strided(yw, (n, R), (yi * yw.itemsize,
                                                                 yw.itemsize))
                for A, xs, xr in [(_rand(rng, (R, n), dtype), 1, n),
                                  (_rand(rng, (R, 2 * n - 1), dtype)[:, ::2], 2, 2 * n - 1),
                                  (np.broadcast_to(_rand(rng, (n,), dtype), (R, n)), 1, 0)]:
                    P = A * B.T
                    outs = [((R, n), n, 1, P), ((n,), 0, 1, P.sum(0)), ((R,), 1, 0, P.sum(1)),
                            ((), 0, 0, P.sum())]
                    for shape, orr, oi, want in outs:
                        o = np.full(shape, np.nan, dtype)
                        loops = [(2, 0, 0, 0), (R, xr, 1, orr), (n, xs, yi, oi)]
                        _native.prepare_nest(dtype, 2, loops, transposed=True, tile=R,
                                             tile_row=2048)((A, yw), o, isa=isa)
                        _close(o, 2 * want, dtype, 2 * R * n)


def test_crossed_inputs_plan_the_transposing_kernel():
    """'ab,ab->' of a Fortran and a C array (and 'ab,ba->ab', and x a
    [:, ::2] slice) plan the transposing kernel in tiles of every row by a
    run of the row, and say so; a y walked backwards across its rows,
    complex, rows of middling length in tiles of many rows past L2 (their
    products not summed along the row), or a few rows of y at stride 2 in
    long rows keep the copied tiles."""
    from einplan.nest import TPAIR_ROW, TPAIR_COPY_RUN, vector_lanes
    A = np.asfortranarray(np.ones((3000, 300)))
    B = np.ones((3000, 300))
    st = _plan_for("ab,ab->", A, B).steps[0]
    assert st.row == "sum/transposed"
    assert (st.tile, st.tile_row) == (300, TPAIR_ROW)
    text = str(einplan.explain("ab,ab->", A, B))
    assert "transposed in registers" in text
    st = _plan_for("ab,ba->ab", B, np.ones((300, 3000))).steps[0]
    assert st.row == "prod/transposed"
    st = _plan_for("ab,ba->", B[:, ::2], np.ones((150, 6000))[:, ::2]).steps[0]
    assert st.row == "sum/transposed"
    st = _plan_for("ab,ba->ab", B, np.ones((300, 3000))[:, ::-1]).steps[0]
    assert st.row != "prod/transposed" and st.tile
    Bc = B.astype(complex)
    st = _plan_for("ab,ab->", A.astype(complex), Bc).steps[0]
    assert not st.row.endswith("transposed")
    # rows of middling length past L2 keep the copies; in cache they transpose
    A3 = np.ones((36, 1885, 111), np.float32)
    B3 = np.ones((36, 111, 1885), np.float32)
    st = _plan_for("abc,acb->abc", A3, B3).steps[0]
    assert st.tile and st.row == "prod/strided"
    st = _plan_for("abc,acb->abc", A3[:1, :200].copy(), B3[:1, :, :200].copy()).steps[0]
    assert st.row == "prod/transposed"
    A4 = np.ones((4, 52631, 38), np.float32)
    st = _plan_for("abc,acb->abc", A4, np.ones((4, 38, 52631), np.float32)).steps[0]
    assert st.tile and st.row == "prod/strided"
    # ... but rows of 20 or fewer, and tiles of a few vectors of rows, transpose
    st = _plan_for("abc,acb->abc", A4[..., :20], np.ones((4, 20, 52631), np.float32)).steps[0]
    assert st.row == "prod/transposed"
    # ... and so do rows of any length whose products are summed along them
    A7 = np.ones((553, 43, 126))
    B7 = np.ones((126, 553, 43)).transpose(1, 2, 0)
    assert _plan_for("abc,abc->abc", A7, B7).steps[0].row == "prod/strided"
    st = _plan_for("abc,abc->a", A7, B7).steps[0]
    assert st.row == "sum/transposed"
    np.testing.assert_allclose(einplan.einsum("abc,abc->a", A7, B7), np.full(553, 43 * 126.0))
    e = TPAIR_COPY_RUN * vector_lanes(8) - 1
    A5 = np.ones((38, 5, 218, e), order="F")
    st = _plan_for("abcd,abcd->", A5, np.ones((38, 5, 218, 2 * e))[..., ::2]).steps[0]
    assert (st.tile, st.row) == (e, "sum/transposed")
    # fewer rows than a vector at stride 2 in y, in long rows, are copied
    r = vector_lanes(4) - 1
    x6 = np.ones((r, 2 * 8192), np.float32)[:, ::2]
    y6 = np.ones((8192, 2 * r), np.float32)[:, ::2]
    st = _plan_for("ab,ba->a", x6, y6).steps[0]
    assert st.tile and not st.row.endswith("transposed")
    np.testing.assert_allclose(einplan.einsum("ab,ba->a", x6, y6), np.full(r, 8192.0))
    np.testing.assert_allclose(einplan.einsum("ab,ab->", A, B), 3000 * 300)


@pytest.mark.parametrize("isa", RUN_ISAS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_tile_copy_compacts_rows_at_stride_two(isa, dtype, one_thread):
    """A tile's copy of an input whose tile rows run at stride 2 ('ab,ba->a'
    with B[:, ::2] and A's unit axis the nest's row): each column compacted,
    then transposed, for tiles of more than a vector of rows and fewer;
    B's buffer ends at its last element, so a read past it shows under the
    sanitizer."""
    rng = np.random.default_rng(21)
    for m, n in [(300, 40), (64, 64), (37, 11), (517, 9)]:
        A = _rand(rng, (m, n), dtype)
        flat = _rand(rng, ((n - 1) * 2 * m + 2 * (m - 1) + 1,), dtype)
        item = flat.itemsize
        B = np.lib.stride_tricks.as_strided(flat, (n, m), (2 * m * item, 2 * item))
        for ti, tj in [(64, 16), (m, 8), (9, n), (16, 16)]:
            kw = dict(tile=ti, tile_row=tj)
            o = np.full(m, np.nan, dtype)
            _native.prepare_nest(dtype, 2, [(m, n, 2, 1), (n, 1, 2 * m, 0)], **kw)(
                (A, B), o, isa=isa)
            _close(o, (A * B.T).sum(1), dtype, n)
            o = np.full((m, n), np.nan, dtype)
            _native.prepare_nest(dtype, 2, [(m, n, 2, n), (n, 1, 2 * m, 1)], **kw)(
                (A, B), o, isa=isa)
            _close(o, A * B.T, dtype, 1)


@pytest.mark.parametrize("isa", RUN_ISAS)
def test_tile_copy_of_complex128_from_cache_and_from_memory(isa, one_thread):
    """A tile's copy of a complex128 input unit-stride along the loop around
    the row ('ab,ab->' with B in F order): from cache it walks every source
    row a pair of elements at a time; past a quarter of L3 it reads four
    source rows in step (18 MB an input here) -- odd tile rows, rows not a
    multiple of four, and a source not 32-byte aligned, into a sum, one
    output row per tile row and the product itself."""
    dtype = "complex128"
    rng = np.random.default_rng(29)
    for m, n in [(37, 130), (1031, 1100)]:
        A = _rand(rng, (m, n), dtype)
        Bw = np.asfortranarray(_rand(rng, (m + 1, n), dtype))
        B = Bw[1:]                      # 16 bytes past the buffer's start
        for ti, tj in [(64, 64), (9, 30), (m, 7)]:
            kw = dict(tile=ti, tile_row=tj)
            o = np.empty((), dtype)
            _native.prepare_nest(dtype, 2, [(m, n, 1, 0), (n, 1, m + 1, 0)], **kw)(
                (A, B), o, isa=isa)
            _close(o, (A * B).sum(), dtype, m * n)
            o = np.full(m, np.nan, dtype)
            _native.prepare_nest(dtype, 2, [(m, n, 1, 1), (n, 1, m + 1, 0)], **kw)(
                (A, B), o, isa=isa)
            _close(o, (A * B).sum(1), dtype, n)
        o = np.full((m, n), np.nan, dtype)
        _native.prepare_nest(dtype, 2, [(m, n, 1, n), (n, 1, m + 1, 1)], tile=64, tile_row=64)(
            (A, B), o, isa=isa)
        _close(o, A * B, dtype, 1)


@pytest.mark.parametrize("isa", RUN_ISAS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_tile_copy_of_a_few_rows_end_to_end(isa, dtype, one_thread):
    """A tile's copy of an input whose 2-7 tile rows are end to end along
    the row's axis ('ab,ba->a' with B (n, 4) contiguous, the
    'ia,ib,ic->abc' pattern; 'ab,b->a' on an F-order (3, n) complex64 A,
    copied as float64): de-interleaved by vector shuffles (four rows) or
    by two-source permutes (the others, 64-byte vectors), the columns past
    whole vectors one by one; rows apart (B[:, :m] of a wider array) by
    the element copy."""
    rng = np.random.default_rng(23)
    for m in (2, 3, 4, 5, 6, 7):
        for n in (5, 16, 37, 300):
            for wide in (m, m + 3):
                A = _rand(rng, (m, n), dtype)
                B = _rand(rng, (n, wide), dtype)[:, :m]
                sb = B.strides[0] // B.itemsize
                for ti, tj in [(m, 16), (m, n), (8, 64)]:
                    kw = dict(tile=ti, tile_row=tj)
                    o = np.full(m, np.nan, dtype)
                    _native.prepare_nest(dtype, 2, [(m, n, 1, 1), (n, 1, sb, 0)], **kw)(
                        (A, B), o, isa=isa)
                    _close(o, (A * B.T).sum(1), dtype, n)
                    o = np.full((m, n), np.nan, dtype)
                    _native.prepare_nest(dtype, 2, [(m, n, 1, n), (n, 1, sb, 1)], **kw)(
                        (A, B), o, isa=isa)
                    _close(o, A * B.T, dtype, 1)
                    # with a scale per row (not the transposed-pair kernel)
                    u = _rand(rng, m, dtype)
                    o = np.full(m, np.nan, dtype)
                    _native.prepare_nest(dtype, 3, [(m, n, 1, 1, 1), (n, 1, sb, 0, 0)], **kw)(
                        (A, B, u), o, isa=isa)
                    _close(o, (A * B.T).sum(1) * u, dtype, n)


@pytest.mark.parametrize("isa", RUN_ISAS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_inputs_every_row_shares_are_multiplied_once(isa, dtype, one_thread):
    """Row sums of three or four inputs whose first two or three are the same
    contiguous row for every row ('ij,j,jk->ik' with i = 1 and C in F
    order): their product formed once, then the rows dotted against it as
    two-input rows, into an output element each or summed into one (rows
    past one block of 2048, the product in the thread's scratch buffer); a
    shared input that is not among the first ones takes the general rows."""
    rng = np.random.default_rng(37)
    for n, R in [(8, 5), (8, 33), (13, 100), (300, 7), (2049, 5), (5003, 9)]:
        a, b, c = (_rand(rng, n, dtype) for _ in range(3))
        C = _rand(rng, (R, n), dtype)
        o = np.full(R, np.nan, dtype)
        _native.prepare_nest(dtype, 3, [(R, 0, 0, n, 1), (n, 1, 1, 1, 0)])((a, b, C), o, isa=isa)
        _close(o, C @ (a * b), dtype, n)
        _native.prepare_nest(dtype, 4, [(R, 0, 0, 0, n, 1), (n, 1, 1, 1, 1, 0)])(
            (a, b, c, C), o, isa=isa)
        _close(o, C @ (a * b * c), dtype, n)
        _native.prepare_nest(dtype, 3, [(R, 0, n, 0, 1), (n, 1, 1, 1, 0)])((a, C, b), o, isa=isa)
        _close(o, C @ (a * b), dtype, n)
        one = np.full((), np.nan, dtype)
        _native.prepare_nest(dtype, 3, [(R, 0, 0, n, 0), (n, 1, 1, 1, 0)])((a, b, C), one, isa=isa)
        _close(one, (C @ (a * b)).sum(), dtype, n * R)


def test_short_dot_rows_against_a_shared_vector_are_priced_per_vector_of_rows():
    """'ij,j,jk->ik' (1, 8) x (8,) x (8, 33471) F f64: one nest whose rows of
    8 are dotted against A's row times v, a vector of rows at a time -- 45 us
    against 70 for the path through a (8, 33471) intermediate; priced at a
    row start per row the nest cost twice the path."""
    rng = np.random.default_rng(41)
    a = np.asfortranarray(rng.random((1, 8)))
    v = rng.random(8)
    c = np.asfortranarray(rng.random((8, 33471)))
    plan = _plan_for("ij,j,jk->ik", a, v, c)
    assert len(plan.steps) == 1 and isinstance(plan.steps[0], NestStep), plan.steps
    assert nest.rows_per_start(plan.steps[0].loops, 8) == (nest.vector_lanes(8), 1)
    _close(einplan.einsum("ij,j,jk->ik", a, v, c), np.einsum("ij,j,jk->ik", a, v, c),
           "float64", 8)


def test_long_rows_against_shared_inputs_are_priced_folded():
    """'ij,j,jk->ik' (1, 3391) x (3391,) x (3391, 4077) F f64: rows past 2048
    elements fold A's row times v once too (the product in the thread's
    scratch buffer), and the planner prices them so (1.65x faster than three
    inputs a row, 1.17x numpy)."""
    rng = np.random.default_rng(43)
    a, v = rng.random((1, 3391)), rng.random(3391)
    c = np.asfortranarray(rng.random((3391, 40)))
    plan = _plan_for("ij,j,jk->ik", a, v, c)
    assert len(plan.steps) == 1 and isinstance(plan.steps[0], NestStep), plan.steps
    assert nest.rows_per_start(plan.steps[0].loops, 8)[1] == 1
    _close(einplan.einsum("ij,j,jk->ik", a, v, c), np.einsum("ij,j,jk->ik", a, v, c),
           "float64", 3391)


def test_four_rows_end_to_end_are_copied_not_transposed():
    """'ab,ab->' (4, n) C x F order: B's four rows are end to end along b.
    With fewer rows than a vector, the tiles copy B (de-interleaved a
    vector at a time) instead of running the transposing kernel on partial
    vectors of rows (f32 on AVX2: 171 us transposed, 61 copied at n =
    40000); five rows, or four that fill a vector, keep the transposing
    kernel."""
    rng = np.random.default_rng(29)
    for m, dtype in [(4, np.float32), (4, np.float64), (5, np.float32)]:
        a = rng.random((m, 3001)).astype(dtype)
        b = np.asfortranarray(rng.random((m, 3001)).astype(dtype))
        st = _plan_for("ab,ab->", a, b).steps[0]
        copied = m == 4 < nest.vector_lanes(a.itemsize)
        assert st.tile, st
        assert st.row.endswith("transposed") != copied, (m, dtype, st.row)
        _close(einplan.einsum("ab,ab->", a, b), np.einsum("ab,ab->", a, b), a.dtype, a.size)


@pytest.mark.parametrize("isa", RUN_ISAS)
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_short_complex_dots_summed_into_one_element(isa, dtype, one_thread):
    """Many short complex dots summed into one element ('abcd,bcad->' with d
    = 8 innermost; 'abcd,badc->' with B's rows at stride 2), either input or
    both at stride 2: rows in vector accumulators, partial sums of NB
    elements combined pairwise, a later visit adds.  Each strided input's
    last row ends on its allocation's last element (a vector's loads stay
    inside the row)."""
    rng = np.random.default_rng(17)
    st = np.lib.stride_tricks.as_strided
    for n in (1, 2, 3, 5, 7, 8, 12, 16, 33):
        for R in (2, 300, 3001):
            for sx, sy in ((1, 1), (2, 1), (1, 2), (2, 2)):
                ra, rb = sx * n + 2, sy * n
                af = _rand(rng, ((R - 1) * ra + (n - 1) * sx + 1,), dtype)
                bf = _rand(rng, ((R - 1) * rb + (n - 1) * sy + 1,), dtype)
                it = af.itemsize
                A = st(af, (R, n), (ra * it, sx * it))
                B = st(bf, (R, n), (rb * it, sy * it))
                o = np.empty((), dtype)
                _native.prepare_nest(dtype, 2, [(R, ra, rb, 0), (n, sx, sy, 0)])(
                    (A, B), o, isa=isa)
                _close(o, (A * B).sum(), dtype, R * n)
                _native.prepare_nest(dtype, 2, [(2, 0, 0, 0), (R, ra, rb, 0), (n, sx, sy, 0)])(
                    (A, B), o, isa=isa)
                _close(o, 2 * (A * B).sum(), dtype, R * n)


def test_tile_shapes_take_the_short_side_whole():
    """A crossed pair of loops with a short row is tiled whole rows by a
    block of the long side (two lines of the copied input at least), a long
    pair square, and the explain report says so ('abc,acb->abc' with c =
    111, 'ab,ba->ab' with B reversed along its unit axis: both keep the
    copied tiles)."""
    from einplan.nest import nest_step, PACK_BYTES
    sizes = {"a": 36, "b": 1885, "c": 111}
    st = nest_step(None, [(0, "abc", (1885 * 111, 111, 1)), (1, "acb", (-1885 * 111, 1885, 1))],
                   0, "abc", {"a": 1885 * 111, "b": 111, "c": 1}, sizes, np.dtype("float32"))
    assert st.loops[-1].labels == "c" and st.tile_row == 111
    assert 8 <= st.tile and st.tile * 111 * 4 <= PACK_BYTES
    sizes = {"a": 3000, "b": 2000}
    st = nest_step(None, [(0, "ab", (2000, 1)), (1, "ba", (3000, -1))], 0, "ab",
                   {"a": 2000, "b": 1}, sizes, np.dtype("float64"))
    assert st.tile == st.tile_row and st.tile * st.tile * 8 <= PACK_BYTES
    A = np.ones((50, 111), np.float32)
    B = np.ones((111, 50), np.float32)[:, ::-1]
    text = str(einplan.explain("ab,ba->ab", A, B))
    assert "tiles 50x111" in text
    # whole rows of 501: at least two lines (32 float32) of the copied B per
    # row of it, not the 16 rows that keep the copy within PACK_BYTES (A at
    # stride 3 along its rows: at stride 1 or 2 the pair transposes instead)
    sizes = {"a": 3663, "b": 501}
    st = nest_step(None, [(0, "ab", (1503, 3)), (1, "ba", (3663, 1))], 0, "ab",
                   {"a": 501, "b": 1}, sizes, np.dtype("float32"))
    assert (st.tile, st.tile_row) == (32, 501), st


def test_short_rows_sharing_lines_are_read_in_place_not_tiled(monkeypatch):
    """A row shorter than PACK_MIN_ROW whose strided input shares lines
    along it ('abcd->bda' (6,95,37,5) f32: the row c at stride 5 under d)
    spans a few lines the next rows find in L1: no tiles (570 tiles of 5 x
    37 copied ran 125 us, in place 45, numpy 77).  A longer row keeps them,
    and so does a short one a line an element along it, whose tiles make
    SIMD rows ('abc,cba->abc' (14339,31,1) x (1,31,14339) f32: 386 us in
    place, 177 tiled).  The row c is the order of a 1 MiB L2 (Zen 4); under
    a 512 KiB one the order ends in the contiguous d instead, and runs so
    (Zen 3: 43 us, with the row c 64-85, numpy 97-100)."""
    from einplan.nest import PACK_MIN_ROW, nest_step
    f32 = np.dtype("float32")
    with monkeypatch.context() as mp:
        mp.setattr(nest, "l2_bytes", lambda: 1 << 20)
        nest.l2_resident.cache_clear()
        try:
            for c, tiled in ((37, False), (PACK_MIN_ROW - 1, False), (PACK_MIN_ROW, True)):
                st = nest_step(None, [(0, "abcd", (95 * c * 5, c * 5, 5, 1))], 0, "bda",
                               {"b": 5, "d": 1, "a": 95 * 5},
                               {"a": 6, "b": 95, "c": c, "d": 5}, f32)
                assert st.loops[-1].labels == "c" and bool(st.tile) == tiled, (c, st)
        finally:
            nest.l2_resident.cache_clear()
    st = nest_step(None, [(0, "ab", (31, 1)), (1, "ba", (14339, 1))], 0, "ab",
                   {"a": 31, "b": 1}, {"a": 14339, "b": 31}, f32)
    assert st.tile, st
    rng = np.random.default_rng(12)
    x = rng.standard_normal((6, 95, 37, 5)).astype(np.float32)
    _close(einplan.einsum("abcd->bda", x), np.einsum("abcd->bda", x), np.float32, 37)


def test_memory_order_is_not_given_up_for_a_sliver_of_calls(monkeypatch):
    """The outer loops leave memory order for fewer calls of the rows kernel
    only when that saves ORDER_TRAFFIC of the modelled cost: 'abcd->ac'
    (65,23,42,1) f64 with the summed b outside a saves 42 of 65 calls and
    reads rows of 336 bytes 7.7 KB apart (35-71 us on Zen 3; a outside, one
    stream, 18-26; numpy 25-43).  Many calls of short rows still give way
    ('abc->b' (40,2,588) F order: 588 calls of two rows with c outside).
    The caches are pinned to Zen 3's (512 KiB L2), where the two orders of
    'abcd->ac' move the same modelled bytes."""
    with monkeypatch.context() as mp:
        mp.setattr(nest, "l2_bytes", lambda: 512 << 10)
        nest.l2_resident.cache_clear()
        try:
            table = {"a": (65, (966, 42)), "b": (23, (42, 0)), "c": (42, (1, 1))}
            loops = lambda order: [table[c] for c in order]
            assert nest.traffic(loops("abc"), 8) == nest.traffic(loops("bac"), 8)
            assert nest._order_cost(loops("bac"), 8) < nest._order_cost(loops("abc"), 8)
            assert nest.order_loops(table, 8) == ["a", "b", "c"]
            # F order (40,2,588): strides a 1, b 40, c 80; the output b
            table = {"a": (40, (1, 0)), "b": (2, (40, 1)), "c": (588, (80, 0))}
            assert nest.order_loops(table, 8)[0] == "b", nest.order_loops(table, 8)
        finally:
            nest.l2_resident.cache_clear()
    x = np.random.default_rng(3).standard_normal((65, 23, 42, 1))
    _close(einplan.einsum("abcd->ac", x), np.einsum("abcd->ac", x), np.float64, 23)


def test_two_rows_sharing_lines_go_outside_for_tiles(monkeypatch):
    """'abc,cba->' (2, b, c): the two a rows share y's lines, so row by row
    each b is a call of two short rows gathered far apart.  With a outside
    b, b and c run as tiles: the transposing kernel for real types, copied
    tiles for complex ones while the copied operand fits in L2 (past it,
    its lines read once per a cost more than the calls saved).  Caches
    pinned to Zen 3's 512 KiB L2."""
    from einplan.nest import nest_step
    with monkeypatch.context() as mp:
        mp.setattr(nest, "l2_bytes", lambda: 512 << 10)
        nest.l2_resident.cache_clear()
        try:
            def step(dtype, A, B, C):
                st = nest_step(None, [(0, "abc", (B * C, C, 1)), (1, "cba", (B * A, A, 1))], 0,
                               "", {}, {"a": A, "b": B, "c": C}, np.dtype(dtype))
                return [lp.labels for lp in st.loops], st.row, st.tile
            for dtype in ("float32", "float64", "complex64", "complex128"):
                order, row, tile = step(dtype, 2, 199, 33)
                assert order[0] == "a" and tile > 0, (dtype, order, tile)
                assert row == ("sum/transposed" if dtype.startswith("float") else "sum/strided")
            # complex128 of 9.6 MB an operand: row by row, b outside the pair
            order, row, tile = step("complex128", 2, 1000, 300)
            assert order == ["b", "a", "c"] and tile == 0, (order, tile)
            order, row, tile = step("float64", 2, 1000, 300)
            assert order == ["a", "b", "c"] and row == "sum/transposed", (order, row)
        finally:
            nest.l2_resident.cache_clear()
    rng = np.random.default_rng(7)
    for dtype in (np.float64, np.complex64):
        x = rng.standard_normal((2, 199, 11, 3)).astype(dtype)
        y = rng.standard_normal((11, 3, 199, 2)).astype(dtype)
        if dtype == np.complex64:
            x, y = x + 1j * x[::-1], y - 2j * y[::-1]
        _close(einplan.einsum("abcd,cdba->", x, y), np.einsum("abcd,cdba->", x, y), dtype,
               13134)


def test_tiles_of_few_rows_against_a_shared_vector_copy_a_quarter_of_l1():
    """A GEMV's copied tiles of few rows past L2 ('ab,b->a' with A (3, n)
    F-order complex64, copied to de-interleave it) copy a quarter of L1,
    the rows of at least PACK_RUN: the copy is read back from L1 beside the
    vector and the source streaming past (3 x 1024 tiles ran 1.9x slower).
    In L2, or with an input read in place that is a row of its own per tile
    row ('ab,ba->a'), the copy keeps its PACK_BYTES."""
    from einplan.nest import nest_step, PACK_BYTES, PACK_RUN, l1_bytes, l2_bytes
    c64 = np.dtype("complex64")
    for n in (l2_bytes() // 24 + 999, 4 * l2_bytes() // 24, 2000):
        st = nest_step(None, [(0, "ab", (1, 3)), (1, "b", (1,))], 0, "a", {"a": 1},
                       {"a": 3, "b": n}, c64)
        assert st.tile == 3, st
        big = 3 * n * 8 > l2_bytes()
        want = max(PACK_RUN, 1 << ((min(PACK_BYTES, l1_bytes() // 4) // 8 // 3).bit_length() - 1))
        assert (st.tile_row == want) if big else (st.tile_row * 3 * 8 > l1_bytes() // 4), st
    # 'ab,ba->a' (4, n)[:, ::2] x (n, 8)[:, ::2] f32: x's rows read in place
    n = 4 * l2_bytes() // 16
    st = nest_step(None, [(0, "ab", (4 * n, 2)), (1, "ba", (8, 2))], 0, "a", {"a": 1},
                   {"a": 4, "b": n}, np.dtype("float32"))
    assert st.tile == 4 and st.tile_row * 4 * 4 > l1_bytes() // 4, st


@pytest.mark.parametrize("isa", RUN_ISAS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_rows_with_scales(isa, dtype, one_thread):
    """The loop around the row in one call when inputs are constant along the
    row (each row's scale made in the kernel): an axpy row ('ij,jk->ik' with
    short rows), a sum row times a scale ('ij,i->i'), a row of nothing but
    scales ('i,j->i' summed over j), two scales, and the same in tiles."""
    rng = np.random.default_rng(11)
    for m, n in [(7, 2), (5, 3), (9, 4), (4, 5), (33, 17)]:
        A, B = _rand(rng, (m, 3), dtype), _rand(rng, (3, n), dtype)
        u, w = _rand(rng, m, dtype), _rand(rng, n, dtype)
        for tile in (0, 2):
            # 'ij,jk->ik' as loops i > j > k: A constant along the row k
            o = np.full((m, n), np.nan, dtype)
            _native.prepare_nest(dtype, 2, [(m, 3, 0, n), (3, 1, n, 0), (n, 0, 1, 1)],
                                 tile=tile)((A, B), o, isa=isa)
            _close(o, A @ B, dtype, 3)
            # 'ik,i->i': u constant along the summed row k
            C = _rand(rng, (m, n), dtype)
            o = np.full(m, np.nan, dtype)
            _native.prepare_nest(dtype, 2, [(m, n, 1, 1), (n, 1, 0, 0)], tile=tile)(
                (C, u), o, isa=isa)
            _close(o, C.sum(1) * u, dtype, n)
            # 'i,k->i': every input constant along the row (n times u)
            o = np.full(m, np.nan, dtype)
            _native.prepare_nest(dtype, 1, [(m, 1, 1), (n, 0, 0)], tile=tile)(
                (u,), o, isa=isa)
            _close(o, u * n, dtype, n)
            # 'i->ik': an elementwise row of nothing but the scale
            o = np.full((m, n), np.nan, dtype)
            _native.prepare_nest(dtype, 1, [(m, 1, n), (n, 0, 1)], tile=tile)(
                (u,), o, isa=isa)
            _close(o, np.repeat(u[:, None], n, 1), dtype, 1)
            # 'i,ik,i->ik': two scales and one moving input
            o = np.full((m, n), np.nan, dtype)
            _native.prepare_nest(dtype, 3, [(m, 1, n, 1, n), (n, 0, 1, 0, 1)], tile=tile)(
                (u, C, u), o, isa=isa)
            _close(o, u[:, None] * C * u[:, None], dtype, 2)


@pytest.mark.parametrize("isa", RUN_ISAS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_short_elementwise_rows(isa, dtype, one_thread):
    """Elementwise rows of 1..17 elements and longer ones up to past four
    vectors, one call per group of rows (up to 16 run the plain loop per
    row): 'i,ij->ij' (a scale per row), 'ij,ij->ij' with contiguous,
    strided and reversed inputs (rows of one to four vectors with inputs at
    strides 1 and 2 in whole vectors, the last one overlapping), a summed
    loop around them, and 'ij,ij->j' (every row added into one output row,
    the first visit writing)."""
    rng = np.random.default_rng(17)
    u = _rand(rng, 9, dtype)
    for n in list(range(1, 18)) + [22, 31, 33, 47, 64, 65]:
        M, N = _rand(rng, (9, 2 * n), dtype), _rand(rng, (9, 2 * n), dtype)
        rev = N[:, n - 1::-1]
        for A, sa in [(M[:, :n], 1), (M[:, ::2], 2)]:
            for B, Bp, sb in [(N[:, :n], N, 1), (rev, rev, -1)]:
                o = np.full((9, n), np.nan, dtype)
                _native.prepare_nest(dtype, 2, [(9, 2 * n, 2 * n, n), (n, sa, sb, 1)])(
                    (M, Bp), o, isa=isa)
                _close(o, A * B, dtype, 1)
                # a summed loop around the rows: the second visit adds
                _native.prepare_nest(dtype, 2, [(2, 0, 0, 0), (9, 2 * n, 2 * n, n),
                                                (n, sa, sb, 1)])((M, Bp), o, isa=isa)
                _close(o, 2 * A * B, dtype, 2)
                _native.prepare_nest(dtype, 2, [(9, 1, 2 * n, n), (n, 0, sb, 1)])(
                    (u, Bp), o, isa=isa)
                _close(o, u[:, None] * B, dtype, 1)
                r = np.full(n, np.nan, dtype)
                _native.prepare_nest(dtype, 2, [(9, 2 * n, 2 * n, 0), (n, sa, sb, 1)])(
                    (M, Bp), r, isa=isa)
                _close(r, (A * B).sum(0), dtype, 9)


@pytest.mark.parametrize("isa", RUN_ISAS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_short_rows_at_stride_two_load_vectors(isa, dtype, one_thread):
    """Elementwise rows of 5..16 elements (and 22-65) with inputs at stride 1
    or 2 in either order, or one input at stride 2: whole vectors, then the row's
    last vector overlapping the one before (its output read before the
    row's stores: a summed loop around the rows adds each element once).
    Each array ends at its rows' last element, so a vector read past a
    row's end leaves the array (the sanitizer run sees it)."""
    rng = np.random.default_rng(29)
    for n in list(range(5, 17)) + [22, 33, 64, 65]:
        X = _rand(rng, (9, 2 * n - 1), dtype)     # rows of n at stride 2, ending the array
        Y = _rand(rng, (9, n), dtype)
        A, B = X[:, ::2], Y
        cases = [((X, Y), (2 * n - 1, 2), (n, 1), A * B),
                 ((Y, X), (n, 1), (2 * n - 1, 2), A * B),
                 ((X, X), (2 * n - 1, 2), (2 * n - 1, 2), A * A)]
        for ins, (ra, sa), (rb, sb), want in cases:
            o = np.full((9, n), np.nan, dtype)
            _native.prepare_nest(dtype, 2, [(9, ra, rb, n), (n, sa, sb, 1)])(ins, o, isa=isa)
            _close(o, want, dtype, 1)
            _native.prepare_nest(dtype, 2, [(2, 0, 0, 0), (9, ra, rb, n), (n, sa, sb, 1)])(
                ins, o, isa=isa)
            _close(o, 2 * want, dtype, 2)
        o = np.full((9, n), np.nan, dtype)
        _native.prepare_nest(dtype, 1, [(9, 2 * n - 1, n), (n, 2, 1)])((X,), o, isa=isa)
        np.testing.assert_array_equal(o, A)


@pytest.mark.parametrize("isa", RUN_ISAS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_rows_shorter_than_a_vector_take_two_narrower_ones(isa, dtype, one_thread):
    """Contiguous elementwise rows of 2 .. lanes - 1 elements of one or two
    inputs, alone or times a scale per row: two half (or quarter) vectors a
    row, the second ending on the row's last element; the output rows apart
    by a gap of NaNs that must stay, written over NaNs, then added to, and
    one output row re-visited by a summed loop around the rows ('abc->ac'
    with c shorter than a vector: every element added once per row).  Each
    input ends at its last row's last element (the sanitizer run sees a
    load past it)."""
    lanes = (64 if isa == "avx512" else 32 if isa == "avx2" else 16) // np.dtype(dtype).itemsize
    rng = np.random.default_rng(31)
    R = 13
    for n in range(2, lanes):
        X = _rand(rng, R * n, dtype)[:R * n].reshape(R, n)
        Y = _rand(rng, (R, n + 3), dtype)[:, :n]   # rows n + 3 apart
        u = _rand(rng, R, dtype)
        gap = n + 2
        for ins, loops, want in (
                ((X,), [(R, n, gap), (n, 1, 1)], X),
                ((X, Y), [(R, n, n + 3, gap), (n, 1, 1, 1)], X * Y),
                ((X, u), [(R, n, 1, gap), (n, 1, 0, 1)], X * u[:, None]),
                ((X, Y, u), [(R, n, n + 3, 1, gap), (n, 1, 1, 0, 1)], X * Y * u[:, None])):
            o = np.full((R, gap), np.nan, dtype)
            call = _native.prepare_nest(dtype, len(ins), loops)
            call(ins, o, isa=isa)
            _close(o[:, :n], want, dtype, 1)
            assert np.isnan(o[:, n:]).all(), (n, o)
            _native.prepare_nest(dtype, len(ins), [(2,) + (0,) * (len(ins) + 1)] + loops)(
                ins, o, isa=isa)
            _close(o[:, :n], 2 * want, dtype, 2)
            assert np.isnan(o[:, n:]).all(), (n, o)
        # one output row, the loop around the rows summed
        o = np.full(n + 1, np.nan, dtype)
        _native.prepare_nest(dtype, 2, [(R, n, n + 3, 0), (n, 1, 1, 1)])((X, Y), o, isa=isa)
        _close(o[:n], (X * Y).sum(0), dtype, R)
        assert np.isnan(o[n])


@pytest.mark.parametrize("isa", RUN_ISAS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_row_blocks(isa, dtype):
    """The row in blocks (block loop outermost): a sum row adds each block's
    partial sum into the output, an elementwise row writes each block once;
    a last block shorter than the others; one thread and a split loop."""
    rng = np.random.default_rng(5)
    m, n, k = 3, 2, 1000
    A, B = _rand(rng, (m, k), dtype), _rand(rng, (k, 2 * n), dtype)[:, ::2]
    for threads in (1, 2):
        for block in (0, 64, 300, 999, 5000):
            # 'ij,jk->ik' as i > k > j, B strided along the row j
            o = np.full((m, n), np.nan, dtype)
            _native.prepare_nest(dtype, 2, [(m, k, 0, n), (n, 0, 2, 1), (k, 1, 4 * n // 2, 0)],
                                 split=0, threads=threads, block=block)((A, B.base), o, isa=isa)
            _close(o, A @ B, dtype, k)
            # 'ij,ij->' to a scalar (per-thread partial sums) and 'ij,ij->ij'
            o = np.full((), np.nan, dtype)
            _native.prepare_nest(dtype, 2, [(m, k, k, 0), (k, 1, 1, 0)], split=0,
                                 threads=threads, block=block)((A, A), o, isa=isa)
            _close(o, (A * A).sum(), dtype, m * k)
            o = np.full((m, k), np.nan, dtype)
            _native.prepare_nest(dtype, 2, [(m, k, k, k), (k, 1, 1, 1)], split=0,
                                 threads=threads, block=block)((A, A), o, isa=isa)
            _close(o, A * A, dtype, 1)


@pytest.mark.parametrize("isa", RUN_ISAS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_loop_around_the_row_in_blocks(isa, dtype):
    """The loop around the row in blocks (block_outer, the block loop
    outermost): 'abc,bca->' as b > c > a with c blocked sums every block into
    the scalar; 'abc,bca->bc' writes each element once; 'abc,bca->ab' adds
    each block's rows into the output; a last block shorter than the others,
    blocks past the loop's extent, one thread and two."""
    rng = np.random.default_rng(13)
    A = np.asfortranarray(_rand(rng, (10, 37, 29), dtype))      # a, b, c
    B = _rand(rng, (37, 29, 10), dtype)[::-1]                  # b, c, a
    sa, sb = [s // A.itemsize for s in A.strides], [s // B.itemsize for s in B.strides]
    for threads in (1, 2):
        for block in (0, 8, 28, 29, 64):
            loops = [(37, sa[1], sb[0]), (29, sa[2], sb[1]), (10, sa[0], sb[2])]
            o = np.full((), np.nan, dtype)
            _native.prepare_nest(dtype, 2, [lp + (0,) for lp in loops], split=0,
                                 threads=threads, block=block, block_outer=True)((A, B), o,
                                                                                 isa=isa)
            _close(o, np.einsum("abc,bca->", A, B), dtype, A.size)
            o = np.full((37, 29), np.nan, dtype)
            _native.prepare_nest(dtype, 2, [loops[0] + (29,), loops[1] + (1,), loops[2] + (0,)],
                                 split=0, threads=threads, block=block, block_outer=True)(
                (A, B), o, isa=isa)
            _close(o, np.einsum("abc,bca->bc", A, B), dtype, 10)
            o = np.full((10, 37), np.nan, dtype)
            _native.prepare_nest(dtype, 2, [loops[0] + (1,), loops[1] + (0,), loops[2] + (37,)],
                                 split=0, threads=threads, block=block, block_outer=True)(
                (A, B), o, isa=isa)
            _close(o, np.einsum("abc,bca->ab", A, B), dtype, 29)


def test_operands_crossed_outside_a_shared_row_run_in_blocks():
    """Two operands crossed in their unit strides outside a row both read
    contiguously ('abc,bca->' with a F-order A and a C-order B reversed
    along b, rows of a): either order of b and c reads one operand a row
    from each of hundreds of rows pages apart; the plan moves one of them
    around the row in blocks of nest.OUTER_BLOCK, and says so.  Operands in
    cache keep the plain order, and so do rows shorter than a line (a call
    of the rows kernel per block of such rows costs more than it saves)."""
    caches = _native.kernel_config()["caches"]
    nb = int(np.sqrt(caches["l3"] / 80)) + 1          # each operand past L3
    rng = np.random.default_rng(3)
    for nb_, blocked in ((nb, True), (40, False)):
        A = np.asfortranarray(rng.standard_normal((10, nb_, nb_ + 3)))
        B = rng.standard_normal((nb_, nb_ + 3, 10))[::-1]
        (st,) = einplan.explain("abc,bca->", A, B).to_dict()["steps"]
        assert (st["nest"].get("block") == nest.OUTER_BLOCK) == blocked, st["nest"]
        text = str(einplan.explain("abc,bca->", A, B))
        assert (f"in blocks of {nest.OUTER_BLOCK} (block loop outermost)" in text) == blocked
        _close(einplan.einsum("abc,bca->", A, B), np.einsum("abc,bca->", A, B), "float64",
               A.size)
    A = np.asfortranarray(rng.standard_normal((2, 1206, 493), dtype=np.float32))
    B = np.asfortranarray(rng.standard_normal((2, 493, 1206), dtype=np.float32))
    (st,) = einplan.explain("abc,acb->abc", A, B).to_dict()["steps"]
    assert not st["nest"].get("block"), st["nest"]


def test_long_row_reread_runs_in_blocks():
    """'ij,jk->ik' with a long summed j and a short k: B would be read again
    for every i; the loop nest runs the row in blocks that stay in cache.  B
    is in F order, j its unit stride as A's: the in-place small-GEMM
    kernels, which need B's rows contiguous along k, cannot take it; the
    planner takes the GEMM engine's GEMV path, whose blocks of k do the
    same with four rows of A a dot call (1.2-1.6x the nest's speed)."""
    from einplan import planner
    from einplan.execute import run_plan
    from einplan.operands import describe_operands
    from einplan.orient import out_eff_labels
    from einplan.roles import diagonal_view
    from einplan.spec import parse_spec
    A, B = np.ones((11, 200000)), np.ones((2, 200000)).T
    (step,) = _plan_for("ij,jk->ik", A, B).steps
    assert step.engine == "gemm" and step.kernel.path.value == "gemv", step
    spec, arrays = parse_spec(("ij,jk->ik", A, B))
    infos = describe_operands(arrays)
    b = planner._builder(spec, infos, planner.Options(), None, False, np.dtype(np.float64))
    views = [diagonal_view(t, i.shape, i.strides) for t, i in zip(spec.inputs, infos)]
    nest = planner._nest_plan(b, views, np.dtype(np.float64), (11, 2), out_eff_labels(spec))
    (step,) = nest.steps
    assert isinstance(step, NestStep) and step.block > 0 and step.loops[-1].labels == "j"
    np.testing.assert_allclose(run_plan(nest, (A, B)), A @ B)
    np.testing.assert_allclose(einplan.einsum("ij,jk->ik", A, B), A @ B)
    # a plain sum has nothing to re-read: one row, pairwise throughout
    (step,) = _plan_for("ij->i", A).steps
    assert step.block == 0


def test_loop_order_keeps_a_large_output_out_of_summed_loops():
    """'bij,bjk->bik' with A in F order: sorting loops by stride alone puts
    the summed j outermost, so the whole output (larger than L2) would be
    read and written again for every j; the traffic model puts b outside."""
    A = np.asfortranarray(np.ones((3000, 2, 9), np.float32))
    B = np.ones((3000, 9, 64), np.float32)
    plan = _plan_for("bij,bjk->bik", A, B)
    (step,) = plan.steps
    order = [lp.labels for lp in step.loops]
    assert isinstance(step, NestStep) and order[0] == "b" and order[-1] == "k", order
    np.testing.assert_allclose(einplan.einsum("bij,bjk->bik", A, B),
                               np.einsum("bij,bjk->bik", A, B), rtol=1e-5)


def test_loop_order_takes_far_fewer_calls_for_a_little_more_traffic():
    """'abc,acb->ab' (942,2,21) f64: rows of 21 along c (strided by 2 in B);
    with a outside b, 942 calls of the rows kernel of two rows each; with b
    outside, 2 calls of 942 rows, for 7% more modelled traffic -- the order
    taken (2.2x faster).  Equal to numpy either way."""
    A = np.random.default_rng(3).standard_normal((942, 2, 21))
    B = np.random.default_rng(4).standard_normal((942, 21, 2))
    (step,) = _plan_for("abc,acb->ab", A, B).steps
    assert isinstance(step, NestStep)
    assert [lp.labels for lp in step.loops] == ["b", "a", "c"], step.loops
    np.testing.assert_allclose(einplan.einsum("abc,acb->ab", A, B),
                               np.einsum("abc,acb->ab", A, B), rtol=1e-12, atol=1e-12)


def test_loops_walked_as_one_are_merged_whatever_their_order():
    """'abcd->cbd' with the output allocated in the input's memory order: b,
    c and d are one contiguous run of both, though the subscripts and the
    row choice (c has the longer extent) separate them; and 'a,cd->cad'
    with an F-ordered operand, where d then c is one run."""
    A = np.ones((15, 22, 33, 3))
    (step,) = _plan_for("abcd->cbd", A).steps
    assert [lp.labels for lp in step.loops] == ["a", "bcd"]
    assert step.loops[-1].strides == (1, 1) and step.row == "prod/contig"
    np.testing.assert_allclose(einplan.einsum("abcd->cbd", A), np.einsum("abcd->cbd", A))
    x, Y = np.arange(2.0), np.asfortranarray(np.arange(6.0).reshape(2, 3))
    (step,) = _plan_for("a,cd->cad", x, Y).steps
    assert [lp.labels for lp in step.loops] == ["a", "dc"]
    np.testing.assert_array_equal(einplan.einsum("a,cd->cad", x, Y), np.einsum("a,cd->cad", x, Y))


@pytest.mark.parametrize("dtype", DTYPES)
def test_loops_no_operand_walks_forwards_are_turned_and_merged(dtype):
    """'abc->c' over x[::-1]: a (stride -58, summed) is walked from its last
    element, then merges with b into one run of rows -- two loops, not
    three, the input's first element its offset; explain says so.  A kept
    axis reversed in the input and in out= is turned too; one reversed in
    the input only is not (the output walks it forwards)."""
    rng = np.random.default_rng(5)
    x = _rand(rng, (300, 2, 29), dtype)[::-1]
    (step,) = _plan_for("abc->c", x).steps
    assert step.reversed == "a" and [lp.labels for lp in step.loops] == ["ab", "c"]
    assert all(s >= 0 for lp in step.loops for s in lp.strides)
    _close(einplan.einsum("abc->c", x), x.sum((0, 1)), dtype, 600)
    assert "'a' walked from its last element" in str(einplan.explain("abc->c", x))
    y = _rand(rng, (40, 30), dtype)
    out = np.zeros((40, 30), dtype)
    from einplan.operands import describe, describe_operands
    from einplan.planner import make_plan
    from einplan.spec import parse_spec
    spec, arrays = parse_spec(("ab,ab->ab", y[::-1], y[::-1]))
    (step,) = make_plan(spec, describe_operands(arrays), out_info=describe(out[::-1])).steps
    assert step.reversed == "a" and [lp.labels for lp in step.loops] == ["ab"]
    r = einplan.einsum("ab,ab->ab", y[::-1], y[::-1], out=out[::-1])
    assert np.shares_memory(r, out)
    _close(out[::-1], y[::-1] * y[::-1], dtype, 1)
    (step,) = _plan_for("ab,ab->ab", y[::-1], y).steps
    assert step.reversed == ""
    # a loop walked both ways is turned when the operands walking it
    # backwards hold more, past L2: the large input, not the small output
    n = 2 * nest.l2_bytes() // (38 * np.dtype(dtype).itemsize)
    z = _rand(rng, (n, 2, 19), dtype)[::-1]
    (step,) = _plan_for("abc->ba", z).steps
    assert step.reversed == "a"
    assert [lp.strides for lp in step.loops if lp.labels == "a"] == [(2 * 19, -2)]
    _close(einplan.einsum("abc->ba", z), np.einsum("abc->ba", z), dtype, 19)
    assert _plan_for("abc->ba", z[:60]).steps[0].reversed == ""
    # a NestCall's offsets: the reach of each operand is checked with them
    a = np.arange(10.0)
    call = _native.prepare_nest("float64", 1, [(10, 1, 0)], offsets=(0, 0))
    assert call((a,), np.zeros(()))[()] == 45.0
    with pytest.raises(ValueError):
        _native.prepare_nest("float64", 1, [(10, 1, 0)], offsets=(1, 0))((a,), np.zeros(()))
    with pytest.raises(ValueError):
        _native.prepare_nest("float64", 1, [(10, 1, 0)], offsets=(0,))


def test_loop_order_counts_calls_of_the_rows_kernel():
    """'abcd->c' (2748, 19, 2, 16): with the summed ab around c, the rows
    kernel runs 52212 calls of 2 rows; with c outside, 2 calls of 52212."""
    table = {"ab": (52212, (32, 0)), "c": (2, (16, 1)), "d": (16, (1, 0))}
    assert nest.order_loops(table, 4) == ["c", "ab", "d"]


def test_a_row_of_a_few_elements_is_priced_against_every_other_row():
    """'abcd,cdab->' (2,124,2759,2)[..., ::2] x (2759,2,2,124) T f64: d, two
    elements a line-friendly step in both inputs, is the row of least line
    cost, but under the 342K (b, c) its calls of two rows are all start-up
    (0.37x numpy); priced whole, c is the row (1.5x).  A row that long
    keeps the line cost's choice."""
    table = {"b": (124, (11036, 4, 0)), "c": (2759, (4, 496, 0)),
             "a": (2, (1368464, 2, 0)), "d": (2, (2, 1, 0))}
    assert nest.order_loops(table, 8)[-1] == "c"
    long_d = dict(table, d=(64, (2, 1, 0)))
    assert nest.order_loops(long_d, 8)[-1] == "d"
    rng = np.random.default_rng(11)
    A = rng.random((2, 12, 70, 4))[..., ::2]
    B = rng.random((2, 2, 12, 70)).transpose(3, 1, 0, 2)
    np.testing.assert_allclose(einplan.einsum("abcd,cdab->", A, B),
                               np.einsum("abcd,cdab->", A, B))


def test_fewer_calls_for_no_more_traffic_take_the_other_order():
    """'abc->b' (40, 2, 588) in F order: with c outside b the rows kernel is
    called 588 times for 2 rows of 40; with b outside, twice for 588 rows.
    The traffic model prices both orders alike (the operand fits in L2), so
    the order with fewer calls is taken although it gains less than
    ORDER_GAIN; at a c that makes the operand twice this core's L2 it
    leaves L2 and b outside would read half lines twice: c stays outside."""
    c_big = 2 * nest.l2_bytes() // (40 * 2 * 8)
    for c, want in ((588, ["b", "c", "a"]), (c_big, ["c", "b", "a"])):
        table = {"a": (40, (1, 0)), "b": (2, (40, 1)), "c": (c, (80, 0))}
        assert nest.order_loops(table, 8) == want
    A = np.asfortranarray(np.random.default_rng(5).random((40, 2, 588)))
    np.testing.assert_allclose(einplan.einsum("abc->b", A), np.einsum("abc->b", A))


def test_more_calls_for_a_sliver_of_traffic_keep_the_memory_order():
    """'abcd->b' (26,29,3440,2)[::-1] f32: b outside a saves 26 re-reads of
    the 29 output elements (0.007% of the traffic) for 29 calls of the rows
    kernel instead of 26, and jumps 780 KB from row to row (466 us); a
    outside reads the operand in memory order (356 us, numpy 390)."""
    table = {"a": (26, (199520, 0)), "b": (29, (6880, 1)), "cd": (6880, (1, 0))}
    assert nest.order_loops(table, 4) == ["a", "b", "cd"]
    x = np.random.default_rng(6).random((26, 29, 3440, 2)).astype(np.float32)[::-1]
    (st,) = einplan.explain("abcd->b", x).to_dict()["steps"]
    assert [lp["labels"] for lp in st["nest"]["loops"]] == ["a", "b", "cd"], st["nest"]
    _close(einplan.einsum("abcd->b", x), np.einsum("abcd->b", x.astype(np.float64)),
           "float32", 26 * 6880)


def test_rows_of_more_streams_than_the_prefetcher_follows_are_ragged():
    """'abc,cb->ac' (178, 4570, 13)[::-1] f32 with cb relaid out as bc: with
    b outermost each of the 178 slabs of the 42 MB operand is its own
    stream, 52 bytes per b -- more streams than the hardware prefetcher
    follows, so every row waits for memory (0.45x numpy); with a outermost
    one slab streams at a time (1.1x).  An operand that fits in L2 keeps
    its interleaved rows as streams."""
    table = {"a": (178, (-59410, 0, 13)), "b": (4570, (13, 13, 0)), "c": (13, (1, 1, 1))}
    assert nest.order_loops(table, 4) == ["a", "b", "c"]
    by_b = nest.traffic([table[c] for c in "bac"], 4)
    by_a = nest.traffic([table[c] for c in "abc"], 4)
    assert by_a < 0.5 * by_b, (by_a, by_b)
    small = {"a": (40, (-520, 0, 13)), "b": (40, (13, 13, 0)), "c": (13, (1, 1, 1))}
    assert nest.traffic([small[c] for c in "bac"], 4) < 2 * nest.traffic(
        [small[c] for c in "abc"], 4)
    rng = np.random.default_rng(9)
    A = rng.random((40, 300, 13), dtype=np.float32)[::-1]
    B = rng.random((13, 300), dtype=np.float32)
    np.testing.assert_allclose(einplan.einsum("abc,cb->ac", A, B),
                               np.einsum("abc,cb->ac", A, B), rtol=1e-5)


def test_streams_of_all_operands_count_against_the_prefetcher():
    """'bij,jk->bik' (29, 53050, 5)[::-1] x (5, 9) f32: b does not merge
    with i (the input walks it backwards, the output forwards).  Around the
    rows of k, b interleaves 29 rows of the input with 29 of the output:
    each operand's streams alone are few enough for the prefetcher, both
    together are not (35 ms, 0.6x numpy); b outermost streams one slab of
    each at a time (3.7 ms)."""
    table = {"b": (29, (-265250, 0, 477450)), "i": (53050, (5, 0, 9)),
             "j": (5, (1, 9, 0)), "k": (9, (0, 1, 1))}
    assert nest.order_loops(table, 4)[0] == "b"
    inside = nest.traffic([table[c] for c in "ijbk"], 4)
    outside = nest.traffic([table[c] for c in "bijk"], 4)
    assert outside < 0.5 * inside, (outside, inside)
    A = np.empty((29, 53050, 5), np.float32)[::-1]
    (step,) = _plan_for("bij,jk->bik", A, np.empty((5, 9), np.float32)).steps
    assert step.loops[0].labels == "b" and step.short == 5
    rng = np.random.default_rng(3)
    A = rng.random((7, 300, 5), dtype=np.float32)[::-1]
    B = rng.random((5, 9), dtype=np.float32)
    np.testing.assert_allclose(einplan.einsum("bij,jk->bik", A, B),
                               np.einsum("bij,jk->bik", A, B), rtol=1e-5)


def test_short_strided_rows_from_memory_are_ragged():
    """'abcd->dba' (585, 2, 134, 29)[..., ::2] f64 (72 MB of lines, beyond
    any core's share of L3): rows of 29 at stride 2 with the 1170 rows of ab
    interleaved inside the summed c are as many streams as a contiguous
    ragged row would be; c runs inside ab, one stream.  An operand in L3
    keeps the order with fewer calls of the rows kernel ('abc,b->ac'
    (39159, 2, 6)[..., ::2] c64, 7.5 MB: b outside a)."""
    table = {"c": (134, (58, 0)), "ab": (1170, (7772, 29)), "d": (29, (2, 1))}
    assert nest.order_loops(table, 8) == ["ab", "c", "d"]
    small = {"a": (39159, (24, 0, 6)), "b": (2, (12, 1, 0)), "c": (6, (2, 0, 1))}
    assert nest.order_loops(small, 8) == ["b", "a", "c"]
    A = np.random.default_rng(3).random((58, 2, 13, 58))[..., ::2]
    np.testing.assert_allclose(einplan.einsum("abcd->dba", A), np.einsum("abcd->dba", A))


def test_short_rows_apart_are_from_memory_when_the_operands_together_pass_l3():
    """'abc,cab->abc' (16320, 20, 6) with c outermost in A and the output x
    (6, 16320, 20) reversed f32: 7.8 MB an operand, 23.5 MB together.  With
    c outside a, A's and the output's rows of 80 bytes lie 480 bytes apart,
    each a miss from memory -- the three operands do not stay in a core's
    share of L3, though each alone would: 6.0 ms, 0.16x numpy; with a
    outside c, one stream each and B's six: 1.35 ms."""
    table = {"c": (6, (20, -326400, 20)), "a": (16320, (120, 20, 120)), "b": (20, (1, 1, 1))}
    assert nest.order_loops(table, 4) == ["a", "c", "b"]
    rng = np.random.default_rng(71)
    a = np.ascontiguousarray(rng.random((160, 6, 20), np.float32)).transpose(0, 2, 1)
    b = rng.random((6, 160, 20), np.float32)[::-1]
    np.testing.assert_array_equal(einplan.einsum("abc,cab->abc", a, b),
                                  np.einsum("abc,cab->abc", a, b))


def test_long_rows_apart_in_memory_restart_their_stream():
    """'abc->b' (602, 5, 1270) in F order f32 (15 MB, beyond L2): with b
    outside c each call sums rows of 2.4 KB that lie 12 KB apart, every
    row a new stream for the hardware prefetcher (0.5-0.6x numpy); with c
    outside, the 5 rows of one c are one run of 12 KB and the next c
    continues it (0.8-0.95x).  The model charges a restart per row that the
    next row does not continue; a run of RESTART_RUN bytes or more hides
    its restart, and an operand in L2 pays none."""
    table = {"a": (602, (1, 0)), "b": (5, (602, 1)), "c": (1270, (3010, 0))}
    assert nest.order_loops(table, 4) == ["c", "b", "a"]
    by_b = nest.traffic([table[k] for k in "bca"], 4)
    by_c = nest.traffic([table[k] for k in "cba"], 4)
    assert by_c < 0.95 * by_b, (by_c, by_b)
    long_rows = {"a": (nest.RESTART_RUN // 4, (1, 0)), "b": (5, (4096, 1)),
                 "c": (300, (5 * 4096, 0))}
    assert nest.traffic([long_rows[k] for k in "bca"], 4) == nest.traffic(
        [long_rows[k] for k in "cba"], 4)
    in_l2 = {"a": (602, (1, 0)), "b": (5, (602, 1)), "c": (20, (3010, 0))}
    assert nest.traffic([in_l2[k] for k in "bca"], 4) == nest.traffic(
        [in_l2[k] for k in "cba"], 4)
    A = np.asfortranarray(np.random.default_rng(6).random((602, 5, 300), dtype=np.float32))
    np.testing.assert_allclose(einplan.einsum("abc->b", A), np.einsum("abc->b", A), rtol=1e-5)


def test_rows_that_continue_their_own_streams_restart_none():
    """PySCF's 'jiab,iajb' (21,21,93,93) x (21,93,21,93) f64: rows of 744
    bytes along b.  With j around the rows, the second input's 1953 rows of
    ia lie 15.6 KB apart, each a new stream (2.9 ms, numpy 2.1); with ia
    around j, the first input's 21 rows of j lie 1.45 MB apart and the next
    ia continues each of them: 21 streams the prefetcher follows (2.2 ms).
    More interleaved streams than it follows still restart."""
    table = {"j": (21, (181629, 93, 0)), "ia": (1953, (93, 1953, 0)), "b": (93, (1, 1, 0))}
    assert nest.order_loops(table, 8) == ["ia", "j", "b"]
    by_j = nest.traffic([table[c] for c in ("j", "ia", "b")], 8)
    by_ia = nest.traffic([table[c] for c in ("ia", "j", "b")], 8)
    assert by_ia < 0.9 * by_j, (by_ia, by_j)
    many = {"j": (64, (64 * 93 * 93, 93, 0)), "ia": (1953, (93, 64 * 93, 0)),
            "b": (93, (1, 1, 0))}
    assert nest.traffic([many[c] for c in ("ia", "j", "b")], 8) == pytest.approx(
        nest.traffic([many[c] for c in ("j", "ia", "b")], 8), rel=1e-3)
    rng = np.random.default_rng(9)
    a = rng.random((21, 21, 13, 93))
    b = rng.random((21, 13, 21, 93))
    np.testing.assert_allclose(einplan.einsum("jiab,iajb", a, b),
                               np.einsum("jiab,iajb", a, b), rtol=1e-12)


def test_a_loop_inside_the_reach_of_the_loops_within_revisits_their_lines():
    """'abcd,abcd->' (11147, 8, 6, 3), the first input's d a whole operand
    apart, the second's (b, c, d) one block of 144 per a: with d around a,
    the second input is read three times; with a outside, each a's blocks
    are read once, whatever order b, c, d then run in (its d steps inside
    the range b and c reach).  Under numpy's einsum nditer order the same
    call ran 0.45x numpy; with a outside 0.7-1.3x."""
    table = {"d": (3, (535056, 1, 0)), "a": (11147, (48, -144, 0)),
             "b": (8, (1, 18, 0)), "c": (6, (8, 3, 0))}
    assert nest.order_loops(table, 4)[0] == "a"
    by_d = nest.traffic([table[c] for c in "dabc"], 4)
    by_a = nest.traffic([table[c] for c in "adbc"], 4)
    assert by_a < 0.8 * by_d, (by_a, by_d)
    rng = np.random.default_rng(8)
    A = rng.random((3, 500, 6, 8), dtype=np.float32).transpose(1, 3, 2, 0)
    B = rng.random((500, 8, 6, 3), dtype=np.float32)[::-1]
    np.testing.assert_allclose(einplan.einsum("abcd,abcd->", A, B),
                               np.einsum("abcd,abcd->", A, B), rtol=1e-5)


@pytest.mark.parametrize("isa", RUN_ISAS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_fewer_than_four_short_rows_summed(isa, dtype, one_thread):
    """One to three contiguous rows of a vector to 512 bytes summed each into
    its own output (or all into one): the four-row path with the last row
    standing in for the missing ones, whose sums are not stored; one and two
    inputs."""
    rng = np.random.default_rng(23)
    for n in (4, 8, 13, 40, 64):
        for R in (1, 2, 3, 5):
            A, B = _rand(rng, (R, n + 2), dtype), _rand(rng, (R, n + 2), dtype)
            o = np.full(R + 1, np.nan, dtype)
            _native.prepare_nest(dtype, 1, [(R, n + 2, 1), (n, 1, 0)])((A,), o[:R], isa=isa)
            _close(o[:R], A[:, :n].sum(1), dtype, n)
            assert np.isnan(o[R])
            _native.prepare_nest(dtype, 2, [(R, n + 2, n + 2, 1), (n, 1, 1, 0)])(
                (A, B), o[:R], isa=isa)
            _close(o[:R], (A[:, :n] * B[:, :n]).sum(1), dtype, n)
            s = np.full((), np.nan, dtype)
            _native.prepare_nest(dtype, 1, [(R, n + 2, 0), (n, 1, 0)])((A,), s, isa=isa)
            _close(s, A[:, :n].sum(), dtype, R * n)


def _check_rows_dotted(dtype, loops, ins, want, isa):
    """The rows of a two-loop dot-form GEMV nest (R rows of n) each into its
    own output element, nothing past the last written, and all into one."""
    (R, *_), (n, *_) = loops
    o = np.full(R + 1, np.nan, dtype)
    _native.prepare_nest(dtype, 2, loops)(ins, o[:R], isa=isa)
    _close(o[:R], want, dtype, n)
    assert np.isnan(o[R])
    s = np.full((), np.nan, dtype)
    _native.prepare_nest(dtype, 2, [(lp[0], *lp[1:3], 0) for lp in loops])(ins, s, isa=isa)
    _close(s, want.sum(), dtype, R * n)


@pytest.mark.parametrize("isa", RUN_ISAS)
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_rows_dotted_with_a_shared_vector_have_the_bits_of_one_row(isa, dtype,
                                                                          one_thread):
    """Contiguous complex dots against a shared vector: rows of up to one
    block (NB elements) four at a time with their horizontal sums sharing
    shuffles (rows of one or two pairs of vectors unrolled), rows of 8 KB
    or more (within one block or past it) four at a time (complex64 with
    64-byte vectors) and two at a time sharing the vector's loads.  Each row's sum has the bits of the same row dotted
    alone, whatever its place in a block of rows or past the last whole
    one; the vector as either input, rows ending mid-vector, every row into
    its own element, with a scale per row, and all into one; the row in
    blocks, each block's dots added to the last."""
    rng = np.random.default_rng(41)
    for n in (4, 8, 9, 16, 31, 32, 45, 48, 64, 2048, 2049, 2 * 2048 + 7):
        for R in (4, 5, 7, 9):
            A = _rand(rng, (R, n + 3), dtype)
            w = _rand(rng, (n,), dtype)
            c = _rand(rng, (R,), dtype)
            alone = np.empty(R, dtype)
            for r in range(R):
                _native.prepare_nest(dtype, 2, [(n, 1, 1, 0)])((A[r], w), alone[r:r + 1],
                                                                isa=isa)
            _close(alone, A[:, :n] @ w, dtype, n)
            for ins, loops in [((A, w), [(R, n + 3, 0, 1), (n, 1, 1, 0)]),
                               ((w, A), [(R, 0, n + 3, 1), (n, 1, 1, 0)])]:
                o = np.full(R + 1, np.nan, dtype)
                _native.prepare_nest(dtype, 2, loops)(ins, o[:R], isa=isa)
                assert o[:R].tobytes() == alone.tobytes(), (n, R)
                assert np.isnan(o[R])
                _check_rows_dotted(dtype, loops, ins, A[:, :n] @ w, isa)
                # the row in blocks: each block's rows add into the output
                o = np.full(R, np.nan, dtype)
                _native.prepare_nest(dtype, 2, loops, block=1000)(ins, o, isa=isa)
                _close(o, A[:, :n] @ w, dtype, n)
            o = np.full(R, np.nan, dtype)
            _native.prepare_nest(dtype, 3, [(R, n + 3, 0, 1, 1), (n, 1, 1, 0, 0)])(
                (A, w, c), o, isa=isa)
            _close(o, (A[:, :n] @ w) * c, dtype, n)


@pytest.mark.parametrize("isa", RUN_ISAS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_long_rows_dotted_with_one_vector_four_at_a_time(isa, dtype, one_thread):
    """A GEMV's dot form with rows of a page or more ('ij,j->i'): four rows
    read side by side against the shared vector, each summed blockwise and
    pairwise; row counts that are not a multiple of four (the last two or
    three rows side by side too); the vector as either input, rows past one
    block (NB) and ending
    mid-vector, each row into its own output or all into one, the row in
    blocks (each block's dots added to the last), and a third input
    constant along the row (a scale per row)."""
    rng = np.random.default_rng(37)
    item = np.dtype(dtype).itemsize
    for n in (4096 // item, 4096 // item + 13, 5000):
        for R in (2, 3, 4, 7, 9):
            A = _rand(rng, (R, n + 5), dtype)
            w = _rand(rng, (n,), dtype)
            c = _rand(rng, (R,), dtype)
            want = A[:, :n] @ w
            o = np.full(R, np.nan, dtype)
            _native.prepare_nest(dtype, 2, [(R, n + 5, 0, 1), (n, 1, 1, 0)], block=1000)(
                (A, w), o, isa=isa)
            _close(o, want, dtype, n)
            for first_w in (False, True):
                if first_w:
                    loops = [(R, 0, n + 5, 1), (n, 1, 1, 0)]
                    ins = (w, A)
                else:
                    loops = [(R, n + 5, 0, 1), (n, 1, 1, 0)]
                    ins = (A, w)
                _check_rows_dotted(dtype, loops, ins, want, isa)
            o = np.full(R, np.nan, dtype)
            _native.prepare_nest(dtype, 3, [(R, n + 5, 0, 1, 1), (n, 1, 1, 0, 0)])(
                (A, w, c), o, isa=isa)
            _close(o, want * c, dtype, n)


@pytest.mark.parametrize("isa", RUN_ISAS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_rows_four_at_a_time_finish_with_the_overlapping_vector(isa, dtype, one_thread):
    """Rows of a vector to 512 bytes summed four at a time ('ab->b' with b
    the unit stride): the elements past whole vectors come from the row's
    last vector, the lanes already summed cleared -- an inf in the overlap
    stays an inf (a multiply by 0 would make it a nan) -- for sums and
    dots, every row count around a multiple of four."""
    rng = np.random.default_rng(43)
    for n in (17, 24, 33, 40, 47, 100):
        for R in (4, 6, 13):
            A = _rand(rng, (R, n), dtype)
            B = _rand(rng, (R, n), dtype)
            A[1, n // 2] = np.inf
            A[R - 1, n - 9] = -np.inf
            C = np.abs(B)          # keeps the infinities' signs
            for nin, ins, want, loops in (
                    (1, (A,), A.sum(1), [(R, n, 1), (n, 1, 0)]),
                    (2, (A, C), (A * C).sum(1), [(R, n, n, 1), (n, 1, 1, 0)])):
                o = np.full(R, np.nan, dtype)
                _native.prepare_nest(dtype, nin, loops)(ins, o, isa=isa)
                assert np.isposinf(o[1]) and np.isneginf(o[R - 1]), (n, R, o)
                fin = np.isfinite(want)
                _close(o[fin], want[fin], dtype, n)


@pytest.mark.parametrize("isa", RUN_ISAS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_short_rows_end_to_end_dotted_four_at_a_time(isa, dtype, one_thread):
    """Rows of four vectors or more, end to end in memory ('bij,bj->bi' with
    j = 256), dotted with the shared vector four at a time: every row count
    around a multiple of four, rows ending mid-vector, the vector as either
    input, each row into its own output or all into one."""
    rng = np.random.default_rng(41)
    for n in (64, 100, 256, 257):
        for R in (4, 5, 11, 64):
            A = _rand(rng, (R, n), dtype)
            w = _rand(rng, (n,), dtype)
            want = A @ w
            for loops, ins in (([(R, n, 0, 1), (n, 1, 1, 0)], (A, w)),
                               ([(R, 0, n, 1), (n, 1, 1, 0)], (w, A))):
                _check_rows_dotted(dtype, loops, ins, want, isa)


@pytest.mark.parametrize("isa", RUN_ISAS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_dot_rows_of_an_operand_past_half_of_l3_against_one_vector(isa, dtype, one_thread):
    """'ij,j->i' whose rows span more than half of L3: the vector of rows
    is read four rows at a time (the from-memory loop of rows_dotv), with
    the same sums as the rows read together from cache -- rows of one to
    several vectors, with and without a part past whole vectors, a row
    count that leaves rows past the last vector of them."""
    l3 = _native.kernel_config()["caches"]["l3"]
    rng = np.random.default_rng(73)
    item = np.dtype(dtype).itemsize
    for n in (64 // item, 96 // item, 160 // item):
        R = l3 // 2 // (n * item) + 37
        A = _rand(rng, (R, n), dtype)
        w = _rand(rng, (n,), dtype)
        o = np.full(R, np.nan, dtype)
        _native.prepare_nest(dtype, 2, [(R, n, 0, 1), (n, 1, 1, 0)])((A, w), o, isa=isa)
        _close(o, A @ w, dtype, n)
        few = np.full(4096, np.nan, dtype)
        _native.prepare_nest(dtype, 2, [(4096, n, 0, 1), (n, 1, 1, 0)])((A[:4096], w), few,
                                                                        isa=isa)
        np.testing.assert_array_equal(o[:4096], few)


@pytest.mark.parametrize("isa", RUN_ISAS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_short_rows_dotted_with_one_vector_a_vector_of_rows_at_a_time(isa, dtype, one_thread):
    """Rows of a vector to a kilobyte dotted with the shared vector ('ij,j->i'
    with j = 8..256 f32), a vector's worth of rows at a time, their sums
    reduced together into one vector of outputs: row lengths from under a
    vector to past eight vectors (the shared vector in registers, then read
    from memory), rows ending mid-vector with infs in the overlap kept infs,
    row counts around multiples of the vector, the vector as either input,
    outputs contiguous, strided, summed over an outer loop and scaled per
    row; and identical rows give identical bits wherever they fall (in a
    vector of rows or in the four-row blocks past the last one)."""
    rng = np.random.default_rng(47)
    item = np.dtype(dtype).itemsize
    for n in sorted({3, 4, 8, 9, 12, 16, 19, 24, 33, 64, 70, 128, 1024 // item}):
        for R in (16, 20, 37, 84):
            A = _rand(rng, (2, R, n + 3), dtype)
            w = np.abs(_rand(rng, (n,), dtype))
            A[0, 1, max(0, n - 16):n] = np.inf
            want = A[0, :, :n] @ w
            fin = np.isfinite(want)
            for loops, ins in (([(R, n + 3, 0, 1), (n, 1, 1, 0)], (A[0], w)),
                               ([(R, 0, n + 3, 1), (n, 1, 1, 0)], (w, A[0]))):
                o = np.full(2 * R + 1, np.nan, dtype)
                for so, view in ((1, o[:R]), (2, o[:2 * R:2])):
                    o[:] = np.nan
                    lp = [loops[0][:3] + (so,), loops[1]]
                    _native.prepare_nest(dtype, 2, lp)(ins, o, isa=isa)
                    assert np.isposinf(view[1]), (n, R, so)
                    _close(view[fin], want[fin], dtype, n)
                    assert np.isnan(o[so * (R - 1) + 1:]).all() and (so == 1 or np.isnan(o[1:2 * R:2]).all())
            # summed over an outer loop (the second visit adds to the first)
            # and scaled per row by a third input
            B = A.copy()
            B[0, 1] = 0
            c = _rand(rng, (R,), dtype)
            o = np.full(R, np.nan, dtype)
            _native.prepare_nest(dtype, 3, [(2, R * (n + 3), 0, 0, 0), (R, n + 3, 0, 1, 1),
                                            (n, 1, 1, 0, 0)])((B, w, c), o, isa=isa)
            _close(o, (B[0, :, :n] @ w + B[1, :, :n] @ w) * c, dtype, 2 * n)
            if R in (20, 84):
                C = np.repeat(B[1, :1, :n], R, axis=0)
                o = np.full(R, np.nan, dtype)
                _native.prepare_nest(dtype, 2, [(R, n, 0, 1), (n, 1, 1, 0)])((C, w), o, isa=isa)
                assert np.unique(o).size == 1, (n, R, o)


@pytest.mark.parametrize("isa", RUN_ISAS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_short_rows_end_to_end_summed_a_vector_of_rows_at_a_time(isa, dtype, one_thread):
    """Rows of 2..8 elements end to end ('ij->i', 'ij,ij->i', 'ij,j->i' with
    j short), each summed into its output element, a vector of rows at a
    time by picking each row's elements into its lane (32- and 64-byte
    vectors; the portable kernels sum them their own way): every row length around the vector,
    row counts around whole vectors of rows, rows forwards and backwards in
    memory, the shared vector as either input, outputs contiguous, reversed,
    strided, summed over an outer loop and scaled per row; an inf stays in its
    row, and picked rows that are identical have identical bits wherever they
    fall (in a whole vector of rows or among the rest)."""
    rng = np.random.default_rng(71)
    for n in (2, 3, 4, 5, 6, 7, 8, 9):
        for R in (31, 32, 33, 47, 100):
            A, B = _rand(rng, (2, R, n), dtype), _rand(rng, (R, n), dtype)
            w, c = _rand(rng, (n,), dtype), _rand(rng, (R,), dtype)
            for way, (x, y) in (("forwards", (A[0], B)), ("backwards", (A[0, ::-1], B[::-1]))):
                rx = x.strides[0] // x.itemsize
                cases = (([(R, rx, 1), (n, 1, 0)], (x,), x.sum(1)),
                         ([(R, rx, rx, 1), (n, 1, 1, 0)], (x, y), (x * y).sum(1)),
                         ([(R, rx, 0, 1), (n, 1, 1, 0)], (x, w), x @ w),
                         ([(R, 0, rx, 1), (n, 1, 1, 0)], (w, x), x @ w),
                         ([(R, rx, 0, 1, 1), (n, 1, 1, 0, 0)], (x, w, c), (x @ w) * c))
                for loops, ins, want in cases:
                    o = np.full(2 * R, np.nan, dtype)
                    for so, view in ((1, o[:R]), (-1, o[R - 1::-1]), (2, o[::2])):
                        o[:] = np.nan
                        lp = [loops[0][:-1] + (so,), loops[1]]
                        _native.prepare_nest(dtype, len(ins), lp)(ins, view, isa=isa)
                        _close(view, want, dtype, n)
                        assert np.isnan(o[1::2]).all() or so != 2, (n, R, way)
            # summed over an outer loop (the second visit adds to the first)
            o = np.full(R, np.nan, dtype)
            _native.prepare_nest(dtype, 2, [(2, R * n, 0, 0), (R, n, 0, 1), (n, 1, 1, 0)])(
                (A, w), o, isa=isa)
            _close(o, A[0] @ w + A[1] @ w, dtype, 2 * n)
            # an inf stays in its row; identical rows, identical bits
            C = np.repeat(B[:1], R, axis=0)
            C[R // 2, n - 1] = np.inf
            o = np.full(R, np.nan, dtype)
            _native.prepare_nest(dtype, 2, [(R, n, 0, 1), (n, 1, 1, 0)])(
                (C, np.abs(w)), o, isa=isa)
            assert np.isposinf(o[R // 2]) or np.abs(w)[n - 1] == 0, (n, R)
            rest = np.delete(o, R // 2)
            assert np.isfinite(rest).all(), (n, R, o)
            if n * np.dtype(dtype).itemsize < {"avx512": 64, "avx2": 32}.get(isa, 0):
                # the picked rows' bits do not depend on where a row falls
                assert np.unique(rest).size == 1, (n, R, o)


def test_short_rows_end_to_end_are_planned_without_a_row_start():
    """'ij,j->i' (N, 2) f32 and (N, 3), (N, 7) reversed: the rows of j, end to
    end, run a vector of them at a time with no start per row (rows_per_start
    is every row), so j is the row -- not i at stride 2 or 3 with j outside
    (0.58x numpy for (N, 2) f32) -- and explain names the kernel.  The
    portable kernels (16-byte vectors) pick no rows: neither plan nor explain
    claims it there."""
    wide = nest.vector_lanes(4) * 4 >= 32
    for dtype, n, rev in (("float32", 2, False), ("float64", 3, True), ("float32", 7, True)):
        a = np.ones((4096, n), dtype)
        v = np.ones(n, dtype)
        if rev:
            a, v = a[::-1, ::-1], v[::-1]
        plan = _plan_for("ij,j->i", a, v)
        st = plan.steps[0]
        np.testing.assert_allclose(einplan.einsum("ij,j->i", a, v), np.full(4096, n))
        if not wide:
            assert not (isinstance(st, NestStep)
                        and nest.picked_rows(st.loops, np.dtype(dtype).itemsize))
            assert "picked into its lane" not in str(einplan.explain("ij,j->i", a, v))
            continue
        assert isinstance(st, NestStep) and st.loops[-1].labels == "j", st.loops
        assert nest.picked_rows(st.loops, np.dtype(dtype).itemsize)
        assert nest.rows_per_start(st.loops, np.dtype(dtype).itemsize) == (4096, 0)
        assert "picked into its lane" in str(einplan.explain("ij,j->i", a, v))
    if not wide:
        return
    # rows of 9 f64 are longer than a vector: not picked; forward rows of 7
    # f32 dotted with a shared vector load a row each (rows_dotv)
    loops = _plan_for("ij,j->i", np.ones((4096, 9)), np.ones(9)).steps[0].loops
    assert not nest.picked_rows(loops, 8)
    loops = _plan_for("ij,j->i", np.ones((4096, 7), "f4"), np.ones(7, "f4")).steps[0].loops
    assert loops[-1].labels == "j" and not nest.picked_rows(loops, 4)
    assert nest.rows_per_start(loops, 4) == (nest.vector_lanes(4), 0)


@pytest.mark.parametrize("isa", RUN_ISAS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_four_strided_rows_summed_load_vectors(isa, dtype, one_thread):
    """Rows of a vector and more with strides of +-1 or +-2 (not both unit),
    four at a time, each into its own output: vector loads a row at a time
    (the even or reversed lanes of whole vectors), one and two inputs, the
    second shared by every row or not; the fifth row and on by the same;
    calls of fewer than four rows too, and rows summed into one element."""
    rng = np.random.default_rng(31)
    for n, R in ((16, 6), (37, 6), (106, 6), (300, 6), (40, 1), (40, 2), (33, 3)):
        for sx, sy in ((2, 1), (-2, 1), (1, 2), (-1, -2), (2, 2), (-2, 0)):
            A = _rand(rng, (R, 2 * n + 3), dtype)
            x = A[:, ::sx][:, :n] if sx > 0 else A[:, ::sx][:, :n]
            V = _rand(rng, (R, 2 * n + 3), dtype)
            shared = sy == 0
            y = (V[0, :n] if shared else V[:, ::sy][:, :n])
            o = np.full(R + 1, np.nan, dtype)
            es = x.itemsize
            ys = (0 if shared else y.strides[0] // es, y.strides[-1] // es)
            _native.prepare_nest(dtype, 2, [(R, x.strides[0] // es, ys[0], 1),
                                            (n, x.strides[1] // es, ys[1], 0)])(
                (x, y if not shared else y), o[:R], isa=isa)
            _close(o[:R], (x * y).sum(-1), dtype, n)
            assert np.isnan(o[R])
            _native.prepare_nest(dtype, 1, [(R, x.strides[0] // es, 1),
                                            (n, x.strides[1] // es, 0)])((x,), o[:R], isa=isa)
            _close(o[:R], x.sum(-1), dtype, n)
            one = np.full((), np.nan, dtype)
            _native.prepare_nest(dtype, 2, [(R, x.strides[0] // es, ys[0], 0),
                                            (n, x.strides[1] // es, ys[1], 0)])(
                (x, y), one, isa=isa)
            _close(one, (x * y).sum(), dtype, n * R)


def test_short_rows_apart_in_l3_cost_a_fraction_of_a_restart():
    """'abcd,bacd->' (925,2,5,8) x (2,925,5,16)[..., ::2] f64: with b
    outside a the first input's rows of 40 are 320 bytes apart, a restart
    of the prefetcher's stream each from memory; but both inputs fit in L3,
    and there calls of 925 rows run faster than 925 calls of b's 2 rows."""
    a = np.random.default_rng(2).random((925, 2, 5, 8))
    b = np.random.default_rng(3).random((2, 925, 5, 16))[..., ::2]
    table = {"a": (925, (80, 80, 0)), "b": (2, (40, 74000, 0)), "cd": (40, (1, 2, 0))}
    assert nest.order_loops(table, 8) == ["b", "a", "cd"]
    # ten times the rows: the first input beyond a core's share of L3
    table = {"a": (18500, (80, 80, 0)), "b": (2, (40, 1480000, 0)), "cd": (40, (1, 2, 0))}
    assert nest.order_loops(table, 8) == ["a", "b", "cd"]
    np.testing.assert_allclose(einplan.einsum("abcd,bacd->", a, b),
                               np.einsum("abcd,bacd->", a, b), rtol=1e-12)


def test_short_rows_apart_in_memory_continue_their_stream():
    """'abcd,abcd->' (33, 4, 9395, 6) with a contiguous in both and rows of
    the second input 198 elements apart along bc: with d outside bc that
    input is read as rows of 33 with gaps of 165 (a prefetch stream
    restarted per row, 3x slower); with bc outside d both inputs stream.
    The order at that size; the result at a smaller one (bc = 380)."""
    rng = np.random.default_rng(3)
    A = rng.random((6, 4, 95, 33), dtype=np.float32).transpose(3, 1, 2, 0)
    B = rng.random((4, 95, 6, 33), dtype=np.float32).transpose(3, 0, 1, 2)
    table = {"d": (6, (A.strides[3] // 4, B.strides[3] // 4, 0)),
             "bc": (4 * 9395, (33, 198, 0)), "a": (33, (1, 1, 0))}
    assert nest.order_loops(table, 4) == ["bc", "d", "a"]
    np.testing.assert_allclose(einplan.einsum("abcd,abcd->", A, B),
                               np.einsum("abcd,abcd->", A, B), rtol=1e-5)


def test_a_row_crossing_a_page_per_element_is_not_priced_as_cached():
    """'iij->j' (1217, 1217, 8): the diagonal fits in L2, but a row along i
    steps 38 KB, a new page per element, more pages than the TLB holds;
    the row is j, contiguous."""
    A = np.ones((1217, 1217, 8), np.float32)
    (step,) = _plan_for("iij->j", A).steps
    assert step.loops[-1].labels == "j"
    np.testing.assert_allclose(einplan.einsum("iij->j", A), np.einsum("iij->j", A))


def _plan_for(subscripts, *ops):
    from einplan.operands import describe_operands
    from einplan.planner import make_plan
    from einplan.spec import parse_spec
    spec, arrays = parse_spec((subscripts,) + ops)
    return make_plan(spec, describe_operands(arrays))


@pytest.mark.parametrize("dtype", DTYPES)
def test_threads_split_output_and_partial_sums(dtype):
    """Threads over an output loop (disjoint writes), over a reduced loop of
    a scalar (per-thread partials combined in thread order: the same result
    on every run with the same thread count)."""
    prev = _native.get_num_threads()
    rng = np.random.default_rng(3)
    A = _rand(rng, (64, 3000), dtype)
    try:
        _native.set_num_threads(2)
        o = np.empty(64, dtype)
        call = _native.prepare_nest(dtype, 1, [(64, 3000, 1), (3000, 1, 0)], split=0, threads=2)
        assert call.threads() == min(2, _native.get_num_threads())
        call((A,), o)
        _close(o, A.sum(1), dtype, 3000)
        s = np.empty((), dtype)
        call = _native.prepare_nest(dtype, 1, [(64, 3000, 0), (3000, 1, 0)], split=0, threads=2)
        call((A,), s)
        first = s.copy()
        _close(s, A.sum(), dtype, 64 * 3000)
        for _ in range(5):
            call((A,), s)
            assert s == first
        # the split loop is the row itself
        call = _native.prepare_nest(dtype, 1, [(64 * 3000, 1, 0)], split=0, threads=2)
        call((A,), s)
        _close(s, A.sum(), dtype, 64 * 3000)
    finally:
        _native.set_num_threads(prev)


def test_float32_sum_is_as_accurate_as_numpy():
    """1e7 float32 values: blockwise, pairwise-combined sums stay within
    numpy's own pairwise error (a naive running float32 sum is ~100x off)."""
    rng = np.random.default_rng(0)
    x = (rng.random(10 ** 7) + 0.5).astype(np.float32)
    exact = np.sum(x, dtype=np.float64)
    ours = float(einplan.einsum("i->", x))
    theirs = max(abs(float(np.einsum("i->", x)) - exact), abs(float(np.sum(x)) - exact))
    assert abs(ours - exact) <= max(theirs, 4 * np.finfo(np.float32).eps * exact)
    # and the dot form
    ours = float(einplan.einsum("i,i->", x, x))
    exact = np.dot(x.astype(np.float64), x.astype(np.float64))
    theirs = abs(float(np.einsum("i,i->", x, x)) - exact)
    assert abs(ours - exact) <= max(theirs, 4 * np.finfo(np.float32).eps * exact)


def test_bad_descriptors_raise():
    a = np.ones(10)
    with pytest.raises(ValueError):
        _native.prepare_nest("float64", 1, [(11, 1, 0)])((a,), np.empty(()))   # reads past a
    with pytest.raises(TypeError):
        _native.prepare_nest("int64", 1, [(10, 1, 0)])
    with pytest.raises(TypeError):
        _native.prepare_nest("float64", 1, [(10, 1, 0)])((a.astype(np.float32),), np.empty(()))
    with pytest.raises(ValueError):
        _native.prepare_nest("float64", 1, [(10, 1, 0)])((a,), _readonly())
    with pytest.raises(ValueError):
        _native.prepare_nest("float64", 1, [(2 ** 40, 0, 0), (2 ** 40, 0, 0)])


def _readonly():
    r = np.empty(())
    r.flags.writeable = False
    return r


def _steps(subscripts, *ops):
    d = einplan.explain(subscripts, *ops).to_dict()
    return d["steps"], d["fallbacks"]


def test_nest_fallbacks_are_named_and_counted():
    """Dtypes the nest does not take keep numpy: an integer sum is a whole-call
    fallback, a sum that casts (dtype=) a numpy.sum step -- both named."""
    ints = np.arange(12).reshape(3, 4)
    steps, fb = _steps("ij->j", ints)
    assert [f["where"] for f in fb] == ["whole call"] and "int64" in fb[0]["reason"]
    d = einplan.explain("ij->j", np.ones((3, 4), np.float32), dtype=np.float64).to_dict()
    assert [s["kind"] for s in d["steps"]] == ["reduce"]
    assert len(d["fallbacks"]) == 1 and "numpy.sum" in d["fallbacks"][0]["reason"]
    # the float dtypes run natively: no fallback at all
    for dt in DTYPES:
        steps, fb = _steps("ij,ij->i", np.ones((3, 4), dt), np.ones((3, 4), dt))
        assert fb == [] and steps[0]["engine"] == "nest"


def test_explain_prints_the_nest():
    # too few rows of 'jk' outside for it to be summed as a block first
    a = np.ones((48, 70, 30), np.float32)
    text = str(einplan.explain("ijk->j", a))
    assert "loop nest" in text and "row sum/contig" in text and "vectorised along 'k'" in text
    (step,) = einplan.explain("ijk->j", a).to_dict()["steps"]
    nest = step["nest"]
    assert [lp["labels"] for lp in nest["loops"]] == ["i", "j", "k"]
    assert nest["vectorised"] == "k" and nest["bytes_moved"] == a.nbytes + 70 * 4
    m = einplan.explain("ijk->j", a, measure=True).to_dict()["measured"]
    assert m["pct_bandwidth"] is not None and m["pct_bandwidth"] > 0


def test_hot_path_runs_the_nest_runner():
    """A cached one-nest call allocates and runs in C, and out= goes through
    the overlap check (an overlapping out= still gives numpy's answer)."""
    a = np.arange(12.0).reshape(3, 4)
    for _ in range(3):
        np.testing.assert_array_equal(einplan.einsum("ij->i", a), a.sum(1))
    out = np.empty(3)
    for _ in range(3):
        assert einplan.einsum("ij->i", a, out=out) is out
        np.testing.assert_array_equal(out, a.sum(1))
    b = np.arange(16.0).reshape(4, 4)
    want = np.einsum("ij,ij->i", b, b)
    for _ in range(2):
        got = einplan.einsum("ij,ij->i", b, b, out=b[0])   # out= overlaps the operand
        np.testing.assert_array_equal(got, want)
        b = np.arange(16.0).reshape(4, 4)


def test_hot_path_scalar_result_is_numpys_scalar_for_every_dtype():
    """A cached one-nest call with a 0-d result sums into the runner's own
    slot: numpy's scalar type and value on every call, for a short and a
    threaded reduction (partials combined into it) and a reversed operand."""
    rng = np.random.default_rng(11)
    for dtype in DTYPES:
        for n in (8, 1 << 18):
            a, b = _rand(rng, n, dtype), _rand(rng, 2 * n, dtype)[::-2]
            want = np.einsum("i,i->", a, b)
            for _ in range(3):
                got = einplan.einsum("i,i->", a, b)
                assert type(got) is type(want), (dtype, type(got))
                _close(got, want, dtype, n)
            m = a.reshape(-1, 2) if n > 8 else a.reshape(2, 4)
            for _ in range(2):
                got = einplan.einsum("ij->", m)
                assert type(got) is np.dtype(dtype).type
                _close(got, m.sum(), dtype, n)


def test_multi_operand_elementwise_is_one_nest():
    a = np.random.default_rng(0).standard_normal((30, 40))
    plan = einplan.plan("ij,ij,ij->i", a, a, a)
    (step,) = plan._plan.steps
    assert isinstance(step, NestStep) and len(step.inputs) == 3
    np.testing.assert_allclose(plan(a, a, a), np.einsum("ij,ij,ij->i", a, a, a))


def test_gemv_with_a_strided_vector_is_planned_gathered():
    """'...ij,j->...i' with a sliced or reversed j: the plan names the row
    'sum/gathered' (the vector gathered once per call, the rows contiguous),
    explain prints it as vectorised, and the result is numpy's; fewer than
    4 rows or strided matrix rows keep 'sum/strided'."""
    rng = np.random.default_rng(2)
    for dtype in DTYPES:
        A, x = _rand(rng, (2, 5, 27, 563), dtype), _rand(rng, 2 * 563, dtype)
        for v in (x[::2], x[563:][::-1]):
            (step,) = _plan("...ij,j->...i", A, v).steps
            assert isinstance(step, NestStep) and step.row == "sum/gathered", step.row
            text = str(einplan.explain("...ij,j->...i", A, v))
            assert "row kernel sum/gathered vectorised along" in text
            _close(einplan.einsum("...ij,j->...i", A, v), np.einsum("...ij,j->...i", A, v),
                   dtype, 563)
        (step,) = _plan("ij,j->i", A[0, 0, :3], x[::2]).steps
        assert step.row == "sum/strided"
        (step,) = _plan("ij,j->i", A[0, 0, :, ::2], x[::4]).steps
        assert step.row == "sum/strided"


def test_gemv_whose_vector_outgrows_l2_runs_the_row_in_blocks():
    """'ab,a->b' with A's columns contiguous and a sliced vector: each of
    the 8 rows reads the vector again; past L2 the row runs in blocks, so
    the vector's block stays in cache for every row.  Within L2 it runs
    whole.  The results are numpy's."""
    rng = np.random.default_rng(5)
    for dtype in (np.complex64, np.float64):
        item = np.dtype(dtype).itemsize
        for n, blocked in ((5 * nest.l2_resident() // (4 * item), True), (4096, False)):
            A, x = _rand(rng, (8, n), dtype).T, _rand(rng, 2 * n, dtype)[::2]
            (step,) = _plan("ab,a->b", A, x).steps
            assert isinstance(step, NestStep) and step.row == "sum/gathered", step.row
            assert (step.block > 0) == blocked, (dtype, n, step.block)
            _close(einplan.einsum("ab,a->b", A, x), np.einsum("ab,a->b", A, x), dtype, n)


def _plan(subscripts, *ops):
    from einplan.operands import describe_operands
    from einplan.planner import make_plan
    from einplan.spec import parse_spec
    spec, arrays = parse_spec((subscripts,) + ops)
    return make_plan(spec, describe_operands(arrays))


def test_short_complex_rows_run_and_explain_the_avx2_row_kernels(use_isa):
    """Under the AVX-512 kernel set, complex rows of half a vector to one
    (5 complex64) run in the AVX2 row kernels, and explain names the set
    that runs; a longer row stays on AVX-512."""
    if "avx512" not in _native.available_isas():
        pytest.skip(reason="the AVX-512 kernel set needs an AVX-512 CPU")
    use_isa("avx512")
    a = np.ones((1000, 5), np.complex64)
    assert einplan.explain("ab,a->b", a, a[:, 0]).to_dict()["steps"][0]["kernel"]["isa"] == "avx2"
    b = np.ones((1000, 9), np.complex64)
    assert einplan.explain("ab,a->b", b, b[:, 0]).to_dict()["steps"][0]["kernel"]["isa"] == "avx512"


@pytest.mark.parametrize("isa", RUN_ISAS)
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_rows_summed_into_one_row(isa, dtype, one_thread):
    """Complex rows summed into one output row ('ab->b', 'ab,ab->b' and the
    GEMV's axpy form 'ab,a->b'), the products deferred to the end: rows of
    fewer reals than a vector (scalars), one to four vectors held (the last
    overlapping the one before), longer rows four at a time; row counts
    that leave one row of a pair or one to three of four, rows reversed or
    apart by more than their length, a second visit adding to the first.
    Rows of half a 512-bit vector to one (4-7 complex64, 2-3 complex128)
    run in the AVX2 kernels under the AVX-512 kernel set."""
    rng = np.random.default_rng(37)
    half = (64 if isa == "avx512" else 32 if isa == "avx2" else 16) // np.dtype(dtype).itemsize
    for n in sorted({1, 2, 3, 4, 5, 6, half - 1, half, half + 1, 2 * half + 1, 4 * half - 1, 4 * half,
                     4 * half + 1, 9 * half + 3} - {0}):
        for R in (2, 3, 5, 16):
            X, Y = _rand(rng, (R, n + 2), dtype), _rand(rng, (R, n + 2), dtype)
            u = _rand(rng, R, dtype)
            for A, ra in [(X[:, :n], n + 2), (X[::-1, :n], -(n + 2))]:
                B = Y[:, :n]
                for nin, loops, ins, want in [
                        (1, [(R, ra, 0), (n, 1, 1)], (A,), A.sum(0)),
                        (2, [(R, ra, 1, 0), (n, 1, 0, 1)], (A, u), (A * u[:, None]).sum(0)),
                        (2, [(R, ra, n + 2, 0), (n, 1, 1, 1)], (A, B), (A * B).sum(0))]:
                    _into_one_row_and_again(dtype, nin, loops, ins, want, R, isa)


_STREAM_SCRIPT = r"""
import hashlib, sys
import numpy as np
import einplan
from einplan import _native
l3 = _native.kernel_config()["caches"]["l3"]
rng = np.random.default_rng(3)
out = []
# rows summed into one output row just past what the kernel set holds in registers
vbytes = {"avx512": 64, "avx2": 32}.get(_native.kernel_config()["isa"], 16)
past = 17 * vbytes // 4 + 3
for spec, n in (("ij,j->i", 40), ("ij,j->i", 128), ("ij,j->i", 1024), ("ij->i", 40),
                ("ij->i", 64), ("ij->i", 300), ("ij->j", 503), ("ij,i->j", 503), ("ij,i->j", past),
                ("ij,i->j", 1801)):
    rows = int(1.25 * l3) // (4 * n) + 3          # beyond L3, not a multiple of four
    a = rng.standard_normal((rows, n), dtype=np.float32)
    vec = {"ij,j->i": n, "ij,i->j": rows}
    ops = (a,) + ((rng.standard_normal(vec[spec], dtype=np.float32),) if spec in vec else ())
    for _ in range(3):
        r = einplan.einsum(spec, *ops)
    ref = np.einsum(spec, *(o.astype(np.float64) for o in ops))
    assert np.allclose(r, ref, rtol=1e-4, atol=1e-3 * np.sqrt(max(n, rows))), spec
    out.append(hashlib.sha1(r.tobytes()).hexdigest())
    if spec == "ij,j->i" and n == 1024:  # long dots measured, diagonals not yet
        before = [_native.stream_order(k)[0] for k in ("long dots", "strided")]
    if n in (40, 128, 300, 503, past, 1801):
        assert "rows streamed from memory" in str(einplan.explain(spec, *ops)), spec
# long rows at stride 2 scaled into one output row ('ij,i->j' over a [:, ::2] slice)
a = rng.standard_normal((int(1.25 * l3) // (4 * 2 * 503) + 3, 2 * 503), dtype=np.float32)[:, ::2]
x = rng.standard_normal(a.shape[0], dtype=np.float32)
for _ in range(3):
    r = einplan.einsum("ij,i->j", a, x)
assert np.allclose(r, x.astype(np.float64) @ a, rtol=1e-4, atol=1e-3 * np.sqrt(a.shape[0]))
out.append(hashlib.sha1(r.tobytes()).hexdigest())
assert "rows streamed from memory" in str(einplan.explain("ij,i->j", a, x))
# one input's short strided rows: diagonals, a line an element
a = rng.standard_normal((int(1.25 * l3) // (4 * 19 * 19) + 3, 19, 19), dtype=np.float32)
for _ in range(3):
    r = einplan.einsum("bii->b", a)
assert np.allclose(r, np.einsum("bii->b", a.astype(np.float64)), rtol=1e-4, atol=1e-3)
out.append(hashlib.sha1(r.tobytes()).hexdigest())
assert "rows streamed from memory" in str(einplan.explain("bii->b", a))
# complex dot rows against one shared vector, ending mid-vector
a = (rng.standard_normal((int(1.25 * l3) // (8 * 45) + 3, 45), dtype=np.float32)
     + 1j * rng.standard_normal((1, 45), dtype=np.float32)).astype(np.complex64)
v = (rng.standard_normal(45) - 1j * rng.standard_normal(45)).astype(np.complex64)
for _ in range(3):
    r = einplan.einsum("ij,j->i", a, v)
assert np.allclose(r, a.astype(np.complex128) @ v, rtol=1e-4, atol=1e-3)
assert r[:64].tobytes() == einplan.einsum("ij,j->i", a[:64], v).tobytes()  # rows in cache
out.append(hashlib.sha1(r.tobytes()).hexdigest())
assert "rows streamed from memory" in str(einplan.explain("ij,j->i", a, v))
kinds = [_native.stream_order(k)
         for k in ("sums", "long sums", "dots", "long dots", "into one", "strided")]
print(" ".join(out), " ".join(before), " ".join(order for order, _, _ in kinds),
      all(one > 0 and four > 0 for _, one, four in kinds))
"""


def test_a_loop_at_unit_stride_for_a_far_strided_operand_goes_around_the_row():
    """An operand the row strides far ('abc,abc->' F x C: op 1 at 704 along
    a) that an outer loop walks at unit stride (c) has that loop right
    around the row, where the tiles copy the operand along its own unit
    stride, whatever the other loops' strides say (c outermost re-read each
    of op 1's lines for every c: (11170,16,44) f64 0.49x numpy, 1.11x)."""
    rng = np.random.default_rng(59)
    a = np.asfortranarray(rng.standard_normal((300, 16, 44)))
    b = rng.standard_normal((300, 16, 44))
    (st,) = einplan.explain("abc,abc->", a, b).to_dict()["steps"]
    assert [lp["labels"] for lp in st["nest"]["loops"]] == ["b", "c", "a"], st["nest"]
    assert st["nest"]["tile"], st["nest"]
    _close(einplan.einsum("abc,abc->", a, b), np.einsum("abc,abc->", a, b), "float64", a.size)


def test_a_loop_at_stride_2_for_a_far_strided_operand_goes_around_the_row():
    """The same for an operand sliced [..., ::2] along that loop, when it
    moves along every loop ('abc,cba->ab' (366,13,721) x (721,13,366)[..., ::2]
    f64: a outermost, each of B's lines read a line an element, 0.66x numpy;
    a around the row in tiles, 2.7x).  An operand constant along an outer
    loop (a GEMV's vector, 'abc,ac->b' with ac[:, ::2]) keeps the rows
    kernel's one gathered copy for all rows."""
    rng = np.random.default_rng(83)
    x = rng.standard_normal((120, 13, 300))
    y = rng.standard_normal((300, 13, 240))[..., ::2]
    (st,) = einplan.explain("abc,cba->ab", x, y).to_dict()["steps"]
    assert [lp["labels"] for lp in st["nest"]["loops"]] == ["b", "a", "c"], st["nest"]
    assert st["nest"]["tile"], st["nest"]
    _close(einplan.einsum("abc,cba->ab", x, y), np.einsum("abc,cba->ab", x, y), "float64", 300)
    A = np.asfortranarray(rng.standard_normal((897, 309, 26)))
    v = rng.standard_normal((897, 52))[:, ::2]
    (step,) = _plan("abc,ac->b", A, v).steps
    assert step.row == "sum/gathered", step.row
    _close(einplan.einsum("abc,ac->b", A, v), np.einsum("abc,ac->b", A, v), "float64", 897 * 26)


def test_a_loop_walking_an_output_past_l2_stays_outside_the_row():
    """The loop at a far-strided operand's unit stride stays where the
    stride order puts it when it walks an output past L2: around the row,
    every pass of the loops outside would re-read the output's lines from
    further out ('abc,bca->ab' (10140,49,6) f32, the output 2 MB, a line
    per element along a: 12 ms with a around the row under b, 5.0 with a
    outermost; numpy 5.2).  An output in L2 keeps the tiles."""
    l2 = _native.kernel_config()["caches"]["l2"]
    rng = np.random.default_rng(71)
    for a_ext, tiled in ((2 * l2 // (4 * 49), False), (l2 // (2 * 4 * 49), True)):
        x = rng.standard_normal((a_ext, 49, 6)).astype(np.float32)
        y = rng.standard_normal((49, 6, a_ext)).astype(np.float32)
        (st,) = einplan.explain("abc,bca->ab", x, y).to_dict()["steps"]
        order = [lp["labels"] for lp in st["nest"]["loops"]]
        assert (order == ["b", "a", "c"]) == tiled, (a_ext, st["nest"])
        _close(einplan.einsum("abc,bca->ab", x, y), np.einsum("abc,bca->ab", x, y),
               "float32", 6)


def test_the_small_edge_kernel_keeps_a_loop_unit_for_every_operand_inside():
    """'bij,bkj->bki' F-order with b long: b walks every operand at unit
    stride, and each of the other loops steps A or the output a page or more
    an element.  The small-edge kernel (j held around rows of i or k) would
    put b outermost, every element behind a TLB miss ((17855,296,2) f64: 64
    ms, numpy 26); the plain nest runs b as the row (11 ms)."""
    rng = np.random.default_rng(79)
    A = np.asfortranarray(rng.random((1024, 296, 2)))
    B = np.asfortranarray(rng.random((1024, 2, 2)))
    st = einplan.explain("bij,bkj->bki", A, B).plan.steps[0]
    assert isinstance(st, NestStep) and not st.short, st
    assert st.loops[-1].labels == "b", st.loops
    _close(einplan.einsum("bij,bkj->bki", A, B), np.einsum("bij,bkj->bki", A, B), "float64", 2)


def test_a_far_strided_operand_in_l1_keeps_its_loop_outside():
    """An operand the row strides far that fits in half of L1 is re-read
    from there: the loop at its unit stride does not go around the row
    ('bij,bkj->bki' (7,6,1) F x (7,65502,1) f64: b around the row i, in
    7 x 6 tiles, 5.5 ms; b outside k, rows of 6 end to end, 0.7 ms, numpy
    3.6).  One in L2 still costs a line an element, so its loop goes around
    the row ('abcd,bda->c' (2084,1,2,25) F x (1,25,2084) F f64, B 417 KB:
    36 us in tiles, 72 us without)."""
    rng = np.random.default_rng(67)
    a = np.asfortranarray(rng.standard_normal((7, 6, 1)))
    b = rng.standard_normal((7, 65502, 1))
    (st,) = einplan.explain("bij,bkj->bki", a, b).to_dict()["steps"]
    assert [lp["labels"] for lp in st["nest"]["loops"]] == ["b", "k", "i"], st["nest"]
    np.testing.assert_array_equal(einplan.einsum("bij,bkj->bki", a, b),
                                  np.einsum("bij,bkj->bki", a, b))
    a = np.asfortranarray(rng.standard_normal((2084, 1, 2, 25)))
    b = np.asfortranarray(rng.standard_normal((1, 25, 2084)))
    (st,) = einplan.explain("abcd,bda->c", a, b).to_dict()["steps"]
    assert [lp["labels"] for lp in st["nest"]["loops"]][-2:] == ["d", "a"], st["nest"]
    _close(einplan.einsum("abcd,bda->c", a, b), np.einsum("abcd,bda->c", a, b), "float64", 2084)


def test_rows_strided_within_lines_count_their_lines_against_l3():
    """A reduction over a [..., ::2] slice whose elements fit in a core's
    share of L3 and whose lines do not reads the slice in memory order, the
    kept loop inside the long one: with the kept loop b outermost, each of
    its passes reads one line in 25 across the whole slice ('abc->b'
    (19659,20,5) f64, 8.4 ms against numpy's 1.4; in memory order 1.4)."""
    a_ext = int(0.75 * nest.l3_per_core()) // (20 * 5 * 8) + 1
    x = np.random.default_rng(71).standard_normal((a_ext, 20, 10))[:, :, ::2]
    (st,) = einplan.explain("abc->b", x).to_dict()["steps"]
    assert [lp["labels"] for lp in st["nest"]["loops"]] == ["a", "b", "c"], st["nest"]
    _close(einplan.einsum("abc->b", x), np.einsum("abc->b", x), "float64", a_ext * 5)


def test_long_rows_strided_within_lines_are_runs_of_lines():
    """Rows of a [..., ::2] slice longer than the ragged ones read every line
    of their span, as a contiguous row does: the kept loop whose step
    continues them goes inside the one that jumps away, one stream, not a
    stream restarted per row ('abc->b' (2818,24,206) f64: b outermost 25 ms,
    memory order 10, numpy 10.8)."""
    x = np.random.default_rng(79).standard_normal((300, 24, 412))[:, :, ::2]
    (st,) = einplan.explain("abc->b", x).to_dict()["steps"]
    assert [lp["labels"] for lp in st["nest"]["loops"]] == ["a", "b", "c"], st["nest"]
    _close(einplan.einsum("abc->b", x), np.einsum("abc->b", x), "float64", 300 * 206)


def test_summed_rows_of_one_input_share_their_starts_four_at_a_time():
    """A diagonal summed along i ('iji->j' (8,33158,8) f64 viewed with
    strides (8,64,1): 72 bytes a step along i, 512 along j) is the row, run
    four rows a start, not the output's row along j (290 us against 416 in
    tiles; numpy 254); rows of two stay outside ('ab->a' (1864057,2) f32
    along a, 1.4 ms; as rows of 2, 4.2) unless they are end to end and the
    32- and 64-byte kernels pick them a vector of rows at a time (x[::-1]: 0.47 ms,
    along a 0.93-1.07)."""
    rng = np.random.default_rng(73)
    y = rng.standard_normal(8 * 33158 * 8).reshape(33158, 8, 8).transpose(1, 0, 2)
    (st,) = einplan.explain("iji->j", y).to_dict()["steps"]
    assert [lp["labels"] for lp in st["nest"]["loops"]] == ["j", "i"], st["nest"]
    _close(einplan.einsum("iji->j", y), np.einsum("iji->j", y), "float64", 8)
    x = rng.standard_normal((200000, 2)).astype(np.float32)[::-1]
    (st,) = einplan.explain("ab->a", x).to_dict()["steps"]
    picked = nest.vector_lanes(4) * 4 >= 32
    assert [lp["labels"] for lp in st["nest"]["loops"]][-1] == ("b" if picked else "a"), st["nest"]
    x = rng.standard_normal((200000, 3)).astype(np.float32)[:, :2]
    (st,) = einplan.explain("ab->a", x).to_dict()["steps"]
    assert [lp["labels"] for lp in st["nest"]["loops"]][-1] == "a", st["nest"]


def test_a_row_of_few_elements_a_page_is_not_the_row_beyond_l2():
    """Beyond L2, a loop that steps most of a page an element (fewer than
    nest.PAGE_STEPS a page, where the prefetcher has nothing to follow) is
    costlier as the row than one through every line of its span: 'bii->b',
    its diagonals past L2, sums along them (80 bytes a step) with b outside, rather than
    adding along b (1444 bytes a step) into the output's unit stride
    ((30320,19,19) f32: 1.4 ms, against 3.2 ms).  In L2 too, once the row
    spans more pages than the first-level TLB holds ((300,19,19), 106
    pages: 5.1 us against 6.3 us)."""
    for b in (16000, 300):
        a = np.empty((b, 19, 19), np.float32)
        (st,) = einplan.explain("bii->b", a).to_dict()["steps"]
        assert [lp["labels"] for lp in st["nest"]["loops"]] == ["b", "i"], (b, st["nest"])
    a = np.random.default_rng(61).standard_normal((16000, 19, 19), dtype=np.float32)
    _close(einplan.einsum("bii->b", a), np.einsum("bii->b", a), "float32", 19)


def test_a_row_past_the_tlb_in_l2_costs_half_a_line_from_memory_not_more():
    """In L2, a row stepping most of a page an element across more pages
    than the first-level TLB holds costs half a line from memory an element,
    not a far row's line and more: 'abc,acb->ab' (66,2,405) x (66,405,2):T
    f64 sums along c (B 1056 bytes a step over 104 pages, 18 us) rather than
    running 26730 rows of b's 2 elements (235 us; numpy 38)."""
    rng = np.random.default_rng(62)
    a = rng.standard_normal((66, 2, 405))
    b = rng.standard_normal((405, 2, 66)).transpose(2, 0, 1)   # (66, 405, 2), a unit-stride
    (st,) = einplan.explain("abc,acb->ab", a, b).to_dict()["steps"]
    assert st["nest"]["loops"][-1]["labels"] == "c", st["nest"]
    _close(einplan.einsum("abc,acb->ab", a, b), np.einsum("abc,acb->ab", a, b), "float64", 405)


def test_rows_stream_from_memory_past_half_of_l3():
    """Rows stream (in the measured order) once the operands together span
    more than half of L3, not only more than all of it: an L3 shared with
    other cores or guests holds less than its size.  Two operands of 0.3 of
    L3 each stream ('ab,ab->b' (9283, 437) f32, 16.2 MB each on 32 MB of
    L3: four rows at a time 2.2-2.9 ms, one after another 1.0-1.5)."""
    l3 = _native.kernel_config()["caches"]["l3"]
    w = np.ones(128, np.float32)
    for frac, streams in ((0.4, False), (0.6, True)):
        a = np.ones((int(frac * l3) // (4 * 128), 128), np.float32)
        text = str(einplan.explain("ij,j->i", a, w))
        assert ("rows streamed from memory" in text) == streams, (frac, text)
    for frac, streams in ((0.2, False), (0.3, True)):
        a = np.ones((int(frac * l3) // (4 * 437), 437), np.float32)
        text = str(einplan.explain("ij,ij->j", a, a.copy()))
        assert ("rows streamed from memory" in text) == streams, (frac, text)


def test_rows_summed_into_one_row_stream_up_to_three_eighths_of_l1():
    """Long rows summed into one output row from beyond L3 ('ab->a' with a
    the unit stride) are read in the measured order while the output row
    takes at most 3/8 of L1, where it stays as the rows stream past (Zen 4,
    rows of 8968 bytes f64: one after another 1.35 ms, four at a time 1.79;
    of 16000 bytes f32: 0.75 and 0.55)."""
    caches = _native.kernel_config()["caches"]
    l1, l3 = caches["l1d"], caches["l3"]
    for row, streams in ((l1 * 3 // 8, True), (l1 * 3 // 8 + 8, False)):
        n = row // 8
        a = np.empty((2 * l3 // row + 1, n)).T
        text = str(einplan.explain("ab->a", a))
        assert ("rows streamed from memory" in text) == streams, (row, text)


def test_rows_beyond_l3_read_in_the_measured_order_with_the_same_sums():
    """Row sums and a GEMV's dot rows that read an operand beyond L3 run four
    rows at a time or one after another, whichever this core reads faster
    (an AMD Zen 4 reads rows of 128 f32 at 10 GB/s four at a time, 28 one at a
    time; a Xeon prefers four): the first such calls alternate the orders,
    timed, then the faster stays.  Both sum each row the same way, so the
    results are the same bits whichever order runs.  Each kind of row kernel
    measures its own order (a Zen 4 reads 'bii->b''s diagonals twice as fast
    one after another, where short dot rows measured four faster);
    EINPLAN_STREAM_ROWS fixes every kind's order (dot rows of 40, and
    apart from those, long ones of 128 and 1024, the four-row vector path
    and rows_dot4; sums of rows of 40, and apart from those, long ones of 64,
    and of 300 end to end; rows of 503
    summed, and scaled, into one output row, contiguous or at stride 2 (a
    [:, ::2] slice), and so rows just longer than
    the kernel set's registers hold ('j,jk->k' (37010,120) f64 on AVX2 0.45x numpy four at a time, 1.1x
    one after another) and rows of 7 KB; one input's diagonals, 'bii->b',
    in four scalar chains or one row after another; complex64 rows of 45
    dotted with one vector, 'ij,j->i', always one after another, with the
    bits of the same rows read four at a time in cache)."""
    import os
    import subprocess
    import sys
    res = {}
    for order in ("", "1", "4"):
        env = dict(os.environ, EINPLAN_STREAM_ROWS=order)
        p = subprocess.run([sys.executable, "-c", _STREAM_SCRIPT], env=env,
                           capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stderr
        res[order] = p.stdout.split()
    assert res["1"][:13] == res["4"][:13] == res[""][:13], res
    assert res["1"][13:21] == ["one"] * 8 and res["4"][13:21] == ["four"] * 8, res
    # measured: each kind of rows times both orders and keeps one of them,
    # the diagonals' order not decided by the dots measured before them
    assert res[""][13] in ("one", "four") and res[""][14] == "measuring", res
    assert set(res[""][15:21]) <= {"one", "four"} and res[""][21] == "True", res


@pytest.mark.parametrize("isa", RUN_ISAS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_rows_shorter_than_a_vector_load_whole(isa, dtype, one_thread):
    """Rows of 2 .. 15 elements against one vector shared by every row
    ('...ij,j->...i' with j = 14 f32), a vector of rows at a time, each row
    one load reaching past its end: rows end to end (the operand a whole
    allocation, so the last rows' loads would pass its end) and rows with
    gaps of inf and nan that must stay out of every sum; row counts around
    the vector's multiples; the vector as either input, a scale per row, a
    strided output and an outer visit that adds; rows overlapping one
    element apart.  Equal rows shorter than a vector give equal sums
    whichever way their row is read."""
    lanes = (64 if isa == "avx512" else 32 if isa == "avx2" else 16) // np.dtype(dtype).itemsize
    rng = np.random.default_rng(41)
    u = _rand(rng, 80, dtype)
    for n in (2, 3, 5, 7, 9, 14, 15):
        v = _rand(rng, n, dtype)
        for gap in (0, 1, 5):
            for R in (16, 17, 31, 33, 50):
                if gap:
                    M = np.full((R, n + gap), np.inf, dtype)
                    M[:, n + gap - 1] = np.nan
                    M[:, :n] = _rand(rng, (R, n), dtype)
                else:
                    M = _rand(rng, (R, n), dtype)
                A, ra = M[:, :n], n + gap
                want = A.astype(np.float64) @ v.astype(np.float64)
                o = np.full(2 * R, np.nan, dtype)
                _native.prepare_nest(dtype, 2, [(R, ra, 0, 2), (n, 1, 1, 0)])(
                    (M, v), o, isa=isa)
                _close(o[::2], want, dtype, n)
                assert np.isnan(o[1::2]).all()
                _native.prepare_nest(dtype, 2, [(R, 0, ra, 1), (n, 1, 1, 0)])(
                    (v, M), o, isa=isa)
                _close(o[:R], want, dtype, n)
                _native.prepare_nest(dtype, 3, [(R, ra, 0, 1, 1), (n, 1, 1, 0, 0)])(
                    (M, v, u), o, isa=isa)
                _close(o[:R], want * u[:R], dtype, n)
                _native.prepare_nest(dtype, 2, [(2, 0, 0, 0), (R, ra, 0, 1), (n, 1, 1, 0)])(
                    (M, v), o, isa=isa)
                _close(o[:R], 2 * want, dtype, 2 * n)
            if n < lanes:
                M[:] = M[:1]
                _native.prepare_nest(dtype, 2, [(R, n + gap, 0, 1), (n, 1, 1, 0)])(
                    (M, v), o, isa=isa)
                assert np.unique(o[:R]).size == 1, (n, gap, o[:R])
        # rows overlapping, one element apart (a sliding window): the last
        # rows' loads would pass the operand's end, and the first of those
        # start too early for a load ending on their end
        base = _rand(rng, 40 + n, dtype)
        win = np.lib.stride_tricks.sliding_window_view(base, n)
        o = np.full(41, np.nan, dtype)
        _native.prepare_nest(dtype, 2, [(41, 1, 0, 1), (n, 1, 1, 0)])((base, v), o, isa=isa)
        _close(o, win.astype(np.float64) @ v.astype(np.float64), dtype, n)


def test_short_dot_rows_against_a_shared_vector_take_the_dot_form():
    """'ij,j->i' with j = 3: rows of 3 against the vector every row shares
    run a vector of rows at a time, so the row is j (the dot form: A read
    once, each output written once), not i at stride 3 (the axpy form: A's
    lines and the output once per j).  Rows of 2 fill too few lanes and keep
    the axpy form, unless the 32- and 64-byte kernels pick them a vector of rows at a
    time (end to end); rows whose loop around moves both inputs keep it too.
    (With SSE's four lanes the small-edge kernel may take the call instead.)"""
    picked = nest.vector_lanes(4) * 4 >= 32
    for n, row in ((3, "j"), (5, "j"), (2, "j" if picked else "i")):
        table = {"i": (219620, (n, 0, 1)), "j": (n, (1, 1, 0))}
        assert nest.order_loops(table, 4)[-1] == row, n
    # both inputs move along the loop that would go around rows of c: no
    # vector shared by the rows ('abc,bc->a' with a outermost)
    table = {"a": (532, (1626, 0, 1)), "b": (542, (3, 3, 0)), "c": (3, (1, 1, 0))}
    assert nest.order_loops(table, 4)[-1] == "b"
    A = np.random.default_rng(5).random((4099, 3), dtype=np.float32)
    x = np.random.default_rng(6).random(3, dtype=np.float32)
    step = einplan.explain("ij,j->i", A, x).plan.steps[0]
    if nest.vector_lanes(4) >= 8:
        assert step.loops[-1].labels == "j" and step.row == "sum/contig", step
    np.testing.assert_allclose(einplan.einsum("ij,j->i", A, x), A @ x, rtol=1e-5)


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_kept_block_is_summed_over_its_rows_first(dtype):
    """A sum whose kept axes lie inside one contiguous block with a summed
    axis ('abcd->b' F-order: a, b innermost, c, d outside) runs in two nests:
    the block's rows summed over the loops outside (one pass, vectors along
    the block) into a block-sized buffer, then the block's own summed axis,
    where one nest ran three rows of 15 per call (0.35x numpy); out= too.
    Too few rows outside, a block of kept axes only, or axes strided within
    the block keep one nest."""
    rng = np.random.default_rng(17)
    A = _rand(rng, (50, 100, 3, 15), dtype).transpose(3, 2, 1, 0)
    plan = _plan_for("abcd->b", A)
    first, last = plan.steps
    assert isinstance(first, NestStep) and first.dst != OUT and first.out_labels == "ba"
    assert isinstance(last, NestStep) and last.inputs == (first.dst,) and last.dst == OUT
    want = np.einsum("abcd->b", A.astype(np.complex128))
    _close(einplan.einsum("abcd->b", A), want, dtype, 75000)
    out = np.full(3, np.nan, dtype)
    assert einplan.einsum("abcd->b", A, out=out) is out
    _close(out, want, dtype, 75000)
    B = _rand(rng, (4000, 3, 100), dtype)[:, :, ::2]
    _close(einplan.einsum("abc->b", B), np.einsum("abc->b", B.astype(np.complex128)),
           dtype, 200000)
    assert len(_plan_for("abc->b", B).steps) == 1
    assert len(_plan_for("abc->b", B.copy()).steps) == 2
    assert len(_plan_for("abcd->b", A[:, :, :4, :4]).steps) == 1
    assert len(_plan_for("ab->b", _rand(rng, (1000, 6), dtype)).steps) == 1


def _rows_far_apart(dtype, lengths, seed):
    """(v, rows' stride in elements): a[::step, o:o + n] of a (203, wide)
    array, rows at least two lines apart, for each n of ``lengths``, every
    offset o within a line, forwards and reversed."""
    rng = np.random.default_rng(seed)
    item = np.dtype(dtype).itemsize
    per_line = 64 // item
    base = rng.standard_normal((203, 320 // item + per_line), dtype=np.float64).astype(dtype)
    for n in lengths(per_line):
        for o in range(per_line):
            for step in (1, -1):
                v = base[::step, o:o + n]
                yield v, v.strides[0] // item


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_short_rows_far_apart_sum_the_same_from_any_offset(dtype, isa):
    """One input's short contiguous rows two or more lines apart ('ab->a' on
    a[:, o:o + n], the rows the kernel prefetches ahead when they span two
    or three lines): rows of one to three lines, a count not a multiple of
    four."""
    lengths = lambda pl: (pl // 2 + 1, pl, pl + 3, 2 * pl + 1, 3 * pl)
    for v, rs in _rows_far_apart(dtype, lengths, 71):
        n = v.shape[1]
        r = np.full(v.shape[0], np.nan, dtype)
        _native.prepare_nest(dtype, 1, [(v.shape[0], rs, 1), (n, 1, 0)])((v,), r, isa=isa)
        _close(r, v.astype(np.float64).sum(axis=1), dtype, n)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_short_dot_rows_far_apart_against_one_vector_from_any_offset(dtype, isa):
    """A GEMV's dot rows against one vector ('ab,b->a' on a[:, o:o + n]), rows
    two or more lines apart that the kernel prefetches ahead: rows shorter
    than a vector (one load each) and of one to three vectors, a count not a
    multiple of the vector's lanes."""
    rng = np.random.default_rng(73)
    lengths = lambda pl: (3, pl - 1, pl, pl + 5, 2 * pl + 1)
    for v, rs in _rows_far_apart(dtype, lengths, 73):
        n = v.shape[1]
        w = rng.standard_normal(n, dtype=np.float64).astype(dtype)
        r = np.full(v.shape[0], np.nan, dtype)
        loops = [(v.shape[0], rs, 0, 1), (n, 1, 1, 0)]
        _native.prepare_nest(dtype, 2, loops)((v, w), r, isa=isa)
        _close(r, v.astype(np.float64) @ w.astype(np.float64), dtype, n)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_short_rows_far_apart_summed_into_one_row_from_any_offset(dtype, isa):
    """One input's short rows two or more lines apart summed into one output
    row, plain and scaled per row ('ab->b', 'ab,a->b' on a[:, o:o + n]: the
    rows held in registers, prefetched ahead): rows shorter than a vector
    and of one to three vectors."""
    scale = np.random.default_rng(79).standard_normal(203).astype(dtype)
    lengths = lambda pl: (5, pl, pl + 3, 2 * pl + 1, 3 * pl)
    for v, rs in _rows_far_apart(dtype, lengths, 79):
        n = v.shape[1]
        r = np.full(n, np.nan, dtype)
        _native.prepare_nest(dtype, 1, [(203, rs, 0), (n, 1, 1)])((v,), r, isa=isa)
        _close(r, v.astype(np.float64).sum(axis=0), dtype, 203)
        r = np.full(n, np.nan, dtype)
        _native.prepare_nest(dtype, 2, [(203, rs, 1, 0), (n, 1, 0, 1)])((v, scale), r, isa=isa)
        _close(r, scale.astype(np.float64) @ v.astype(np.float64), dtype, 203)


_LOADS_SCRIPT = r"""
import hashlib, sys
import numpy as np, einplan
from einplan import _native
einplan.set_num_threads(int(sys.argv[1]))
caches = _native.kernel_config()["caches"]
l2, l3 = caches["l2"] or 1 << 20, caches["l3"] or 32 << 20
rng = np.random.default_rng(71)
out, wide = [], _native.isa() == "avx512"
n = int(sys.argv[1]) * l2 // 8 + 37   # three f32 rows past each thread's L2 (two inputs, output)
m = l3 // 4 + 37                 # one f32 row summed past L3
for dtype in ("float32", "float64"):
    x = rng.standard_normal(n).astype(dtype)
    y = rng.standard_normal(n).astype(dtype)
    f = np.asfortranarray(rng.standard_normal((61, n // 61 + 3)).astype(dtype))
    g = np.asfortranarray(rng.standard_normal((61, n // 61 + 3)).astype(dtype))
    u = rng.standard_normal(m).astype(dtype)
    v = rng.standard_normal(m).astype(dtype)
    h = np.asfortranarray(rng.standard_normal((7, m // 7 + 5)).astype(dtype))
    calls = [("products", "a,a->a", (x, y), x * y),
             ("products", "a,->a", (x, np.asarray(2.5, dtype)), x * np.asarray(2.5, dtype)),
             ("products", "ab,ab->ab", (f, g), f * g),
             ("products", "a,a->a", (x[1:], y[:-1]), x[1:] * y[:-1]),
             ("sums", "a,a->", (u, v), None), ("sums", "a->", (u[3:],), None),
             ("sums", "ab->", (h,), None), ("sums", "a,->", (u, np.asarray(0.5, dtype)), None)]
    for kind, spec, ops, ref in calls:
        what = einplan.explain(spec, *ops).to_dict()["steps"][0]["what"]
        assert (f"a row of {kind} past L" in what) == wide, (spec, what)
        first = None
        for _ in range(40):        # the measuring calls take both ways
            r = einplan.einsum(spec, *ops)
            if ref is not None:
                assert np.array_equal(r, ref), spec
            else:                  # sums: the same bits every call, numpy's value
                assert first is None or r.tobytes() == first.tobytes(), spec
                first = r
        if ref is None:
            want = np.einsum(spec, *[o.astype(np.float64) for o in ops])
            assert abs(r - want) <= 1e-3 * np.sqrt(ops[0].size) * (1 if dtype == "float32" else 1e-8), spec
        out.append(hashlib.sha1(np.asarray(r).tobytes()).hexdigest()[:12])
for dtype in ("complex64", "complex128"):   # complex sums past L3: a dot, a sum
    mc = l3 // np.dtype(dtype).itemsize + 37
    u = (rng.standard_normal(mc) + 1j * rng.standard_normal(mc)).astype(dtype)
    v = (rng.standard_normal(mc) + 1j * rng.standard_normal(mc)).astype(dtype)
    for spec, ops in (("a,a->", (u, v)), ("a->", (u[3:],))):
        what = einplan.explain(spec, *ops).to_dict()["steps"][0]["what"]
        assert ("a row of sums past L3" in what) == wide, (spec, what)
        first = None
        for _ in range(40):
            r = einplan.einsum(spec, *ops)
            assert first is None or r.tobytes() == first.tobytes(), spec
            first = r
        want = np.einsum(spec, *[o.astype(np.complex128) for o in ops])
        tol = 1e-3 if dtype == "complex64" else 1e-11
        assert abs(r - want) <= tol * np.sqrt(mc), (spec, r, want)
        out.append(hashlib.sha1(np.asarray(r).tobytes()).hexdigest()[:12])
print(" ".join(out), end=" ")
for kind in ("products", "sums"):
    way, whole, halves = _native.load_width(kind)
    print(way, whole > 0, halves > 0, end=" ")
"""


@pytest.mark.parametrize("threads", [1, 2])
def test_rows_past_l2_and_sums_past_l3_load_whole_or_in_halves_with_the_same_bits(threads):
    """A contiguous row of products past L2, or of sums past L3 (one or two
    inputs, a scale; complex sums and dots too), on 64-byte vectors loads
    them whole or as two 32-byte halves, whichever this core streams
    faster (Zen 4: 'a,a->a' 3.3M float32 0.92 ms in halves, 1.03 whole;
    'a->' of 120 MB float64 4.7-4.9 ms in halves, 5.5-5.9 whole): the first such calls of each kind take
    the two in turn, timed, then the faster stays; explain names it.  Both
    ways compute the same products and the same sums, so every call gives
    the same bits (numpy's for products; a merged F-order pair, rows offset
    by one element); EINPLAN_STREAM_LOADS fixes the way.  Kernel sets of
    narrower vectors have no such rows and never measure."""
    import os
    import subprocess
    import sys
    res = {}
    for way in ("", "whole", "halves"):
        env = dict(os.environ, EINPLAN_STREAM_LOADS=way)
        p = subprocess.run([sys.executable, "-c", _LOADS_SCRIPT, str(threads)], env=env,
                           capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stderr
        res[way] = p.stdout.split()
    h = 20                             # 16 real calls' hashes, 4 complex ones
    assert res["whole"][:h] == res["halves"][:h] == res[""][:h], res
    assert res["whole"][h::3] == ["whole"] * 2 and res["halves"][h::3] == ["halves"] * 2, res
    if _native.isa() == "avx512":
        assert all(w in ("whole", "halves") for w in res[""][h::3]), res
        assert res[""][h + 1:h + 3] == res[""][h + 4:h + 6] == ["True", "True"], res
    else:
        assert res[""][h:] == ["measuring", "False", "False"] * 2, res


def test_two_rows_sharing_their_lines_run_row_by_row():
    """A loop of two rows around the row whose strided input steps within a
    line along it ('abcd,dbac->' with A[..., ::2]: d's two rows two elements
    apart) runs them one after another, the second re-reading the first's
    lines from cache, with no tiles and no transposing kernel (0.51x numpy
    transposed, 1.3x row by row); three rows still take tiles."""
    rng = np.random.default_rng(73)
    a = rng.standard_normal((2, 195, 1224, 4)).astype(np.float32)[..., ::2]
    b = rng.standard_normal((2, 195, 2, 1224)).astype(np.float32)
    (st,) = einplan.explain("abcd,dbac->", a, b).to_dict()["steps"]
    assert not st["nest"]["tile"] and st["nest"]["loops"][-2]["extent"] == 2, st["nest"]
    assert nest.rows_share_lines(_plan_for("abcd,dbac->", a, b).steps[0].loops, 4)
    _close(einplan.einsum("abcd,dbac->", a, b), np.einsum("abcd,dbac->", a, b), "float32",
           a.size)
    for m in (2, 3):
        x = rng.random((m, 3001)).astype(np.float32)
        y = np.asfortranarray(rng.random((m, 3001)).astype(np.float32))
        step = _plan_for("ab,ab->", x, y).steps[0]
        assert bool(step.tile) == (m == 3), (m, step)
        _close(einplan.einsum("ab,ab->", x, y), np.einsum("ab,ab->", x, y), "float32", x.size)


@pytest.mark.parametrize("isa", RUN_ISAS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_rows_into_one_scaled_by_several_inputs(isa, dtype, one_thread):
    """Rows summed into one output row, each scaled by two or three inputs
    constant along it ('ia,ib,ic->abc'): the scales multiplied per chunk of
    rows, then the one-scale kernels -- the same bits as the rows scaled by
    the product made beforehand, for row counts under, at and past a chunk
    (256) and between chunks, rows held in registers, four at a time, at
    stride 2, and scales read backwards, strided or constant (the bits are
    compared where the one-scale kernels take the rows in one chunk: 16 to
    256 rows of 16 contiguous elements or more)."""
    rng = np.random.default_rng(53)
    for R in (2, 15, 17, 256, 257, 300, 513):
        for n in (5, 16, 40, 300):
            for sb in (1, 2):
                Bw = _rand(rng, (R, sb * n), dtype)
                B = Bw[:, ::sb]
                x = _rand(rng, (R,), dtype)[::-1]
                z = _rand(rng, (2 * R,), dtype)[::2]
                c = np.full(R, _rand(rng, (1,), dtype)[0])
                for fs in [(x, z), (x, z, c)]:
                    w = fs[0] * fs[1]
                    if len(fs) == 3:
                        w = w * fs[2]
                    ins = fs[:1] + (B,) + fs[1:]
                    loops = [(R,) + tuple(estrides(a)[0] for a in fs[:1]) + (estrides(B)[0],)
                             + tuple(estrides(a)[0] for a in fs[1:]) + (0,),
                             (n, 0, sb) + (0,) * (len(fs) - 1) + (1,)]
                    want = (w[:, None] * B).sum(0)
                    _into_one_row_and_again(dtype, len(ins), loops, ins, want, R, isa)
                    if R < 16 or R > 256 or n < 16 or sb != 1:
                        # not every such call takes the one-scale kernels, and
                        # rows held in registers sum each chunk apart
                        continue
                    o = np.empty(n, dtype)
                    _native.prepare_nest(dtype, len(ins), loops)(ins, o, isa=isa)
                    o2 = np.empty(n, dtype)
                    _native.prepare_nest(dtype, 2, [(R, 1, estrides(B)[0], 0),
                                                    (n, 0, sb, 1)])((w, B), o2, isa=isa)
                    np.testing.assert_array_equal(o, o2)


@pytest.mark.parametrize("isa", RUN_ISAS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_rows_only_moved_are_copied_exactly(isa, dtype, one_thread):
    """Rows of one input, nothing summed or scaled, into output rows (an
    einsum that only moves elements, 'abcd->abc' of a reversed view): each
    row copied as it is, the rows read backwards or apart, rows up to and
    past the copy's 4096 bytes, and again with the rows added to (an outer
    summed loop of 2: the copy writes, the second visit adds)."""
    rng = np.random.default_rng(59)
    size = np.dtype(dtype).itemsize
    for n in (1, 7, 28, 4096 // size, 4096 // size + 1):
        for R in (1, 3, 40):
            X = _rand(rng, (R, n + 3), dtype)
            for A in (X[::-1, :n], X[:, 2:n + 2]):
                o = np.full((R, n), np.nan, dtype)
                _native.prepare_nest(dtype, 1, [(R, estrides(A)[0], n), (n, 1, 1)])((A,), o,
                                                                                   isa=isa)
                np.testing.assert_array_equal(o, A)
                _native.prepare_nest(dtype, 1, [(2, 0, 0), (R, estrides(A)[0], n),
                                                (n, 1, 1)])((A,), o, isa=isa)
                np.testing.assert_array_equal(o, A + A)


def test_tiles_of_a_far_strided_input_run_in_row_blocks_within_the_tlb():
    """An input stepping a page or more per element of the tiles' row,
    walked by a loop outside the tiles at less than a page a step, runs
    the row in blocks (block loop outermost) whose span of that input the
    second-level TLB holds: 'abcd,abcd->' (26,589,84,8)[..., ::2] x its
    (d,c,a,b)-ordered copy f64 (A 10.7 KB per element of the row ab, c
    outside at 128 bytes) in blocks of 2 MB / 10.7 KB -> 128; the same
    call on small operands, whose row is one block, has none; blocked rows
    sum to numpy's result, into one element and into an output along c."""
    from einplan.nest import TLB_SPAN
    A = np.empty((26, 589, 84, 16))[..., ::2]
    B = np.empty((8, 84, 26, 589)).transpose(2, 3, 1, 0)
    (st,) = _plan_for("abcd,abcd->", A, B).steps
    assert st.row == "sum/transposed" and st.tile, st
    assert st.block == 128 and TLB_SPAN // (1344 * 8) < 256, st
    assert "row in blocks of 128" in str(einplan.explain("abcd,abcd->", A, B))
    rng = np.random.default_rng(15)
    A = rng.standard_normal((3, 200, 84, 16))[..., ::2]
    B = rng.standard_normal((8, 84, 3, 200)).transpose(2, 3, 1, 0)
    assert _plan_for("abcd,abcd->", A[:, :50], B[:, :50]).steps[0].block == 0
    assert 0 < _plan_for("abcd,abcd->", A, B).steps[0].block < 600
    got = einplan.einsum("abcd,abcd->", A, B)
    np.testing.assert_allclose(got, np.einsum("abcd,abcd->", A, B), rtol=1e-10)
    got = einplan.einsum("abcd,abcd->c", A, B)
    np.testing.assert_allclose(got, np.einsum("abcd,abcd->c", A, B), rtol=1e-10, atol=1e-10)


def test_threads_share_out_a_loop_whose_output_steps_a_line(restore_threads):
    """Two threads share out the outermost loop whose output steps a cache
    line or more, not one stepping less, along which their writes would
    share lines: 'ij...,jk...->ik...' (204,3,5,1) x (3,54,1,5) f32 shared out
    A, 5 elements apart in the output (2 threads 480 us, 1 thread 213); i,
    1350 apart, is shared out instead."""
    einplan.set_num_threads(2)
    rng = np.random.default_rng(16)
    A = rng.standard_normal((204, 3, 5, 1)).astype(np.float32)
    B = rng.standard_normal((3, 54, 1, 5)).astype(np.float32)
    (st,) = _plan_for("ij...,jk...->ik...", A, B).steps
    assert st.threads >= 2 and st.split >= 0, st
    assert abs(st.loops[st.split].strides[-1]) * 4 >= 64, st
    np.testing.assert_allclose(einplan.einsum("ij...,jk...->ik...", A, B),
                               np.einsum("ij...,jk...->ik...", A, B), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("isa", RUN_ISAS)
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_dot_rows_against_a_shared_vector(isa, dtype, one_thread):
    """Complex rows of 2..2 vectors of reals dotted with one vector shared by
    every row ('ab,b->a'), a vector of rows at a time (crows_dotv): rows end
    to end and apart, the last rows ending on the operand's last element
    (rows shorter than a vector load past their end only inside it), the
    vector at strides 1, -1 and 3, the output at strides 1 and 2, each row
    times a scale (a third input constant along the row), and added to on
    an outer loop's second visit."""
    from numpy.lib.stride_tricks import as_strided
    rng = np.random.default_rng(47)
    for n in (2, 3, 5, 7, 8, 9, 12, 16, 17):
        for R, gap in ((3, 0), (17, 0), (64, 0), (100, 3), (257, 0), (70, 1)):
            az = n + gap
            buf = _rand(rng, (R - 1) * az + n, dtype)
            a = as_strided(buf, (R, n), (az * buf.itemsize, buf.itemsize))
            W = _rand(rng, 3 * n, dtype)
            for sw in (1, -1, 3):
                w = W[::sw][:n]
                ws = w.strides[0] // w.itemsize
                want = (a * w).sum(-1)
                for so in (1, 2):
                    o = np.full(so * R + 1, np.nan, dtype)
                    call = _native.prepare_nest(dtype, 2, [(R, az, 0, so), (n, 1, ws, 0)])
                    call((a, w), o[:so * R], isa=isa)
                    _close(o[:so * R:so], want, dtype, n)
                    assert np.isnan(o[-1])
                t = _rand(rng, R, dtype)
                o = np.full(R, np.nan, dtype)
                _native.prepare_nest(dtype, 3, [(R, az, 0, 1, 1), (n, 1, ws, 0, 0)])(
                    (a, w, t), o, isa=isa)
                _close(o, want * t, dtype, n)
                _native.prepare_nest(dtype, 2, [(2, 0, 0, 0), (R, az, 0, 1), (n, 1, ws, 0)])(
                    (a, w), o, isa=isa)
                _close(o, 2 * want, dtype, 2 * n)
    if "avx512" in RUN_ISAS and isa == "avx512":
        # such rows of 4..7 complex64 stay on 64-byte vectors (other rows of
        # that length run on the AVX2 kernels' 32-byte ones)
        call = _native.prepare_nest("complex64", 2, [(100, 5, 0, 1), (5, 1, 1, 0)])
        assert call.row_isa() == "avx512"
        call = _native.prepare_nest("complex64", 2, [(100, 5, 1, 0), (5, 1, 0, 1)])
        assert call.row_isa() == "avx2"


def test_dot_rows_end_to_end_up_to_three_pages_take_the_measured_order():
    """A GEMV's dot rows end to end beyond L3 run in the measured order up
    to EP_SEQ_DOT_ROW (12 KB: one after another, a Zen 4 reads rows of
    4480 bytes at 30 GB/s, four at a time 15); rows apart past a page, and
    rows end to end past three pages, stay four at a time (no order to
    measure).  Only the descriptor is asked: no operand is read."""
    l3 = _native.kernel_config()["caches"]["l3"]
    for n, az, kind in ((1024, 1024, "long dots"), (2000, 2000, "long dots"),
                        (3072, 3072, "long dots"), (3200, 3200, None), (2000, 2016, None)):
        rows = 2 * l3 // (4 * n) + 3
        call = _native.prepare_nest("float32", 2, [(rows, az, 0, 1), (n, 1, 1, 0)])
        assert call.streams() == kind, (n, az)
