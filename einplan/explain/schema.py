"""The report's records: each key is a field here, written once.

Every part of a report is a frozen dataclass; ``to_dict()`` turns the tree
into plain JSON data (tuples become lists, fields declared ``optional`` are
left out while None) and ``SCHEMA`` is derived from the same fields and
their annotations, so the builder, the JSON schema and the renderers cannot
disagree on a key.  ``schema_version`` changes only when a field is removed
or changes meaning; new fields may appear.

    schema_version   int (1)
    call             function, subscripts (as given), spec (normalized, one
                     letter per label; '...' dims get unused letters listed in
                     ``ellipsis``), operands[] / output (ArrayDesc), options
    machine          model.Machine: isa, clock, FMA units, bandwidth, threads
                     and where each number came from
    plan             summary (str(Plan)), kinds[], path[], fallback
    steps[]          Step: roles, merges, orientation, kernel, cost per step
    copies           bytes, items[] {what, bytes, why}
    fallbacks[]      {where, reason}
    totals           Cost of the whole call
    measured         null, or the Measured run
"""
from __future__ import annotations

import typing
from dataclasses import dataclass, field, fields

from ..plan import KernelKind

SCHEMA_VERSION = 1

ROLES = ("batch", "m", "n", "k", "diagonal", "summed-first", "size-1", "kept", "summed")


def optional(**kw):
    """A field that ``to_dict`` leaves out while it is None (it belongs to
    some kinds of step or call only)."""
    return field(default=None, metadata={"optional": True, **kw})


def one_of(values):
    return field(metadata={"enum": list(values)})


class Record:
    """Base of the report's records: ``to_dict`` in field order."""

    closed = False   # True: the schema allows no keys beyond the fields

    def to_dict(self) -> dict:
        out = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if value is None and f.metadata.get("optional"):
                continue
            out[f.name] = _plain(value)
        return out


def _plain(value):
    if isinstance(value, Record):
        return value.to_dict()
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


@dataclass(frozen=True)
class ArrayDesc(Record):
    index: int | None
    term: str
    shape: tuple[int, ...]
    dtype: str
    strides: tuple[int, ...] | None
    layout: str
    bytes: int
    given_as: str


@dataclass(frozen=True)
class Call(Record):
    function: str
    subscripts: str
    spec: str
    ellipsis: dict
    operands: tuple[ArrayDesc, ...]
    output: ArrayDesc
    out_given: bool
    options: dict
    frontend_spec: str | None = optional()


@dataclass(frozen=True)
class PathStep(Record):
    step: int
    operands: tuple[str, ...]
    result: str
    result_shape: tuple[int, ...]
    result_bytes: int
    flops: float


@dataclass(frozen=True)
class PlanDesc(Record):
    summary: str
    kinds: tuple[str, ...]
    path: tuple[PathStep, ...]
    fallback: str | None


@dataclass(frozen=True)
class Slot(Record):
    slot: int
    source: str
    term: str


@dataclass(frozen=True)
class RoleRow(Record):
    index: str
    extent: int
    role: str = one_of(ROLES)
    stride_a: int | None = None
    stride_b: int | None = None
    stride_c: int | None = None
    group: str | None = None
    merged: bool = False
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Merge(Record):
    role: str
    labels: str
    extents: tuple[int, ...]
    extent: int
    text: str


@dataclass(frozen=True)
class NotMerged(Record):
    role: str
    outer: str
    inner: str
    operands: tuple[str, ...]
    text: str


@dataclass(frozen=True)
class PanelLoop(Record):
    role: str
    labels: str
    text: str


@dataclass(frozen=True)
class LoopAlternative(Record):
    loop_over: str
    gemms: int
    m: int
    k: int
    n: int
    predicted_s: float
    bytes_packed: int
    slowdown: float | None
    text: str


@dataclass(frozen=True)
class Orientation(Record):
    a_operand: str | None
    b_operand: str | None
    swapped: bool
    a_is_einsum_operand: str
    b_is_einsum_operand: str
    c_unit_index: str | None
    c_unit_role: str | None
    output_layout: str | None
    output_transpose: bool
    output_copy: bool
    why: str
    result: str


@dataclass(frozen=True)
class ComplexMethod(Record):
    method: str = one_of(("1m", "4m"))
    real_gemms: int = 1
    real_shape: tuple[int, ...] = ()
    flops: float = 0.0
    text: str = ""


@dataclass(frozen=True)
class Kernel(Record):
    kind: str
    isa: str | None
    mr: int | None = None
    nr: int | None = None
    mc: int | None = None
    kc: int | None = None
    nc: int | None = None
    blocking_default: dict | None = optional()
    threads: int = 1
    parallel_loop: str = "none"
    gemms: int = 0
    real_gemms_per_gemm: int = 0
    tiles: int = 0
    fringe_tiles: int = 0
    bytes_packed: int = 0
    pack_a: str | None = None
    pack_b: str | None = None
    path: str | None = optional()
    complex_method: ComplexMethod | None = optional()
    complex: str | None = optional()


@dataclass(frozen=True)
class ModelTerms(Record):
    t_compute: float
    t_pack: float
    t_memory: float
    t_overhead: float
    efficiency: float


@dataclass(frozen=True)
class Cost(Record):
    """The model's price of a step, or (as ``totals``) of the whole call."""
    flops: float
    bytes_moved: float
    bytes_packed: float
    intensity: float
    predicted_s: float | None
    predicted_gflops: float | None
    predicted_pct_peak: float | None
    bound: str | None
    threads: int
    peak_gflops: float | None
    model: ModelTerms | None = optional()
    note: str | None = optional()


@dataclass(frozen=True)
class NestLoopDesc(Record):
    labels: str
    extent: int
    strides: dict
    reduces: bool


@dataclass(frozen=True)
class NestDesc(Record):
    engine: str
    loops: tuple[NestLoopDesc, ...]
    row: str
    vectorised: str | None
    tile: int
    block: int
    split: str | None
    threads: int
    max_threads: int
    bytes_moved: int
    itemsize: int
    short: str | None = None     # the small-edge kernel's short loop held in registers
    tile_row: int = 0            # the tiles' edge along the row (tile: along the loop around it)
    reversed: str | None = None  # labels walked from their last element


@dataclass(frozen=True)
class Step(Record):
    index: int
    kind: str = one_of([k.value for k in KernelKind] + ["view"])
    what: str = ""
    engine: str | None = optional()
    a: Slot | None = None
    b: Slot | None = None
    inputs: tuple[Slot, ...] | None = optional()
    c: Slot | None = None
    roles: tuple[RoleRow, ...] = ()
    groups: dict = field(default_factory=dict)
    shape_mnk: dict | None = optional()
    merges: tuple[Merge, ...] = ()
    not_merged: tuple[NotMerged, ...] = ()
    panel_loops: tuple[PanelLoop, ...] = ()
    loop_alternative: LoopAlternative | None = None
    orientation: Orientation | None = None
    kernel: Kernel | None = None
    nest: NestDesc | None = optional()
    cost: Cost | None = None
    text: tuple[str, ...] = ()


@dataclass(frozen=True)
class CopyItem(Record):
    what: str
    bytes: int
    why: str


@dataclass(frozen=True)
class Copies(Record):
    bytes: int
    items: tuple[CopyItem, ...]


@dataclass(frozen=True)
class FallbackNote(Record):
    where: str
    reason: str


@dataclass(frozen=True)
class Measured(Record):
    median_s: float
    min_s: float
    runs: int
    gflops: float
    gbytes_per_s: float
    pct_peak: float | None
    predicted_s: float | None
    measured_over_predicted: float | None
    load_average: float | None
    pct_bandwidth: float | None
    busy: bool


@dataclass(frozen=True)
class ReportData(Record):
    closed = True
    schema_version: int = one_of([SCHEMA_VERSION])
    einplan_version: str = ""
    call: Call | None = None
    machine: dict = field(default_factory=dict)
    plan: PlanDesc | None = None
    steps: tuple[Step, ...] = ()
    copies: Copies | None = None
    fallbacks: tuple[FallbackNote, ...] = ()
    totals: Cost | None = None
    measured: Measured | None = None


# -- the JSON schema, derived from the records ------------------------------------

_TYPES = {int: "integer", float: "number", str: "string", bool: "boolean", dict: "object"}

# model.Machine.to_dict(): the machine block is the model's own record
_MACHINE = {"type": "object",
            "properties": {"cpu": {"type": "string"}, "isa": {"type": "string"},
                           "clock_ghz": {"type": "number"}, "clock_source": {"type": "string"},
                           "fma_units": {"type": "integer"},
                           "bandwidth_gbs": {"type": "number"},
                           "bandwidth_source": {"type": "string"},
                           "threads": {"type": "integer"},
                           "peak_gflops_per_core": {"type": "object"}},
            "required": ["isa", "clock_ghz", "fma_units", "bandwidth_gbs", "threads"],
            "additionalProperties": True}


def _schema_of(tp, nullable=False) -> dict:
    args = typing.get_args(tp)
    if type(None) in args:                       # X | None
        (inner,) = [a for a in args if a is not type(None)]
        return _schema_of(inner, nullable=True)
    if typing.get_origin(tp) is tuple:           # tuple[X, ...]
        out = {"type": "array", "items": _schema_of(args[0])}
    elif isinstance(tp, type) and issubclass(tp, Record):
        out = record_schema(tp)
    else:
        out = {"type": _TYPES[tp]}
    if nullable:
        out["type"] = [out["type"], "null"]
    return out


def record_schema(cls) -> dict:
    """The JSON schema of one record class: its fields, their types, enums."""
    hints = typing.get_type_hints(cls)
    props, required = {}, []
    for f in fields(cls):
        prop = _MACHINE if f.name == "machine" and cls is ReportData else _schema_of(
            hints[f.name])
        if "enum" in f.metadata:
            prop = {**prop, "enum": f.metadata["enum"]}
        props[f.name] = prop
        if not f.metadata.get("optional"):
            required.append(f.name)
    return {"type": "object", "properties": props, "required": required,
            "additionalProperties": not cls.closed}


SCHEMA = {"$schema": "https://json-schema.org/draft/2020-12/schema",
          "title": "einplan explain report", **record_schema(ReportData)}


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


_CHECKS = {"null": lambda x: x is None,
           "boolean": lambda x: isinstance(x, bool),
           "integer": lambda x: isinstance(x, int) and not isinstance(x, bool),
           "number": lambda x: isinstance(x, (int, float)) and not isinstance(x, bool),
           "string": lambda x: isinstance(x, str),
           "array": lambda x: isinstance(x, list),
           "object": lambda x: isinstance(x, dict)}


def _is_type(x, t):
    return _CHECKS.get(t, lambda _: False)(x)
