"""Plans of one operand: ``ii->i``, ``ij->ji``, ``ij->``, ``ijk->j``.

A diagonal view of the operand, then a sum or a copy: the loop-nest engine
for sums and small copies in the compute dtype, numpy's sum / ep_copy
otherwise; numpy's pure-view case is returned as a view, as numpy does.
"""
from __future__ import annotations

import math

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
        step = nest_step(kind, [(0, v.labels, v.strides)], OUT, spec.output,
                         {c: o_st[c] for c in out_eff}, sizes, dtype)
    else:
        step = ReduceStep(0, OUT, src_labels, src_shape, src_strides, sum_axes, spec.output,
                          buf, kind, as_view=as_view)
    return Plan(spec.inputs, spec.output, shape, dtype, buf, steps=(step,),
                out_cast=out_cast, scalar_result=(len(shape) == 0),
                options=options.key(), fallback_subscripts=spec.plain_subscripts(), n_slots=1)
