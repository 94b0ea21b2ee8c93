"""Wall-clock timing shared by measured explains, the demo and the profiler:
medians of repeated calls after a warm-up, and whether other processes share
the cores (a busy machine makes every timing pessimistic)."""
from __future__ import annotations

import os
import time

import numpy as np


def time_calls(fn, max_runs, min_runs, budget_s, long_call_s=None) -> list:
    """Wall times of up to ``max_runs`` calls of ``fn`` after one warm-up
    call (plan cache, packing workspace, thread team); stops early once
    ``min_runs`` are done and ``budget_s`` is spent, or after 3 calls when
    the first took over ``long_call_s``."""
    fn()
    times = []
    t_start = time.perf_counter()
    while len(times) < max_runs:
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
        if len(times) >= min_runs and time.perf_counter() - t_start > budget_s:
            break
        if long_call_s is not None and times[0] > long_call_s and len(times) >= 3:
            break
    return times


def median_after_idle(fn, runs, budget_s) -> tuple[float, int]:
    """(median seconds, runs) of ``fn``, started once the worker threads of
    the previous timing are idle: OpenBLAS' and OpenMP's threads spin about
    0.1 s after a call and would compete with this one."""
    time.sleep(0.2)
    times = time_calls(fn, runs, 2, budget_s)
    return float(np.median(times)), len(times)


def load() -> tuple[float | None, int, bool]:
    """(1-minute load average or None, usable CPUs, busy): busy when other
    processes keep more than three quarters of the CPUs running."""
    try:
        avg = os.getloadavg()[0]
    except (AttributeError, OSError):
        avg = None
    ncpu = os.cpu_count() or 1
    return avg, ncpu, bool(avg is not None and avg > 0.75 * ncpu)
