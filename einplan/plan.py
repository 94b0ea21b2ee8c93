"""The Plan: the data between planning (step 2) and execution (step 3) of the data flow.

Everything here is a frozen dataclass or an Enum, so a Plan is immutable,
hashable where it matters, printable, and is the very object that
``execute.run_plan`` runs and ``explain`` renders.  Strides are in ELEMENTS.

Execution model: a list of *slots* holds arrays.  Slots ``0 .. n_inputs-1``
are the operands; every step reads slots and writes one new slot (an
intermediate) or the output (``OUT``).  This is opt_einsum's contraction list
with named fields instead of positional tuples.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from functools import cached_property

from .operands import dense_strides

OUT = -1  # slot id of the einsum's output array


class Role(enum.Enum):
    """The four index roles of one pairwise step (see roles.py for the mapping)."""
    BATCH = "batch"  # in A, B and C
    M = "m"          # in A and C (rows)
    N = "n"          # in B and C (columns; the kernel's vectors run along n)
    K = "k"          # in A and B, summed


class KernelKind(enum.Enum):
    GEMM = "gemm"              # m, n and k all non-empty
    GEMV = "gemv"              # one of m, n empty, k non-empty
    DOT = "dot"                # m and n empty, k non-empty
    OUTER = "outer"            # k empty, m and n non-empty
    BATCH_ONLY = "batch_only"  # elementwise: at most batch plus one of m/n, k empty
    REDUCE = "reduce"          # numpy sum over a (diagonal) view
    COPY = "copy"              # cast copy, or a view copied into out=
    PRODUCT = "product"        # three or more operands in one loop nest
    FALLBACK_NUMPY = "fallback_numpy"


class KernelPath(enum.Enum):
    """The path the C core runs a GemmStep on (ep_path_t, by its C names)."""
    EMPTY = "empty"    # nothing to compute (an empty m, n or batch)
    GEMM = "gemm"      # packed: BLIS's five loops around the micro-kernel
    GEMV = "gemv"      # m or n is 1: each matrix element used once, no packing
    SMM = "smm"        # narrow n: A, B and C read in place, no packing


class ParallelLoop(enum.Enum):
    """The loop a GemmStep's threads share out (ep_loop_t, by its C names)."""
    NONE = "none"      # one thread
    BATCH = "batch"    # whole GEMMs per thread
    M = "m"            # MC blocks of m (the ic loop)
    N = "n"            # NR panels of n (the jr loop)
    K = "k"            # blocks of k, partial sums added in thread order (GEMV path)


@dataclass(frozen=True)
class KernelChoice:
    """How the C core runs one GemmStep: its schedule (``ep_gemm_schedule``,
    made once when the plan is made and kept with the step's compiled
    descriptor, which runs it) and the orientation's reason.

    The schedule holds for ``for_threads`` threads asked for; a call under
    another thread count is scheduled again by the C core.  ``c_unit`` is
    C's unit-stride index (of extent > 1), ``c_unit_role`` its role: 'n'
    when the orientation put it where the micro-kernel's vectors run.
    """
    path: KernelPath
    threads: int
    loop: ParallelLoop
    mr: int
    nr: int
    mc: int
    kc: int
    nc: int
    b_in_place: bool          # full NR panels of B read without packing
    for_threads: int
    c_unit: str | None = None
    c_unit_role: str | None = None
    b_by_panel: bool = False  # few rows (1m, or a real B past L2): NR panels packed just before use
    # None: the schedule fixes how B is taken; else in place or packed is
    # timed on the process's calls of this kind: 'measuring', then the winner
    b_measured: str | None = None

    @classmethod
    def from_schedule(cls, s: dict, b_in_place=False, c_unit=None, c_unit_role=None):
        """The record of a schedule as the compiled module gives it."""
        return cls(KernelPath(s["path"]), s["threads"], ParallelLoop(s["loop"]), s["mr"],
                   s["nr"], s["mc"], s["kc"], s["nc"], b_in_place, s["for_threads"],
                   c_unit, c_unit_role, bool(s.get("b_by_panel", False)),
                   s.get("b_measured"))


@dataclass(frozen=True)
class Fallback:
    """Why the whole einsum is handed to numpy.einsum."""
    reason: str
    # when set, numpy.einsum runs with the caller's optimize= (its pairwise
    # path and dtype semantics) and exactly these keyword options
    numpy_kwargs: tuple | None = None

    def __str__(self):
        return f"fallback to numpy.einsum: {self.reason}"


@dataclass(frozen=True)
class Axis:
    """One (possibly merged) kernel axis: ``labels`` outer to inner.

    ``strides`` follow the kernel contract order of the role:
    batch (a, b, c) · m (a, c) · n (b, c) · k (a, b).
    """
    labels: str
    extent: int
    strides: tuple[int, ...]

    def as_kernel(self):
        return (self.extent,) + self.strides


@dataclass(frozen=True)
class RoleGroup:
    role: Role
    axes: tuple[Axis, ...] = ()

    @property
    def extent(self) -> int:
        e = 1
        for ax in self.axes:
            e *= ax.extent
        return e

    @property
    def labels(self) -> str:
        return "".join(ax.labels for ax in self.axes)

    def as_kernel(self):
        return tuple(ax.as_kernel() for ax in self.axes)

    def __str__(self):
        if not self.axes:
            return f"{self.role.value}=()"
        inner = ",".join(f"{ax.labels}:{ax.extent}" for ax in self.axes)
        return f"{self.role.value}=({inner})"


@dataclass(frozen=True)
class MergeBreak:
    """Adjacent axes of one role that could NOT be merged, and who broke it.

    e.g. ``bij,jk->bik`` with A[b, i] not contiguous: role m, outer 'b',
    inner 'i', operands ('A',).
    """
    role: Role
    outer: str
    inner: str
    operands: tuple[str, ...]


@dataclass(frozen=True)
class Buffer:
    """An array the executor allocates with ``np.empty`` (never zero-filled).

    ``order`` lists the axes outermost-first in memory; the array is created
    C-contiguous in that order and transposed back to ``shape``.  Its
    derived shapes are computed once: the executor asks for them every call.
    """
    shape: tuple[int, ...]
    order: tuple[int, ...]

    @cached_property
    def mem_shape(self) -> tuple[int, ...]:
        """The shape to ``np.empty`` (C order), outermost axis first."""
        return tuple(self.shape[i] for i in self.order)

    @cached_property
    def view_axes(self) -> tuple[int, ...] | None:
        """The transpose that turns the ``mem_shape`` array into ``shape``
        order, or None when memory order is already ``shape`` order."""
        inv = [0] * len(self.order)
        for pos, ax in enumerate(self.order):
            inv[ax] = pos
        return None if inv == sorted(inv) else tuple(inv)

    @cached_property
    def strides(self) -> tuple[int, ...]:
        strides = [0] * len(self.shape)
        for ax, st in zip(self.order, dense_strides(self.mem_shape)):
            strides[ax] = st
        return tuple(strides)


@dataclass(frozen=True)
class ReduceStep:
    """numpy on one strided view: sum over ``sum_axes`` (or plain copy).

    ``src_shape/src_strides`` describe the (diagonal, broadcast-free) view of
    slot ``src`` in elements; the result, with axes ``dst_labels``, goes to
    slot ``dst`` (allocated as ``buffer``) or to the output (``dst == OUT``).
    ``as_view``: no sum, no out= -> return the view itself, as numpy does for
    ``ii->i`` / ``ij->ji``.
    """
    src: int
    dst: int
    src_labels: str
    src_shape: tuple[int, ...]
    src_strides: tuple[int, ...]
    sum_axes: tuple[int, ...]
    dst_labels: str
    buffer: Buffer | None
    kind: KernelKind = KernelKind.REDUCE
    as_view: bool = False
    cast_to: str = ""   # dtype of the result when it differs from the source's
    engine: str = "numpy"

    def __str__(self):
        what = "view" if self.as_view else self.kind.value
        dst = "out" if self.dst == OUT else f"slot {self.dst}"
        return f"{what}: slot {self.src} '{self.src_labels}' -> {dst} '{self.dst_labels}'"


@dataclass(frozen=True)
class GemmStep:
    """One pairwise contraction run by ``_native.gemm``.

    ``a`` / ``b`` are the slots fed to the kernel's rows / columns (after
    orientation: ``swapped`` says the einsum's second operand became A).
    ``c_labels`` are C's axes in ``c_buffer``'s shape order (intermediates)
    or the output term (``c == OUT``).  ``complex_mode``: '' (real), '1m'
    (one real GEMM of doubled n and k on the complex arrays: BLIS's 1m
    method, ep_api.h) or 'cc' (4 real gemms on .real / .imag views: Cr =
    ArBr - AiBi, Ci = ArBi + AiBr, for GEMV / dot / outer shapes, where 1m's
    packing would cost more than it saves).  The role groups' strides are in
    float elements (doubled) for complex steps; ``groups()`` gives what the
    kernel call takes.
    """
    kind: KernelKind
    a: int
    b: int
    c: int
    a_labels: str
    b_labels: str
    c_labels: str
    batch: RoleGroup
    m: RoleGroup
    n: RoleGroup
    k: RoleGroup
    swapped: bool = False
    c_buffer: Buffer | None = None
    complex_mode: str = ""
    breaks: tuple[MergeBreak, ...] = ()
    # (role, labels) of n axes run as batch loops (layout.loop_straddling_axes)
    panel_loops: tuple[tuple[str, str], ...] = ()
    # the compiled descriptor (_native.prepare_gemm), validated once when
    # the plan is made; not part of the plan's identity
    native: object = field(default=None, compare=False, repr=False)
    engine: str = "gemm"
    why: str = ""            # why this engine, when both were priced (a thin GEMM)
    # the C core's schedule and the orientation's reason, filled with
    # ``native`` when the planner has made the descriptor
    kernel: KernelChoice | None = None

    @property
    def one_call(self) -> bool:
        """Writes the output with one call of its compiled descriptor (real,
        or complex by 1m), so a runner can call it directly."""
        return self.c == OUT and self.complex_mode in ("", "1m")

    def groups(self):
        """(m, n, k, batch) as _native.gemm takes them: float-view strides,
        or complex-element strides for a 1m step (run on the complex arrays)."""
        g = self.m.as_kernel(), self.n.as_kernel(), self.k.as_kernel(), self.batch.as_kernel()
        if self.complex_mode == "1m":
            g = tuple(tuple((ax[0],) + tuple(s // 2 for s in ax[1:]) for ax in grp)
                      for grp in g)
        return g

    def __str__(self):
        dst = "out" if self.c == OUT else f"slot {self.c}"
        cx = f" complex:{self.complex_mode}" if self.complex_mode else ""
        sw = " (swapped)" if self.swapped else ""
        return (f"{self.kind.value}: A=slot {self.a} B=slot {self.b}{sw} -> {dst} "
                f"{self.batch} {self.m} {self.n} {self.k}{cx}")


@dataclass(frozen=True)
class NestLoop:
    """One (possibly merged) loop of a NestStep: ``labels`` outer to inner,
    one element stride per input, then the output's (0: the operand does not
    vary along it -- a broadcast input, or a loop the output sums over)."""
    labels: str
    extent: int
    strides: tuple[int, ...]

    @property
    def reduces(self) -> bool:
        return self.strides[-1] == 0


@dataclass(frozen=True)
class NestStep:
    """One sum of products run by the loop-nest engine (``_native.nest``).

    ``loops`` run outer to inner; the innermost is the row its kernel runs
    ('sum': the output's stride is 0 there, a reduction; 'prod': elementwise
    into the output), SIMD when every moving operand has unit stride there
    ('contig') and a gather otherwise ('strided').  ``tile`` > 0: the two
    innermost loops run in tiles of ``tile`` rows of ``tile_row`` elements.  ``short`` > 0: the
    small-edge kernel runs the two innermost loops, the outer of them (this
    short extent) unrolled into registers around the vectorised row ('short-sum':
    the output summed over the short loop, each element written once;
    'short-dots': that many dots along the row at once).  ``split``: the loop
    threads share out (-1: none), ``threads``: the most worth using (the
    library's setting caps it at run time).
    """
    kind: KernelKind
    inputs: tuple[int, ...]
    dst: int
    in_labels: tuple[str, ...]
    out_labels: str
    loops: tuple[NestLoop, ...]
    row: str
    tile: int = 0
    split: int = -1
    threads: int = 1
    buffer: Buffer | None = None
    bytes_moved: int = 0
    flops: int = 0
    engine: str = "nest"
    block: int = 0           # > 0: the row runs in blocks of this many elements
    block_outer: bool = False  # the loop around the row runs in blocks instead
    short: int = 0           # > 0: the small-edge kernel, the loop around the row
                             # (this extent) held in registers with it
    across: int = 0          # > 0: the across kernel: the loop outside this many
                             # innermost loops (the block) runs in chunks across its
                             # elements, each iteration of the block a row over a
                             # chunk (row 'across')
    why: str = ""            # why this engine, when both were priced (a thin GEMM)
    tile_row: int = 0        # the tiles' edge along the row
    ctile: bool = False      # the register-tile kernel over the three innermost
                             # loops (W, K, V): an output tile of W x V in registers
                             # while K streams (row 'ctile')
    reversed: str = ""       # labels walked from their last element (the operands
                             # walking them backwards hold more), so that they merge
                             # and stream forwards
    native: object = field(default=None, compare=False, repr=False)

    @property
    def order(self) -> str:
        return " ".join(lp.labels for lp in self.loops)

    def __str__(self):
        dst = "out" if self.dst == OUT else f"slot {self.dst}"
        src = ",".join(f"slot {s} '{lab}'" for s, lab in zip(self.inputs, self.in_labels))
        loops = " ".join(f"{lp.labels}:{lp.extent}" for lp in self.loops) or "()"
        extra = (f" tile={self.tile}x{self.tile_row}" if self.tile else "") + (
            f" block={self.block}" + (" outer" if self.block_outer else "")
            if self.block else "") + (
            f" short={self.short}" if self.short else "") + (
            " ctile" if self.ctile else "")
        return (f"{self.kind.value} (nest): {src} -> {dst} '{self.out_labels}' "
                f"loops=({loops}) row={self.row}{extra} threads<={self.threads}")


@dataclass(frozen=True)
class Plan:
    """How one einsum call (spec + operand layouts + options) is run."""
    inputs: tuple[str, ...]
    output: str
    shape: tuple[int, ...]             # output shape
    dtype: np.dtype                    # compute / result dtype
    out_buffer: Buffer | None          # how to allocate the output (None when out= given)
    steps: tuple = ()
    path: tuple[tuple[int, ...], ...] = ()
    fallback: Fallback | None = None
    fallback_subscripts: str = ""
    out_cast: bool = False             # compute into a temp, then cast into out=
    scalar_result: bool = False        # 0-d result returned as a numpy scalar
    result_dtype: np.dtype | None = None   # a byte-swapped dtype=: the native result, swapped
    options: tuple = ()
    n_slots: int = 0

    @property
    def only_step(self):
        """The plan's one step when it alone computes the call straight into
        the result (no numpy fallback, no cast into out=, no byte swap of the
        result), else None: the cases with a fast path of their own."""
        if (self.fallback is None and not self.out_cast and self.result_dtype is None
                and len(self.steps) == 1):
            return self.steps[0]
        return None

    @property
    def is_view(self) -> bool:
        """The result is a view of the operand ('ii->i', 'ij->ji'), as numpy returns."""
        step = self.only_step
        return isinstance(step, ReduceStep) and step.as_view

    def __str__(self):
        head = f"Plan {','.join(self.inputs)}->{self.output} dtype={self.dtype}"
        if self.fallback is not None:
            return f"{head}\n  {self.fallback}"
        lines = [head] + [f"  {s}" for s in self.steps]
        if self.out_cast:
            lines.append("  cast result into out= (copy)")
        if self.result_dtype is not None:
            lines.append(f"  byte-swap result into dtype={self.result_dtype.str} (copy)")
        return "\n".join(lines)
