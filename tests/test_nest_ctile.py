"""The loop-nest engine's register-tile kernel (an output tile of W x V in
registers while K streams, ep_nest_ctile_template.h): every ISA this CPU
runs, every dtype, sizes around the vector widths and the block edges,
unit, strided and negative strides, x read in place or copied, V shared
out by threads, through NestCall descriptors; and the planner's choice of
it for GEMMs with a short edge (recorded in the NestStep with its reason,
printed by explain, results equal to numpy's for transposed, sliced and
negative-stride operands)."""
import dataclasses

import numpy as np
import pytest

import einplan
from einplan import _native, cost
from einplan.plan import GemmStep, NestStep

from _gemm_util import assert_sum_close, estrides, rand

K = _native._kernels
pytestmark = pytest.mark.skipif(K is None, reason="compiled kernels not built")
CDTYPES = ["complex64", "complex128"]
DTYPES = ["float32", "float64"] + CDTYPES


def _close(got, want, dtype, k):
    assert_sum_close(got, want, dtype, k, ulps=16)


_st = estrides


def _run(dtype, loops, ins, out, isa, short=2):
    call = _native.prepare_nest(dtype, len(ins), loops, short=short)
    call(tuple(ins), out, isa=isa)
    return out


def _x_layouts(shape, dtype, rng):
    """x as [k][v]: v unit-stride, v strided by 3, v negative, k unit-stride."""
    kk, vv = shape
    yield rand(shape, dtype, rng=rng)
    yield rand((kk, 3 * vv), dtype, rng=rng)[:, ::3]
    yield rand(shape, dtype, rng=rng)[:, ::-1]
    yield np.asfortranarray(rand(shape, dtype, rng=rng))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("W", [1, 2, 3, 4, 5, 7, 9])
@pytest.mark.parametrize("V", [1, 2, 3, 4, 5, 8, 9, 17, 130, 300])
def test_register_tile_kernel(isa, dtype, W, V, one_thread):
    """o[w, v] = sum_k x[k, v] * y[w, k] as loops W > K > V: every tile
    variant (1 or 2 vectors along V, strips of 1-3 along W for complex, 1-4
    for real), V padded to whole vectors and cut into runs of the block, K
    across block edges; x unit-stride along V (read in place when W is one
    strip, or complex with K past a block (150): every strip inside each
    tile; its last partial tile copied), strided, negative and Fortran
    (copied); the output unit-stride, strided and negative along V."""
    rng = np.random.default_rng(W * 1000 + V)
    for Kx in (1, 5, 150):
        y = rand((W, Kx), dtype, rng=rng)
        sy = _st(y)
        for x in _x_layouts((Kx, V), dtype, rng):
            sx = _st(x)
            want = y @ x
            outs = (np.full((W, V), np.nan, dtype), np.full((W, V), np.nan, dtype)[:, ::-1],
                    np.full((V, W), np.nan, dtype).T)
            for o in outs:
                so = _st(o)
                _run(dtype, [(W, 0, sy[0], so[0]), (Kx, sx[0], sy[1], 0),
                             (V, sx[1], 0, so[1])], (x, y), o, isa)
                _close(o, want, dtype, Kx)


def _one_and_two_threads(dtype, x, y, split, isa):
    """The kernel's o = y @ x (W, K, V loops, ``split`` shared out) on one
    thread and on two: the two outputs."""
    (W, Kx), V = y.shape, x.shape[1]
    sx, sy = _st(x), _st(y)
    outs = []
    for threads in (1, 2):
        einplan.set_num_threads(threads)
        o = np.full((W, V), np.nan, dtype)
        so = _st(o)
        call = _native.prepare_nest(dtype, 2, [(W, 0, sy[0], so[0]), (Kx, sx[0], sy[1], 0),
                                               (V, sx[1], 0, so[1])],
                                    split=split, threads=threads, short=2)
        call((x, y), o, isa=isa)
        outs.append(o)
    return outs


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("W", [2, 4, 7])
def test_register_tile_kernel_shares_v_out(isa, dtype, W, restore_threads):
    """With no loop outside the kernel's three, two threads share V out:
    each runs its part of V, x and the output offset to it (the parts
    starting mid-vector), with x read in place or copied, and a small
    output whose K blocks run outside V (blocked by all of V, not by a
    thread's part); the result is one thread's, to the last bit."""
    rng = np.random.default_rng(W)
    Kx = 70
    for x in (rand((Kx, 8201), dtype, rng=rng), rand((Kx, 2 * 8201), dtype, rng=rng)[:, ::2],
              rand((Kx, 203), dtype, rng=rng)):
        y = rand((W, Kx), dtype, rng=rng)
        one, two = _one_and_two_threads(dtype, x, y, 2, isa)
        _close(two, y @ x, dtype, Kx)
        np.testing.assert_array_equal(two, one)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("W", [5, 7, 9, 40])
def test_register_tile_kernel_shares_w_out(isa, dtype, W, restore_threads):
    """With no loop outside the kernel's three and V short, two threads
    share W out: each runs its part of W, y and the output offset to it,
    x read in place or copied; a thread's part of one strip or less blocks
    K as all of W does (W = 5, 7, 9 against strips of 3, 4 or 8: parts
    that alone would run their K blocks outside V), so the result is one
    thread's, to the last bit."""
    rng = np.random.default_rng(W)
    Kx = 70
    for x in (rand((Kx, 203), dtype, rng=rng), rand((Kx, 2 * 203), dtype, rng=rng)[:, ::2]):
        y = rand((W, Kx), dtype, rng=rng)
        one, two = _one_and_two_threads(dtype, x, y, 0, isa)
        _close(two, y @ x, dtype, Kx)
        np.testing.assert_array_equal(two, one)


@pytest.mark.parametrize("dtype", DTYPES)
def test_register_tile_kernel_shares_k_out(isa, dtype, restore_threads):
    """With the kernel's three loops the whole nest and W and V short, two
    threads share K out: each sums its part into a private output, the
    parts added in thread order -- numpy's result, the same bits call after
    call, K split unevenly too; a nest whose split loop the output does not
    move along, outside the kernel, runs on one thread (no two threads
    adding to one element)."""
    rng = np.random.default_rng(5)
    W, V = 3, 37
    for Kx in (1000, 1001):
        x = rand((Kx, V), dtype, rng=rng)
        y = rand((W, Kx), dtype, rng=rng)
        sx, sy = _st(x), _st(y)
        einplan.set_num_threads(2)
        outs = []
        for _ in range(2):
            o = np.full((W, V), np.nan, dtype)
            so = _st(o)
            call = _native.prepare_nest(dtype, 2, [(W, 0, sy[0], so[0]), (Kx, sx[0], sy[1], 0),
                                                   (V, sx[1], 0, so[1])],
                                        split=1, threads=2, short=2)
            call((x, y), o, isa=isa)
            outs.append(o)
        _close(outs[0], y @ x, dtype, Kx)
        np.testing.assert_array_equal(outs[1], outs[0])
        # the plain nest (no register tiles) asked to share the same loop
        o = np.full((W, V), np.nan, dtype)
        so = _st(o)
        _native.prepare_nest(dtype, 2, [(W, 0, sy[0], so[0]), (Kx, sx[0], sy[1], 0),
                                        (V, sx[1], 0, so[1])], split=1, threads=2)(
            (x, y), o, isa=isa)
        _close(o, y @ x, dtype, Kx)
    # planned so: 'ij,jk->ik' with A's columns long and the output short
    a = np.asfortranarray(rand((37, 20000), dtype, rng=rng))
    b = np.asfortranarray(rand((20000, 3), dtype, rng=rng))
    (step,) = _steps("ij,jk->ik", a, b)
    assert isinstance(step, NestStep) and step.ctile and step.split == 1, step
    _close(einplan.einsum("ij,jk->ik", a, b), a @ b, dtype, 20000)


@pytest.mark.parametrize("dtype", DTYPES)
def test_register_tile_kernel_outer_loops(isa, dtype, one_thread):
    """Loops outside the kernel: a summed one (first visit stores, later
    ones add), a batch loop every operand moves along, x as input 1 (y
    as input 0), and a descriptor the kernel does not fit (the output
    moving along K) running the plain nest instead."""
    rng = np.random.default_rng(11)
    J, W, Kx, V = 3, 4, 37, 11
    x = rand((J, Kx, V), dtype, rng=rng)
    y = rand((W, J, Kx), dtype, rng=rng)
    sx, sy = _st(x), _st(y)
    o = np.full((W, V), np.nan, dtype)
    so = _st(o)
    _run(dtype, [(J, sx[0], sy[1], 0), (W, 0, sy[0], so[0]), (Kx, sx[1], sy[2], 0),
                 (V, sx[2], 0, so[1])], (x, y), o, isa)
    _close(o, np.einsum("jkv,wjk->wv", x, y), dtype, J * Kx)
    # batch: b moves in every operand; y given first
    B = 5
    xb, yb = rand((B, Kx, V), dtype, rng=rng), rand((B, W, Kx), dtype, rng=rng)
    ob = np.full((B, W, V), np.nan, dtype)
    sx, sy, so = _st(xb), _st(yb), _st(ob)
    _run(dtype, [(B, sy[0], sx[0], so[0]), (W, sy[1], 0, so[1]), (Kx, sy[2], sx[1], 0),
                 (V, 0, sx[2], so[2])], (yb, xb), ob, isa)
    _close(ob, np.einsum("bkv,bwk->bwv", xb, yb), dtype, Kx)
    # the output moves along K: not the kernel's shape, the plain nest runs
    o3 = np.full((W, Kx, V), np.nan, dtype)
    s3 = _st(o3)
    x2, y2 = xb[0], yb[0]
    sx, sy = _st(x2), _st(y2)
    _run(dtype, [(W, 0, sy[0], s3[0]), (Kx, sx[0], sy[1], s3[1]), (V, sx[1], 0, s3[2])],
         (x2, y2), o3, isa)
    _close(o3, np.einsum("kv,wk->wkv", x2, y2), dtype, 1)


@pytest.mark.parametrize("dtype", DTYPES)
def test_register_tile_kernel_runs_v_with_the_outer_loops_inside(isa, dtype, restore_threads):
    """x past half of L2 and a loop outside the kernel that x does not move
    along: V runs in runs whose x stays in L2, the outer loop inside each
    run (ep_ctile_vrun).  Each pass of the outer loop gives, to the last
    bit, what the kernel alone gives on that pass (V whole), V ending
    mid-run and mid-vector; two threads sharing the outer loop or V give
    one thread's bits.  Planned so: 'abc,cd->adb' with A's b at unit
    stride, explain names the runs."""
    rng = np.random.default_rng(17)
    l2 = _native.kernel_config()["caches"]["l2"]
    es = np.dtype(dtype).itemsize
    A, W, Kx = 3, 5, 40
    V = l2 // (Kx * es) + 45
    x = rand((Kx, V), dtype, rng=rng)
    y = rand((A, Kx, W), dtype, rng=rng).transpose(0, 2, 1)
    sx, sy = _st(x), _st(y)
    outs = []
    for split, threads in ((-1, 1), (0, 2), (3, 2)):
        einplan.set_num_threads(threads)
        o = np.full((A, W, V), np.nan, dtype)
        so = _st(o)
        _native.prepare_nest(dtype, 2, [(A, 0, sy[0], so[0]), (W, 0, sy[1], so[1]),
                                        (Kx, sx[0], sy[2], 0), (V, sx[1], 0, so[2])],
                             split=split, threads=threads, short=2)((x, y), o, isa=isa)
        outs.append(o)
    einplan.set_num_threads(1)
    for a in range(A):
        one = np.full((W, V), np.nan, dtype)
        so = _st(one)
        _run(dtype, [(W, 0, sy[1], so[0]), (Kx, sx[0], sy[2], 0), (V, sx[1], 0, so[1])],
             (x, y[a]), one, isa)
        _close(one, y[a] @ x, dtype, Kx)
        np.testing.assert_array_equal(outs[0][a], one)
    np.testing.assert_array_equal(outs[1], outs[0])
    np.testing.assert_array_equal(outs[2], outs[0])
    if dtype in CDTYPES:
        a3 = rand((3, 234, 6), dtype, rng=rng).transpose(0, 2, 1)
        b = rand((234, 2 * l2 // (234 * es) + 7), dtype, rng=rng)
        text = str(einplan.explain("abc,cd->adb", a3, b))
        assert "'d' in runs of" in text and "with 'a' inside each" in text, text
        _close(einplan.einsum("abc,cd->adb", a3, b), np.einsum("abc,cd->adb", a3, b),
               dtype, 234)


def _steps(subscripts, *ops):
    from einplan.operands import describe_operands
    from einplan.planner import make_plan
    from einplan.spec import parse_spec
    spec, arrays = parse_spec((subscripts,) + ops)
    return make_plan(spec, describe_operands(arrays)).steps


def _t(shape, perm, dtype, rng):
    """A transposed operand of ``shape``: memory in the order ``perm``."""
    a = rand(tuple(shape[p] for p in perm), dtype, rng=rng)
    return a.transpose(np.argsort(perm))


# complex GEMMs with a short edge, as the sweep draws them (scaled down)
SHORT = [
    # m long (unit-stride in A), n = 8, k long: the packed engine's 1m GEMM
    # would run it (every edge >= 4)
    ("ijk,jkl->il", lambda dt, r: (_t((90, 600, 16), (1, 2, 0), dt, r),
                                   rand((600, 16, 16), dt, rng=r)[..., ::2])),
    ("ijk,jkl->il", lambda dt, r: (np.asfortranarray(rand((7, 85, 30), dt, rng=r)),
                                   rand((85, 30, 3), dt, rng=r))),
    ("ji,jk->ki", lambda dt, r: (rand((4000, 4), dt, rng=r)[:, ::2], rand((4000, 10), dt, rng=r))),
    ("ji,jk->ki", lambda dt, r: (rand((4000, 2), dt, rng=r)[::-1],
                                 rand((4000, 20), dt, rng=r)[:, ::2])),
    ("ij,kj->ik", lambda dt, r: (rand((9, 4), dt, rng=r), rand((20000, 4), dt, rng=r))),
    ("ij,jk->ik", lambda dt, r: (np.asfortranarray(rand((10, 15), dt, rng=r)),
                                 rand((15, 30000), dt, rng=r))),
]


@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("case", range(len(SHORT)))
def test_short_edge_complex_gemms(isa, dtype, case, one_thread):
    """Each call through einsum under every ISA, on one thread: the
    register-tile kernel planned (the step's row 'ctile', its reason when
    the packed engine was priced too, explain's text), or the packed engine
    where it was priced against the kernel and won (AVX-512's 8 x 48 tiles
    on 'ij,kj->ik' (9,4) x (20000,4): 367 us, the kernel 342-455 us on a
    Zen 4), results equal to numpy's."""
    subs, make = SHORT[case]
    rng = np.random.default_rng(case)
    a, b = make(dtype, rng)
    (step,) = _steps(subs, a, b)
    if isinstance(step, GemmStep) and case != 0:
        assert step.why.startswith("gemm by predicted cost: register-tile kernel"), step
        _close(einplan.einsum(subs, a, b), np.einsum(subs, a, b), dtype, max(a.shape + b.shape))
        return
    assert isinstance(step, NestStep) and step.ctile and step.row == "ctile", step
    text = str(einplan.explain(subs, a, b))
    assert "register-tile kernel" in text, text
    if case == 0:
        assert step.why.startswith("nest by predicted cost: register-tile kernel"), step
        assert step.why in text
    _close(einplan.einsum(subs, a, b), np.einsum(subs, a, b), dtype, max(a.shape + b.shape))


@pytest.mark.parametrize("dtype", CDTYPES)
def test_short_edge_layouts_match_numpy(isa, dtype):
    """'ij,jk->ik' with a short n or m and a long k, every operand C,
    Fortran, sliced and reversed: the same results as numpy whichever
    engine or kernel the planner picks."""
    rng = np.random.default_rng(2)

    def layouts(shape):
        a = rand(shape, dtype, rng=rng)
        yield a
        yield np.asfortranarray(a)
        yield rand(shape[:-1] + (2 * shape[-1],), dtype, rng=rng)[..., ::2]
        yield a[::-1, ::-1]

    for sa, sb in (((33, 700), (700, 5)), ((3, 700), (700, 41)), ((17, 4), (4, 900))):
        for a in layouts(sa):
            for b in layouts(sb):
                _close(einplan.einsum("ij,jk->ik", a, b), a @ b, dtype, sa[1])


def test_large_square_complex_gemm_stays_packed():
    """No short edge: the packed engine, not priced against the kernel."""
    a = np.ones((64, 64), np.complex128)
    (step,) = _steps("ij,jk->ik", a, a)
    assert isinstance(step, GemmStep) and step.why == ""


def test_a_few_rows_against_a_long_operand_are_priced_on_both_engines(one_thread):
    """m = 24 (above CTILE_EDGE, within CTILE_EDGE_MN) against a long operand
    of 4.6 MB: the packed engine would pack that operand's panels, twice
    over in 1m, for four micro-tile rows, so the register-tile kernel is
    priced too, and runs on one thread (on two, the packed engine's two
    threads may win: the kernel has no loop outside its three to share);
    the same m against a small operand, and a short k against long m and
    n, stay packed without pricing the nest."""
    rng = np.random.default_rng(4)
    a, b = rand((1659, 350), "complex64", rng=rng), rand((24, 1659), "complex64", rng=rng).T
    (step,) = _steps("ji,jk->ki", a, b)
    assert isinstance(step, NestStep) and step.ctile, step
    _close(einplan.einsum("ji,jk->ki", a, b), np.einsum("ji,jk->ki", a, b), "complex64", 1659)
    small = rand((30, 40), "complex64", rng=rng)
    (step,) = _steps("ji,jk->ki", small, rand((30, 24), "complex64", rng=rng))
    assert isinstance(step, GemmStep) and step.why == "", step
    (step,) = _steps("ij,jk->ik", rand((600, 24), "complex64", rng=rng),
                     rand((24, 600), "complex64", rng=rng))
    assert isinstance(step, GemmStep) and step.why == "", step


def test_register_tile_kernel_writes_a_fresh_output_along_its_vectors(one_thread,
                                                                      monkeypatch):
    """order='K' leaves the output's layout free: when numpy's 'K' order
    would put the kernel's vector loop V ('d' of 'abc,cd->adb', A in
    Fortran order) outside the others, so each tile's vectors are stored
    element by element, the output is laid out with V innermost instead;
    an out= array and order='C' keep their layouts; the results are
    numpy's either way.  The register-tile kernel is held to (whether it
    beats the packed engine here depends on the kernel set)."""
    from einplan import nest, planner
    monkeypatch.setattr(nest, "CTILE_GEMM_MARGIN", {})
    monkeypatch.setattr(nest, "CTILE_GEMM_MARGIN_DEFAULT", 0.0)
    monkeypatch.setattr(planner, "_cache", type(planner._cache)())   # plans of this test only
    rng = np.random.default_rng(6)
    for dtype in CDTYPES:
        a = np.asfortranarray(rand((4, 19, 7), dtype, rng=rng))
        b = rand((7, 2 * 9518), dtype, rng=rng)[:, ::2]
        (step,) = _steps("abc,cd->adb", a, b)
        assert isinstance(step, NestStep) and step.ctile, step
        # V is 'd' where vectors hold 4 or more complex ('ba', A's own
        # innermost, with SSE's two): the output's innermost axis either way
        v = step.loops[-1].labels
        if v == "d":
            assert "the output laid out with 'd' innermost" in step.why, step.why
        got = einplan.einsum("abc,cd->adb", a, b)
        assert got.strides["adb".index(v[-1])] == got.itemsize, (v, got.strides)
        want = np.einsum("abc,cd->adb", a, b)
        _close(got, want, dtype, 7)
        c = einplan.einsum("abc,cd->adb", a, b, order="C")
        assert c.flags.c_contiguous
        _close(c, want, dtype, 7)
        out = np.zeros((4, 9518, 19), dtype)
        einplan.einsum("abc,cd->adb", a, b, out=out)
        _close(out, want, dtype, 7)
        # a call run whole as one nest (k = 2: no GEMM priced) too: 'ij,kj->ik'
        # (244,2) x (32816,2) c128 wrote a 128 MB output element by element,
        # a page apart (0.5x numpy)
        a = rand((64, 2), dtype, rng=rng)
        b = rand((2 * 3000, 2), dtype, rng=rng)[::2]
        (step,) = _steps("ij,kj->ik", a, b)
        assert step.ctile and step.loops[-1].labels == "i", step
        assert "the output laid out with 'i' innermost" in step.why, step.why
        got = einplan.einsum("ij,kj->ik", a, b)
        assert got.strides[0] == got.itemsize, got.strides
        _close(got, a @ b.T, dtype, 2)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_real_thin_gemm_runs_in_register_tiles_reading_x_in_place(isa, dtype, one_thread):
    """A real GEMM with a short output edge and a long x unit-stride along
    V runs in the register-tile kernel (the plain nest re-read its output
    row once per k: 'iab,bc->aic' (2,5713,28) x (28,2) f64 ran 112 us there,
    57 us in tiles, numpy 55); the packed engine is priced against it.  A
    short k stays in the small-edge kernel, and an x strided along V is not
    taken (a copy of it would cost what packing does); results equal
    numpy's."""
    rng = np.random.default_rng(8)
    cases = [("iab,bc->aic", _t((2, 5713, 28), (2, 0, 1), dtype, rng),
              np.asfortranarray(rand((28, 2), dtype, rng=rng))),
             ("ij,jk->ik", np.asfortranarray(rand((3000, 30), dtype, rng=rng)),
              rand((30, 3), dtype, rng=rng)),
             ("ij,jk->ik", np.asfortranarray(rand((3001, 12), dtype, rng=rng)),
              rand((12, 4), dtype, rng=rng)[::-1])]
    for subs, a, b in cases:
        (step,) = _steps(subs, a, b)
        assert isinstance(step, NestStep) and step.ctile and step.row == "ctile", (subs, step)
        assert step.why.startswith("nest by predicted compute"), step.why
        assert "register-tile kernel" in str(einplan.explain(subs, a, b))
        _close(einplan.einsum(subs, a, b), np.einsum(subs, a, b), dtype, b.shape[0])
    # k = 4: the small-edge kernel holds it in registers along the output rows
    a, b = rand((4000, 4), dtype, rng=rng), rand((4, 100), dtype, rng=rng)
    (step,) = _steps("ij,jk->ik", a, b)
    assert not getattr(step, "ctile", False), step
    # x (A) strided along V: no tiles
    a, b = rand((3000, 30), dtype, rng=rng), rand((30, 3), dtype, rng=rng)
    (step,) = _steps("ij,jk->ik", a, b)
    assert not getattr(step, "ctile", False), step
    _close(einplan.einsum("ij,jk->ik", a, b), a @ b, dtype, 30)


def test_a_path_step_is_priced_with_its_tiles(restore_threads):
    """A path's steps may take the register-tile kernel, priced by
    cost.nest_seconds with its own work and traffic (nest.ctile_parts):
    'ij,jk,kl,lm->im' F (557,14213) x (14213,3) x ... f32 runs its first
    step in tiles, A read once in place (2.1 ms for the call, 12.6 ms when
    the step went to the in-place small GEMM, numpy 4.0), and
    'ia,ib,ic->abc' (8,268) x (8,41) x (8,881) f64 keeps its outer product
    then GEMM (14 ms), where a step priced as plain rows lost the path to
    one three-operand nest (28 ms, numpy 16)."""
    einplan.set_num_threads(1)
    rng = np.random.default_rng(9)
    ops = [np.asfortranarray(rand((557, 2000), "float32", rng=rng)),
           rand((2000, 3), "float32", rng=rng), rand((3, 114), "float32", rng=rng),
           rand((114, 202), "float32", rng=rng)[:, ::2]]
    steps = _steps("ij,jk,kl,lm->im", *ops)
    assert steps[0].in_labels == ("ij", "jk") and getattr(steps[0], "ctile", False), steps
    # priced as tiles: A once and an FMA per vector, not a re-visited row per k
    tiles = cost.nest_seconds(steps[0], "float32")
    rows = cost.nest_seconds(dataclasses.replace(steps[0], ctile=False), "float32")
    assert tiles < 0.5 * rows, (tiles, rows)
    _close(einplan.einsum("ij,jk,kl,lm->im", *ops),
           np.einsum("ij,jk,kl,lm->im", *ops, optimize=True), "float32", 2000)
    a = rand((8, 268), "float64", rng=rng)
    b = rand((8, 82), "float64", rng=rng)[:, ::2]
    c = rand((8, 1762), "float64", rng=rng)[:, ::2]
    steps = _steps("ia,ib,ic->abc", a, b, c)
    assert len(steps) == 2, steps
    _close(einplan.einsum("ia,ib,ic->abc", a, b, c), np.einsum("ia,ib,ic->abc", a, b, c),
           "float64", 8)


def test_register_tile_kernel_prices_the_output_lines_it_writes(one_thread):
    """The tile kernel's output is priced in the lines it touches: with V a
    line or more apart in the output, each element of a tile is a line,
    and an outer loop along the output's unit stride passes over all of it
    again ('ia,ib,ic->abc' (4,517)[::-1] x (4,649):F x (4,24) f64, 64 MB
    out: V = 'a' at 192 bytes with 'c' outermost, 24 passes, 47-58 ms;
    with 'c' as V, 10.5 ms; numpy 8.4)."""
    rng = np.random.default_rng(63)
    a = rng.standard_normal((4, 517))[::-1]
    b = np.asfortranarray(rng.standard_normal((4, 649)))
    c = rng.standard_normal((4, 24))
    steps = _steps("ia,ib,ic->abc", a, b, c)
    last = steps[-1]
    # c innermost (alone, or merged with a where no tile kernel runs), or
    # the packed engine (K = 4 is too short for the tile kernel: 3.9 ms)
    if isinstance(last, NestStep):
        assert last.loops[-1].labels.endswith("c") and "c" not in last.loops[0].labels, last
    else:
        assert isinstance(last, GemmStep), last
    _close(einplan.einsum("ia,ib,ic->abc", a, b, c), np.einsum("ia,ib,ic->abc", a, b, c),
           "float64", 4)


def test_register_tile_kernel_prices_the_lines_each_pass_rereads(one_thread):
    """W stepping the output and y a line or more an element under an outer
    loop that steps them within a line: each pass over W touches a line per
    element, and where those lines outgrow L2 the next pass reads them again.
    The kernel then takes another W ('iab,bc->aic' (35134,107,2)[::-1] x
    (2,3) c64, 90 MB out: W = i under a, 129 ms; numpy 61; now 37) and the
    outer loop 'a' does not run around 'i'.  The same W stays where no outer
    loop fills those lines (b outside steps a whole block)."""
    from einplan.nest import LINE, l2_resident
    rng = np.random.default_rng(67)
    ni = l2_resident() // LINE + 4000            # a pass over i outgrows L2
    a = rand((ni, 16, 2), "complex64", rng=rng)[::-1]
    b = rand((4, 3), "complex64", rng=rng)[::2]
    (step,) = _steps("iab,bc->aic", a, b)
    assert isinstance(step, NestStep) and step.ctile, step
    labels = [lp.labels for lp in step.loops]
    assert labels.index("i") < labels.index("a"), labels
    _close(einplan.einsum("iab,bc->aic", a, b), np.einsum("iab,bc->aic", a, b), "complex64", 2)
    x = rand((2, ni, 8), "complex128", rng=rng)[:, :, ::2]
    y = rand((2, 3, 4), "complex128", rng=rng)
    (step,) = _steps("bij,bkj->bki", x, y)
    if isinstance(step, NestStep) and step.ctile:
        assert step.loops[-3].labels == "i", step.loops
    _close(einplan.einsum("bij,bkj->bki", x, y), np.einsum("bij,bkj->bki", x, y),
           "complex128", 4)


def test_real_tile_kernel_needs_a_k_longer_than_the_small_edge(one_thread):
    """Over K of at most MAX_SHORT the real tile kernel stores a tile for a
    few FMAs: 'ia,ib,ic->abc' (2,15) x (2,5534) x (2,182) f32 (K = 2) ran
    16 ms as tiles, 3.3 ms packed (numpy 9); (4,517)[::-1] x (4,649):F x
    (4,24) f64 (K = 4) 11 ms as tiles, 3.9 packed.  A longer K keeps it
    ('iab,bc->aic' (2,5713,28):T x (28,2):F f64, K = 28)."""
    rng = np.random.default_rng(64)
    a = np.asfortranarray(rand((2, 15), "float32", rng=rng))
    b = rand((2, 5534), "float32", rng=rng)
    c = rand((2, 364), "float32", rng=rng)[:, ::2]
    steps = _steps("ia,ib,ic->abc", a, b, c)
    assert not any(isinstance(st, NestStep) and st.ctile for st in steps), steps
    _close(einplan.einsum("ia,ib,ic->abc", a, b, c),
           np.einsum("ia,ib,ic->abc", a, b, c, optimize=True), "float32", 2)
    x = np.ascontiguousarray(rand((28, 5713, 2), "float64", rng=rng)).transpose(2, 1, 0)
    y = np.asfortranarray(rand((28, 2), "float64", rng=rng))
    (step,) = _steps("iab,bc->aic", x, y)
    assert isinstance(step, NestStep) and step.ctile and step.loops[-2].extent == 28, step


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_short_rows_a_call_give_way_to_register_tiles(dtype, one_thread):
    """A real GEMM whose small-edge kernel would be called once per k for a
    few short rows ('ijk,jkl->il' (11,37376,2):F x (37376,2,2): rows of 2
    interleaved, 11 a call, 4.3 ms; numpy 1.9) runs in register tiles
    along the long K (1.0 ms): each call of the small-edge kernel is priced,
    and the tiles are taken when clearly cheaper.  Where the two prices tie
    (both memory-bound) the small-edge kernel stays."""
    rng = np.random.default_rng(65)
    a = np.asfortranarray(rand((11, 37376, 2), dtype, rng=rng))
    b = rand((37376, 2, 2), dtype, rng=rng)
    (step,) = _steps("ijk,jkl->il", a, b)
    assert isinstance(step, NestStep) and step.ctile and step.loops[-1].labels == "i", step
    assert step.loops[-2].extent == 37376, step
    _close(einplan.einsum("ijk,jkl->il", a, b), np.einsum("ijk,jkl->il", a, b), dtype, 74752)
    # the small-edge kernel's rows priced with their calls: one per j
    from einplan.nest import NestLoop, SHORT_CALL, plain_cycles
    rows = [NestLoop("j", 37376, (11, 4, 0)), NestLoop("i", 11, (1, 0, 2)),
            NestLoop("k", 2, (411136, 2, 0)), NestLoop("l", 2, (0, 1, 1))]
    itemsize = np.dtype(dtype).itemsize
    assert plain_cycles(rows, itemsize, 2, "short-sum", complex_=False) >= 37376 * SHORT_CALL
    # tied: 'abc,cd,bd->a' (4,5290,1):F x (1,5):F x (5290,5):F (40 us in the
    # small-edge kernel, 71 us as tiles) keeps the small-edge kernel
    x = np.asfortranarray(rand((4, 5290, 1), dtype, rng=rng))
    w = np.asfortranarray(rand((1, 5), dtype, rng=rng))
    y = np.asfortranarray(rand((5290, 5), dtype, rng=rng))
    steps = _steps("abc,cd,bd->a", x, w, y)
    assert not any(getattr(st, "ctile", False) for st in steps), steps
    _close(einplan.einsum("abc,cd,bd->a", x, w, y),
           np.einsum("abc,cd,bd->a", x, w, y), dtype, 5290)


def test_real_tiles_take_a_v_of_half_a_vector(one_thread):
    """The nest of a real thin GEMM whose x is unit-stride along a V of
    half a vector runs register tiles ('ij,jk->ik' (7,230781):T x
    (230781,4) f32 on AVX2, V = 'k' of 4 lanes of 8: 2.2 ms, the packed
    engine then 3.6, numpy 1.6-2.1); a quarter of a vector stays off them
    ('kl,lm->km' (2,774416):F x (774416,12):T f32: 1.7x slower as tiles).
    Which engine runs the call is priced (the smm path reads such a narrow
    B in place too); results equal numpy's."""
    from einplan import nest
    from einplan.plan import OUT, KernelKind
    lanes = nest.vector_lanes(4)
    rng = np.random.default_rng(66)
    K, V = 230781, lanes // 2
    step = nest.nest_step(KernelKind.GEMM, [(0, "ij", (1, 7)), (1, "jk", (V, 1))], OUT, "ik",
                          {"i": V, "k": 1}, {"i": 7, "j": K, "k": V}, np.dtype(np.float32))
    assert step.ctile and step.loops[-1].extent == V, step
    a = rand((K, 7), "float32", rng=rng).T
    b = rand((K, V), "float32", rng=rng)
    _close(einplan.einsum("ij,jk->ik", a, b), a @ b, "float32", K)
    if lanes >= 8:
        K, V = 77441, lanes // 4
        step = nest.nest_step(KernelKind.GEMM, [(0, "kl", (1, V)), (1, "lm", (1, K))], OUT,
                              "km", {"k": 12, "m": 1}, {"k": V, "l": K, "m": 12},
                              np.dtype(np.float32))
        assert not (step.ctile and step.loops[-1].extent == V), step
        x = np.asfortranarray(rand((V, K), "float32", rng=rng))
        y = rand((12, K), "float32", rng=rng).T
        steps = _steps("kl,lm->km", x, y)
        assert not any(getattr(st, "ctile", False) and st.loops[-1].extent == V
                       for st in steps), steps
        _close(einplan.einsum("kl,lm->km", x, y), x @ y, "float32", K)
