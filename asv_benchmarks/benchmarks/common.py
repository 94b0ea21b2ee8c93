"""Shared pieces of the asv suite: peers, threads, operands, and the measures
behind the track_* benchmarks.

Every benchmark class takes ``impl`` as an asv parameter, so one report shows
einplan beside its peers.  A peer that is not installed (torch, pytblis), does
not apply to a case, or would take too long raises ``NotImplementedError`` in
``setup``: asv then shows "n/a" for that cell instead of failing.

    IMPLS                    the generic peers, in the order reports show them
    make_call(impl, ...)     -> a zero-argument callable making one call
    ThreadsMixin             the ``threads`` parameter: pins einplan, numpy's
                             BLAS (threadpoolctl), torch and pytblis to N threads
    temp_bytes(fn, ...)      bytes numpy allocated during fn() beyond its result
    peak_gflops(dtype, n)    a peak estimate for "% of peak"
"""
import gc
import importlib
import math
import os
import time
import tracemalloc

import numpy as np


def optional(name):
    """The module, or None when it is missing or broken (never an error here)."""
    try:
        return importlib.import_module(name)
    except Exception:  # a broken optional install must not break the whole suite
        return None


einplan = optional("einplan")
oe = optional("opt_einsum")
threadpoolctl = optional("threadpoolctl")
torch = optional("torch")
pytblis = optional("pytblis")

EINPLAN = "einplan"
NOOPT = "numpy.einsum(optimize=False)"
OPT = "numpy.einsum(optimize=True)"
HAND = "numpy best hand-written"
OE = "opt_einsum"
TORCH = "torch"
TBLIS = "pytblis"
IMPLS = [EINPLAN, NOOPT, OPT, HAND, OE, TORCH, TBLIS]
THREADS = [1, 2]

# numpy.einsum(optimize=False) runs one nested loop over every index: its cost
# is about the product of all extents.  Above this many iterations (a second or
# more per call on this machine's 2.6 GHz EPYC, 2025-11) it is skipped, as
# compare.py does.
NOOPT_MAX_ITERS = 3e8

RNG_SEED = 12345


def rnd(shape, dtype=np.float32, seed=RNG_SEED):
    """Uniform [-1, 1) operands, reproducible per shape."""
    rng = np.random.default_rng(seed + int(np.prod(shape)) % 9973)
    x = rng.random(shape, dtype=np.dtype(dtype))  # float32 drawn directly: fast setup for big operands
    x *= 2
    x -= 1
    return x


def iterations(spec, shapes):
    """Product of the extents of all distinct indices (ellipsis dims counted)."""
    sizes = {}
    for term, shp in zip(spec.split("->")[0].split(","), shapes):
        if "..." in term:
            pre, post = term.split("...")
            ne = len(shp) - len(pre) - len(post)
            term = list(pre) + [f".{i}" for i in range(ne)] + list(post)
        for lab, n in zip(term, shp):
            sizes[lab] = max(sizes.get(lab, 1), n)
    return math.prod(sizes.values())


def need(mod, what):
    if mod is None:
        raise NotImplementedError(f"{what} is not installed")
    return mod


def need_attr(name):
    """einplan.<name>, or NotImplementedError when this einplan has none (yet)."""
    f = getattr(einplan, name, None) if einplan is not None else None
    if not callable(f):  # missing, or only the submodule of that name (einplan/plan.py)
        raise NotImplementedError(f"einplan.{name} is not available in this build")
    return f


def make_call(impl, spec, ops, hand=None, out=None):
    """A zero-argument callable running ``spec`` on ``ops`` with ``impl``.

    hand: the best hand-written numpy formulation (a callable), or None when the
    case has none.  out: a preallocated output every impl must write into.
    """
    if impl == EINPLAN:
        f = need_attr("einsum")
        return (lambda: f(spec, *ops)) if out is None else (lambda: f(spec, *ops, out=out))
    if impl == NOOPT:
        if iterations(spec, [o.shape for o in ops]) > NOOPT_MAX_ITERS:
            raise NotImplementedError("numpy.einsum(optimize=False) would take seconds per call")
        return lambda: np.einsum(spec, *ops, out=out, optimize=False)
    if impl == OPT:
        return lambda: np.einsum(spec, *ops, out=out, optimize=True)
    if impl == HAND:
        if hand is None:
            raise NotImplementedError("no hand-written numpy formulation for this case")
        return hand
    if impl == OE:
        contract = need(oe, "opt_einsum").contract
        return (lambda: contract(spec, *ops)) if out is None else (lambda: contract(spec, *ops, out=out))
    if impl == TORCH:
        t = need(torch, "torch")
        tops = [t.from_numpy(o) for o in ops]
        if out is None:
            return lambda: t.einsum(spec, *tops)
        tout = t.from_numpy(out)
        return lambda: tout.copy_(t.einsum(spec, *tops))
    if impl == TBLIS:
        tb = need(pytblis, "pytblis")
        return (lambda: tb.einsum(spec, *ops)) if out is None else (lambda: tb.einsum(spec, *ops, out=out))
    raise NotImplementedError(f"unknown impl {impl!r}")


def set_threads(n):
    """Pin every library to n threads; returns what restore_threads needs."""
    saved = {}
    if einplan is not None and hasattr(einplan, "set_num_threads"):
        saved["einplan"] = einplan.get_num_threads() if hasattr(einplan, "get_num_threads") else None
        einplan.set_num_threads(n)
    if threadpoolctl is not None:  # numpy's OpenBLAS / MKL, and any OpenMP runtime
        saved["threadpoolctl"] = threadpoolctl.threadpool_limits(limits=n)
    if torch is not None:
        saved["torch"] = torch.get_num_threads()
        torch.set_num_threads(n)
    if pytblis is not None and hasattr(pytblis, "set_num_threads"):
        pytblis.set_num_threads(n)
    return saved


def restore_threads(saved):
    if not saved:
        return
    if saved.get("threadpoolctl") is not None:
        saved["threadpoolctl"].restore_original_limits()
    if saved.get("einplan") is not None:
        einplan.set_num_threads(saved["einplan"])
    if saved.get("torch") is not None:
        torch.set_num_threads(saved["torch"])


class ThreadsMixin:
    """Pins threads in setup (call self.pin(threads) last, after any
    NotImplementedError) and restores them in teardown."""

    _saved_threads = None

    def pin(self, threads):
        self._saved_threads = set_threads(threads)

    def teardown(self, *params):
        restore_threads(self._saved_threads)
        self._saved_threads = None


def warm(fn, spec=None, shapes=None, max_iters=1e8):
    """Call fn once (plan cache, BLAS thread pool) unless the case is big:
    asv's own warm-up covers those, and a second multi-second call per repeat
    would only slow the suite down."""
    if spec is None or iterations(spec, shapes) <= max_iters:
        fn()


def best_seconds(fn, budget=0.3, max_calls=20):
    """Best time of one call over a small time budget (at least 2 calls)."""
    best, spent, calls = math.inf, 0.0, 0
    while calls < 2 or (spent < budget and calls < max_calls):
        t0 = time.perf_counter()
        fn()
        dt = time.perf_counter() - t0
        best, spent, calls = min(best, dt), spent + dt, calls + 1
    return best


def temp_bytes(fn, result_nbytes=0):
    """Peak bytes traced by tracemalloc while fn() runs, minus its result.

    numpy registers its data buffers with tracemalloc, so transposed copies,
    intermediates and padded buffers made through numpy all count; einplan's
    packing buffers (malloc'd in C, a few hundred KiB bounded by MC x KC and
    KC x NC) do not.  Call fn once before, so plan building is not counted.
    """
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        res = fn()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    del res
    return max(0, peak - base - result_nbytes)


def _cpu_vendor():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("vendor_id"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return ""


def _cpu_ghz():
    """Nominal clock from /proc/cpuinfo (the first 'cpu MHz'); 2.5 GHz if unknown."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("cpu MHz"):
                    return float(line.split(":", 1)[1]) / 1000
    except (OSError, ValueError):
        pass
    return 2.5


def peak_gflops(dtype, threads):
    """Estimated peak GFLOP/s of the ISA einplan runs, on `threads` cores.

    flops per cycle per core = 2 (FMA) x vector lanes x FMA pipes, with the
    lanes of the ISA einplan chose (einplan.isa()): AVX-512 16 f32 / 8 f64,
    AVX2 8 / 4, portable C counted as 128-bit SSE 4 / 2; two FMA pipes, except
    AVX-512 on AMD (Zen 4 runs a 512-bit FMA as two 256-bit halves: one pipe's
    worth).  The clock is the nominal one from /proc/cpuinfo, so turbo can push
    a measurement above 100 %.  An estimate, for a trend line only.
    """
    isa = einplan.isa() if einplan is not None and hasattr(einplan, "isa") else "avx2"
    bits = {"avx512": 512, "avx2": 256}.get(str(isa).lower(), 128)
    lanes = bits // (32 if np.dtype(dtype) == np.float32 else 64)
    pipes = 1 if bits == 512 and "AMD" in _cpu_vendor() else 2
    cores = min(threads, os.cpu_count() or 1)
    return 2 * lanes * pipes * _cpu_ghz() * cores


def _find_peak_field(obj):
    """A '% of peak' number inside an explain report's dict, if it has one."""
    if isinstance(obj, dict):
        for key, val in obj.items():
            k = str(key).lower()
            if "peak" in k and any(w in k for w in ("percent", "pct", "fraction", "of_peak")) \
                    and isinstance(val, (int, float)):
                return float(val) * (100.0 if "fraction" in k else 1.0)
        for val in obj.values():
            found = _find_peak_field(val)
            if found is not None:
                return found
    elif isinstance(obj, (list, tuple)):
        for val in obj:
            found = _find_peak_field(val)
            if found is not None:
                return found
    return None


def explain_percent_of_peak(spec, ops):
    """% of peak as einplan.explain(..., measure=True) reports it, or None when
    this einplan has no explain, no measure=, or no such field."""
    explain = getattr(einplan, "explain", None) if einplan is not None else None
    if not callable(explain):  # missing, or only the subpackage einplan/explain
        return None
    try:
        rep = explain(spec, *ops, measure=True)
        for attr in ("to_dict", "as_dict", "dict"):
            if hasattr(rep, attr):
                rep = getattr(rep, attr)()
                break
        if isinstance(rep, dict) and isinstance(rep.get("measured"), dict):
            rep = rep["measured"]  # the measured run's pct_peak, not the model's predicted_pct_peak
        return _find_peak_field(rep)
    except Exception:  # explain is being built by others: any failure -> our estimate
        return None
