"""The whole-call part of a report: the call and its operands, the slots the
steps read and write, the path, copies, fallbacks and totals.  Each step's
own record comes from its builder (gemm_step, reduce_step, nest_step)."""
from __future__ import annotations

from math import prod

import numpy as np

from .. import _native, model
from .._version import __version__
from ..operands import OperandInfo, dense_strides, layout_name
from ..plan import OUT, GemmStep, NestStep, ReduceStep
from ..roles import diagonal_view
from ..spec import ELLIPSIS_BASE
from . import gemm_step, nest_step, reduce_step
from .schema import (SCHEMA_VERSION, ArrayDesc, Call, Copies, CopyItem, Cost, FallbackNote,
                     ModelTerms, PathStep, PlanDesc, ReportData, Slot)

_STEP_BUILDERS = ((GemmStep, gemm_step.build), (ReduceStep, reduce_step.build),
                  (NestStep, nest_step.build))


class Context:
    """What the step builders share: display letters, the machine, and per
    slot its strides by label, its labels and a description of its source;
    builders add intermediates, copies and fallbacks as they go."""

    def __init__(self, spec, infos, plan, options, out_info):
        self.spec, self.infos, self.plan = spec, infos, plan
        self.options, self.out_info = options, out_info
        self.sizes = spec.sizes
        self.n_inputs = len(infos)
        self.disp = spec.plain_labels()   # '...' dims shown as unused letters
        self.cfg = _native.kernel_config()
        self.mach = model.machine()
        self.dtype = np.dtype(plan.dtype)
        self.real = np.dtype(self.dtype.char.lower()) if self.dtype.kind == "c" else self.dtype
        self.slot_strides, self.slot_source, self.slot_labels = {}, {}, {}
        self.diag = {}
        for j, (term, info) in enumerate(zip(spec.inputs, infos)):
            if info.strides is not None:
                v = diagonal_view(term, info.shape, info.strides)
                self.slot_strides[j] = dict(zip(v.labels, v.strides))
                self.slot_labels[j] = v.labels
                self.diag[j] = v.diagonal
            else:
                self.slot_strides[j], self.slot_labels[j], self.diag[j] = {}, term, ""
            self.slot_source[j] = f"operand {j} '{self.d(term)}'"
        self.presummed = {}   # slot -> (source slot, labels summed first)
        self.copies, self.fallbacks = [], []
        self.first_priced = False

    def d(self, labels) -> str:
        """Labels as the report shows them."""
        return "".join(self.disp.get(c, c) for c in labels)

    def slot(self, slot) -> Slot:
        return Slot(slot, self.slot_source.get(slot, f"slot {slot}"),
                    self.d(self.slot_labels.get(slot, "")))

    def add_slot(self, slot, labels, strides, source):
        """An intermediate (or pre-summed) slot a step writes."""
        self.slot_strides[slot] = strides
        self.slot_labels[slot] = labels
        self.slot_source[slot] = source

    def copy(self, what, nbytes, why):
        self.copies.append(CopyItem(what, nbytes, why))

    def fallback(self, where, reason):
        self.fallbacks.append(FallbackNote(where, reason))

    def price_flag(self) -> bool:
        """True for the first step priced: it carries the call's overhead."""
        first = not self.first_priced
        self.first_priced = True
        return first

    def cost(self, pred, threads) -> Cost:
        peak = self.mach.peak_gflops(self.real, threads)
        gf = pred.gflops() if pred.seconds else None
        return Cost(float(pred.flops), float(pred.bytes_moved), float(pred.bytes_packed),
                    (pred.flops / pred.bytes_moved) if pred.bytes_moved else 0.0,
                    pred.seconds, gf,
                    (100.0 * gf / peak) if gf is not None and peak else None,
                    pred.bound, threads, peak,
                    ModelTerms(pred.t_compute, pred.t_pack, pred.t_memory, pred.t_overhead,
                               pred.efficiency))

    def out_strides(self):
        plan = self.plan
        if self.out_info is not None and not plan.out_cast and self.out_info.strides is not None:
            return tuple(self.out_info.strides)
        if plan.out_buffer is not None:
            return plan.out_buffer.strides
        return dense_strides(plan.shape)

    def plan_out_layout(self) -> str:
        if self.out_info is not None:
            return f"{layout_name(self.out_info.shape, self.out_info.strides)}, given by out="
        order = self.options.order
        lay = layout_name(self.plan.shape, self.out_strides())
        if order == "K":
            return f"{lay}, chosen by the planner (order='K')"
        return f"{lay}, requested (order='{order}')"

    def array_desc(self, index, term, info, given_as) -> ArrayDesc:
        return ArrayDesc(index, self.d(term), tuple(info.shape), str(info.dtype),
                         None if info.strides is None else tuple(info.strides),
                         layout_name(info.shape, info.strides),
                         prod(info.shape) * info.dtype.itemsize, given_as)


def build_report(ctx, given, function, frontend_spec, given_as, overlap=False) -> ReportData:
    """The report of ``ctx.plan``: one record per step plus the whole call."""
    plan, spec = ctx.plan, ctx.spec
    out_st = ctx.out_strides()
    ctx.add_slot(OUT, spec.output, dict(zip(spec.output, out_st)),
                 "the output" + (" (out=)" if ctx.out_info is not None else ""))
    call = _call(ctx, given, function, frontend_spec, given_as, out_st)
    if plan.fallback is not None:
        ctx.fallback("whole call", plan.fallback.reason)
    steps, path = [], []
    for i, step in enumerate(plan.steps):
        builder = next(b for t, b in _STEP_BUILDERS if isinstance(step, t))
        sd = builder(ctx, i, step)
        steps.append(sd)
        if sd.kind != "view":
            path.append(_path_step(ctx, i, sd))
    _output_copies(ctx, overlap)
    return ReportData(
        SCHEMA_VERSION, __version__, call, ctx.mach.to_dict(),
        PlanDesc(str(plan), tuple(s.kind for s in steps) if steps else ("fallback_numpy",),
                 tuple(path), None if plan.fallback is None else plan.fallback.reason),
        tuple(steps), Copies(sum(c.bytes for c in ctx.copies), tuple(ctx.copies)),
        tuple(ctx.fallbacks), _totals(ctx, steps), None)


def _call(ctx, given, function, frontend_spec, given_as, out_st) -> Call:
    spec, plan, options = ctx.spec, ctx.plan, ctx.options
    out_desc = ctx.array_desc(None, spec.output, OperandInfo(plan.shape, out_st, ctx.dtype),
                              "out=" if ctx.out_info is not None else
                              ("view" if plan.is_view else "allocated"))
    return Call(
        function, given if isinstance(given, str) else str(given),
        ",".join(ctx.d(t) for t in spec.inputs) + "->" + ctx.d(spec.output),
        {d: ord(c) - ELLIPSIS_BASE for c, d in ctx.disp.items()},
        tuple(ctx.array_desc(i, t, info, given_as[i])
              for i, (t, info) in enumerate(zip(spec.inputs, ctx.infos))),
        out_desc, ctx.out_info is not None,
        {"dtype": None if options.dtype is None else str(options.dtype),
         "order": options.order, "casting": options.casting,
         "optimize": _jsonable(options.optimize)},
        frontend_spec)


def _path_step(ctx, i, sd) -> PathStep:
    labels = ctx.slot_labels.get(sd.c.slot, "")
    sources = sd.inputs if sd.inputs is not None else (sd.a, sd.b)
    return PathStep(i, tuple(x.source for x in sources if x is not None), sd.c.term,
                    tuple(ctx.sizes[c] for c in labels),
                    prod(ctx.sizes[c] for c in labels) * ctx.dtype.itemsize, sd.cost.flops)


def _output_copies(ctx, overlap):
    """The result's detour through a temporary: out= of another dtype or
    layout, or out= overlapping an operand."""
    plan = ctx.plan
    nbytes = prod(plan.shape) * ctx.dtype.itemsize
    if plan.out_cast:
        why = ("out= has another dtype than the computation" if ctx.out_info is not None
               and ctx.out_info.dtype != ctx.dtype else
               "out= is not addressable in elements / not aligned")
        ctx.copy("result computed into a temporary, then copied into out=", nbytes, why)
        ctx.fallback("output", why + ": computed into a temporary and cast/copied into out=")
    if plan.result_dtype is not None:
        ctx.copy("result byte-swapped into the dtype= asked for", nbytes,
                 "the kernels compute in native byte order")
    if overlap and not plan.out_cast and plan.fallback is None:
        why = "out= overlaps an operand"
        ctx.copy("result computed into a temporary with out='s strides, then copied into out=",
                 nbytes, why)
        ctx.fallback("output", why + ": computed into a temporary, then copied")


def _totals(ctx, steps) -> Cost:
    if ctx.plan.fallback is not None:
        return Cost(0.0, 0.0, 0.0, 0.0, None, None, None, None, 1, None,
                    note="numpy.einsum fallback: not modelled")
    flops = sum(s.cost.flops for s in steps)
    moved = sum(s.cost.bytes_moved for s in steps)
    packed = sum(s.cost.bytes_packed for s in steps)
    pred = sum(s.cost.predicted_s for s in steps)
    pred += sum(c.bytes for c in ctx.copies if "into out=" in c.what) * 2 / (
        ctx.mach.bandwidth_gbs * 1e9)
    threads = max([s.kernel.threads for s in steps if s.cost.flops] or [1])
    peak = ctx.mach.peak_gflops(ctx.real, threads) if ctx.real.kind == "f" else None
    gf = flops / pred / 1e9 if pred else None
    big = max(steps, key=lambda s: s.cost.predicted_s or 0, default=None)
    return Cost(float(flops), float(moved), float(packed), flops / moved if moved else 0.0,
                pred, gf, 100.0 * gf / peak if gf is not None and peak else None,
                None if big is None else big.cost.bound, threads, peak)


def _jsonable(x):
    if isinstance(x, (str, int, float, bool)) or x is None:
        return x
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    return str(x)
