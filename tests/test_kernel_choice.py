"""The Plan carries the kernel choice: every GemmStep holds the C core's
schedule (made once, with its compiled descriptor, which runs it), and a
call under another thread count is scheduled again by the C core."""
import dataclasses

import numpy as np
import pytest

import einplan
from einplan import _native, planner
from einplan.operands import describe, describe_operands
from einplan.options import Options
from einplan.plan import GemmStep, KernelChoice, KernelPath, ParallelLoop
from einplan.spec import parse_spec



def _gemm_steps(subscripts, *ops, **kw):
    spec, _ = parse_spec((subscripts, *ops))
    plan = planner.make_plan(spec, describe_operands(ops), Options.make(**kw))
    return [s for s in plan.steps if isinstance(s, GemmStep)]


def _rand(*shape, dtype=np.float64):
    return np.random.default_rng(0).standard_normal(shape).astype(dtype)


CASES = [
    ("ij,jk->ik", (300, 200), (200, 100), np.float64),    # packed
    ("ij,jk->ik", (6, 512), (512, 300), np.float32),      # packed, B in place
    ("ij,j->i", (500, 400), (400,), np.float64),          # GEMV
    ("bij,bjk->bik", (64, 8, 8), (64, 8, 8), np.float32),  # many small GEMMs
    ("ij,jk->ki", (200, 150), (150, 120), np.float64),    # C's unit index in m
    ("ij,jk->ik", (90, 70), (70, 50), np.complex128),     # 1m
    ("abcd,dbef->aecf", (6, 4, 5, 7), (7, 4, 6, 3), np.float64),
]


@pytest.mark.parametrize("spec,sa,sb,dtype", CASES)
def test_record_is_the_descriptors_schedule(restore_threads, spec, sa, sb, dtype):
    """The record is the schedule made with the step's descriptor, for the
    thread count of plan time, and the one a call with that count runs."""
    for nt in (1, 2):
        einplan.set_num_threads(nt)
        for step in _gemm_steps(spec, _rand(*sa, dtype=dtype), _rand(*sb, dtype=dtype)):
            k = step.kernel
            assert isinstance(k, KernelChoice)
            planned = step.native.planned()
            # the record names the measured way of taking B only for a B the
            # kernel can read in place at all
            assert k.b_measured in (None, planned["b_measured"])
            assert k == KernelChoice.from_schedule(dict(planned, b_measured=k.b_measured),
                                                   k.b_in_place, k.c_unit, k.c_unit_role)
            assert k.for_threads == _native.get_num_threads()
            fresh = step.native.schedule(nthreads=k.for_threads)
            assert {**fresh, "for_threads": k.for_threads} == planned
            run, is_planned = step.native.call_schedule()
            assert is_planned and run == planned


def test_enums_name_the_c_values():
    """KernelPath and ParallelLoop carry C's names (ep_path_t, ep_loop_t), as
    the compiled module gives them."""
    seen_paths, seen_loops = set(), set()
    shapes = [((1, 300, 300, 1), 2), ((300, 300, 300, 1), 2), ((8, 8, 8, 500), 2),
              ((6, 1536, 512, 3), 2), ((6, 100, 64, 77), 2), ((0, 5, 5, 1), 1),
              ((462, 1536, 512, 1), 2), ((70, 70, 70, 1), 1)]
    for (m, n, k, nb), nt in shapes:
        call = _native.prepare_gemm(np.float32, [(m, k, n)], [(n, 1, 1)], [(k, 1, n)],
                                    [(nb, m * k, k * n, m * n)] if nb != 1 else [])
        s = call.schedule(nt)
        seen_paths.add(KernelPath(s["path"]))
        seen_loops.add(ParallelLoop(s["loop"]))
    # three rows of A against two columns of B running along k: threads share k
    k = 50000
    s = _native.prepare_gemm(np.float32, [(3, k, 2)], [(2, k, 1)], [(k, 1, 1)], []).schedule(2)
    seen_loops.add(ParallelLoop(s["loop"]))
    assert {KernelPath.EMPTY, KernelPath.GEMM, KernelPath.GEMV} <= seen_paths
    assert seen_loops == set(ParallelLoop)


def test_orientation_reason_recorded():
    """C's unit-stride index and its role are in the record: n when an
    operand order puts it there, m when none does."""
    a, b = _rand(40, 30), _rand(30, 20)
    (s,) = _gemm_steps("ij,jk->ik", a, b)
    assert (s.kernel.c_unit, s.kernel.c_unit_role) == ("k", "n")
    (s,) = _gemm_steps("ij,jk->ik", a, b, order="F")
    assert (s.kernel.c_unit, s.kernel.c_unit_role) == ("i", "n")
    assert s.swapped
    out = np.empty((20, 40)).T   # C's unit stride on i with A's rows fixed
    plan = planner.make_plan(parse_spec(("ij,jk->ik", a, b))[0], describe_operands((a, b)),
                             Options.make(), describe(out))
    (s,) = [x for x in plan.steps if isinstance(x, GemmStep)]
    assert s.kernel.c_unit == "i" and s.kernel.c_unit_role == "n"


@pytest.mark.parametrize("front", ["einsum", "plan"])
def test_thread_change_between_calls(restore_threads, front):
    """A plan made for one thread count, called under another: the C core
    schedules that call for the new count (the planned schedule no longer
    holds), the result stays numpy's, and back at the planned count the
    planned schedule runs again."""
    a, b = _rand(400, 300), _rand(300, 500)
    want = a @ b
    einplan.set_num_threads(1)
    if front == "plan":
        p = einplan.plan("ij,jk->ik", a.shape, b.shape)
        call = lambda: p(a, b)  # noqa: E731
        step = p._plan.only_step
    else:
        call = lambda: einplan.einsum("ij,jk->ik", a, b)  # noqa: E731
        (step,) = _gemm_steps("ij,jk->ik", a, b)
    np.testing.assert_allclose(call(), want, rtol=1e-10, atol=1e-10)
    assert step.kernel.for_threads == 1 and step.kernel.threads == 1
    run, planned = step.native.call_schedule()
    assert planned and run["threads"] == 1
    einplan.set_num_threads(2)
    run, planned = step.native.call_schedule()
    assert not planned and run["for_threads"] == 2
    assert run["threads"] == (2 if _native.get_num_threads() == 2 else 1)
    np.testing.assert_allclose(call(), want, rtol=1e-10, atol=1e-10)
    einplan.set_num_threads(1)
    run, planned = step.native.call_schedule()
    assert planned and run["threads"] == 1
    np.testing.assert_allclose(call(), want, rtol=1e-10, atol=1e-10)


def test_plans_are_keyed_by_thread_count(restore_threads):
    """A plan made under another thread count is not reused: the new plan's
    record is the schedule for the count in effect (explain prints it)."""
    a, b = _rand(400, 300), _rand(300, 500)
    einplan.set_num_threads(1)
    (s1,) = _gemm_steps("ij,jk->ik", a, b)
    einplan.set_num_threads(2)
    (s2,) = _gemm_steps("ij,jk->ik", a, b)
    assert s1.kernel.for_threads == 1
    assert s2.kernel.for_threads == _native.get_num_threads()
    if _native.get_num_threads() == 2:
        assert s2.kernel.threads == 2 and s2.kernel.loop != ParallelLoop.NONE


def test_plans_are_keyed_by_kernel_set(use_isa):
    """A plan made under another kernel set is not reused: its GEMM tiles
    are that set's, and the kernels in use would run other tiles."""
    a, b = _rand(400, 300), _rand(300, 500)
    sets = [i for i in ("avx512", "avx2", "generic") if i in _native.available_isas()]
    tiles = []
    for isa in sets:
        use_isa(isa)
        (st,) = _gemm_steps("ij,jk->ik", a, b)
        tiles.append((st.kernel.mr, st.kernel.nr))
        assert tiles[-1] == _native.kernel_config()["tiles"][isa]["float64"], (isa, tiles)
        np.testing.assert_allclose(einplan.einsum("ij,jk->ik", a, b), a @ b, rtol=1e-10, atol=1e-10)


def test_c_tiles_across_a_break_in_cs_strides_are_priced_per_element():
    """A packed GEMM whose n (or m) did not merge stores every C tile that
    crosses the break element by element through a private tile: priced
    per element (model.SCATTER_CYCLES), so 'ij...,jk...->ik...' (80,5,4,3)
    x (5,465,1,1) f32, whose n runs of 12 break every tile of 16 or 48,
    runs in the loop nest (64-70 us; 340-390 us packed on a Zen 4)."""
    from einplan import cost, model
    from einplan.plan import Axis, NestStep
    run = lambda inner, outer_c, tile: model._crossing_share(
        (Axis("i", 80, (60, outer_c)), Axis("AB", inner, (1, 1))), tile)
    assert run(12, 5580, 48) == 1.0 and run(12, 5580, 16) == 1.0
    assert run(12, 12, 16) == 0.0                  # one stride across both: merged in C
    assert run(48, 5580, 16) == 0.0                # whole tiles within each run
    assert run(40, 5580, 16) == pytest.approx(0.2)  # one tile of five crosses
    rng = np.random.default_rng(23)
    a = rng.standard_normal((80, 5, 4, 3)).astype(np.float32)
    b = rng.standard_normal((5, 465, 1, 1)).astype(np.float32)
    spec, arrays = parse_spec(("ij...,jk...->ik...", a, b))
    infos = describe_operands(arrays)
    # out= in numpy's layout fixes C's strides (order='K' would be free to
    # lay C out so that n merges there: see the next test)
    out = np.empty((80, 465, 4, 3), np.float32)
    (gemm,) = planner.make_plan(spec, infos, gemm_only=True, out_info=describe(out)).steps
    assert model.scattered_share(gemm) == 1.0
    regular = dataclasses.replace(gemm, n=dataclasses.replace(gemm.n, axes=gemm.n.axes[-1:]))
    assert model.scattered_share(regular) == 0.0
    tiles = 465 * 960                               # at least every element of C
    assert (cost.gemm_seconds(gemm, np.float32) - cost.gemm_seconds(regular, np.float32)
            >= tiles * model.SCATTER_CYCLES / (cost.NOMINAL_GHZ * 1e9 * 2))
    (step,) = planner.make_plan(spec, infos, out_info=describe(out)).steps
    assert isinstance(step, NestStep), step
    np.testing.assert_allclose(einplan.einsum("ij...,jk...->ik...", a, b, out=out),
                               np.einsum("ij...,jk...->ik...", a, b), rtol=1e-5, atol=1e-5)
    # a long k outweighs the stores: packed, and explain says how C is stored
    a = rng.standard_normal((80, 500, 4, 3)).astype(np.float32)
    b = rng.standard_normal((500, 465, 1, 1)).astype(np.float32)
    text = str(einplan.explain("ij...,jk...->ik...", a, b, out=out))
    assert "every C tile crosses a break in C's strides" in text, text


def test_a_free_output_is_laid_out_so_that_c_tiles_are_stored_whole():
    """order='K' leaves C's layout to the planner: of the candidates (numpy's
    'K' order first), the one whose tiles do not cross breaks in C's strides
    wins over fewer kernel axes and over numpy's order.
    'ij...,jk...->ik...' (4830,17,2,1) x (17,189,1,1) f32: in numpy's
    optimize=False layout n = (i, A) breaks every 2 columns in C and every
    tile went element by element (7.5 ms); laid out (i, A, k) -- m = (i, A)
    merged in C, A's panels gathered -- 1.0 ms (numpy 1.6-1.8)."""
    from einplan import model
    rng = np.random.default_rng(29)
    for a_shape, b_shape in (((4830, 17, 2, 1), (17, 189, 1, 1)),
                             ((80, 500, 4, 3), (500, 465, 1, 1))):
        a = rng.standard_normal(a_shape).astype(np.float32)
        b = rng.standard_normal(b_shape).astype(np.float32)
        spec, arrays = parse_spec(("ij...,jk...->ik...", a, b))
        (gemm,) = planner.make_plan(spec, describe_operands(arrays), gemm_only=True).steps
        assert model.scattered_share(gemm) == 0.0
        text = str(einplan.explain("ij...,jk...->ik...", a, b))
        assert "C tiles are stored as contiguous vectors" in text, text
        np.testing.assert_allclose(einplan.einsum("ij...,jk...->ik...", a, b),
                                   np.einsum("ij...,jk...->ik...", a, b), rtol=2e-4, atol=2e-4)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_short_k_widens_the_nc_block_to_keep_bs_panel_bytes(dtype):
    """A KC x NC panel of B with a short k grows along n by KC / k (at most
    8 times): a long n crosses fewer NC blocks, each three barriers of the
    threads ('ij...,jk...->ik...' (3,2,5,1) x (2,135847,1,2) f64: 67 blocks
    ran slower on two threads than on one).  A prepacked B, laid out by the
    same blocks, gives numpy's results."""
    bk = _native.kernel_config()["blocking"][np.dtype(dtype).name]
    kc0, nc0, nr = bk["kc"], bk["nc"], bk["nr"]

    def sched(K, N):
        s = _native.prepare_gemm(dtype, [(15, K, N)], [(N, 1, 1)], [(K, 1, N)], []).schedule(2)
        return s["kc"], s["nc"]

    N = 40 * nc0
    assert sched(kc0, N) == (kc0, nc0)
    assert sched(kc0 // 2, N) == (kc0 // 2, 2 * nc0)
    assert sched(2, N) == (2, 8 * nc0)
    assert sched(2, 3 * nc0 + nr + 1) == (2, 3 * nc0 + nr + 1)   # the whole of n
    rng = np.random.default_rng(4)
    p = rng.standard_normal((3, 2, 5, 1)).astype(dtype)
    q = rng.standard_normal((2, 13 * nc0 + 7, 1, 2)).astype(dtype)
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(einplan.einsum("ij...,jk...->ik...", p, q),
                               np.einsum("ij...,jk...->ik...", p, q), **tol)
    w = rng.standard_normal((3, 9 * nc0 + 5)).astype(dtype)
    plan = einplan.plan("ij,jk->ik", (40, 3), w, constants=[1])
    assert plan.packed is not None, plan.describe()
    a = rng.standard_normal((40, 3)).astype(dtype)
    np.testing.assert_allclose(plan(a), a @ w, **tol)


def test_explicit_threads_per_call(restore_threads):
    """A call that names its thread count (GemmCall's nthreads) runs the
    schedule for that count, the planned one only when it is the same."""
    einplan.set_num_threads(1)
    a, b = _rand(300, 200), _rand(200, 400)
    (step,) = _gemm_steps("ij,jk->ik", a, b)
    run, planned = step.native.call_schedule(nthreads=2)
    assert not planned and run["for_threads"] == 2
    run, planned = step.native.call_schedule(nthreads=1)
    assert planned
    c = np.empty((300, 400))
    step.native(a, b, c, nthreads=2)
    np.testing.assert_allclose(c, a @ b, rtol=1e-10, atol=1e-10)


def test_prepacked_b_has_its_own_schedule(restore_threads):
    """A prepacked plan runs the schedule made when B was packed (no GEMV,
    no smm, no B read in place), and stays right after a thread change."""
    einplan.set_num_threads(1)
    w = _rand(64, 96)
    x = _rand(6, 64)
    p = einplan.plan("ij,jk->ik", x.shape, w, constants=[1])
    assert p.packed is not None
    call = p._plan.only_step.native
    run, planned = call.call_schedule(b_prepacked=True)
    assert planned and run["path"] == "gemm" and not run["direct_b"]
    assert call.planned()["direct_b"]     # unpacked, 6 rows would read B in place
    np.testing.assert_allclose(p(x), x @ w, rtol=1e-10, atol=1e-10)
    einplan.set_num_threads(2)
    run, planned = call.call_schedule(b_prepacked=True)
    assert not planned and run["for_threads"] == _native.get_num_threads()
    np.testing.assert_allclose(p(x), x @ w, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_few_rows_of_a_narrow_gemm_read_b_in_place(dtype):
    """A narrow GEMM whose rows the smm kernel runs in at most two tiles
    streams B at most twice on the in-place smm path, however long k is:
    packing A and B moved twice the operands' bytes ('bij,bjk->bik' (1858,
    3, 1147) x (1858, 1147, 4) f64: 37 ms packed, 11 ms in place; 'ij,jk->ik'
    (9, 293965) F x (293965, 3) f64, an 8-row tile and a 1-row one: 6.8 ms
    packed, 2.8 ms).  More tiles over a B past half of L1 keep the packed
    path on AVX2 (one vector of n: tiles of 8 rows; three: of 3)."""
    from _gemm_util import smm_in_use
    want = "smm" if smm_in_use(dtype) else "gemm"
    lanes = 32 // np.dtype(dtype).itemsize
    K = 4001
    taller = [(17, 3), (7, 3 * lanes)] if _native.isa() == "avx2" else []
    for M, N in [(2, 4), (3, 4), (4, 4), (9, 3), (16, 3), (6, 3 * lanes)] + taller:
        groups = (((M, K, N),), ((N, 1, 1),), ((K, 1, N),), ((10, M * K, K * N, M * N),))
        sched = _native.prepare_gemm(dtype, *groups).schedule(nthreads=2)
        assert sched["path"] == ("gemm" if (M, N) in taller else want), (M, N, sched)
    a, b = _rand(40, 3, K, dtype=dtype), _rand(40, K, N, dtype=dtype)
    if want == "smm":
        # (without smm kernels the planner may take the loop nest instead)
        assert [st.kernel.path.value for st in _gemm_steps("bij,bjk->bik", a, b)] == ["smm"]
    tol = 1e-3 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(einplan.einsum("bij,bjk->bik", a, b),
                               np.einsum("bij,bjk->bik", a, b), rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("flip", [False, True])
def test_a_narrow_gemm_walking_columns_pages_apart_runs_k_in_blocks(dtype, flip):
    """The smm path over an A whose columns lie a page or more apart, more
    of them than a second-level TLB maps, runs k in blocks (ep_smm.c): each
    block after the first adds to C.  Results are numpy's for k a multiple
    of the block and not, columns forward and reversed."""
    rng = np.random.default_rng(11)
    paths = set()
    for K in (1600, 1611):
        a = np.asfortranarray(rng.standard_normal((1100, K)).astype(dtype))
        if flip:
            a = a[:, ::-1]
        # n past the nest's register tiles; float32 in whole 512-bit vectors
        # (with a partial one AVX-512 takes the packed path)
        b = rng.standard_normal((K, 16 if dtype == np.float32 else 9)).astype(dtype)
        (st,) = _gemm_steps("ij,jk->ik", a, b)
        paths.add(st.kernel.path)
        got = einplan.einsum("ij,jk->ik", a, b)
        want = a.astype(np.float64) @ b.astype(np.float64)
        tol = 2e-3 if dtype == np.float32 else 1e-9
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    # the shapes reach smm's k blocks with AVX-512's 8 x 48 / 8 x 24 tiles;
    # AVX2's schedule takes the packed path for them (results checked above)
    if einplan.isa() == "avx512":
        assert paths == {KernelPath.SMM}, paths
