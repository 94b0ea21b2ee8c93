"""The report of one ReduceStep: a sum over a strided view (numpy.sum), a
copy or cast copy (ep_copy / numpy.copyto), or the operand returned as a
view; priced as one stream over its bytes."""
from __future__ import annotations

from math import prod

import numpy as np

from .. import model
from ..plan import OUT
from . import kernel_choice
from .schema import Kernel, RoleRow, Step


def copy_text(sc) -> str:
    """One line on what ep_copy does (its schedule, from copy_schedule)."""
    if sc is None:
        return "ep_copy"
    kind, isa, rows = sc["kind"], sc["isa"], sc["rows"]
    text = {"empty": "nothing to copy",
            "run": "runs contiguous on both sides, memcpy",
            "tile": "cache-blocked 64 x 8 tiles, portable C",
            "interleave": f"{isa} registers zip {rows} source rows into each contiguous "
                          "output block",
            "transpose": f"{isa} {rows} x {rows} register transposes in 64 x 64 blocks",
            }[kind]
    if sc["stream"]:
        text += "; non-temporal stores (output of half the L3 or more)"
    if sc["threads"] > 1:
        text += f"; {sc['threads']} threads, each a contiguous range of the outer loops"
    return f"ep_copy: {text}"


def build(ctx, i, step) -> Step:
    sizes = ctx.sizes
    src_item = ctx.dtype.itemsize
    if step.src < ctx.n_inputs and ctx.infos[step.src] is not None:
        src_item = ctx.infos[step.src].dtype.itemsize
    dst_item = np.dtype(step.cast_to).itemsize if step.cast_to else (
        ctx.dtype.itemsize if step.dst == OUT else src_item)
    summed = [step.src_labels[a] for a in step.sum_axes]
    if step.dst != OUT:
        _intermediate(ctx, i, step, summed, dst_item)
    sc = ctx.slot_strides.get(step.dst, {})
    src_st = dict(zip(step.src_labels, step.src_strides))
    strided, copy_sched = False, None
    if src_st and sc:
        unit_src = min(src_st, key=lambda c: abs(src_st[c]))
        cand = {c: v for c, v in sc.items() if c in src_st}
        unit_dst = min(cand, key=lambda c: abs(cand[c])) if cand else unit_src
        strided = unit_src != unit_dst
    src = ctx.slot_source.get(step.src)
    src_bytes = prod(step.src_shape) * src_item
    dst_bytes = prod(sizes[c] for c in step.dst_labels) * dst_item
    if step.as_view:
        kind, what = "view", (f"{src} returned as a view '{ctx.d(step.dst_labels)}' "
                              "(strides only, no data moved)")
        bytes_moved, flops = 0, 0
    elif summed:
        kind = step.kind.value
        what = (f"numpy.sum of {src} over '{ctx.d(summed)}' -> "
                f"{ctx.slot_source.get(step.dst, 'slot')}")
        bytes_moved, flops = src_bytes + dst_bytes, prod(step.src_shape)
        ctx.fallback(f"step {i + 1}", "reduction over a strided view runs in numpy.sum "
                     "(no native reduction kernel)")
    else:
        kind = step.kind.value
        if step.cast_to:
            what = (f"cast copy of {src} to {step.cast_to} (numpy.copyto from its strided "
                    "view): the kernels take one dtype")
        else:
            copy_sched = kernel_choice.copy_schedule(ctx, step, src_st, sc, src_item)
            permuted = list(step.src_labels) != [c for c in step.dst_labels
                                                 if c in step.src_labels] or any(
                src_st.get(c) != sc.get(c) for c in step.src_labels)
            what = (("permutation copy" if permuted else "copy")
                    + f" of {src} straight from its strided view into "
                    f"{ctx.slot_source.get(step.dst, 'a new slot')} "
                    f"({copy_text(copy_sched)}): no intermediate transpose")
            # ep_copy reads and writes whole lines on both sides: the
            # strided penalty (numpy.copyto's element walk) does not apply
            strided = strided and copy_sched is None
        bytes_moved, flops = src_bytes + dst_bytes, 0
    pred = model.predict_stream(ctx.mach, bytes_moved, flops,
                                overhead_call=ctx.price_flag(), strided=strided)
    threads = copy_sched["threads"] if copy_sched else 1
    kernel = Kernel(kind, copy_sched["isa"] if copy_sched else None, threads=threads,
                    parallel_loop="outer loops" if threads > 1 else "none")
    return Step(i, kind, what, a=ctx.slot(step.src), b=None, c=ctx.slot(step.dst),
                roles=_role_rows(ctx, step, summed, src_st, sc), kernel=kernel,
                cost=ctx.cost(pred, 1))


def _intermediate(ctx, i, step, summed, dst_item):
    """Register the pre-summed / cast slot and the copy it costs."""
    buf = step.buffer
    src_text = ctx.slot_source.get(step.src)
    if summed:
        source = f"{src_text} summed over '{ctx.d(summed)}'"
        ctx.presummed[step.dst] = (step.src, "".join(summed))
    elif step.cast_to:
        source = f"{src_text} cast to {step.cast_to}"
    else:
        source = f"{src_text} relaid out"
    ctx.add_slot(step.dst, step.dst_labels,
                 dict(zip(step.dst_labels, buf.strides)) if buf else {}, source)
    why = ("index found only in this operand and not in the output: summed first"
           if summed else f"cast to the computation dtype {step.cast_to}" if step.cast_to
           else "a small operand re-used across a large one, copied once into the large "
                "one's axis order so both run contiguous rows")
    if step.cast_to and summed:
        why += f", and cast to {step.cast_to}"
    ctx.copy(f"step {i + 1}: {source}",
             prod(ctx.sizes[c] for c in step.dst_labels) * dst_item, why)
    if step.cast_to:
        ctx.fallback(f"step {i + 1}", f"{src_text}: dtype differs from the computation "
                     f"dtype; a cast copy to {step.cast_to}")


def _role_rows(ctx, step, summed, src_st, sc) -> tuple:
    rows = []
    for lab in step.src_labels:
        role = "summed-first" if lab in summed else "kept"
        notes = (("diagonal: repeated index read as one axis (a view)",)
                 if lab in ctx.diag.get(step.src, "") else ())
        v = sc.get(lab)
        rows.append(RoleRow(ctx.d(lab), int(ctx.sizes[lab]), role, int(src_st[lab]), None,
                            None if v is None else int(v), notes=notes))
    return tuple(rows)
