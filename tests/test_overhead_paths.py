"""The hot path of einplan.einsum (api._fast: (subscripts, shapes, strides,
dtypes, alignment) -> cached plan + prepared runner) against the slow path
and numpy.einsum (issue 5, "Overhead").

Each test clears the hot-path dict first, so the first call of a spec goes
the slow path (parse, describe, plan) and a repeated call hits the dict.
"""
import re
import warnings

import numpy as np
import pytest

import einplan
from einplan import _native, api
from _einsum_strategies import fill, run_in_threads  # noqa: E402


def _rand(rng, shape, dtype=np.float64):
    return fill(rng, shape, dtype)

K = _native._kernels
HAVE_OMP = K is not None and K.config()["build"].get("openmp", False)
needs_omp = pytest.mark.skipif(not HAVE_OMP, reason="built without OpenMP: always 1 thread")


@pytest.fixture(autouse=True)
def fresh_fast_dict():
    api._fast.clear()
    yield
    api._fast.clear()





def _same(res, ref):
    """Same value, type, dtype and shape as numpy.einsum's result."""
    assert type(res) is type(ref), (type(res), type(ref))
    assert np.shape(res) == np.shape(ref)
    assert np.result_type(res) == np.result_type(ref)
    if np.result_type(ref).kind in "iub":
        np.testing.assert_array_equal(res, ref)
    else:
        rt = np.result_type(ref)
        tol = 1e-2 if rt == np.float16 else 1e-4 if rt in (np.float32, np.complex64) else 1e-11
        np.testing.assert_allclose(res, ref, rtol=tol, atol=tol)


def _key(subs, *ops, out=None):
    return api._fast_key((subs, *ops), out)


SPECS = [
    ("ij,jk->ik", [(3, 3), (3, 3)]),
    ("ij,jk->ik", [(40, 30), (30, 20)]),
    ("ij,jk", [(5, 4), (4, 6)]),
    ("i,i->", [(8,), (8,)]),
    ("i,i", [(8,), (8,)]),
    ("ij,ij->", [(5, 6), (5, 6)]),
    ("bij,bjk->bik", [(8, 4, 4), (8, 4, 4)]),
    ("bij,jk->bik", [(2, 5, 16), (16, 24)]),
    ("ij->ji", [(4, 5)]),
    ("ii->i", [(5, 5)]),
    ("ij->", [(4, 5)]),
    ("i,j->ij", [(4,), (5,)]),
    ("ij,j->i", [(6, 5), (5,)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]),
    ("ij,jk,kl->il", [(3, 4), (4, 5), (5, 2)]),
    ("ijk,kj->i", [(3, 4, 5), (5, 4)]),
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.complex128, bool])
@pytest.mark.parametrize("subs,shapes", SPECS, ids=[s for s, _ in SPECS])
def test_repeated_calls_new_data(subs, shapes, dtype):
    rng = np.random.default_rng(len(subs))
    ops = [_rand(rng, s, dtype) for s in shapes]
    first = einplan.einsum(subs, *ops)                  # slow path, fills the dict
    _same(first, np.einsum(subs, *ops))
    key = _key(subs, *ops)
    assert key in api._fast
    plan_entry = api._fast[key]
    for _ in range(3):                                  # hot path, new data each time
        ops = [_rand(rng, s, dtype) for s in shapes]
        res = einplan.einsum(subs, *ops)
        _same(res, np.einsum(subs, *ops))
        assert api._fast[key] is plan_entry             # the same cached plan was used


def _restrided(a, how):
    """The values of ``a`` with another stride pattern (same shape)."""
    if a.ndim == 0:
        return a.copy()
    if how == "F":
        return np.asfortranarray(a)
    if how == "rev":
        return np.ascontiguousarray(a[::-1])[::-1]
    if how == "slice":
        big = np.zeros((a.shape[0] * 2,) + a.shape[1:], a.dtype)
        big[::2] = a
        return big[::2]
    if how == "T-mem":
        return np.ascontiguousarray(a.T).T
    raise ValueError(how)


@pytest.mark.parametrize("how", ["F", "rev", "slice", "T-mem"])
@pytest.mark.parametrize("subs,shapes", SPECS, ids=[s for s, _ in SPECS])
def test_different_strides_do_not_reuse_the_plan(subs, shapes, how):
    rng = np.random.default_rng(3)
    ops = [_rand(rng, s) for s in shapes]
    ref = np.einsum(subs, *ops)
    _same(einplan.einsum(subs, *ops), ref)
    _same(einplan.einsum(subs, *ops), ref)              # hot
    other = [_restrided(a, how) for a in ops]
    for a, b in zip(ops, other):
        np.testing.assert_array_equal(a, b)
    for _ in range(2):                                  # slow, then hot, for the new strides
        _same(einplan.einsum(subs, *other), ref)
    mixed = [other[0]] + ops[1:]
    _same(einplan.einsum(subs, *mixed), ref)
    _same(einplan.einsum(subs, *ops), ref)              # the first layout still right


def test_broadcast_and_unaligned_operands_on_the_hot_path():
    rng = np.random.default_rng(4)
    a, b = _rand(rng, (6, 5)), _rand(rng, (5, 7))
    raw = np.zeros(a.nbytes + 1, np.uint8)
    ua = raw[1:].view(np.float64).reshape(a.shape)
    ua[...] = a
    assert not ua.flags.aligned
    ba = np.broadcast_to(a[:1], a.shape)
    for _ in range(2):
        _same(einplan.einsum("ij,jk->ik", a, b), np.einsum("ij,jk->ik", a, b))
        _same(einplan.einsum("ij,jk->ik", ua, b), np.einsum("ij,jk->ik", a, b))
        _same(einplan.einsum("ij,jk->ik", ba, b), np.einsum("ij,jk->ik", ba, b))


def test_byteswapped_dtype_is_a_different_key():
    rng = np.random.default_rng(5)
    a, b = _rand(rng, (4, 5)), _rand(rng, (5, 3))
    sa = a.astype(a.dtype.newbyteorder())
    for _ in range(2):
        _same(einplan.einsum("ij,jk->ik", a, b), np.einsum("ij,jk->ik", a, b))
        _same(einplan.einsum("ij,jk->ik", sa, b), np.einsum("ij,jk->ik", sa, b))


class _Sub(np.ndarray):
    pass


def _matrices(a, b):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PendingDeprecationWarning)
        return np.asmatrix(a), np.asmatrix(b)


def _subclass_inputs():
    rng = np.random.default_rng(6)
    a, b = _rand(rng, (3, 3)), _rand(rng, (3, 3))
    m = np.ma.array(a, mask=np.eye(3, dtype=bool))
    return [
        ("matrix", *_matrices(a, b)),
        ("masked", m, np.ma.array(b)),
        ("masked-nomask", np.ma.array(a), b),
        ("ndarray-subclass", a.view(_Sub), b.view(_Sub)),
        ("memmap-like", a.view(_Sub), b),
    ]


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")
@pytest.mark.parametrize("subs", ["ij,jk->ik", "ij,jk", "ij,ij->", "ij,ij->ij", "ij,jk->ki"])
@pytest.mark.parametrize("name,a,b", _subclass_inputs(), ids=lambda x: x if isinstance(x, str) else "")
def test_subclass_inputs_take_the_slow_path(name, a, b, subs):
    # warm the dict with plain arrays of the same shapes and strides
    pa, pb = np.asarray(a), np.asarray(b)
    einplan.einsum(subs, pa, pb)
    assert _key(subs, a, b) is None                     # never looked up in the dict
    n_before = len(api._fast)
    for _ in range(2):
        res = einplan.einsum(subs, a, b)
        ref = np.einsum(subs, a, b)
        assert type(res) is type(ref), (type(res), type(ref))
        assert np.result_type(res) == np.result_type(ref)
        np.testing.assert_allclose(np.asarray(res), np.asarray(ref), rtol=1e-12, atol=1e-12)
    assert len(api._fast) == n_before                   # and never stored


@pytest.mark.parametrize("subs,ops", [
    ("ij,jk->ik", ([[1, 2], [3, 4]], [[5, 6], [7, 8]])),
    ("ij,jk->ik", ([[1.5, 2], [3, 4]], [[5, 6], [7, 8]])),
    ("i,i->", ([1, 2, 3], [4, 5, 6])),
    ("i,i->", ([1.0, 2, 3], [4, 5, 6])),
    ("i,j->ij", ([True, False], [1, 2])),
    ("ij->", ([[1, 2], [3, 4]],)),
    ("->", (3.5,)),
    ("i->", ([1 + 2j, 3],)),
])
def test_lists_and_scalars_as_operands(subs, ops):
    assert _key(subs, *ops) is None
    for _ in range(2):
        _same(einplan.einsum(subs, *ops), np.einsum(subs, *ops))
    # mixed: list + ndarray
    arrs = [np.asarray(o) for o in ops]
    for _ in range(2):
        _same(einplan.einsum(subs, *arrs), np.einsum(subs, *arrs))
    if len(ops) == 2:
        _same(einplan.einsum(subs, arrs[0], ops[1]), np.einsum(subs, arrs[0], ops[1]))


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.complex128, bool, np.float16])
@pytest.mark.parametrize("subs,shapes", [
    ("i,i->", [(8,), (8,)]),
    ("i,i", [(8,), (8,)]),
    ("ij,ij->", [(3, 3), (3, 3)]),
    ("ij,ji", [(4, 3), (3, 4)]),
    ("ij->", [(3, 4)]),
    ("ii", [(4, 4)]),
    ("->", [()]),
    (",->", [(), ()]),
    ("i,i->", [(0,), (0,)]),
    ("ij,jk->", [(3, 64), (64, 40)]),
])
def test_zero_d_results_are_numpy_scalars(subs, shapes, dtype):
    rng = np.random.default_rng(7)
    for _ in range(3):                                  # slow, hot, hot
        ops = [_rand(rng, s, dtype) for s in shapes]
        res = einplan.einsum(subs, *ops)
        ref = np.einsum(subs, *ops)
        assert not isinstance(ref, np.ndarray)          # numpy's contract
        _same(res, ref)
    # out= on a 0-d result returns the out array, as numpy does
    ops = [_rand(rng, s, dtype) for s in shapes]
    out = np.empty((), np.result_type(np.einsum(subs, *ops)))
    assert einplan.einsum(subs, *ops, out=out) is out
    _same(out[()], np.einsum(subs, *ops))


@pytest.mark.parametrize("subs,shapes", [
    ("ij,jk->ik", [(3, 3), (3, 3)]),
    ("ij,jk->ik", [(50, 40), (40, 30)]),
    ("bij,bjk->bik", [(8, 4, 4), (8, 4, 4)]),
    ("i,j->ij", [(4,), (5,)]),
    ("ij,ij->ij", [(4, 5), (4, 5)]),
    ("ijk->ikj", [(2, 3, 4)]),          # a copy, not a view, in numpy? compare below
    ("ij->i", [(4, 5)]),
    ("ij,jk,kl->il", [(3, 4), (4, 5), (5, 2)]),
])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.complex128])
def test_fresh_writeable_outputs(subs, shapes, dtype):
    rng = np.random.default_rng(8)
    ops = [_rand(rng, s, dtype) for s in shapes]
    ref = np.einsum(subs, *ops)
    results = [einplan.einsum(subs, *ops) for _ in range(3)]   # slow, hot, hot
    for r in results:
        _same(r, ref)
        views_input = any(np.shares_memory(r, o) for o in ops)
        ref_views = any(np.shares_memory(ref, o) for o in ops)
        assert views_input == ref_views
        if not views_input:
            assert r.flags.writeable and r.flags.owndata or r.base is not None
            assert r.flags.writeable
    for i in range(len(results)):
        for j in range(i + 1, len(results)):
            assert results[i] is not results[j]
            if not any(np.shares_memory(results[i], o) for o in ops):
                assert not np.shares_memory(results[i], results[j])
    # writing into one result does not change the next one
    r0 = results[0]
    if r0.flags.writeable and not any(np.shares_memory(r0, o) for o in ops):
        r0[...] = 0
        _same(einplan.einsum(subs, *ops), ref)


@pytest.mark.parametrize("subs,shape", [("ii->i", (5, 5)), ("ij->ji", (4, 5)), ("ij->ij", (3, 3))])
def test_view_results_follow_numpy_on_the_hot_path(subs, shape):
    """numpy returns these as views, writeable exactly when the input is; the
    hot path must not freeze the writeable flag of the first call."""
    a = np.arange(np.prod(shape), dtype=float).reshape(shape)
    ro = a.copy()
    ro.flags.writeable = False
    for op in (a, ro, a, ro):
        res, ref = einplan.einsum(subs, op), np.einsum(subs, op)
        _same(res, ref)
        assert np.shares_memory(res, op) == np.shares_memory(ref, op)
        assert res.flags.writeable == ref.flags.writeable


def test_options_bypass_the_dict_and_out_is_keyed_by_its_layout():
    rng = np.random.default_rng(9)
    a, b = _rand(rng, (6, 5)), _rand(rng, (5, 4))
    ref = np.einsum("ij,jk->ik", a, b)
    _same(einplan.einsum("ij,jk->ik", a, b), ref)
    _same(einplan.einsum("ij,jk->ik", a, b), ref)       # hot
    r = einplan.einsum("ij,jk->ik", a, b, dtype=np.float32, casting="same_kind")
    assert r.dtype == np.float32
    np.testing.assert_allclose(r, ref, rtol=1e-5)
    r = einplan.einsum("ij,jk->ik", a, b, order="F")
    assert r.flags.f_contiguous
    np.testing.assert_allclose(r, ref, rtol=1e-12)
    r = einplan.einsum("ij,jk->ik", a, b, optimize=False)
    np.testing.assert_allclose(r, ref, rtol=1e-12)
    for order in "CF":
        out = np.full((6, 4), np.nan, order=order)
        assert einplan.einsum("ij,jk->ik", a, b, out=out) is out
        np.testing.assert_allclose(out, ref, rtol=1e-12)
    out = np.empty((6, 4), np.complex128)
    assert einplan.einsum("ij,jk->ik", a, b, out=out) is out
    np.testing.assert_allclose(out, ref, rtol=1e-12)
    # and the hot path is still right afterwards
    _same(einplan.einsum("ij,jk->ik", a, b), ref)
    with pytest.raises(ValueError):
        einplan.einsum("ij,jk->ik", a, b, out=np.empty((6, 5)))


def test_errors_on_the_hot_path_like_the_slow_path():
    rng = np.random.default_rng(10)
    a, b = _rand(rng, (6, 5)), _rand(rng, (5, 4))
    einplan.einsum("ij,jk->ik", a, b)
    einplan.einsum("ij,jk->ik", a, b)
    with pytest.raises(ValueError):
        einplan.einsum("ij,jk->ik", a, _rand(rng, (4, 4)))
    with pytest.raises(ValueError):
        einplan.einsum("ij,jk->ik", a)


def test_dict_clearing_when_full(monkeypatch):
    monkeypatch.setattr(api, "_FAST_MAX", 4)
    rng = np.random.default_rng(11)
    cases = []
    for n in range(2, 12):
        a, b = _rand(rng, (n, 3)), _rand(rng, (3, n + 1))
        cases.append((a, b, np.einsum("ij,jk->ik", a, b)))
    for _ in range(2):
        for a, b, ref in cases:
            _same(einplan.einsum("ij,jk->ik", a, b), ref)
            assert len(api._fast) <= 4


def _counting_reference(calls):
    def gemm(*args, **kw):
        calls.append(1)
        return _native.gemm_reference(*args, **kw)
    return gemm


@pytest.mark.parametrize("subs,shapes,dtype", [
    ("ij,jk->ik", [(3, 3), (3, 3)], np.float64),
    ("ij,jk->ik", [(30, 20), (20, 10)], np.float32),
    ("bij,bjk->bik", [(8, 4, 4), (8, 4, 4)], np.float64),
    ("bij,jk->bik", [(2, 5, 16), (16, 24)], np.float64),
    ("ij,jk->ki", [(5, 4), (4, 6)], np.float64),
    ("i,i->", [(8,), (8,)], np.float64),
    ("ij,jk,kl->il", [(3, 4), (4, 5), (5, 2)], np.float64),
    ("ij,jk->ik", [(5, 4), (4, 6)], np.complex128),
])
def test_reference_gemm_swapped_in(subs, shapes, dtype):
    """With a reference GEMM set (_native.set_reference_gemm), the slow path
    and the hot path both route through it and give right answers."""
    rng = np.random.default_rng(12)
    ops = [_rand(rng, s, dtype) for s in shapes]
    ref = np.einsum(subs, *ops)
    # a plan cached before the swap must not keep running the compiled kernel
    _same(einplan.einsum(subs, *ops), ref)
    calls = []
    previous = _native.set_reference_gemm(_counting_reference(calls))
    try:
        for _ in range(3):
            ops = [_rand(rng, s, dtype) for s in shapes]
            before = len(calls)
            _same(einplan.einsum(subs, *ops), np.einsum(subs, *ops))
            uses_gemm = any("gemm" in type(s).__name__.lower() for s in _plan_steps(subs, ops))
            if uses_gemm:
                assert len(calls) > before, "the hot path ran the compiled kernel, not the reference"
    finally:
        _native.set_reference_gemm(previous)
    _same(einplan.einsum(subs, *ops), np.einsum(subs, *ops))


def _plan_steps(subs, ops):
    entry = api._fast.get(_key(subs, *ops))
    if entry is None:
        return ()
    plan = entry[0]
    return () if plan.fallback is not None else plan.steps


def test_reference_gemm_swapped_in_before_first_call():
    calls = []
    previous = _native.set_reference_gemm(_counting_reference(calls))
    try:
        rng = np.random.default_rng(13)
        for _ in range(3):
            # m = 10, n = 9: past the nest's register tiles, a GEMM
            a, b = _rand(rng, (10, 16)), _rand(rng, (16, 9))
            _same(einplan.einsum("ij,jk->ik", a, b), np.einsum("ij,jk->ik", a, b))
    finally:
        _native.set_reference_gemm(previous)
    assert len(calls) >= 3


def test_hot_path_from_threads():
    rng = np.random.default_rng(14)
    cases = []
    for subs, shapes in SPECS:
        ops = [_rand(rng, s) for s in shapes]
        cases.append((subs, ops, np.einsum(subs, *ops)))
        cases.append((subs, [np.asfortranarray(o) for o in ops], np.einsum(subs, *ops)))
    def work(t):
        for rep in range(3 * len(cases)):
            subs, ops, ref = cases[(t * 7 + rep) % len(cases)]
            res = einplan.einsum(subs, *ops)
            np.testing.assert_allclose(res, ref, rtol=1e-11, atol=1e-11)
            if rep % 11 == 0:
                api._fast.clear()       # a concurrent clear (the dict filling up)

    run_in_threads(work)


# ------------------------------------------------------------ small problems and threads

TINY = [
    ("ij,jk->ik", [(3, 3), (3, 3)]),
    ("ij,jk->ik", [(8, 8), (8, 8)]),
    ("i,i->", [(8,), (8,)]),
    ("bij,bjk->bik", [(8, 4, 4), (8, 4, 4)]),
    ("bij,bjk->bik", [(64, 16, 16), (64, 16, 16)]),
    ("ij,j->i", [(16, 16), (16,)]),
    ("i,j->ij", [(16,), (16,)]),
]


@needs_omp
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_tiny_gemms_bitwise_equal_for_1_and_2_threads(dtype, restore_threads):
    rng = np.random.default_rng(15)
    for subs, shapes in TINY + [("ij,jk->ik", [(200, 150), (150, 120)])]:
        ops = [_rand(rng, s, dtype) for s in shapes]
        einplan.set_num_threads(1)
        r1 = [einplan.einsum(subs, *ops) for _ in range(2)]
        einplan.set_num_threads(2)
        r2 = [einplan.einsum(subs, *ops) for _ in range(2)]
        for r in r1[1:] + r2:
            assert np.array_equal(r, r1[0]), subs
        _same(r1[0], np.einsum(subs, *ops))


@needs_omp
def test_tiny_gemm_runs_on_one_thread(restore_threads):
    einplan.set_num_threads(2)
    a = np.ones((3, 3))
    text = str(einplan.explain("ij,jk->ik", a, a))
    kernel = [line for line in text.splitlines() if line.strip().startswith("kernel")]
    assert kernel, text
    m = re.search(r"(\d+) thread\(s\)", kernel[0])
    assert m and int(m.group(1)) == 1, kernel[0]


def test_strides_not_in_whole_elements_on_the_hot_path():
    rng = np.random.default_rng(16)
    rec = np.zeros((6, 5), dtype=[("a", "f8"), ("b", "f4")])
    rec["b"] = 7
    a = rec["a"]
    b = _rand(rng, (5, 4))
    for _ in range(3):
        a[...] = rng.standard_normal(a.shape)
        _same(einplan.einsum("ij,jk->ik", a, b), np.einsum("ij,jk->ik", a, b))
        _same(einplan.einsum("ij,ij->", a, a), np.einsum("ij,ij->", a, a))
        _same(einplan.einsum("ij->ji", a), np.einsum("ij->ji", a))
    assert np.all(rec["b"] == 7)


# ---------------------------------------------------------------- out= on the hot path
OUT_SPECS = [
    ("ij,jk->ik", [(6, 5), (5, 4)]),
    ("bij,bjk->bik", [(50, 16, 16), (50, 16, 16)]),
    ("ij->ji", [(4, 5)]),
    ("ij->i", [(4, 5)]),
    ("ij,jk,kl->il", [(3, 4), (4, 5), (5, 2)]),
]


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128, np.int64])
@pytest.mark.parametrize("subs,shapes", OUT_SPECS, ids=[s for s, _ in OUT_SPECS])
def test_out_hot_path_new_data_and_layouts(subs, shapes, dtype, order):
    rng = np.random.default_rng(20)
    for _ in range(3):                                  # slow, hot, hot
        ops = [_rand(rng, s, dtype) for s in shapes]
        ref = np.einsum(subs, *ops)
        out = np.full(ref.shape, 7, dtype, order=order)
        assert einplan.einsum(subs, *ops, out=out) is out
        _same(out, ref)
    assert _key(subs, *ops, out=out) in api._fast
    # a read-only out= of the same layout is refused every time, hot or not
    ro = np.empty_like(out)
    ro.flags.writeable = False
    assert _key(subs, *ops, out=ro) != _key(subs, *ops, out=out)
    for _ in range(2):
        with pytest.raises(ValueError, match="read-only"):
            einplan.einsum(subs, *ops, out=ro)


def test_out_overlapping_an_operand_on_the_hot_path():
    rng = np.random.default_rng(21)
    for _ in range(3):                                  # slow, hot, hot
        a, b = _rand(rng, (5, 5)), _rand(rng, (5, 5))
        ref = a @ b
        res = einplan.einsum("ij,jk->ik", a, b, out=a)  # out is an operand
        assert res is a
        np.testing.assert_allclose(a, ref, rtol=1e-12)
    for _ in range(3):                                  # out a view inside b
        big = _rand(rng, (10, 5))
        a, b = _rand(rng, (5, 5)), big[:5]
        ref = a @ b
        out = big[5:]                                   # disjoint: in place
        assert einplan.einsum("ij,jk->ik", a, b, out=out) is out
        np.testing.assert_allclose(out, ref, rtol=1e-12)
        np.testing.assert_allclose(big[5:], ref, rtol=1e-12)


def test_out_key_matches_the_python_key_on_what_qualifies():
    rng = np.random.default_rng(22)
    a = _rand(rng, (4, 5))
    cases = [
        (("ij->ji", a), None),
        (("ij->ji", a), np.empty((5, 4))),
        (("ij->ji", a), np.empty((5, 4)).view(_Sub)),
        (("ij->ji", a.view(_Sub)), None),
        (("ij->ji", a), [[0.0] * 4] * 5),
        ((["i", "j"], a), None),
        (("ij->ji", a.astype("M8[s]")), None),
        (("ij->ji", a.astype("m8[ms]")), None),
        (("ij->ji", a.astype("U3")), None),
        (("ij->ji", np.zeros((4, 5), "i4,f8")), None),
    ]
    for ops, out in cases:
        fast = api._fast_key(ops, out)
        py = api._py_fast_key(ops, out)
        numeric = all(getattr(o, "dtype", np.dtype(object)).kind not in "MmUV"
                      for o in ops[1:])
        # the compiled key qualifies exactly the plain numeric calls the
        # Python one does (it also refuses datetimes, strings, structured)
        assert (fast is None) == (py is None or not numeric), (ops[0], out)


def test_keys_differ_for_every_layout_detail():
    rng = np.random.default_rng(23)
    a = _rand(rng, (6, 4))
    variants = [a, np.asfortranarray(a), a[::-1], a.astype(np.float32),
                a.astype(a.dtype.newbyteorder()), a.reshape(4, 6), a[:, :3],
                np.broadcast_to(a[:1], a.shape)]
    raw = np.zeros(a.nbytes + 1, np.uint8)
    ua = raw[1:].view(np.float64).reshape(a.shape)
    variants.append(ua)
    keys = [_key("ij->ji", v) for v in variants]
    assert len(set(keys)) == len(keys)
    assert _key("ij->ji", a) == _key("ij->ji", a.copy())   # data is not in the key


@pytest.mark.skipif(_native.may_overlap is None, reason="needs the compiled kernels")
def test_may_overlap_is_numpys_may_share_memory():
    rng = np.random.default_rng(24)
    base = np.arange(400.0).reshape(20, 20)
    views = [base, base[:5], base[5:], base[::2], base[1::2], base[:, :3], base[:, 17:],
             base[::-1], base[:, ::-1], base.T, base[3:4, 3:4], base[:0],
             np.arange(5.0), np.broadcast_to(base[0], (3, 20)), base.reshape(-1)[7:9]]
    for _ in range(200):
        x, y = (views[i] for i in rng.integers(0, len(views), 2))
        assert _native.may_overlap(x, y) == np.may_share_memory(x, y)


def test_non_default_options_have_their_own_hot_entry():
    """matmul(..., out=) passes casting='same_kind' every call: such calls are
    keyed with their options (they re-planned each time: ~16 us for 32x32),
    and a call with other options never takes their entry."""
    rng = np.random.default_rng(25)
    a, b = _rand(rng, (6, 5)), _rand(rng, (5, 4))
    out = np.empty((6, 4))
    for _ in range(2):
        assert einplan.matmul(a, b, out=out) is out
        np.testing.assert_allclose(out, a @ b, rtol=1e-12)
    key = _key("...ik,...kj->...ij", a, b, out=out) + (
        (None, "K", "same_kind", api.OPTIMIZE_OMITTED),)
    assert key in api._fast
    # same layout, other options: other entries, numpy's semantics each time
    out32 = np.empty((6, 4), np.float32)
    with pytest.raises(TypeError):
        einplan.einsum("ij,jk->ik", a, b, out=out32)                      # safe casting
    for _ in range(2):
        einplan.einsum("ij,jk->ik", a, b, out=out32, casting="same_kind")
        np.testing.assert_allclose(out32, a @ b, rtol=1e-5)
    for _ in range(2):
        r = einplan.einsum("ij,jk->ik", a, b, order="F")
        assert r.flags.f_contiguous
        r = einplan.einsum("ij,jk->ik", a, b, dtype=np.float32, casting="same_kind")
        assert r.dtype == np.float32
    # an explicit path list is not hashable: always the slow path, still right
    path = ["einsum_path", (0, 1)]
    for _ in range(2):
        _same(einplan.einsum("ij,jk->ik", a, b, optimize=path), np.einsum("ij,jk->ik", a, b))
