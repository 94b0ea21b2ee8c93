"""The report for people: text (``str(report)``), a short summary (the
demo) and markdown (notebooks), every line derived from the records."""
from __future__ import annotations

from ..plan import KernelKind

_KIND_TEXT = {
    KernelKind.GEMM: "packed GEMM",
    KernelKind.GEMV: "GEMV (one of m, n empty) on the packed kernel",
    KernelKind.DOT: "dot (m and n empty) on the packed kernel",
    KernelKind.OUTER: "outer product (k empty) on the packed kernel",
    KernelKind.BATCH_ONLY: "batch-only / elementwise (k empty) on the packed kernel",
    KernelKind.REDUCE: "reduction: numpy.sum over a strided view",
    KernelKind.COPY: "copy from a strided view (ep_copy: cache-blocked / SIMD transposes)",
    KernelKind.FALLBACK_NUMPY: "numpy.einsum fallback",
}
_GEMM_KINDS = ("gemm", "gemv", "dot", "outer", "batch_only")


def fmt_bytes(n) -> str:
    n = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if abs(n) < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000.0
    return f"{n:.1f} GB"


def fmt_time(s) -> str:
    if s is None:
        return "n/a"
    if s < 1e-3:
        return f"{s * 1e6:.1f} us"
    if s < 1:
        return f"{s * 1e3:.2f} ms"
    return f"{s:.2f} s"


def fmt_flops(f) -> str:
    for unit, scale in (("GFLOP", 1e9), ("MFLOP", 1e6), ("kFLOP", 1e3)):
        if f >= scale:
            return f"{f / scale:.1f} {unit}"
    return f"{f:.0f} FLOP"


def _fmt_desc(desc, name):
    st = "?" if desc.strides is None else tuple(desc.strides)
    return (f"{name:<10} '{desc.term}' {desc.dtype} {tuple(desc.shape)} "
            f"strides {st} [{desc.layout}, {desc.given_as}]")


def _dash(v):
    return "-" if v is None else str(v)


def render_text(r) -> str:
    """The whole report (a ``ReportData``) as text."""
    lines = _head(r)
    n = len(r.steps)
    for s in r.steps:
        lines += ["", f"step {s.index + 1}/{n}: {s.kind} -- {s.what}"]
        lines += _roles(s)
        if s.nest is not None:
            lines += _nest(s)
        elif s.kind in _GEMM_KINDS:
            lines += _gemm(s)
        lines.append(_cost(s.cost))
    lines.append("")
    lines += _tail(r)
    return "\n".join(lines)


def _head(r):
    call, mach = r.call, r.machine
    lines = [f"einplan explain: {call.subscripts}"
             + (f"   [{call.function}]" if call.function != "einsum" else "")]
    if call.frontend_spec:
        lines.append(f"  {call.function} normalized to einsum '{call.frontend_spec}'")
        ops = call.operands
        if (call.function == "vdot" and len(ops) == 2 and ops[0].dtype == ops[1].dtype
                and ops[0].dtype.startswith("complex") and ops[0].shape[0] > 1):
            lines.append("  vdot runs this dot with operand 0 conjugated inside the nest's "
                         "kernel (no conjugated copy)")
    lines.append(f"  spec       {call.spec}"
                 + (f"   ('...' = {''.join(call.ellipsis)})" if call.ellipsis else ""))
    for op in call.operands:
        lines.append("  " + _fmt_desc(op, f"operand {op.index}"))
    lines.append("  " + _fmt_desc(call.output, "output"))
    lines.append(f"  machine    {mach['isa']} on {mach['cpu']}, {mach['threads']} thread(s); "
                 f"clock {mach['clock_ghz']:.2f} GHz ({mach['clock_source']}); "
                 f"{mach['fma_units']} FMA unit(s) ({mach['fma_units_source']})")
    pk = mach["peak_gflops_per_core"]
    lines.append(f"             peak/core float32 {pk['float32']:.1f}, float64 "
                 f"{pk['float64']:.1f} GFLOP/s; bandwidth {mach['bandwidth_gbs']:.1f} GB/s "
                 f"({mach['bandwidth_source']})")
    if r.plan.fallback:
        lines.append(f"  FALLBACK   numpy.einsum: {r.plan.fallback}")
    if len(r.plan.path) > 1:
        lines.append("  path")
        lines.append(f"    {'step':<5} {'contracts':<58} {'result':<10} {'shape':<18} "
                     f"{'bytes':>9} {'FLOPs':>12}")
        for p in r.plan.path:
            lines.append(f"    {p.step + 1:<5} {' x '.join(p.operands)[:58]:<58} "
                         f"{p.result:<10} {str(tuple(p.result_shape)):<18} "
                         f"{fmt_bytes(p.result_bytes):>9} {fmt_flops(p.flops):>12}")
    return lines


def _roles(s):
    if not s.roles:
        return []
    lines = ["  roles",
             f"    {'index':<6}{'extent':>8}  {'role':<13}{'stride A':>10}{'stride B':>10}"
             f"{'stride C':>10}  group"]
    for row in s.roles:
        lines.append(f"    {row.index:<6}{row.extent:>8}  {row.role:<13}"
                     f"{_dash(row.stride_a):>10}{_dash(row.stride_b):>10}"
                     f"{_dash(row.stride_c):>10}  {row.group or ''}"
                     + (f"  ({'; '.join(row.notes)})" if row.notes else ""))
    return lines


def _nest(s):
    nst = s.nest
    lines = ["  nest       loops, outer to inner (element strides per operand):"]
    for lp in nst.loops:
        st = " ".join(f"{k}={v}" for k, v in lp.strides.items())
        lines.append(f"    {lp.labels:<8}{lp.extent:>10}  {st}"
                     + ("  (summed)" if lp.reduces else ""))
    if getattr(nst, "reversed", None):
        lines.append(f"             '{nst.reversed}' walked from its last element, forwards through "
                     "the operands that walk it backwards and hold the most (strides above as walked)")
    lines.append(f"  kernel     nest, {s.kernel.isa}, row {nst.row}"
                 + (f", vectorised along '{nst.vectorised}'"
                    if nst.row.endswith(("contig", "gathered")) or getattr(nst, "short", None) else "")
                 + (f", tiles {nst.tile}x{nst.tile_row}" if nst.tile else ", no tiles")
                 + (f", row blocks of {nst.block}" if nst.block else "")
                 + (f", small-edge kernel ('{nst.short}' in registers)"
                    if getattr(nst, "short", None) else "")
                 + f"; {nst.threads} thread(s)"
                 + (f" over '{nst.split}'" if nst.threads > 1 else "")
                 + f" (at most {nst.max_threads} worth it)")
    return lines


def _gemm(s):
    mnk = s.shape_mnk
    lines = [f"  shape      batch {mnk['batch']}, m {mnk['m']}, n {mnk['n']}, k {mnk['k']}"]
    lines += [f"  merged     {mg.text}" for mg in s.merges]
    if not s.merges:
        lines.append("  merged     (nothing to merge)" if not s.not_merged
                     else "  merged     none")
    lines += [f"  not merged {br.text}" for br in s.not_merged]
    lines += [f"  loop       {pl.text}" for pl in s.panel_loops]
    if s.loop_alternative:
        lines.append(f"  vs loop    {s.loop_alternative.text}")
    o = s.orientation
    lines.append(f"  orient     A (rows, m) = {o.a_operand}; B (columns, n) = {o.b_operand}")
    lines.append(f"             why: {o.why}")
    if o.output_layout:
        lines.append(f"             output: {o.output_layout}; {o.result}")
    else:
        lines.append(f"             {o.result}")
    return lines + _gemm_kernel(s.kernel)


def _gemm_kernel(k):
    par = f" parallel over {k.parallel_loop}" if k.threads > 1 else ""
    if k.mr is None:
        lines = [f"  kernel     {k.kind}, {k.isa}, {k.path}; {k.threads} thread(s)" + par
                 + f"; {k.gemms} "
                 + ("small GEMM(s)" if k.path.startswith("smm") else "GEMV(s)")
                 + ", packed 0 B" + (f"; B {k.pack_b}" if k.pack_b != k.pack_a else "")]
    else:
        lines = [f"  kernel     {k.kind} ({_KIND_TEXT.get(KernelKind(k.kind), '')}), "
                 f"{k.isa}, MR x NR = {k.mr} x {k.nr}, MC/KC/NC = "
                 f"{k.mc}/{k.kc}/{k.nc}, {k.threads} thread(s)" + par,
                 f"             {k.gemms} GEMM(s), {k.tiles} C tiles of which "
                 f"{k.fringe_tiles} fringe (zero-padded inside the packed buffer "
                 f"only; no padded copy, no memset of C)",
                 f"             packed {fmt_bytes(k.bytes_packed)}: "
                 f"A {k.pack_a}; B {k.pack_b}"]
    if k.complex:
        lines.append(f"             {k.complex}")
    return lines


def _cost(c):
    return (f"  cost       {fmt_flops(c.flops)}, {fmt_bytes(c.bytes_moved)} moved, "
            f"intensity {c.intensity:.1f} flop/B; predicted {fmt_time(c.predicted_s)}"
            + (f" ({c.predicted_gflops:.1f} GFLOP/s, {c.predicted_pct_peak:.0f}% "
               f"of {c.threads}-thread peak, {c.bound}-bound)"
               if c.predicted_pct_peak is not None and c.flops else f" ({c.bound}-bound)"))


def _tail(r):
    cp, tot = r.copies, r.totals
    if cp.bytes == 0:
        lines = ["temporaries and copies: 0 bytes (operands read in place through their "
                 "strides, output written in place)"]
    else:
        lines = [f"temporaries and copies: {fmt_bytes(cp.bytes)}"]
        lines += [f"  {fmt_bytes(it.bytes):>9}  {it.what}: {it.why}" for it in cp.items]
    if r.fallbacks:
        lines.append("fallbacks:")
        lines += [f"  {fb.where}: {fb.reason}" for fb in r.fallbacks]
    else:
        lines.append("fallbacks: none")
    if tot.predicted_s is not None:
        lines.append(f"total      {fmt_flops(tot.flops)}, {fmt_bytes(tot.bytes_moved)} moved, "
                     f"intensity {tot.intensity:.1f} flop/B, predicted "
                     f"{fmt_time(tot.predicted_s)}"
                     + (f" = {tot.predicted_gflops:.1f} GFLOP/s, "
                        f"{tot.predicted_pct_peak:.0f}% of peak ({tot.peak_gflops:.0f} "
                        f"GFLOP/s on {tot.threads} thread(s))"
                        if tot.predicted_pct_peak is not None and tot.flops else ""))
    else:
        lines.append(f"total      {tot.note or 'not modelled'}")
    return lines + _measured(r.measured, tot)


def _measured(m, tot):
    if not m:
        return []
    rate = (f"{m.gflops:.1f} GFLOP/s" + (f", {m.pct_peak:.0f}% of peak"
                                         if m.pct_peak is not None else "")
            if tot.flops else f"{m.gbytes_per_s:.1f} GB/s moved")
    if m.pct_bandwidth is not None:
        rate += f" ({m.gbytes_per_s:.1f} GB/s, {m.pct_bandwidth:.0f}% of bandwidth)"
    lines = [f"measured   median {fmt_time(m.median_s)} of {m.runs} runs "
             f"(min {fmt_time(m.min_s)}) = {rate}"
             + (f"; predicted {fmt_time(m.predicted_s)} "
                f"(measured/predicted = {m.measured_over_predicted:.2f})"
                if m.predicted_s else "")]
    if m.busy:
        lines.append(f"           (load average {m.load_average:.1f}: other processes share "
                     "the cores, the timing is pessimistic)")
    return lines


def render_summary(r) -> str:
    """Three to six lines for the demo: decisions and cost."""
    lines = [f"{r.call.spec}: " + " + ".join(r.plan.kinds)]
    if r.plan.fallback:
        lines.append(f"  numpy.einsum fallback: {r.plan.fallback}")
    for s in r.steps:
        lines += [f"  {mg.text}" for mg in s.merges]
        if s.loop_alternative:
            lines.append(f"  {s.loop_alternative.text}")
        if s.orientation:
            o = s.orientation
            lines.append(f"  A (rows) = {o.a_operand}, B (cols) = {o.b_operand}: {o.result}")
        if s.kind in ("copy", "view", "reduce"):
            lines.append(f"  {s.what}")
        k = s.kernel
        if (k.path or "").startswith("gemv"):
            lines.append(f"  {k.isa} no-pack GEMV path: nothing packed")
        if (k.path or "").startswith("smm"):
            lines.append(f"  {k.isa} small in-place GEMM path (smm): nothing packed")
        if k.mr:
            lines.append(f"  {k.isa} {k.mr}x{k.nr}, {k.fringe_tiles} of {k.tiles} "
                         f"tiles are fringe tiles: handled in the kernel, nothing padded or "
                         f"zero-filled outside the packed buffers")
    cp = r.copies
    lines.append(f"  temporaries and copies: {fmt_bytes(cp.bytes)}"
                 + ("" if cp.bytes else " (operands read in place, output written in place)"))
    t = r.totals
    if t.predicted_s is not None:
        lines.append(f"  predicted {fmt_time(t.predicted_s)}"
                     + (f", {t.predicted_pct_peak:.0f}% of peak"
                        if t.predicted_pct_peak is not None and t.flops else ""))
    return "\n".join(lines)


def render_markdown(r) -> str:
    return "```text\n" + render_text(r) + "\n```"
