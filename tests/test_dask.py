"""einplan.dask: dask.array einsum with every block run by einplan, on the local
schedulers and on a dask.distributed LocalCluster (2 worker processes, loopback)."""
import numpy as np
import pytest

da = pytest.importorskip("dask.array", reason="dask[array] is not installed")

import einplan.dask as ed  # noqa: E402
from dask.array.core import einsum_lookup  # noqa: E402

RNG = np.random.default_rng(42)

# (subscripts, [(shape, chunks), ...]) -- chunked and single-chunk contracted indices,
# transposed outputs, batch indices, ellipsis, 3 operands, scalar output, outer product
CASES = [
    ("ik,kj->ij", [((30, 24), (10, 8)), ((24, 18), (8, 9))]),
    ("ik,kj->ij", [((30, 24), (10, -1)), ((24, 18), (-1, 9))]),
    ("ik,kj->ji", [((17, 13), (5, 4)), ((13, 11), (4, 6))]),
    ("bik,bkj->bij", [((4, 9, 7), (2, 5, 3)), ((4, 7, 6), (2, 3, 4))]),
    ("abcd,dbef->aecf", [((3, 4, 5, 6), (2, 2, 5, 3)), ((6, 4, 3, 2), (3, 2, 3, 1))]),
    ("...ik,...kj->...ij", [((2, 3, 5, 4), (1, 2, 3, 2)), ((3, 4, 6), (2, 2, 3))]),
    ("ij,jk,kl->il", [((12, 10), (5, 5)), ((10, 8), (5, 4)), ((8, 6), (4, 3))]),
    ("i,i->", [((25,), (7,)), ((25,), (7,))]),
    ("i,j->ij", [((9,), (4,)), ((7,), (3,))]),
    ("iij->j", [((6, 6, 5), (3, 3, 2))]),
    ("ij->ji", [((7, 5), (3, 2))]),
]


def _make(case, dtype=np.float64):
    subs, specs = case
    arrays = [RNG.standard_normal(shape).astype(dtype) for shape, _ in specs]
    darrays = [da.from_array(a, chunks=c) for a, (_, c) in zip(arrays, specs)]
    return subs, arrays, darrays


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_einsum_matches_numpy(case):
    subs, arrays, darrays = _make(case)
    want = np.einsum(subs, *arrays)
    res = ed.einsum(subs, *darrays)
    assert isinstance(res, da.Array)
    assert res.shape == want.shape and res.dtype == want.dtype
    got = res.compute(scheduler="sync")
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    # same graph shape as dask's own einsum
    assert res.chunks == da.einsum(subs, *darrays).chunks


def test_einsum_dtype_interleaved_and_float32():
    a = RNG.standard_normal((8, 6)).astype(np.float32)
    b = RNG.standard_normal((6, 5)).astype(np.float32)
    A, B = da.from_array(a, chunks=3), da.from_array(b, chunks=3)
    got = ed.einsum(A, [0, 1], B, [1, 2], [0, 2])
    assert got.dtype == np.float32
    np.testing.assert_allclose(got.compute(scheduler="sync"), a @ b, rtol=1e-5, atol=1e-5)
    got = ed.einsum("ij,jk->ik", A, B, dtype=np.float64)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got.compute(scheduler="sync"),
                               a.astype(np.float64) @ b, rtol=1e-12)


def test_every_block_runs_on_einplan(monkeypatch):
    calls = []
    real = ed._einplan_einsum
    monkeypatch.setattr(ed, "_einplan_einsum",
                        lambda *a, **k: calls.append(a[1].shape) or real(*a, **k))
    subs, arrays, darrays = _make(CASES[0])      # 3 x 2 output blocks, 3 k-chunks
    got = ed.einsum(subs, *darrays).compute(scheduler="sync")
    np.testing.assert_allclose(got, np.einsum(subs, *arrays), rtol=1e-12, atol=1e-12)
    # (dask also calls the block function once on empty arrays to infer meta)
    assert [s for s in calls if 0 not in s] == [(10, 8)] * (3 * 2 * 3)


def _unaligned(shape):
    n = int(np.prod(shape))
    buf = np.zeros(n * 8 + 1, np.uint8)
    a = np.frombuffer(buf.data, dtype=np.float64, count=n, offset=1).reshape(shape)
    a[...] = RNG.standard_normal(shape)   # frombuffer of a writeable buffer: writeable
    assert not a.flags.aligned
    return a


def test_unaligned_blocks_are_realigned(monkeypatch):
    """distributed hands over blocks deserialized in place, possibly unaligned;
    einplan would send them to its numpy fallback, so they are copied aligned."""
    seen = []
    real = ed._einplan_einsum
    monkeypatch.setattr(ed, "_einplan_einsum",
                        lambda *a, **k: seen.extend(x.flags.aligned for x in a[1:])
                        or real(*a, **k))
    a, b = _unaligned((5, 4)), _unaligned((4, 3))
    got = ed.chunk_einsum(a, b, subscripts="ik,kj->ij", ncontract_inds=1,
                          kernel_dtype=None, optimize=True)
    np.testing.assert_allclose(got[..., 0], a @ b, rtol=1e-12)
    got = ed._dispatch_einsum("ik,kj->ij", a, b)
    np.testing.assert_allclose(got, a @ b, rtol=1e-12)
    assert seen == [True] * 4


def test_use_einplan_context(monkeypatch):
    calls = []
    real = ed._einplan_einsum
    monkeypatch.setattr(ed, "_einplan_einsum",
                        lambda *a, **k: calls.append(k.get("optimize")) or real(*a, **k))
    before = einsum_lookup.dispatch(np.ndarray)
    subs, arrays, darrays = _make(CASES[6])
    with ed.use_einplan():
        got = da.einsum(subs, *darrays).compute(scheduler="threads")
        with ed.use_einplan():          # nested: still registered afterwards
            pass
        assert einsum_lookup.dispatch(np.ndarray) is ed._dispatch_einsum
    np.testing.assert_allclose(got, np.einsum(subs, *arrays), rtol=1e-12, atol=1e-12)
    assert calls and all(c is None for c in calls)   # dask's optimize=False: left out
    assert einsum_lookup.dispatch(np.ndarray) is before
    calls.clear()
    da.einsum(subs, *darrays).compute(scheduler="sync")
    assert calls == []


def test_register_unregister_idempotent():
    before = einsum_lookup.dispatch(np.ndarray)
    ed.register()
    ed.register()
    assert einsum_lookup.dispatch(np.ndarray) is ed._dispatch_einsum
    ed.unregister()
    assert einsum_lookup.dispatch(np.ndarray) is before
    ed.unregister()
    assert einsum_lookup.dispatch(np.ndarray) is before


# ------------------------------------------------------------ dask.distributed

@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed",
                                      reason="dask.distributed is not installed")
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
        dashboard_address=":0", silence_logs=40)
    c = distributed.Client(cluster)
    try:
        yield c
    finally:
        c.close()
        cluster.close()


def _worker_plan_count():
    from einplan import planner as p
    return len(p._cache)


def _worker_clear():
    from einplan import planner as p
    p.clear_cache()


def _worker_state():
    import numpy as _np
    from dask.array.core import einsum_lookup as lookup

    import einplan as _e
    import einplan.dask as _ed
    return _e.get_num_threads(), lookup.dispatch(_np.ndarray) is _ed._dispatch_einsum


def test_distributed_matches_numpy(client):
    for case in (CASES[0], CASES[4], CASES[6], CASES[7]):
        subs, arrays, darrays = _make(case)
        got = client.compute(ed.einsum(subs, *darrays)).result()
        np.testing.assert_allclose(got, np.einsum(subs, *arrays), rtol=1e-12, atol=1e-12)


def test_distributed_plans_once_per_block_shape(client):
    """A 4 x 4 grid of equal 16 x 16 output blocks, 2 chunks along k: 32 block
    products of one shape and layout -> one plan per worker, not one per block.
    (A plan is keyed on strides too: blocks sliced from a source array and
    blocks that arrived contiguous from another worker are two layouts, hence
    the map_blocks(np.ascontiguousarray) here to make the count exact.)"""
    a = RNG.standard_normal((64, 40))
    b = RNG.standard_normal((40, 64))
    A = da.from_array(a, chunks=(16, 20)).map_blocks(np.ascontiguousarray)
    B = da.from_array(b, chunks=(20, 16)).map_blocks(np.ascontiguousarray)
    client.run(_worker_clear)
    got = client.compute(ed.einsum("ik,kj->ij", A, B)).result()
    np.testing.assert_allclose(got, a @ b, rtol=1e-12, atol=1e-12)
    counts = client.run(_worker_plan_count)
    assert len(counts) == 2 and all(n <= 1 for n in counts.values()), counts
    assert sum(counts.values()) >= 1


def test_distributed_workers_single_threaded(client):
    """distributed's nanny sets OMP_NUM_THREADS=1 in each worker process; einplan
    follows it, so 2 workers x 1 thread do not oversubscribe 2 cores."""
    states = client.run(_worker_state)
    assert all(threads == 1 for threads, _ in states.values()), states


def test_distributed_register_on_workers(client):
    subs, arrays, darrays = _make(CASES[3])
    ed.register_on_workers(client)
    try:
        assert all(reg for _, reg in client.run(_worker_state).values())
        got = client.compute(da.einsum(subs, *darrays)).result()
        np.testing.assert_allclose(got, np.einsum(subs, *arrays), rtol=1e-12, atol=1e-12)
    finally:
        client.unregister_worker_plugin("einplan-einsum")
    assert not any(reg for _, reg in client.run(_worker_state).values())
