"""explain() and explain_call(): operands (arrays or shapes) -> the Plan
einsum runs for them -> a Report; with ``measure=True`` also a timed run."""
from __future__ import annotations

import functools
from dataclasses import replace

import numpy as np

from ..deferral import protocol_reason, time_dtype_reason
from ..frontends import (dot_spec, inner_spec, matmul_spec, outer_spec, tensordot_spec,
                         vdot_spec)
from ..operands import Virtual, as_operand, describe
from ..options import CASTING_OMITTED, OPTIMIZE_OMITTED, Options
from ..planner import make_plan
from ..spec import parse_spec
from .build import Context, build_report
from .measure import measure_call
from .report import Report
from .schema import FallbackNote

_FRONTENDS = {"matmul": matmul_spec, "dot": dot_spec, "tensordot": tensordot_spec,
              "inner": inner_spec, "outer": outer_spec, "vdot": vdot_spec}


def explain(subscripts, *operands, dtype=None, out=None, optimize=OPTIMIZE_OMITTED, measure=False,
            **einsum_kwargs):
    """Report how ``einplan.einsum(subscripts, *operands, ...)`` runs.

    ``operands`` are arrays or shapes (see the package docstring);
    ``einsum_kwargs`` are einsum's ``order=`` and ``casting=``.  The Plan is
    the one einsum uses for these operand layouts and options (the cache is
    shared: ``report.plan`` is that object).  ``measure=True`` also runs the
    call (on the arrays given, or random data in the given layouts; a given
    ``out`` is never written: a fresh array with its strides is used) and
    adds the median time.

    >>> print(explain("bij,jk->bik", (77, 6, 512), (512, 1536), dtype="float32"))
    """
    unknown = set(einsum_kwargs) - {"order", "casting"}
    if unknown:
        raise TypeError(f"explain() got an unexpected keyword argument {sorted(unknown)[0]!r}")
    return _explain(subscripts, operands, dtype, out, optimize, measure,
                    einsum_kwargs.get("order", "K"),
                    einsum_kwargs.get("casting", CASTING_OMITTED))


def explain_call(function: str, *args, dtype=None, out=None, measure=False, **kwargs):
    """Report for ``einplan.<function>(*args, **kwargs)`` (matmul, dot, tensordot,
    inner, outer, vdot): the einsum spec it normalizes to, then its Plan.

    Operands may be shapes, as for ``explain`` (``dtype`` = their dtype).
    """
    try:
        to_spec = _FRONTENDS[function]
    except KeyError:
        raise ValueError(f"explain_call: unknown function {function!r}; "
                         f"choose from {', '.join(_FRONTENDS)}") from None
    virt = [as_operand(a, dtype) for a in args]
    concrete = [v.placeholder() if isinstance(v, Virtual) else v for v in virt]
    subscripts, operands = to_spec(*concrete, **kwargs)
    # placeholders come back raveled / conjugated (outer, vdot): keep the
    # caller's layout for shapes, C order for the raveled ones
    ops = [Virtual(o.shape, o.dtype) if isinstance(v, Virtual) else o
           for v, o in zip(virt, operands)]
    # the casting the front end passes to einsum (the others pass none)
    casting = "same_kind" if function in ("matmul", "outer") else CASTING_OMITTED
    return _explain(subscripts, tuple(ops), dtype, out, OPTIMIZE_OMITTED, measure, "K", casting,
                    _function=function, _frontend_spec=subscripts, _given_args=args)


for _name in _FRONTENDS:
    setattr(explain, _name, functools.partial(explain_call, _name))
    getattr(explain, _name).__doc__ = f"explain_call({_name!r}, ...): see explain_call."


def _parse(subscripts, operands, dtype):
    """(spec, operands as arrays or Virtuals, einsum's dtype=, subscripts as given)."""
    if not isinstance(subscripts, str):   # interleaved form: arrays only
        spec, arrays = parse_spec((subscripts,) + operands)
        return spec, list(arrays), dtype, spec.subscripts
    ops = list(operands)
    all_virtual = bool(ops) and not any(isinstance(o, np.ndarray) for o in ops)
    # all shapes: dtype is theirs (as the CLI's --dtype); else einsum's dtype=
    ops = [as_operand(o, dtype if all_virtual else None) for o in ops]
    args = (subscripts,) + tuple(o.placeholder() if isinstance(o, Virtual) else o
                                 for o in ops)
    spec, arrays = parse_spec(args)
    ops = [o if isinstance(o, Virtual) else a for o, a in zip(ops, arrays)]
    return spec, ops, None if all_virtual else dtype, subscripts


def _explain(subscripts, operands, dtype, out, optimize, measure, order="K",
             casting=CASTING_OMITTED,
             _function="einsum", _frontend_spec=None, _given_args=None):
    spec, ops, einsum_dtype, given = _parse(subscripts, operands, dtype)
    infos = tuple(o.info() if isinstance(o, Virtual) else describe(o) for o in ops)
    options = Options.make(einsum_dtype, order, casting, optimize)
    out_op = out_info = None
    if out is not None:
        out_op = as_operand(out, np.result_type(*[i.dtype for i in infos])
                            if einsum_dtype is None else einsum_dtype)
        if isinstance(out_op, np.ndarray):
            if not out_op.flags.writeable:
                raise ValueError("output array is read-only")
            out_info = describe(out_op)
        else:
            out_info = out_op.info()
    plan = make_plan(spec, infos, options, out_info)

    given_as = ["shape" if isinstance(o, Virtual) else "array" for o in ops]
    overlap = isinstance(out_op, np.ndarray) and any(
        isinstance(o, np.ndarray) and np.may_share_memory(out_op, o) for o in ops)
    ctx = Context(spec, infos, plan, options, out_info)
    deferred = protocol_reason(tuple(_given_args or operands) + (out,))
    if deferred is None and _function not in ("einsum", "matmul"):
        deferred = time_dtype_reason(_given_args or operands)
    record = build_report(ctx, given, _function, _frontend_spec, given_as, overlap)
    if deferred is not None:   # einplan hands the call to numpy's function
        note = FallbackNote("whole call", f"numpy.{_function} runs it: {deferred}")
        record = replace(record, fallbacks=(note,) + record.fallbacks)
    report = Report(record, plan, spec)
    if measure:
        report = report.with_measured(measure_call(spec, ops, out_op, options, record))
    return report
