"""Step 2g for the loop-nest engine: the loops of one sum of products.

``nest_step`` turns operands (labels and element strides) and a destination
into a ``NestStep``: the loops (one per label of extent > 1) ordered so the
innermost -- the row the SIMD kernel runs -- touches the fewest cache lines
per element, the others outermost-largest-stride first, adjacent loops
merged where every operand allows it, two innermost loops tiled when the
operands disagree on which axis is unit-stride, and the loop threads share.

``choose_engine`` is the rule between the two engines for one pairwise step:
the packed GEMM engine where m, n and k are all worth a micro-kernel tile,
the loop nest otherwise (elementwise products, reductions, dots, GEMVs,
outer products, tiny GEMMs): packing a panel pays only when each element is
reused across a tile.

A GEMM-like step may run its three innermost loops in the register-tile
kernel (``_ctile_order``, ``ctile_cycles``): an output tile in registers
while the summed loop streams through both inputs once.  Complex: chosen
where it is predicted cheaper than the plain nest, and against the packed
engine for a complex GEMM with a short edge (``ctile_by_cost``).  Real:
where it reads its x in place and moves what one pass over the operands
does (``ctile_reads_once``), against the packed engine by predicted compute
(``engine_by_cost``).
"""
from __future__ import annotations

import functools
import itertools
import math
import os

from . import _native
from .model import VECTOR_BITS, gemm_cycles
from .plan import KernelKind, NestLoop, NestStep

LINE = 64                # bytes per cache line
ROW_OVERHEAD = 64.0     # bytes-equivalent cost of starting a row (~4 ns in the rows kernels)
PAGE = 4096              # bytes per page
PAGE_STEPS = 4           # fewer elements of a row per page: FAR_ROW_COST (_line_cost)
FAR_ROW_COST = 1.25      # a far-strided row's line cost beyond L2
TLB_PAGES = 64           # pages the first-level data TLB holds
TLB_L2_COST = 0.5        # a line from L2 behind a TLB miss, relative to memory
THREAD_WORK = 1 << 18    # element-operand visits (of 4 bytes) worth one more thread:
                         # Emerald Rapids, 2 threads, back to back, f64 'a,a->' of
                         # 100000 21 -> 12 us, 'ab,b->a' (1000,100) 15 -> 10 us; halved
                         # again, 'a,a->' of 60000 2 ms after the last call took 182 us
                         # on two (woken workers) against 47 us on one
L3_SHARE = 8 << 20       # what one core may count on keeping in the shared L3
L3_REREAD = 0.25         # cost of re-reading from L3, relative to memory
RAGGED_ROW = 8 * LINE    # a contiguous row shorter than this pays its partial end lines
RAGGED_START = 256.0     # bytes-equivalent of a stream restarted past a gap (~20 ns)
RAGGED_GAP = 4 * LINE    # a gap between rows this long breaks the prefetcher's stream
RESTART_RUN = 4 * PAGE   # a run this long hides its stream's restart (under 2% of its time)
PREFETCH_STREAMS = 32    # interleaved streams the hardware prefetcher follows: rows that each
                         # continue their own stream, interleaved with more, are ragged
MIN_GEMM_EDGE = 4        # m, n, k all at least this for the packed engine
MAXIN = 8                # inputs of one nest (ep_nest.h)


@functools.lru_cache(maxsize=None)
def l2_bytes() -> int:
    """This core's L2, as the CPU reports it."""
    return _native.kernel_config()["caches"]["l2"]


@functools.lru_cache(maxsize=None)
def l1_bytes() -> int:
    """This core's L1 data cache, as the CPU reports it."""
    return _native.kernel_config()["caches"]["l1d"]


@functools.lru_cache(maxsize=None)
def l2_resident() -> int:
    """Bytes that stay in this core's L2 however they are walked, while
    other data streams past: three quarters of the L2 the CPU reports."""
    return l2_bytes() * 3 // 4


@functools.lru_cache(maxsize=None)
def l3_per_core() -> int:
    """The L3 counted (the reported one, at most 16 MiB per CPU) over the
    cores, or L3_SHARE when none is reported: where re-visited lines may
    still be found.  L3_SHARE, a smaller
    fixed figure, stays the bound for whole re-reads of an operand."""
    l3 = _native.kernel_config()["caches"]["l3"]
    return l3 // (os.cpu_count() or 1) if l3 > 0 else L3_SHARE


def tile_bytes() -> int:
    """Bytes a tile of every operand may take together (they share L2)."""
    return l2_resident()

_DTYPE_CODE = {"float32": 0, "float64": 1, "complex64": 2, "complex128": 3}


def thread_cap(visits: int, itemsize: int = 4) -> int:
    """Threads worth starting for a nest of this many element-operand
    visits (inputs and output summed over every iteration), counted in
    4-byte units: a complex128 element is four float32s' bytes and multiply-
    adds ('abc,a->bc' (86,239,14) c128 on 2 threads: 87 us on one, 48 us on
    two, numpy 53)."""
    return max(1, min(64, visits * max(1, itemsize // 4) // THREAD_WORK))


def nest_dtype_ok(dtype) -> bool:
    return str(dtype) in _DTYPE_CODE


def choose_engine(m: int, n: int, k: int) -> str:
    """'gemm' when the step's m, n and k extents all reach MIN_GEMM_EDGE,
    else 'nest' (GEMV, dot, outer, elementwise and thin or tiny GEMMs).
    The structural rule; a thin GEMM (``is_thin``) is then decided by
    ``engine_by_cost`` between both engines' plans."""
    return "gemm" if min(m, n, k) >= MIN_GEMM_EDGE else "nest"


def is_thin(m: int, n: int, k: int) -> bool:
    """A GEMM (m, n, k all >= 2) with an edge below MIN_GEMM_EDGE: the
    packed engine's narrow paths (smm: n in one vector row, A and C in
    place) and the nest's rows both may win there."""
    return 2 <= min(m, n, k) < MIN_GEMM_EDGE


ONE_TILE = 8    # m and n both this small: the packed engine's output is one register tile


def is_one_tile(m: int, n: int, k: int) -> bool:
    """A GEMM whose m and n both fit one register tile of the packed
    kernel (at most ONE_TILE), k of any length: packing A and B then costs
    a write and a re-read of every element for n (or m) uses of it, while
    the nest's dots, the row in blocks, read each element once and re-read
    it from L2 ('...i,...i->...' (1,4,148254) x (5,1,148254) f64: packed
    2.5 ms, nest 0.8 ms).  Both engines are planned and priced
    (``engine_by_cost``), real dtypes only."""
    return min(m, n, k) >= MIN_GEMM_EDGE and max(m, n) <= ONE_TILE


def is_short_k(m: int, n: int, k: int) -> bool:
    """A GEMM with k at most MAX_SHORT: the small-edge kernel holds k in
    registers around the output's rows and may beat the packed engine,
    whose micro-kernel calls cost more than their few rank-1 updates
    ('ij,jk->ik' (4000, 4) x (4, 100) f64: 326 us packed, 148 us in the
    nest) -- and, for rows shorter than a vector (a point set times a
    small matrix, (N, 4) x (4, 4)), runs them across in vectors.  Both
    engines are planned and priced (``engine_by_cost``), real dtypes only."""
    return min(m, n, k) >= MIN_GEMM_EDGE and k <= MAX_SHORT


NEST_ROW_START = 20.0    # cycles to start one row of the nest (pointers, a call, a store)
COMPLEX_OPS = 4          # real multiply-adds per complex one


def vector_lanes(real_itemsize: int) -> int:
    """Lanes of the row kernels' vectors for a real element of this size
    under the kernel set in use."""
    return max(1, VECTOR_BITS.get(_native.isa(), 128) // 8 // real_itemsize)


DOTV_BYTES = 1024    # longest row the rows kernel dots a vector of rows at a time against
                     # a vector every row shares (ep_nest_template.h's NT_DOTV_BYTES)
FOLD_ROW = 1 << 20   # longest row whose shared inputs the rows kernel multiplies once
                     # (ep_nest_template.h's NT_SHARED_MAX)
PERIOD_VECTORS = 16  # longest row, in vectors, the rows kernel holds in registers
                     # summed into one row (ep_nest_template.h's NT_PERIOD_V)
VEC4_BYTES = 512     # longest row the rows kernel sums four at a time (vec4) ...
VEC4_RUN_BYTES = 2048  # ... and of a single input's rows end to end


def _runs_dotv(n, R, rs, out_step, itemsize) -> bool:
    """Whether R unit-stride dots of n into an output element each (the
    output ``out_step`` apart), the two inputs ``rs`` apart from row to row,
    run a vector of rows at a time (rows_dotv): one input shared by every
    row, the other moving forward when the rows are shorter than a vector
    (rows_dotv_part reads past each row's end)."""
    lanes = vector_lanes(itemsize)
    return ((rs[0] == 0) != (rs[1] == 0) and out_step != 0 and R >= lanes
            and n * itemsize <= DOTV_BYTES and (n >= lanes or (n >= 2 and max(rs) > 0)))


PICK_N = 8          # longest row the rows kernel picks a vector of rows at a time from
                    # (ep_nest.h's EP_PICK_N) ...
PICK_ROWS = 2       # ... in at least this many vectors of rows (NT_PICK_ROWS)
# longest forward row dotted with a shared vector that is picked, by (element,
# vector) bytes (EP_PICK_SHARED_N; longer ones a row per load, rows_dotv)
PICK_SHARED_N = {(4, 64): 5, (8, 64): 7, (4, 32): 3, (8, 32): 3}


def runs_picked(n, R, rs, shared, out_step, itemsize) -> bool:
    """Whether R rows of n unit-stride elements, each summed into an output
    element (``out_step`` apart), run a vector of rows at a time with no
    per-row work (rows_picked, 32- or 64-byte vectors): rows shorter than a vector
    end to end (``rs``: the one or two moving inputs' row strides, all n or
    all -n), at most one input ``shared`` by every row ('ij,j->i' (N, 3)
    f64: 24 GB/s, 14 a row per load)."""
    lanes = vector_lanes(itemsize)
    return (lanes * itemsize >= 32 and 2 <= n <= PICK_N and n < lanes
            and R >= PICK_ROWS * lanes and out_step != 0 and 1 <= len(rs) <= 2
            and shared <= 1 and len(rs) + shared <= 2
            and abs(rs[0]) == n and all(r == rs[0] for r in rs)
            and not (shared and rs[0] > 0
                     and n > PICK_SHARED_N.get((itemsize, lanes * itemsize), 0)))


def picked_rows(loops, itemsize) -> bool:
    """Whether the rows kernel runs the two innermost of real ``loops``
    (NestLoops) by ``runs_picked``: the row summed, every input moving along
    it at unit stride."""
    if len(loops) < 2 or loops[-1].strides[-1] != 0:
        return False
    outer, row = loops[-2], loops[-1]
    moving = [j for j, st in enumerate(row.strides[:-1]) if st != 0]
    if not moving or any(row.strides[j] != 1 for j in moving):
        return False
    rs = [outer.strides[j] for j in moving]
    return runs_picked(row.extent, outer.extent, [r for r in rs if r != 0], rs.count(0),
                       outer.strides[-1], itemsize)


def _rows_into_one(loops, itemsize) -> int:
    """Rows per start of the rows kernel on real rows summed into one
    output row (ep_nest_template.h's rows_into_one: the output's row
    contiguous and constant along the loop around it, one or two inputs
    contiguous along the row and at most one constant along it): every row
    of the loop in one call, the output row held in registers; else 1."""
    outer, row = loops[-2], loops[-1]
    n, R = row.extent, outer.extent
    if row.strides[-1] != 1 or outer.strides[-1] != 0 or R < 16:
        return 1
    moving = [j for j, st in enumerate(row.strides[:-1]) if st != 0]
    fixed = len(row.strides) - 1 - len(moving)
    if not 1 <= len(moving) <= 2 or fixed > 1 or any(row.strides[j] != 1 for j in moving):
        return 1
    lanes = vector_lanes(itemsize)
    held = (n >= lanes or len(moving) == 2 or fixed
            or (n >= 2 and outer.strides[moving[0]] > 0))   # else the plain rows
    return R if held or n > PERIOD_VECTORS * lanes + lanes - 1 else 1


SHORT_PLAIN_N = 16   # longest kept row of one or two inputs the rows kernel runs as a plain
                     # loop per row, every row in one call (ep_nest_template.h's rows_prod)


def short_kept_rows(loops, itemsize, complex_=False) -> str:
    """How the rows kernel (rows_prod) runs a loop of short kept rows -- the
    output moving along the row and along the loop around it -- in one call,
    none of row_prod's set-up per row: "vector" (a real row of one to four
    vectors, the inputs at stride 1 or 2, the output contiguous:
    rows_short_vec; or shorter than a vector, every stride 1: two narrower
    vectors, rows_sub_vec), "plain" (a row of at most SHORT_PLAIN_N
    elements of one or two inputs: an element loop per row), else "" (row_prod
    per row, or a kernel priced elsewhere)."""
    if len(loops) < 2:
        return ""
    outer, row = loops[-2], loops[-1]
    n = row.extent
    if row.strides[-1] == 0 or outer.strides[-1] == 0 or outer.extent < 2:
        return ""
    moving = [st for st in row.strides[:-1] if st != 0]
    if not 1 <= len(moving) <= 2:
        return ""
    lanes = vector_lanes(itemsize)
    if (not complex_ and row.strides[-1] == 1 and lanes <= n <= 4 * lanes
            and all(st == 1 or (st == 2 and n > lanes) for st in moving)):
        return "vector"
    # shorter contiguous rows: two half vectors, or quarters of a 64-byte one
    # (rows_sub_vec)
    narrowest = max(2, lanes // 4 if lanes * itemsize == 64 else lanes // 2)
    if (not complex_ and row.strides[-1] == 1 and narrowest <= n < lanes
            and all(st == 1 for st in moving)):
        return "vector"
    if n <= SHORT_PLAIN_N and not any(3 <= abs(st) < 8 for st in moving):
        return "plain"
    return ""


def rows_per_start(loops, itemsize, complex_=False):
    """(rows per row start, inputs folded) of the rows kernel
    (ep_nest_template.h's rows_sum) on real row sums: contiguous rows
    against a vector every row shares run a vector of rows at a time
    (rows_dotv), the first inputs shared by every row multiplied once into
    that vector when there are three or more (folded: one input less per
    element); other short contiguous sums and dots four rows at a time;
    else one row per start."""
    if complex_ or len(loops) < 2:
        return 1, 0
    if loops[-1].strides[-1] != 0:
        return _rows_into_one(loops, itemsize), 0
    outer, row = loops[-2], loops[-1]
    n, R = row.extent, outer.extent
    moving = [j for j, st in enumerate(row.strides[:-1]) if st != 0]
    if not moving or any(row.strides[j] != 1 for j in moving):
        return 1, 0
    if picked_rows(loops, itemsize):
        return R, 0
    rs = [outer.strides[j] for j in moving]
    k = 0
    while k < len(rs) and rs[k] == 0:
        k += 1
    folded = 0
    if len(rs) >= 3 and k >= 2 and n <= FOLD_ROW and R >= 4:
        rs, folded = [0] + rs[k:], k - 1
    lanes = vector_lanes(itemsize)
    if len(rs) == 2 and _runs_dotv(n, R, rs, outer.strides[-1], itemsize):
        return lanes, folded
    if len(rs) <= 2 and n >= lanes and (n * itemsize <= VEC4_BYTES or (
            len(rs) == 1 and rs[0] == n and n * itemsize <= VEC4_RUN_BYTES)):
        return 4, folded
    return 1, folded


def nest_cycles(step, dtype) -> float:
    """Compute-side cycles of a NestStep, one thread: each iteration's
    multiply-adds (complex ones count COMPLEX_OPS) in vectors of the kernel
    set's lanes where the row is vectorised (contiguous, or the small-edge
    kernel), one by one where it gathers, plus NEST_ROW_START per row."""
    real = _itemsize(dtype) // (2 if str(dtype).startswith("complex") else 1)
    lanes = vector_lanes(real)
    ops = len(step.inputs) * (COMPLEX_OPS if str(dtype).startswith("complex") else 1)
    if step.short and not str(dtype).startswith("complex"):
        # the small-edge kernel's products and sums contract into one FMA an
        # element ('ij,kj->ik' (12675,7) x (259,7) f64: 2.3 ms in it, 3.3 ms
        # packed; priced at two operations it went to the packed engine)
        ops = 1
    if not step.loops:
        return NEST_ROW_START
    if getattr(step, "ctile", False) and not str(dtype).startswith("complex"):
        return ctile_parts(step.loops, _itemsize(dtype), False)[0]
    total = math.prod(lp.extent for lp in step.loops)
    row = step.loops[-1].extent * (step.short or 1)
    vec = step.short or step.row.endswith(("contig", "gathered"))
    if not vec and gathers_row(step.loops, lanes):
        # gathered a chunk at a time, then the contiguous row: a vector
        # operation more per strided input ('ij,jk->ki' (3000,1500) x
        # (1500,2) f32, B at stride 2: 1.4 ms here, 2.0 ms packed)
        vec = True
        ops += sum(1 for s in step.loops[-1].strides[:-1] if s not in (0, 1))
    call_cycles = 0.0
    if (step.short and step.row.startswith("short-sum") and len(step.loops) >= 3
            and not str(dtype).startswith("complex")):
        outer, L = step.loops[-3], step.loops[-1]
        moving = [j for j, s in enumerate(L.strides[:-1]) if s != 0]
        # each call of the kernel (its R rows, the loop around S) sets up
        # its pointers: what a call of few short rows mostly costs ('ijk,
        # jkl->il' (11,37376,2):F x (37376,2,2) f32, rows of 2 interleaved,
        # 11 rows a call: 300 cycles a call, 4.3 ms; numpy 1.9)
        call_cycles = total / (outer.extent * step.short * L.extent) * SHORT_CALL
        if len(moving) == 1 and runs_in_halves(outer, L, moving[0], lanes, _itemsize(dtype)):
            # two half vectors a row: S multiply-adds each, a load and a store
            return total / L.extent * (2 * step.short + 2) / step.short + call_cycles
        if len(moving) == 1 and interleaves(outer, L, moving[0], lanes, len(L.strides) - 1):
            # vectors of rows, their columns interleaved in registers
            return (total / lanes * interleave_vector_ops(L.extent, step.short) / step.short
                    + call_cycles)
        if len(moving) == 1 and runs_across(outer, L, moving[0], lanes):
            # rows run across in vectors, no row start
            return total / lanes * across_vector_ops(L.extent, step.short, lanes,
                                                     _itemsize(dtype)) / step.short + call_cycles
    if (step.short and step.row.startswith("short-dots") and len(step.loops) >= 3
            and not str(dtype).startswith("complex")):
        # S dots a row: each ends in its share of a horizontal sum and a
        # store whatever its length, and each call of the kernel (R rows)
        # sets up its pointers and copies; rows longer than SHORT_DOTV_VECTORS
        # vectors share each load of the row among the S dots
        L = step.loops[-1]
        dots = total / L.extent
        calls = dots / (step.short * step.loops[-3].extent)
        vecs = math.ceil(L.extent / lanes)
        per = (SHORT_DOT_VECTOR if vecs <= SHORT_DOTV_VECTORS
               else long_dot_vector(short_dot_block_rows(step), step.short))
        # an input strided along the row is copied, an element a cycle, once
        # a call when the rows share it ('ij,jk->ik' (8,1000) x (1000,6) f32:
        # B's copy as long as the dots; 6.8 us, 5.0 on the smm path)
        O, S = step.loops[-3], step.loops[-2]
        copied = sum(_copy_block(S, L, j) * _copy_cycles(st, _itemsize(dtype))
                     for j, st in enumerate(L.strides[:-1])
                     if st not in (0, 1) and O.strides[j] == 0)
        return dots * (SHORT_DOT_END + per * vecs) + calls * (SHORT_CALL + copied)
    # the small-edge kernel runs its rows inside one call (its calls priced
    # whichever way its short rows run)
    start = SHORT_ROW_START if step.short else NEST_ROW_START
    return total * (ops / lanes if vec else ops) + total / row * start + call_cycles


# The packed engine's price must be below this share of the nest's: what its
# compute-side price leaves out (its packed panels' traffic, its call's
# set-up) costs it about that much.  Zen 3, 1 thread, loaded, ratio to numpy
# nest / packed engine: 'ij,jk->ki' (3000,1500) x (1500,2) f32 (priced 0.15)
# 0.95 / 1.40; 'ij,jk->ik' (2,5000) x (5000,64) f64 (0.58) 0.78 / 1.34;
# 'ij,jk->ik' (11,200000) x (200000,2) f64 (0.76) 0.93 / 0.61; 'ij,kj->ik'
# (300,3) x (53,3) f64 (0.86) 4.3 / 2.4; 'abc,cd->adb' (2710,8,4) x (4,3)
# f32 (4.8) 1.40 / 0.71.
GEMM_CYCLE_MARGIN = 0.6


# The packed engine's smm path with n in one vector packs nothing, and its
# price is measured (model.SMM_K_CYCLES): no margin.
SMM_CYCLE_MARGIN = 1.0


def narrow_smm(gemm_steps, dtype) -> bool:
    """Every GemmStep runs the smm path with n in one vector."""
    steps = [st for st in gemm_steps if getattr(st, "kernel", None) is not None]
    real = _itemsize(dtype) // (2 if str(dtype).startswith("complex") else 1)
    return bool(steps) and all(st.kernel.path.value == "smm" and st.complex_mode != "1m"
                               and st.n.extent <= vector_lanes(real) for st in steps)


def _threads_of(nest, gemm_steps):
    """The threads each engine would run with at the library's setting: the
    nest's cap when it shares a loop out, the packed engine's schedule."""
    lib = max(1, _native.get_num_threads())
    tn = min(nest.threads, lib) if nest.split >= 0 else 1
    tg = max((st.kernel.threads for st in gemm_steps
              if getattr(st, "kernel", None) is not None), default=1)
    return max(1, tn), max(1, min(tg, lib))


def engine_by_cost(nest, gemm_steps, dtype):
    """('nest' or 'gemm', why) for a thin GEMM planned on both engines: the
    packed engine when its predicted compute cycles (model.gemm_cycles) are
    below GEMM_CYCLE_MARGIN of the nest's (``nest_cycles``); both read each
    operand once, so memory traffic does not tell them apart.  Each engine's
    cycles are shared by the threads it runs with."""
    tn, tg = _threads_of(nest, gemm_steps)
    cn = nest_cycles(nest, dtype) / tn
    cg = gemm_cycles(gemm_steps, dtype) / tg
    margin = SMM_CYCLE_MARGIN if narrow_smm(gemm_steps, dtype) else GEMM_CYCLE_MARGIN
    engine = "gemm" if cg < margin * cn else "nest"
    return engine, (f"{engine} by predicted compute: nest {cn / 1e3:.1f} kcycles on "
                    f"{tn} thread(s), packed GEMM engine {cg / 1e3:.1f} kcycles on {tg}")


def _line_cost(strides, itemsize, extent, resident=(), starts=1):
    """Cost of a loop as the row: cache-line bytes each operand touches per
    element (the output's write counts twice; an operand that stays in L2
    costs a quarter, whatever its stride, unless the row steps to a new page
    at every element across more pages than the first-level TLB holds: then
    each element waits for a TLB walk and an L2 line; half, stepping most of
    a page an element across that many pages -- 'bii->b' (300,19,19) f32,
    1444 bytes a step over 106 pages along b, 6.3 us; along i, 3.8 us), plus
    the row's start-up, shared by the ``starts`` rows the kernel runs at once."""
    cost = 0.0
    for j, s in enumerate(strides):
        step = abs(s) * itemsize
        w = min(step, LINE)
        paged = step >= PAGE and extent > TLB_PAGES
        tlb = step * PAGE_STEPS > PAGE and extent * step > TLB_PAGES * PAGE
        if j < len(resident) and resident[j] and not paged:
            w *= TLB_L2_COST if tlb else 0.25
        elif step * PAGE_STEPS > PAGE:
            # from beyond L2, a row of fewer than PAGE_STEPS elements a page
            # leaves the hardware prefetcher (which follows strides within a
            # page) nothing to learn from ('bii->b' (30320,19,19) f32: the
            # row along b, 1444 bytes a step, 3.2 ms; along i, 80 bytes a
            # step, 1.3 ms)
            w *= FAR_ROW_COST
        cost += 2 * w if j == len(strides) - 1 else w
    return cost + ROW_OVERHEAD / (extent * starts)


def _dot_rows(table, row, itemsize, complex_=False):
    """Rows per start of ``row`` as the rows of a GEMV's dot form: a unit-stride
    dot of two inputs into one output element, one input moving along the
    loop around it and the other shared across it, runs a vector of rows at a
    time (rows_dotv; rows shorter than a vector one load each), so its
    start-up is shared by that many rows ('ij,j->i' (219620, 3) f32: the dot
    form 1.4x faster than the axpy form over i at stride 3; rows of 2 waste
    too many lanes, 2x slower)."""
    extent, st = table[row]
    moving = [j for j, s in enumerate(st[:-1]) if s != 0]
    # the loop that goes right around the row in the stride order
    # (order_loops): the one of least strides
    others = [c for c in table if c != row and table[c][0] > 1]
    if complex_ or st[-1] != 0 or any(st[j] != 1 for j in moving) or not others:
        return 1
    e, s = table[min(others, key=lambda c: sum(abs(x) for x in table[c][1]))]
    rs = [s[j] for j in moving]
    if runs_picked(extent, e, [r for r in rs if r != 0], rs.count(0), s[-1], itemsize):
        # rows shorter than a vector end to end: no start per row at all
        return e
    if len(moving) != 2 or extent < 3:
        return 1
    if _runs_dotv(extent, e, [s[j] for j in moving], s[-1], itemsize):
        return vector_lanes(itemsize)
    return 1


SUM_ROWS = 4    # rows one input's row sums run at a time (rows_sum's four chains)


def _rows_per_start(table, row, itemsize, complex_=False):
    """Rows per start of ``row``: a GEMV's dot rows a vector at a time
    (``_dot_rows``); one real input's rows of SUM_ROWS or more summed into an
    element each (the output constant along the row) SUM_ROWS at a time,
    their starts shared ('iji->j' (8,33158,8) f64, the diagonal 72 bytes a
    step: rows of 8 along i 290 us; the output's row along j, 512 bytes a
    step, 416 us in tiles)."""
    dots = _dot_rows(table, row, itemsize, complex_)
    if dots > 1:
        return dots
    extent, st = table[row]
    moving = [s for s in st[:-1] if s != 0]
    # (rows shorter than that are all start: 'ab->a' (1864057,2) f32 read as
    # rows of 2, 4.2 ms; along a, 1.4)
    if (not complex_ and extent >= SUM_ROWS and st[-1] == 0 and len(moving) == 1
            and any(table[c][0] > 1 for c in table if c != row)):
        return SUM_ROWS
    return 1


def operand_bytes(loops, itemsize):
    """Bytes of each operand's elements the loops ((extent, strides) outer
    to inner) visit: the extents of the loops it moves along."""
    return [math.prod(e for e, st in loops if st[j] != 0) * itemsize
            for j in range(len(loops[0][1]))]


def traffic(loops, itemsize, held=0):
    """Bytes an order of loops (outer to inner) moves between memory and
    cache, by a coarse model: each operand's cache lines touched by the row,
    multiplied by every loop around it along which the operand moves, and
    also by a loop along which it stays put (it is re-read: a summed axis
    around a large output, a broadcast operand) when what the loops inside
    touch no longer fits in L2 (a quarter of that while it fits in a share
    of L3), except the ``held`` loops right around the row, which the
    small-edge kernel runs in registers.  A loop of small stride around a row that
    used one element per line reuses those lines while they fit.  The output
    counts twice (read and written).  ``loops``: (extent, strides) outer to
    inner."""
    extent, st = loops[-1]
    st_row = st
    # bytes of each operand: those that do not fit in L2 on their own (only
    # their interleaved streams wait for lines from further out), and those
    # beyond this core's share of L3
    whole = operand_bytes(loops, itemsize)
    big = [w > l2_bytes() for w in whole]
    foot, moved, sparse, ragged, paged = [], [], [], [], []
    for j, s in enumerate(st):
        b = itemsize if s == 0 else extent * min(abs(s) * itemsize, LINE)
        foot.append(b)
        moved.append(b)
        sparse.append(abs(s) * itemsize >= LINE)
        # a short row, contiguous, or strided within lines (a [..., ::2]
        # slice) when read from memory: 'abcd->dba' (585,2,134,29) f64, 72 MB
        # of lines, rows of 29 at stride 2 with the 1170 rows of ab
        # interleaved inside c, 0.3x numpy; one stream with c inside ab,
        # 0.66x.  From L3 the strided row's calls cost more than its lines
        # ('abc,b->ac' (39159,2,6)[..., ::2] c64: 1.08x with b outside a,
        # 0.80x with 39159 calls of 2 rows)
        # (the slice's lines, not its elements, are what must fit in L3:
        # 'abc->b' (19659,20,5) f64 with c [::2], 16 MB of elements over 31
        # MB of lines, b outermost: 20 passes a line in 25, 0.19x numpy)
        ragged.append(b < RAGGED_ROW and (abs(s) == 1 or (
            0 < abs(s) * itemsize < LINE and whole[j] * abs(s) > l3_per_core())))
        paged.append(abs(s) * itemsize >= PAGE and extent > 1)
    span = list(foot)
    # bytes from the first to the last element the loops inside reach
    reach = [(extent - 1) * abs(s) * itemsize + itemsize for s in st]
    jump = [0] * len(st)     # the first step away from a ragged row, bytes
    # the first step away from a long row of whole lines (unit-stride or
    # strided within lines, any row that is not ragged): past a gap, each
    # such row restarts the prefetcher's stream
    leap = [0] * len(st)
    run = list(foot)         # bytes of the contiguous run that rows make up
    streams = [1] * len(st)  # rows of the operand the loops inside interleave
    for depth, (extent, st) in enumerate(reversed(loops[:-1])):
        inside = sum(foot)
        fits = depth < held or inside <= l2_resident()
        # short rows from beyond L2 continue their streams while the
        # prefetcher follows those of all operands together: 29 rows of an
        # input interleaved with 29 of the output are more than it holds
        # ('bij,jk->bik' (29,53050,5)[::-1] x (5,9) f32, rows of 36 bytes,
        # with b around them: 35 ms; b outermost, 3.7)
        # (an operand the row steps a line or more an element forms none)
        live = sum(n for n, b, s in zip(streams, big, st_row) if b and abs(s) * itemsize < LINE)
        # a re-read from L3 costs a fraction of one from memory
        reread = 1.0 if inside > L3_SHARE else L3_REREAD
        for j, s in enumerate(st):
            if s == 0:
                if not fits:
                    moved[j] *= 1 + (extent - 1) * reread
                continue
            step = abs(s) * itemsize
            if ragged[j]:
                if (step == span[j] and (fits or not jump[j])
                        and (live <= PREFETCH_STREAMS or not big[j])):
                    ragged[j] = False   # the next row continues the stream
                elif not jump[j]:
                    jump[j] = step
            if 0 < abs(st_row[j]) * itemsize < LINE:
                # a row strided within lines reads all of them: a run too
                # ('abc->b' (2818,24,206) f64 with c [::2], rows of 3.3 KB:
                # with b outermost each row restarts the stream, 0.45x numpy)
                if not leap[j] and step == run[j]:
                    run[j] *= extent    # the next row continues the run
                elif not leap[j]:
                    leap[j] = step
                elif step == run[j] and streams[j] <= PREFETCH_STREAMS:
                    # the rows the loops inside interleave each continue
                    # their own stream here, few enough for the prefetcher
                    # to follow them all: no stream restarts ('jiab,iajb'
                    # (21,21,93,93) x (21,93,21,93) f64 with j around the
                    # rows of b: 21 streams, 2.2 ms; with the 1953 rows of
                    # ia there, 2.9 ms)
                    leap[j] = 0
                    run[j] *= extent
            streams[j] *= extent
            f = extent
            if sparse[j] and step < LINE and fits:
                f = max(1.0, extent * step / LINE)
                sparse[j] = False
            grow = f     # growth of the operand's distinct lines
            if step < reach[j] and inside <= l3_per_core():
                # the loop steps inside what the loops within it reach: it
                # revisits lines, which are still in L2 (free) or in L3 (a
                # fraction of a read from memory), and the distinct lines
                # are no more than the range covered ('abcd,abcd->' with a
                # (b, c, d) block per a read whole in any order of b, c, d)
                covered = reach[j] + (extent - 1) * step + LINE - itemsize
                grow = min(f, max(1.0, covered / foot[j]))
                f = grow if fits else grow + (f - grow) * L3_REREAD
            reach[j] += (extent - 1) * step
            moved[j] *= f
            foot[j] *= grow
    for j in range(len(st)):
        if ragged[j] and jump[j] > span[j]:
            # rows apart in memory: each reads the rest of its first and
            # last lines and, past a gap of a few lines, restarts the
            # hardware prefetcher's stream (measured: rows of 33 float32
            # 792 bytes apart, 3x slower than the same bytes as one stream);
            # from L3, a fraction of that ('abcd,bacd->' (925,2,5,8) x
            # (2,925,5,16)[..., ::2] f64 with rows of 40 of the first 320
            # bytes apart: 52 us, 87 us with both rows of b per call of the
            # rows kernel) -- while all the operands together stay in a
            # core's share of it ('abc,cab->abc' with three operands of 7.8
            # MB, rows of 80 bytes 480 apart: 6 ms, 4.4x one stream each)
            rows = moved[j] / span[j]
            extra = rows * min(jump[j], span[j] + LINE - itemsize) - moved[j]
            if jump[j] >= span[j] + RAGGED_GAP:
                extra += rows * RAGGED_START
            moved[j] += extra * (L3_REREAD if sum(whole) <= L3_SHARE else 1.0)
        elif leap[j] >= run[j] + RAGGED_GAP and big[j] and run[j] < RESTART_RUN:
            # long rows apart in memory, from beyond L2: each row restarts
            # the stream ('abc->b' (602,5,1270) F order f32 with b outside
            # c: rows of 2.4 KB 12 KB apart, 1.7x the time of the same
            # bytes read in order with c outside)
            moved[j] += moved[j] / run[j] * RAGGED_START
        if paged[j] and foot[j] > l2_resident():
            # a row stepping to a new page at every element: no stream for
            # the prefetcher to follow, each line waits for memory
            # ('abc,cb->a' (105,16972,7) f64 with a as the row: 2.5x the
            # time of its bytes)
            moved[j] += moved[j] / LINE * RAGGED_START
    return sum(moved) + moved[-1]


MAX_ORDERS = 720    # outer-loop orders the traffic model compares (6 loops)
ORDER_GAIN = 0.7    # a reordering must cut the modelled traffic to this much
ORDER_TRAFFIC = 0.95   # or its traffic to this much (with more calls of the rows kernel)
FEWER_CALLS = 16    # or the rows kernel's calls to 1/this of them ...
CALLS_TRAFFIC = 1.1  # ... for at most this much more modelled traffic
ROWS_CALL = 256.0   # bytes-equivalent of one call of the rows kernel (tens of ns)


def _order_cost(loops, itemsize):
    """``traffic`` plus the rows kernel's calls: it runs the two innermost
    loops per call, so every loop outside them multiplies its calls
    ('abcd->c' (2748, 19, 2, 16): 52212 calls of 2 rows each with the
    summed ab around c, 2 calls of 52212 rows with c outside)."""
    calls = math.prod(e for e, _ in loops[:-2])
    return traffic(loops, itemsize) + ROWS_CALL * calls


ROW_FEW = 4      # rows this short are priced against every other loop as the row


def _stride_order(table, labels):
    """``labels`` by decreasing sum of |strides| (numpy's nditer order),
    shorter loops first among equals."""
    return sorted(labels, key=lambda c: (-sum(abs(s) for s in table[c][1]), table[c][0]))


def _outer_order(table, labels, row, itemsize):
    """``labels`` (the loops outside ``row``, in the stride order) reordered
    when another order moves much less memory by ``_order_cost``."""
    if 2 <= len(labels) and math.factorial(len(labels)) <= MAX_ORDERS:
        base = _order_cost([table[c] for c in labels + [row]], itemsize)
        best, best_cost = labels, base
        for perm in itertools.permutations(labels):
            cost = _order_cost([table[c] for c in perm + (row,)], itemsize)
            if cost < best_cost:
                best, best_cost = list(perm), cost
        # a big modelled gain, fewer kernel calls for no more modelled
        # traffic ('abc->b' (40,2,588) F order: 588 calls of 2 rows of 40
        # with c outside, 2 of 588 with b outside: 0.5x -> 1.2x numpy), or
        # ORDER_TRAFFIC less traffic -- not more calls for a sliver of it
        # ('abcd->b' (26,29,3440,2) f32, b outside a to save 26 re-reads of
        # 29 output elements: each row 780 KB from the last, 466 us; a
        # outside, in memory order, 356), and not memory order given up for
        # a sliver of calls ('abcd->ac' (65,23,42,1) f64: the summed b
        # outside a saves 42 of 65 calls and reads rows of 336 bytes 7.7 KB
        # apart, 35-71 us; a outside, one stream, 18-26; numpy 25-43)
        def calls(order):   # of the rows kernel, which runs the loop around the row
            return math.prod(table[c][0] for c in order[:-1])
        t_best = traffic([table[c] for c in best + [row]], itemsize)
        t_base = traffic([table[c] for c in labels + [row]], itemsize)
        # Or far fewer calls for a little more traffic: each call's start
        # costs more than its price where the rows are short ('abc,acb->ab'
        # (942,2,21) f64, rows of 21 strided by 2: b outside a, 2 calls of
        # 942 rows for 7% more modelled traffic, 31 us; 942 calls of 2 rows,
        # 76 us; numpy 40).
        if best_cost < ORDER_GAIN * base or (best_cost < base and (
                (calls(best) <= calls(labels) and t_best <= t_base
                 and best_cost < ORDER_TRAFFIC * base)
                or t_best < ORDER_TRAFFIC * t_base
                or (FEWER_CALLS * calls(best) <= calls(labels)
                    and t_best <= CALLS_TRAFFIC * t_base))):
            labels = best
    return labels


def order_loops(table, itemsize, complex_=False):
    """``table``: {label: (extent, strides)} -> labels outer to inner.

    The row is the loop of least ``_line_cost`` (one of ROW_FEW elements or
    fewer against every other loop as the row, each order priced whole by
    ``_order_cost``, calls included).  Outer loops by decreasing
    sum of |strides| (numpy's nditer sorts the same way) unless another order
    of them moves much less memory by ``traffic`` (a large output re-visited
    by a summed loop outside it, a re-read operand that no longer fits in
    cache).
    """
    labels = _stride_order(table, table)
    if not labels:
        return labels
    nops = len(next(iter(table.values()))[1])
    # each operand's bytes: the extents of the loops it moves along
    held = [math.prod(table[c][0] for c in table if table[c][1][j] != 0) * itemsize
            for j in range(nops)]
    resident = [h <= l2_resident() for h in held]
    row = min(reversed(labels),
              key=lambda c: _line_cost(table[c][1], itemsize, table[c][0], resident,
                                       _rows_per_start(table, c, itemsize, complex_)))
    labels.remove(row)
    labels = _outer_order(table, labels, row, itemsize)
    if table[row][0] <= ROW_FEW and len(labels) >= 2:
        # a row this short is mostly its kernel call's start-up, which the
        # line cost above prices per element only: every other loop as the
        # row, each with its best outer order, priced whole by _order_cost
        # ('abcd,cdab->' (2,124,2759,2)[..., ::2] x (2759,2,2,124) T f64:
        # rows of 2 along d, two per call under 342K (b, c): 9.8 ms, 0.37x
        # numpy)
        cost = _order_cost([table[c] for c in labels + [row]], itemsize)
        for alt in [c for c in labels if table[c][0] > table[row][0]]:
            rest = _stride_order(table, [c for c in labels + [row] if c != alt])
            rest = _outer_order(table, rest, alt, itemsize)
            c_alt = _order_cost([table[c] for c in rest + [alt]], itemsize)
            if c_alt < ORDER_GAIN * cost:
                labels, row, cost = rest, alt, c_alt
    # an operand the row strides far that some outer loop walks at unit
    # stride: that loop goes right around the row, where the tiles copy the
    # operand along its own unit stride ('abc,abc->' (11170,16,44) F x C
    # f64 with c, op 1's unit stride, outermost: each of its lines re-read
    # for every c, 44 ms, 0.49x numpy); one that fits in half of L1 is
    # re-read from there, and its loop outside keeps the rows long
    # ('bij,bkj->bki' (7,6,1) F x (7,65502,1) f64: b around the row i, in
    # 7 x 6 tiles, 5.5 ms; b outside k, 0.7 ms).  From L2 a line an element
    # still costs: 'abcd,bda->c' with a 417 KB B 25 apart along the row
    # runs 2x faster with d around it, in tiles.
    # Not when that loop walks an output past L2: every pass of the loops
    # now outside it re-reads the output's lines from further out
    # ('abc,bca->ab' (10140,49,6) f32, the output 49 elements a step along
    # a: a around the row in 10140 x 6 tiles under b, 12 ms; a outermost,
    # 5.0; numpy 5.2).
    far = [j for j, s in enumerate(table[row][1][:-1]) if abs(s) > 2 and held[j] > l1_bytes() // 2]
    # At stride 2 too (a [..., ::2] slice, four elements a line) when the
    # operand moves along every loop ('abc,cba->ab' (366,13,721) x
    # (721,13,366)[..., ::2] f64, Intel Xeon: a outermost, a line per
    # element of B, 24.1 ms; a around the row in tiles, 5.4; numpy 14.7);
    # not one that stays put along a loop: a vector the rows kernel
    # gathers once for all the rows ('abc,ac->b' with ac[:, ::2]).
    far2 = [j for j in far if all(table[c][1][j] != 0 for c in labels)]
    around = [c for c in labels
              if (any(abs(table[c][1][j]) == 1 for j in far)
                  or any(abs(table[c][1][j]) == 2 for j in far2))
              and not (table[c][1][-1] != 0 and held[-1] > l2_bytes())]
    if far and around and labels[-1] not in around:
        labels.remove(around[-1])
        labels.append(around[-1])
    return labels + [row]


def forward(table, itemsize):
    """``table`` with each loop that no operand walks forwards (every stride
    negative or 0, one negative: an axis reversed by a [::-1] view) walked
    from its last element instead, as numpy's nditer does; ->
    (table, each operand's first element, in elements, the labels turned).
    The turned loops then merge with their neighbours ('abc->c' over
    x[::-1] of (59792, 2, 29): a and b one run of rows).  A summed loop runs
    its sum in the other order.  A loop the operands walk in both directions
    is turned when those walking it backwards stream from beyond L2 and
    those walking it forwards fit in it: the hardware prefetcher follows
    rows read forwards and jumping back poorly ('abc->ba' over x[::-1] of
    (13208, 2, 190) f64, rows of 3 KB each 6 KB behind the last: 6.0 ms;
    turned, 1.8 ms, the small output written backwards).  Not when that
    turns another large operand backwards: some row kernels read it worse
    ('ab,a->b' (3711183, 2)[::-1] x (3711183,) f32: 2.7 ms as it is, 3.5
    turned)."""
    nops = len(next(iter(table.values()))[1]) if table else 0
    held = [math.prod(e for e, st in table.values() if st[j] != 0) for j in range(nops)]
    offsets = [0] * nops
    turned = ""
    out = {}
    for c, (e, st) in table.items():
        back = sum(h for h, s in zip(held, st) if s < 0)
        ahead = sum(h for h, s in zip(held, st) if s > 0)
        if e > 1 and back and (ahead == 0 or back * itemsize > l2_bytes() >= ahead * itemsize):
            offsets = [o + (e - 1) * s for o, s in zip(offsets, st)]
            st = tuple(-s for s in st)
            turned += c
        out[c] = (e, st)
    return out, tuple(offsets), turned


def coalesce(table):
    """``table`` with every pair of loops that all operands walk as one loop
    merged, in whatever order the subscripts name them: outer p and inner q
    where each operand's stride along p is extent(q) times its stride along
    q.  Ordering first and merging neighbours after misses pairs the order
    separates ('abcd->cbd' read and written in the same memory order is one
    contiguous run, whichever loop the order puts innermost)."""
    table = dict(table)
    merged = True
    while merged:
        merged = False
        for p, q in itertools.permutations(table, 2):
            (ep, sp), (eq, sq) = table[p], table[q]
            if all(a == eq * b for a, b in zip(sp, sq)):
                del table[p], table[q]
                table[p + q] = (ep * eq, sq)
                merged = True
                break
    return table


def merge_loops(loops):
    """Merge adjacent loops (outer, inner) where every operand has
    stride(outer) == extent(inner) * stride(inner)."""
    out = []
    for lp in loops:
        if out:
            prev = out[-1]
            if all(so == lp.extent * si for so, si in zip(prev.strides, lp.strides)):
                out[-1] = NestLoop(prev.labels + lp.labels, prev.extent * lp.extent, lp.strides)
                continue
        out.append(lp)
    return out


PACK_BYTES = 32 << 10    # a tile's copy of one strided input (about L1)
PACK_ROWS = 8            # fewest rows of a tile that takes the row whole
PACK_RUN = 256           # shortest row of a tile that takes all the rows
PACK_MIN_ROW = 64        # shortest row whose strided inputs tiles copy


def packed(outer, row):
    """Inputs (by index) a tile copies into contiguous rows: strided along
    the row by more than 2 and by less (but not 0) along the loop around it
    -- the kernel reads them along their own small stride once per tile,
    then runs SIMD rows ('ab,ba->ab', 'abc,acb->abc', 'abc,cab->')."""
    return [j for j, (so, si) in enumerate(zip(outer.strides[:-1], row.strides[:-1]))
            if so != 0 and abs(so) < abs(si) and abs(si) > 2]


TPAIR_ROW = 2048         # row length of a tile the transposing kernel runs: x's rows
                         # read in runs of 16 KB (float64), the row's lines of y (one
                         # per element) kept in L2 from one vector of rows to the next


def transposed_pair(loops, is_complex=False):
    """(x, y): the inputs of a tile the transposing kernel (ep_nest_template.h's
    tpair) runs: two real inputs both moving along the row, x at stride 1
    or 2 along it, y copied per tile (``packed``) but at stride 1 or 2 along
    the loop around it, the output unit-stride or 0 along the row; else None.
    Mirrors ep_nest.c's choice."""
    if is_complex or len(loops) < 2:
        return None
    outer, row = loops[-2], loops[-1]
    if len(row.strides) != 3 or 0 in row.strides[:2] or row.strides[-1] not in (0, 1):
        return None
    pk = packed(outer, row)
    for y in pk:
        x = 1 - y
        if x not in pk and outer.strides[y] in (1, 2) and row.strides[x] in (1, 2):
            return (x, y)
    return None


TPAIR_COPY_ROW = (20, 256)   # rows longer than the first and shorter than the second
                             # keep the copied tiles once the operands pass L2 ...
TPAIR_COPY_RUN = 4           # ... in tiles of at least this many vectors of rows


def transposes(loops, itemsize, is_complex=False) -> bool:
    """Whether the tiles of the two innermost loops run the transposing
    kernel: a ``transposed_pair`` unless its rows are of middling length,
    in tiles of many rows, in operands past L2, the output moving along
    them.  Those took the copied tiles' 64-row runs down y's columns
    better: 'abc,acb->abc' (36, 1885, 111) float32 7.6 ms copied, 9.4
    transposed; (4, 52631, 38) 8.4 copied, 12.7 transposed, and rows of 24
    to 64 alike (x a [..., ::2] slice:
    (1247, 139, 24) float64 11.9 copied, 14.8 transposed).  With rows of
    8 to 20 the two ran even (float64: the transposing kernel 1.3x
    faster), with 331 or 2048 it ran 1.5-1.8x the copies; tiles of fewer
    rows pay the copy's set-up per few elements ('abcd,abcd->' in 20 x 38
    float64 tiles: 1.7 ms transposed, 2.3 copied)."""
    pair = transposed_pair(loops, is_complex)
    if pair is None:
        return False
    outer, y = loops[-2], pair[1]
    if (outer.extent == 4 < vector_lanes(itemsize) and outer.strides[y] == 1
            and loops[-1].strides[y] == 4):
        # y's four rows end to end, fewer than a vector: the copy
        # de-interleaves them a vector at a time, where the transposing
        # kernel runs partial vectors of rows ('ab,ab->' (4, 40000) f32 C x
        # F on AVX2: 171 us transposed, 61 copied)
        return False
    lo, hi = TPAIR_COPY_ROW
    if (outer.extent < vector_lanes(itemsize) and loops[-1].extent >= hi
            and not (outer.strides[y] == 1 and loops[-1].strides[y] > 0)):
        # fewer rows than a vector, not adjacent in y: the transposing
        # kernel goes element by element, which long rows copied to SIMD
        # rows outrun ('ab,ba->a' (4, 519580)[:, ::2] x (519580, 8)[:, ::2]
        # f32: 2.8 ms, copied 2.1) and short ones do not ('abcd,abcd->'
        # with tiles of 4 x 17: 0.6 ms, copied 1.1)
        return False
    # (the products summed along the row -- a dot per row, or into one
    # element -- take the transposing kernel at any length: 'abc,abc->a'
    # (553,43,126) x its (c,a,b)-ordered copy f64, rows of 43 b: 4.9 ms
    # copied, 3.3 transposed; 'abc,abc->' (785,43,126)[::-1] x the same:
    # 7.5 and 5.5, numpy 5.5)
    span = math.prod(lp.extent for lp in loops if lp.strides[pair[0]] != 0) * itemsize
    return not (lo < loops[-1].extent < hi and span > l2_bytes()
                and outer.extent >= TPAIR_COPY_RUN * vector_lanes(itemsize)
                and loops[-1].strides[-1] != 0)


def rows_share_lines(loops, itemsize) -> bool:
    """Whether the loop around the row is two rows, the inputs a tile would
    copy (``packed``) step within a line along it, and a row's lines of each
    fit half of L2: the second row then re-reads the first's lines from L1
    or L2, and neither tiles nor the transposing kernel pay ('abcd,dbac->'
    (2,195,1224,4)[..., ::2] x (2,195,2,1224) f32, two rows of d two
    elements apart: 312 us row by row, 403 in copied tiles, 790 transposed;
    numpy 411; 'ab,ab->' (2, 40000) C x F f32: 10 us either way).  Past two
    rows a vector of them transposes faster ('ab,ab->' (8, 5000) C x F f32:
    5 us, 14 row by row)."""
    if len(loops) < 2 or loops[-2].extent != 2:
        return False
    outer, row = loops[-2], loops[-1]
    pk = packed(outer, row)
    if not pk:
        return False
    half_l2 = l2_bytes() // 2
    for j in pk:
        so, si = abs(outer.strides[j]), abs(row.strides[j])
        if so * (outer.extent - 1) * itemsize >= LINE:
            return False
        if row.extent * min(si * itemsize, LINE) > half_l2:
            return False
    return True


def _pair_outside(loops, itemsize, is_complex=False):
    """The loops with the two rows that share lines (``rows_share_lines``)
    moved outside the loop around them, when that loop and the row then run
    as tiles; else None.  Row by row, the loop around the pair is a call
    of the rows kernel each, two short rows gathered at a far stride; as
    tiles, the copied input's lines are read once per row of the pair --
    from L2 if they fit, else again from further out, which the
    transposing kernel repays and the complex copied tiles do not.  1
    thread, Zen 3, 'abc,cba->' (2, b, c), us, row by row / tiles (numpy):
    f64 (2,199,33) 21 / 9.1 (12); (2,199,400) 152 / 93 (150); (2,300,3000)
    7164 / 3214 (5964); f32 (2,1000,300) 533 / 231 (569); c64 (2,199,33)
    38 / 14 (19); c128 (2,100,150) 61 / 34 (51); past L2, c128 (2,1000,300)
    1.4 / 2.4-2.9 ms (1.3), (2,60,1200) 260 / 295 (240)."""
    if len(loops) < 3:
        return None
    alt = merge_loops(list(loops[:-3]) + [loops[-2], loops[-3], loops[-1]])
    if len(alt) < 2 or rows_share_lines(alt, itemsize):
        return None
    if transposes(alt, itemsize, is_complex):
        return alt
    copied = packed(alt[-2], alt[-1])
    held = operand_bytes([(lp.extent, lp.strides) for lp in alt], itemsize)
    if not _tile_edge(alt, itemsize) or any(held[j] > l2_bytes() for j in copied):
        return None
    return alt


def _tile_edge(loops, itemsize, transposed=False):
    """Edges (along the loop around the row, along the row) of tiles of the
    two innermost loops, or 0.  Tiles run when some input is copied per tile
    (``packed``): the short side whole when it is short, the long side
    blocked so the copy stays near PACK_BYTES, else square tiles that all
    operands share in L2; and, square, when only the output is unit-stride
    along the outer loop and far-strided along the row."""
    if len(loops) < 2:
        return 0
    outer, row = loops[-2], loops[-1]
    if transposed:
        # every row of the loop around it, the row in runs TPAIR_ROW long:
        # blocks of a vector of rows stream x's rows and y's lines in turn,
        # y's lines (TPAIR_ROW of them) staying in L2 for the next block
        return (outer.extent, min(row.extent, TPAIR_ROW))
    pk = packed(outer, row)
    if pk and row.extent < PACK_MIN_ROW and all(
            abs(row.strides[j]) * itemsize < LINE for j in pk):
        # a row this short whose copied inputs share lines along it spans a
        # few lines the next rows find in L1: read in place, no tile's copy
        # and start to pay for ('abcd->bda' (6,95,37,5) f32, 570 tiles of 5
        # x 37: 125 us; in place 45; numpy 77).  An input a line an element
        # along the row keeps its tiles: they make its rows SIMD rows
        return 0
    if pk:
        # the inputs read in place one stream each across the tiles (the
        # same row for every row of the tile: a GEMV's vector), the output
        # summed along the row
        shared = row.strides[-1] == 0 and all(
            outer.strides[j] == 0 for j in range(len(row.strides) - 1) if j not in pk)
        return _packed_tile(outer.extent, row.extent, itemsize, shared)
    so, si = outer.strides[-1], row.strides[-1]
    if not (abs(so) == 1 and abs(si) * itemsize >= LINE):
        return 0
    edge = int(math.sqrt(tile_bytes() / (len(row.strides) * itemsize)))
    edge = max(8, 1 << (edge.bit_length() - 1))
    if min(outer.extent, row.extent) <= edge:
        return 0
    return (edge, edge)


def _pow2_floor(x):
    return 1 << (max(int(x), 1).bit_length() - 1)


def _packed_tile(e_outer, e_row, itemsize, shared=False):
    """(rows, row length) of a tile whose copy of an input takes about
    PACK_BYTES: whole rows when PACK_ROWS of them fit (the output and the
    inputs read in place then stream through the tile in memory order:
    'ab,ba->ab' (24349, 331) f64 in 8 x 331 tiles ran 1.10x numpy, in
    64 x 64 0.85x), else all the rows when they are few, else square.
    A complex128 tile keeps the 64-element edges of a complex64 one: in
    32 x 32 tiles its rows were runs of 512 bytes, too short for the
    prefetcher ('ab,ba->' (515, 3561) x (3561, 515) c128, Zen 4: 6.5 ms in
    32 x 32 tiles, 6.0 in 64 x 64; numpy 6.2)."""
    elems = PACK_BYTES // min(itemsize, 8)
    if e_row * PACK_ROWS <= elems:
        # at least two lines of the copied input per row of it: one line
        # each is a stream of its own per tile, where the prefetcher fetches
        # lines in pairs ('ab,ba->ab' (3663,501)[:, ::2] x (501,3663) f32:
        # 3.2 ms in 16 x 501 tiles, 2.6 in 32 x 501; numpy 2.3-2.9)
        rows = max(_pow2_floor(elems // e_row), 2 * LINE // itemsize)
        return (min(e_outer, rows), e_row)
    if e_outer * PACK_RUN <= 4 * elems:
        # rows of at least PACK_RUN: each operand read in place is a few
        # streams of whole pages, the copy up to a few PACK_BYTES (in L2).
        # Few rows past L2 whose other inputs are one row every row shares
        # (``shared``: one stream each, not restarted per tile) take a
        # quarter of L1: the copy is written, then read back beside them
        # and the source streaming past ('ab,b->a' (3, 2259369) F c64, Zen
        # 4's 32 KB L1: in 3 x 1024 tiles 6.6-7.0 ms, 3 x 512 5.0, 3 x 256
        # 3.7, numpy 3.5; 'ab,ba->a' (4, 519580)[:, ::2] x (519580, 8)[:,
        # ::2] f32, x's four rows read in place: 4 x 2048 2.6, 4 x 512 3.0)
        if (shared and e_outer * PACK_RUN * itemsize <= l1_bytes() // 4
                and e_outer * e_row * itemsize > l2_bytes()):
            elems = min(elems, l1_bytes() // 4 // itemsize)
        return (e_outer, min(e_row, max(PACK_RUN, _pow2_floor(elems // e_outer))))
    edge = _pow2_floor(math.sqrt(elems))
    return (edge, edge)


ROW_BLOCKS = (2048, 8192)   # row blocks (elements) the traffic model tries; shorter
                            # blocks of many rows cut each operand into more streams
                            # than the prefetcher follows ('ab->a' F, 512: half speed)


def _row_block(loops, itemsize):
    """Elements per block of the row when running it in blocks, the block
    loop outside every other loop, cuts the modelled traffic to ORDER_GAIN
    ('ij,jk->ik' (11, 1.3M) x (1.3M, 2): B's rows stay in cache for all 11
    i instead of being read 11 times), else 0."""
    if len(loops) < 2:
        return 0
    row = loops[-1]
    if _gathers_vector(loops) and row.extent * itemsize > l2_resident():
        # a GEMV's dot form: every row reads the vector again (the rows
        # kernel's gathered copy of it when it is strided), past L2 from L3
        # for each row, which the traffic model prices at a quarter of
        # memory (L3_REREAD) where it costs half on some cores; a row in
        # blocks keeps the vector's block in L1 ('ab,a->b' (250799,8):T x
        # (250799,)[::2] Intel Xeon, us, whole / in blocks of 8192 (numpy):
        # c64, a 2 MB copy, 1128 / 772 (818); f64 993 / 774 (826); the
        # vector unit-stride, f64 (16 rows of 750245) 4548 / 4411 (5835))
        blocks = [bs for bs in ROW_BLOCKS if 4 * bs <= row.extent]
        if blocks:
            return max(blocks)
    plain = [(lp.extent, lp.strides) for lp in loops]
    base = traffic(plain, itemsize)
    best, best_cost = 0, base * ORDER_GAIN
    for bs in ROW_BLOCKS:
        if row.extent < 4 * bs:
            break
        blocks = ((row.extent + bs - 1) // bs, tuple(s * bs for s in row.strides))
        cost = traffic([blocks] + plain[:-1] + [(bs, row.strides)], itemsize)
        # of blocks that move the same bytes, the longest: each operand's
        # block is then a run of pages the prefetcher follows, not one of
        # many 2 KB fragments
        if cost < best_cost or (best and cost <= best_cost):
            best, best_cost = bs, cost
    return best


OUTER_BLOCK = 8     # rows per block of an outer loop moved around the row: the operand
                    # far-strided along it is read in that many streams, the other in
                    # runs of that many rows ('abc,bca->' (10,337,377) F x C[::-1] f64,
                    # Zen 4: blocks of 4 rows 4.0 ms (calls of 4 rows), 8 1.8, 16 2.0,
                    # 32 2.4-2.7, unblocked 3.3; numpy 1.7-1.9)


TLB_SPAN = 2 << 20   # bytes a far-strided input's row spans in one block of the tiles' row


def _far_row_block(loops, itemsize) -> int:
    """A block of the tiles' row (the block loop outermost) when an input
    steps a page or more per element of the row and a loop outside the
    tiles walks the same pages (less than a page a step): without it each
    pass of that loop sweeps the whole operand, a TLB miss per element,
    with it the passes stay within TLB_SPAN bytes of the input, which the
    second-level TLB holds ('abcd,abcd->' (26,589,84,8)[..., ::2] x its
    (d,c,a,b)-ordered copy f64, the row ab with A 10.7 KB an element and c
    outside at 128 bytes: 32.7 ms; in blocks of 128, 2 MB of A, 21.4;
    numpy 21.5).  0: none."""
    if len(loops) < 3:
        return 0
    row = loops[-1]
    for j in range(len(row.strides) - 1):
        step = abs(row.strides[j]) * itemsize
        if step < PAGE or not any(lp.extent > 1 and 0 < abs(lp.strides[j]) * itemsize < PAGE
                                  for lp in loops[:-2]):
            continue
        block = _pow2_floor(TLB_SPAN // step)
        if 64 <= block < row.extent:
            return block
    return 0


def outer_block(loops, itemsize):
    """(loops, block) with one outer loop moved right around the row and run
    in blocks of ``block``, the block loop outermost, when that cuts the
    modelled traffic and calls (``_order_cost``) to ORDER_GAIN, else None.
    Two operands crossed in their unit strides outside a shared row
    ('abc,bca->' (10,337,377) F x (337,377,10)[::-1] f64, rows of a):
    whichever of b, c runs outside, one operand is read a row from each of
    hundreds of rows pages apart, no stream for the prefetcher and a page
    a row; in blocks of the other loop each is read in runs of a few
    rows (OUTER_BLOCK).  Rows shorter than a line are not blocked: a call of
    the rows kernel a block of such rows costs more than the lines it saves
    ('abc,acb->abc' (2,1206,493) F x (2,493,1206) F f32, rows of 2: 9.3 ms
    in blocks, 3.2 without)."""
    if len(loops) < 3 or loops[-1].extent * itemsize < LINE:
        return None
    base = _order_cost([(lp.extent, lp.strides) for lp in loops], itemsize)
    best, best_cost, bs = None, base * ORDER_GAIN, OUTER_BLOCK
    for k, lp in enumerate(loops[:-1]):
        if lp.extent < 2 * bs:
            continue
        others = [(o.extent, o.strides) for o in loops[:-1] if o is not lp]
        blocks = (-(-lp.extent // bs), tuple(s * bs for s in lp.strides))
        cost = _order_cost([blocks] + others + [(bs, lp.strides),
                                                (loops[-1].extent, loops[-1].strides)],
                           itemsize)
        if cost < best_cost:
            best, best_cost = k, cost
    if best is None:
        return None
    return loops[:best] + loops[best + 1:-1] + [loops[best], loops[-1]], bs


MAX_SHORT = 8           # a loop this short can run inside the row kernel (EP_NEST_SHORT)
SHORT_DOT_ROW = 16384   # longest summed row of the small-edge kernel: its dots add up
                        # chunk by chunk (at most 1024 elements, each in a vector's lanes),
                        # not pairwise: up to 16 chunks
SHORT_ROW_START = 8     # element-equivalents of starting one of its rows (a call, S factors)
SHORT_HSUM = 4          # element-equivalents of one dot's horizontal sum
# cycles of the small-edge kernel's dots (nest_cycles), Zen 4, 1 thread:
# 'ij,kj->ik' (R, n) x (S, n) with S = 5..8 ran 7 cycles a dot of two
# vectors, 11-12 of three to five; 'bij,bkj->bki' (3,38664,15):T x (3,3,15)
# f64, a call per i (3 rows of 3 dots, one operand transposed into a copy),
# 40 cycles a dot.  Priced at one vector a dot and 8 cycles a row, both ran
# 2-3.5x slower than the packed engine they were preferred to.
SHORT_DOT_END = 3       # a dot's share of the transposing sum of its row block, its store
SHORT_DOT_VECTOR = 2    # a dot's vector: two loads and a multiply-add
SHORT_CALL = 150        # a call of the kernel: its pointers, its copies' set-up
SHORT_DOT_PAIRED = 3    # dots summed in two accumulators each up to this S (NS_PAIRED)
SHORT_DOTV_VECTORS = 5  # rows up to this many vectors run a block of rows per shared
                        # vector (ep_nest_short_template.h's NS_DOTV_VECTORS)
SHORT_SCATTER = 2       # element-equivalents of storing one lane of a row strided in the output
SHORT_ROW = 16          # a row this short pays its start-up in the plain nest (rows_prod)
SHARE_ROW_VECTORS = 4   # shortest row (vectors) of dots sharing one input's loads


def _copy_block(S, L, j) -> int:
    """Elements the small-edge kernel copies of input ``j``, strided along
    its row L: a contiguous [s][l] block, S rows of it when j varies along
    the short loop S, else one."""
    return (S.extent if S.strides[j] != 0 else 1) * L.extent


# Cycles of copying one element a page or more from the last: each waits
# on a TLB walk and a line from L2 or beyond ('bij,bjk->bik' (4,2,448) x
# (4,448,4684)[..., ::2] f32, B's rows 37 KB apart copied along j: 16.6
# cycles an element, 42 ms; the packed engine 11.9, numpy 18)
FAR_COPY = 16


def _copy_cycles(stride, itemsize) -> float:
    """Cycles of the small-edge kernel's copy of one element of an input
    strided along its row: one, or FAR_COPY a page or more apart."""
    return FAR_COPY if abs(stride) * itemsize >= PAGE else 1


def long_dot_vector(rows, S) -> float:
    """Cycles of one dot's vector along a row of more than SHORT_DOTV_VECTORS
    vectors, S dots a row, ``rows`` rows at a time (short_dot_block_rows):
    one row's load shared by its S dots; in blocks, measured (Emerald
    Rapids, 1 thread, 'ij,jk->ik' (200,1000) x (1000,S) from L2, f32 and
    f64): two rows (S = 8) 1.4-1.6, three or four (S = 2..6) 0.9-2.1."""
    if rows >= 3:
        return 1 + 2 / S
    if rows == 2:
        return 1.5 + 1 / S
    return 1 + 1 / S


def short_dot_block_rows(step) -> int:
    """Rows the small-edge kernel's S dots run at a time
    (ep_nest_short_template.h's short_sum_l): two to four where one input
    moves along the rows and is the same for every dot and the other is
    the same for every row (B of a GEMM's dot form, or its copy), as many
    as their accumulators and the shared vectors leave registers for;
    else one."""
    O, S, L = step.loops[-3], step.loops[-2], step.loops[-1]
    moving = [j for j, s in enumerate(L.strides[:-1]) if s != 0]
    if len(moving) != 2 or O.strides[-1] == 0:
        return 1
    # x unit-stride along the row (else it is copied a row at a time)
    x = [j for j in moving if S.strides[j] == 0 and O.strides[j] != 0 and L.strides[j] == 1]
    y = [j for j in moving if O.strides[j] == 0]
    if len(x) != 1 or len(y) != 1 or x == y:
        return 1
    regs = 32 if VECTOR_BITS.get(_native.isa(), 128) >= 512 else 16
    n = S.extent
    u = 2 if n <= SHORT_DOT_PAIRED else 1
    fit = min(4, (regs - u * n - u) // (u * n))
    return fit if fit >= 2 else 1


def across_period(n, lanes):
    """(G, NV, SP) of rows of n run across in vectors of lanes
    (ep_nest_short_template.h): G rows and NV vectors repeat every
    lcm(n, lanes) elements, a vector's lanes fall in at most SP rows."""
    g = math.gcd(n, lanes)
    return lanes // g, n // g, min((lanes - 1) // n + 2, lanes // g)


def across_min_rows(n, lanes) -> int:
    """The fewest rows of n the small-edge kernel runs across in vectors
    (ep_nest_short_template.h's across_min_rows): each call builds its
    NV x SP weight vectors lane by lane, repaid from about twice as many
    rows as their lanes cover."""
    _, nv, sp = across_period(n, lanes)
    return max(lanes, 2 * nv * sp * lanes // n)


def runs_across(outer, L, moving, lanes) -> bool:
    """Whether the small-edge kernel's sum over S runs its rows across in
    whole vectors (ep_nest_short_template.h): rows L of at most a vector,
    unit-stride and back to back in the output along the loop around S
    (``outer``), the input moving along L the same for every row, and
    enough rows to repay the weight vectors (``across_min_rows``)."""
    return (outer is not None and L.strides[-1] == 1 and 2 <= L.extent <= lanes
            and outer.strides[moving] == 0 and outer.strides[-1] == L.extent
            and outer.extent >= across_min_rows(L.extent, lanes))


def interleaves(outer, L, moving, lanes, nin) -> bool:
    """Whether the small-edge kernel's sum over S runs rows of L a vector of
    rows at a time, their columns interleaved in registers
    (ep_nest_short_template.h's rows_interleaved): rows of 2, 4 or 8
    elements (fewer than a vector), unit-stride and back to back in the
    output along the loop around S (``outer``), the input moving along L
    the same for every row, the other input's factors unit-stride along the
    rows, and a vector of rows at least."""
    n = L.extent
    return (nin == 2 and outer is not None and L.strides[-1] == 1 and 2 <= n < lanes
            and n <= 8 and n & (n - 1) == 0 and outer.strides[moving] == 0
            and outer.strides[-1] == n and outer.strides[1 - moving] == 1
            and outer.extent >= lanes)


def interleave_vector_ops(n, S) -> float:
    """Vector operations per output vector of the rows interleaved
    (``interleaves``): S multiply-adds, S / n loads of the factors, log2 n
    levels of shuffles and the store."""
    return S + S / n + math.log2(n) + 1


def runs_in_halves(outer, L, moving, lanes, itemsize) -> bool:
    """Whether the small-edge kernel's sum over S runs each row as two
    overlapping half vectors (ep_nest_short_template.h, 512-bit sets): rows
    L of more than half a vector and less than one, unit-stride in the
    output, the input moving along L the same for every row."""
    return (outer is not None and lanes * itemsize == 64 and L.strides[-1] == 1
            and lanes < 2 * L.extent and L.extent < lanes and outer.strides[moving] == 0
            and outer.extent > 1)


def across_vector_ops(n, S, lanes, itemsize) -> float:
    """Vector operations per output vector of the rows run across
    (``runs_across``), as ep_nest_short_template.h does them: a multiply-add
    with a broadcast for each s and each of the SP rows a vector may span
    (lcm(n, lanes) elements repeat), and a load and store of the vector per
    group of rows whose weights fit the registers."""
    _, _, sp = across_period(n, lanes)
    regs = 24 if lanes * itemsize == 64 else 12
    per = sp if sp * S <= regs else max(1, regs // S)
    return sp * S + 2 * math.ceil(sp / per)


PERIOD_MIN_ROWS = 64    # rows a period stream is worth starting for
PERIOD_ROWS_PER_OUTER = 8   # and rows per pass of the loops around it


def period_order(loops, itemsize, nin, is_complex=False):
    """The loops reordered for the period stream, or None.

    Rows of n < one vector summed into one contiguous output row ('ab,a->b'
    with b = 3, 'abc,bc->ac' with c = 4 and bc[:, ::2]): when every moving
    input's rows lie end to end at a stride of 1 or 2, and at most one input
    is constant along the row (the row's scale, moving along the rows), the
    R x n elements run as one stream in vectors of lcm(n, lanes), each lane
    on one output (ep_nest_template.h's period_body): no per-row start, no
    transposed tiles, the scales spread to their lanes by a permute.  Taken
    when the stream is long and the loops around it few, each of them moving
    every input (none read again): a GEMM with n = 3 keeps its register
    tiles."""
    if is_complex or nin > 2 or len(loops) < 2:
        return None
    lanes = vector_lanes(itemsize)
    for ri, row in enumerate(loops):
        n = row.extent
        if not 2 <= n < lanes or row.strides[-1] != 1:
            continue
        for oi, around in enumerate(loops):
            if oi == ri or around.strides[-1] != 0 or around.extent < PERIOD_MIN_ROWS:
                continue
            moving = [j for j in range(nin) if row.strides[j] != 0]
            fixed = [j for j in range(nin) if row.strides[j] == 0]
            if (not moving or len(fixed) > 1
                    or any(row.strides[j] not in (1, 2) or around.strides[j] != n * row.strides[j]
                           for j in moving)
                    or any(around.strides[j] == 0 for j in fixed)):
                continue
            rest = [lp for i, lp in enumerate(loops) if i not in (ri, oi)]
            if (math.prod(lp.extent for lp in rest) * PERIOD_ROWS_PER_OUTER > around.extent
                    or any(lp.strides[j] == 0 for lp in rest for j in range(nin))):
                continue
            return rest + [around, row]
    return None


def _short_rows_stream(S, L, loops, itemsize, nin) -> bool:
    """Whether the small-edge kernel's S rows along L (dots, or sums into
    one output row), run at once, interleave S rows of an input past half
    the core's L3 share: S streams from memory.  From L3 they are no worse
    than one ('abc,ac->b' (n,3,423) f32 on Zen 3, 512 KiB L2, 16 MiB L3 a
    core, 3 dots at once against one row after another: n = 300 (1.5 MB)
    43 / 53 us, 1000 (5 MB) 133 / 183, 3000 (15 MB) 1285 / 863, 6675 (34 MB)
    3083 / 2693)."""
    whole = operand_bytes([(lp.extent, lp.strides) for lp in loops], itemsize)
    return any(S.strides[j] != 0 and L.strides[j] != 0 and whole[j] > l3_per_core() // 2
               for j in range(nin))


def _short_edge(loops, itemsize, nin, dtype_complex=False):
    """The loops reordered for the small-edge kernel, or None.

    A GEMM-like pair step with a short edge ('ij,jk->ik' with k = 3,
    'ij,kj->ik' with j = 3) runs as: a short loop S (extent <= MAX_SHORT)
    held in registers around a long row L that is vectorised, the output
    summed along exactly one of them -- along S: each output element of the
    row is written once (one input moves along L, the other gives a factor
    per s); along L: S dots at once share the loads of the input constant
    along S.  One input summed over S takes it too, with no factor.  Chosen
    over the plain nest when its row is short or strided, when S already
    sits right around it or the plain nest runs a summed loop anywhere
    outside the row (the kernel then holds S in registers instead of
    re-reading the output), when its S dots share the loads of one input
    (rows of a few vectors, in L2), or for one input, whose plain nest puts S
    outermost and goes over the output S times ('abc->ac' (1021,7,7) f64:
    48 us so, 8.5 us held).  The kernel copies an input
    strided along L into a contiguous block (once when it is constant along
    the loop around S, in chunks of L that stay in L1; an input that would
    need a copy per row rules the candidate out).  Dots take rows of at least one vector.  Complex dtypes
    take only the sum over S (the dots have no complex SIMD path).  The candidate (S, L) of least modelled cost
    (vector and tail operations, stores, horizontal sums, copies, row starts)
    wins."""
    if nin not in (1, 2) or len(loops) < 2:
        return None
    # the kernel set's vector width, for the lane counts of its cost
    lanes = vector_lanes(itemsize)
    total = math.prod(lp.extent for lp in loops)
    best = None
    for si, S in enumerate(loops):
        if not 2 <= S.extent <= MAX_SHORT:
            continue
        for li, L in enumerate(loops):
            if li == si or L.extent < 2:
                continue
            os_, ol = S.strides[-1], L.strides[-1]
            n = L.extent
            moving = [j for j in range(nin) if L.strides[j] != 0]
            nv, nt = divmod(n, lanes)
            order = [lp for i, lp in enumerate(loops) if i not in (si, li)]
            need = [j for j in moving if L.strides[j] != 1]
            if need and order and any(order[-1].strides[j] != 0 for j in need):
                # a loop along which the inputs to copy stay put goes right
                # around S: they are copied once per call of the kernel
                # ('bij,bkj->bki' (215,312,3) x (215,167,3) F f32: the output
                # row along k, B's rows copied once per b, not i strided 167)
                still = [lp for lp in order if all(lp.strides[j] == 0 for j in need)]
                if still:
                    pick = max(still, key=lambda lp: lp.extent)
                    order = [lp for lp in order if lp is not pick] + [pick]
            outer = order[-1] if order else None
            start = SHORT_ROW_START
            if (os_ == 0 and len(moving) == 1 and not dtype_complex
                    and runs_in_halves(outer, L, moving[0], lanes, itemsize)):
                # two half vectors a row, x's in registers
                per_row = 2 * S.extent + 2
            elif (os_ == 0 and len(moving) == 1 and not dtype_complex
                    and interleaves(outer, L, moving[0], lanes, nin)):
                # vectors of rows, their columns interleaved in registers
                per_row = n / lanes * interleave_vector_ops(n, S.extent)
                start = 0
            elif (os_ == 0 and len(moving) == 1 and not dtype_complex
                    and runs_across(outer, L, moving[0], lanes)):
                # no row start or tail: the row's share of its vectors
                per_row = n / lanes * across_vector_ops(n, S.extent, lanes, itemsize)
                start = 0
            elif os_ == 0 and ol != 0 and len(moving) == 1 and n > 2:
                # S FMAs per vector (scalar ones in the tail, or one vector
                # more ending a unit-stride row of at least one), the stores
                # (a row of two, not run across, is all start: 'bij,bkj->bki'
                # (17855,296,2) x (17855,2,2) F f64 as 5.3M rows of 2 along
                # k, 136 ms; the plain nest along b, 21)
                if abs(ol) == 1 and nv and nt:
                    nv, nt = nv + 1, 0
                per_row = S.extent * (nv + nt) + (nv if abs(ol) == 1 else SHORT_SCATTER * n)
            elif (ol == 0 and os_ != 0 and len(moving) == 2 and lanes <= n <= SHORT_DOT_ROW
                  and not dtype_complex):
                shared = any(S.strides[j] == 0 for j in moving)
                per_row = (S.extent * (nv + nt) * (1.0 if shared else 1.5)
                           + S.extent * SHORT_HSUM)
            else:
                continue
            unit = any(lp.extent > 1 and all(abs(st) <= 1 for st in lp.strides) for lp in order)
            if unit and any(abs(lp.strides[j]) * itemsize >= PAGE
                            for lp in (S, L) for j in range(nin + 1)):
                # a loop every operand walks at unit stride would go outside
                # rows stepping a page or more an element: a TLB miss each
                # ('bij,bkj->bki' (17855,296,2) x (17855,2,2) F f64 with b
                # outermost, 64 ms; the plain nest along b, 17)
                continue
            rows = total / (S.extent * n)
            copy = 0.0
            for j in moving:
                if L.strides[j] == 1:
                    continue
                block = _copy_block(S, L, j)
                if outer is None or outer.strides[j] != 0:
                    # a copy per row costs more than the gather it saves
                    copy = None
                    break
                copy += block * rows / outer.extent   # once per call of the kernel
            if copy is None:
                continue
            # the memory side: the order's cache-line traffic with S right
            # around the row, whose S rows the kernel reads together ('iab,bc->aic'
            # (2477,45,3) x (3,11) f32: L = ia under c rewrites the 4.9 MB
            # output, stride 11, once per c; 'bij,bkj->bki' (4,3,1189) x
            # (4,1341,1189) f64: b held under i reads B's 51 MB once per i,
            # i held under b once)
            lines = traffic([(lp.extent, lp.strides) for lp in order + [S, L]], itemsize)
            cost = rows * (per_row + start) + copy + lines / BYTES_PER_CYCLE
            if best is None or cost < best[0]:
                best = (cost, order + [S, L])
    if best is None:
        return None
    row, around = loops[-1], loops[-2]
    short_rows = row.extent <= SHORT_ROW
    strided = any(abs(s) > 1 for s in row.strides[:-1]) or abs(row.strides[-1]) > 1
    held = best[1][-2] is around and best[1][-1] is row
    if held and row.strides[-1] == 0:
        # the dots form interleaves the S rows of an input moving along S;
        # from beyond L2 those are S streams where the plain rows read one
        # ('abc,ac->b' (6675,3,423) f32: 3.2 ms as 3 dots at once, 1.8 one
        # row after another)
        held = not _short_rows_stream(around, row, loops, itemsize, nin)
    if (held and not short_rows and not strided and row.strides[-1] == 1
            and around.strides[-1] == 0
            and PERIOD_VECTORS * lanes + lanes - 1 < row.extent
            and row.extent * itemsize <= l1_bytes() * 3 // 8
            and _short_rows_stream(around, row, loops, itemsize, nin)
            and len(loops) >= 3 and any(loops[-3].strides[j] != 0 and around.strides[j] != 0
                                        and row.strides[j] != 0 for j in range(nin))):
        # so does the sum form, S rows summed into an output row that stays
        # in L1, when the loop around S moves on to fresh rows (not rows
        # re-read from L1: 'abcd,dbef->aecf' (2,5,2,6176):F x (6176,5,365,1)
        # f32 holds b for four passes over B's 5 rows per d); the plain rows
        # kernel takes rows this long in one call, in the order measured for
        # the core (rows_into_one), and a loop summed outside costs it only
        # the L1 row ('abc,ab->c' (7092,4,518) x (7092,4):F f32, b held:
        # 4.5 ms, 13 GB/s; the plain rows one after another 2.3 ms, numpy 1.9)
        return None
    # the plain nest would run a summed loop outside the row, re-reading and
    # re-writing the output once per step of it, where the kernel holds the
    # summed S in registers ('bij,bjk->bik' (65,14,4) F x (65,4,80) f64, j
    # outermost: 80 us, 34 with j held, numpy 34; 'ijk,jl->ilk' (100,5,64) x
    # (5,30): 222 and 89 us, numpy 79)
    revisits = best[1][-2].strides[-1] == 0 and any(
        lp.strides[-1] == 0 and lp.extent > 1 for lp in loops[:-1])
    # dots of S at once share the loads of the input constant along S, where
    # the plain nest runs each dot on its own: taken for rows of a few
    # vectors whose inputs moving along S stay in L2 (as for ``held``)
    # ('bij,bkj->bki' (154,6,120) x (154,4,120):T f32, 6 dots a row of 120:
    # 54 -> 40 us, numpy 32; 'ij,kj->ik' (600,300) x (5,300) f32: 53 -> 38;
    # rows of 30 ran slower so, 'bij,bkj->bki' (500,8,30) x (500,3,30): 68 -> 85)
    S, L = best[1][-2], best[1][-1]
    shares = (nin == 2 and L.strides[-1] == 0 and S.strides[-1] != 0
              and L.extent >= SHARE_ROW_VECTORS * lanes
              and any(S.strides[j] == 0 for j in range(nin))
              and not _short_rows_stream(S, L, loops, itemsize, nin))
    if not (short_rows or strided or held or revisits or shares or nin == 1):
        return None
    return best[1]


CTILE_VB = 128           # V run of the register-tile kernel's x block when K is long
                        # (ep_nest_ctile_template.h)
CTILE_ELEMS = 8192      # complex elements of its x block


def ctile_nw(complex_: bool) -> int:
    """The W strip of the register tile under the kernel set in use
    (ep_nest_ctile_template.h's CT_NW): its accumulators fit 16 vector
    registers below AVX-512, 32 with it; complex strips stay at 3 ('abc,cd->adb'
    (15,21,22127):T x (22127,14)[:, ::2] c64 with strips of 6 took the
    orientation walking A along K once per strip: 0.47x numpy, 0.8x so)."""
    if complex_:
        return 3
    return 8 if VECTOR_BITS.get(_native.isa(), 128) >= 512 else 4
CTILE_MV = 2            # vectors along V of its register tile
CTILE_TILE_CYCLES = 30  # storing one tile (swap, combine, loads and stores of C)
CTILE_LATENCY = 4       # cycles of an FMA's latency: a tile's least cycles a k
CTILE_CHAINS = 8        # accumulators that keep two FMA units busy (the kernel's CT_CHAINS)
CTILE_COPY_ROW = 4      # starting a row of the partial tile's copy
CTILE_KO = 16           # K rows of the kernel's blocks reading x in place (CT_KO)
BYTES_PER_CYCLE = 5.0   # memory bytes per core cycle (13.9 GB/s at 2.9 GHz, Zen 3)


def _ctile_order(loops, itemsize, complex_=True):
    """The loops reordered for the register-tile kernel, or None: outer
    loops, then W (the output and y move, x does not), K (x and y move, the
    output does not), V (the output and x move, y does not).  x is the
    input read as vectors along V through a block copy, so it is the larger
    input (read once; y is re-read once per V run of the block); V is x's
    loop of least stride, W y's longest, K x's summed loop of least stride.
    A real x must be unit-stride along V, at least half a vector of it:
    the kernel then reads it in place (a V shorter than a vector through
    a copy of each row's few elements), where a copy of the block would
    cost what the packed engine's packing does ('ij,jk->ik' (7,230781):T x
    (230781,4) f32, V = 4 of 8 lanes: 2.2 ms as tiles, 3.6 packed, numpy
    1.6-2.1; V = 2, a quarter of the lanes, as tiles 'kl,lm->km'
    (2,774416):F x (774416,12):T f32 ran 1.7x slower than packed)."""
    if len(loops) < 3:
        return None
    best = None
    for x in (0, 1):
        y = 1 - x
        vs = [lp for lp in loops if lp.strides[x] and not lp.strides[y] and lp.strides[2]]
        ws = [lp for lp in loops if lp.strides[y] and not lp.strides[x] and lp.strides[2]]
        ks = [lp for lp in loops if lp.strides[x] and lp.strides[y] and not lp.strides[2]]
        if not (vs and ws and ks):
            continue
        V = min(vs, key=lambda lp: (abs(lp.strides[x]), -lp.extent))
        if not complex_ and (V.strides[x] != 1
                             or 2 * V.extent < vector_lanes(itemsize)):
            continue
        K = min(ks, key=lambda lp: (abs(lp.strides[x]), -lp.extent))
        # W: y's longest loop, unless another prices lower (the longest
        # stepping the output a line an element under an outer loop that
        # fills those lines: ctile_parts)
        for W in sorted(ws, key=lambda lp: -lp.extent):
            rest = [lp for lp in loops if lp is not V and lp is not W and lp is not K]
            order = rest + [W, K, V]
            cost = ctile_cycles(order, itemsize, complex_)
            if best is None or cost < best[0]:
                best = (cost, order)
    return best[1] if best else None


def _pass_lines(outer_loops, W, j, row, itemsize):
    """Bytes of the lines one pass of the register-tile kernel touches in
    operand j (the output or y), where that is more than the pass uses: W
    stepping it a line or more (row: the elements a step spans along the
    tile's other loop, each step's few on lines of their own), a loop
    outside stepping it within a line (its next pass fills the rest of
    those lines), and the pass's lines outgrowing L2, so that every pass
    reads them again ('iab,bc->aic' (35134,107,2) x (2,3) c64 with W = i
    under a: each pass over i a line of the 90 MB output per element, 129
    ms; numpy 61).  0 otherwise.  x keeps its price of one read a pass:
    priced so, the packed engine took 'bij,bjk->bik' (27,6,490):T x
    (27,490,690):F c64 at 101 ms where the tiles, their re-reads of x
    coming from L3, run in 34."""
    if abs(W.strides[j]) * itemsize < LINE:
        return 0
    if not any(0 < abs(lp.strides[j]) * itemsize < LINE and lp.extent > 1
               for lp in outer_loops):
        return 0
    lines = W.extent * max(LINE, -(-row * itemsize // LINE) * LINE)
    return lines if lines > l2_resident() else 0


def ctile_parts(loops, itemsize, complex_=True):
    """(work, bytes moved) of the register-tile kernel on ``loops`` (outer...,
    W, K, V), one thread: an FMA per vector of a tile and k (two for complex; V
    padded to whole vectors, W in strips of ctile_nw()), a copy of x (of its
    last partial tiles when it is unit-stride along V and W one strip), a
    store per tile and block; x and the output moved once (the output again
    per K block when it does not fit in L2), y once per V run (once in all
    for a real y that fits in L2)."""
    W, K, V = loops[-3:]
    outer = math.prod(lp.extent for lp in loops[:-3])
    per = 2 if complex_ else 1            # reals an element, FMAs a vector
    lanes = max(2, VECTOR_BITS.get(_native.isa(), 128) // 8 // (itemsize // per))
    H = lanes // per                      # elements per vector
    vpad = -(-V.extent // H) * H
    vmax = CTILE_VB
    if K.extent * CTILE_VB < CTILE_ELEMS:
        vmax = CTILE_ELEMS // K.extent // (2 * H) * (2 * H)
    vb = min(vpad, vmax)
    kb = max(1, min(512, CTILE_ELEMS // vb))
    kblocks = -(-K.extent // kb)
    vruns = -(-V.extent // vb)
    strips = -(-W.extent // ctile_nw(complex_))
    tiles = strips * -(-vpad // (CTILE_MV * H)) * kblocks
    fma = per * W.extent * K.extent * (vpad // H) / 2      # two FMA units
    if not complex_:
        # a tile of few accumulators waits on their FMAs' latency: at least
        # CTILE_LATENCY a k, half that where the call's tiles are all small
        # enough to sum even and odd k apart (ep_nest_ctile_template.h)
        nw = ctile_nw(False)
        rows = [nw] * (W.extent // nw) + ([W.extent % nw] if W.extent % nw else [])
        vecs = vpad // H
        cols = [CTILE_MV] * (vecs // CTILE_MV) + ([vecs % CTILE_MV] if vecs % CTILE_MV else [])
        split = min(W.extent, nw) * min(vecs, CTILE_MV) < CTILE_CHAINS
        least = CTILE_LATENCY / (2 if split else 1)
        fma = K.extent * sum(max(r * c / 2, least) for r in rows for c in cols)
    # x is copied, or -- unit-stride along V, one strip of W or complex
    # with K past a block of CTILE_KO -- read in place but for its last,
    # partial tile per V run, a few elements and a row's start a k
    x_ix = [j for j in (0, 1) if W.strides[j] == 0][0]
    in_place = V.strides[x_ix] == 1 and (strips == 1 or (complex_ and K.extent > CTILE_KO))
    copied = V.extent if not in_place else V.extent % (CTILE_MV * H)
    if in_place:
        copy = copied + (CTILE_COPY_ROW if copied and not complex_ else 0)
    elif V.strides[x_ix] == 1 and not complex_:
        # unit-stride rows of x copied whole, a vector a cycle
        copy = copied / H + CTILE_COPY_ROW
    else:
        copy = copied                     # gathered an element at a time
    work = outer * (fma + K.extent * copy + tiles * CTILE_TILE_CYCLES)
    # the output's lines: an element each where neither W nor V is near its
    # unit stride ('ia,ibc->abc' with c, the output's unit stride, outermost:
    # each of 24 passes over 64 MB writes a line an element, 58 ms; numpy 11)
    span = min(abs(lp.strides[2]) * itemsize for lp in (W, V))
    out = W.extent * V.extent * min(LINE, max(itemsize, span))
    out = max(out, _pass_lines(loops[:-3], W, 2, V.extent * abs(V.strides[2]), itemsize))
    # y: per V run each strip of W walks K of y's lines (its elements stay
    # in cache only when y's block fits in L2), a page apart costing a TLB
    # walk each ('ijk,jkl->il' (380,1850,16):T x (1850,16,8) c128 with x the
    # small B and y the 180 MB A walked along k: 5x slower than the reverse)
    y_ix = 1 - x_ix
    y_step = abs(K.strides[y_ix]) * itemsize
    y_walk = strips * K.extent * min(y_step, LINE) * (4 if y_step >= PAGE else 1)
    y_bytes = W.extent * K.extent * itemsize
    if W.extent * kb * itemsize <= l2_resident():
        y_walk = y_bytes
    y_walk = max(y_walk, _pass_lines(loops[:-3], W, y_ix, K.extent * abs(K.strides[y_ix]),
                                     itemsize))
    # a real y that fits in L2 is read from memory once (its lines stay)
    y_runs = 1 if not complex_ and y_bytes <= l2_resident() else vruns
    # x once per pass of the outer loops, or once in all when V runs in
    # runs with them inside (ctile_vrun)
    x_passes = 1 if ctile_vrun(loops, itemsize) else outer
    moved = (x_passes * K.extent * V.extent * itemsize
             + outer * (y_runs * max(y_bytes, y_walk)
                        + 2 * out * (1 if out <= l2_resident() else kblocks)))
    return work, moved


CTILE_VRUN_ALIGN = 32    # ep_nest.c's EP_CTILE_VRUN_ALIGN


def ctile_vrun(loops, itemsize) -> int:
    """Elements of the register-tile kernel's V runs with the loops outside
    its three inside each run, or 0 (V whole); mirrors ep_nest.c's
    ep_ctile_vrun.  When x does not move along the outer loops and is past
    half of L2, a run of V (K x run elements of x) stays in L2 for every
    pass of them, where the whole of x would be read from memory once per
    pass ('abc,cd->adb' (3,6,234):T x (234,15281) c64: 26.6 ms, 17.4 in
    runs; numpy 21.8); y is re-read once per run, so the runs are taken
    while those re-reads come to at most half of x's bytes saved."""
    W, K, V = loops[-3:]
    x = 0 if W.strides[0] == 0 else 1
    outer, y_bytes = 1, W.extent * K.extent * itemsize
    for lp in loops[:-3]:
        if lp.strides[x] != 0:
            return 0
        outer *= lp.extent
        if lp.strides[1 - x] != 0:
            y_bytes *= lp.extent
    col = K.extent * itemsize
    x_bytes = col * V.extent
    if outer < 2 or x_bytes <= l2_bytes() // 2:
        return 0
    run = max(CTILE_VRUN_ALIGN, l2_bytes() // 2 // col // CTILE_VRUN_ALIGN * CTILE_VRUN_ALIGN)
    if run >= V.extent:
        return 0
    runs = -(-V.extent // run)
    return run if 2 * (runs - 1) * y_bytes <= (outer - 1) * x_bytes else 0


# A real GEMM's small-edge kernel gives way to the register-tile kernel
# priced below this share of it: both memory-bound, the two prices tie
# within the model's noise ('abc,cd,bd->a' (4,5290,1):F x (1,5):F x
# (5290,5):F f64, tied: 40 us there, 71 as tiles)
CTILE_EDGE_MARGIN = 0.8


CTILE_ONCE = 1.25       # a real tile kernel moving at most this much more than one read
                        # of each operand (and a write of the output) runs


def ctile_reads_once(loops, itemsize) -> bool:
    """Whether the real register-tile kernel on ``loops`` moves about what
    one read of every operand does.  The plain nest reads and writes its
    output row once per k around it, or re-reads x once per w; the kernel,
    reading x in place and holding the output in registers, does less work
    than either and so runs wherever its traffic is that of one pass
    ('iab,bc->aic' (2,5713,28):T x (28,2):F f64: 112 us as rows, 57 us as
    tiles, numpy 55)."""
    _, moved = ctile_parts(loops, itemsize, False)
    x, y, out = operand_bytes([(lp.extent, lp.strides) for lp in loops], itemsize)
    return moved <= CTILE_ONCE * (x + y + 2 * out)


def ctile_cycles(loops, itemsize, complex_=True):
    """Cycles of the register-tile kernel (``ctile_parts``), one thread: the
    larger of its work and its memory traffic at BYTES_PER_CYCLE."""
    work, moved = ctile_parts(loops, itemsize, complex_)
    return max(work, moved / BYTES_PER_CYCLE)


def plain_cycles(loops, itemsize, short=0, row="prod/contig", nin=2, complex_=True):
    """The plain nest's cycles on the same scale as ``ctile_cycles``: the
    larger of its compute-side cycles (``nest_cycles``) and its modelled
    traffic at BYTES_PER_CYCLE."""
    class _S:
        pass
    st = _S()
    st.loops, st.short, st.row, st.inputs = loops, short, row, (0,) * nin
    dt = ("complex128" if itemsize == 16 else "complex64") if complex_ else (
        "float64" if itemsize == 8 else "float32")
    moved = traffic([(lp.extent, lp.strides) for lp in loops], itemsize)
    return max(nest_cycles(st, dt), moved / BYTES_PER_CYCLE)


CTILE_EDGE = 16          # a complex GEMM with an edge this short is priced on both engines
CTILE_EDGE_MN = 32       # ... and with m or n this short (the packed 1m engine packs the long
                         # operand's B panels twice over for a few rows: 'ji,jk->ki' (1659,
                         # 2801) x (1659,24) c64 41.7 ms packed, 25.5 ms in the nest; a short
                         # k is not: (2000,24) x (24,2000) c64 17 ms packed, 32 ms in the nest)
# The packed engine's price must be below this share of the register-tile
# kernel's, per kernel set.  AVX2 (Zen 3): the 1m panels double B and pad it,
# so the packed engine runs slower than its price.  AVX-512 (Xeon, 1 thread):
# the packed engine runs within 0-20% of its price and the register-tile
# kernel 1.5-1.8x over its own, so the cheaper by price runs: 'ij,kj->ik'
# F order c64 (500,8) x (500,8) 336 -> 140 us (0.77x -> 1.9x numpy),
# (1000,12) 1714 -> 793 us, (500,16) 457 -> 221 us; c128 1.36-1.43x.
CTILE_GEMM_MARGIN = {"avx512": 1.0}
CTILE_GEMM_MARGIN_DEFAULT = 0.5


def ctile_gemm_margin() -> float:
    """CTILE_GEMM_MARGIN for the kernel set in use."""
    return CTILE_GEMM_MARGIN.get(_native.isa(), CTILE_GEMM_MARGIN_DEFAULT)


def ctile_by_cost(step, gemm_steps, dtype):
    """('nest' or 'gemm', why) for a complex GEMM with a short edge whose
    nest runs the register-tile kernel: the packed engine only when its
    predicted compute cycles (model.gemm_cycles) are below
    ``ctile_gemm_margin()`` of the kernel's (``ctile_cycles``), each shared by the
    threads its engine runs with (the kernel's three loops are innermost, so
    only a loop outside them shares it out: 'ij,kj->ik' (3870,5) x (3598,5)
    c64 has none, and on one thread of two it runs 0.4x numpy where the
    packed engine's two run 1.4x)."""
    tn, tg = _threads_of(step, gemm_steps)
    cn = ctile_cycles(step.loops, _itemsize(dtype), str(dtype).startswith("complex")) / tn
    cg = gemm_cycles(gemm_steps, dtype) / tg
    engine = "gemm" if cg < ctile_gemm_margin() * cn else "nest"
    return engine, (f"{engine} by predicted cost: register-tile kernel {cn / 1e3:.1f} "
                    f"kcycles on {tn} thread(s), packed GEMM engine (1m) {cg / 1e3:.1f} "
                    f"kcycles on {tg}")


ROW_SPLIT_BYTES = 8192   # a row shared out by threads is at least this long
CTILE_SPLIT_K = 256      # the register-tile kernel's K shared out when at least this long


PART_MAX = 4096          # output elements of threads' private copies (ep_nest.c's ep_nest_parts)
PERIOD_SPLIT_ROWS = 4096   # period rows shared out by threads


def _split(loops, nin, threads_cap, short=False, inner=2, itemsize=8, tile=0, period=False):
    """The loop threads share out: the outermost one around the row the
    output varies along (disjoint writes) with extent >= 2, or -- when the
    output is a scalar -- the outermost loop (per-thread partial sums).
    With the small-edge kernel, a loop outside its two; with the register-tile
    kernel, one outside its three, else its V loop when long.  Failing those, the
    row itself when it is the only loop, or when the output varies along it
    and it is long: each thread then runs its part of every row, the loops
    around it summed ('kl,l->k' with k unit-stride: a GEMV's axpy form;
    'ab,a->b' (2,815904) f64 in the small-edge kernel, 2 threads: 0.35 ->
    0.16 ms).  The period stream, with no such loop outside it, shares out
    its rows, each thread summing into a private copy of the output; so
    does, last, a small output summed along the outermost loop."""
    if threads_cap <= 1:
        return -1
    if all(lp.strides[-1] == 0 for lp in loops):
        return 0 if loops else -1
    # (a loop whose output steps a line or more first: the threads' writes
    # along one stepping less share lines -- 'ij...,jk...->ik...' (204,3,5,1)
    # x (3,54,1,5) f32 shared out A, 5 elements apart in the output: 2
    # threads 480 us, 1 thread 213)
    outside = loops[:-inner] if short else loops[:-1]
    for i, lp in enumerate(outside):
        if lp.extent >= 2 and abs(lp.strides[-1]) * itemsize >= LINE:
            return i
    for i, lp in enumerate(outside):
        if lp.strides[-1] != 0 and lp.extent >= 2:
            return i
    if not loops:
        return -1
    row = loops[-1]
    if period:
        # the period stream's rows in parts, each thread's sum in a private
        # copy of the small output ('ab,a->b' (163404, 3) f32, 2 threads)
        out = math.prod(lp.extent for lp in loops if lp.strides[-1] != 0)
        return (len(loops) - 2 if loops[-2].extent >= PERIOD_SPLIT_ROWS and out <= PART_MAX
                else -1)
    if short and inner != 2:
        # the register-tile kernel: its V loop, when long, in parts ('ij,jk->ik'
        # (30000,30) F x (30,3) f64 with no loop outside the kernel's three),
        # else its W loop, when it spans several strips ('ij,kj->ik' (244,2) x
        # (32816,2) c128: each thread writes its own half of a 128 MB output)
        if row.extent * itemsize >= ROW_SPLIT_BYTES:
            return len(loops) - 1
        if loops[-3].extent >= 2 * ctile_nw(False):
            return len(loops) - 3
        # else, with the three the whole nest, its K loop: each thread sums
        # its part into a private output, the parts added in thread order
        # ('ij,jk->ik' (112,48807) F x (48807,3) f64, A streamed from memory)
        return len(loops) - 2 if len(loops) == 3 and loops[-2].extent >= CTILE_SPLIT_K else -1
    if (len(loops) == 1 and not short) or (not tile and row.strides[-1] != 0
                                           and row.extent * itemsize >= ROW_SPLIT_BYTES):
        return len(loops) - 1
    if (not short and not tile and len(loops) >= 2 and loops[0].strides[-1] == 0
            and loops[0].extent >= 2
            and math.prod(lp.extent for lp in loops if lp.strides[-1] != 0) <= PART_MAX):
        # the output summed along the outermost loop and small: each thread
        # sums its part of that loop into a private copy of the output, the
        # copies added in thread order ('ab,a->b' (22925,316)[:, ::2] f64,
        # a GEMV's axpy form over a summed a: one thread 5.6 ms, numpy's
        # two 3.6)
        return 0
    return -1


def _tiles_win(ctile, plain, edge, itemsize, is_complex) -> bool:
    """Whether a GEMM's nest runs the register-tile kernel on the loops
    ``ctile`` (_ctile_order) rather than as rows priced ``plain`` (the
    small-edge kernel's when ``edge``).  Complex: the cheaper.  Real: a K
    longer than MAX_SHORT (over a shorter one the tiles' stores, not the
    one pass over x, set the speed: 'ia,ib,ic->abc' (2,15) x (2,5534) x
    (2,182) f32, K = 2, 16 ms as tiles, 3.3 packed, numpy 9), the traffic
    of one pass, and against the small-edge kernel a price below
    CTILE_EDGE_MARGIN of its: that kernel holds the short loop in
    registers along a long output row ('ij,jk->ik' (40000,4) x (4,100)
    f64: 2.0 ms there, 4.4 ms as tiles), but a call per few short rows
    costs more than tiles streaming a long K ('ijk,jkl->il' (11,37376,2):F
    x (37376,2,2) f32: 4.3 ms in it, 1.0 ms as tiles)."""
    if is_complex:
        return ctile_cycles(ctile, itemsize, True) < plain
    return (ctile[-2].extent > MAX_SHORT and ctile_reads_once(ctile, itemsize)
            and (not edge or ctile_cycles(ctile, itemsize, False) < CTILE_EDGE_MARGIN * plain))


def nest_step(kind, ins, dst, out_labels, out_strides, sizes, dtype, buffer=None):
    """The NestStep computing ``out = sum prod(ins)``.

    ``ins``: (slot, labels, element strides) per input; ``out_strides``:
    element stride of each destination label of extent > 1.
    """
    itemsize = _itemsize(dtype)
    labels = []
    for _, lab, _ in ins:
        labels += [c for c in lab if c not in labels and sizes[c] != 1]
    labels += [c for c in out_strides if c not in labels and sizes[c] != 1]
    own = [dict(zip(lab, st)) for _, lab, st in ins]
    table, offsets, flipped = forward({c: (sizes[c], tuple(o.get(c, 0) for o in own)
                                           + (out_strides.get(c, 0),)) for c in labels}, itemsize)
    table = coalesce(table)
    is_complex = str(dtype).startswith("complex")
    loops = [NestLoop(c, table[c][0], table[c][1])
             for c in order_loops(table, itemsize, is_complex)]
    loops = merge_loops(loops)
    period = period_order(loops, itemsize, len(ins), is_complex)
    if period is not None:
        loops = period
    edge = None if period else _short_edge(loops, itemsize, len(ins), is_complex)
    short = 0
    ctile = None
    if len(ins) == 2 and not period:
        ctile = _ctile_order(loops, itemsize, is_complex)
    if edge is not None:
        loops = merge_loops(edge[:-2]) + edge[-2:]
        short = loops[-2].extent
        if ctile is not None:
            plain = plain_cycles(loops, itemsize, short, "short-sum", complex_=is_complex)
    elif ctile is not None:
        last = loops[-1]
        unit = all(abs(s) <= 1 for s in last.strides)
        plain = plain_cycles(loops, itemsize, 0, "prod/contig" if unit else "prod/strided",
                             complex_=is_complex)
    if ctile is not None and _tiles_win(ctile, plain, edge is not None, itemsize, is_complex):
        loops = merge_loops(ctile[:-3]) + ctile[-3:]
        short = 0
    else:
        ctile = None
    shared = rows_share_lines(loops, itemsize)
    if shared and not (short or ctile or period):
        alt = _pair_outside(loops, itemsize, is_complex)
        if alt is not None:
            loops, shared = alt, False
    tp = not (short or ctile or period or shared) and transposes(loops, itemsize, is_complex)
    tile, tile_row = ((0, 0) if short or ctile or period or shared
                      else (_tile_edge(loops, itemsize, tp) or (0, 0)))
    blocked = (None if tile or short or ctile or period or shared
               else outer_block(loops, itemsize))
    if blocked is not None:
        unblocked, loops = loops, blocked[0]
    total = math.prod(lp.extent for lp in loops)
    visits = total * (len(ins) + 1)
    cap = thread_cap(visits, itemsize)
    split = _split(loops, len(ins), cap, bool(short or ctile or period), 3 if ctile else 2,
                   itemsize, tile, period=bool(period))
    if blocked is not None and split == len(loops) - 2:
        # the threads would share the blocked loop: the order without blocks
        blocked, loops = None, unblocked
        split = _split(loops, len(ins), cap, False, 2, itemsize, tile)
    threads = cap if split >= 0 else 1
    block = (blocked[1] if blocked is not None
             else 0 if short or ctile or period or split == len(loops) - 1
             else _far_row_block(loops, itemsize) if tile
             else _row_block(loops, itemsize))
    across = 0
    if (not (short or ctile or period or shared or block or blocked is not None)
            and tile < vector_lanes(itemsize) and not picked_rows(loops, itemsize)):
        across = across_block(loops, itemsize)
    if across:
        tile = tile_row = 0
        tp = False
        a = len(loops) - 1 - across
        if split > a:
            split = a if threads > 1 else -1
    row = "prod"
    if across:
        row = "across"
    elif ctile:
        row = "ctile"
    elif short:
        row = _short_row(loops)
    elif period:
        row = "prod/period"
    elif loops:
        last = loops[-1]
        row = "sum" if last.strides[-1] == 0 else "prod"
        moving = [s for s in last.strides[:-1] if s != 0]
        unit = all(abs(s) == 1 for s in moving) and (row == "sum" or abs(last.strides[-1]) == 1)
        if tp:
            row += "/transposed"
        else:
            row += "/contig" if unit and all(s == 1 for s in moving) else "/strided"
        if row == "sum/strided" and not tile and _gathers_vector(loops):
            row = "sum/gathered"
    else:
        row = "sum/scalar"
    moved = sum(math.prod(sizes[c] for c in lab if sizes[c] != 1) for _, lab, _ in ins)
    moved += math.prod(sizes[c] for c in out_strides if sizes[c] != 1)
    native = _native.prepare_nest(str(dtype), len(ins),
                                  tuple((lp.extent,) + lp.strides for lp in loops),
                                  split, threads, tile, block, 2 if ctile else int(bool(short)),
                                  tile_row, offsets=offsets, transposed=tp,
                                  block_outer=blocked is not None, across=across)
    return NestStep(kind, tuple(s for s, _, _ in ins), dst, tuple(lab for _, lab, _ in ins),
                    out_labels, tuple(loops), row, tile, split, threads, buffer,
                    moved * itemsize, total * max(len(ins) - 1, 1), block=block,
                    short=short, tile_row=tile_row, ctile=ctile is not None, across=across,
                    block_outer=blocked is not None,
                    reversed=flipped, native=native)


ACROSS_MAXE = 64     # iterations of the across kernel's block (EP_NEST_ACROSS_MAXE)
ACROSS_MIN = 512     # elements of the loop it runs across, worth its chunks


def across_block(loops, itemsize) -> int:
    """Loops of the across kernel's block (0: not taken): the innermost
    loops, two or more of at most ACROSS_MAXE iterations in all, when their
    row is too short for the row kernels (under two vectors) and the loop
    outside them is long (ACROSS_MIN), every input moving along it either
    at unit stride or copied per chunk (its block's span at most twice the
    block's iterations).  Many small blocks ('nij,nj->ni' over 3 x 3
    matrices, f64: a call of the rows kernel per matrix, 33 ms, numpy 16)
    run as a few rows a chunk, each input's blocks transposed into them
    (13 ms)."""
    if len(loops) < 2 or loops[-1].extent >= 2 * vector_lanes(itemsize):
        return 0
    e, k = 1, 0
    for lp in reversed(loops):
        if e * lp.extent > ACROSS_MAXE:
            break
        e *= lp.extent
        k += 1
    # (a block of one loop is a row end to end with the next: the rows
    # kernels run those a vector of rows at a time)
    if k < 2 or k == len(loops):
        return 0
    block, a = loops[len(loops) - k:], loops[-1 - k]
    if a.extent < ACROSS_MIN or not any(a.strides[:-1]):
        return 0
    for j, s in enumerate(a.strides[:-1]):
        span = sum((lp.extent - 1) * abs(lp.strides[j]) for lp in block) + 1
        if s not in (0, 1) and span > 2 * e:
            return 0
    return k


def gathers_row(loops, lanes) -> bool:
    """A strided row the row kernels gather into L1 in vector chunks and run
    as contiguous (ep_nest_template.h's gatherable): one or two moving
    inputs at strides of 1 or 2 either way, one of them not 1, a summed or
    unit-stride output row, and at least four vectors long."""
    if not loops:
        return False
    row = loops[-1]
    moving = [s for s in row.strides[:-1] if s != 0]
    return (1 <= len(moving) <= 2 and all(abs(s) in (1, 2) for s in moving)
            and any(s != 1 for s in moving) and row.strides[-1] in (0, 1)
            and row.extent >= 4 * lanes)


def _gathers_vector(loops):
    """A GEMV's dot form whose vector is strided along the row and shared by
    the rows around it (at least 4 of them), the matrix rows unit-stride:
    the rows kernel gathers the vector once per call and runs the rows
    contiguous ('sum/gathered')."""
    if len(loops) < 2:
        return False
    row, around = loops[-1], loops[-2]
    moving = [j for j, s in enumerate(row.strides[:-1]) if s != 0]
    if len(moving) != 2 or around.extent < 4:
        return False
    for v, m in (moving, moving[::-1]):
        if around.strides[v] == 0 and around.strides[m] != 0 and row.strides[m] == 1:
            return True
    return False


def _short_row(loops):
    """The small-edge kernel's row name: 'short-sum' (the output summed over
    the short loop) or 'short-dots' (S dots along the row), '/contig' when
    every moving input and the output are unit-stride along the row (else
    '/copied': the kernel copies or scatters)."""
    S, L = loops[-2], loops[-1]
    name = "short-sum" if S.strides[-1] == 0 else "short-dots"
    moving = [s for s in L.strides[:-1] if s != 0]
    unit = all(s == 1 for s in moving) and L.strides[-1] in (0, 1)
    return name + ("/contig" if unit else "/copied")


def _itemsize(dtype) -> int:
    return {"float32": 4, "float64": 8, "complex64": 8, "complex128": 16}[str(dtype)]



def step_kind(n_inputs, m, n, k) -> KernelKind:
    """The mathematical kind of a nest (for reports): by which groups are empty."""
    if n_inputs == 1:
        return KernelKind.REDUCE
    if n_inputs > 2:
        return KernelKind.PRODUCT
    if k:
        if m and n:
            return KernelKind.GEMM
        return KernelKind.GEMV if (m or n) else KernelKind.DOT
    return KernelKind.OUTER if (m and n) else KernelKind.BATCH_ONLY
