"""explain(): the Plan einsum runs, rendered as a report (text / dict / JSON).

explain reads a Plan, it never decides anything:

    explain(subscripts, *operands_or_shapes, dtype=, out=, optimize=, measure=, ...)
      entry.py           operands or shapes -> planner.make_plan (the SAME cached
                         Plan object einsum gets for this call: same key, same cache)
      build.py           the whole call: operands, slots, path, copies, totals
        gemm_step.py     per step: roles, merges, orientation, kernel, cost
        reduce_step.py     (model.py prices each step)
        nest_step.py
        kernel_choice.py the GEMM steps' kernel choice, read from the Plan
      schema.py          the records (one field per report key), SCHEMA, validate
      report.py          Report: to_dict(), to_json(), str(), summary(), markdown
      measure.py         measure=True: einsum timed on the operands (or random data)
      render.py          text, summary and markdown from the records

Operands may be arrays or shapes.  A shape is a tuple of ints (C-order
strides, dtype ``dtype`` or float64) or any object with ``.shape`` and
``.dtype`` (and optionally numpy-style byte ``.strides``), e.g.
``jax.ShapeDtypeStruct``.  When every operand is a shape, ``dtype`` is the
operands' dtype (as in the CLI: ``--dtype float32``); when at least one is an
array, ``dtype`` is einsum's ``dtype=`` argument.

The other front ends are explained through the einsum spec they normalize to:

    explain_call("matmul", a, b)             # or explain.matmul(a, b)
    explain_call("tensordot", a, b, axes=([1, 0], [0, 1]))
    explain.dot / .tensordot / .inner / .outer / .vdot likewise
"""
from .entry import explain, explain_call
from .render import fmt_bytes as _fmt_bytes, fmt_time as _fmt_time
from .report import Report
from .schema import SCHEMA, SCHEMA_VERSION, validate

__all__ = ["explain", "explain_call", "Report", "SCHEMA", "SCHEMA_VERSION", "validate"]
