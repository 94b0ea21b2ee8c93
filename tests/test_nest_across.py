"""The across kernel (ep_nest.c's ep_across): many small blocks of the
innermost loops run across the loop outside them a chunk at a time, each
input's blocks copied into rows, a row call per iteration of the block.
Every kernel set, every dtype, against numpy.einsum."""
import numpy as np
import pytest

import einplan
from einplan import _native, nest
from einplan.operands import describe_operands
from einplan.plan import NestStep
from einplan.planner import make_plan
from einplan.spec import parse_spec

DTYPES = ["float32", "float64", "complex64", "complex128"]


def _rand(rng, shape, dtype):
    x = rng.standard_normal(shape)
    if dtype.startswith("complex"):
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def _tol(dtype):
    return dict(rtol=2e-5, atol=2e-5) if dtype in ("float32", "complex64") else dict(rtol=1e-12)


def _loops(subs, ops, out, order):
    """(extent, element strides of each input, then the output) per label of
    ``order``, outer to inner, for ``subs`` over ``ops`` into ``out``."""
    ins, res = subs.split("->")
    terms = ins.split(",")
    loops = []
    for c in order:
        ext = next(o.shape[t.index(c)] for t, o in zip(terms, ops) if c in t)
        st = [o.strides[t.index(c)] // o.itemsize if c in t else 0 for t, o in zip(terms, ops)]
        st.append(out.strides[res.index(c)] // out.itemsize if c in res else 0)
        loops.append((ext, *st))
    return loops


# (subscripts, shapes, loop order, a view of each input): blocks whose
# output lies end to end (copied back), is written in place at a stride,
# summed across the loop, with an input constant along it, an input read in
# place (unit stride along it), a sparse span read in place, reversed
CASES = [
    ("nij,nj->ni", [(1000, 3, 3), (1000, 3)], "nij", None),
    ("nij,nji->nij", [(777, 3, 3), (777, 3, 3)], "nij", None),
    ("nij,nji->n", [(1031, 3, 3), (1031, 3, 3)], "nij", None),
    ("nij,nji->", [(999, 3, 3), (999, 3, 3)], "nij", None),
    ("nij,ij->ni", [(600, 2, 5), (2, 5)], "nij", None),
    ("nij,jn->ni", [(700, 4, 3), (3, 700)], "nij", None),
    ("nij,nj->ni", [(900, 3, 60), (900, 3)], "nij", lambda a: a[:, :, ::20]),
    ("nij,nji->nij", [(800, 3, 3), (800, 3, 3)], "nij", lambda a: a[::-1]),
    ("mnij,nj->mni", [(3, 600, 2, 3), (600, 3)], "mnij", None),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", range(len(CASES)))
def test_across_kernel_matches_numpy(isa, dtype, case, one_thread):
    subs, shapes, order, view = CASES[case]
    rng = np.random.default_rng(case)
    ops = [_rand(rng, s, dtype) for s in shapes]
    if view is not None:
        ops[0] = view(ops[0])
    want = np.einsum(subs, *ops)
    out = np.full(want.shape, np.nan, dtype)
    block = len(subs.split("->")[0].split(",")[0]) - 1 - (order.index("n"))
    loops = _loops(subs, ops, out, order)
    call = _native.prepare_nest(dtype, len(ops), loops, across=block)
    if out.ndim == 0:
        out = np.zeros((), dtype)
    call(tuple(ops), out)
    np.testing.assert_allclose(out, want, **_tol(dtype))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_across_kernel_threads_share_the_loop_it_runs(dtype, restore_threads):
    """Two threads share the loop out (an output summed along it into
    private partials, one varying along it written apart), a chunk's tail
    left over."""
    rng = np.random.default_rng(7)
    a, b = _rand(rng, (2051, 3, 3), dtype), _rand(rng, (2051, 3), dtype)
    einplan.set_num_threads(2)
    for subs in ("nij,nj->ni", "nij,nj->i", "nij,nj->"):
        want = np.einsum(subs, a, b)
        out = np.zeros(want.shape, dtype)
        loops = _loops(subs, (a, b), out, "nij")
        call = _native.prepare_nest(dtype, 2, loops, split=0, threads=2, across=2)
        call((a, b), out)
        np.testing.assert_allclose(out, want, **_tol(dtype))


def test_the_planner_runs_many_small_blocks_across_their_loop(use_isa):
    """'nij,nj->ni' over 3 x 3 matrices: the rows kernels would run a call
    of 3 rows of 3 per matrix (33 ms for a million, numpy 16); the across
    kernel runs the block of 'ij' across 'n' (13 ms), and explain says so
    (200000 matrices, past L2: 1.0 ms, numpy 3.1).  A block of one loop
    (rows end to end) and a short loop outside it keep the rows kernels.
    (Narrower kernel sets hold rows of 3 as the small-edge kernel's dots,
    which it tries first.)"""
    rng = np.random.default_rng(3)
    R, v = rng.standard_normal((200000, 3, 3)), rng.standard_normal((200000, 3))
    spec, arrays = parse_spec(("nij,nj->ni", R, v))
    if "avx512" in _native.available_isas():
        use_isa("avx512")
    (st,) = make_plan(spec, describe_operands(arrays)).steps
    if _native.isa() != "avx512":
        assert isinstance(st, NestStep) and (st.short or st.across), st
        return
    assert isinstance(st, NestStep) and st.row == "across" and st.across == 2, st
    text = str(einplan.explain("nij,nj->ni", R, v))
    assert "run across 'n' a chunk at a time" in text, text
    np.testing.assert_allclose(einplan.einsum("nij,nj->ni", R, v), np.einsum("nij,nj->ni", R, v))
    for subs, ops in (("nij,nij->n", (R, R)), ("nij,nj->ni", (R[:100], v[:100]))):
        spec, arrays = parse_spec((subs,) + ops)
        (st,) = make_plan(spec, describe_operands(arrays)).steps
        assert not st.across, (subs, st)
    assert nest.across_block(st.loops, 8) == 0
