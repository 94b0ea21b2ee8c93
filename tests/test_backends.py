"""einplan as a backend: opt_einsum's backend= dispatch, and threadpoolctl limits
(the OpenMP limit in the calling thread; einplan's own controller process-wide)."""
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import einplan
from einplan import _native, backends

oe = pytest.importorskip("opt_einsum", reason="opt_einsum is not installed")
from opt_einsum.testing import build_views, rand_equation  # noqa: E402

K = _native._kernels
HAVE_OMP = K is not None and K.config()["build"].get("openmp", False)
needs_omp = pytest.mark.skipif(not HAVE_OMP, reason="built without OpenMP: always 1 thread")

BACKENDS = ["einplan", "einplan.backends"]


def _rand_case(seed, dtype=np.float64):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 7))
    eq, shapes = rand_equation(n, regularity=int(rng.integers(2, 4)),
                               n_out=int(rng.integers(0, 4)), d_min=2, d_max=5,
                               seed=seed, global_dim=bool(seed % 3 == 0))
    arrays = [rng.standard_normal(s).astype(dtype) for s in shapes]
    if np.issubdtype(dtype, np.complexfloating):
        arrays = [a + 1j * rng.standard_normal(a.shape) for a in arrays]
    return eq, shapes, arrays


def _tol(dtype):
    single = np.dtype(dtype) in (np.float32, np.complex64)
    return dict(rtol=1e-4, atol=1e-4) if single else dict(rtol=1e-10, atol=1e-10)


# ------------------------------------------------------------ opt_einsum

def test_backend_module_provides_numpy_signatures():
    a, b = np.arange(6.).reshape(2, 3), np.arange(12.).reshape(3, 4)
    np.testing.assert_allclose(backends.einsum("ij,jk->ik", a, b), a @ b)
    np.testing.assert_allclose(backends.tensordot(a, b, axes=((1,), (0,))), a @ b)
    np.testing.assert_allclose(backends.tensordot(a, b, axes=1), a @ b)
    t = backends.transpose(a, (1, 0))
    assert np.shares_memory(t, a) and t.shape == (3, 2)   # a view, never a copy
    assert backends.transpose(a).shape == (3, 2)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("seed", range(12))
def test_contract_random_equations(backend, seed):
    dtype = (np.float64, np.float32, np.complex128)[seed % 3]
    eq, _, arrays = _rand_case(seed, dtype)
    want = np.einsum(eq, *arrays, optimize=True)
    got = oe.contract(eq, *arrays, backend=backend)
    assert isinstance(got, np.ndarray) or np.isscalar(got)
    assert np.shape(got) == want.shape and np.result_type(got) == want.dtype
    np.testing.assert_allclose(got, want, **_tol(dtype))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("seed", range(100, 106))
def test_contract_expression_random_equations(backend, seed):
    eq, shapes, arrays = _rand_case(seed)
    want = np.einsum(eq, *arrays, optimize=True)
    expr = oe.contract_expression(eq, *shapes)
    np.testing.assert_allclose(expr(*arrays, backend=backend), want, rtol=1e-10, atol=1e-10)
    # the same expression again: einplan's plan cache is hit, same answer
    np.testing.assert_allclose(expr(*arrays, backend=backend), want, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("backend", BACKENDS)
def test_contract_expression_with_constants(backend):
    eq, shapes, arrays = _rand_case(7)
    want = np.einsum(eq, *arrays, optimize=True)
    const = [0, len(arrays) - 1]
    expr = oe.contract_expression(
        eq, *[arrays[i] if i in const else shapes[i] for i in range(len(arrays))],
        constants=const)
    variables = [a for i, a in enumerate(arrays) if i not in const]
    for _ in range(2):   # the constants' pre-contraction is evaluated once, then reused
        np.testing.assert_allclose(expr(*variables, backend=backend), want,
                                   rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("backend", BACKENDS)
def test_contract_use_blas_false_and_out(backend):
    """use_blas=False sends every pairwise step to einplan.einsum; out= is written."""
    eq = "abc,cd,bde->ea"
    arrays = build_views(eq)
    want = np.einsum(eq, *arrays, optimize=True)
    got = oe.contract(eq, *arrays, backend=backend, use_blas=False)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    out = np.empty_like(want)
    assert oe.contract(eq, *arrays, backend=backend, out=out) is out
    np.testing.assert_allclose(out, want, rtol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_contract_runs_on_einplan(backend, monkeypatch):
    """The backend really dispatches to einplan (not numpy) for the pairwise steps."""
    from opt_einsum.backends import dispatch

    calls = []

    def spy(name, fn):
        def wrapped(*args, **kwargs):
            calls.append(name)
            return fn(*args, **kwargs)
        return wrapped

    for name, fn in (("einsum", einplan.einsum), ("tensordot", einplan.tensordot)):
        assert dispatch.get_func(name, backend) in (fn, getattr(backends, name))
        monkeypatch.setitem(dispatch._cached_funcs, (name, backend),
                            spy(name, dispatch.get_func(name, backend)))
    eq = "ab,bc,cd,de->ae"
    arrays = build_views(eq)
    got = oe.contract(eq, *arrays, backend=backend)
    np.testing.assert_allclose(got, np.einsum(eq, *arrays, optimize=True), rtol=1e-12)
    assert len(calls) == 3          # one einplan call per pairwise step


def test_contract_shared_intermediates():
    eq = "ab,bc,cd->ad"
    arrays = build_views(eq)
    with oe.shared_intermediates():
        r1 = oe.contract(eq, *arrays, backend="einplan")
        r2 = oe.contract(eq, *arrays, backend="einplan")
    np.testing.assert_allclose(r1, r2)
    np.testing.assert_allclose(r1, np.einsum(eq, *arrays), rtol=1e-12)


# ------------------------------------------------------------ threadpoolctl

threadpoolctl = pytest.importorskip("threadpoolctl", reason="threadpoolctl is not installed")
needs_register = pytest.mark.skipif(not hasattr(threadpoolctl, "register"),
                                    reason="threadpoolctl < 3.5: no register()")


def _in_subprocess(code):
    env = dict(os.environ)
    env.pop("EINPLAN_NUM_THREADS", None)
    env.pop("OMP_NUM_THREADS", None)
    env["OPENBLAS_NUM_THREADS"] = "1"
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout.split()


def _cpus():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:        # pragma: no cover - not Linux
        return os.cpu_count() or 1


@needs_omp
def test_import_registers_controller_and_limits_apply():
    """`import einplan` registers its controller (when threadpoolctl is
    installed): threadpool_info() lists libgomp and einplan, and
    threadpool_limits caps einplan, then restores it."""
    out = _in_subprocess(
        "import einplan, threadpoolctl\n"
        "info = threadpoolctl.threadpool_info()\n"
        "print(any(i['user_api'] == 'openmp' for i in info))\n"
        "print(any(i.get('internal_api') == 'einplan' for i in info))\n"
        "n = einplan.get_num_threads()\n"
        "with threadpoolctl.threadpool_limits(1):\n"
        "    print(einplan.get_num_threads())\n"
        "print(einplan.get_num_threads() == n)\n")
    assert out == ["True", "True", "1", "True"]


@needs_register
def test_controller_listed():
    assert backends.register_threadpoolctl() is True
    assert backends.register_threadpoolctl() is True          # idempotent
    info = threadpoolctl.threadpool_info()
    mine = [i for i in info if i["internal_api"] == "einplan"]
    assert len(mine) == 1
    assert mine[0]["user_api"] == "openmp"
    assert os.path.basename(mine[0]["filepath"]).startswith("_kernels")
    assert os.path.dirname(mine[0]["filepath"]) == os.path.dirname(einplan.__file__)
    assert mine[0]["num_threads"] == einplan.get_num_threads()
    assert mine[0]["version"] == einplan.__version__


@needs_omp
@needs_register
@pytest.mark.parametrize("user_api", [None, "openmp"])
def test_controller_limits_every_thread(user_api):
    """With the controller, a limit set in the main thread caps einplan in
    ThreadPoolExecutor workers too (the OpenMP limit alone is per thread)."""
    backends.register_threadpoolctl()
    before = einplan.get_num_threads()
    a = np.random.default_rng(0).standard_normal((64, 64))

    def worker(_):
        r = einplan.einsum("ij,jk->ik", a, a)
        return einplan.get_num_threads(), bool(np.allclose(r, a @ a))

    with threadpoolctl.threadpool_limits(1, user_api=user_api):
        assert einplan.get_num_threads() == 1
        with ThreadPoolExecutor(2) as ex:
            assert set(ex.map(worker, range(4))) == {(1, True)}
    assert einplan.get_num_threads() == before


@needs_omp
@needs_register
def test_controller_set_and_restore():
    backends.register_threadpoolctl()
    before = einplan.get_num_threads()
    ctl = threadpoolctl.ThreadpoolController().select(internal_api="einplan")
    assert len(ctl.lib_controllers) == 1
    with ctl.limit(limits=1):
        assert einplan.get_num_threads() == 1
    assert einplan.get_num_threads() == before


@needs_omp
@needs_register
@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="needs Linux /proc")
@pytest.mark.skipif(_cpus() < 2, reason="one CPU: einplan never starts a team")
def test_no_oversubscription_in_thread_pool():
    """Count OS threads: 2 pool workers running GEMMs under threadpool_limits(1)
    start no OpenMP teams (main + 2 workers); unlimited, each starts one."""
    code = (
        "import os, sys, numpy as np, einplan, threadpoolctl\n"
        "from concurrent.futures import ThreadPoolExecutor\n"
        "from einplan import backends\n"
        "backends.register_threadpoolctl()\n"
        "A = np.random.rand(256, 256)\n"
        "def f(_):\n"
        "    einplan.einsum('ij,jk->ik', A, A)\n"
        "    return len(os.listdir('/proc/self/task'))\n"
        "with threadpoolctl.threadpool_limits(1):\n"
        "    with ThreadPoolExecutor(2) as ex: print(max(ex.map(f, range(6))))\n"
        "with ThreadPoolExecutor(2) as ex: print(max(ex.map(f, range(6))))\n")
    limited, unlimited = map(int, _in_subprocess(code))
    assert limited == 3
    assert unlimited > limited
