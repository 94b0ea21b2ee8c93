"""patch_numpy / restore_numpy / patched(): routing, fallbacks, reversibility."""
import threading

import numpy as np
import pytest

import einplan
from einplan import patching

ROUTED = patching.ROUTED


@pytest.fixture(autouse=True)
def _clean():
    originals = {n: getattr(np, n) for n in ROUTED}
    patching.reset_fallback_counts()
    yield
    einplan.restore_numpy()
    for n in ROUTED:
        assert getattr(np, n) is originals[n], f"numpy.{n} not restored"


def _originals():
    return {n: getattr(np, n) for n in ROUTED}


def test_patch_and_restore_put_back_the_same_objects():
    before = _originals()
    einplan.patch_numpy()
    assert einplan.patching.is_patched()
    for n in ROUTED:
        assert getattr(np, n) is not before[n]
        assert getattr(np, n).__wrapped__ is before[n]
        assert patching.original(n) is before[n]
    einplan.restore_numpy()
    assert not einplan.patching.is_patched()
    for n in ROUTED:
        assert getattr(np, n) is before[n]


def test_patch_is_idempotent():
    before = _originals()
    einplan.patch_numpy()
    first = _originals()
    einplan.patch_numpy()
    assert _originals() == first
    einplan.restore_numpy()
    einplan.restore_numpy()
    assert _originals() == before


def test_patched_blocks_nest_and_patch_numpy_outlives_them():
    before = _originals()
    with einplan.patched():
        inner_fns = _originals()
        with einplan.patched():
            assert _originals() == inner_fns
        assert _originals() == inner_fns      # the outer block still holds
    assert _originals() == before
    einplan.patch_numpy()
    with einplan.patched():
        pass
    assert einplan.patching.is_patched()       # patch_numpy's hold remains
    einplan.restore_numpy()
    assert _originals() == before


def test_routed_calls_run_einplan(monkeypatch):
    calls = []
    real = einplan.api.einsum

    def spy(*ops, **kw):
        calls.append(ops[0])
        return real(*ops, **kw)
    monkeypatch.setattr(einplan.api, "einsum", spy)
    rng = np.random.default_rng(0)
    a, b = rng.random((5, 6)), rng.random((6, 7))
    v = rng.random(6)
    with einplan.patched():
        results = {
            "einsum": np.einsum("ij,jk->ik", a, b),
            "dot": np.dot(a, b),
            "matmul": np.matmul(a, b),
            "tensordot": np.tensordot(a, b, axes=1),
            "inner": np.inner(a, v),
            "outer": np.outer(v, v),
            "vdot": np.vdot(v, v),
        }
    assert len(calls) == 1   # einsum itself; the frontends import api.einsum by name
    expect = {"einsum": a @ b, "dot": a @ b, "matmul": a @ b, "tensordot": a @ b,
              "inner": a @ v, "outer": v[:, None] * v[None, :], "vdot": (v * v).sum()}
    for name, r in results.items():
        np.testing.assert_allclose(r, expect[name], rtol=1e-12, err_msg=name)
    assert patching.fallback_counts() == {}


def test_frontends_go_through_einplan(monkeypatch):
    seen = []
    real = einplan.frontends.einsum
    monkeypatch.setattr(einplan.frontends, "einsum", lambda *o, **k: seen.append(o[0]) or
                        real(*o, **k))
    a = np.ones((3, 4))
    with einplan.patched():
        np.dot(a, a.T), np.matmul(a, a.T), np.tensordot(a, a, 2), np.inner(a, a)
        np.outer(a, a), np.vdot(a, a)
    assert len(seen) == 6


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")
@pytest.mark.parametrize("call, reason", [
    (lambda: np.dot(np.asmatrix(np.ones((2, 2))), np.ones((2, 2))),
     ("dot", "operand of type numpy.matrix")),
    (lambda: np.einsum("ij,jk", np.ma.ones((2, 2)), np.ones((2, 2))),
     ("einsum", "operand of type numpy.ma.MaskedArray")),
    (lambda: np.einsum("i,i", np.ones(3, dtype=object), np.ones(3, dtype=object)),
     ("einsum", "object array")),
    (lambda: np.matmul(np.ones((2, 2)), np.ones((2, 2)), dtype=np.float32),
     ("matmul", "keyword dtype=")),
    (lambda: np.matmul(np.ones((2, 2)), np.ones((2, 2)), out=(np.empty((2, 2)),)),
     ("matmul", "out= of type tuple")),
])
def test_unsupported_calls_go_to_numpy_counted(call, reason):
    expected = call()   # unpatched
    with einplan.patched():
        got = call()
    assert type(got) is type(expected)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(expected))
    assert patching.fallback_counts() == {reason: 1}


def test_array_function_objects_keep_their_dispatch():
    class Duck:
        def __array_function__(self, func, types, args, kwargs):
            return ("dispatched", func.__name__)
    with einplan.patched():
        assert np.einsum("i,i", Duck(), Duck()) == ("dispatched", "einsum")
        assert np.dot(Duck(), Duck()) == ("dispatched", "dot")
    assert sum(patching.fallback_counts().values()) == 2


def test_matmul_keeps_the_ufunc_attributes_and_the_operator_is_untouched():
    a = np.arange(6.0).reshape(2, 3)
    with einplan.patched():
        assert np.matmul.signature == "(n?,k),(k,m?)->(n?,m?)"
        assert np.matmul.nin == 2 and np.matmul.types
        np.testing.assert_array_equal(a @ a.T, np.matmul(a, a.T))
        out = np.empty((2, 2))
        assert np.matmul(a, a.T, out=out) is out
        assert np.dot(a, a.T, out) is out


def test_routed_functions_pickle_by_reference():
    import pickle
    with einplan.patched():
        for name in ROUTED:
            fn = getattr(np, name)
            assert pickle.loads(pickle.dumps(fn)) is fn, name


def test_errors_keep_numpys_classes():
    with einplan.patched():
        with pytest.raises(ValueError):
            np.dot(np.ones((2, 3)), np.ones((2, 3)))
        with pytest.raises(ValueError):
            np.einsum("ij,jk->ik", np.ones((2, 3)), np.ones((2, 3)))
        with pytest.raises(TypeError):
            np.einsum("ij->ij", np.ones((2, 2)), nonsense=1)
    assert patching.fallback_counts() == {("einsum", "keyword nonsense="): 1}


def test_numpy_itself_works_under_the_patch():
    rng = np.random.default_rng(1)
    a = rng.random((6, 6)) + 6 * np.eye(6)
    with einplan.patched():
        np.testing.assert_allclose(np.dot(np.linalg.inv(a), a), np.eye(6), atol=1e-12)
        np.testing.assert_allclose(np.linalg.multi_dot([a, a, a]), a @ a @ a, rtol=1e-12)
        assert np.polynomial.polynomial.polyval(2.0, [1, 2, 3]) == 17.0
        np.testing.assert_allclose(np.cov(a), np.cov(a.copy()), rtol=1e-12)
        np.testing.assert_allclose(np.kron(a[:2, :2], a[:2, :2]).sum(), a[:2, :2].sum() ** 2)
        np.testing.assert_allclose(np.einsum_path("ij,jk,kl", a, a, a)[0][1:], [(0, 1), (0, 1)])


def test_einplan_fallbacks_do_not_recurse():
    # int8 reduction etc. fall back inside einplan to numpy.einsum: that call
    # must reach numpy, not come back into einplan
    a = np.arange(12, dtype=np.int8).reshape(3, 4)
    with einplan.patched():
        r = np.einsum("ij,ij->i", a, a, dtype=np.int64)
    np.testing.assert_array_equal(r, np.einsum("ij,ij->i", a, a, dtype=np.int64))


def test_threads_patch_and_restore_concurrently():
    before = _originals()
    a = np.ones((20, 20))
    errors = []

    def work():
        try:
            for _ in range(50):
                with einplan.patched():
                    np.testing.assert_allclose(np.dot(a, a), 20.0)
        except Exception as exc:   # noqa: BLE001 - reported below
            errors.append(exc)
    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert _originals() == before
