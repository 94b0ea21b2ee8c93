"""planner.py (steps 2e-2f): orientation, output layout, kernel kind, fallbacks, cache."""
import threading

import numpy as np

import einplan
import pytest

from einplan import _native, nest
from einplan.operands import describe, describe_operands
from einplan.plan import OUT, GemmStep, KernelKind, NestStep, ReduceStep, Role
from einplan.options import Options
from einplan.planner import make_plan
from einplan.spec import parse_spec




def plan_for(subscripts, *ops, out=None, gemm_only=False, **opts):
    spec, arrays = parse_spec((subscripts,) + ops)
    return make_plan(spec, describe_operands(arrays), Options.make(**opts),
                     None if out is None else describe(out), gemm_only=gemm_only)


def gemm_steps(plan):
    return [s for s in plan.steps if isinstance(s, GemmStep)]


@pytest.mark.parametrize("bs", [1, 6, 16])
def test_tract_one_gemm_with_merged_m(bs):
    # bij,jk->bik, A (77, bs, 512) C-contiguous: b, i merge into m = 77*bs
    plan = plan_for("bij,jk->bik", np.empty((77, bs, 512)), np.empty((512, 1536)))
    (step,) = gemm_steps(plan)
    assert step.kind is KernelKind.GEMM
    assert step.batch.axes == ()
    assert len(step.m.axes) == 1 and step.m.extent == 77 * bs
    assert step.n.extent == 1536 and step.k.extent == 512


@pytest.mark.parametrize("order", ["K", "C"])
def test_jax_orientation_output_unit_stride_in_n(order):
    # ab,...b->...a, w (600, 821), x (32, 100, 821): the output's last axis
    # 'a' (unit stride, C-contiguous) must be the kernel's n -> w is B
    w, x = np.empty((600, 821)), np.empty((32, 100, 821))
    plan = plan_for("ab,...b->...a", w, x, order=order)
    (step,) = gemm_steps(plan)
    assert step.swapped and step.a == 1 and step.b == 0
    assert step.n.labels == "a" and step.n.axes[0].strides == (821, 1)  # (w, C)
    assert step.m.extent == 3200 and len(step.m.axes) == 1
    assert plan.out_buffer.strides == (100 * 600, 600, 1)


def test_jax_orientation_with_out():
    w, x = np.empty((600, 821)), np.empty((32, 100, 821))
    out = np.empty((32, 100, 600))
    (step,) = gemm_steps(plan_for("ab,...b->...a", w, x, out=out))
    assert step.c == OUT and step.swapped and step.n.labels == "a"


def test_out_fortran_swaps_orientation():
    # ij,jk->ik into an F-ordered out: i is C's unit stride -> A's rows become n
    a, b = np.empty((30, 40)), np.empty((40, 50))
    (step,) = gemm_steps(plan_for("ij,jk->ik", a, b, out=np.empty((30, 50), order="F")))
    assert step.swapped and step.n.labels == "i" and step.m.labels == "k"
    (step,) = gemm_steps(plan_for("ij,jk->ik", a, b, order="F"))
    assert step.swapped and step.n.labels == "i"


@pytest.mark.parametrize("subscripts, shapes, kind", [
    ("ij,jk->ik", [(3, 4), (4, 5)], KernelKind.GEMM),
    ("ij,j->i", [(3, 4), (4,)], KernelKind.GEMV),
    ("i,i->", [(4,), (4,)], KernelKind.DOT),
    ("i,j->ij", [(3,), (4,)], KernelKind.OUTER),
    ("ij,ij->ij", [(3, 4), (3, 4)], KernelKind.BATCH_ONLY),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)], KernelKind.GEMM),
])
def test_kernel_kind(subscripts, shapes, kind):
    plan = plan_for(subscripts, *[np.empty(s) for s in shapes], gemm_only=True)
    (step,) = gemm_steps(plan)
    assert step.kind is kind and step.engine == "gemm"


@pytest.mark.parametrize("subscripts, shapes, kind, engine", [
    ("ij,jk->ik", [(30, 40), (40, 50)], KernelKind.GEMM, "gemm"),
    ("bij,bjk->bik", [(2, 16, 17), (2, 17, 18)], KernelKind.GEMM, "gemm"),
    # one of m, n, k below a micro-kernel edge: no packing pays
    ("ij,jk->ik", [(3, 4), (4, 5)], KernelKind.GEMM, "nest"),
    ("ij,jk->ik", [(300, 2), (2, 500)], KernelKind.GEMM, "nest"),
    ("ij,j->i", [(300, 400), (400,)], KernelKind.GEMV, "nest"),
    ("i,i->", [(4000,), (4000,)], KernelKind.DOT, "nest"),
    ("i,j->ij", [(300,), (400,)], KernelKind.OUTER, "nest"),
    ("ij,ij->ij", [(30, 40), (30, 40)], KernelKind.BATCH_ONLY, "nest"),
    ("ab,ba->ab", [(58, 357), (357, 58)], KernelKind.BATCH_ONLY, "nest"),
    ("ij,ij,ij->i", [(30, 40)] * 3, KernelKind.PRODUCT, "nest"),
    ("ijk->j", [(5, 6, 7)], KernelKind.REDUCE, "nest"),
    ("ii->", [(50, 50)], KernelKind.REDUCE, "nest"),
])
def test_engine_choice(subscripts, shapes, kind, engine):
    plan = plan_for(subscripts, *[np.empty(s) for s in shapes])
    (step,) = plan.steps
    assert step.kind is kind and step.engine == engine
    assert isinstance(step, NestStep if engine == "nest" else GemmStep)


def test_chain_runs_as_one_nest_only_when_it_saves_work():
    # elementwise: one pass over the three operands, no intermediate
    (step,) = plan_for("ij,ij,ij->i", *[np.empty((30, 40))] * 3).steps
    assert isinstance(step, NestStep) and step.inputs == (0, 1, 2)
    # a matrix chain: the nest would do i*j*k*l work, the path far less
    plan = plan_for("ij,jk,kl->il", *[np.empty((30, 30))] * 3)
    assert len(plan.steps) == 2 and all(s.engine == "gemm" for s in plan.steps)
    # a path step with a thin k goes to the nest, the other stays a GEMM
    plan = plan_for("ij,jk,kl->il", np.empty((300, 200)), np.empty((200, 100)),
                    np.empty((100, 2)), optimize="greedy")
    assert sorted(s.engine for s in plan.steps) == ["gemm", "nest"]


def test_chain_choice_prices_candidates_not_iterations():
    # 'ia,ib,ic->abc' with i = 2: the one nest does no more iterations than a
    # path, but re-writes the output per i along a strided row; a path that
    # forms a small product first writes it once along contiguous rows
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 35)).astype(np.float32)
    y = rng.standard_normal((2, 297)).astype(np.float32)[::-1]
    z = rng.standard_normal((2, 116)).astype(np.float32)[:, ::2]
    plan = plan_for("ia,ib,ic->abc", x, y, z)
    assert len(plan.steps) == 2 and plan.path
    last = plan.steps[-1]
    # its short-k step priced on both engines: either writes the output once
    # (contiguous rows, or held in registers by the small-edge or the
    # register-tile kernel, which the AVX2 set's shorter vectors may take)
    assert ((isinstance(last, NestStep) and last.dst == OUT
             and (last.row.endswith("/contig") or last.short or last.ctile))
            or (isinstance(last, GemmStep) and last.c == OUT and "by predicted" in last.why))
    np.testing.assert_allclose(einplan.einsum("ia,ib,ic->abc", x, y, z),
                               np.einsum("ia,ib,ic->abc", x, y, z), rtol=1e-5, atol=1e-5)
    # the same call forced to the one nest is predicted slower
    from einplan.cost import steps_seconds
    from einplan.nest import nest_step
    from einplan.plan import KernelKind as K
    sizes = {"i": 2, "a": 35, "b": 297, "c": 58}
    ins = [(0, "ia", (35, 1)), (1, "ib", (-297, 1)), (2, "ic", (116, 2))]
    one = nest_step(K.PRODUCT, ins, OUT, "abc", {"a": 297 * 58, "b": 58, "c": 1}, sizes,
                    np.dtype(np.float32))
    assert steps_seconds([one], np.float32) > steps_seconds(plan.steps, np.float32)


def test_a_short_k_step_of_a_path_is_priced_on_both_engines(monkeypatch):
    # 'ij,j,jk->ik' with A and B F-ordered (so the output), on a core of 1 MB
    # L2 (Zen 4): the path's second step, k = 4, runs the small-edge kernel
    # with j in registers around i (2.1 ms as a packed GEMM, 1.2 ms so; the
    # one nest, which re-writes the output per j, 2.7 ms).  With 2 MB of L2
    # the one nest's blocks of 8192 rows of the output stay there, and it
    # is the faster (Emerald Rapids: 0.72 ms, the two steps 0.85)
    from einplan import nest
    monkeypatch.setattr(nest, "l2_bytes", lambda: 1 << 20)
    monkeypatch.setattr(nest, "l2_resident", lambda: 3 << 18)
    rng = np.random.default_rng(5)
    a = rng.standard_normal((4, 104018)).astype(np.float32).T
    v = rng.standard_normal(8).astype(np.float32)[::2]
    w = rng.standard_normal((29, 4)).astype(np.float32).T
    plan = plan_for("ij,j,jk->ik", a, v, w)
    assert len(plan.steps) == 2 and plan.path, plan.steps
    last = plan.steps[-1]
    assert isinstance(last, NestStep) and last.short and last.dst == OUT, last
    assert "nest by predicted compute" in last.why, last.why
    np.testing.assert_allclose(einplan.einsum("ij,j,jk->ik", a, v, w),
                               np.einsum("ij,j,jk->ik", a, v, w), rtol=1e-4, atol=1e-4)


def test_a_summed_row_in_blocks_is_priced_by_what_one_block_re_reads():
    """'ij,jk,kl->il' (2,201873) x F (201873,73) x (73,4) f64: contracting
    A with B first is 146 dots of 201873 in one nest, the row j in blocks
    with the block loop outermost, so A's two rows are re-read per k from
    cache (5.4 ms, numpy 8.5); priced as if they came from memory each time,
    the smm GEMM of B and C first won (B read 73 columns at a time, 13.4 ms)."""
    from einplan.cost import nest_seconds
    from dataclasses import replace
    A = np.empty((2, 201873))
    B = np.asfortranarray(np.empty((201873, 73)))
    C = np.empty((73, 4))
    plan = plan_for("ij,jk,kl->il", A, B, C)
    assert plan.path == ((0, 1), (0, 1)), plan.path
    first = plan.steps[0]
    assert isinstance(first, NestStep) and 0 < first.block < 201873, first
    assert nest_seconds(first, np.float64) < 0.7 * nest_seconds(replace(first, block=0),
                                                               np.float64)


def test_a_thin_step_of_two_edges_of_three_or_more_is_priced_on_both_engines(restore_threads):
    # 'ij,jk,kl,lm->im' (9, 293965) F x (293965, 3) x (3, 3) x (3, 10660)
    # f64: the first step, m = 9, n = 3 and a long k, ran in the nest with k
    # outermost, reading A three times (9.3 ms, numpy 4.5); priced on both
    # engines it reads A once: on one thread in the in-place smm GEMM or the
    # register-tile kernel (2.05 / 1.86 ms, Emerald Rapids, numpy 2.95) and,
    # on two, in the register-tile kernel, each thread reading its half of A
    # (1.6 ms against smm's 1.7, numpy 3.4)
    a = np.asfortranarray(np.empty((9, 293965)))
    b, c, d = np.empty((293965, 3)), np.empty((3, 3)).T, np.empty((3, 10660))
    for threads in (1, 2):
        einplan.set_num_threads(threads)
        first = plan_for("ij,jk,kl,lm->im", a, b, c, d).steps[0]
        assert "by predicted compute" in first.why, first
        if threads == 2:
            assert isinstance(first, NestStep) and first.ctile, first
            assert first.split == len(first.loops) - 2 and "2 thread(s)" in first.why, first
        else:
            assert ((isinstance(first, GemmStep) and first.kernel.path.value == "smm")
                    or (isinstance(first, NestStep) and first.ctile)), first
    rng = np.random.default_rng(8)
    ops = [np.asfortranarray(rng.standard_normal((9, 2001))), rng.standard_normal((2001, 3)),
           rng.standard_normal((3, 3)).T, rng.standard_normal((3, 107))]
    np.testing.assert_allclose(einplan.einsum("ij,jk,kl,lm->im", *ops),
                               np.einsum("ij,jk,kl,lm->im", *ops, optimize=True),
                               rtol=1e-10, atol=1e-9)


def test_a_narrow_smm_step_prices_its_broadcasts_and_their_wait_on_memory(one_thread):
    """'ij,jk,kl->il' (636,14765) x (14765,1) F x (1,4) f32: the outer
    product 'jl' first leaves an smm GEMM with n = 4, a cycle per element
    of A (a broadcast each) while A's lines stream in: 3.5 ms.  Priced at
    an FMA per vector and its traffic hidden, it beat the GEMV path (1.3
    ms, numpy 1.5) that reads A once in dots; the call now starts with
    the GEMV."""
    a = np.empty((636, 14765), np.float32)
    b = np.asfortranarray(np.empty((14765, 1), np.float32))
    c = np.empty((4, 1), np.float32).T
    first = plan_for("ij,jk,kl->il", a, b, c).steps[0]
    assert isinstance(first, NestStep) and set(first.inputs) == {0, 1}, first
    rng = np.random.default_rng(5)
    ops = [rng.standard_normal((63, 1476)).astype(np.float32),
           np.asfortranarray(rng.standard_normal((1476, 1)).astype(np.float32)),
           rng.standard_normal((4, 1)).astype(np.float32).T]
    np.testing.assert_allclose(einplan.einsum("ij,jk,kl->il", *ops),
                               np.einsum("ij,jk,kl->il", *ops), rtol=1e-4, atol=1e-3)


def test_rows_summed_into_one_row_are_priced_as_one_start():
    """'ij,jk,kl,lm->im' (12,103179) F x (103179,1) x (1,3) x (3,61): the
    GEMV 'ij,j->i' runs its 103179 rows of 12 summed into one output row in
    one call of the rows kernel, the row in registers (60-75 us); priced as
    a start per row (1.5 ms) it lost to an outer product of 1.2 MB and a
    GEMM (595 us, numpy 163).  The chain now starts with the GEMV."""
    from einplan.nest import rows_per_start
    a = np.asfortranarray(np.empty((12, 103179), np.float32))
    b, c = np.empty((103179, 1), np.float32), np.empty((1, 3), np.float32)
    d = np.empty((3, 122), np.float32)[:, ::2]
    first = plan_for("ij,jk,kl,lm->im", a, b, c, d).steps[0]
    assert isinstance(first, NestStep) and set(first.inputs) == {0, 1}, first
    per, _ = rows_per_start(first.loops, 4)
    assert per == first.loops[-2].extent == 103179, first.loops
    rng = np.random.default_rng(3)
    ops = [np.asfortranarray(rng.standard_normal((12, 5001))).astype(np.float32),
           rng.standard_normal((5001, 1)).astype(np.float32),
           rng.standard_normal((1, 3)).astype(np.float32),
           rng.standard_normal((3, 122)).astype(np.float32)[:, ::2]]
    np.testing.assert_allclose(einplan.einsum("ij,jk,kl,lm->im", *ops),
                               np.einsum("ij,jk,kl,lm->im", *ops, optimize=True),
                               rtol=1e-3, atol=1e-3)


def test_the_small_edge_kernel_is_priced_a_start_per_call():
    """'ij,j,jk->ik' (24495,2) F x (2,) x (2,6)[::-1] f32: the small-edge
    kernel runs 'ij,jk->ik' with j = 2 in registers over all 24495 rows of
    6 in one call (22 us); priced at a start per row (346 us) it lost to
    one nest of strided output rows (111 us, numpy 44).  The path forms
    v * B first, then that step."""
    from einplan.cost import nest_seconds
    rng = np.random.default_rng(4)
    a = np.asfortranarray(rng.standard_normal((24495, 2))).astype(np.float32)
    v = rng.standard_normal(2).astype(np.float32)
    b = rng.standard_normal((2, 6)).astype(np.float32)[::-1]
    steps = plan_for("ij,j,jk->ik", a, v, b).steps
    assert len(steps) == 2 and steps[-1].short == 2, steps
    # a start per call: under a start per row's price
    assert nest_seconds(steps[-1], np.float32) < 24495 * 12e-9, steps[-1]
    np.testing.assert_allclose(einplan.einsum("ij,j,jk->ik", a, v, b),
                               np.einsum("ij,j,jk->ik", a, v, b), rtol=1e-4, atol=1e-4)


def test_a_row_walking_an_operand_backwards_is_priced_as_strided():
    # 'ij,j,jk->ik' with the last operand reversed along j: the one nest's
    # row j meets stride -1 and runs the strided kernel; a path forms the
    # 1739-element product first and reads A once in a contiguous GEMV
    rng = np.random.default_rng(2)
    a = rng.standard_normal((2000, 1739))
    v = rng.standard_normal(1739)
    w = rng.standard_normal((1739, 1))[::-1]
    plan = plan_for("ij,j,jk->ik", a, v, w)
    assert len(plan.steps) == 2 and plan.path
    gemv = plan.steps[-1]
    assert gemv.in_labels == ("ij", "j") and gemv.row == "sum/contig"
    from einplan.cost import steps_seconds
    from einplan.nest import nest_step
    from einplan.plan import KernelKind as K
    sizes = {"i": 2000, "j": 1739, "k": 1}
    ins = [(0, "ij", (1739, 1)), (1, "j", (1,)), (2, "jk", (-1, 1))]
    one = nest_step(K.PRODUCT, ins, OUT, "ik", {"i": 1}, sizes, np.dtype(np.float64))
    assert one.row == "sum/strided"
    assert steps_seconds([one], np.float64) > steps_seconds(plan.steps, np.float64)
    np.testing.assert_allclose(einplan.einsum("ij,j,jk->ik", a, v, w),
                               np.einsum("ij,j,jk->ik", a, v, w), rtol=1e-10, atol=1e-10)


def test_nest_writes_an_intermediate_in_the_order_its_inputs_walk(monkeypatch):
    # 'jk,kl->jl' with jk F-ordered, as plain rows: j is the unit-stride row,
    # so the intermediate is stored j innermost (C order would make the row
    # strided).  As it is planned, the step holds tiles of the output in
    # registers while k streams (the register-tile kernel, B read in place
    # along j: 0.8 ms for the call, 2.4 ms as rows, numpy 1.2)
    from einplan import planner
    a = np.asfortranarray(np.empty((17, 27)))
    b = np.asfortranarray(np.empty((27, 63006)))
    c = np.empty((63006, 4))[:, ::2]
    d = np.empty((2, 1354))
    first = plan_for("ij,jk,kl,lm->im", a, b, c, d).steps[0]
    assert isinstance(first, NestStep) and first.in_labels == ("jk", "kl") and first.ctile
    monkeypatch.setattr(nest, "ctile_reads_once", lambda loops, itemsize: False)
    monkeypatch.setattr(planner, "_cache", type(planner._cache)())   # plans of this test only
    plan = plan_for("ij,jk,kl,lm->im", a, b, c, d)
    first = plan.steps[0]
    assert isinstance(first, NestStep) and first.dst != OUT
    assert first.in_labels == ("jk", "kl") and first.row == "prod/contig"
    assert first.buffer.order == (1, 0)
    rng = np.random.default_rng(1)
    ops = [rng.standard_normal(x.shape)[..., :x.shape[-1]] for x in (a, b)]
    ops = [np.asfortranarray(ops[0]), np.asfortranarray(ops[1]),
           rng.standard_normal((63006, 4))[:, ::2], rng.standard_normal((2, 1354))]
    np.testing.assert_allclose(einplan.einsum("ij,jk,kl,lm->im", *ops),
                               np.einsum("ij,jk,kl,lm->im", *ops, optimize=True),
                               rtol=1e-10, atol=1e-9)


def test_nest_writes_an_intermediate_in_the_order_its_reader_walks(monkeypatch):
    # 'ij,j,jk->ik' (533, 6290) x (6290,)[::2] x (6290, 3) f32: the first
    # step walks 'jk' with k unit-stride, but the second reads it against A's
    # rows along j; laid out j innermost it runs as dots (1.6 ms, numpy 2.5),
    # in C order as tiles of 3 rows transposed in registers (3.4 ms).  The
    # packed engine is priced out: this is about the nest's two layouts (on
    # AVX-512 the narrow in-place GEMM may price below both), and so are the
    # small-edge kernel's dots, which read C order through a copy of 'jk'
    # (0.63 ms)
    from einplan import cost, nest, planner
    monkeypatch.setattr(cost, "gemm_seconds", lambda step, dtype: float("inf"))
    monkeypatch.setattr(nest, "SHORT_DOT_ROW", 1024)
    monkeypatch.setattr(planner, "_cache", type(planner._cache)())   # plans of this test only
    rng = np.random.default_rng(3)
    a = rng.standard_normal((533, 6290)).astype(np.float32)
    v = rng.standard_normal(12580).astype(np.float32)[::2]
    w = rng.standard_normal((6290, 3)).astype(np.float32)
    plan = plan_for("ij,j,jk->ik", a, v, w)
    first, last = plan.steps
    assert isinstance(first, NestStep) and first.in_labels == ("j", "jk")
    assert first.buffer.order == (1, 0)
    assert isinstance(last, NestStep) and not last.row.endswith("/transposed"), last
    assert [lp.strides for lp in last.loops][-1][:2] == (1, 1)
    np.testing.assert_allclose(einplan.einsum("ij,j,jk->ik", a, v, w),
                               np.einsum("ij,j,jk->ik", a, v, w), rtol=1e-3, atol=1e-3)
    # the readers' order is chosen by price: C order's transposed tiles of
    # fewer rows than a vector cost a vector's work per column
    from einplan.cost import nest_seconds
    from einplan.nest import nest_step
    from einplan.plan import KernelKind as K
    sizes = {"i": 533, "j": 6290, "k": 3}
    ins = [(0, "ij", (6290, 1)), (1, "jk", (3, 1))]
    tp = nest_step(K.GEMM, ins, OUT, "ik", {"i": 3, "k": 1}, sizes, np.dtype(np.float32))
    assert tp.row == "sum/transposed" and tp.tile == 3
    from einplan.nest import vector_lanes
    wider = 1.2 if vector_lanes(4) >= 8 else 1.0   # 3 rows of 8 lanes, or of 4
    assert nest_seconds(tp, np.float32) > wider * nest_seconds(last, np.float32)


def test_candidate_paths():
    from einplan.path import candidate_paths, iterations
    sizes = {"i": 2, "a": 35, "b": 297, "c": 58}
    terms = ["ia", "ib", "ic"]
    # einplan's own order: every pairwise order of three operands
    paths = candidate_paths(terms, "abc", sizes, True)
    assert sorted(paths) == [((0, 1), (0, 1)), ((0, 2), (0, 1)), ((1, 2), (0, 1))]
    # a path finder the caller names: its path only
    assert len(candidate_paths(terms, "abc", sizes, "greedy")) == 1
    # orders doing far more work than the least are not candidates: the
    # outer product 'ij,kl->ijkl' first
    sizes = {"i": 100, "j": 100, "k": 100, "l": 2}
    paths = candidate_paths(["ij", "jk", "kl"], "il", sizes, True)
    least = min(iterations(["ij", "jk", "kl"], "il", sizes, p) for p in paths)
    assert ((0, 2), (0, 1)) not in paths and least == 100 * 100 * 2 * 2


def test_nest_loop_order_and_tiles():
    # 'ijk->j' C-contiguous: the row is k (unit stride, a reduction)
    (step,) = plan_for("ijk->j", np.empty((5, 6, 7))).steps
    assert step.loops[-1].labels == "k" and step.row == "sum/contig"
    # a GEMV on an F-ordered matrix: the axpy form, rows along i
    (step,) = plan_for("ij,j->i", np.asfortranarray(np.empty((300, 400))),
                       np.empty(400)).steps
    assert step.loops[-1].labels == "i" and step.row == "prod/contig"
    # C-ordered: the dot form, rows along j
    (step,) = plan_for("ij,j->i", np.empty((300, 400)), np.empty(400)).steps
    assert step.loops[-1].labels == "j" and step.row == "sum/contig"
    # operands disagreeing on the unit-stride axis: tiles over both
    (step,) = plan_for("ab,ba->ab", np.empty((500, 400)), np.empty((400, 500)),
                       order="C").steps
    assert step.tile > 0 and len(step.loops) == 2
    # a diagonal is a strided view: 'ii' is one loop of stride n + 1
    (step,) = plan_for("ii->", np.empty((50, 50))).steps
    assert [lp.strides for lp in step.loops] == [(51, 0)]


def test_gemv_puts_output_in_n():
    # ij,j->i: the only output axis goes to n (vectors run along n)
    (step,) = gemm_steps(plan_for("ij,j->i", np.empty((3, 4)), np.empty(4), gemm_only=True))
    assert step.n.labels == "i" and step.m.axes == ()


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint16, np.bool_,
                                   np.float16, object])
def test_fallback_named_for_non_native_dtypes(dtype):
    a = np.ones((3, 4), dtype=dtype)
    b = np.ones((4, 5), dtype=dtype)
    plan = plan_for("ij,jk->ik", a, b)
    assert plan.fallback is not None
    assert "no native kernel" in plan.fallback.reason
    assert str(np.dtype(dtype)) in plan.fallback.reason
    assert "fallback" in str(plan)


def test_zero_size_falls_back():
    plan = plan_for("ij,jk->ik", np.empty((0, 4)), np.empty((4, 5)))
    assert plan.fallback is not None and "zero-size" in plan.fallback.reason


@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
def test_complex_gemv_four_real_gemms(dt):
    """On the GEMM engine (prepacked plans), a complex GEMV runs as 4 real
    GEMVs on the float views (1m is for GEMMs; einsum's GEMVs take the nest)."""
    a, b = np.empty((3, 4), dt), np.empty(4, dt)
    (step,) = gemm_steps(plan_for("ij,j->i", a, b, gemm_only=True))
    assert step.complex_mode == "cc"
    # strides index the float views: doubled
    assert step.k.axes[0].strides == (2, 2)
    calls = []
    real_gemm = _native.reference_gemm() or _native.compiled_gemm

    def spy(A, B, C, m, n, k, batch=(), alpha=1.0, beta=0.0):
        calls.append((alpha, beta, A.dtype, C.dtype))
        return real_gemm(A, B, C, m, n, k, batch, alpha, beta)

    from einplan.execute import run_plan
    rng = np.random.default_rng(0)
    a = (rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))).astype(dt)
    b = (rng.standard_normal(4) + 1j * rng.standard_normal(4)).astype(dt)
    previous = _native.set_reference_gemm(spy)
    try:
        res = run_plan(plan_for("ij,j->i", a, b, gemm_only=True), [a, b])
    finally:
        _native.set_reference_gemm(previous)
    assert len(calls) == 4
    assert [c[:2] for c in calls] == [(1.0, 0.0), (-1.0, 1.0), (1.0, 0.0), (1.0, 1.0)]
    assert all(c[2] == np.dtype(dt).type(0).real.dtype for c in calls)
    np.testing.assert_allclose(res, a @ b, rtol=1e-5)


@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
def test_complex_gemm_is_one_1m_gemm(dt):
    # every edge above nest.CTILE_EDGE (shorter ones are priced on the nest too)
    a, b = np.empty((24, 20), dt), np.empty((20, 30), dt)
    (step,) = gemm_steps(plan_for("ij,jk->ik", a, b))
    assert step.complex_mode == "1m"
    # the kernel call takes complex-element strides
    assert step.groups()[1] == ((30, 1, 1),)


def test_complex_times_real_casts_the_real_operand():
    """numpy promotes the real operand (its zero imaginary part is multiplied:
    inf * 0 = nan), so it is cast to complex first, a recorded copy."""
    a, b = np.empty((8, 9), np.complex128), np.empty((9, 10))
    plan = plan_for("ij,jk->ik", a, b)
    (step,) = gemm_steps(plan)
    assert step.complex_mode == "1m"
    copies = [s for s in plan.steps if s.kind is KernelKind.COPY]
    assert len(copies) == 1 and copies[0].src == 1 and copies[0].cast_to == "complex128"


def test_mixed_float_cast_recorded():
    plan = plan_for("ij,jk->ik", np.empty((3, 4), np.float32), np.empty((4, 5)))
    assert plan.dtype == "float64"
    copies = [s for s in plan.steps if s.kind is KernelKind.COPY]
    assert len(copies) == 1 and copies[0].src == 0


def test_presum_recorded():
    # "ab,bc->c": 'a' summed out of A before the GEMV
    plan = plan_for("ab,bc->c", np.empty((3, 4)), np.empty((4, 5)), gemm_only=True)
    red = [s for s in plan.steps if isinstance(s, ReduceStep)]
    assert len(red) == 1 and red[0].kind is KernelKind.REDUCE and red[0].src == 0


def test_single_operand_plans():
    assert plan_for("ii->i", np.empty((3, 3))).steps[0].as_view
    assert plan_for("ij->ji", np.empty((3, 4))).steps[0].as_view
    step = plan_for("ij->", np.empty((3, 4))).steps[0]
    assert step.kind is KernelKind.REDUCE and step.engine == "nest"
    # a sum that also casts (dtype=) stays numpy's
    step = plan_for("ij->", np.empty((3, 4), np.float32), dtype=np.float64).steps[0]
    assert step.kind is KernelKind.REDUCE and not step.as_view and step.engine == "numpy"
    step = plan_for("ij->ji", np.empty((3, 4)), out=np.empty((4, 3))).steps[0]
    assert step.kind is KernelKind.COPY and not step.as_view and step.engine == "numpy"
    # 'ii->' of a (1, 1) array and 'bii->b' with i = 1 are copies (the summed
    # axis has extent 1): a nest, not a numpy step
    for sub, shape in (("ii->", (1, 1)), ("bii->b", (500, 1, 1))):
        a = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
        step = plan_for(sub, a).steps[0]
        assert step.kind is KernelKind.COPY and step.engine == "nest"
        np.testing.assert_array_equal(einplan.einsum(sub, a), np.einsum(sub, a))


def test_multi_operand_path_and_intermediate():
    # m and n past a strip of the register-tile kernel: both steps GEMMs
    ops = [np.empty((20, 21)), np.empty((21, 22)), np.empty((22, 23))]
    plan = plan_for("ij,jk,kl->il", *ops, optimize="greedy")
    steps = gemm_steps(plan)
    assert len(steps) == 2 and steps[-1].c == OUT and steps[0].c_buffer is not None
    plan2 = plan_for("ij,jk,kl->il", *ops, optimize=["einsum_path", (1, 2), (0, 1)])
    assert plan2.path == ((1, 2), (0, 1))
    assert gemm_steps(plan2)[0].a_labels + gemm_steps(plan2)[0].b_labels != ""


def test_intermediate_written_with_unit_stride_in_n():
    ops = [np.empty((8, 9)), np.empty((9, 10)), np.empty((10, 11))]
    for step in gemm_steps(plan_for("ij,jk,kl->il", *ops)):
        if step.c != OUT:
            unit = [ax for ax in step.n.axes if ax.strides[-1] == 1]
            assert unit, step


def test_plan_cache_hits_and_thread_safety():
    a, b = np.empty((3, 4)), np.empty((4, 5))
    p1 = plan_for("ij,jk->ik", a, b)
    assert plan_for("ij,jk->ik", np.ones((3, 4)), np.ones((4, 5))) is p1
    # a different layout is a different plan
    assert plan_for("ij,jk->ik", np.empty((4, 3)).T, b) is not p1
    results = []

    def work():
        for _ in range(50):
            results.append(plan_for("ij,jk->ik", a, b))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(r is p1 for r in results)


def test_plan_is_frozen_and_printable():
    # m and n past one register tile, k past a short loop: a GemmStep (nest.is_one_tile,
    # nest.is_short_k)
    plan = plan_for("bij,bjk->bik", np.empty((2, 10, 16)), np.empty((2, 16, 10)))
    with pytest.raises(Exception):
        plan.dtype = "float32"
    text = str(plan)
    assert "gemm" in text and "batch=(b:2)" in text
    assert gemm_steps(plan)[0].batch.role is Role.BATCH


# ---------------------------------------------------------------- panel loops
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64])
def test_straddling_n_axis_runs_as_a_batch_loop(dtype):
    """acb,cd->adb: n = (a, b) cannot merge; b (>= 128) is not a multiple of
    the kernel's NR, so 'a' becomes a batch loop (W read with stride 0) instead
    of NR panels straddling every run of b."""
    nr = _native.tile(np.dtype(dtype).type(0).real.dtype)[1]
    b = nr * (128 // nr + 1) + nr // 4     # complex (1m): 2b reals, not a multiple either
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 20, b)).astype(dtype)
    # m = 17, k = 20: no edge short enough for the nest's complex register tiles
    w = rng.standard_normal((20, 17)).astype(dtype)
    res = einplan.einsum("acb,cd->adb", a, w)
    np.testing.assert_allclose(res, np.einsum("acb,cd->adb", a, w), rtol=1e-4, atol=1e-4)
    d = einplan.explain("acb,cd->adb", a, w).to_dict()
    step = d["steps"][0]
    assert [(p["role"], p["labels"]) for p in step["panel_loops"]] == [("n", "a")]
    assert step["shape_mnk"] == {"batch": 3, "m": 17, "n": b, "k": 20}
    assert "straddle" in str(einplan.explain("acb,cd->adb", a, w))


def test_aligned_or_short_runs_stay_one_gemm():
    rng = np.random.default_rng(1)
    for b in (96, 48, 100):          # multiple of NR (f32 48), or shorter than 128
        a = rng.standard_normal((3, 20, b)).astype(np.float32)
        # m = 17: no edge short enough for the nest's register tiles
        w = rng.standard_normal((20, 17)).astype(np.float32)
        step = einplan.explain("acb,cd->adb", a, w).to_dict()["steps"][0]
        assert step["panel_loops"] == [] and step["shape_mnk"]["batch"] == 1, b
        np.testing.assert_allclose(einplan.einsum("acb,cd->adb", a, w),
                                   np.einsum("acb,cd->adb", a, w), rtol=1e-4, atol=1e-4)


def test_short_straddled_runs_loop_when_the_loop_is_a_few_large_gemms():
    """'...ij,...jk->...ik' with a broadcast batch of B: n = (4, 17) straddles
    every NR panel; 4 GEMMs of 2000 x 17 each run whole, while 40 GEMMs (too
    many), a small m (too little C per GEMM) or an A past L2 (packed again
    for every GEMM) stay one GEMM."""
    rng = np.random.default_rng(3)
    past_l2 = nest.l2_bytes() // (2000 * 4) + 8
    for batch, m, k, looped in ((4, 2000, 10, True), (40, 2000, 10, False), (4, 50, 10, False),
                                (4, 2000, past_l2, False)):
        a = rng.standard_normal((1, 1, m, k)).astype(np.float32)
        b = rng.standard_normal((1, batch, k, 17)).astype(np.float32)
        np.testing.assert_allclose(einplan.einsum("...ij,...jk->...ik", a, b), np.matmul(a, b),
                                   rtol=1e-4, atol=1e-4)
        step = einplan.explain("...ij,...jk->...ik", a, b).to_dict()["steps"][0]
        assert [p["role"] for p in step["panel_loops"]] == (["n"] if looped else []), batch
        assert step["shape_mnk"]["n"] == (17 if looped else 17 * batch), batch


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("run", [13, 130])
def test_straddling_m_axis_stays_one_gemm(dtype, run):
    """m = (a, b) kept apart by out='s layout (a row gap after each run of b,
    not a multiple of MR = 8) stays one GEMM of 4 * run rows: a straddled MR
    panel gathers its rows, and its tile goes out a row at a time; a loop
    over a would pack W again for every a."""
    rng = np.random.default_rng(2)
    A = rng.standard_normal((4, run, 9)).astype(dtype)
    W = rng.standard_normal((9, 200)).astype(dtype)
    for beta_out in (False, True):
        big = np.full((4, run + 1, 200), np.nan, dtype)
        out = big[:, :run]
        if beta_out:
            out[...] = 1
        assert einplan.einsum("abk,kn->abn", A, W, out=out) is out
        np.testing.assert_allclose(out, A @ W, rtol=1e-4, atol=1e-4)
        assert np.isnan(big[:, run]).all()
    # A read backwards along a: its rows do not merge either
    np.testing.assert_allclose(einplan.einsum("abk,kn->abn", A[::-1], W), A[::-1] @ W,
                               rtol=1e-4, atol=1e-4)
    step = einplan.explain("abk,kn->abn", A, W, out=out).to_dict()["steps"][0]
    assert step["panel_loops"] == []
    assert step["shape_mnk"]["batch"] == 1 and step["shape_mnk"]["m"] == 4 * run


def test_numpy_fallback_keeps_the_callers_letters():
    # numpy.einsum then sums in its own label order, as for the caller's call;
    # '...' dims get unused letters, upper case first (numpy's interleaved order)
    h = np.float16
    p = plan_for("ji,ik->jk", np.ones((3, 4), h), np.ones((4, 5), h))
    assert p.fallback is not None and p.fallback_subscripts == "ji,ik->jk"
    p = plan_for("...j,jk->...k", np.ones((2, 3, 4), h), np.ones((4, 5), h))
    assert p.fallback is not None and p.fallback_subscripts == "ABj,jk->ABk"


@pytest.mark.parametrize("spec", ["kdac,kb->abcd", "kcbd,ka->abcd"])
def test_free_output_ties_keep_numpy_k_layout(spec):
    # both orientations merge to one GEMM; the result keeps numpy's layout,
    # so the caller's numpy updates on it (PySCF's W -= ..., W += ...) run as
    # they would on numpy's result
    rng = np.random.default_rng(1)
    sizes = {"k": 16, "a": 16, "b": 16, "c": 16, "d": 16}
    small_label = spec.split(",")[1][1]
    sizes[small_label] = 80
    big = rng.random(tuple(sizes[c] for c in spec.split(",")[0]))
    small = rng.random((16, 80))
    (step,) = gemm_steps(plan_for(spec, big, small))
    assert step.kind is KernelKind.GEMM and len(step.n.axes) == 1 and step.n.extent == 16 ** 3
    got, ref = einplan.einsum(spec, big, small), np.einsum(spec, big, small)
    assert got.strides == ref.strides
    np.testing.assert_allclose(got, ref, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("dtype", ["float32", "complex64"])
def test_small_permuted_operand_relaid_out_once(dtype):
    """A GEMV whose vector is permuted against the matrix ('abcd,dcb->a'):
    the small operand is copied once into the large one's axis order, then
    one nest runs contiguous rows through both; either operand may be the
    small one, out= is written in place, and a small operand already in the
    large one's order, or one not re-used enough, is read in place."""
    rng = np.random.default_rng(5)
    dt = np.dtype(dtype)
    A = rng.standard_normal((49, 73, 33, 11)).astype(dt)
    B = rng.standard_normal((11, 33, 73)).astype(dt)
    for spec, ops in [("abcd,dcb->a", (A, B)), ("dcb,abcd->a", (B, A))]:
        plan = plan_for(spec, *ops)
        copy, nest = plan.steps
        assert isinstance(copy, ReduceStep) and copy.kind is KernelKind.COPY
        assert copy.src == spec.split("->")[0].split(",").index("dcb")
        assert isinstance(nest, NestStep) and nest.row == "sum/contig"
        assert [lp.extent for lp in nest.loops] == [49, 73 * 33 * 11]
        want = np.einsum(spec, *ops)
        tol = 1e-3
        np.testing.assert_allclose(einplan.einsum(spec, *ops), want, rtol=tol, atol=tol)
        out = np.empty(49, dt)
        assert einplan.einsum(spec, *ops, out=out) is out
        np.testing.assert_allclose(out, want, rtol=tol, atol=tol)
    text = str(einplan.explain("abcd,dcb->a", A, B))
    assert "relaid out" in text and "copied once into the large one's axis order" in text
    same = np.ascontiguousarray(B.transpose(2, 1, 0))
    assert len(plan_for("abcd,bcd->a", A, same).steps) == 1
    assert len(plan_for("abcd,dcb->a", A[:2, :4], B[:, :, :4]).steps) == 1


def test_small_operand_strided_along_the_row_made_contiguous_once():
    """A small operand in the large one's axis order but at stride 2 along
    its unit stride, read anew for every row of the large one ('bij,bkj->bki'
    (520,714,25) with A's i outermost and B[..., ::2]: the loop around the row
    moves B too), is copied once into a dense buffer, then one nest runs
    contiguous rows; one constant along the loop around the row is read in
    place (the nest gathers its row once: 'bij,bj->bi')."""
    rng = np.random.default_rng(7)
    A = rng.standard_normal((714, 520, 25)).transpose(1, 0, 2)
    B = rng.standard_normal((520, 1, 50))[..., ::2]
    copy, nest = plan_for("bij,bkj->bki", A, B).steps
    assert isinstance(copy, ReduceStep) and copy.kind is KernelKind.COPY and copy.src == 1
    assert isinstance(nest, NestStep) and nest.row == "sum/contig"
    np.testing.assert_allclose(einplan.einsum("bij,bkj->bki", A, B),
                               np.einsum("bij,bkj->bki", A, B), rtol=1e-12, atol=1e-12)
    assert "relaid out" in str(einplan.explain("bij,bkj->bki", A, B))
    A2 = np.empty((300, 200, 48))
    B2 = np.empty((300, 96))[:, ::2]
    assert len(plan_for("bij,bj->bi", A2, B2).steps) == 1

def test_small_operand_of_an_outer_product_is_read_in_place():
    """A small operand with no axis in common with the large one (an outer
    product) keeps its own order, which the output follows: 'ab,c->acb'
    (3, 8):F x (9141,)[::-1] merges b and a into rows of 24 (one per c)
    instead of copying A to C order, after which they do not merge."""
    rng = np.random.default_rng(8)
    A = np.asfortranarray(rng.standard_normal((3, 8)))
    x = rng.standard_normal(9141)[::-1]
    (nest,) = plan_for("ab,c->acb", A, x).steps
    assert isinstance(nest, NestStep) and [lp.extent for lp in nest.loops] == [9141, 24]
    np.testing.assert_array_equal(einplan.einsum("ab,c->acb", A, x),
                                  np.einsum("ab,c->acb", A, x))
    assert "relaid out" not in str(einplan.explain("ab,c->acb", A, x))



def test_small_operand_walked_against_the_large_one_made_contiguous_once():
    """A small operand in the large one's axis order but reversed along one
    of them ('abc,bc->a' (532,542,3) x (542,3)[::-1] f32: b and c do not
    merge, and each row of the large one ran as strided dots of 3, 0.1x
    numpy) is copied once forward, then one nest runs rows of b*c; one
    reversed along with the large one is read in place."""
    rng = np.random.default_rng(8)
    A = rng.standard_normal((532, 542, 3)).astype(np.float32)
    B = rng.standard_normal((542, 3)).astype(np.float32)[::-1]
    copy, nest = plan_for("abc,bc->a", A, B).steps
    assert isinstance(copy, ReduceStep) and copy.kind is KernelKind.COPY and copy.src == 1
    assert isinstance(nest, NestStep) and [lp.extent for lp in nest.loops] == [532, 542 * 3]
    np.testing.assert_allclose(einplan.einsum("abc,bc->a", A, B), np.einsum("abc,bc->a", A, B),
                               rtol=1e-4, atol=1e-4)
    assert len(plan_for("abc,bc->a", A[:, ::-1], B).steps) == 1
    # reversed, but outside the large one's rows, which a copy would not
    # lengthen: 'abcd,cb->ad' (20,2,3,263) x (3,2)[::-1], its rows of 263
    # contiguous either way; the copy's fixed cost made it 0.65x numpy
    A4 = rng.standard_normal((20, 2, 3, 263))
    B2 = rng.standard_normal((3, 2))[::-1]
    (nest,) = plan_for("abcd,cb->ad", A4, B2).steps
    assert isinstance(nest, NestStep) and nest.loops[-1].extent == 263
    np.testing.assert_allclose(einplan.einsum("abcd,cb->ad", A4, B2),
                               np.einsum("abcd,cb->ad", A4, B2), rtol=1e-12)
    # one the copy would merge, but whose nest costs less than a few copies'
    # start-ups: 'abc,bc->a' (5,18,25) x (18,25)[::-1] f32, 2.9 us in numpy,
    # 10.5 us copied first
    A3 = rng.standard_normal((5, 18, 25)).astype(np.float32)
    B3 = rng.standard_normal((18, 25)).astype(np.float32)[::-1]
    assert len(plan_for("abc,bc->a", A3, B3).steps) == 1
    np.testing.assert_allclose(einplan.einsum("abc,bc->a", A3, B3),
                               np.einsum("abc,bc->a", A3, B3), rtol=1e-4, atol=1e-4)


def test_row_across_pages_of_a_large_operand_is_priced_as_lines_at_latency():
    """'abc,cb->a' (105,16972,7) f64 with B (7,16972) sliced: a nest that
    runs 'a' (a page apart in A) as its row waits for memory at every line;
    priced so, the 950 KB B is relaid out once into A's order and one nest
    runs 105 contiguous dots of 118804."""
    from einplan.nest import PAGE, RAGGED_START, traffic
    item = 8
    # A's loops b > c > a, its strides (7, 1, 118804): the row 'a' steps a
    # page per element; the same loops with the row inside a line of A
    paged = traffic([(16972, (7, 0)), (7, (1, 0)), (105, (118804, 1))], item)
    assert 118804 * item > PAGE
    assert paged >= 105 * 16972 * 7 * item * (1 + RAGGED_START / 64)
    assert traffic([(105, (118804, 1)), (16972, (7, 0)), (7, (1, 0))], item) < paged / 3
    A = np.empty((105, 16972, 7))
    B = np.empty((7, 2 * 16972))[:, ::2]
    copy, nest = plan_for("abc,cb->a", A, B).steps
    assert isinstance(copy, ReduceStep) and copy.src == 1
    assert nest.row == "sum/contig" and [lp.extent for lp in nest.loops] == [105, 16972 * 7]


def test_a_real_gemm_with_a_short_edge_is_priced_as_contiguous_rows_too():
    """'bij,bkj->bki' (421,121,278) x (421,4,278) f64: with m = 4 the packed
    engine copies A's 113 MB into panels for a tile of 8 rows (14.8 ms,
    numpy 10); the nest's dots of 278, both operands contiguous along them,
    are priced against it and run (8.9 ms; B's 3.7 MB stay in L3, so the
    small-edge kernel runs the 4 dots of a row at once: Zen 3, 2 threads,
    9.2 ms, one dot at a time 10.1, numpy 36)."""
    a = np.empty((421, 121, 278))
    b = np.empty((421, 4, 278))
    (step,) = plan_for("bij,bkj->bki", a, b).steps
    assert isinstance(step, NestStep) and step.row.endswith("/contig"), step
    assert step.why.startswith("nest by predicted compute"), step.why
    rng = np.random.default_rng(6)
    a, b = rng.standard_normal((21, 121, 78)), rng.standard_normal((21, 4, 78))
    np.testing.assert_allclose(einplan.einsum("bij,bkj->bki", a, b),
                               np.einsum("bij,bkj->bki", a, b), rtol=1e-12, atol=1e-12)


def test_a_path_step_with_an_edge_of_one_register_tile_strip_is_priced_on_both_engines():
    """'ij,jk,kl->il' with A F-ordered and k = 6: the first step's n fits one
    strip of the register-tile kernel, which reads A once in place; as a
    two-operand call would, the path prices it against the packed engine
    ((12104,821) F x (821,6) x (6,22) f32: the step packed 7.2 ms, in tiles
    2.7 ms; numpy's whole call 4.5 ms)."""
    from einplan.nest import ctile_nw
    n = min(6, ctile_nw(False))    # a strip is 4 rows on AVX2, 8 on AVX-512
    rng = np.random.default_rng(21)
    a = np.asfortranarray(rng.standard_normal((3000, 400)).astype(np.float32))
    b = rng.standard_normal((400, n)).astype(np.float32)
    c = rng.standard_normal((n, 22)).astype(np.float32)[::-1]
    plan = plan_for("ij,jk,kl->il", a, b, c)
    first = plan.steps[0]
    assert isinstance(first, NestStep) and first.ctile and "predicted" in first.why, first
    np.testing.assert_allclose(einplan.einsum("ij,jk,kl->il", a, b, c),
                               np.einsum("ij,jk,kl->il", a, b, c, optimize=True),
                               rtol=1e-4, atol=1e-3)


def test_short_kept_rows_are_priced_as_one_call_of_the_rows_kernel(restore_threads):
    """A loop of short elementwise rows (the output moving along them and
    along the loop around them) runs in one call of the rows kernel, a
    plain loop or a few vectors a row, none of a row start's set-up each:
    so priced, 'ia,ib,ic->abc' (878387,12) x (878387,1) x (878387,5)[:, ::2]
    f32 on 1 thread takes its pairwise path -- C's rows of 5 scaled by B,
    then a GEMM with A (9.6 ms; numpy 16-20) -- over one nest across i that
    copies A's and C's rows per chunk and runs 60 products an element (19
    ms)."""
    from einplan.cost import nest_seconds
    from einplan.nest import short_kept_rows, vector_lanes
    from einplan.plan import NestLoop

    def Loop(extent, strides):
        return NestLoop("x", extent, strides)
    item = 4
    # rows of 5, one input at stride 2, scaled per row; rows of 12 and of
    # 24 contiguous; a summed loop around the rows (rows into one) is not
    # this kernel's
    rows5 = [Loop(1000, (10, 1, 5)), Loop(5, (2, 0, 1))]
    lanes = vector_lanes(item)
    assert short_kept_rows(rows5, item) == ("plain" if lanes > 5 else "vector")
    assert short_kept_rows([Loop(1000, (6, 3)), Loop(3, (2, 1))], item) == "plain"
    half = max(2, lanes // 2)
    assert short_kept_rows([Loop(1000, (half, half)), Loop(half, (1, 1))], item) == "vector"
    two = 2 * lanes
    assert short_kept_rows([Loop(1000, (two, two)), Loop(two, (1, 1))], item) == "vector"
    assert short_kept_rows([Loop(1000, (3, 0)), Loop(3, (1, 1))], item) == ""
    wide = max(4 * lanes, 16) + 1
    assert short_kept_rows([Loop(1000, (wide, wide)), Loop(wide, (1, 1))], item) == ""
    einplan.set_num_threads(1)
    i = 878387
    a = np.empty((i, 12), np.float32)
    b = np.empty((i, 1), np.float32)
    c = np.empty((i, 10), np.float32)[:, ::2]
    steps = plan_for("ia,ib,ic->abc", a, b, c).steps
    assert len(steps) == 2 and isinstance(steps[-1], GemmStep), steps
    scaled = steps[0]
    assert isinstance(scaled, NestStep) and [lp.extent for lp in scaled.loops] == [i, 5]
    assert nest_seconds(scaled, np.float32) < i * 12e-9
    rng = np.random.default_rng(8)
    a = rng.standard_normal((3000, 12)).astype(np.float32)
    b = rng.standard_normal((3000, 1)).astype(np.float32)
    c = rng.standard_normal((3000, 10)).astype(np.float32)[:, ::2]
    np.testing.assert_allclose(einplan.einsum("ia,ib,ic->abc", a, b, c),
                               np.einsum("ia,ib,ic->abc", a, b, c, optimize=True),
                               rtol=1e-4, atol=1e-3)
