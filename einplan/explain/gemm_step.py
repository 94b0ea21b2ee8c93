"""The report of one GemmStep: its role table, what merged and what did
not, the orientation, the kernel (path, tiles, blocking, packing), its cost
and what a loop of smaller GEMMs would have cost instead."""
from __future__ import annotations

from math import prod

from .. import _native, model
from ..layout import HOLDERS
from ..plan import OUT, KernelPath, ParallelLoop, Role
from . import kernel_choice
from .render import fmt_time
from .schema import (ComplexMethod, Kernel, LoopAlternative, Merge, NotMerged, PanelLoop,
                     RoleRow, Step)

# real GEMMs per GEMM: '' real, 'cc' real/imag float views, '1m' one doubled GEMM
_N_REAL_GEMMS = {"": 1, "cc": 4, "1m": 1}
_PACKED_PATH = "packed: BLIS five loops around the MR x NR micro-kernel"
_SMM_PATH = ("smm: n is narrow (at most 8 vectors), so {reads}, up to 8 rows of C per "
             "register tile (masked last vector); packing A would cost as much as the "
             "arithmetic it feeds")
_NO_PACK = {
    KernelPath.GEMV: ("not packed (no-pack GEMV path)",
             "gemv: m or n is 1, every matrix element is used once, so nothing is packed "
             "(dot / axpy loops through the strides)"),
    KernelPath.SMM: ("not packed (small in-place path)",
                     _SMM_PATH.format(reads="A, B and C are read in place")),
}
# the GEMV path with n of 2 to 4 (ep_gemv.c's gemv_cols): B's block of k
# read in place, gathered, or (complex) gathered as 1m's real rows
_GEMV_COLS_B = {
    "in place": "read in place a block of k at a time (its columns run along k at unit stride)",
    "gathered": "gathered a block of k at a time into its n rows (in L1)",
    "complex": ("gathered a block of k at a time into two real rows per complex column "
                "(re, -im / im, re: the rows 1m packs), in L1"),
}
_GEMV_COLS_PATH = (
    "gemv: n is {n}, so each row of A is read once in place and dotted with B's n "
    "columns a block of k at a time; packed, all of A would be copied for one tile of n "
    "columns padded to NR")


def _gemv_cols(step):
    """(how B is read, the path's text) of a step on the GEMV path's columns."""
    if step.complex_mode:
        return _GEMV_COLS_B["complex"], _GEMV_COLS_PATH.format(n="1 or 2 (complex)")
    unit = len(step.k.axes) == 1 and step.k.axes[0].strides[1] == 1
    return _GEMV_COLS_B["in place" if unit else "gathered"], _GEMV_COLS_PATH.format(n="2 to 4")


# smm with B's n not unit-stride ('bik,bjk->bij'): ep_smm.c gathers B
_SMM_GATHERED = (
    "gathered per GEMM into k rows of n (its n is not unit-stride), an L1 / L2-sized buffer",
    _SMM_PATH.format(reads="A and C are read in place and B, whose n is not unit-stride, "
                           "is gathered per GEMM into k rows of n"))


def _smm_gathers_b(step) -> bool:
    """The smm path gathers a real B whose n axis is not unit-stride."""
    return step.n.extent > 1 and len(step.n.axes) == 1 and step.n.axes[0].strides[0] != 1


# the threads' loop by the names of BLIS's loops (ic over MC blocks of m,
# jr over NR panels of n)
_LOOP_WORD = {ParallelLoop.NONE: "none", ParallelLoop.BATCH: "batch", ParallelLoop.M: "ic",
              ParallelLoop.N: "jr", ParallelLoop.K: "k (partial sums added in thread order)"}
_BLOCK_SCATTER = "block-scatter (gather where offsets are irregular)"
_SINGLE_STRIDE = "single stride per micro-panel"


def build(ctx, i, step) -> Step:
    """The record of GemmStep ``i``; registers its intermediate, if any."""
    sa, sb = ctx.slot_strides.get(step.a, {}), ctx.slot_strides.get(step.b, {})
    sc = ctx.slot_strides.get(step.c, {})
    if step.c != OUT:
        sc = _intermediate(ctx, i, step)
    groups = {"batch": step.batch, "m": step.m, "n": step.n, "k": step.k}
    M, N, K, NB = step.m.extent, step.n.extent, step.k.extent, step.batch.extent
    orient = kernel_choice.orientation(ctx, step)
    sched = kernel_choice.gemm_schedule(step)
    nreal = _N_REAL_GEMMS.get(step.complex_mode, 1)
    item = ctx.dtype.itemsize
    gather_a = len(step.m.axes) > 1 or len(step.k.axes) > 1
    gather_b = len(step.n.axes) > 1 or len(step.k.axes) > 1
    direct_b = step.kernel.b_in_place
    bytes_a = _batch_extent(step.batch, "A") * M * K * item
    bytes_b = _batch_extent(step.batch, "B") * K * N * item
    pred = model.predict_gemm(ctx.mach, ctx.real, sched, bytes_a, bytes_b, NB * M * N * item,
                              nreal, gather_a, gather_b, overhead_call=ctx.price_flag(),
                              direct_b=direct_b, scattered=model.scattered_share(step))
    kernel = _kernel(ctx, step, sched, pred, nreal, gather_a, gather_b,
                     direct_b and sched.path not in _NO_PACK)
    return Step(
        i, step.kind.value,
        f"{ctx.slot_source.get(step.a)} x {ctx.slot_source.get(step.b)} -> "
        f"{ctx.slot_source.get(step.c)}" + (f" ({step.why})" if step.why else ""),
        a=ctx.slot(step.a), b=ctx.slot(step.b), c=ctx.slot(step.c),
        roles=_role_rows(ctx, step, groups, sa, sb, sc),
        groups={r: [{"labels": ctx.d(ax.labels), "extent": int(ax.extent),
                     "strides": {h: int(s) for h, s in zip(HOLDERS[g.role], ax.strides)}}
                    for ax in g.axes] for r, g in groups.items()},
        shape_mnk={"batch": NB, "m": M, "n": N, "k": K},
        merges=_merges(ctx, step, groups),
        not_merged=tuple(_not_merged(ctx, br, groups[br.role.value], {"A": sa, "B": sb,
                                                                        "C": sc})
                         for br in step.breaks),
        panel_loops=_panel_loops(ctx, step),
        loop_alternative=_loop_alternative(ctx, step, groups, item, nreal, pred),
        orientation=orient, kernel=kernel, cost=ctx.cost(pred, sched.threads))


def _intermediate(ctx, i, step) -> dict:
    """Register the step's result slot; its strides by label."""
    buf = step.c_buffer
    sc = dict(zip(step.c_labels, buf.strides)) if buf is not None else {}
    ctx.add_slot(step.c, step.c_labels, sc, f"intermediate of step {i + 1}")
    nbytes = prod(ctx.sizes[c] for c in step.c_labels) * ctx.dtype.itemsize
    ctx.copy(f"intermediate '{ctx.d(step.c_labels)}' of step {i + 1}", nbytes,
             "a multi-operand contraction keeps pairwise results")
    return sc


def _batch_extent(batch, holder) -> int:
    """Batch extent over the axes where ``holder`` has a nonzero stride."""
    idx = HOLDERS[Role.BATCH].index(holder)
    return prod(ax.extent for ax in batch.axes if ax.strides[idx] != 0)


def _get(strides, lab):
    v = strides.get(lab)
    return None if v is None else int(v)


def _role_rows(ctx, step, groups, sa, sb, sc) -> tuple:
    """One row per index: its role group, then indices summed first, of
    extent 1, or read as diagonals."""
    sizes, rows = ctx.sizes, []
    for role, g in groups.items():
        for gi, ax in enumerate(g.axes):
            for lab in ax.labels:
                notes = tuple(f"diagonal of {side} (repeated index: one axis, strides "
                              "summed, a view)"
                              for side, slot in (("A", step.a), ("B", step.b))
                              if lab in ctx.diag.get(slot, ""))
                rows.append(RoleRow(
                    ctx.d(lab), int(sizes[lab]), role,
                    _get(sa, lab) if role in ("batch", "m", "k") else None,
                    _get(sb, lab) if role in ("batch", "n", "k") else None,
                    _get(sc, lab) if role in ("batch", "m", "n") else None,
                    f"{role}[{gi}] = {'*'.join(ctx.d(ax.labels))}", len(ax.labels) > 1,
                    notes))
    for slot in (step.a, step.b):
        if slot in ctx.presummed:
            src, summed = ctx.presummed[slot]
            rows += [RoleRow(ctx.d(lab), int(sizes[lab]), "summed-first",
                             notes=(f"only in {ctx.slot_source.get(src)}: summed out before "
                                    "this step (numpy.sum on a view)",))
                     for lab in summed]
    in_step = set(step.a_labels) | set(step.b_labels) | set(step.c_labels)
    rows += [RoleRow(ctx.d(lab), 1, "size-1",
                     notes=("extent 1: dropped, it blocks no merge and needs no loop",))
             for lab in sorted(in_step, key=ctx.d) if sizes.get(lab, 0) == 1]
    for side, slot in (("A", step.a), ("B", step.b)):
        for lab in ctx.diag.get(slot, ""):
            if not any(r.index == ctx.d(lab) for r in rows):
                rows.append(RoleRow(
                    ctx.d(lab), int(sizes[lab]), "diagonal",
                    _get(sa, lab) if side == "A" else None,
                    _get(sb, lab) if side == "B" else None,
                    notes=(f"repeated in {side}: read as one axis whose stride is the sum "
                           "of the repeated axes' strides (no copy)",)))
    return tuple(rows)


def _merges(ctx, step, groups) -> tuple:
    M, N, K, NB = step.m.extent, step.n.extent, step.k.extent, step.batch.extent
    gemm_word = "one GEMM" if NB == 1 else f"a loop of {NB} GEMMs"
    merges = []
    for role, g in groups.items():
        for ax in g.axes:
            if len(ax.labels) < 2:
                continue
            ext = tuple(int(ctx.sizes[c]) for c in ax.labels)
            head = (f"{role} = {'*'.join(ctx.d(ax.labels))} merged "
                    f"({' x '.join(map(str, ext))} -> {ax.extent})")
            if role in ("m", "n"):
                tail = f", {gemm_word} of {M} x {K} x {N} (m x k x n)"
            elif role == "k":
                tail = ": one k axis, packing reads it with one stride"
            else:
                tail = f": the batch loop runs over one axis of {ax.extent}"
            merges.append(Merge(role, ctx.d(ax.labels), ext, int(ax.extent), head + tail))
    return tuple(merges)


def _not_merged(ctx, br, group, holder_strides) -> NotMerged:
    inner_ax = next((ax for ax in group.axes if ax.labels.startswith(br.inner)), None)
    parts = []
    for h in br.operands:
        so = holder_strides.get(h, {}).get(br.outer)
        if inner_ax is not None and so is not None:
            si = inner_ax.strides[HOLDERS[br.role].index(h)]
            parts.append(f"in {h}, stride[{ctx.d(br.outer)}] = {so} but extent x stride of "
                         f"'{ctx.d(inner_ax.labels)}' = {inner_ax.extent} x {si} = "
                         f"{inner_ax.extent * si}")
        else:
            parts.append(f"{h}'s strides are not contiguous")
    role = br.role.value
    return NotMerged(role, ctx.d(br.outer), ctx.d(br.inner), tuple(br.operands),
                     f"{role}: {ctx.d(br.outer)} and {ctx.d(br.inner)} not merged: "
                     + "; ".join(parts))


def _panel_loops(ctx, step) -> tuple:
    """n's outer axes run as batch loops: NR panels would straddle the runs
    of its inner axis."""
    loops = []
    for role, labels in step.panel_loops:
        inner = step.n.axes[-1]
        nr = _native.tile(ctx.real)[1]
        loops.append(PanelLoop(role, ctx.d(labels), (
            f"{'*'.join(ctx.d(labels))}: {role}'s outer axis runs as a batch "
            f"loop: NR = {nr} panels would straddle the {inner.extent}-long "
            f"runs of '{ctx.d(inner.labels)}' ({inner.extent} % {nr} = "
            f"{inner.extent % nr}), gathering them when packed and scattering "
            "their C tiles")))
    return tuple(loops)


def _kernel(ctx, step, sched, pred, nreal, gather_a, gather_b, direct_b) -> Kernel:
    """The path ep_gemm takes, its tiles and blocking (packed path only),
    threads, and how A and B are read."""
    blocking = ctx.cfg["blocking"].get(str(ctx.real), {})
    NB = step.batch.extent
    if sched.path in _NO_PACK:
        pack_a, path = _NO_PACK[sched.path]
        pack_b, tile = pack_a, (None,) * 5
        if sched.path == KernelPath.SMM and not step.complex_mode and _smm_gathers_b(step):
            pack_b, path = _SMM_GATHERED
        if sched.path == KernelPath.GEMV and (step.complex_mode or min(sched.M, sched.N) > 1):
            pack_b, path = _gemv_cols(step)
    else:
        path, tile = _PACKED_PATH, (sched.mr, sched.nr, sched.mc, sched.kc, sched.nc)
        pack_a = _BLOCK_SCATTER if gather_a else _SINGLE_STRIDE
        pack_b = ("read in place (full NR panels; m is small)" if direct_b else
                  _BLOCK_SCATTER if gather_b else _SINGLE_STRIDE)
        if step.kernel.b_measured is not None:
            pack_b += (f"; in place or packed, whichever this process measures faster "
                       f"for its class of m (when planned: {step.kernel.b_measured})")
        if step.kernel.b_by_panel and not step.complex_mode:
            pack_b += ("; " + ("when packed, " if step.kernel.b_measured is not None else "")
                       + "one NR panel at a time, just before the A panels meet it (all of "
                       "m in one MC block: a panel stays in L2, where the whole packed B "
                       "would go out to L3 and back)")
        elif step.kernel.b_by_panel:
            pack_b += ("; one NR panel at a time, just before the A panels meet it "
                       "(1m with all of m in one MC block: B's 2x2 real form is twice "
                       "its bytes and would otherwise go out to L3 and back)")
    cm = _complex_method(step, sched.path) if step.complex_mode else None
    return Kernel(step.kind.value, ctx.cfg["isa"], *tile,
                  {k: blocking.get(k) for k in ("mc", "kc", "nc")}, sched.threads,
                  _LOOP_WORD[sched.loop], NB, nreal, sched.tiles * NB, sched.fringe_tiles * NB,
                  int(pred.bytes_packed), pack_a, pack_b, path, cm,
                  None if cm is None else cm.text)


def _complex_method(step, path) -> ComplexMethod:
    """How a complex GemmStep runs on the real kernels, and what it costs."""
    M, N, K, NB = step.m.extent, step.n.extent, step.k.extent, step.batch.extent
    flops = 8.0 * M * N * K * NB   # a complex multiply-add is 8 real flops
    if step.complex_mode == "1m":
        b_packed = ("B packed per GEMM and block of k (64 KB of it packed) as 2x2 real "
                    "blocks [[re, im], [-im, re]] into a buffer the smm kernel reads from L2"
                    if path == KernelPath.SMM else
                    "B gathered a block of k at a time as the rows of its 2x2 real blocks "
                    "[[re, im], [-im, re]]" if path == KernelPath.GEMV else
                    "B packed as 2x2 real blocks [[re, im], [-im, re]]")
        return ComplexMethod("1m", 1, (M, 2 * N, 2 * K), flops, (
            f"complex by the 1m method: one real GEMM of m {M} x n {2 * N} x "
            f"k {2 * K} (A and C read / written through their float views, "
            f"{b_packed}), 8 real flops per complex multiply-add, no copies"))
    return ComplexMethod("4m", 4, (M, N, K), flops, (
        "complex via real/imag float views: 4 real GEMMs (Cr = ArBr - AiBi, "
        "Ci = ArBi + AiBr), no copies; not 1m, whose packing of B as 2x2 blocks "
        "costs more than a GEMV / dot / outer product computes"))


def _loop_alternative(ctx, step, groups, item, nreal, pred):
    """What a loop over the outer merged m / n labels would have cost (tract)."""
    outer = 1
    inner = {"m": step.m.extent, "n": step.n.extent}
    labels = []
    for role in ("m", "n"):
        for ax in groups[role].axes:
            if len(ax.labels) > 1:
                runs = ax.extent // ctx.sizes[ax.labels[-1]]
                outer *= runs
                labels += list(ax.labels[:-1])
                inner[role] //= runs
    if outer == 1:
        return None
    K, NB = step.k.extent, step.batch.extent * outer
    sched = kernel_choice.loop_schedule(inner["m"], inner["n"], K, NB, ctx.real)
    p = model.predict_gemm(ctx.mach, ctx.real, sched, NB * inner["m"] * K * item,
                           step.batch.extent * K * step.n.extent * item,
                           NB * inner["m"] * inner["n"] * item, nreal, overhead_call=True)
    ratio = p.seconds / pred.seconds if pred.seconds else None
    over = ctx.d("".join(labels))
    return LoopAlternative(
        over, NB, inner["m"], K, inner["n"], p.seconds, int(p.bytes_packed), ratio,
        f"without the merge, a loop over {over} would run {NB} GEMMs of {inner['m']} x {K} "
        f"x {inner['n']} (m x k x n), as a batched matmul does, predicted "
        f"{fmt_time(p.seconds)} ({ratio:.1f}x the merged GEMM's {fmt_time(pred.seconds)}; "
        f"B repacked {NB} times)")
