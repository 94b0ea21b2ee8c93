"""Plans of one operand: ``ii->i``, ``ij->ji``, ``ij->``, ``ijk->j``.

A diagonal view of the operand, then a sum or a copy: the loop-nest engine
for sums and small copies in the compute dtype (a sum whose kept axes lie in
an inner block with summed ones in two nests: the block's rows first),
numpy's sum / ep_copy otherwise; numpy's pure-view case is returned as a
view, as numpy does.
"""
from __future__ import annotations

import math

import numpy as np

from .nest import l2_resident, nest_dtype_ok, nest_step
from .orient import numpy_k_order
from .plan import OUT, Buffer, KernelKind, Plan, ReduceStep
from .roles import diagonal_view


def is_pure_view(spec, infos, out_info) -> bool:
    """numpy.einsum's view case: one operand, no out=, every label in the output.

    ``ii->i``, ``ij->ji``, ``...`` are returned as views of the operand (in
    its dtype, whatever ``dtype=`` says); ``ij->i`` is not, even when j has
    extent 1 (the result is a new array the caller may write to).
    """
    return len(infos) == 1 and out_info is None and set(spec.inputs[0]) <= set(spec.output)


BLOCK_ROWS = 64         # the fewest rows of a block the loops outside make


def _kept_block(v, out_eff, sizes, itemsize):
    """The operand's innermost axes up to the last kept one, outer to inner,
    when they are one contiguous block that also holds a summed axis and is
    summed over many rows outside it, its sums (a quarter of L2 at most)
    re-visited from cache; else None.  'abcd->b' (15,3,590,362)
    F-order f32: the nest ran rows of 15 into 3 outputs, 213580 calls of 3
    rows (8-16 ms, numpy 2.9-4.7); summed first as 213580 rows of the
    45-element block a, b (one pass, the block's sums in vectors), then 45
    into 3: 0.8-1 ms.  'abcd->c' (2748,19,2,16) f32: 400 -> 79 us; 'abc->b'
    (400,30,500) f32, a block of 15000: 790 -> 530 us."""
    axes = sorted((i for i, c in enumerate(v.labels) if sizes[c] > 1),
                  key=lambda i: v.strides[i])
    kept = [i for i in axes if v.labels[i] in out_eff]
    if not kept or len(kept) != len(out_eff):
        return None
    end = max(axes.index(i) for i in kept) + 1
    inner, span = axes[:end], 1
    for i in inner:
        if v.strides[i] != span:
            return None
        span *= sizes[v.labels[i]]
    outer = math.prod(sizes[v.labels[i]] for i in axes[end:])
    if len(inner) == len(kept) or span * itemsize > l2_resident() // 4 or outer < BLOCK_ROWS:
        return None
    return "".join(v.labels[i] for i in reversed(inner))


def single_operand_plan(spec, info, dtype, options, out_info, shape) -> Plan:
    """``ii->i``, ``ij->ji``, ``ij->``: diagonal view, then numpy sum / copy.

    Like numpy, a pure view (no sum, no out=, no dtype change) is returned as
    a view of the operand.
    """
    sizes = spec.sizes
    v = diagonal_view(spec.inputs[0], info.shape, info.strides)
    out_eff = "".join(c for c in spec.output if sizes[c] != 1)
    summed = "".join(c for c in v.labels if c not in out_eff)
    pos = {c: i for i, c in enumerate(v.labels)}
    src_labels = out_eff + summed
    src_strides = tuple(v.strides[pos[c]] for c in src_labels)
    src_shape = tuple(sizes[c] for c in src_labels)
    sum_axes = tuple(range(len(out_eff), len(src_labels)))
    as_view = is_pure_view(spec, (info,), out_info)
    out_cast = out_info is not None and (out_info.dtype != dtype or out_info.strides is None)
    buf = None
    if out_info is None or out_cast:
        nd = len(shape)
        if options.order == "F":
            buf = Buffer(shape, tuple(reversed(range(nd))))
        elif options.order == "K" and not summed:
            # follow the operand's memory order (numpy 'K')
            st = {c: abs(s) for c, s in zip(out_eff, src_strides)}
            buf = Buffer(shape, tuple(sorted(range(nd), key=lambda i: -st.get(spec.output[i], 0))))
        elif options.order == "K" and nest_dtype_ok(dtype):
            # a sum: numpy's 'K' layout, so the nest's rows write unit-stride
            k_order = numpy_k_order(spec, (info,), out_eff)
            mem = [c for c in spec.output if c not in k_order] + list(k_order)
            buf = Buffer(shape, tuple(spec.output.index(c) for c in mem))
        else:
            buf = Buffer(shape, tuple(range(nd)))
    kind = KernelKind.REDUCE if summed else KernelKind.COPY
    # a small copy into a new array ('ii->' of a (1, 1) array, 'bii->b' with
    # i = 1) runs as a nest too: its compiled runner costs less than a numpy
    # copy step.  A copy into out= stays on ep_copy's tiles and threads.
    small_copy = (not summed and not as_view and out_info is None
                  and math.prod(info.shape) * info.dtype.itemsize <= l2_resident())
    if ((summed or small_copy) and info.dtype == dtype and nest_dtype_ok(dtype)
            and 0 not in info.shape):
        # a sum over axes (a trace, 'ijk->j'): one nest over the diagonal view
        o_st = dict(zip(spec.output, (out_info.strides if buf is None else buf.strides)))
        block = _kept_block(v, out_eff, sizes, np.dtype(dtype).itemsize) if summed else None
        src = (0, v.labels, v.strides)
        steps = ()
        if block is not None:
            # the sum over the loops outside the block first, a block-sized
            # row at a time, then the block's own summed axes
            tmp = Buffer(tuple(sizes[c] for c in block), tuple(range(len(block))))
            steps = (nest_step(kind, [src], 1, block, dict(zip(block, tmp.strides)), sizes,
                               dtype, buffer=tmp),)
            src = (1, block, tmp.strides)
        steps += (nest_step(kind, [src], OUT, spec.output, {c: o_st[c] for c in out_eff},
                            sizes, dtype),)
    else:
        steps = (ReduceStep(0, OUT, src_labels, src_shape, src_strides, sum_axes, spec.output,
                            buf, kind, as_view=as_view),)
    return Plan(spec.inputs, spec.output, shape, dtype, buf, steps=steps,
                out_cast=out_cast, scalar_result=(len(shape) == 0),
                options=options.key(), fallback_subscripts=spec.plain_subscripts(),
                n_slots=len(steps))
