"""The report of one NestStep: its loops (outer to inner), the row kernel,
tiles, threads, and its cost as a stream over every operand once."""
from __future__ import annotations

import math

from math import prod

from .. import _native, model
from ..nest import ctile_vrun, picked_rows, transposed_pair
from ..plan import OUT
from .schema import Kernel, NestDesc, NestLoopDesc, RoleRow, Step


def build(ctx, i, step) -> Step:
    if step.dst != OUT:
        srcs = " x ".join(ctx.slot_source.get(s, f"slot {s}") for s in step.inputs)
        ctx.add_slot(step.dst, step.out_labels,
                     dict(zip(step.out_labels, step.buffer.strides)), f"nest of {srcs}")
        ctx.copy(f"step {i + 1}: intermediate '{ctx.d(step.out_labels)}'",
                 prod(step.buffer.shape) * ctx.dtype.itemsize,
                 "result of a pairwise step, read by a later one" if len(step.inputs) > 1
                 else "a block of the operand summed over the loops outside it, "
                      "then over its own summed axes")
    ins = tuple(ctx.slot(s) for s in step.inputs)
    names = [f"in{j}" for j in range(len(step.inputs))] + ["out"]
    loops = tuple(NestLoopDesc(ctx.d(lp.labels), int(lp.extent),
                               dict(zip(names, (int(v) for v in lp.strides))), lp.reduces)
                  for lp in step.loops)
    threads = step.native.threads()
    split = ctx.d(step.loops[step.split].labels) if step.split >= 0 else None
    row = step.loops[-1] if step.loops else None
    pred = model.predict_stream(ctx.mach, step.bytes_moved, step.flops,
                                overhead_call=ctx.price_flag(),
                                strided=step.row.endswith("strided"))
    if threads > 1:
        pred = model.Prediction(pred.flops, pred.bytes_moved, 0.0, 0.0, 0.0,
                                pred.t_memory / threads, pred.t_overhead,
                                pred.t_memory / threads + pred.t_overhead, pred.bound,
                                1.0, threads)
    order = " > ".join(f"{lp.labels}:{lp.extent}" for lp in loops) or "(none)"
    what = (f"loop nest over {' x '.join(x.source for x in ins)}: loops {order} "
            f"(outer to inner), row kernel {step.row}"
            + (f" vectorised along '{ctx.d(row.labels)}'" if row is not None
               and (step.row.endswith(("contig", "gathered")) or step.short or step.ctile)
               else "")
            + (f", {step.tile}x{step.tile_row} tiles over the two innermost loops"
               if step.tile else "")
            + _transposed_text(step)
            + _picked_text(ctx, step)
            + _across_text(ctx, step)
            + (f", {_blocked(ctx, step)} in blocks of {step.block} (block loop outermost)"
               if step.block else "")
            + (f", small-edge kernel: '{ctx.d(step.loops[-2].labels)}':{step.short} "
               f"held in registers around the row" if step.short else "")
            + (f", register-tile kernel: output tiles of '{ctx.d(step.loops[-3].labels)}' x "
               f"'{ctx.d(step.loops[-1].labels)}' (vectorised) held in registers while "
               f"'{ctx.d(step.loops[-2].labels)}' streams" if step.ctile else "")
            + _vrun_text(ctx, step)
            + _stream_text(step)
            + _load_text(step)
            + (f", {threads} threads over '{split}'" if threads > 1 else ", 1 thread")
            + (f" ({step.why})" if step.why else ""))
    # the row kernels' set: a short complex row may run narrower than the set in use
    isa = step.native.row_isa() if step.native is not None else _native.isa()
    kernel = Kernel("nest", isa, threads=threads,
                    parallel_loop=split if threads > 1 else "none")
    nest = NestDesc(step.engine, loops, step.row,
                    ctx.d(row.labels) if row is not None else None, step.tile, step.block,
                    split, threads,
                    step.threads, step.bytes_moved, ctx.dtype.itemsize,
                    ctx.d(step.loops[-2].labels) if step.short else None, step.tile_row,
                    ctx.d(step.reversed) or None)
    return Step(i, step.kind.value, what, engine="nest", a=ins[0],
                b=ins[1] if len(ins) > 1 else None, inputs=ins, c=ctx.slot(step.dst),
                roles=_role_rows(ctx, step), kernel=kernel, nest=nest,
                cost=ctx.cost(pred, threads))


def _transposed_text(step) -> str:
    """How the transposing tile kernel meets two inputs crossed in their unit
    strides (nest.transposed_pair)."""
    if not step.row.endswith("/transposed"):
        return ""
    x, y = transposed_pair(step.loops)
    return (f": in{y} read down the rows a vector of columns at a time and "
            f"transposed in registers to meet in{x}'s rows, no copy")


def _vrun_text(ctx, step) -> str:
    """The register-tile kernel's V in runs with the loops outside it inside
    each run (nest.ctile_vrun)."""
    run = ctile_vrun(step.loops, ctx.dtype.itemsize) if step.ctile else 0
    if not run:
        return ""
    outer = "".join(ctx.d(lp.labels) for lp in step.loops[:-3])
    return (f", '{ctx.d(step.loops[-1].labels)}' in runs of {run} with '{outer}' inside each "
            f"(a run of the input constant along '{ctx.d(step.loops[-3].labels)}' stays in L2 "
            f"for every pass of '{outer}')")


def _across_text(ctx, step) -> str:
    """The across kernel: the block of innermost loops run across the loop
    outside it, a chunk at a time (nest.across_block)."""
    if not step.across:
        return ""
    block = step.loops[len(step.loops) - step.across:]
    a = step.loops[-1 - step.across]
    iters = math.prod(lp.extent for lp in block)
    names = "".join(ctx.d(lp.labels) for lp in block)
    return (f": the block of '{names}' ({iters} iterations) run across '{ctx.d(a.labels)}' a "
            f"chunk at a time, each input strided along it transposed into one row per "
            f"element of its block, one row call per iteration of the block")


def _picked_text(ctx, step) -> str:
    """Rows shorter than a vector end to end, summed a vector of rows at a
    time (nest.runs_picked)."""
    if (step.short or step.tile or step.ctile or not step.row.endswith("contig")
            or ctx.dtype.kind == "c" or not picked_rows(step.loops, ctx.dtype.itemsize)):
        return ""
    return (": rows shorter than a vector end to end, a vector of them at a time, each "
            "row's elements picked into its lane by permutes (no per-row start)")


def _measured_choice(what, state, ways, rates) -> str:
    """', {what} {how}' for a choice ep_nest.c makes by timing the first
    such calls: the way kept (``ways`` names each), or both in turn while
    measuring; then the rates so far ((label, GB/s) pairs) once both ran."""
    how = ways.get(state, "alternately " + " and ".join(ways.values())
                   + ", until the faster is measured")
    rates_text = ", ".join(f"{gbs:.1f} GB/s {label}" for label, gbs in rates)
    ran = all(gbs > 0 for _, gbs in rates)
    return f", {what} {how}" + (f" (measured {rates_text})" if ran else "")


def _blocked(ctx, step) -> str:
    """The loop run in blocks: the row, or with block_outer the loop around it."""
    return f"'{ctx.d(step.loops[-2].labels)}'" if step.block_outer else "the row"


_STREAM_ROWS = {"sums": "rows summed", "long sums": "long rows summed",
                "dots": "rows dotted", "long dots": "long rows dotted",
                "into one": "rows summed into one output row",
                "strided": "strided rows summed"}


def _stream_text(step) -> str:
    """The order the row kernel reads rows streamed from memory in (the
    operands past half of L3)."""
    streams = None if step.native is None else step.native.streams()
    if streams is None:
        return ""
    if streams == "complex":
        return (", rows streamed from memory (the operands past half of L3) read one after"
                " another (complex rows past four lines: four at a time are four streams)")
    order, one, four = _native.stream_order(streams)
    return _measured_choice(
        f"rows streamed from memory (the operands past half of L3; {_STREAM_ROWS[streams]})"
        " read", order,
        {"one": "one after another", "four": "four at a time"},
        (("one after another", one), ("four at a time", four)))


def _load_text(step) -> str:
    """How a contiguous row of products past L2, or of sums past L3, loads
    its 64-byte vectors: whole or as two 32-byte halves."""
    kind = None if step.native is None else step.native.stream_loads()
    if kind is None:
        return ""
    way, whole, halves = _native.load_width(kind)
    return _measured_choice(
        {"products": "a row of products past L2",
         "sums": "a row of sums past L3"}[kind] + ": its vectors loaded", way,
        {"whole": "whole", "halves": "as two 32-byte halves"},
        (("whole", whole), ("in halves", halves)))


def _role_rows(ctx, step) -> tuple:
    """One row per (merged) loop, outer to inner."""
    rows = []
    for lp in step.loops:
        notes = tuple(f"diagonal of slot {s}: the repeated strides summed (a view)"
                      for s, lab in zip(step.inputs, step.in_labels)
                      if set(lp.labels) & set(ctx.diag.get(s, "")) and set(lp.labels) & set(lab))
        rows.append(RoleRow(ctx.d(lp.labels), int(lp.extent),
                            "summed" if lp.reduces else "kept", int(lp.strides[0]),
                            int(lp.strides[1]) if len(step.inputs) > 1 else None,
                            int(lp.strides[-1]), None, len(lp.labels) > 1, notes))
    return tuple(rows)
