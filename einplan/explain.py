"""explain(): the Plan einsum runs, rendered as a report (text / dict / JSON).

Data flow (DESIGN.md): explain reads a Plan, it never decides anything.

    explain(subscripts, *operands_or_shapes, dtype=, out=, optimize=, measure=, ...)
        parse_spec -> describe operands -> planner.make_plan   (the SAME cached
        Plan object einsum gets for this call: same key, same cache)
        -> _Builder: one dict per step (roles, merges, orientation, kernel,
           cost from model.py) + whole-call totals, copies, fallbacks
        -> Report: str() text, to_dict(), to_json(), _repr_markdown_()

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

Report schema (``Report.to_dict()``; ``SCHEMA`` below is the JSON schema,
``validate(doc)`` a small checker for it).  ``schema_version`` changes only
when a field is removed or changes meaning; new fields may appear.

    schema_version   int (1)
    call             function, subscripts (as given), spec (normalized, one
                     letter per label; '...' dims get unused letters listed in
                     ``ellipsis``), operands[] {index, term, shape, dtype,
                     strides (elements), layout, bytes, given_as}, output {...},
                     options {dtype, order, casting, optimize}
    machine          model.Machine: isa, clock, FMA units, bandwidth, threads
                     and where each number came from
    plan             summary (str(Plan)), kinds[], path[] {step, operands,
                     result, result_shape, result_bytes, flops}, fallback
    steps[]          index, kind, what, a/b/c {slot, source, term}, roles[]
                     {index, extent, role, stride_a, stride_b, stride_c,
                     group, merged, notes[]}, groups, merges[], not_merged[],
                     loop_alternative, orientation, kernel, cost, text[]
    copies           bytes, items[] {what, bytes, why}
    fallbacks[]      {where, reason}
    totals           flops, bytes_moved, intensity, predicted_s,
                     predicted_gflops, predicted_pct_peak, threads, peak_gflops
    measured         null, or median_s, min_s, runs, gflops, pct_peak,
                     predicted_s, measured_over_predicted
"""
from __future__ import annotations

import copy
import functools
import json
import os
import time

import numpy as np
from numpy.lib.stride_tricks import as_strided

from . import _native, model
from .deferral import protocol_reason, time_dtype_reason
from .frontends import (dot_spec, inner_spec, matmul_spec, outer_spec, tensordot_spec,
                        vdot_spec)
from .layout import HOLDERS
from .operands import OperandInfo, describe
from .plan import OUT, CastStep, GemmStep, KernelKind, NestStep, ReduceStep, Role
from .planner import Options, make_plan
from .roles import diagonal_view
from .spec import is_ellipsis_label, parse_spec

__all__ = ["explain", "explain_call", "Report", "SCHEMA", "SCHEMA_VERSION", "validate"]

SCHEMA_VERSION = 1

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
_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def time_calls(fn, max_runs, min_runs, budget_s, long_call_s=None) -> list:
    """Wall times of up to ``max_runs`` calls of ``fn`` after one warm-up
    call (plan cache, packing workspace, thread team); stops early once
    ``min_runs`` are done and ``budget_s`` is spent, or after 3 calls when
    the first took over ``long_call_s``.  Shared by measured explains and
    the demo."""
    fn()
    times = []
    t_start = time.perf_counter()
    while len(times) < max_runs:
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
        if len(times) >= min_runs and time.perf_counter() - t_start > budget_s:
            break
        if long_call_s is not None and times[0] > long_call_s and len(times) >= 3:
            break
    return times


def _copy_text(sc) -> str:
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


_N_REAL_GEMMS = {"": 1, "cc": 4, "1m": 1}

def _complex_method(step, M, N, K, NB) -> dict:
    """How a complex GemmStep runs on the real kernels, and what it costs."""
    flops = 8.0 * M * N * K * NB   # a complex multiply-add is 8 real flops
    if step.complex_mode == "1m":
        return {"method": "1m", "real_gemms": 1, "real_shape": [M, 2 * N, 2 * K],
                "flops": flops,
                "text": (f"complex by the 1m method: one real GEMM of m {M} x n {2 * N} x "
                         f"k {2 * K} (A and C read / written through their float views, "
                         "B packed as 2x2 real blocks [[re, im], [-im, re]]), 8 real flops "
                         "per complex multiply-add, no copies")}
    return {"method": "4m", "real_gemms": 4, "real_shape": [M, N, K], "flops": flops,
            "text": ("complex via real/imag float views: 4 real GEMMs (Cr = ArBr - AiBi, "
                     "Ci = ArBi + AiBr), no copies; not 1m, whose packing of B as 2x2 blocks "
                     "costs more than a GEMV / dot / outer product computes")}


# -- JSON schema ---------------------------------------------------------------

_INT = {"type": "integer"}
_NUM = {"type": "number"}
_STR = {"type": "string"}
_BOOL = {"type": "boolean"}
_INTS = {"type": "array", "items": _INT}
_OPT_INT = {"type": ["integer", "null"]}
_OPT_NUM = {"type": ["number", "null"]}
_OPT_STR = {"type": ["string", "null"]}


def _obj(props, required=None, extra=True):
    return {"type": "object", "properties": props,
            "required": list(props) if required is None else required,
            "additionalProperties": extra}


_ARRAY_DESC = _obj({"index": _OPT_INT, "term": _STR, "shape": _INTS, "dtype": _STR,
                    "strides": {"type": ["array", "null"], "items": _INT},
                    "layout": _STR, "bytes": _INT, "given_as": _STR})
_ROLE_ROW = _obj({"index": _STR, "extent": _INT,
                  "role": {"type": "string", "enum": ["batch", "m", "n", "k", "diagonal",
                                                      "summed-first", "size-1", "kept",
                                                      "summed"]},
                  "stride_a": _OPT_INT, "stride_b": _OPT_INT, "stride_c": _OPT_INT,
                  "group": _OPT_STR, "merged": _BOOL,
                  "notes": {"type": "array", "items": _STR}})
_PRED = _obj({"flops": _NUM, "bytes_moved": _NUM, "bytes_packed": _NUM,
              "intensity": _NUM, "predicted_s": _OPT_NUM, "predicted_gflops": _OPT_NUM,
              "predicted_pct_peak": _OPT_NUM, "bound": _OPT_STR, "threads": _INT,
              "peak_gflops": _OPT_NUM},
             required=["flops", "bytes_moved", "intensity", "predicted_s"])
_SLOT = _obj({"slot": _INT, "source": _STR, "term": _STR})
_KERNEL = _obj({"kind": _STR, "isa": _OPT_STR, "mr": _OPT_INT, "nr": _OPT_INT,
                "mc": _OPT_INT, "kc": _OPT_INT, "nc": _OPT_INT, "threads": _INT,
                "parallel_loop": _STR, "gemms": _INT, "real_gemms_per_gemm": _INT,
                "tiles": _INT, "fringe_tiles": _INT, "bytes_packed": _INT,
                "pack_a": _OPT_STR, "pack_b": _OPT_STR,
                "complex_method": _obj({"method": {"type": "string", "enum": ["1m", "4m"]},
                                        "real_gemms": _INT, "real_shape": _INTS,
                                        "flops": _NUM, "text": _STR})},
               required=["kind", "threads", "parallel_loop", "bytes_packed"])
_STEP = _obj({
    "index": _INT,
    "kind": {"type": "string", "enum": [k.value for k in KernelKind] + ["view"]},
    "what": _STR,
    "a": {"type": ["object", "null"]}, "b": {"type": ["object", "null"]},
    "c": _SLOT,
    "roles": {"type": "array", "items": _ROLE_ROW},
    "groups": {"type": "object"},
    "merges": {"type": "array", "items": _obj({"role": _STR, "labels": _STR,
                                               "extents": _INTS, "extent": _INT,
                                               "text": _STR})},
    "not_merged": {"type": "array", "items": _obj({"role": _STR, "outer": _STR,
                                                   "inner": _STR,
                                                   "operands": {"type": "array",
                                                                "items": _STR},
                                                   "text": _STR})},
    "panel_loops": {"type": "array", "items": _obj({"role": _STR, "labels": _STR,
                                                    "text": _STR})},
    "loop_alternative": {"type": ["object", "null"]},
    "orientation": {"type": ["object", "null"]},
    "kernel": _KERNEL,
    "cost": _PRED,
    "text": {"type": "array", "items": _STR},
})

SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "einplan explain report",
    **_obj({
        "schema_version": {"type": "integer", "enum": [SCHEMA_VERSION]},
        "einplan_version": _STR,
        "call": _obj({"function": _STR, "subscripts": _STR, "spec": _STR,
                      "ellipsis": {"type": "object"},
                      "operands": {"type": "array", "items": _ARRAY_DESC},
                      "output": _ARRAY_DESC, "out_given": _BOOL,
                      "options": {"type": "object"}}),
        "machine": _obj({"cpu": _STR, "isa": _STR, "clock_ghz": _NUM, "clock_source": _STR,
                         "fma_units": _INT, "bandwidth_gbs": _NUM,
                         "bandwidth_source": _STR, "threads": _INT,
                         "peak_gflops_per_core": {"type": "object"}},
                        required=["isa", "clock_ghz", "fma_units", "bandwidth_gbs",
                                  "threads"]),
        "plan": _obj({"summary": _STR, "kinds": {"type": "array", "items": _STR},
                      "path": {"type": "array",
                               "items": _obj({"step": _INT,
                                              "operands": {"type": "array", "items": _STR},
                                              "result": _STR, "result_shape": _INTS,
                                              "result_bytes": _INT, "flops": _NUM})},
                      "fallback": _OPT_STR}),
        "steps": {"type": "array", "items": _STEP},
        "copies": _obj({"bytes": _INT,
                        "items": {"type": "array",
                                  "items": _obj({"what": _STR, "bytes": _INT, "why": _STR})}}),
        "fallbacks": {"type": "array", "items": _obj({"where": _STR, "reason": _STR})},
        "totals": _PRED,
        "measured": {"type": ["object", "null"],
                     "properties": {"median_s": _NUM, "min_s": _NUM, "runs": _INT,
                                    "gflops": _NUM, "pct_peak": _OPT_NUM,
                                    "predicted_s": _OPT_NUM,
                                    "measured_over_predicted": _OPT_NUM},
                     "required": ["median_s", "runs", "gflops"]},
    }, extra=False),
}


def validate(doc, schema=SCHEMA, path="$") -> list[str]:
    """Errors of ``doc`` against ``schema`` (the JSON-schema subset used here:
    type, properties, required, additionalProperties, items, enum).  [] = valid."""
    errors = []
    types = schema.get("type")
    if types is not None:
        types = [types] if isinstance(types, str) else types
        if not any(_is_type(doc, t) for t in types):
            return [f"{path}: expected {'/'.join(types)}, got {type(doc).__name__}"]
    if "enum" in schema and doc not in schema["enum"]:
        errors.append(f"{path}: {doc!r} not one of {schema['enum']}")
    if isinstance(doc, dict):
        props = schema.get("properties", {})
        for key in schema.get("required", []):
            if key not in doc:
                errors.append(f"{path}: missing {key!r}")
        for key, val in doc.items():
            if key in props:
                errors += validate(val, props[key], f"{path}.{key}")
            elif schema.get("additionalProperties", True) is False:
                errors.append(f"{path}: unexpected key {key!r}")
    if isinstance(doc, list) and "items" in schema:
        for i, val in enumerate(doc):
            errors += validate(val, schema["items"], f"{path}[{i}]")
    return errors


def _is_type(x, t):
    if t == "null":
        return x is None
    if t == "boolean":
        return isinstance(x, bool)
    if t == "integer":
        return isinstance(x, int) and not isinstance(x, bool)
    if t == "number":
        return isinstance(x, (int, float)) and not isinstance(x, bool)
    if t == "string":
        return isinstance(x, str)
    if t == "array":
        return isinstance(x, list)
    if t == "object":
        return isinstance(x, dict)
    return False


# -- the Report ------------------------------------------------------------------

class Report:
    """An explain report.  ``plan`` is the very Plan object einsum runs."""

    def __init__(self, data: dict, plan=None, spec=None):
        self._data = data
        self.plan = plan
        self.spec = spec

    def to_dict(self) -> dict:
        """The report as plain JSON-able data (a deep copy; see SCHEMA)."""
        return copy.deepcopy(self._data)

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self._data, indent=indent)

    def __str__(self):
        return render_text(self._data)

    def __repr__(self):
        return f"<einplan.Report {self._data['call']['spec']} {self._data['plan']['kinds']}>"

    def summary(self) -> str:
        """A few lines: the decisions that matter and the predicted cost."""
        return render_summary(self._data)

    def _repr_markdown_(self):
        return "```text\n" + render_text(self._data) + "\n```"

    def __getitem__(self, key):
        return self._data[key]


# -- input handling ----------------------------------------------------------------

def _is_shape(x):
    return (isinstance(x, (tuple, list)) and all(isinstance(v, (int, np.integer)) for v in x))


def _c_strides(shape):
    st, acc = [], 1
    for e in reversed(shape):
        st.append(acc)
        acc *= max(int(e), 1)
    return tuple(reversed(st))


def _layout_name(shape, strides):
    if strides is None:
        return "not element-strided"
    dims = [(e, s) for e, s in zip(shape, strides) if e != 1]
    if all(s == c for (e, s), c in zip(dims, _c_strides([e for e, _ in dims]))):
        return "C order"
    fs = list(reversed(_c_strides([e for e, _ in reversed(dims)])))
    if all(s == f for (e, s), f in zip(dims, fs)):
        return "F order"
    return "strided"


class _Virtual:
    """An operand given by shape/dtype/strides only (no data)."""

    def __init__(self, shape, dtype, strides=None):
        self.shape = tuple(int(e) for e in shape)
        self.dtype = np.dtype(dtype)
        self.strides = tuple(strides) if strides is not None else _c_strides(self.shape)

    def info(self):
        layout = _layout_name(self.shape, self.strides)
        return OperandInfo(self.shape, self.strides, self.dtype, True,
                           layout == "C order", layout == "F order")

    def placeholder(self):
        """A zero-stride view with this shape and dtype: enough for parse_spec."""
        return as_strided(np.zeros(1, self.dtype), self.shape, (0,) * len(self.shape),
                          writeable=False)

    def materialize(self, rng):
        """Random data in exactly this layout (for measure=True)."""
        lo = sum((e - 1) * s for e, s in zip(self.shape, self.strides) if s < 0)
        hi = sum((e - 1) * s for e, s in zip(self.shape, self.strides) if s > 0)
        n = hi - lo + 1 if all(self.shape) else 1
        base = _random(rng, (n,), self.dtype)
        item = self.dtype.itemsize
        return as_strided(base[-lo:], self.shape, tuple(s * item for s in self.strides))


def _random(rng, shape, dtype):
    dt = np.dtype(dtype)
    if dt.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt)
    if dt.kind == "f":
        return rng.standard_normal(shape).astype(dt)
    if dt.kind == "b":
        return rng.integers(0, 2, shape).astype(dt)
    return rng.integers(-3, 4, shape).astype(dt)


def _as_operand(x, dtype):
    """ndarray, or a _Virtual for a shape / shape-dtype object."""
    if isinstance(x, (np.ndarray, _Virtual)):
        return x
    if _is_shape(x):
        return _Virtual(x, dtype or np.float64)
    if hasattr(x, "shape") and hasattr(x, "dtype"):
        st = getattr(x, "strides", None)
        dt = np.dtype(x.dtype)
        if st is not None:
            st = tuple(int(s) // dt.itemsize for s in st)
        return _Virtual(tuple(x.shape), dt, st)
    return np.asanyarray(x)


# -- the public entry points -----------------------------------------------------

def explain(subscripts, *operands, dtype=None, out=None, optimize=True, measure=False,
            **einsum_kwargs):
    """Report how ``einplan.einsum(subscripts, *operands, ...)`` runs.

    ``operands`` are arrays or shapes (see the module docstring);
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
                    einsum_kwargs.get("order", "K"), einsum_kwargs.get("casting", "safe"))


def _explain(subscripts, operands, dtype, out, optimize, measure, order="K", casting="safe",
             _function="einsum", _frontend_spec=None, _given_args=None):
    if isinstance(subscripts, str):
        ops = list(operands)
        all_virtual = bool(ops) and not any(isinstance(o, np.ndarray) for o in ops)
        op_dtype = dtype if all_virtual else None
        ops = [_as_operand(o, op_dtype) for o in ops]
        einsum_dtype = None if all_virtual else dtype
        args = (subscripts,) + tuple(o.placeholder() if isinstance(o, _Virtual) else o
                                     for o in ops)
        spec, arrays = parse_spec(args)
        ops = [o if isinstance(o, _Virtual) else a for o, a in zip(ops, arrays)]
        given = subscripts
    else:
        # interleaved form: arrays only
        spec, arrays = parse_spec((subscripts,) + operands)
        ops = list(arrays)
        einsum_dtype = dtype
        given = spec.subscripts
    infos = tuple(o.info() if isinstance(o, _Virtual) else describe(o) for o in ops)

    options = Options.make(einsum_dtype, order, casting, optimize)
    out_op = None
    out_info = None
    if out is not None:
        out_op = _as_operand(out, np.result_type(*[i.dtype for i in infos])
                             if einsum_dtype is None else einsum_dtype)
        if isinstance(out_op, np.ndarray):
            if not out_op.flags.writeable:
                raise ValueError("output array is read-only")
            out_info = describe(out_op)
        else:
            out_info = out_op.info()
    plan = make_plan(spec, infos, options, out_info)

    given_as = ["shape" if isinstance(o, _Virtual) else "array" for o in ops]
    overlap = isinstance(out_op, np.ndarray) and any(
        isinstance(o, np.ndarray) and np.may_share_memory(out_op, o) for o in ops)
    data = _Builder(spec, infos, plan, options, out_info, given, _function,
                    _frontend_spec, given_as, overlap).build()
    deferred = protocol_reason(tuple(_given_args or operands) + (out,))
    if deferred is None and _function not in ("einsum", "matmul"):
        deferred = time_dtype_reason(_given_args or operands)
    if deferred is not None:   # einplan hands the call to numpy's function
        data["fallbacks"].insert(0, {"where": "whole call",
                                     "reason": f"numpy.{_function} runs it: {deferred}"})
    if measure:
        data["measured"] = _measure(spec, ops, out_op, options, data)
    return Report(data, plan, spec)


_FRONTENDS = {"matmul": matmul_spec, "dot": dot_spec, "tensordot": tensordot_spec,
              "inner": inner_spec, "outer": outer_spec, "vdot": vdot_spec}


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
    virt = [_as_operand(a, dtype) for a in args]
    concrete = [v.placeholder() if isinstance(v, _Virtual) else v for v in virt]
    subscripts, operands = to_spec(*concrete, **kwargs)
    ops = []
    for v, o in zip(virt, operands):
        # placeholders come back raveled / conjugated (outer, vdot): keep the
        # caller's layout for shapes, C order for the raveled ones
        ops.append(_Virtual(o.shape, o.dtype) if isinstance(v, _Virtual) else o)
    casting = "same_kind" if function in ("matmul", "outer") else "safe"
    return _explain(subscripts, tuple(ops), dtype, out, True, measure, "K", casting,
                    _function=function, _frontend_spec=subscripts, _given_args=args)


for _name in _FRONTENDS:
    setattr(explain, _name, functools.partial(explain_call, _name))
    getattr(explain, _name).__doc__ = f"explain_call({_name!r}, ...): see explain_call."


# -- building the report -----------------------------------------------------------

def _fmt_bytes(n):
    n = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if abs(n) < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000.0
    return f"{n:.1f} GB"


def _fmt_time(s):
    if s is None:
        return "n/a"
    if s < 1e-3:
        return f"{s * 1e6:.1f} us"
    if s < 1:
        return f"{s * 1e3:.2f} ms"
    return f"{s:.2f} s"


def _fmt_flops(f):
    for unit, scale in (("GFLOP", 1e9), ("MFLOP", 1e6), ("kFLOP", 1e3)):
        if f >= scale:
            return f"{f / scale:.1f} {unit}"
    return f"{f:.0f} FLOP"


def _prod(xs):
    p = 1
    for x in xs:
        p *= int(x)
    return p


class _Builder:
    def __init__(self, spec, infos, plan, options, out_info, given, function, frontend_spec,
                 given_as, overlap=False):
        self.given_as, self.overlap = given_as, overlap
        self.spec, self.infos, self.plan = spec, infos, plan
        self.options, self.out_info = options, out_info
        self.given, self.function, self.frontend_spec = given, function, frontend_spec
        self.sizes = spec.sizes
        self.n_inputs = len(infos)
        # display letters: ASCII labels as given, '...' dims -> unused letters
        used = {c for c in "".join(spec.inputs) + spec.output if not is_ellipsis_label(c)}
        free = iter([c for c in _LETTERS.upper()[:26] + _LETTERS[:26] if c not in used])
        self.disp, self.ellipsis = {}, {}
        for c in sorted({c for c in "".join(spec.inputs) + spec.output
                         if is_ellipsis_label(c)}):
            d = next(free, "?")
            self.disp[c] = d
            self.ellipsis[d] = ord(c) - 0x100
        self.cfg = _native.kernel_config()
        self.mach = model.machine()
        self.dtype = np.dtype(plan.dtype)
        self.real = np.dtype(self.dtype.char.lower()) if self.dtype.kind == "c" else self.dtype
        # per slot: {label: element stride}, source text, term
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

    def d(self, labels):
        return "".join(self.disp.get(c, c) for c in labels)

    # -- the pieces --

    def array_desc(self, index, term, info, given_as):
        shape = list(info.shape)
        strides = None if info.strides is None else list(info.strides)
        return {"index": index, "term": self.d(term), "shape": shape,
                "dtype": str(info.dtype), "strides": strides,
                "layout": _layout_name(info.shape, info.strides),
                "bytes": _prod(shape) * info.dtype.itemsize, "given_as": given_as}

    def out_strides(self):
        plan = self.plan
        if self.out_info is not None and not plan.out_cast and self.out_info.strides is not None:
            return tuple(self.out_info.strides)
        if plan.out_buffer is not None:
            return plan.out_buffer.strides
        return _c_strides(plan.shape)

    def build(self) -> dict:
        plan, spec = self.plan, self.spec
        out_st = self.out_strides()
        self.slot_strides[OUT] = dict(zip(spec.output, out_st))
        self.slot_labels[OUT] = spec.output
        self.slot_source[OUT] = "the output" + (" (out=)" if self.out_info is not None else "")
        out_desc = self.array_desc(None, spec.output, OperandInfo(
            plan.shape, out_st, self.dtype), "out=" if self.out_info is not None else
            ("view" if _is_view_plan(plan) else "allocated"))
        call = {
            "function": self.function,
            "subscripts": self.given if isinstance(self.given, str) else str(self.given),
            "spec": ",".join(self.d(t) for t in spec.inputs) + "->" + self.d(spec.output),
            "ellipsis": dict(self.ellipsis),
            "operands": [self.array_desc(i, t, info, self.given_as[i])
                         for i, (t, info) in enumerate(zip(spec.inputs, self.infos))],
            "output": out_desc,
            "out_given": self.out_info is not None,
            "options": {"dtype": None if self.options.dtype is None else str(self.options.dtype),
                        "order": self.options.order, "casting": self.options.casting,
                        "optimize": _jsonable(self.options.optimize)},
        }
        if self.frontend_spec is not None:
            call["frontend_spec"] = self.frontend_spec
        steps, path = [], []
        if plan.fallback is not None:
            self.fallbacks.append({"where": "whole call", "reason": plan.fallback.reason})
        for i, step in enumerate(plan.steps):
            if isinstance(step, GemmStep):
                sd = self.gemm_step(i, step)
            elif isinstance(step, ReduceStep):
                sd = self.reduce_step(i, step)
            elif isinstance(step, NestStep):
                sd = self.nest_step(i, step)
            elif isinstance(step, CastStep):
                sd = self.cast_step(i, step)
            else:  # pragma: no cover - a new step type
                continue
            steps.append(sd)
            if sd["kind"] != "view":
                path.append({"step": i, "operands": [x["source"] for x in sd.get(
                                 "inputs", (sd["a"], sd["b"])) if x is not None],
                             "result": sd["c"]["term"],
                             "result_shape": [self.sizes[c] for c in self.slot_labels.get(
                                 self._slot_of(sd["c"]), "")],
                             "result_bytes": _prod(self.sizes[c] for c in self.slot_labels.get(
                                 self._slot_of(sd["c"]), "")) * self.dtype.itemsize,
                             "flops": sd["cost"]["flops"]})
        if plan.out_cast:
            nbytes = _prod(plan.shape) * self.dtype.itemsize
            why = ("out= has another dtype than the computation" if self.out_info is not None
                   and self.out_info.dtype != self.dtype else
                   "out= is not addressable in elements / not aligned")
            self.copies.append({"what": "result computed into a temporary, then copied into out=",
                                "bytes": nbytes, "why": why})
            self.fallbacks.append({"where": "output", "reason": why + ": computed into a "
                                   "temporary and cast/copied into out="})
        if self.overlap and not plan.out_cast and plan.fallback is None:
            nbytes = _prod(plan.shape) * self.dtype.itemsize
            why = "out= overlaps an operand"
            self.copies.append({"what": "result computed into a temporary with out='s strides, "
                                "then copied into out=", "bytes": nbytes, "why": why})
            self.fallbacks.append({"where": "output", "reason": why + ": computed into a "
                                   "temporary, then copied"})
        totals = self.totals(steps, plan)
        return {
            "schema_version": SCHEMA_VERSION,
            "einplan_version": _version(),
            "call": call,
            "machine": self.mach.to_dict(),
            "plan": {"summary": str(plan), "kinds": [s["kind"] for s in steps]
                     if steps else ["fallback_numpy"],
                     "path": path,
                     "fallback": None if plan.fallback is None else plan.fallback.reason},
            "steps": steps,
            "copies": {"bytes": sum(c["bytes"] for c in self.copies), "items": self.copies},
            "fallbacks": self.fallbacks,
            "totals": totals,
            "measured": None,
        }

    def _slot_of(self, cdesc):
        return cdesc["slot"]

    def slot_desc(self, slot):
        return {"slot": slot, "source": self.slot_source.get(slot, f"slot {slot}"),
                "term": self.d(self.slot_labels.get(slot, ""))}

    def price_flag(self):
        first = not self.first_priced
        self.first_priced = True
        return first

    # -- GEMM step --

    def gemm_step(self, i, step: GemmStep) -> dict:
        sizes = self.sizes
        dt = self.real
        sa, sb = self.slot_strides.get(step.a, {}), self.slot_strides.get(step.b, {})
        sc = self.slot_strides.get(step.c, {})
        if step.c != OUT:
            buf = step.c_buffer
            sc = dict(zip(step.c_labels, buf.strides)) if buf is not None else {}
            self.slot_strides[step.c] = sc
            self.slot_labels[step.c] = step.c_labels
            self.slot_source[step.c] = f"intermediate of step {i + 1}"
            nbytes = _prod(sizes[c] for c in step.c_labels) * self.dtype.itemsize
            self.copies.append({"what": f"intermediate '{self.d(step.c_labels)}' of step {i + 1}",
                                "bytes": nbytes,
                                "why": "a multi-operand contraction keeps pairwise results"})
        holder_strides = {"A": sa, "B": sb, "C": sc}
        groups = {"batch": step.batch, "m": step.m, "n": step.n, "k": step.k}
        # role table
        rows = []
        for role, g in groups.items():
            for gi, ax in enumerate(g.axes):
                for lab in ax.labels:
                    notes = []
                    for side, slot in (("A", step.a), ("B", step.b)):
                        if lab in self.diag.get(slot, ""):
                            notes.append(f"diagonal of {side} (repeated index: one axis, "
                                         "strides summed, a view)")
                    rows.append({"index": self.d(lab), "extent": int(sizes[lab]), "role": role,
                                 "stride_a": _get(sa, lab) if role in ("batch", "m", "k") else None,
                                 "stride_b": _get(sb, lab) if role in ("batch", "n", "k") else None,
                                 "stride_c": _get(sc, lab) if role in ("batch", "m", "n") else None,
                                 "group": f"{role}[{gi}] = {'*'.join(self.d(ax.labels))}",
                                 "merged": len(ax.labels) > 1, "notes": notes})
        for side, slot in (("A", step.a), ("B", step.b)):
            if slot in self.presummed:
                src, summed = self.presummed[slot]
                for lab in summed:
                    rows.append({"index": self.d(lab), "extent": int(sizes[lab]),
                                 "role": "summed-first", "stride_a": None, "stride_b": None,
                                 "stride_c": None, "group": None, "merged": False,
                                 "notes": [f"only in {self.slot_source.get(src)}: summed out "
                                           f"before this step (numpy.sum on a view)"]})
        in_step = set(step.a_labels) | set(step.b_labels) | set(step.c_labels)
        for lab in sorted(in_step, key=lambda c: self.d(c)):
            if sizes.get(lab, 0) == 1:
                rows.append({"index": self.d(lab), "extent": 1, "role": "size-1",
                             "stride_a": None, "stride_b": None, "stride_c": None,
                             "group": None, "merged": False,
                             "notes": ["extent 1: dropped, it blocks no merge and needs no loop"]})
        for side, slot in (("A", step.a), ("B", step.b)):
            for lab in self.diag.get(slot, ""):
                if not any(r["index"] == self.d(lab) for r in rows):
                    rows.append({"index": self.d(lab), "extent": int(sizes[lab]),
                                 "role": "diagonal", "stride_a": _get(sa, lab) if side == "A"
                                 else None, "stride_b": _get(sb, lab) if side == "B" else None,
                                 "stride_c": None, "group": None, "merged": False,
                                 "notes": [f"repeated in {side}: read as one axis whose stride "
                                           "is the sum of the repeated axes' strides (no copy)"]})
        M, N, K, NB = step.m.extent, step.n.extent, step.k.extent, step.batch.extent
        mnk = f"{M} x {K} x {N}"
        gemm_word = "one GEMM" if NB == 1 else f"a loop of {NB} GEMMs"
        # merges
        merges = []
        for role, g in groups.items():
            for ax in g.axes:
                if len(ax.labels) > 1:
                    ext = [int(sizes[c]) for c in ax.labels]
                    head = (f"{role} = {'*'.join(self.d(ax.labels))} merged "
                            f"({' x '.join(map(str, ext))} -> {ax.extent})")
                    if role in ("m", "n"):
                        tail = f", {gemm_word} of {mnk} (m x k x n)"
                    elif role == "k":
                        tail = ": one k axis, packing reads it with one stride"
                    else:
                        tail = f": the batch loop runs over one axis of {ax.extent}"
                    merges.append({"role": role, "labels": self.d(ax.labels), "extents": ext,
                                   "extent": int(ax.extent), "text": head + tail})
        breaks = []
        for br in step.breaks:
            breaks.append(self.break_desc(br, groups[br.role.value], holder_strides))
        panel_loops = []
        for role, labels in step.panel_loops:
            inner = getattr(step, role).axes[-1]
            tile = _native.tile(self.dtype if self.dtype.kind == "f" else
                                np.dtype(self.dtype.char.lower()))
            t = tile[0] if role == "m" else tile[1]
            tname = "MR" if role == "m" else "NR"
            panel_loops.append({
                "role": role, "labels": self.d(labels),
                "text": (f"{'*'.join(self.d(labels))}: {role}'s outer axis runs as a batch "
                         f"loop: {tname} = {t} panels would straddle the {inner.extent}-long "
                         f"runs of '{self.d(inner.labels)}' ({inner.extent} % {t} = "
                         f"{inner.extent % t}), gathering them when packed and scattering "
                         "their C tiles")})
        # orientation
        orient = self.orientation(step, sc)
        # kernel schedule + cost
        blocking = self.cfg["blocking"].get(str(dt), {})
        nreal = _N_REAL_GEMMS.get(step.complex_mode, 1)
        # 1m: the kernel runs one real GEMM of m x 2n x 2k
        c2 = 2 if step.complex_mode == "1m" else 1
        sched = model.gemm_schedule(M, c2 * N, c2 * K, NB, _native.get_num_threads(),
                                    call=step.native)
        item = self.dtype.itemsize
        bytes_a = NB_if(step.batch, "A") * M * K * item
        bytes_b = NB_if(step.batch, "B") * K * N * item
        bytes_c = NB * M * N * item
        gather_a = len(step.m.axes) > 1 or len(step.k.axes) > 1
        gather_b = len(step.n.axes) > 1 or len(step.k.axes) > 1
        direct_b = _direct_b(sched, step)
        pred = model.predict_gemm(self.mach, dt, sched, bytes_a, bytes_b, bytes_c, nreal,
                                  gather_a, gather_b, overhead_call=self.price_flag(),
                                  direct_b=direct_b)
        if sched.path in ("gemv", "smm"):
            direct_b = False
        kernel = {
            "kind": step.kind.value, "isa": self.cfg["isa"], "mr": sched.mr, "nr": sched.nr,
            "mc": sched.mc, "kc": sched.kc, "nc": sched.nc,
            "blocking_default": {k2: blocking.get(k2) for k2 in ("mc", "kc", "nc")},
            "threads": sched.threads, "parallel_loop": sched.parallel_loop,
            "gemms": NB, "real_gemms_per_gemm": nreal,
            "tiles": sched.tiles * NB, "fringe_tiles": sched.fringe_tiles * NB,
            "bytes_packed": int(pred.bytes_packed),
            "pack_a": "block-scatter (gather where offsets are irregular)" if gather_a
            else "single stride per micro-panel",
            "pack_b": ("read in place (full NR panels; m is small)" if direct_b else
                       "block-scatter (gather where offsets are irregular)" if gather_b
                       else "single stride per micro-panel"),
        }
        if sched.path == "gemv":
            kernel.update(mr=None, nr=None, mc=None, kc=None, nc=None,
                          pack_a="not packed (no-pack GEMV path)",
                          pack_b="not packed (no-pack GEMV path)",
                          path="gemv: m or n is 1, every matrix element is used once, "
                          "so nothing is packed (dot / axpy loops through the strides)")
        elif sched.path == "smm":
            kernel.update(mr=None, nr=None, mc=None, kc=None, nc=None,
                          pack_a="not packed (small in-place path)",
                          pack_b="not packed (small in-place path)",
                          path="smm: n is narrow (at most 8 vectors), so A, B and C are read "
                          "in place, up to 8 rows of C per register tile (masked last "
                          "vector); packing A would cost as much as the arithmetic it feeds")
        else:
            kernel["path"] = "packed: BLIS five loops around the MR x NR micro-kernel"
        if step.complex_mode:
            kernel["complex_method"] = _complex_method(step, M, N, K, NB)
            kernel["complex"] = kernel["complex_method"]["text"]
        cost = self.cost_dict(pred, sched.threads)
        alt = self.loop_alternative(step, groups, item, nreal, pred)
        # text lines
        text = []
        what = (f"{self.slot_source.get(step.a)} x {self.slot_source.get(step.b)} -> "
                f"{self.slot_source.get(step.c)}")
        return {
            "index": i, "kind": step.kind.value, "what": what,
            "a": self.slot_desc(step.a), "b": self.slot_desc(step.b),
            "c": self.slot_desc(step.c),
            "roles": rows,
            "groups": {r: [{"labels": self.d(ax.labels), "extent": int(ax.extent),
                            "strides": {h: int(s) for h, s in zip(HOLDERS[g.role], ax.strides)}}
                           for ax in g.axes] for r, g in groups.items()},
            "shape_mnk": {"batch": NB, "m": M, "n": N, "k": K},
            "merges": merges, "not_merged": breaks, "panel_loops": panel_loops,
            "loop_alternative": alt, "orientation": orient, "kernel": kernel, "cost": cost,
            "text": text,
        }

    def break_desc(self, br, group, holder_strides):
        role = br.role.value
        inner_ax = next((ax for ax in group.axes if ax.labels.startswith(br.inner)), None)
        parts = []
        for h in br.operands:
            st = holder_strides.get(h, {})
            so = st.get(br.outer)
            if inner_ax is not None and so is not None:
                si = inner_ax.strides[HOLDERS[br.role].index(h)]
                parts.append(f"in {h}, stride[{self.d(br.outer)}] = {so} but extent x stride of "
                             f"'{self.d(inner_ax.labels)}' = {inner_ax.extent} x {si} = "
                             f"{inner_ax.extent * si}")
            else:
                parts.append(f"{h}'s strides are not contiguous")
        return {"role": role, "outer": self.d(br.outer), "inner": self.d(br.inner),
                "operands": list(br.operands),
                "text": (f"{role}: {self.d(br.outer)} and {self.d(br.inner)} not merged: "
                         + "; ".join(parts))}

    def orientation(self, step, sc):
        sizes = self.sizes
        cand = {c: s for c, s in sc.items() if sizes.get(c, 0) != 1}
        unit = min(cand, key=lambda c: abs(cand[c])) if cand else None
        role = None
        for r, g in (("batch", step.batch), ("m", step.m), ("n", step.n)):
            if unit is not None and unit in g.labels:
                role = r
        a_src, b_src = self.slot_source.get(step.a), self.slot_source.get(step.b)
        first, second = ("second", "first") if step.swapped else ("first", "second")
        if role == "n":
            why = (f"C's unit-stride index '{self.d(unit)}' is in {b_src}, so that operand "
                   "feeds the columns (n), where the micro-kernel's vectors run")
            if step.swapped:
                why += "; the einsum's operands were exchanged to get there"
            else:
                why += "; einsum operand order kept"
            result = ("C tiles are stored as contiguous vectors straight into the output's "
                      "own layout: no transpose and no copy of the output")
        elif unit is None:
            why = "C has no axis of extent > 1"
            result = "no transpose and no copy of the output"
        else:
            why = (f"C's unit-stride index '{self.d(unit)}' is a {role} index: no operand order "
                   "puts it in n")
            result = ("C tiles are written through strided stores (a private tile where "
                      "offsets are irregular); still no transpose or copy of the output")
        out_layout = None
        if step.c == OUT:
            out_layout = self.plan_out_layout()
            if self.plan.out_cast:
                result += ("; then the result is cast/copied into out= (its dtype or "
                           "layout differs: see copies)")
        return {"a_operand": a_src, "b_operand": b_src, "swapped": bool(step.swapped),
                "a_is_einsum_operand": first, "b_is_einsum_operand": second,
                "c_unit_index": None if unit is None else self.d(unit), "c_unit_role": role,
                "output_layout": out_layout,
                "output_transpose": False, "output_copy": bool(self.plan.out_cast
                                                               and step.c == OUT),
                "why": why, "result": result}

    def plan_out_layout(self):
        if self.out_info is not None:
            return f"{_layout_name(self.out_info.shape, self.out_info.strides)}, given by out="
        order = self.options.order
        lay = _layout_name(self.plan.shape, self.out_strides())
        if order == "K":
            return f"{lay}, chosen by the planner (order='K')"
        return f"{lay}, requested (order='{order}')"

    def loop_alternative(self, step, groups, item, nreal, pred):
        """What a loop over the outer merged m / n labels would have cost (tract)."""
        outer = 1
        inner_m, inner_n = step.m.extent, step.n.extent
        labels = []
        for role in ("m", "n"):
            g = groups[role]
            for ax in g.axes:
                if len(ax.labels) > 1:
                    e_in = self.sizes[ax.labels[-1]]
                    outer *= ax.extent // e_in
                    labels += list(ax.labels[:-1])
                    if role == "m":
                        inner_m = inner_m // (ax.extent // e_in)
                    else:
                        inner_n = inner_n // (ax.extent // e_in)
        if outer == 1:
            return None
        K, NB = step.k.extent, step.batch.extent * outer
        sched = model.gemm_schedule(inner_m, inner_n, K, NB, _native.get_num_threads(),
                                    dtype=self.real)
        p = model.predict_gemm(self.mach, self.real, sched, NB * inner_m * K * item,
                               step.batch.extent * K * step.n.extent * item,
                               NB * inner_m * inner_n * item, nreal, overhead_call=True)
        ratio = p.seconds / pred.seconds if pred.seconds else None
        return {"loop_over": self.d("".join(labels)), "gemms": NB,
                "m": inner_m, "k": K, "n": inner_n, "predicted_s": p.seconds,
                "bytes_packed": int(p.bytes_packed),
                "slowdown": ratio,
                "text": (f"without the merge, a loop over {self.d(''.join(labels))} would run "
                         f"{NB} GEMMs of {inner_m} x {K} x {inner_n} (m x k x n), as a batched "
                         f"matmul does, predicted {_fmt_time(p.seconds)} "
                         f"({ratio:.1f}x the merged GEMM's {_fmt_time(pred.seconds)}; "
                         f"B repacked {NB} times)")}

    def cost_dict(self, pred, threads):
        peak = self.mach.peak_gflops(self.real, threads)
        gf = pred.gflops() if pred.seconds else None
        return {"flops": float(pred.flops), "bytes_moved": float(pred.bytes_moved),
                "bytes_packed": float(pred.bytes_packed),
                "intensity": (pred.flops / pred.bytes_moved) if pred.bytes_moved else 0.0,
                "predicted_s": pred.seconds, "predicted_gflops": gf,
                "predicted_pct_peak": (100.0 * gf / peak) if gf is not None and peak else None,
                "bound": pred.bound, "threads": threads, "peak_gflops": peak,
                "model": {"t_compute": pred.t_compute, "t_pack": pred.t_pack,
                          "t_memory": pred.t_memory, "t_overhead": pred.t_overhead,
                          "efficiency": pred.efficiency}}

    # -- numpy steps --

    def copy_schedule(self, step, src_st, dst_st, itemsize):
        """What ep_copy runs for a same-dtype copy step (the C core's own
        decision, as execute calls it), or None when the step's copy is not
        ep_copy's (element size, unknown dst strides)."""
        labels = [c for c in step.src_labels if self.sizes[c] != 1]
        if itemsize not in (1, 2, 4, 8, 16) or any(c not in dst_st for c in labels):
            return None
        return _native.copy_schedule([self.sizes[c] for c in labels],
                                     [src_st[c] for c in labels],
                                     [dst_st[c] for c in labels], itemsize)

    def reduce_step(self, i, step: ReduceStep) -> dict:
        sizes = self.sizes
        src_item = self.dtype.itemsize
        if step.src < self.n_inputs and self.infos[step.src] is not None:
            src_item = self.infos[step.src].dtype.itemsize
        dst_dtype = np.dtype(step.cast_to) if step.cast_to else None
        dst_item = dst_dtype.itemsize if dst_dtype is not None else (
            self.dtype.itemsize if step.dst == OUT else src_item)
        summed = [step.src_labels[a] for a in step.sum_axes]
        src_elems = _prod(step.src_shape)
        dst_elems = _prod(sizes[c] for c in step.dst_labels)
        if step.dst != OUT:
            buf = step.buffer
            keep = step.dst_labels
            self.slot_strides[step.dst] = dict(zip(keep, buf.strides)) if buf else {}
            self.slot_labels[step.dst] = keep
            src_text = self.slot_source.get(step.src)
            if summed:
                self.slot_source[step.dst] = f"{src_text} summed over '{self.d(summed)}'"
                self.presummed[step.dst] = (step.src, "".join(summed))
            else:
                self.slot_source[step.dst] = f"{src_text} cast to {step.cast_to}"
            why = ("index found only in this operand and not in the output: summed first"
                   if summed else f"cast to the computation dtype {step.cast_to}")
            if step.cast_to and summed:
                why += f", and cast to {step.cast_to}"
            self.copies.append({"what": f"step {i + 1}: {self.slot_source[step.dst]}",
                                "bytes": dst_elems * dst_item, "why": why})
            if step.cast_to:
                self.fallbacks.append({"where": f"step {i + 1}",
                                       "reason": f"{src_text}: dtype differs from the "
                                       f"computation dtype; a cast copy to {step.cast_to}"})
        sc = self.slot_strides.get(step.dst, {})
        src_st = dict(zip(step.src_labels, step.src_strides))
        rows = []
        for lab in step.src_labels:
            role = "summed-first" if lab in summed else "kept"
            if step.dst == OUT and not summed:
                role = "kept"
            notes = []
            if lab in self.diag.get(step.src, ""):
                notes.append("diagonal: repeated index read as one axis (a view)")
            rows.append({"index": self.d(lab), "extent": int(sizes[lab]), "role": role,
                         "stride_a": int(src_st[lab]), "stride_b": None,
                         "stride_c": _get(sc, lab), "group": None, "merged": False,
                         "notes": notes})
        strided, copy_sched = False, None
        if src_st and sc:
            unit_src = min(src_st, key=lambda c: abs(src_st[c]))
            cand = {c: v for c, v in sc.items() if c in src_st}
            unit_dst = min(cand, key=lambda c: abs(cand[c])) if cand else unit_src
            strided = unit_src != unit_dst
        if step.as_view:
            kind, what = "view", (f"{self.slot_source.get(step.src)} returned as a view "
                                  f"'{self.d(step.dst_labels)}' (strides only, no data moved)")
            bytes_moved, flops = 0, 0
        elif summed:
            kind = step.kind.value
            what = (f"numpy.sum of {self.slot_source.get(step.src)} over "
                    f"'{self.d(summed)}' -> {self.slot_source.get(step.dst, 'slot')}")
            bytes_moved, flops = src_elems * src_item + dst_elems * dst_item, src_elems
            self.fallbacks.append({"where": f"step {i + 1}",
                                   "reason": "reduction over a strided view runs in "
                                   "numpy.sum (no native reduction kernel)"})
        else:
            kind = step.kind.value
            perm = [c for c in step.dst_labels if c in step.src_labels]
            permuted = list(step.src_labels) != perm or any(
                src_st.get(c) != sc.get(c) for c in step.src_labels)
            if step.cast_to:
                what = (f"cast copy of {self.slot_source.get(step.src)} to {step.cast_to} "
                        "(numpy.copyto from its strided view): the kernels take one dtype")
            else:
                copy_sched = self.copy_schedule(step, src_st, sc, src_item)
                what = (("permutation copy" if permuted else "copy")
                        + f" of {self.slot_source.get(step.src)} straight from its strided "
                        f"view into {self.slot_source.get(step.dst, 'a new slot')} "
                        f"({_copy_text(copy_sched)}): no intermediate transpose")
                # ep_copy reads and writes whole lines on both sides: the
                # strided penalty (numpy.copyto's element walk) does not apply
                strided = strided and copy_sched is None
            bytes_moved, flops = src_elems * src_item + dst_elems * dst_item, 0
        pred = model.predict_stream(self.mach, bytes_moved, flops,
                                    overhead_call=self.price_flag(), strided=strided)
        threads = copy_sched["threads"] if copy_sched else 1
        kernel = {"kind": kind, "isa": copy_sched["isa"] if copy_sched else None,
                  "mr": None, "nr": None, "mc": None, "kc": None,
                  "nc": None, "threads": threads,
                  "parallel_loop": "outer loops" if threads > 1 else "none", "gemms": 0,
                  "real_gemms_per_gemm": 0, "tiles": 0, "fringe_tiles": 0, "bytes_packed": 0,
                  "pack_a": None, "pack_b": None}
        return {"index": i, "kind": kind, "what": what,
                "a": self.slot_desc(step.src), "b": None, "c": self.slot_desc(step.dst),
                "roles": rows, "groups": {}, "merges": [], "not_merged": [], "panel_loops": [],
                "loop_alternative": None, "orientation": None, "kernel": kernel,
                "cost": self.cost_dict(pred, 1), "text": []}

    def nest_step(self, i, step: NestStep) -> dict:
        """A loop-nest step: its loops (outer to inner), the row kernel, tiles,
        threads, and its cost as a stream over every operand once."""
        sizes = self.sizes
        if step.dst != OUT:
            self.slot_strides[step.dst] = dict(zip(step.out_labels, step.buffer.strides))
            self.slot_labels[step.dst] = step.out_labels
            srcs = " x ".join(self.slot_source.get(s, f"slot {s}") for s in step.inputs)
            self.slot_source[step.dst] = f"nest of {srcs}"
            self.copies.append({"what": f"step {i + 1}: intermediate '{self.d(step.out_labels)}'",
                                "bytes": _prod(step.buffer.shape) * self.dtype.itemsize,
                                "why": "result of a pairwise step, read by a later one"})
        ins = [self.slot_desc(s) for s in step.inputs]
        names = [f"in{j}" for j in range(len(step.inputs))] + ["out"]
        loops = [{"labels": self.d(lp.labels), "extent": int(lp.extent),
                  "strides": dict(zip(names, (int(v) for v in lp.strides))),
                  "reduces": lp.reduces} for lp in step.loops]
        threads = step.native.threads() if step.native is not None else 1
        split = self.d(step.loops[step.split].labels) if step.split >= 0 else None
        row = step.loops[-1] if step.loops else None
        rows = []
        for lp in step.loops:   # one row per (merged) loop, outer to inner
            notes = [f"diagonal of slot {s}: the repeated strides summed (a view)"
                     for s, lab in zip(step.inputs, step.in_labels)
                     if set(lp.labels) & set(self.diag.get(s, "")) and set(lp.labels) & set(lab)]
            rows.append({"index": self.d(lp.labels), "extent": int(lp.extent),
                         "role": "summed" if lp.reduces else "kept",
                         "stride_a": int(lp.strides[0]),
                         "stride_b": int(lp.strides[1]) if len(step.inputs) > 1 else None,
                         "stride_c": int(lp.strides[-1]), "group": None,
                         "merged": len(lp.labels) > 1, "notes": notes})
        item = self.dtype.itemsize
        strided = step.row.endswith("strided")
        pred = model.predict_stream(self.mach, step.bytes_moved, step.flops,
                                    overhead_call=self.price_flag(), strided=strided)
        if threads > 1:
            pred = model.Prediction(pred.flops, pred.bytes_moved, 0.0, 0.0, 0.0,
                                    pred.t_memory / threads, pred.t_overhead,
                                    pred.t_memory / threads + pred.t_overhead, pred.bound,
                                    1.0, threads)
        order = " > ".join(f"{lp['labels']}:{lp['extent']}" for lp in loops) or "(none)"
        what = (f"loop nest over {' x '.join(x['source'] for x in ins)}: loops {order} "
                f"(outer to inner), row kernel {step.row}"
                + (f" vectorised along '{self.d(row.labels)}'" if row is not None
                   and step.row.endswith("contig") else "")
                + (f", {step.tile}x{step.tile} tiles over the two innermost loops"
                   if step.tile else "")
                + (f", the row in blocks of {step.block} (block loop outermost)"
                   if step.block else "")
                + (f", {threads} threads over '{split}'" if threads > 1 else ", 1 thread"))
        kernel = {"kind": "nest", "isa": _native.isa() if _native.available() else None,
                  "mr": None, "nr": None, "mc": None, "kc": None, "nc": None,
                  "threads": threads, "parallel_loop": split if threads > 1 else "none",
                  "gemms": 0, "real_gemms_per_gemm": 0, "tiles": 0, "fringe_tiles": 0,
                  "bytes_packed": 0, "pack_a": None, "pack_b": None}
        nest = {"engine": step.engine, "loops": loops, "row": step.row,
                "vectorised": self.d(row.labels) if row is not None else None,
                "tile": step.tile, "block": step.block, "split": split, "threads": threads,
                "max_threads": step.threads, "bytes_moved": step.bytes_moved,
                "itemsize": item}
        return {"index": i, "kind": step.kind.value, "what": what, "engine": "nest",
                "a": ins[0], "b": ins[1] if len(ins) > 1 else None, "inputs": ins,
                "c": self.slot_desc(step.dst), "roles": rows, "groups": {}, "merges": [],
                "not_merged": [], "panel_loops": [], "loop_alternative": None,
                "orientation": None, "kernel": kernel, "nest": nest,
                "cost": self.cost_dict(pred, threads), "text": []}

    def cast_step(self, i, step: CastStep) -> dict:
        info = self.infos[step.slot] if step.slot < self.n_inputs else None
        n = _prod(info.shape) if info is not None else 0
        nbytes = n * np.dtype(step.dtype).itemsize
        self.copies.append({"what": f"{self.slot_source.get(step.slot)} cast to {step.dtype}",
                            "bytes": nbytes, "why": "dtype differs from the computation dtype"})
        self.fallbacks.append({"where": f"step {i + 1}",
                               "reason": f"cast copy of {self.slot_source.get(step.slot)} "
                               f"to {step.dtype}"})
        pred = model.predict_stream(self.mach, 2 * nbytes, 0, overhead_call=self.price_flag())
        kernel = {"kind": "copy", "isa": None, "mr": None, "nr": None, "mc": None, "kc": None,
                  "nc": None, "threads": 1, "parallel_loop": "none", "gemms": 0,
                  "real_gemms_per_gemm": 0, "tiles": 0, "fringe_tiles": 0, "bytes_packed": 0,
                  "pack_a": None, "pack_b": None}
        return {"index": i, "kind": "copy", "what": f"cast {self.slot_source.get(step.slot)}",
                "a": self.slot_desc(step.slot), "b": None, "c": self.slot_desc(step.slot),
                "roles": [], "groups": {}, "merges": [], "not_merged": [], "panel_loops": [],
                "loop_alternative": None, "orientation": None, "kernel": kernel,
                "cost": self.cost_dict(pred, 1), "text": []}

    def totals(self, steps, plan):
        if plan.fallback is not None:
            return {"flops": 0.0, "bytes_moved": 0.0, "bytes_packed": 0.0, "intensity": 0.0,
                    "predicted_s": None, "predicted_gflops": None, "predicted_pct_peak": None,
                    "bound": None, "threads": 1, "peak_gflops": None,
                    "note": "numpy.einsum fallback: not modelled"}
        flops = sum(s["cost"]["flops"] for s in steps)
        moved = sum(s["cost"]["bytes_moved"] for s in steps)
        packed = sum(s["cost"]["bytes_packed"] for s in steps)
        pred = sum(s["cost"]["predicted_s"] for s in steps)
        pred += sum(c["bytes"] for c in self.copies if "into out=" in c["what"]) * 2 / (
            self.mach.bandwidth_gbs * 1e9)
        threads = max([s["kernel"]["threads"] for s in steps if s["cost"]["flops"]] or [1])
        peak = self.mach.peak_gflops(self.real, threads) if self.real.kind == "f" else None
        gf = flops / pred / 1e9 if pred else None
        big = max(steps, key=lambda s: s["cost"]["predicted_s"] or 0, default=None)
        return {"flops": float(flops), "bytes_moved": float(moved), "bytes_packed": float(packed),
                "intensity": flops / moved if moved else 0.0, "predicted_s": pred,
                "predicted_gflops": gf,
                "predicted_pct_peak": 100.0 * gf / peak if gf is not None and peak else None,
                "bound": None if big is None else big["cost"]["bound"],
                "threads": threads, "peak_gflops": peak}


def NB_if(batch, holder):
    """Batch extent over the axes where ``holder`` has a nonzero stride."""
    idx = HOLDERS[Role.BATCH].index(holder)
    return _prod(ax.extent for ax in batch.axes if ax.strides[idx] != 0)


def _direct_b(sched, step):
    """ep_gemm reads full NR-wide B panels in place (no packing) when its
    schedule allows it (m small) and B's n stride is 1 with a regular k."""
    if not sched.direct_b or len(step.n.axes) != 1 or len(step.k.axes) > 1:
        return False
    return step.n.axes[0].strides[0] == 1 and sched.N >= sched.nr


def _get(d, lab):
    v = d.get(lab)
    return None if v is None else int(v)


def _jsonable(x):
    if isinstance(x, (str, int, float, bool)) or x is None:
        return x
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    return str(x)


def _version():
    from . import __version__
    return __version__


def _is_view_plan(plan):
    return (len(plan.steps) == 1 and isinstance(plan.steps[0], ReduceStep)
            and plan.steps[0].as_view)


# -- measuring -------------------------------------------------------------------

def _measure(spec, ops, out_op, options, data, min_runs=5, max_runs=25, budget_s=0.5):
    """Median time of ``einsum`` on these operands (random data for shapes)."""
    from .api import einsum
    from .execute import _strided_like

    rng = np.random.default_rng(0)
    arrays = [o.materialize(rng) if isinstance(o, _Virtual) else o for o in ops]
    out = None
    if out_op is not None:
        if isinstance(out_op, _Virtual):
            out = out_op.materialize(rng)
        else:
            out = _strided_like(out_op)   # same strides, never the caller's buffer
    subs = ",".join(spec.inputs) + "->" + spec.output
    kw = dict(dtype=options.dtype, order=options.order, casting=options.casting,
              optimize=list(options.optimize) if isinstance(options.optimize, tuple)
              else options.optimize)
    # private '...' labels are not valid subscripts: use numpy-style letters
    subs = _plain_subscripts(spec)

    def run():
        return einsum(subs, *arrays, out=out, **kw)

    times = time_calls(run, max_runs, min_runs, budget_s, long_call_s=1.0)
    med = float(np.median(times))
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):
        load = None
    ncpu = os.cpu_count() or 1
    flops = data["totals"]["flops"]
    gf = flops / med / 1e9 if med > 0 else 0.0
    peak = data["totals"]["peak_gflops"]
    pred = data["totals"]["predicted_s"]
    moved = data["totals"]["bytes_moved"]
    return {"median_s": med, "min_s": float(min(times)), "runs": len(times), "gflops": gf,
            "gbytes_per_s": moved / med / 1e9 if med > 0 else 0.0,
            "pct_peak": 100.0 * gf / peak if peak else None, "predicted_s": pred,
            "measured_over_predicted": med / pred if pred else None,
            "load_average": load,
            "pct_bandwidth": (100.0 * moved / med / 1e9 / data["machine"]["bandwidth_gbs"]
                              if med > 0 and data["machine"].get("bandwidth_gbs") else None),
            "busy": bool(load is not None and load > 0.75 * ncpu)}


def _plain_subscripts(spec):
    mapping = {}
    used = {c for c in "".join(spec.inputs) + spec.output if not is_ellipsis_label(c)}
    free = iter(c for c in _LETTERS if c not in used)
    for c in "".join(spec.inputs) + spec.output:
        if is_ellipsis_label(c) and c not in mapping:
            mapping[c] = next(free)
    tr = lambda t: "".join(mapping.get(c, c) for c in t)  # noqa: E731
    return ",".join(tr(t) for t in spec.inputs) + "->" + tr(spec.output)


# -- rendering ---------------------------------------------------------------------

def _fmt_desc(desc, name):
    st = "?" if desc["strides"] is None else tuple(desc["strides"])
    return (f"{name:<10} '{desc['term']}' {desc['dtype']} {tuple(desc['shape'])} "
            f"strides {st} [{desc['layout']}, {desc['given_as']}]")


def render_text(d: dict) -> str:
    """The report for people (every line is derived from the dict)."""
    call, mach, tot = d["call"], d["machine"], d["totals"]
    L = [f"einplan explain: {call['subscripts']}"
         + (f"   [{call['function']}]" if call["function"] != "einsum" else "")]
    if call.get("frontend_spec"):
        L.append(f"  {call['function']} normalized to einsum '{call['frontend_spec']}'")
    L.append(f"  spec       {call['spec']}"
             + (f"   ('...' = {''.join(call['ellipsis'])})" if call["ellipsis"] else ""))
    for op in call["operands"]:
        L.append("  " + _fmt_desc(op, f"operand {op['index']}"))
    L.append("  " + _fmt_desc(call["output"], "output"))
    L.append(f"  machine    {mach['isa']} on {mach['cpu']}, {mach['threads']} thread(s); "
             f"clock {mach['clock_ghz']:.2f} GHz ({mach['clock_source']}); "
             f"{mach['fma_units']} FMA unit(s) ({mach['fma_units_source']})")
    pk = mach["peak_gflops_per_core"]
    L.append(f"             peak/core float32 {pk['float32']:.1f}, float64 {pk['float64']:.1f} "
             f"GFLOP/s; bandwidth {mach['bandwidth_gbs']:.1f} GB/s "
             f"({mach['bandwidth_source']})")
    if d["plan"]["fallback"]:
        L.append(f"  FALLBACK   numpy.einsum: {d['plan']['fallback']}")
    if len(d["plan"]["path"]) > 1:
        L.append("  path")
        L.append(f"    {'step':<5} {'contracts':<58} {'result':<10} {'shape':<18} "
                 f"{'bytes':>9} {'FLOPs':>12}")
        for p in d["plan"]["path"]:
            L.append(f"    {p['step'] + 1:<5} {' x '.join(p['operands'])[:58]:<58} "
                     f"{p['result']:<10} {str(tuple(p['result_shape'])):<18} "
                     f"{_fmt_bytes(p['result_bytes']):>9} {_fmt_flops(p['flops']):>12}")
    n = len(d["steps"])
    for s in d["steps"]:
        L.append("")
        L.append(f"step {s['index'] + 1}/{n}: {s['kind']} -- {s['what']}")
        if s["roles"]:
            L.append("  roles")
            L.append(f"    {'index':<6}{'extent':>8}  {'role':<13}{'stride A':>10}{'stride B':>10}"
                     f"{'stride C':>10}  group")
            for r in s["roles"]:
                f = lambda v: "-" if v is None else str(v)  # noqa: E731
                L.append(f"    {r['index']:<6}{r['extent']:>8}  {r['role']:<13}"
                         f"{f(r['stride_a']):>10}{f(r['stride_b']):>10}{f(r['stride_c']):>10}"
                         f"  {r['group'] or ''}" + (f"  ({'; '.join(r['notes'])})"
                                                     if r["notes"] else ""))
        if s.get("nest") is not None:
            nst = s["nest"]
            L.append("  nest       loops, outer to inner (element strides per operand):")
            for lp in nst["loops"]:
                st = " ".join(f"{k}={v}" for k, v in lp["strides"].items())
                L.append(f"    {lp['labels']:<8}{lp['extent']:>10}  {st}"
                         + ("  (summed)" if lp["reduces"] else ""))
            L.append(f"  kernel     nest, {s['kernel']['isa']}, row {nst['row']}"
                     + (f", vectorised along '{nst['vectorised']}'"
                        if nst["row"].endswith("contig") else "")
                     + (f", tiles {nst['tile']}x{nst['tile']}" if nst["tile"] else ", no tiles")
                     + (f", row blocks of {nst['block']}" if nst["block"] else "")
                     + f"; {nst['threads']} thread(s)"
                     + (f" over '{nst['split']}'" if nst["threads"] > 1 else "")
                     + f" (at most {nst['max_threads']} worth it)")
        elif s["kind"] in ("gemm", "gemv", "dot", "outer", "batch_only"):
            mnk = s["shape_mnk"]
            L.append(f"  shape      batch {mnk['batch']}, m {mnk['m']}, n {mnk['n']}, "
                     f"k {mnk['k']}")
            for mg in s["merges"]:
                L.append(f"  merged     {mg['text']}")
            if not s["merges"]:
                L.append("  merged     (nothing to merge)" if not s["not_merged"]
                         else "  merged     none")
            for br in s["not_merged"]:
                L.append(f"  not merged {br['text']}")
            for pl in s["panel_loops"]:
                L.append(f"  loop       {pl['text']}")
            if s["loop_alternative"]:
                L.append(f"  vs loop    {s['loop_alternative']['text']}")
            o = s["orientation"]
            L.append(f"  orient     A (rows, m) = {o['a_operand']}; B (columns, n) = "
                     f"{o['b_operand']}")
            L.append(f"             why: {o['why']}")
            if o["output_layout"]:
                L.append(f"             output: {o['output_layout']}; {o['result']}")
            else:
                L.append(f"             {o['result']}")
            k = s["kernel"]
            if k["mr"] is None:
                L.append(f"  kernel     {k['kind']}, {k['isa']}, {k['path']}; "
                         f"{k['threads']} thread(s)"
                         + (f" parallel over {k['parallel_loop']}" if k["threads"] > 1 else "")
                         + f"; {k['gemms']} "
                         + ("small GEMM(s)" if k["path"].startswith("smm") else "GEMV(s)")
                         + ", packed 0 B")
                if k.get("complex"):
                    L.append(f"             {k['complex']}")
            else:
                L.append(f"  kernel     {k['kind']} "
                         f"({_KIND_TEXT.get(KernelKind(k['kind']), '')}), "
                         f"{k['isa']}, MR x NR = {k['mr']} x {k['nr']}, MC/KC/NC = "
                         f"{k['mc']}/{k['kc']}/{k['nc']}, {k['threads']} thread(s)"
                         + (f" parallel over {k['parallel_loop']}" if k["threads"] > 1 else ""))
                L.append(f"             {k['gemms']} GEMM(s), {k['tiles']} C tiles of which "
                         f"{k['fringe_tiles']} fringe (zero-padded inside the packed buffer "
                         f"only; no padded copy, no memset of C)")
                L.append(f"             packed {_fmt_bytes(k['bytes_packed'])}: "
                         f"A {k['pack_a']}; B {k['pack_b']}")
                if k.get("complex"):
                    L.append(f"             {k['complex']}")
        c = s["cost"]
        L.append(f"  cost       {_fmt_flops(c['flops'])}, {_fmt_bytes(c['bytes_moved'])} moved, "
                 f"intensity {c['intensity']:.1f} flop/B; predicted "
                 f"{_fmt_time(c['predicted_s'])}"
                 + (f" ({c['predicted_gflops']:.1f} GFLOP/s, {c['predicted_pct_peak']:.0f}% "
                    f"of {c['threads']}-thread peak, {c['bound']}-bound)"
                    if c["predicted_pct_peak"] is not None and c["flops"] else
                    f" ({c['bound']}-bound)"))
    L.append("")
    cp = d["copies"]
    if cp["bytes"] == 0:
        L.append("temporaries and copies: 0 bytes (operands read in place through their "
                 "strides, output written in place)")
    else:
        L.append(f"temporaries and copies: {_fmt_bytes(cp['bytes'])}")
        for it in cp["items"]:
            L.append(f"  {_fmt_bytes(it['bytes']):>9}  {it['what']}: {it['why']}")
    if d["fallbacks"]:
        L.append("fallbacks:")
        for fb in d["fallbacks"]:
            L.append(f"  {fb['where']}: {fb['reason']}")
    else:
        L.append("fallbacks: none")
    if tot["predicted_s"] is not None:
        L.append(f"total      {_fmt_flops(tot['flops'])}, {_fmt_bytes(tot['bytes_moved'])} moved, "
                 f"intensity {tot['intensity']:.1f} flop/B, predicted "
                 f"{_fmt_time(tot['predicted_s'])}"
                 + (f" = {tot['predicted_gflops']:.1f} GFLOP/s, "
                    f"{tot['predicted_pct_peak']:.0f}% of peak ({tot['peak_gflops']:.0f} GFLOP/s "
                    f"on {tot['threads']} thread(s))" if tot["predicted_pct_peak"] is not None
                    and tot["flops"] else ""))
    else:
        L.append(f"total      {tot.get('note', 'not modelled')}")
    m = d["measured"]
    if m:
        rate = (f"{m['gflops']:.1f} GFLOP/s" + (f", {m['pct_peak']:.0f}% of peak"
                                                 if m["pct_peak"] is not None else "")
                if tot["flops"] else f"{m['gbytes_per_s']:.1f} GB/s moved")
        if m.get("pct_bandwidth") is not None:
            rate += f" ({m['gbytes_per_s']:.1f} GB/s, {m['pct_bandwidth']:.0f}% of bandwidth)"
        L.append(f"measured   median {_fmt_time(m['median_s'])} of {m['runs']} runs "
                 f"(min {_fmt_time(m['min_s'])}) = {rate}"
                 + (f"; predicted {_fmt_time(m['predicted_s'])} "
                    f"(measured/predicted = {m['measured_over_predicted']:.2f})"
                    if m["predicted_s"] else ""))
        if m.get("busy"):
            L.append(f"           (load average {m['load_average']:.1f}: other processes share "
                     "the cores, the timing is pessimistic)")
    return "\n".join(L)


def render_summary(d: dict) -> str:
    """Three to six lines for the demo: decisions and cost."""
    L = [f"{d['call']['spec']}: " + " + ".join(d["plan"]["kinds"])]
    if d["plan"]["fallback"]:
        L.append(f"  numpy.einsum fallback: {d['plan']['fallback']}")
    for s in d["steps"]:
        for mg in s["merges"]:
            L.append(f"  {mg['text']}")
        if s["loop_alternative"]:
            L.append(f"  {s['loop_alternative']['text']}")
        if s["orientation"]:
            o = s["orientation"]
            L.append(f"  A (rows) = {o['a_operand']}, B (cols) = {o['b_operand']}: {o['result']}")
        if s["kind"] in ("copy", "view", "reduce"):
            L.append(f"  {s['what']}")
        k = s["kernel"]
        if k.get("path", "").startswith("gemv"):
            L.append(f"  {k['isa']} no-pack GEMV path: nothing packed")
        if k.get("path", "").startswith("smm"):
            L.append(f"  {k['isa']} small in-place GEMM path (smm): nothing packed")
        if k["mr"]:
            L.append(f"  {k['isa']} {k['mr']}x{k['nr']}, {k['fringe_tiles']} of {k['tiles']} "
                     f"tiles are fringe tiles: handled in the kernel, nothing padded or "
                     f"zero-filled outside the packed buffers")
    cp = d["copies"]
    L.append(f"  temporaries and copies: {_fmt_bytes(cp['bytes'])}"
             + ("" if cp["bytes"] else " (operands read in place, output written in place)"))
    t = d["totals"]
    if t["predicted_s"] is not None:
        L.append(f"  predicted {_fmt_time(t['predicted_s'])}"
                 + (f", {t['predicted_pct_peak']:.0f}% of peak"
                    if t["predicted_pct_peak"] is not None and t["flops"] else ""))
    return "\n".join(L)
