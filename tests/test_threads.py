"""Thread count (set/get_num_threads, EINPLAN_NUM_THREADS, CPU affinity) and
show_config()."""
import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import einplan
from einplan import _native

from _gemm_util import smm_in_use

K = _native._kernels

HAVE_OMP = K is not None and K.config()["build"].get("openmp", False)
needs_omp = pytest.mark.skipif(not HAVE_OMP, reason="built without OpenMP: always 1 thread")


def _usable_cpus():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:        # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _in_subprocess(code, env_extra=None, unset=("EINPLAN_NUM_THREADS", "OMP_NUM_THREADS")):
    # OMP_NUM_THREADS caps einplan (the OpenMP runtime's limit) and other
    # test modules (dask's workers) may have set it in this process
    env = dict(os.environ)
    for name in unset:
        env.pop(name, None)
    env.update(env_extra or {})
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


# ------------------------------------------------------------ set / get

@needs_omp
def test_round_trip(restore_threads):
    for n in (1, 2, 3, 7, 1, 64):
        einplan.set_num_threads(n)
        assert einplan.get_num_threads() == n
        assert _native.get_num_threads() == n
        assert K.config()["threads"] == n


def test_one_thread_always_accepted(restore_threads):
    einplan.set_num_threads(1)
    assert einplan.get_num_threads() == 1


def test_get_returns_int():
    n = einplan.get_num_threads()
    assert type(n) is int and n >= 1


@pytest.mark.parametrize("bad, exc", [(0, ValueError), (-1, ValueError), (-64, ValueError),
                                      ("abc", TypeError), ("0", TypeError), (2.0, TypeError)])
def test_invalid_values_raise(restore_threads, bad, exc):
    # numpy's convention: a non-integer is a TypeError (operator.index), a
    # count below 1 a ValueError; counts above the cap are capped (test_robustness)
    einplan.set_num_threads(1)
    with pytest.raises(exc):
        einplan.set_num_threads(bad)
    assert einplan.get_num_threads() == 1, "a refused value changed the setting"


def test_thread_count_does_not_change_results(restore_threads):
    rng = np.random.default_rng(0)
    A = rng.standard_normal((150, 120))
    B = rng.standard_normal((120, 170))
    out = []
    for n in (1, 2, 3):
        einplan.set_num_threads(n)
        C = np.full((150, 170), np.nan)
        _native.gemm(A, B, C, ((150, 120, 170),), ((170, 1, 1),), ((120, 1, 170),), ())
        out.append(C)
    np.testing.assert_allclose(out[0], A @ B, rtol=1e-12, atol=1e-12)
    assert np.array_equal(out[0], out[1]) and np.array_equal(out[0], out[2])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_claimed_m_blocks_cover_m_once(restore_threads, dtype):
    # m in several MC blocks claimed by the threads, k in several KC passes
    # that add into C: a block computed twice or skipped would show
    m, k, n = 1000, 2000, 200
    rng = np.random.default_rng(1)
    A = rng.standard_normal((m, k)).astype(dtype)
    B = rng.standard_normal((k, n)).astype(dtype)
    out = []
    for t in (1, 2, 3):
        einplan.set_num_threads(t)
        out.append(einplan.matmul(A, B))
    tol = 1e-3 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(out[0], A.astype(np.float64) @ B, rtol=tol, atol=tol * 50)
    assert np.array_equal(out[0], out[1]) and np.array_equal(out[0], out[2])


@needs_omp
@pytest.mark.skipif(not smm_in_use(), reason="the kernel set in use has no smm kernels")
@pytest.mark.parametrize("dtype,m,n,nb", [(np.float32, 1000, 40, 1), (np.float64, 997, 32, 1),
                                          (np.float32, 50, 16, 40), (np.float64, 3001, 9, 1)])
def test_thread_count_does_not_change_smm_results(restore_threads, dtype, m, n, nb):
    """The narrow (smm) path shares rows or batches among threads; every row
    is summed in one order, so results are equal to the last bit."""
    rng = np.random.default_rng(1)
    k = 130
    A = rng.standard_normal((nb, m, k)).astype(dtype)
    B = rng.standard_normal((nb, k, n)).astype(dtype)
    it = A.itemsize
    groups = (((m, k, n),), ((n, 1, 1),), ((k, 1, n),),
              ((nb, A.strides[0] // it, B.strides[0] // it, m * n),))
    call = _native.prepare_gemm(dtype, *groups)
    out, loops = [], []
    for t in (1, 2, 3):
        einplan.set_num_threads(t)
        loops.append(call.schedule()["loop"])
        C = np.full((nb, m, n), np.nan, dtype)
        _native.gemm(A, B, C, *groups)
        out.append(C)
    assert call.schedule(nthreads=2)["path"] == "smm"
    assert loops[0] == "none" and loops[1] in ("m", "batch")
    tol = 1e-4 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(out[0], np.matmul(A.astype(np.float64), B), rtol=tol, atol=tol)
    assert np.array_equal(out[0], out[1]) and np.array_equal(out[0], out[2])


@needs_omp
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_threads_split_m_when_its_share_is_no_larger_than_ns(restore_threads, dtype):
    """With m's panels shared out at least as evenly as n's, 2 threads split
    m, each packing only its own rows of A: m = 84 (14 panels of 6), n = 42
    (3 panels of 16, split 2 : 1) and a long k. A wide n of many panels,
    each thread's share smaller than of m's, keeps the n loop."""
    mr, nr = _native.tile(dtype)
    M, K = 14 * mr, 33402
    for N, want in [(2 * nr + nr // 2, "m"), (64 * nr, "n")]:
        groups = (((M, K, 1),), ((N, 1, M),), ((K, 1, K),), ())
        sched = _native.prepare_gemm(dtype, *groups).schedule(nthreads=2)
        assert (sched["path"], sched["loop"]) == ("gemm", want), (N, sched)
    rng = np.random.default_rng(4)
    A = np.asfortranarray(rng.standard_normal((42, 3000)).astype(dtype))
    B = np.asfortranarray(rng.standard_normal((3000, 84)).astype(dtype))
    einplan.set_num_threads(2)
    got = einplan.einsum("ij,jk->ik", A, B)
    np.testing.assert_allclose(got, A.astype(np.float64) @ B, rtol=1e-4, atol=1e-3)


@needs_omp
def test_threads_never_share_out_fewer_panels_than_threads(restore_threads):
    """A packed GEMM whose n is under one NR panel does not give its threads
    the n loop (one of them would only wait at its barriers): 'ji,jk->ki'
    with n = 3, m = 57 splits m; the result is numpy's.  (B is strided along
    k: unit-stride, the nest's register-tile kernel would take the call.)"""
    rng = np.random.default_rng(3)
    A = rng.standard_normal((62150, 6)).astype(np.float32)[:, ::2]
    B = rng.standard_normal((62150, 114)).astype(np.float32)[:, ::2]
    einplan.set_num_threads(2)
    st = einplan.explain("ji,jk->ki", A, B).to_dict()["steps"][0]
    k = st["kernel"]
    assert k["kind"] == "gemm", k
    assert k["parallel_loop"] != "jr" and (k["threads"] == 1 or k["parallel_loop"] == "ic"), k
    got = einplan.einsum("ji,jk->ki", A, B)
    np.testing.assert_allclose(got, (B.T.astype(np.float64) @ A), rtol=1e-4, atol=1e-2)


@needs_omp
@pytest.mark.parametrize("panels", [1.1, 2, 2.5, 4])
def test_threads_split_m_only_with_two_panels_each(restore_threads, panels):
    """Under one NR panel of n, the threads split m only when each gets two
    MR panels or more: with one each, one thread's panel may hold a single
    row while the other waits at every KC block's barrier ('ik,jk->ij' m = 9,
    n = 24, k = 7776 f64: 262 us on 2 threads, 222 on 1)."""
    mr, nr = _native.tile("float64")
    m = int(panels * mr) + 1
    from einplan import planner
    from einplan.operands import describe_operands
    from einplan.options import Options
    from einplan.plan import GemmStep
    from einplan.spec import parse_spec
    rng = np.random.default_rng(m)
    A = rng.standard_normal((m, 7776))
    B = rng.standard_normal((min(24, nr - 1), 7776))
    einplan.set_num_threads(2)
    # the packed engine's own plan: where the loop nest runs such a thin GEMM
    # faster (AVX2: 'ik,jk->ij' 7 x 7 x 7776 f64, 42 us in the nest, 114
    # packed) the planner takes the nest
    spec, _ = parse_spec(("ik,jk->ij", A, B))
    (step,) = planner.make_plan(spec, describe_operands((A, B)), Options(), gemm_only=True).steps
    assert isinstance(step, GemmStep), step
    threads = 2 if -(-m // mr) >= 4 else 1
    assert step.kernel.threads == threads, step.kernel
    assert threads == 1 or step.kernel.loop.value == "m", step.kernel
    np.testing.assert_allclose(einplan.einsum("ik,jk->ij", A, B), A @ B.T, rtol=1e-10,
                               atol=1e-9)


def test_concurrent_python_threads(restore_threads):
    """The GIL is released during a GEMM: GEMMs from several Python threads
    at once (each with its OpenMP team and packing buffers) are all right."""
    from concurrent.futures import ThreadPoolExecutor

    rng = np.random.default_rng(1)
    probs = []
    for i in range(12):
        M, N, Kx = (int(v) for v in rng.integers(1, 200, 3))
        dt = (np.float32, np.float64)[i % 2]
        probs.append((rng.standard_normal((M, Kx)).astype(dt),
                      rng.standard_normal((Kx, N)).astype(dt)))

    def run(p):
        A, B = p
        (M, Kx), N = A.shape, B.shape[1]
        C = np.full((M, N), np.nan, A.dtype)
        _native.gemm(A, B, C, ((M, Kx, N),), ((N, 1, 1),), ((Kx, 1, N),), ())
        return C

    einplan.set_num_threads(2)
    serial = [run(p) for p in probs]
    for (A, B), s in zip(probs, serial):
        np.testing.assert_allclose(s, A.astype(np.float64) @ B, rtol=1e-3, atol=1e-3)
    with ThreadPoolExecutor(4) as ex:
        for _ in range(3):
            for got, want in zip(ex.map(run, probs), serial):
                assert np.array_equal(got, want)


def test_one_nest_descriptor_shared_by_concurrent_python_threads(restore_threads):
    """A cached nest plan is one descriptor: calls from several Python
    threads at once (the GIL released for nests past NEST_NOGIL_VISITS, held
    below) pass their own operands and write their own outputs."""
    from concurrent.futures import ThreadPoolExecutor

    rng = np.random.default_rng(4)
    shapes = [(300, 200), (6, 5)]              # a GIL-free nest and a small one
    probs = [(rng.standard_normal(sh), rng.standard_normal(sh))
             for sh in shapes for _ in range(8)]

    def run(p):
        A, B = p
        return einplan.einsum("ij,ij->i", A, B)

    einplan.set_num_threads(1)
    serial = [run(p) for p in probs]
    for (A, B), s in zip(probs, serial):
        np.testing.assert_allclose(s, (A * B).sum(1), rtol=1e-10, atol=1e-12)
    with ThreadPoolExecutor(4) as ex:
        for _ in range(5):
            for got, want in zip(ex.map(run, probs), serial):
                assert np.array_equal(got, want)


# ------------------------------------------------------------ environment

_GET = "import einplan; print(einplan.get_num_threads())"


@needs_omp
def test_env_honoured():
    assert _in_subprocess(_GET, {"EINPLAN_NUM_THREADS": "3"}) == "3"
    assert _in_subprocess(_GET, {"EINPLAN_NUM_THREADS": "1"}) == "1"


@needs_omp
def test_default_is_usable_cpus():
    assert _in_subprocess(_GET) == str(_usable_cpus())


@pytest.mark.parametrize("value", ["0", "-2", "abc", ""])
def test_env_invalid_falls_back_to_default(value):
    want = str(_usable_cpus()) if HAVE_OMP else "1"
    assert _in_subprocess(_GET, {"EINPLAN_NUM_THREADS": value}) == want


@needs_omp
def test_set_overrides_env():
    code = "import einplan; einplan.set_num_threads(2); print(einplan.get_num_threads())"
    assert _in_subprocess(code, {"EINPLAN_NUM_THREADS": "5"}) == "2"


# libgomp prints its settings on stderr with omp_display_env (OpenMP 5.1);
# GOMP_SPINCOUNT is how long an idle worker spins before it sleeps
_WAIT_POLICY = ("import ctypes, os, sys, einplan; sys.stdout.flush(); os.dup2(1, 2); "
                "ctypes.CDLL('libgomp.so.1').omp_display_env(1); "
                "print('env', os.environ.get('GOMP_SPINCOUNT'), einplan._native._SET_WAIT_POLICY)")


def _spin_count(env):
    out = _in_subprocess(_WAIT_POLICY, env, unset=("OMP_WAIT_POLICY", "GOMP_SPINCOUNT"))
    spins = [line.split("=")[1].strip(" '") for line in out.splitlines()
             if line.strip().startswith("GOMP_SPINCOUNT")]
    return spins[0], out.splitlines()[-1]


@needs_omp
def test_idle_workers_spin_briefly_unless_the_user_sets_a_policy():
    """Idle workers spin ~0.1 ms, then sleep (a worker spinning for libgomp's
    default milliseconds on an oversubscribed machine stalls the next region
    for a time slice); the environment that programs started from this one
    inherit is left as the user's."""
    assert _spin_count({}) == ("3000", "env None True")
    assert _spin_count({"GOMP_SPINCOUNT": "5000"}) == ("5000", "env 5000 False")
    spins, last = _spin_count({"OMP_WAIT_POLICY": "active"})
    assert spins != "3000" and last == "env None False"


@needs_omp
@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="no CPU affinity API")
def test_default_honours_cpu_affinity():
    """A process limited to one CPU (taskset, containers) defaults to 1 thread."""
    code = ("import os; os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]}); "
            "import einplan; print(einplan.get_num_threads())")
    assert _in_subprocess(code) == "1"


# ------------------------------------------------------------ placement

# the calling thread's mask as the process started: a test that narrowed it
# would otherwise hand the narrowed mask to the tests after it
_START_MASK = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None

needs_two_cpus = pytest.mark.skipif(
    not hasattr(os, "sched_getaffinity") or _usable_cpus() < 2,
    reason="one usable CPU (or no affinity API): a team has nowhere to spread")


@needs_omp
@needs_two_cpus
def test_a_teams_threads_start_on_distinct_cpus_after_a_pause(restore_threads):
    """Idle workers sleep after ~10 us, and a woken worker may be queued
    behind its master on the master's CPU while another CPU idles; a placed
    team's threads start on distinct CPUs, right after the last region or
    after a pause.  The master is never pinned, so the kernel may move it
    onto its worker's CPU between the fork and the reading (1 sample in 300
    or so on a 2-CPU virtual machine): a rare shared CPU is that, a team
    queued behind its master shares one at every sample."""
    einplan.set_num_threads(2)
    shared = []
    for pause in (0.0, 0.001, 0.02) * 8:
        time.sleep(pause)
        placed, cpus = K.team_cpus(2)
        assert placed and len(cpus) == 2
        if cpus[0] == cpus[1]:
            shared.append((pause, cpus[0]))
    assert len(shared) <= 2, f"both threads on one CPU (pause, CPU): {shared}"


@needs_omp
@needs_two_cpus
def test_a_master_on_its_workers_cpu_moves_off_it_and_keeps_its_mask(restore_threads):
    mask = _START_MASK
    einplan.set_num_threads(2)
    for _ in range(10):
        _, (_, worker) = K.team_cpus(2)
        os.sched_setaffinity(0, {worker})      # the master lands on the worker's CPU
        os.sched_setaffinity(0, mask)
        placed, cpus = K.team_cpus(2)
        assert placed and cpus[0] != cpus[1] and cpus[1] == worker
        assert os.sched_getaffinity(0) == mask


@needs_omp
@needs_two_cpus
def test_the_calling_threads_cpu_mask_is_never_narrowed(restore_threads):
    """Workers are pinned, the thread that calls einplan never is: threads it
    starts later inherit its whole mask."""
    before = _START_MASK
    einplan.set_num_threads(2)
    a = np.ones((300, 200), np.float32)
    for _ in range(10):
        K.team_cpus(2)
        einplan.einsum("ij,kj->ik", a, a)
        time.sleep(0.002)
    assert os.sched_getaffinity(0) == before
    seen = []
    t = threading.Thread(target=lambda: seen.append(os.sched_getaffinity(0)))
    t.start()
    t.join()
    assert seen == [before]


@needs_omp
@needs_two_cpus
def test_a_users_own_binding_and_oversized_teams_are_left_alone():
    code = ("from einplan import _native; K = _native._kernels; "
            "n = K.get_num_threads(); print(K.team_cpus(2)[0], K.team_cpus(n + 1)[0])")
    assert _in_subprocess(code) == "True False"
    assert _in_subprocess(code, {"OMP_PROC_BIND": "true"}) == "False False"
    assert _in_subprocess(code, {"GOMP_CPU_AFFINITY": "0-1"}) == "False False"


# ------------------------------------------------------------ show_config

def test_show_config_stdout(capsys):
    assert einplan.show_config() is None
    out = capsys.readouterr().out
    low = out.lower()
    cfg = einplan.show_config("dicts")
    # ISA in use and the available ones
    assert einplan.isa() in out
    for isa in K.available_isas():
        assert isa in out
    # tiles of every ISA, per dtype
    assert "mr" in low and "nr" in low
    for isa in K.available_isas():
        for dt in (np.float32, np.float64):
            mr, nr = K.tile(isa, dt)
            assert f"{mr}x{nr}" in out, (isa, dt)
    # blocking of the ISA in use
    for dt in (np.float32, np.float64):
        b = K.blocking(dt)
        for key in ("mc", "kc", "nc"):
            assert f"{key.upper()}={b[key]}" in out
    # caches
    assert "l1" in low and "l2" in low and "l3" in low
    c = cfg["caches"]
    assert f"{c['l1d'] // 1024} KiB" in out
    # threads
    assert f"threads: {einplan.get_num_threads()}" in out


def test_show_config_follows_thread_setting(restore_threads, capsys):
    einplan.set_num_threads(1)
    einplan.show_config()
    assert "threads: 1" in capsys.readouterr().out


def test_show_config_dicts():
    cfg = einplan.show_config(mode="dicts")
    for key in ("isa", "available_isas", "tiles", "blocking", "caches", "threads", "build"):
        assert key in cfg
    assert cfg["isa"] == einplan.isa()
    assert cfg["threads"] == einplan.get_num_threads()
    assert set(cfg["blocking"]) == {"float32", "float64"}
    assert set(cfg["caches"]) >= {"l1d", "l2", "l3"}
    for v in cfg["caches"].values():
        assert isinstance(v, int) and v >= 0


def test_show_config_bad_mode():
    with pytest.raises(ValueError):
        einplan.show_config("yaml")


@needs_omp
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
def test_long_row_shared_out_when_every_loop_around_it_is_summed(restore_threads, dtype):
    """A GEMV's axpy form ('kl,l->k', k unit-stride) has no kept loop around
    its row: threads share out the row itself, each running its part of
    every row (odd lengths, so the parts end off the vector width), and the
    result is numpy's whatever the thread count; a short row is not shared
    out (its output small, the summed loop around it is, into private
    copies of the output)."""
    from einplan.nest import ROW_SPLIT_BYTES
    from einplan.operands import describe_operands
    from einplan.options import Options
    from einplan.plan import NestStep
    from einplan.planner import make_plan
    from einplan.spec import parse_spec

    def steps(*ops):
        spec, arrays = parse_spec(("kl,l->k",) + ops)
        return make_plan(spec, describe_operands(arrays), Options.make()).steps
    rng = np.random.default_rng(3)
    dt = np.dtype(dtype)
    k = ROW_SPLIT_BYTES // dt.itemsize + 37
    R = 4 * (1 << 20) // k         # enough work for several threads (nest.thread_cap)
    A = rng.standard_normal((R, k)).astype(dt).T
    v = rng.standard_normal(R).astype(dt)
    tol = 1e-3 if dt in (np.float32, np.complex64) else 1e-10
    want = A @ v
    for n in (1, 2, 3):
        einplan.set_num_threads(n)
        (step,) = steps(A, v)
        assert isinstance(step, NestStep)
        assert step.split == len(step.loops) - 1 and step.threads > 1
        np.testing.assert_allclose(einplan.einsum("kl,l->k", A, v), want, rtol=tol,
                                   atol=tol * np.abs(want).max())
        out = np.full(k, np.nan, dt)
        einplan.einsum("kl,l->k", A[:, 1:], v[1:], out=out)
        np.testing.assert_allclose(out, A[:, 1:] @ v[1:], rtol=tol,
                                   atol=tol * np.abs(want).max())
    einplan.set_num_threads(2)
    (step,) = steps(A[:64], v)
    assert step.split != len(step.loops) - 1
    assert step.split == -1 or step.loops[step.split].strides[-1] == 0, step
    np.testing.assert_allclose(einplan.einsum("kl,l->k", A[:64], v), A[:64] @ v, rtol=tol,
                               atol=tol * np.abs(want).max())
