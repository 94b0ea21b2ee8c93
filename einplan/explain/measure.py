"""explain(measure=True): time einsum on the operands (random data in the
given layouts for shapes) and set the measured rate beside the model's."""
from __future__ import annotations

import numpy as np

from ..api import einsum
from ..execute import strided_like
from ..operands import Virtual
from ..timing import load, time_calls
from .schema import Measured


def measure_call(spec, ops, out_op, options, record, min_runs=5, max_runs=25,
                 budget_s=0.5) -> Measured:
    """Median time of ``einsum`` on these operands (random data for shapes)."""
    rng = np.random.default_rng(0)
    arrays = [o.materialize(rng) if isinstance(o, Virtual) else o for o in ops]
    out = None
    if out_op is not None:
        # same strides, never the caller's buffer
        out = out_op.materialize(rng) if isinstance(out_op, Virtual) else strided_like(out_op)
    kw = dict(dtype=options.dtype, order=options.order, casting=options.casting,
              optimize=list(options.optimize) if isinstance(options.optimize, tuple)
              else options.optimize)
    subs = spec.plain_subscripts()   # private '...' labels are not valid subscripts

    times = time_calls(lambda: einsum(subs, *arrays, out=out, **kw), max_runs, min_runs,
                       budget_s, long_call_s=1.0)
    med = float(np.median(times))
    load_avg, _, busy = load()
    tot = record.totals
    gf = tot.flops / med / 1e9 if med > 0 else 0.0
    bandwidth = record.machine.get("bandwidth_gbs")
    moved = tot.bytes_moved
    return Measured(med, float(min(times)), len(times), gf,
                    moved / med / 1e9 if med > 0 else 0.0,
                    100.0 * gf / tot.peak_gflops if tot.peak_gflops else None,
                    tot.predicted_s,
                    med / tot.predicted_s if tot.predicted_s else None, load_avg,
                    100.0 * moved / med / 1e9 / bandwidth if med > 0 and bandwidth else None,
                    busy)
