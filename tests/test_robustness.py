"""Thread counts, fork, interrupts, concurrency, memory: bounded in time.

Scenarios that could hang (a forked child's first GEMM, SIGINT) run in a
subprocess with a timeout, so a regression fails instead of hanging the suite.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import warnings

import numpy as np
import pytest

import einplan
from einplan import _native



def _run_py(code, timeout=120, env=None):
    full_env = dict(os.environ, **(env or {}))
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=timeout, env=full_env)


def _assert_prints(code, expected="ok", timeout=120):
    """Run ``code`` in a fresh interpreter: it exits 0 and prints ``expected``."""
    r = _run_py(code, timeout=timeout)
    assert r.returncode == 0 and r.stdout.strip() == expected, (r.stdout, r.stderr)


@pytest.mark.parametrize("bad, exc", [(1.5, TypeError), ("2", TypeError), (None, TypeError),
                                      (0, ValueError), (-3, ValueError)])
def test_set_num_threads_rejects_non_integers_and_below_one(bad, exc, restore_threads):
    before = einplan.get_num_threads()
    with pytest.raises(exc):
        einplan.set_num_threads(bad)
    assert einplan.get_num_threads() == before


@pytest.mark.parametrize("huge", [100000, 50000, 2 ** 31 - 1, 2 ** 80])
def test_huge_thread_counts_are_capped_with_a_warning(huge, restore_threads):
    with pytest.warns(RuntimeWarning, match="caps"):
        einplan.set_num_threads(huge)
    assert einplan.get_num_threads() <= _native.max_threads()
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((300, 300)), rng.standard_normal((300, 300))
    np.testing.assert_allclose(einplan.matmul(a, b), a @ b, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("value, warns", [("99999999999", "capped"), ("abc", "ignored"),
                                          ("0", "ignored"), ("-4", "ignored"), ("3", None)])
def test_env_thread_count_is_validated(value, warns):
    r = _run_py("""
        import warnings, numpy as np
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            import einplan
        from einplan import _native
        n = einplan.get_num_threads()
        a = np.ones((200, 200))
        assert (einplan.matmul(a, a) == 200).all()
        print(n, _native.max_threads(), "|".join(str(x.message) for x in w), sep=";")
        """, env={"EINPLAN_NUM_THREADS": value})
    assert r.returncode == 0, r.stderr
    n, cap, msgs = r.stdout.strip().split(";", 2)
    assert 1 <= int(n) <= int(cap)
    if warns is None:
        assert "EINPLAN_NUM_THREADS" not in msgs
    else:
        assert warns in msgs, msgs


_FORK_SCENARIO = """
    import os, sys, numpy as np, einplan
    from einplan import _native
    einplan.set_num_threads(2)
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((400, 300)), rng.standard_normal((300, 500))
    ref = a @ b
    assert np.allclose(einplan.matmul(a, b), ref)          # threaded GEMM in the parent
    pid = os.fork()
    if pid == 0:
        ok = np.allclose(einplan.matmul(a, b), ref) and np.allclose(
            einplan.einsum("ij,jk->ik", a, b), ref)
        # the runtime's pool was released before the fork: the child keeps
        # its threads (a single-threaded child is the fallback)
        threads = (einplan.get_num_threads() == 2 and not _native.in_forked_child()
                   and len(os.listdir("/proc/self/task")) >= 2)   # a worker started
        os._exit(0 if ok and threads else 3 if not ok else 4)
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 0, status
    assert np.allclose(einplan.matmul(a, b), ref)          # the parent keeps its threads
    print("ok")
"""


def test_forked_child_after_threaded_gemm_gets_correct_results():
    _assert_prints(_FORK_SCENARIO)


def test_fork_while_another_thread_runs_a_threaded_gemm():
    # the forking thread releases its own pool; another thread's team is
    # running meanwhile and its workers do not exist in the child
    _assert_prints("""
        import os, threading, numpy as np, einplan
        einplan.set_num_threads(2)
        a = np.random.default_rng(3).standard_normal((600, 600))
        ref = a @ a
        stop = threading.Event()
        def busy():
            while not stop.is_set():
                einplan.matmul(a, a)
        t = threading.Thread(target=busy)
        t.start()
        for _ in range(5):
            pid = os.fork()
            if pid == 0:
                os._exit(0 if np.allclose(einplan.matmul(a, a), ref) else 3)
            _, status = os.waitpid(pid, 0)
            assert os.WEXITSTATUS(status) == 0, status
        stop.set()
        t.join()
        assert np.allclose(einplan.matmul(a, a), ref)
        print("ok")
        """)


def test_multiprocessing_fork_pool_after_threaded_gemm():
    _assert_prints("""
        import multiprocessing as mp, numpy as np, einplan
        einplan.set_num_threads(2)
        a = np.random.default_rng(2).standard_normal((300, 300))
        ref = a @ a
        assert np.allclose(einplan.matmul(a, a), ref)
        def work(i):
            return bool(np.allclose(einplan.matmul(a * i, a), ref * i))
        with mp.get_context("fork").Pool(2) as pool:
            res = pool.map_async(work, range(1, 5)).get(timeout=60)
        assert all(res), res
        print("ok")
        """)


def test_sigint_during_a_long_gemm_raises_keyboardinterrupt():
    _assert_prints("""
        import os, signal, threading, numpy as np, einplan
        # a shell's background job inherits SIGINT ignored, and Python then
        # installs no handler: install Python's usual one explicitly
        signal.signal(signal.SIGINT, signal.default_int_handler)
        a = np.ones((1500, 1500))
        threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
        try:
            for _ in range(200):
                einplan.matmul(a, a)
        except KeyboardInterrupt:
            assert (einplan.matmul(a[:10], a) == 1500).all()   # still usable
            print("interrupted")
        """, "interrupted")


def test_threads_with_changing_thread_counts(restore_threads):
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((120, 90)), rng.standard_normal((90, 70))
    ref = a @ b
    plan = einplan.plan("ij,jk->ik", a.shape, b.shape)
    errors = []
    stop = threading.Event()

    def flip():
        i = 0
        while not stop.is_set():
            einplan.set_num_threads(1 + i % 2)
            i += 1

    def work(k):
        try:
            for _ in range(60):
                for got in (einplan.einsum("ij,jk->ik", a, b), einplan.matmul(a, b),
                            plan(a, b), einplan.dot(a, b)):
                    if not np.allclose(got, ref):
                        errors.append(k)
                einplan.explain("ij,jk->ik", a, b)
        except Exception as e:  # noqa: BLE001
            errors.append(repr(e))

    flipper = threading.Thread(target=flip)
    flipper.start()
    workers = [threading.Thread(target=work, args=(k,)) for k in range(6)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=120)
    stop.set()
    flipper.join(timeout=10)
    assert not any(w.is_alive() for w in workers)
    assert not errors, errors[:5]


def test_repeated_calls_do_not_grow_memory_and_caches_stay_bounded():
    from einplan import api, planner
    import tracemalloc
    a, b = np.ones((8, 8)), np.ones((8, 8))
    out = np.empty((8, 8))
    with api._fast_lock:    # a nearly full hot-path dict would be cleared mid-test
        api._fast.clear()
    for _ in range(2000):    # warm: plans, runners, interned keys
        einplan.einsum("ij,jk->ik", a, b)
        einplan.einsum("ij,jk->ik", a, b, out=out)
        einplan.einsum("ij->", a)
    tracemalloc.start()

    def calls(n):
        for _ in range(n // 3):
            einplan.einsum("ij,jk->ik", a, b)
            einplan.einsum("ij,jk->ik", a, b, out=out)
            einplan.einsum("ij->", a)
        return tracemalloc.get_traced_memory()[0]

    # a leak grows with the calls; one-time allocations (free lists, the
    # tracer's own tables) come in the first window only
    calls(50000)
    second = calls(50000)
    grown = calls(50000) - second
    tracemalloc.stop()
    assert grown < 64 * 1024, grown
    for n in range(1, 700):    # many distinct shapes
        einplan.einsum("i,i->", np.ones(n), np.ones(n))
    assert len(planner._cache) <= planner.CACHE_SIZE
    assert len(api._fast) <= api._FAST_MAX
