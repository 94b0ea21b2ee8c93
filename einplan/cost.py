"""Step 2a/2f's price of a candidate: the planner's predicted time of steps.

A call of three or more operands can run as one loop nest over all of them
or as any of several pairwise paths, each step on its own engine.  The
planner builds the candidates and keeps the one of least predicted time;
counting iterations alone misses what decides it: a nest over every operand
re-reads or re-writes what a pairwise step forms once, a row of three
strided inputs runs element by element while a path's steps run vectorised
rows or a packed GEMM.

The price is coarse and fixed (a nominal core: 3 GHz, 2 FMA units, 10 GB/s
from memory, 30 GB/s for a step whose operands and result together fit in a
core's share of L3: a repeated call finds them there), never the calibrated machine of explain's model: a plan must
not depend on a timing taken under load.  What it counts:

* a NestStep: the larger of the memory traffic its loop order moves
  (``nest.traffic``: re-reads included) and the work of its rows, plus half
  the lesser (they overlap only in part) -- per
  element a few cycles more for each input walked with a stride (a scalar
  gather; a row of three or more moving strided inputs runs the generic
  loop) than for contiguous vector rows -- plus a start-up per row;
* a GemmStep: ``model.predict_gemm`` with the step's own schedule (packing,
  tiles, threads) on the nominal core;
* a ReduceStep (numpy sum / cast / copy): its bytes at the nominal bandwidth;
* every step a fixed start-up (an intermediate's allocation, a call).
"""
from __future__ import annotations

import functools
import math

import numpy as np

from . import _native, model
from .nest import (COMPLEX_OPS, L3_SHARE, ctile_parts, gathers_row, l1_bytes, l2_resident,
                   operand_bytes, packed, rows_per_start, short_kept_rows, traffic,
                   vector_lanes)
from .plan import GemmStep, NestStep, ReduceStep

NOMINAL_GHZ = 3.0
NOMINAL_FMA_UNITS = 2
NOMINAL_BANDWIDTH_GBS = 10.0
CACHED_BANDWIDTH_GBS = 30.0   # a step whose data fits in a core's share of L3
STEP_S = 1.5e-6          # start-up of one step: a call, an intermediate's allocation
ROW_S = 12e-9            # start-up of one nest row (pointers, scale, tail)
VEC_ELEM_S = 0.012e-9    # per element and operand byte of a vectorised row
ACROSS_COPY_S = 0.6e-9   # per element an across kernel's chunk copies (a transpose)
ACROSS_CHUNK = 128       # elements of a typical across chunk (ep_nest.c sizes it to L1)
STRIDED_ELEM_S = 0.25e-9  # per element and operand of a row with a strided input
OVERLAP = model.MEMORY_OVERLAP   # share of the lesser of memory and row time not hidden
L2_BANDWIDTH = 60e9      # bytes per second between L1 and L2 (a core, reads and writes)
GENERIC_ELEM_S = 0.6e-9  # the same when three or more inputs move along the row
                         # (the generic loop: no unrolled form)
SHORT_ROW_S = 1.5e-9     # start of one short kept row inside the rows kernel's call
PLAIN_ELEM_S = 0.4e-9    # per element and moving input of such a row's element loop
SHORT_VEC_S = 0.6e-9     # per vector loaded or stored by such a row in vectors


@functools.lru_cache(maxsize=None)
def nominal_machine(isa: str, threads: int, bandwidth_gbs: float) -> model.Machine:
    """The fixed core the planner prices candidates on."""
    caches = _native.kernel_config()["caches"]
    return model.Machine("nominal", isa, model.VECTOR_BITS.get(isa, 128), NOMINAL_FMA_UNITS,
                         "nominal", NOMINAL_GHZ, "nominal", NOMINAL_GHZ,
                         bandwidth_gbs, "nominal", threads,
                         int(caches["l1d"]), int(caches["l2"]), int(caches["l3"]))


def _bandwidth(footprint) -> float:
    """Bytes per second a step streams its data at, by where that data fits."""
    gbs = CACHED_BANDWIDTH_GBS if footprint <= L3_SHARE else NOMINAL_BANDWIDTH_GBS
    return gbs * 1e9


def _itemsize(dtype) -> int:
    return np.dtype(dtype).itemsize


def nest_seconds(step: NestStep, dtype) -> float:
    """Predicted time of a NestStep: max(memory traffic, row work) + start-ups."""
    item = _itemsize(dtype)
    loops = [(lp.extent, lp.strides) for lp in step.loops]
    if not loops:
        return STEP_S
    total = math.prod(e for e, _ in loops)
    footprint = sum(operand_bytes(loops, item))
    walked = loops
    if step.block and step.block_outer:
        # the loop around the row in blocks, the block loop outermost
        e, st = loops[-2]
        walked = ([(-(-e // step.block), tuple(s * step.block for s in st))] + loops[:-2]
                  + [(step.block, st), loops[-1]])
    elif 0 < step.block < loops[-1][0] and loops[-1][1][-1] == 0:
        # a summed row in blocks, the block loop outermost: what the loops
        # around the row re-read is one block ('ij,jk->ik' (2,201873) x F
        # (201873,73): A's rows re-read per k from cache, not memory).  (A
        # kept row's block is re-written per outer loop, in L1: work the
        # row time does not price, so its traffic stays the unblocked one.)
        e, st = loops[-1]
        walked = ([(-(-e // step.block), tuple(s * step.block for s in st))] + loops[:-1]
                  + [(step.block, st)])
    if getattr(step, "ctile", False):
        # the register-tile kernel: its work (FMAs, copies, tile stores)
        # and its traffic (x and the output once, y per V run), as the
        # engine choice prices it (nest.ctile_parts)
        work, moved = ctile_parts(step.loops, item, str(dtype).startswith("complex"))
        threads = max(1, min(step.threads, _native.get_num_threads()))
        t_cpu = work / (NOMINAL_GHZ * 1e9) / threads
        t_mem = moved / _bandwidth(footprint)
        return max(t_mem, t_cpu) + OVERLAP * min(t_mem, t_cpu) + STEP_S
    if getattr(step, "across", 0):
        # the across kernel: every operand streamed once, each copied element
        # (an input's blocks transposed into rows per chunk, and the output's
        # back) ACROSS_COPY_S, each product a vectorised row's element
        a = len(loops) - 1 - step.across
        n = loops[a][0]
        copied = sum(c for c, s in zip(operand_bytes(loops, 1), loops[a][1]) if s not in (0, 1))
        t_mem = footprint / _bandwidth(footprint)
        t_cpu = copied * ACROSS_COPY_S + total * VEC_ELEM_S * item * len(step.inputs)
        threads = max(1, min(step.threads, _native.get_num_threads()))
        t_cpu /= threads
        # (a row start per chunk of the loop; the block's row calls within
        # a chunk are priced in its per-element work)
        return max(t_mem, t_cpu) + OVERLAP * min(t_mem, t_cpu) + n / ACROSS_CHUNK * ROW_S + STEP_S
    # the small-edge kernel holds the output over its short loop in registers
    t_mem = traffic(walked, item, held=1 if step.short else 0) / _bandwidth(footprint)
    row_n = loops[-1][0]
    rows = total / row_n
    folded = 0
    if step.short:
        # the small-edge kernel runs the loop around its two in one call
        # ('ij,jk->ik' (24495,2) F x (2,6) f32: 24495 rows of 6, 22 us,
        # priced at a start a row 346 us)
        rows /= step.short * (loops[-3][0] if len(loops) >= 3 else 1)
    else:
        # a vector or four of short rows per start of the rows kernel, and
        # the inputs every row shares multiplied once
        per, folded = rows_per_start(step.loops, item, str(dtype).startswith("complex"))
        rows /= per
    row = loops[-1][1]
    moving = [s for s in row[:-1] if s != 0]
    strided = [s for s in moving if abs(s) != 1] + ([row[-1]] if abs(row[-1]) > 1 else [])
    if step.row.endswith("/strided") and not strided:
        # a row walking an operand backwards runs the strided kernel too
        strided = [s for s in moving if s < 0]
    if step.row == "sum/gathered":
        # the shared vector gathered once per call, the rows contiguous
        strided = []
    gathered = 0
    if step.row != "sum/gathered" and gathers_row(step.loops, vector_lanes(item)):
        # gathered into L1 a chunk at a time (a copy per strided input), then
        # run contiguous
        gathered = sum(1 for s in moving if abs(s) != 1)
        strided = []
    n_ops = len(moving) + 1 - folded + gathered
    if step.tile and len(step.loops) >= 2 and not step.row.endswith("/transposed"):
        # each input a tile copies into contiguous rows is loaded and stored
        # once more, a complex one element by element ('abc,bc->a' (40,500,7)
        # x (500,7) F c64, A copied per tile: 126 us; B copied once, 36 us)
        cplx = str(dtype).startswith("complex")
        n_ops += len(packed(step.loops[-2], step.loops[-1])) * (COMPLEX_OPS if cplx else 1)
    t_revisit = 0.0
    summed = [i for i, (e, st) in enumerate(loops[:-1]) if st[-1] == 0 and e > 1]
    if not step.short and not getattr(step, "ctile", False) and row[-1] != 0 and summed:
        # a kept row re-visited by a summed loop outside it: each visit
        # after the first loads and stores the output again, where the
        # small-edge kernel holds it in registers ('ia,ib,ic->abc' (7,2) x
        # (7,2820) x (7,1593) f64 as one nest over i outside c: 16 ms; an
        # outer product, then k = 7 in registers: 13.6 ms)
        n_ops += 1
        inside = sum(operand_bytes(loops[summed[-1] + 1:], item))
        if l1_bytes() < inside <= l2_resident():
            # the visits' rows past L1 come from L2 while no memory traffic
            # runs beside them (it belongs to the first visit): their loads
            # and stores add to the step ('ia,ib,ic->abc' (4,4) x (4,46) x
            # (4,51387) f64, rows of 411 KB visited 4 times: 20 ms, 12 ms
            # with i held in registers)
            visits = math.prod(loops[i][0] for i in summed)
            t_revisit = total * (1 - 1 / visits) * 2 * item / L2_BANDWIDTH
    t_out = 0.0
    if step.short:
        # one FMA per element, the result held in registers over the short
        # loop; summed over it into contiguous rows, one input is loaded per
        # element and the output stored once per step.short elements
        # ('ij,jk,kl,lm->im' (777,9) x (9,16) x (16,3) x (3,1840) f32, the
        # last step 'il,lm->im' with l = 3 held: 125 us, priced as a store
        # per element at 604 and passed over for a path of 3x the FLOPs,
        # 362 us) -- when the short loop's rows stay in L1: from L2 they
        # cost as much as a store ('ij,jk,kl->il' (902,5) x (5,11) x
        # (11,5704) f64, 'il' from 'ij' and 'jl' with j held: 5 rows of 45 KB
        # per i, 4.1 ms, 3.0 through a GEMM of k = 11); else (dots, copied
        # rows, rows shorter than a vector) a load and a store
        n = loops[-1][0]
        sums = (step.row == "short-sum/contig" and n >= vector_lanes(item)
                and step.short * n * item <= l1_bytes())
        t_row = VEC_ELEM_S * item * ((1 + 1 / step.short) if sums else 2)
        if abs(row[-1]) > 1:
            # a strided output row is stored element by element, each store
            # a read and a write of its line in L2 ('ia,ib,ic->abc' (2,158)
            # (2,16046)[:, ::2] (2,6) f32 with the row b 6 apart: 19 ms, 10 ms
            # as two GEMMs; 'abc,cd->abd' (2710,8,4) F x (4,3) f32, the row 3
            # apart in a 260 KB output: 22 us, 37 us packed)
            t_out = (total / step.short) * 2 * min(abs(row[-1]) * item, 64) / L2_BANDWIDTH
    elif strided and not step.tile:
        per = GENERIC_ELEM_S if len(moving) >= 3 else STRIDED_ELEM_S
        t_row = per * n_ops
    else:
        t_row = VEC_ELEM_S * n_ops * item
        lanes = vector_lanes(item)
        if step.row.endswith("/transposed") and step.tile < lanes:
            # fewer rows than a vector: every vector of columns is loaded and
            # transposed whole for step.tile useful rows ('ij,jk->ik' (533,
            # 6290) x (6290, 3) f32 with k the tile's rows: 0.34 ns an element,
            # 0.13 with 8 rows)
            t_row *= lanes / max(step.tile, 1)
    t_cpu = total * t_row + rows * ROW_S + t_out
    cplx = str(dtype).startswith("complex")
    short_rows = "" if step.short or step.tile else short_kept_rows(step.loops, item, cplx)
    if short_rows:
        # every row of the loop in one call of the rows kernel, a loop or a
        # few vectors a row (Zen 4, in L1: rows of 5-7 f32 of two inputs at
        # stride 2 element by element 4-5 ns, contiguous rows of 5-24 in
        # vectors 1.3-4.7; priced at a row start each, 14-22 ns,
        # 'ia,ib,ic->abc' (878387,12) x (878387,1) x (878387,5)[:, ::2] f32
        # passed over its pairwise path of 9.8 ms for one nest of 19 ms)
        row_n = loops[-1][0]
        if short_rows == "vector":
            lanes = vector_lanes(item)
            per_row = SHORT_VEC_S * -(-row_n // lanes) * (
                1 + sum(abs(s_) for s_ in moving))
        else:
            per_row = PLAIN_ELEM_S * row_n * len(moving) * (COMPLEX_OPS if cplx else 1)
        t_cpu = (total / row_n) * (SHORT_ROW_S + per_row) + t_out
    threads = max(1, min(step.threads, _native.get_num_threads()))
    t_cpu /= threads
    # the row work hides the memory traffic only in part: of two candidates
    # moving the same bytes, the one doing less work is faster
    return max(t_mem, t_cpu) + OVERLAP * min(t_mem, t_cpu) + t_revisit + STEP_S


def gemm_seconds(step: GemmStep, dtype) -> float:
    """Predicted time of a GemmStep on the nominal core (its own schedule)."""
    real = np.dtype(dtype).type(0).real.dtype
    item = real.itemsize
    c2 = 2 if step.complex_mode == "1m" else 1
    M, N, K, NB = step.m.extent, step.n.extent, step.k.extent, step.batch.extent
    sched = model.schedule_of(step.kernel, M, c2 * N, c2 * K, NB)
    cf = 2 if np.dtype(dtype).kind == "c" else 1
    nreal = 4 if step.complex_mode == "cc" else 1
    footprint = NB * (M * K + K * N + M * N) * item * cf
    mach = nominal_machine(_native.isa(), _native.get_num_threads(),
                           _bandwidth(footprint) / 1e9)
    pred = model.predict_gemm(mach, real, sched, NB * M * K * item * cf,
                              NB * K * N * item * cf, NB * M * N * item * cf, nreal,
                              len(step.m.axes) > 1 or len(step.k.axes) > 1,
                              len(step.n.axes) > 1 or len(step.k.axes) > 1,
                              overhead_call=False, direct_b=step.kernel.b_in_place,
                              scattered=model.scattered_share(step))
    return pred.seconds + STEP_S


def reduce_seconds(step: ReduceStep, dtype) -> float:
    """A numpy sum / cast / copy: source and result at the nominal bandwidth."""
    item = _itemsize(dtype)
    src = math.prod(step.src_shape)
    dst = math.prod(step.src_shape[i] for i in range(len(step.src_shape))
                    if i not in step.sum_axes)
    return (src + 2 * dst) * item / _bandwidth((src + dst) * item) + STEP_S


def steps_seconds(steps, dtype) -> float:
    """Predicted time of a candidate's steps, in order."""
    total = 0.0
    for s in steps:
        if isinstance(s, NestStep):
            total += nest_seconds(s, dtype)
        elif isinstance(s, GemmStep):
            total += gemm_seconds(s, dtype)
        elif isinstance(s, ReduceStep):
            total += reduce_seconds(s, dtype)
        else:  # pragma: no cover
            raise TypeError(f"unknown step {s!r}")
    return total
