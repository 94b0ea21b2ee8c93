"""A small machine model for explain reports: peak, bandwidth, predicted times.

Nothing here decides how a contraction runs (the planner does); this module
*prices* a Plan so that ``explain`` can print a predicted time and a
percentage of peak next to a measured one, and prices a GEMM plan's steps in
cycles (``gemm_cycles``, no calibration) for the planner to weigh against the
loop nest's.

Peak FLOP rate, per core::

    peak = lanes (ISA vector width / element width) x 2 (an FMA is 2 flops)
           x FMA units x clock

* ``lanes``: AVX-512 512 bit, AVX2 256 bit, the portable C kernel 128 bit
  (what a compiler makes of it at -O3 with the x86-64 baseline, SSE2).
* ``clock`` is *measured*: the SIMD micro-kernel of the best ISA the CPU has
  is run on packed panels that sit in L1, 100 calls back to back timed in C
  (``_native.probe_ukr_gflops``, the best such run in 20 ms), and the clock that explains its FLOP rate is taken when
  it exceeds the nominal clock of /proc/cpuinfo (turbo); otherwise the
  nominal clock stands.  FMA units are inferred from the same run: the
  largest count (2, then 1) whose implied clock is at least 0.8 x nominal
  (``infer_fma_units``); a run that implies one unit is repeated (up to
  ``PROBE_RETRIES`` times, the best kept) before it is believed, as a run
  on a busy core reads low.
  That tells an AMD Zen 4 (AVX-512 double-pumped over two 256-bit units:
  one 512-bit FMA per cycle) from an Intel server core (two).
* Memory bandwidth: a timed ``np.copyto`` of 64 MB (read + write = 128 MB
  moved), best of 3 after a first-touch run.

Both calibrations run once per process (about 50 ms together) and are cached
in the module-level ``_MACHINE``.  Environment overrides, for reproducible
reports or machines where timing is meaningless:

    EINPLAN_CLOCK_GHZ=3.0       clock in GHz (skips the micro-kernel run)
    EINPLAN_FMA_UNITS=2         FMA units per core
    EINPLAN_BANDWIDTH_GBS=20    memory bandwidth in GB/s (skips the copy run)
    EINPLAN_MODEL_CALIBRATE=0   no calibration runs at all: nominal clock,
                                table FMA units, 10 GB/s ("assumed")

Predicted time of one packed GEMM step (``predict_gemm``)::

    t = max(t_compute + t_pack, t_memory) + t_overhead
    t_compute  = flops / (peak x threads x E)
                 E = 0.9 (steady-state GEMM / micro-kernel rate, measured on
                     AMD EPYC Zen 4, n = 2048 float32, 1 thread, 2026-11)
                   x tile use (m / m rounded up to MR-tiles, same for n)
                   x k-loop use (kc FMA cycles / (kc + C-tile load/store))
                   x thread balance (work blocks / blocks rounded up to nt)
    t_pack     = elements packed x cycles per element / (clock x threads)
                 (1 cycle with one stride per block, 3 when gathered),
                 + SCATTER_CYCLES per element of C tiles stored through a
                 private tile (``scattered_share``)
    t_memory   = bytes moved / bandwidth; bytes moved = A once (again per
                 NC-block of n when A does not fit in L3) + B once + C
                 written once (read and written again for every extra
                 KC-block of k)
    t_overhead = 4 us per call (plan lookup, Python, thread team wake-up)
                 + 0.5 us per GEMM of a batch loop

m == 1 or n == 1 runs ep_gemm's no-pack GEMV path (ep_gemv.c): priced as
max(flops / (peak x 0.5), bytes / bandwidth) + overhead, nothing packed.

The model is deliberately coarse: the slow test in tests/test_explain.py
checks it against a measured GEMM within a factor of 3.
"""
from __future__ import annotations

import math
import os
import re
import threading
import time
from dataclasses import asdict, dataclass, replace

import numpy as np

from . import _native
from .plan import KernelChoice, KernelPath, ParallelLoop

# vector width in bits of the micro-kernels of each ISA
VECTOR_BITS = {"avx512": 512, "avx2": 256, "generic": 128}
# FMA units per core assumed before the calibration run refines it
TABLE_FMA_UNITS = {"avx512": 2, "avx2": 2, "generic": 2}
GEMM_EFFICIENCY = 0.9          # full GEMM / micro-kernel rate (see docstring)
GEMV_EFFICIENCY = 0.5          # no-pack GEMV loops vs FMA peak, data in cache (rough)
SMM_EFFICIENCY = 0.85           # narrow in-place GEMM (smm): 0.8-0.95 measured for n >= 16
SMM_K_CYCLES = 1.0             # at least, per row of C and k on the smm path: A's element
                               # broadcast from memory for one FMA ('ij,jk->ik' (200,1000) x
                               # (1000,n) f32 and f64, n of one vector: 1.0 whatever n)
SMM_ROW_CYCLES = 12.0          # per row of C on the smm path ('abc,cd->adb' (2710,8,4) x
                               # (4,3) f32, n = 3, k = 4: 15 cycles a row, Zen 3, 2026-11)
CALL_OVERHEAD_S = 4e-6         # per einsum call
GEMM_OVERHEAD_S = 0.5e-6       # per GEMM of a batch loop
STEP_OVERHEAD_S = 1e-6         # per numpy (reduce / copy) step
PACK_CYCLES = {"strided": 1.0, "gather": 3.0}   # per element packed
SCATTER_CYCLES = 2.5           # per element of a C tile stored element by element through
                               # a private tile (its columns or rows cross a break in C's
                               # strides): 'ij...,jk...->ik...' (80,5,4,3) x (5,465,1,1)
                               # f32, Zen 4: 0.78 ns an element, 0.18 when C's tiles are
                               # regular
DEFAULT_BANDWIDTH_GBS = 10.0
MEMORY_OVERLAP = 0.5           # share of the lesser of memory and work time not hidden
STRIDED_PENALTY = 3.0          # permuted copies (see predict_stream)
CALIBRATION_BYTES = 64 << 20


@dataclass(frozen=True)
class Machine:
    """What the model knows about this CPU (all of it printed by explain)."""
    cpu: str
    isa: str                  # micro-kernel set in use
    vector_bits: int
    fma_units: int
    fma_units_source: str
    clock_ghz: float
    clock_source: str
    nominal_clock_ghz: float | None
    bandwidth_gbs: float
    bandwidth_source: str
    threads: int
    l1d: int
    l2: int
    l3: int

    def lanes(self, dtype) -> int:
        return self.vector_bits // (8 * _real_itemsize(dtype))

    def peak_gflops(self, dtype, threads: int = 1) -> float:
        """lanes x 2 x FMA units x clock x threads, in GFLOP/s."""
        return self.lanes(dtype) * 2 * self.fma_units * self.clock_ghz * max(threads, 1)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["peak_gflops_per_core"] = {dt: round(self.peak_gflops(dt), 3)
                                     for dt in ("float32", "float64")}
        return d


_MACHINE: Machine | None = None
_LOCK = threading.Lock()


def machine(refresh: bool = False) -> Machine:
    """The calibrated Machine (cached for the process; ``refresh`` re-measures)."""
    global _MACHINE
    with _LOCK:
        if _MACHINE is None or refresh:
            _MACHINE = _calibrate()
        elif _MACHINE.isa != _native.isa() or _MACHINE.threads != _native.get_num_threads():
            # the ISA or thread count was changed at run time: keep the
            # measured clock and bandwidth, update the rest
            m = _MACHINE
            isa = _native.isa()
            _MACHINE = Machine(m.cpu, isa, VECTOR_BITS.get(isa, 128), m.fma_units,
                               m.fma_units_source, m.clock_ghz, m.clock_source,
                               m.nominal_clock_ghz, m.bandwidth_gbs, m.bandwidth_source,
                               _native.get_num_threads(), m.l1d, m.l2, m.l3)
        return _MACHINE


def _real_itemsize(dtype) -> int:
    dt = np.dtype(dtype)
    return dt.itemsize // 2 if dt.kind == "c" else dt.itemsize


def _cpuinfo():
    """(model name, nominal clock in GHz or None) from /proc/cpuinfo."""
    name, mhz = "unknown CPU", None
    try:
        with open("/proc/cpuinfo") as f:
            text = f.read()
    except OSError:
        return name, mhz
    m = re.search(r"^model name\s*:\s*(.+)$", text, re.M)
    if m:
        name = m.group(1).strip()
    speeds = [float(x) for x in re.findall(r"^cpu MHz\s*:\s*([\d.]+)", text, re.M)]
    for path in ("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq",):
        try:
            with open(path) as f:
                speeds.append(int(f.read()) / 1000.0)
        except (OSError, ValueError):
            pass
    if speeds:
        mhz = max(speeds) / 1000.0
    return name, mhz


def _env_float(name):
    v = os.environ.get(name)
    if v is None or v == "":
        return None
    try:
        return float(v)
    except ValueError:
        return None


PROBE_RETRIES = 2       # extra micro-kernel runs before one FMA unit is believed


def _ukr_gflops(isa: str) -> tuple[float, str]:
    """Best float32 FLOP rate of ``isa``'s micro-kernel on panels in L1."""
    mr, nr = _native._require().tile(isa, np.float32)
    gf = _native.probe_ukr_gflops(isa, np.float32)
    return gf, f"{isa} float32 {mr}x{nr} micro-kernel"


def _measure_bandwidth() -> float:
    """GB/s of a 64 MB np.copyto (bytes read + written), best of 3."""
    n = CALIBRATION_BYTES // 8
    src = np.ones(n)
    dst = np.empty_like(src)
    np.copyto(dst, src)  # first touch: page faults are not bandwidth
    best = math.inf
    for _ in range(3):
        t0 = time.perf_counter()
        np.copyto(dst, src)
        best = min(best, time.perf_counter() - t0)
    return 2.0 * src.nbytes / best / 1e9


def infer_fma_units(gflops, per_cycle, nominal_ghz, units=None):
    """(FMA units, implied clock in GHz) that explain a measured float32 rate:
    the larger count (2, then 1) whose implied clock is at least 0.8 x the
    nominal one, or ``units`` when it is given.  The two answers differ by a
    factor of 2 in clock, so 0.8 tells a double-pumped unit (Zen 4's
    AVX-512 at up to 1.5x turbo reads as 0.75x at two units) from two."""
    cands = [units] if units else [2, 1]
    for u in cands:
        implied = gflops / (per_cycle * u)
        if nominal_ghz is None or implied >= 0.8 * nominal_ghz or u == cands[-1]:
            return u, implied
    raise AssertionError("unreachable: the last candidate is always taken")


def _calibrate() -> Machine:
    cfg = _native.kernel_config()
    isa = cfg["isa"]
    cpu, nominal = _cpuinfo()
    calibrate = os.environ.get("EINPLAN_MODEL_CALIBRATE", "1") not in ("0", "no", "false")

    units = int(_env_float("EINPLAN_FMA_UNITS") or 0) or None
    units_src = "EINPLAN_FMA_UNITS" if units else ""
    clock = _env_float("EINPLAN_CLOCK_GHZ")
    clock_src = "EINPLAN_CLOCK_GHZ" if clock else ""
    if clock is None:
        simd = [i for i in ("avx512", "avx2") if i in cfg["available_isas"]]
        measured = None
        if calibrate and simd:
            try:
                measured = _ukr_gflops(simd[0])
            except (AttributeError, ValueError, TypeError):  # kernel API changed: no run
                measured = None
        if measured is not None:
            gf, what = measured
            per_cycle = VECTOR_BITS[simd[0]] // 32 * 2     # float32 flops per FMA-unit cycle
            u, implied = infer_fma_units(gf, per_cycle, nominal, units)
            # A run that reads as one unit may be a core shared with other work
            # for those 20 ms: halving the peak would steer every plan of the
            # process, so one unit is believed only after it is measured again.
            for _ in range(PROBE_RETRIES):
                if units or u > 1:
                    break
                gf = max(gf, _ukr_gflops(simd[0])[0])
                u, implied = infer_fma_units(gf, per_cycle, nominal, units)
            if not units:
                units = u
                units_src = (f"inferred: {gf:.0f} GFLOP/s of the {what} is "
                             f"{per_cycle * u} flop/cycle at {implied:.2f} GHz")
            if nominal is None or implied > nominal:
                clock = implied
                clock_src = (f"measured: {what} at {gf:.1f} GFLOP/s"
                             + (f" (/proc/cpuinfo says {nominal:.2f} GHz)" if nominal else ""))
            else:
                clock = nominal
                clock_src = (f"/proc/cpuinfo (the {what} ran at {gf:.1f} GFLOP/s, "
                             f"{implied:.2f} GHz-equivalent)")
        else:
            clock = nominal or 2.0
            clock_src = "/proc/cpuinfo (not measured)" if nominal else "assumed 2.0 GHz"
    if not units:
        units = TABLE_FMA_UNITS.get(isa, 1)
        units_src = "table (not measured)"

    bw = _env_float("EINPLAN_BANDWIDTH_GBS")
    if bw is not None:
        bw_src = "EINPLAN_BANDWIDTH_GBS"
    elif calibrate:
        bw = _measure_bandwidth()
        bw_src = f"measured: np.copyto of {CALIBRATION_BYTES >> 20} MB, best of 3"
    else:
        bw, bw_src = DEFAULT_BANDWIDTH_GBS, "assumed (EINPLAN_MODEL_CALIBRATE=0)"

    c = cfg["caches"]
    return Machine(cpu, isa, VECTOR_BITS.get(isa, 128), units, units_src, float(clock),
                   clock_src, nominal, float(bw), bw_src, int(cfg["threads"]),
                   int(c["l1d"]), int(c["l2"]), int(c["l3"]))


# -- the schedule ep_gemm runs (ep_schedule.c), and its price ---------------------

@dataclass(frozen=True)
class GemmSchedule:
    """A GemmStep's KernelChoice with the sizes and tile counts it implies."""
    M: int
    N: int
    K: int
    NB: int                 # GEMMs in the batch loop
    mr: int
    nr: int
    mc: int
    kc: int
    nc: int
    threads: int
    loop: ParallelLoop      # what the threads share out
    n_jc: int               # NC-blocks of n
    n_pc: int               # KC-blocks of k
    n_ic: int               # MC-blocks of m
    tiles: int              # C micro-tiles per GEMM
    fringe_tiles: int       # of which partial (m % MR or n % NR)
    path: KernelPath = KernelPath.GEMM
    direct_b: bool = False  # full B panels read in place (small m)


def _ceil(a, b):
    return -(-a // b)


def schedule_of(choice: KernelChoice, M, N, K, NB) -> GemmSchedule:
    """The sizes and tile counts of a GEMM of M x N x K (x NB) run as
    ``choice`` says (a 1m step: N and K of its real GEMM)."""
    c = choice
    if c.path in (KernelPath.GEMV, KernelPath.SMM):
        return GemmSchedule(M, N, K, NB, c.mr, c.nr, 0, 0, 0, c.threads, c.loop,
                            0, 0, 0, 0, 0, c.path, False)
    mc, kc, nc = c.mc, c.kc, c.nc
    # tiles: per MC-block ceil(mc_i / MR) rows of tiles, per NC-block ceil(nc_j / NR)
    m_tiles, m_fringe = _tiles(M, mc, c.mr)
    n_tiles, n_fringe = _tiles(N, nc or 1, c.nr)
    tiles = m_tiles * n_tiles
    full = (m_tiles - m_fringe) * (n_tiles - n_fringe)
    return GemmSchedule(M, N, K, NB, c.mr, c.nr, mc, kc, nc, c.threads, c.loop,
                        _ceil(N, nc) if N and nc else 0, _ceil(K, kc) if K and kc else 0,
                        _ceil(M, mc) if M and mc else 0, tiles, tiles - full,
                        KernelPath.GEMM, c.b_in_place)


def gemm_schedule(M, N, K, NB, threads: int, dtype=np.float64) -> GemmSchedule:
    """What ``ep_gemm`` would do with a contiguous GEMM of these sizes (a
    GEMM no plan holds: explain's loop that a merge avoids), asked from the
    C core's own schedule function.  A plan's steps carry theirs
    (``GemmStep.kernel``)."""
    call = _native.prepare_gemm(dtype, [(M, K, N)] if M != 1 else [],
                                [(N, 1, 1)] if N != 1 else [],
                                [(K, 1, N)] if K != 1 else [],
                                [(NB, M * K, K * N, M * N)] if NB != 1 else [])
    s = call.schedule(int(threads))
    return schedule_of(KernelChoice.from_schedule(s, bool(s["direct_b"])), M, N, K, NB)


def _tiles(extent, block, tile):
    """(tiles, partial tiles) along one dimension cut into blocks, then tiles."""
    if extent <= 0:
        return 0, 0
    total = fringe = 0
    for start in range(0, extent, block):
        b = min(block, extent - start)
        total += _ceil(b, tile)
        fringe += 1 if b % tile else 0
    return total, fringe


@dataclass(frozen=True)
class Prediction:
    """The model's price of one step (seconds and what they come from)."""
    flops: float
    bytes_moved: float
    bytes_packed: float
    t_compute: float
    t_pack: float
    t_memory: float
    t_overhead: float
    seconds: float
    bound: str              # "compute", "memory" or "overhead"
    efficiency: float       # E of the docstring (compute-side)
    threads: int

    def gflops(self):
        return self.flops / self.seconds / 1e9 if self.seconds > 0 else 0.0


def _crossing_share(axes, tile, c2=1):
    """Share of the tiles of ``tile`` indices along a role's axes (Axis,
    outer to inner, C's stride last) that cross a break in C's strides: the
    run of inner axes C walks at one stride ends inside them.  ``c2``: the
    real elements a complex one is (1m's doubled n)."""
    run = axes[-1].extent if axes else 1
    for outer, inner in zip(axes[-2::-1], axes[:0:-1]):
        if outer.strides[-1] != inner.extent * inner.strides[-1]:
            break
        run *= outer.extent
    else:
        return 0.0          # one stride across every axis: no break
    run *= c2
    if run % tile == 0:
        return 0.0
    period = run // math.gcd(run, tile)
    if period > 4096:
        return min(1.0, tile / run)
    return sum(1 for t in range(period) if (t * tile) % run + tile > run) / period


def tiles_scattered(m_axes, n_axes, mr, nr, c2=1) -> float:
    """Share of the MR x NR tiles of C over m's and n's axes (Axis, outer to
    inner, C's stride last) whose rows or columns cross a break in C's
    strides: those stored element by element through a private tile
    (ep_macro_kernel_template.h).  ``c2``: 2 for 1m's doubled n."""
    sm = _crossing_share(m_axes, mr)
    sn = _crossing_share(n_axes, nr, c2)
    return 1.0 - (1.0 - sm) * (1.0 - sn)


def scattered_share(step) -> float:
    """``tiles_scattered`` of a GemmStep (0 off the packed engine)."""
    k = step.kernel
    if k is None or k.path != KernelPath.GEMM:
        return 0.0
    c2 = 2 if step.complex_mode == "1m" else 1
    return tiles_scattered(step.m.axes, step.n.axes, k.mr, k.nr, c2)


def predict_gemm(mach: Machine, dtype, sched: GemmSchedule, bytes_a: float, bytes_b: float,
                 bytes_c: float, n_real_gemms: int = 1, gather_a: bool = False,
                 gather_b: bool = False, overhead_call: bool = True,
                 direct_b: bool = False, scattered: float = 0.0) -> Prediction:
    """Price one GemmStep run as ``sched`` (``n_real_gemms``: 4 or 2 for
    complex; ``scattered``: the share of C tiles stored element by element,
    ``scattered_share``)."""
    s = sched
    item = _real_itemsize(dtype)
    flops = 2.0 * s.M * s.N * s.K * s.NB * n_real_gemms
    if s.path in (KernelPath.GEMV, KernelPath.SMM):
        # no packing: GEMV uses every matrix element once (memory-bound, dot /
        # axpy loops at about half the FMA peak in cache); smm runs narrow
        # GEMMs in place with masked vectors
        eff = GEMV_EFFICIENCY if s.path == KernelPath.GEMV else SMM_EFFICIENCY
        nr_ = n_real_gemms if n_real_gemms > 1 else 1
        moved = (bytes_a + bytes_b + bytes_c) * nr_
        t_c = flops / (mach.peak_gflops(dtype, s.threads) * 1e9 * eff)
        body_overlap = 0.0
        if s.path == KernelPath.SMM:
            # per row of C: an FMA per k and vector of n (a narrow n fills
            # part of its vector), at least a broadcast of A's element per
            # k, and the row's loads and stores
            rows = s.M * s.NB * nr_
            per_k = max(SMM_K_CYCLES, _ceil(s.N, mach.lanes(dtype)) / (mach.fma_units * eff))
            cyc = rows * (per_k * s.K + SMM_ROW_CYCLES)
            t_c = cyc / (mach.clock_ghz * 1e9 * max(s.threads, 1))
            # A is read in place by those broadcasts, which wait on its
            # lines: the traffic hides behind them only in part, as in the
            # loop nest ('ij,jk,kl->il' (636,14765) x (14765,1) x (1,4) f32:
            # the smm step with n = 4, 3.5 ms, priced below the GEMV path's
            # 1.4 ms)
            body_overlap = MEMORY_OVERLAP
        t_m = moved / (mach.bandwidth_gbs * 1e9)
        t_o = (CALL_OVERHEAD_S if overhead_call else 0.0) + GEMM_OVERHEAD_S * s.NB * nr_
        body = max(t_c, t_m) + body_overlap * min(t_c, t_m)
        bound = "overhead" if t_o > body else ("memory" if t_m > t_c else "compute")
        return Prediction(flops, moved, 0.0, t_c, 0.0, t_m, t_o, body + t_o, bound,
                          eff, s.threads)
    # compute: tile use, k-loop use, thread balance
    m_pad = _padded(s.M, s.mc, s.mr)
    n_pad = _padded(s.N, s.nc or 1, s.nr)
    tile_use = (s.M / m_pad if m_pad else 1.0) * (s.N / n_pad if n_pad else 1.0)
    lanes = mach.lanes(dtype)
    fma_cycles = max(s.kc, 1) * s.mr * s.nr / (lanes * mach.fma_units)
    ctile_cycles = 2.0 * s.mr * s.nr / lanes + 20.0
    k_use = fma_cycles / (fma_cycles + ctile_cycles)
    if s.loop == ParallelLoop.BATCH:
        units = s.NB
    elif s.loop == ParallelLoop.M:
        units = s.n_ic
    elif s.loop == ParallelLoop.N:
        units = _ceil(s.nc, s.nr) if s.nc else 1
    else:
        units = 1
    balance = units / (_ceil(units, s.threads) * s.threads) if units else 1.0
    eff = GEMM_EFFICIENCY * tile_use * k_use * balance
    peak = mach.peak_gflops(dtype, s.threads) * 1e9
    t_compute = flops / (peak * eff) if flops else 0.0
    # packing: A once per NC-block (by every thread when they split jr), B once
    # per GEMM; padded to whole micro-panels inside the buffer
    a_pack_copies = s.n_jc * (s.threads if s.loop == ParallelLoop.N else 1)
    elems_a = m_pad * s.K * a_pack_copies
    elems_b = n_pad * s.K
    if direct_b:   # full NR panels read in place; only the fringe panel is packed
        elems_b = (s.nr if s.N % s.nr else 0) * s.K
    elems = (elems_a + elems_b) * s.NB * n_real_gemms
    bytes_packed = elems * item
    cyc = ((elems_a * PACK_CYCLES["gather" if gather_a else "strided"]
            + elems_b * PACK_CYCLES["gather" if gather_b else "strided"])
           * s.NB * n_real_gemms)
    # scattered tiles: every element of the tile, at every KC pass
    cyc += (scattered * m_pad * n_pad * max(s.n_pc, 1) * s.NB * n_real_gemms
            * SCATTER_CYCLES)
    t_pack = cyc / (mach.clock_ghz * 1e9 * s.threads)
    # memory traffic
    a_reads = 1 if bytes_a * s.NB <= mach.l3 / 2 else max(s.n_jc, 1)
    # C counts twice per KC pass: read (or read for ownership, on the first
    # pass's write) and written back, as the loop nest's traffic counts its output
    bytes_moved = (bytes_a * a_reads + bytes_b + bytes_c * 2 * max(s.n_pc, 1)) \
        * (n_real_gemms if n_real_gemms > 1 else 1)
    t_memory = bytes_moved / (mach.bandwidth_gbs * 1e9)
    t_over = (CALL_OVERHEAD_S if overhead_call else 0.0) + GEMM_OVERHEAD_S * s.NB * n_real_gemms
    t_work = t_compute + t_pack
    # the micro-kernel's stores of C stall on lines not yet in cache, so the
    # memory traffic hides behind the arithmetic only in part ('ik,km->im'
    # with k = 18 writing 73 MB: 17 ms where the larger of the two is 10 ms)
    body = max(t_work, t_memory) + MEMORY_OVERLAP * min(t_work, t_memory)
    seconds = body + t_over
    if t_over > body:
        bound = "overhead"
    elif t_memory > t_work:
        bound = "memory"
    else:
        bound = "compute"
    return Prediction(flops, bytes_moved, bytes_packed, t_compute, t_pack, t_memory, t_over,
                      seconds, bound, eff, s.threads)


def _padded(extent, block, tile):
    total, _ = _tiles(extent, block, tile)
    return total * tile


def predict_stream(mach: Machine, bytes_moved: float, flops: float = 0.0,
                   overhead_call: bool = False, strided: bool = False) -> Prediction:
    """Price a memory-bound numpy step (sum over a view, copy, cast).

    ``strided``: source and destination disagree on their unit-stride axis
    (a permutation), so one side is walked a cache line per element; priced
    at 1/STRIDED_PENALTY of the bandwidth (numpy.copyto of the TVM case
    'ncabhw->nchawb' (1,32,2,2,360,640) f32: 4.7 GB/s vs 13 GB/s for a plain
    copy, AMD EPYC Zen 4, 2026-11).
    """
    bw = mach.bandwidth_gbs / (STRIDED_PENALTY if strided else 1.0)
    t_mem = bytes_moved / (bw * 1e9)
    t_over = STEP_OVERHEAD_S + (CALL_OVERHEAD_S if overhead_call else 0.0)
    seconds = t_mem + t_over
    return Prediction(flops, bytes_moved, 0.0, 0.0, 0.0, t_mem, t_over, seconds,
                      "memory" if t_mem > t_over else "overhead", 1.0, 1)


N_REAL_GEMMS = {"": 1, "cc": 4, "1m": 1}   # real GEMMs per complex mode


def cycle_machine() -> Machine:
    """This CPU as the model sees it before any calibration run, at a clock
    of 1 GHz: times it predicts are cycles (in ns).  For comparing kernels by
    their compute-side cost, which the clock does not change."""
    cfg = _native.kernel_config()
    isa = cfg["isa"]
    c = cfg["caches"]
    return Machine("", isa, VECTOR_BITS.get(isa, 128), TABLE_FMA_UNITS.get(isa, 1), "table",
                   1.0, "unit", None, DEFAULT_BANDWIDTH_GBS, "assumed", int(cfg["threads"]),
                   int(c["l1d"]), int(c["l2"]), int(c["l3"]))


def gemm_cycles(steps, dtype) -> float:
    """Compute-side cycles of a plan's GemmSteps (arithmetic at the tile use
    of their schedule, packing, a GEMM call's start-up), one thread: what the
    packed GEMM engine spends beyond reading the operands once.  Other steps
    count one cycle per element they touch."""
    mach = cycle_machine()
    real = np.dtype(dtype).type(0).real.dtype
    item = np.dtype(dtype).itemsize
    cycles = 0.0
    for st in steps:
        if getattr(st, "engine", "") != "gemm" or st.kernel is None:
            cycles += math.prod(getattr(st, "src_shape", ()) or (1,))
            continue
        c2 = 2 if st.complex_mode == "1m" else 1
        M, N, K, NB = st.m.extent, st.n.extent, st.k.extent, st.batch.extent
        sched = schedule_of(st.kernel, M, c2 * N, c2 * K, NB)
        sched = replace(sched, threads=1)
        gather_a = len(st.m.axes) > 1 or len(st.k.axes) > 1
        gather_b = len(st.n.axes) > 1 or len(st.k.axes) > 1
        pred = predict_gemm(mach, real, sched, NB * M * K * item, NB * K * N * item,
                            NB * M * N * item, N_REAL_GEMMS.get(st.complex_mode, 1),
                            gather_a, gather_b, overhead_call=False,
                            direct_b=st.kernel.b_in_place, scattered=scattered_share(st))
        cycles += (pred.t_compute + pred.t_pack + pred.t_overhead) * 1e9
    return cycles
