"""Steps 2e-2f of the data flow in DESIGN.md: assemble (and cache) the Plan.

``make_plan(spec, infos, options, out_info)`` runs steps 2a-2f:

  2a  path.pairwise_path          order of pairwise contractions (>2 operands)
  2b  roles.diagonal_view         diagonal views, size-1/broadcast axes dropped,
      roles.presum_labels         labels of one operand only -> numpy sum first
  2c  roles.assign_roles          batch / m / n / k per pairwise step
  2d  layout.merge_axes           contiguous axes merged within each role
  2e  orient.orient_step          which operand is the kernel's A (rows) and which
                                  its B (columns): C's unit stride goes to n, where
                                  the micro-kernel's vectors run; for a free output
                                  (order='K', intermediates) also C's memory order
  2f  nest.choose_engine          the GEMM engine or the loop nest, per step (or
                                  one nest for the whole call); a two-operand
                                  thin or one-tile GEMM is planned on both and
      nest.engine_by_cost         the cheaper by predicted compute runs (a real
                                  GEMM with m or n <= a strip of the register-tile
                                  kernel too, when the nest takes that kernel); a
                                  complex GEMM with an edge <= nest.CTILE_EDGE is
                                  planned on the nest too (its register-tile kernel) and
      nest.ctile_by_cost          priced against the packed engine's 1m GEMM
      cost.steps_seconds          three or more operands: one nest over all of
                                  them and each candidate path (path.candidate_paths)
                                  built and priced, the cheapest kept
      orient.choose_kernel        KernelKind from which groups are empty

One-operand calls are planned by ``single_operand``; the call's options
(and numpy's omitted-keyword defaults) are ``options.Options``.

float32/float64 run on ``_native.gemm``; complex64/complex128 GEMMs on the same
real kernel by the 1m method (one real GEMM of doubled n and k, B packed as
2x2 real blocks), other complex shapes through real/imag float views (4
gemms); a real operand of a complex contraction is cast to complex first
(numpy's promotion: its zero imaginary part meets inf and nan); any other
dtype becomes a named ``Fallback`` to numpy.einsum.  Plans are cached in a
bounded, thread-safe LRU keyed by ``operands.plan_key``.
"""
from __future__ import annotations

import copy
import threading
from collections import OrderedDict
from dataclasses import dataclass, replace

import numpy as np

from . import _native
from .cost import nest_seconds, steps_seconds
from .layout import loop_straddling_axes
from .nest import (CTILE_EDGE, CTILE_EDGE_MN, L3_SHARE, MAXIN, MIN_GEMM_EDGE, choose_engine,
                   ctile_by_cost, ctile_cycles, ctile_nw, engine_by_cost, is_one_tile,
                   is_short_k, is_thin, l2_bytes, narrow_smm, nest_dtype_ok, nest_step, step_kind,
                   vector_lanes)
from .operands import (check_path_name, check_span, numpy_pairwise_dtypes, plan_key,
                       resolve_dtype)
from .options import Options
from .orient import choose_kernel, numpy_k_order, orient_step, out_eff_labels, unit_label
from .path import ITERATION_SLACK, candidate_paths, check_explicit as check_explicit_path
from .path import iterations as path_iterations, pairwise_path
from .plan import (OUT, Buffer, Fallback, GemmStep, KernelChoice, KernelKind, KernelPath,
                   NestStep, Plan, ReduceStep)
from .roles import assign_roles, diagonal_view, presum_labels
from .single_operand import is_pure_view, single_operand_plan

_NATIVE = {np.dtype(np.float32), np.dtype(np.float64)}
_COMPLEX = {np.dtype(np.complex64): np.dtype(np.float32),
            np.dtype(np.complex128): np.dtype(np.float64)}

CACHE_SIZE = 512
_cache: OrderedDict = OrderedDict()
_cache_lock = threading.Lock()


def make_plan(spec, infos, options: Options = Options(), out_info=None,
              gemm_only: bool = False) -> Plan:
    """The Plan for ``spec`` on operands described by ``infos`` (cached).

    ``gemm_only``: every pairwise step on the packed GEMM engine (a plan
    whose constant operand is packed once needs its GEMM).
    """
    key = plan_key(spec.inputs, spec.output, infos, out_info, options)
    if gemm_only:
        key += ("gemm_only",)
    # a plan records the C core's schedule for the thread count and the
    # kernel set (its tiles) in effect
    key += (_native.get_num_threads(), _native.isa())
    with _cache_lock:
        plan = _cache.get(key)
        if plan is not None:
            _cache.move_to_end(key)
            return plan
    plan = _build_plan(spec, infos, options, out_info, gemm_only)
    if (out_info is None and options.dtype is not None and plan.fallback is None
            and plan.shape and not np.dtype(options.dtype).isnative
            and not is_pure_view(spec, infos, None)):
        # the kernels compute in native byte order; the result carries the
        # byte order asked for, as numpy's result dtype does
        plan = replace(plan, result_dtype=np.dtype(options.dtype))
    with _cache_lock:
        _cache[key] = plan
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    return plan


def clear_cache():
    with _cache_lock:
        _cache.clear()


# -- per-slot planning state ------------------------------------------------

@dataclass
class _Slot:
    slot: int
    labels: str
    strides: tuple          # element strides of the slot's array (its own dtype)
    cplx: str = ""          # '' real compute, 'c' complex array

    def kstrides(self) -> dict:
        """Strides as the kernel sees them (complex arrays through float views)."""
        f = 2 if self.cplx else 1
        return {c: f * s for c, s in zip(self.labels, self.strides)}


class _Builder:
    def __init__(self, spec, infos, options, out_info):
        self.spec, self.infos, self.options, self.out_info = spec, infos, options, out_info
        self.sizes = spec.sizes
        self.steps = []
        self.n_slots = len(infos)
        self.k_order = None   # output labels in numpy's order='K' memory order (outer first)
        # nest intermediates laid out in the order the operands still to
        # come walk their labels, not the order their own step walks them
        self.consumer_order = False

    def new_slot(self):
        self.n_slots += 1
        return self.n_slots - 1


def _fallback(spec, shape, dtype, options, reason, keep_optimize=False):
    kw = options.numpy_kwargs() if keep_optimize else None
    return Plan(spec.inputs, spec.output, shape, dtype, None,
                fallback=Fallback(reason, kw), fallback_subscripts=spec.plain_subscripts(),
                options=options.key())


def _build_plan(spec, infos, options, out_info, gemm_only=False) -> Plan:
    shape = tuple(spec.sizes[c] for c in spec.output)
    dtype, fallback = _numpy_rules(spec, infos, options, out_info, shape)
    if fallback is not None:
        return fallback
    if len(infos) == 1:
        return _one_operand_plan(spec, infos[0], dtype, options, out_info, shape)
    fallback = _without_kernel(spec, infos, options, shape, dtype)
    if fallback is not None:
        return fallback
    out_eff = out_eff_labels(spec)
    # 2b: local views
    views = [diagonal_view(t, i.shape, i.strides) for t, i in zip(spec.inputs, infos)]
    if len(views) == 2:
        b = _builder(spec, infos, options, out_info, gemm_only, dtype)
        # 2f: the whole call as one loop nest when its step is not worth a GEMM
        if _whole_call_nest(b, views, infos, dtype, out_eff):
            plan, laid = _ctile_out_layout(b, views, dtype, shape, out_eff,
                                           _nest_plan(b, views, dtype, shape, out_eff))
            if laid:
                plan = replace(plan, steps=(replace(plan.steps[0], why=laid),))
            # a real thin GEMM: planned on the packed engine too, the cheaper
            # runs (complex stays in the nest: the packed engine's 1m panels,
            # twice B's bytes and padded to whole tiles, cost more than its
            # price says -- except where the nest's rows would be shorter
            # than a vector, _short_complex_rows)
            thin = _thin_pair(b, views, out_eff)
            if thin and dtype in _NATIVE:
                gemm = _build_plan(spec, infos, options, out_info, gemm_only=True)
                if not laid:
                    plan, laid = _gemm_out_layout(b, views, dtype, shape, out_eff, plan, gemm)
                engine, why = engine_by_cost(plan.steps[0], gemm.steps, dtype)
                if engine == "gemm" and gemm.fallback is None:
                    return _with_why(gemm, why)
                return replace(plan, steps=(replace(plan.steps[0], why=_notes(why, laid)),))
            if thin and dtype in _COMPLEX:
                gemm = _build_plan(spec, infos, options, out_info, gemm_only=True)
                if gemm.fallback is None and _short_complex_rows(plan.steps[0], dtype):
                    return _with_why(gemm, SHORT_COMPLEX_ROWS_WHY)
                if gemm.fallback is None and _complex_gemv_cols(gemm):
                    return _with_why(gemm, COMPLEX_GEMV_COLS_WHY)
                if gemm.fallback is None and _short_k_complex_tiles(plan.steps[0], dtype):
                    engine, why = ctile_by_cost(plan.steps[0], gemm.steps, dtype)
                    if engine == "gemm":
                        return _with_why(gemm, why)
                    plan = replace(plan, steps=(replace(plan.steps[0],
                                                        why=_notes(why, laid)),))
            return _relayout_or(plan, b, views, dtype, out_eff)
        gemm = _path_plan(b, views, infos, dtype, shape, out_eff, None)
        tiles = _tiles_or_gemm(b, spec, infos, options, out_info, gemm_only, views, dtype,
                               shape, out_eff, gemm)
        return gemm if tiles is None else tiles
    return _cheapest_plan(spec, infos, options, out_info, gemm_only, views, dtype, shape,
                          out_eff)


CTILE_PRICED_CYCLES = 100e3   # the least price of complex tiles over a short K priced against 1m


def _short_k_complex_tiles(step, dtype) -> bool:
    """A complex whole-call nest step of register tiles over a K of at most
    CTILE_EDGE, priced at CTILE_PRICED_CYCLES or more: its tiles' stores,
    not the pass over x, set their speed, so it is priced against the 1m
    GEMM as a short edge is ('ij,jk->ik' (100000,4) x (4,2) c128, 1 thread,
    Xeon: 674 us as tiles, 405 packed, numpy 656).  Over a long K the tiles
    stream x and win whatever the prices say ((37,20000):F x (20000,3):F
    c64: 495 us as tiles, 869 packed, numpy 582), and so do a few tiles,
    below the 1m engine's set-up ('iab,bc->aic' (4,2,2) x (2,1182) c64: 9
    us as tiles, 20 packed)."""
    return (dtype in _COMPLEX and isinstance(step, NestStep) and step.ctile
            and step.loops[-2].extent <= CTILE_EDGE
            and ctile_cycles(step.loops, dtype.itemsize, True) >= CTILE_PRICED_CYCLES)


SHORT_COMPLEX_ROWS_WHY = ("gemm: the nest's complex rows would be shorter than a vector "
                          "(the packed 1m engine runs such thin GEMMs 1.4-2.5x faster)")


def _short_complex_rows(step, dtype) -> bool:
    """A complex nest step of the small-edge kernel whose rows hold fewer
    elements than a vector: the packed 1m engine runs it faster, though its
    price says otherwise (1 thread, 'ij,jk->ik' with m = 1.97M, ms nest /
    packed / numpy: c64 k=8 n=3 51.9 / 20.7 / 39.4; k=4 n=3 19.2 / 10.9 /
    21.1; c128 k=4 n=3 33.8 / 19.2 / 46.6; (7123,3) x (3,158):F c64 1.32 /
    0.96 / 1.02); from a vector on, the nest's complex vectors hold their
    own (c64 k=2 n=8: 33.9 ms, numpy 41)."""
    if dtype not in _COMPLEX or not isinstance(step, NestStep) or not step.short:
        return False
    real = _COMPLEX[dtype].itemsize
    return step.loops[-1].extent < vector_lanes(real) // 2


COMPLEX_GEMV_COLS_WHY = ("gemm: the GEMV path's dots of A's rows, read once in place, against "
                         "B's few complex columns gathered as real rows (the nest's tiles "
                         "gather across rows of A)")


def _complex_gemv_cols(gemm) -> bool:
    """A complex plan of one 1m step the C core runs on the GEMV path (A's
    rows contiguous along a long k, against one or two columns of B): A is
    read once, in place, and B's block gathered into L1 -- the bandwidth's
    work, where the nest's register tiles gather along m of two or three
    rows far apart (1 thread, Zen 3, 'ijk,jkl->il' (2,241,2972) x
    (241,2972,2), ms, nest / GEMV path / numpy: c64 9.2 / 2.9 / 3.9)."""
    if len(gemm.steps) != 1 or not isinstance(gemm.steps[0], GemmStep):
        return False
    st = gemm.steps[0]
    return (st.complex_mode == "1m" and st.kernel is not None
            and st.kernel.path == KernelPath.GEMV)


CPX_PRICED_ROW_VECTORS = 8   # shortest complex row, in vectors, priced against 1m


def _complex_vector_rows(step, dtype) -> bool:
    """A complex nest step of contiguous rows of CPX_PRICED_ROW_VECTORS
    vectors or more, not the register-tile kernel's: priced against the
    packed 1m engine as a real one is.  Its axpy rows along a long output
    row read the long operand in place, where the 1m engine packs it twice
    over for a few rows of C (1 thread, 'ij,jk->ki' (7516,9):F x (9,5) c64: 170 us packed,
    36 in the nest, numpy 65; 'ij,kj->ki' (7000,10):F x (6,10) c128: 154,
    96, numpy 93).  Rows of a few vectors are not: their starts and tails
    cost more than the price says ('bij,bjk->bik' (11,24,5) x (11,5,15)
    c128, rows of 15 with j in registers: 9.4 us, packed 5.5)."""
    if dtype not in _COMPLEX or not isinstance(step, NestStep) or step.ctile:
        return False
    real = _COMPLEX[dtype].itemsize
    return (step.row.endswith("contig") and bool(step.loops)
            and step.loops[-1].extent >= CPX_PRICED_ROW_VECTORS * vector_lanes(real) // 2)


def _notes(*parts) -> str:
    """A step's reasons, the empty ones left out."""
    return "; ".join(p for p in parts if p)


def _with_why(gemm, why):
    """``gemm`` with ``why`` (both engines priced) on its GemmSteps."""
    return replace(gemm, steps=tuple(replace(st, why=why) if isinstance(st, GemmStep) else st
                                     for st in gemm.steps))


SHORT_DOTS_PACKED = 4   # most dots a row of the small-edge kernel priced against the packed engine


def _tiles_or_gemm(b, spec, infos, options, out_info, gemm_only, views, dtype, shape, out_eff,
                   gemm):
    """A two-operand GEMM with a short edge as the nest's register-tile
    kernel or as ``gemm`` (the packed engine's plan), the cheaper by
    predicted cost; None when the edge is not short or the nest does not
    take the kernel.  Real: m or n of at most one strip of the kernel
    (``_tile_edge_pair``), priced by compute (nest.engine_by_cost); a real
    nest of contiguous rows without the kernel, or of the small-edge
    kernel's dots, is priced so too.
    Complex: an edge of at most nest.CTILE_EDGE (``_short_edge_pair``), the
    output laid out along the kernel's vectors when free, priced against
    the 1m GEMM (nest.ctile_by_cost).  ``b``: the call's builder, for its
    sizes (the nest is planned with a fresh one)."""
    is_complex = dtype in _COMPLEX
    if not (dtype in _NATIVE or is_complex):
        return None
    short = _short_edge_pair if is_complex else _tile_edge_pair
    if not short(b, views, out_eff):
        return None
    b = _builder(spec, infos, options, out_info, gemm_only, dtype)
    if not _nest_allowed(b, views, infos, dtype):
        return None
    plan, laid = _nest_plan(b, views, dtype, shape, out_eff), ""
    if is_complex:
        plan, laid = _ctile_out_layout(b, views, dtype, shape, out_eff, plan)
    step = plan.steps[0]
    # the small-edge kernel's dots against the smm path, their prices
    # measured against each other, and against the packed engine for up to
    # SHORT_DOTS_PACKED dots a row in one vector: the packed engine copies
    # the long operand into panels and pads the narrow edge to whole tiles
    # (1 thread, Zen 3, 'ij,jk->ik' (m,k) x (k,8)[:, ::2], us, dots / packed:
    # f32 m,k = 50,4000 65 / 199; 2000,4000 4362 / 7429; 300,12000 1270 /
    # 4030; f64 50,4000 107 / 249; 2000,4000 10995 / 12347; 300,12000 4165 /
    # 5612).  More dots a row, the packed engine wins whatever the prices
    # say: f64 'ij,jk->ik' (2000,1000) x (1000,8) 4730-5700 / 2390-2680;
    # 'ij,kj->ik' (3000,500) x (7,500) 3390-4250 / 2120-2130; on AVX-512,
    # 'ijk,jkl->il' (578,33,35) x (33,35,7):T 690 / 487
    dots = (not is_complex and step.short and step.row.startswith("short-dots")
            and (narrow_smm(gemm.steps, dtype)
                 or step.short <= min(SHORT_DOTS_PACKED, vector_lanes(dtype.itemsize))))
    if not step.ctile and not dots and not _complex_vector_rows(step, dtype) and (
            is_complex or not step.row.endswith("contig")):
        # (a real nest of contiguous rows is priced too: 'bij,bkj->bki'
        # (421,121,278) x (421,4,278) f64 as dots of 278, 8.9 ms; packed,
        # A's 113 MB copied into panels for m = 4, 14.8 ms; numpy 10)
        return None
    engine, why = (ctile_by_cost if step.ctile else engine_by_cost)(step, gemm.steps, dtype)
    if engine == "nest":
        return replace(plan, steps=(replace(step, why=_notes(why, laid)),))
    return _with_why(gemm, why)


def _builder(spec, infos, options, out_info, gemm_only, dtype):
    b = _Builder(spec, infos, options, out_info)
    b.gemm_only = gemm_only
    if out_info is None and options.order == "K":
        b.k_order = numpy_k_order(spec, infos, out_eff_labels(spec))
    b.kernel_dtype = _COMPLEX.get(dtype, dtype)
    b.dtype = dtype
    return b


def _path_plan(b, views, infos, dtype, shape, out_eff, path, consumer_order=False) -> Plan:
    """The Plan running ``path`` (opt_einsum's linear format, on the
    operands after their own labels are summed out; None: ``pairwise_path``
    of the call's optimize=) step by step; ``consumer_order``: see
    ``_Builder.consumer_order``."""
    spec, options, out_info = b.spec, b.options, b.out_info
    b.consumer_order = consumer_order
    live = _prepared_operands(b, views, infos, dtype, out_eff)
    # 2a: pairwise order on the prepared terms
    if path is None:
        path = pairwise_path([s.labels for s in live], out_eff, spec.sizes, options.optimize)
    if not path:  # every operand already reduced to its final form (n == 1 only)
        raise AssertionError("empty path for >= 2 operands")
    out_fixed, out_buffer, out_cast = _output_layout(spec, infos, options, out_info, dtype,
                                                     shape)
    out_buffer = _pairwise_steps(b, live, path, out_eff, out_fixed, out_buffer, dtype)
    if out_cast:
        out_buffer = out_buffer or Buffer(shape, tuple(range(len(shape))))
    return Plan(spec.inputs, spec.output, shape, dtype,
                None if (out_info is not None and not out_cast) else out_buffer,
                steps=tuple(b.steps), path=path, out_cast=out_cast,
                scalar_result=(len(shape) == 0), options=options.key(),
                fallback_subscripts=spec.plain_subscripts(), n_slots=b.n_slots)


CANDIDATE_GAIN = 0.95   # a later candidate must be predicted this much faster to win


def _cheapest_plan(spec, infos, options, out_info, gemm_only, views, dtype, shape,
                   out_eff) -> Plan:
    """Three or more operands: of one nest over all of them and the
    candidate pairwise paths (``path.candidate_paths``), the plan of least
    predicted time (``cost.steps_seconds``).  The nest comes first, so an
    elementwise 'ij,ij,ij->i' stays one pass where a path only ties it."""
    def builder():
        return _builder(spec, infos, options, out_info, gemm_only, dtype)

    probe = builder()
    terms = [s.labels for s in _prepared_operands(probe, views, infos, dtype, out_eff)]
    paths = candidate_paths(terms, out_eff, spec.sizes, options.optimize)
    least = min(path_iterations(terms, out_eff, spec.sizes, p) for p in paths)
    plans = []
    b = builder()
    if (_nest_allowed(b, views, infos, dtype)
            and _group_extent(set("".join(v.labels for v in views)), spec.sizes)
            <= ITERATION_SLACK * least):
        plans.append(_nest_plan(b, views, dtype, shape, out_eff))
    for p in paths:
        plan = _path_plan(builder(), views, infos, dtype, shape, out_eff, p)
        plans.append(plan)
        if any(isinstance(st, NestStep) and st.dst != OUT for st in plan.steps):
            # the same path with its nest intermediates laid out for their
            # readers: 'ij,j,jk->ik' (533, 6290) x (6290,) x (6290, 3) f32
            # reads 'jk' in rows of 3 against i's rows of 6290, 'kj' in dots
            plans.append(_path_plan(builder(), views, infos, dtype, shape, out_eff, p,
                                    consumer_order=True))
    best, best_s = None, 0.0
    for plan in plans:
        t = steps_seconds(plan.steps, dtype)
        if best is None or t < CANDIDATE_GAIN * best_s:
            best, best_s = plan, t
    return best


def _numpy_rules(spec, infos, options, out_info, shape):
    """(computation dtype, None) after numpy's checks in numpy's order, or
    (None, a fallback Plan) where numpy's own path decides the call."""
    check_path_name(options.optimize, spec.inputs, spec.output)
    opt = options.optimize
    if isinstance(opt, tuple) and opt and opt[0] == "einsum_path":
        # checked here: a call run as one loop nest never walks the path
        check_explicit_path(tuple(tuple(c) for c in opt[1:]), len(infos))
    for i, info in enumerate(infos):
        check_span(info, f"operand {i}")
    if out_info is not None:
        check_span(out_info, "out")
    out_dtype = None if out_info is None else out_info.dtype
    if numpy_pairwise_dtypes(opt, [i.dtype for i in infos], options.dtype, out_dtype):
        dtype = options.dtype or np.result_type(*(i.dtype for i in infos))
        return None, _fallback(spec, shape, dtype, options,
                               f"optimize={opt!r} with mixed dtypes: numpy's pairwise path "
                               "casts per pair and into out=", keep_optimize=True)
    if out_info is not None and out_info.shape != shape:   # numpy checks this first
        if len(infos) >= 2 and not (opt is True or opt is False or opt is None):
            # numpy's pairwise path writes its last intermediate into out=
            # through a ufunc or a one-operand einsum, which may broadcast
            return None, _fallback(spec, shape, options.dtype or np.result_type(
                                       *(i.dtype for i in infos)), options,
                                   f"optimize={opt!r} with out= of shape {out_info.shape} "
                                   f"for a result of shape {shape}: numpy's pairwise path "
                                   "decides whether it broadcasts", keep_optimize=True)
        raise ValueError(f"out parameter has shape {out_info.shape}, expected {shape}")
    if out_info is not None and any(st == 0 and e > 1 for e, st in
                                    zip(out_info.shape, out_info.strides or ())):
        return None, _fallback(spec, shape, resolve_dtype(
                                   [i.dtype for i in infos], options.dtype, options.casting,
                                   out_dtype),
                               options, "out= repeats elements (a zero stride): numpy's loop "
                               "accumulates every product into them")
    if is_pure_view(spec, infos, out_info):
        # numpy returns the operand's view and ignores dtype= / casting=
        return infos[0].dtype, None
    return resolve_dtype([i.dtype for i in infos], options.dtype, options.casting,
                         out_dtype), None


def _one_operand_plan(spec, info, dtype, options, out_info, shape) -> Plan:
    """Diagonal view + sum / copy; a pure view works for any dtype, sums
    only for native dtypes (numpy's own loops for the others)."""
    if info.strides is None or not info.aligned:
        return _fallback(spec, shape, dtype, options, "operand not addressable in elements")
    if info.dtype.kind not in "biufc" and not is_pure_view(spec, (info,), out_info):
        # datetime / object / structured / string sums and casts: numpy's
        # own loops (timedelta -> float64 under casting='unsafe', ...)
        return _fallback(spec, shape, dtype, options, f"operand dtype {info.dtype}")
    plan = single_operand_plan(spec, info, dtype, options, out_info, shape)
    if getattr(plan.steps[0], "as_view", False) or dtype in _NATIVE or dtype in _COMPLEX:
        return plan
    return _fallback(spec, shape, dtype, options, f"dtype {dtype} has no native kernel")


def _without_kernel(spec, infos, options, shape, dtype):
    """A fallback Plan (named reason) where no kernel takes these operands, else None."""
    if dtype not in _NATIVE and dtype not in _COMPLEX:
        return _fallback(spec, shape, dtype, options, f"dtype {dtype} has no native kernel")
    for i, info in enumerate(infos):
        if info.strides is None or not info.aligned or not info.dtype.isnative:
            return _fallback(spec, shape, dtype, options,
                             f"operand {i} is not aligned / native / element-strided")
        if not (info.dtype.kind in "biuf" or info.dtype in _COMPLEX):
            return _fallback(spec, shape, dtype, options, f"operand {i} dtype {info.dtype}")
    if any(e == 0 for e in spec.sizes.values()):
        return _fallback(spec, shape, dtype, options, "zero-size dimension")
    return None


def _prepared_operands(b, views, infos, dtype, out_eff) -> list:
    """Each operand as a slot, with the labels only it holds summed out first
    and a cast to ``dtype`` where its own dtype differs."""
    is_complex = dtype in _COMPLEX
    live = []
    for j, (v, info) in enumerate(zip(views, infos)):
        others = [w.labels for i2, w in enumerate(views) if i2 != j]
        summed = presum_labels(v.labels, others, out_eff)
        st = _Slot(j, v.labels, v.strides, "c" if is_complex else "")
        needs_cast = info.dtype != dtype
        if summed or needs_cast:
            st = _reduce(b, st, summed, dtype if needs_cast else None)
        # else: diagonal / dropped axes need no step, the gemm strides say it
        live.append(st)
    return live


def _output_layout(spec, infos, options, out_info, dtype, shape):
    """(element strides of the output by label when fixed, the Buffer to
    allocate when order= fixes it, whether the result is cast into out=)."""
    out_fixed = None
    out_buffer = None
    out_cast = out_info is not None and (
        out_info.dtype != dtype or out_info.strides is None or not out_info.aligned)
    if out_info is not None and not out_cast:
        out_fixed = dict(zip(spec.output, out_info.strides))
    elif options.order in "CFA":
        order = options.order
        if order == "A":
            order = "F" if all(i.f_contiguous and not i.c_contiguous for i in infos) else "C"
        nd = len(shape)
        out_buffer = Buffer(shape, tuple(range(nd)) if order == "C" else tuple(reversed(range(nd))))
        out_fixed = dict(zip(spec.output, out_buffer.strides))
    return out_fixed, out_buffer, out_cast


def _pairwise_steps(b, live, path, out_eff, out_fixed, out_buffer, dtype):
    """The steps of ``path`` on the ``live`` slots, the last one into the
    output; returns the output's Buffer (``out_buffer``, or the one the last
    step chose when nothing fixed the output's layout)."""
    is_complex = dtype in _COMPLEX
    n_steps = len(path)
    for si, contraction in enumerate(path):
        picked = [live[i] for i in contraction]
        for i in sorted(contraction, reverse=True):
            del live[i]
        last = si == n_steps - 1
        if len(picked) == 1:
            needed = set(out_eff).union(*[set(s.labels) for s in live])
            st = picked[0]
            summed = "".join(c for c in st.labels if c not in needed)
            if last:
                res = _reduce_to_out(b, st, out_eff, out_fixed, is_complex)
                out_buffer = out_buffer or res
            elif summed:
                st = _reduce(b, st, summed, None)
            live.append(st)
            continue
        x = picked[0]
        for pi, y in enumerate(picked[1:]):
            final = last and pi == len(picked) - 2
            rest = live + picked[pi + 2:]
            needed = set(out_eff).union(*[set(s.labels) for s in rest])
            if final:
                c_labels = out_eff
            else:
                c_labels = "".join(c for c in x.labels + y.labels if c in needed)
                c_labels = "".join(dict.fromkeys(c_labels))
            # labels of one side only and not needed: sum them out first
            roles = assign_roles(x.labels, y.labels, c_labels)
            if roles.presum_a:
                x = _reduce(b, x, roles.presum_a, None)
            if roles.presum_b:
                y = _reduce(b, y, roles.presum_b, None)
            c_fixed = out_fixed if final else None
            if _step_priced(b, x, y, c_labels, is_complex):
                x, ob = _cheaper_pair_step(b, x, y, c_labels, c_fixed, final, dtype, rest)
            elif _step_engine(b, x, y, c_labels, is_complex) == "nest":
                x, ob = _nest_pair_step(b, x, y, c_labels, c_fixed, final, dtype,
                                        b.spec.output, rest)
            else:
                x, ob = _gemm_step(b, x, y, c_labels, c_fixed, final, is_complex,
                                   b.spec.output)
            if final and out_fixed is None:
                out_buffer = ob
        live.append(x)
    return out_buffer


def _reduce(b, st, summed, cast_to):
    """Pre-sum ``summed`` out of slot ``st`` (and/or cast it): a ReduceStep to a new slot.

    ``"ab,bc->c"``: 'a' only in the first operand -> sum(A, axis=a) first.
    """
    keep = "".join(c for c in st.labels if c not in summed)
    pos = {c: i for i, c in enumerate(st.labels)}
    src_labels = keep + "".join(c for c in st.labels if c in summed)
    src_strides = tuple(st.strides[pos[c]] for c in src_labels)
    src_shape = tuple(b.sizes[c] for c in src_labels)
    # keep the source's memory order for the result (largest stride outermost)
    order = tuple(sorted(range(len(keep)), key=lambda i: -abs(src_strides[i])))
    buf = Buffer(tuple(b.sizes[c] for c in keep), order)
    dst = b.new_slot()
    kind = KernelKind.REDUCE if summed else KernelKind.COPY
    b.steps.append(ReduceStep(st.slot, dst, src_labels, src_shape, src_strides,
                              tuple(range(len(keep), len(src_labels))), keep, buf, kind,
                              cast_to=str(cast_to) if cast_to is not None else ""))
    cplx = st.cplx
    if cast_to is not None:
        cplx = "c" if np.dtype(cast_to) in _COMPLEX else ""
    return _Slot(dst, keep, buf.strides, cplx)


def _reduce_to_out(b, st, out_eff, out_fixed, is_complex):
    """Last step of an explicit path that is unary: numpy sum into the output."""
    pos = {c: i for i, c in enumerate(st.labels)}
    summed = "".join(c for c in st.labels if c not in out_eff)
    src_labels = out_eff + summed
    shape_full = tuple(b.sizes[c] for c in b.spec.output)
    buf = None if out_fixed is not None else Buffer(shape_full, tuple(range(len(shape_full))))
    b.steps.append(ReduceStep(st.slot, OUT, src_labels,
                              tuple(b.sizes[c] for c in src_labels),
                              tuple(st.strides[pos[c]] for c in src_labels),
                              tuple(range(len(out_eff), len(src_labels))), b.spec.output,
                              buf, KernelKind.REDUCE if summed else KernelKind.COPY))
    return buf


# -- 2f: the loop-nest engine -------------------------------------------------

def _group_extent(labels, sizes) -> int:
    e = 1
    for c in labels:
        e *= sizes[c]
    return e


def _step_extents(a_labels, b_labels, c_labels, sizes):
    """(m, n, k) of the pairwise step a_labels,b_labels->c_labels."""
    r = assign_roles(a_labels, b_labels, c_labels)
    return tuple(_group_extent(g, sizes) for g in (r.m, r.n, r.k))


def _nest_allowed(b, views, infos, dtype) -> bool:
    """Whether one nest can run the whole call: native dtypes throughout
    (no operand or out= cast), at most MAXIN inputs, the packed engine not
    required."""
    if b.gemm_only or not nest_dtype_ok(dtype) or len(views) > MAXIN:
        return False
    if any(i.dtype != dtype for i in infos):
        return False
    return not (b.out_info is not None and (b.out_info.dtype != dtype
                                            or b.out_info.strides is None
                                            or not b.out_info.aligned))


def _whole_call_nest(b, views, infos, dtype, out_eff) -> bool:
    """True when a two-operand call runs best as one nest: when its step is
    not worth a GEMM (choose_engine), or -- real dtypes -- may not be (one
    register tile or a short k, nest.is_one_tile / is_short_k: then priced
    against the GEMM).  Calls of more operands price the
    nest against the paths (``_cheapest_plan``)."""
    if not _nest_allowed(b, views, infos, dtype):
        return False
    m, n, k = _step_extents(views[0].labels, views[1].labels, out_eff, b.sizes)
    return choose_engine(m, n, k) == "nest" or ((is_one_tile(m, n, k) or is_short_k(m, n, k))
                                                and dtype in _NATIVE)


def _thin_pair(b, views, out_eff) -> bool:
    """Two operands whose pairwise step is a thin GEMM (nest.is_thin), one
    register tile (nest.is_one_tile) or has a short k (nest.is_short_k):
    both engines are planned and priced."""
    if len(views) != 2:
        return False
    m, n, k = _step_extents(views[0].labels, views[1].labels, out_eff, b.sizes)
    return is_thin(m, n, k) or is_one_tile(m, n, k) or is_short_k(m, n, k)


def _tile_edge_pair(b, views, out_eff) -> bool:
    """Two operands whose pairwise step is a GEMM with m or n of at most one
    strip of the real register-tile kernel (nest.ctile_nw): the packed
    engine pads that edge to a whole micro-tile, the kernel reads the
    other operand once in place ('ij,jk->ik' (30000,12) F x (12,4) f32:
    155 us packed, 78 us in tiles)."""
    if len(views) != 2:
        return False
    return _is_tile_edge(*_step_extents(views[0].labels, views[1].labels, out_eff, b.sizes))


def _is_tile_edge(m, n, k) -> bool:
    """m or n of at most one strip of the real register-tile kernel."""
    return min(m, n, k) >= 2 and min(m, n) <= ctile_nw(False)


def _short_edge_pair(b, views, out_eff) -> bool:
    """Two operands whose pairwise step is a GEMM with an edge of at most
    nest.CTILE_EDGE, or m or n of at most nest.CTILE_EDGE_MN against a long
    operand larger than L2 (whose panels the packed engine would pack for
    a few rows)."""
    r = assign_roles(views[0].labels, views[1].labels, out_eff)
    sizes = b.sizes
    m, n, k = (_group_extent(g, sizes) for g in (r.m, r.n, r.k))
    if min(m, n, k) < 1 or not (r.m and r.n and r.k):
        return False
    long_bytes = max(m, n) * k * np.dtype(b.dtype).itemsize
    return min(m, n, k) <= CTILE_EDGE or (min(m, n) <= CTILE_EDGE_MN
                                          and long_bytes > l2_bytes())


def _out_strides(b):
    """(element strides of the output's labels, Buffer) for a nest writing a
    fresh output: numpy's 'K' order, or the order= asked for."""
    spec, sizes = b.spec, b.sizes
    shape = tuple(sizes[c] for c in spec.output)
    nd = len(shape)
    order = b.options.order
    if order == "A":
        order = "F" if all(i.f_contiguous and not i.c_contiguous for i in b.infos) else "C"
    if order == "F":
        buf = Buffer(shape, tuple(reversed(range(nd))))
    elif order == "K" and b.k_order is not None:
        mem = [c for c in spec.output if c not in b.k_order] + list(b.k_order)
        buf = Buffer(shape, tuple(spec.output.index(c) for c in mem))
    else:
        buf = Buffer(shape, tuple(range(nd)))
    return dict(zip(spec.output, buf.strides)), buf


def _nest_out_strides(b):
    """(element strides of the output's labels, Buffer or None) for a nest
    writing the call's output: out='s own strides, else a fresh buffer's."""
    if b.out_info is not None:
        return dict(zip(b.spec.output, b.out_info.strides)), None
    return _out_strides(b)


def _ctile_out_layout(b, views, dtype, shape, out_eff, plan):
    """(plan, a note for its reason): ``plan``, or -- when its register-tile
    kernel writes a fresh output of order='K' across the output's lines
    along its vector loop V -- the same nest writing an output whose
    innermost axes are V's, so each tile's vectors are stored whole.
    numpy's own layouts for the call differ by path ('abc,cd->adb'
    (4,19,7) F x (7,9518) c128: a innermost with optimize=False, b with
    True), so neither is one a caller can count on; V's is the one the
    kernel writes fastest ('abc,cd->adb' above, 1 thread: strided along d
    5.7 ms, d innermost 1.8 ms, numpy 2.1-2.6 ms)."""
    step = plan.steps[0]
    if not step.ctile or b.out_info is not None or b.k_order is None:
        return plan, ""
    v = [c for c in b.k_order if c in step.loops[-1].labels]
    if not v or list(b.k_order[-len(v):]) == v:
        return plan, ""
    moved = _nest_plan_in(b, [c for c in b.k_order if c not in v] + v, views, dtype, shape,
                          out_eff)
    if not moved.steps[0].ctile:
        return plan, ""
    return moved, (f"the output laid out with '{''.join(v)}' innermost, the kernel's "
                   f"vectors (order='K' leaves it free)")


def _gemm_out_layout(b, views, dtype, shape, out_eff, plan, gemm):
    """(plan, a note for its reason): ``plan``, or -- when the packed engine
    lays a fresh order='K' output out otherwise (so that its tiles are
    stored whole, orient.orient_step) -- the nest writing that layout if
    its predicted time is lower (its traffic too: 'bij,bkj->bki'
    (17855,296,2) x (17855,2,2) F f64 reads every operand along b at unit
    stride in numpy's layout, 13 ms; in C order, fewer cycles, 19 ms).  The
    engines are then compared in the layouts each would write:
    'ij...,jk...->ik...' (80,5,4,3) x (5,465,1,1) f32 in (i, A, k) order
    runs its rows along k, 465 long, against 12 along A in numpy's layout."""
    if b.out_info is not None or b.k_order is None or gemm.out_buffer is None:
        return plan, ""
    mem = [b.spec.output[i] for i in gemm.out_buffer.order]
    mem = [c for c in mem if c in b.k_order]
    if mem == list(b.k_order):
        return plan, ""
    moved = _nest_plan_in(b, mem, views, dtype, shape, out_eff)
    if nest_seconds(moved.steps[0], dtype) >= nest_seconds(plan.steps[0], dtype):
        return plan, ""
    return moved, ("the output laid out as the packed engine would write it (order='K' "
                   "leaves it free)")


def _nest_plan_in(b, k_order, views, dtype, shape, out_eff) -> Plan:
    """``_nest_plan`` writing a fresh output laid out in ``k_order`` (outer
    to inner) instead of ``b``'s."""
    along = copy.copy(b)
    along.k_order = k_order
    return _nest_plan(along, views, dtype, shape, out_eff)


def _nest_plan(b, views, dtype, shape, out_eff) -> Plan:
    spec, sizes = b.spec, b.sizes
    o_st, buf = _nest_out_strides(b)
    ins = [(j, v.labels, v.strides) for j, v in enumerate(views)]
    if len(views) == 2:
        r = assign_roles(views[0].labels, views[1].labels, out_eff)
        kind = step_kind(2, r.m, r.n, r.k)
    else:
        kind = step_kind(len(views), "", "", "")
    step = nest_step(kind, ins, OUT, spec.output, {c: o_st[c] for c in out_eff}, sizes, dtype)
    return Plan(spec.inputs, spec.output, shape, dtype, buf, steps=(step,),
                scalar_result=(len(shape) == 0), options=b.options.key(),
                fallback_subscripts=spec.plain_subscripts(), n_slots=len(views))


RELAYOUT_REUSE = 4       # the large operand at least this many times the small one's bytes
RELAYOUT_BYTES = L3_SHARE // 4   # the most a small operand relaid out may take
RELAYOUT_WORTH = 4       # a copy that merges rows: the nest at least this many times its price


def _relayout_or(plan, b, views, dtype, out_eff) -> Plan:
    """``plan`` (one nest over two operands, built with ``b``, whose steps
    it leaves empty), or the same nest after the small operand is copied
    once into the large one's axis order, whichever is predicted cheaper.
    When the two disagree on which axis is unit-stride ('abcd,dcb->a': a
    GEMV whose vector is permuted), the nest walks one of them across its
    lines or in small tiles for every pass of the outer loop; a small
    operand (at most RELAYOUT_BYTES, re-read from cache) re-used over a
    large one is worth one cache-blocked permutation copy (ep_copy), after
    which both run contiguous rows.  So is one already in that order but
    strided along the large one's unit stride, its rows read anew for every
    row of the large one ('bij,bkj->bki' with B[..., ::2], re-read for every
    i: two lanes at a time, 0.8x numpy; contiguous, 1.26x)."""
    step = plan.steps[0]
    if len(views) != 2 or not isinstance(step, NestStep) or step.ctile:
        return plan
    item = np.dtype(dtype).itemsize
    spec, sizes = b.spec, b.sizes
    nbytes = [_group_extent(v.labels, sizes) * item for v in views]
    small = 0 if nbytes[0] <= nbytes[1] else 1
    big = 1 - small
    y, x = views[small], views[big]
    if (len(y.labels) < 2 or nbytes[small] > RELAYOUT_BYTES
            or nbytes[big] < RELAYOUT_REUSE * nbytes[small]):
        return plan
    if not set(y.labels) & set(x.labels):
        # no axis in common (an outer product): the large one's order says
        # nothing of the small one's, whose own order is the output's
        # ('ab,c->acb' (3,8):F x (9141,): copied to C order, b and a no
        # longer merge with the output's blocks of 24, 171 us; read in
        # place, one row of 24 per c, 46 us)
        return plan
    # the small operand's labels in the large one's memory order (its own
    # labels the large one lacks outermost, in their own order)
    xs = dict(zip(x.labels, (abs(s) for s in x.strides)))
    mem = sorted(range(len(y.labels)),
                 key=lambda i: (y.labels[i] in xs, -xs.get(y.labels[i], 0)))
    now = sorted(range(len(y.labels)), key=lambda i: -abs(y.strides[i]))
    # one in that order is read in place, unless it is strided along the
    # row and moves along the loop around it (constant there, the nest
    # gathers its row once per pass of that loop)
    around = step.loops[-2].strides[small] if len(step.loops) >= 2 else 0
    # nor one walked against the large one's direction along a shared axis,
    # which keeps the axes from merging ('abc,bc->a' (532,542,3) x
    # (542,3)[::-1]: rows of 3 strided dots, 0.1x numpy; copied, one dot of
    # 1626 per row)
    xd = dict(zip(x.labels, x.strides))
    against = any(s and xd.get(c) and (s < 0) != (xd[c] < 0)
                  for c, s in zip(y.labels, y.strides))
    if mem == now and not against and (abs(y.strides[mem[-1]]) == 1 or around == 0):
        return plan
    buf = Buffer(tuple(sizes[c] for c in y.labels), tuple(mem))
    dst = b.new_slot()
    copy = ReduceStep(small, dst, y.labels, buf.shape, y.strides, (), y.labels, buf,
                      KernelKind.COPY)
    o_st, _ = _nest_out_strides(b)
    ins = [None, None]
    ins[big] = (big, x.labels, x.strides)
    ins[small] = (dst, y.labels, buf.strides)
    nest = nest_step(step.kind, ins, OUT, spec.output, {c: o_st[c] for c in out_eff}, sizes,
                     dtype)
    # (against the large one and merged by the copy into longer rows, the
    # nest's rows run strided or in tiles that its price does not follow:
    # 2 threads, 1.06 ms against 55 us copied)
    merges = (against and nest.loops[-1].extent > step.loops[-1].extent
              and nest_seconds(step, dtype) >= RELAYOUT_WORTH * steps_seconds((copy,), dtype))
    if not merges and (steps_seconds((copy, nest), dtype)
                       >= CANDIDATE_GAIN * nest_seconds(step, dtype)):
        return plan
    return replace(plan, steps=(copy, nest), n_slots=b.n_slots)


def _step_engine(b, x, y, c_labels, is_complex) -> str:
    """The engine for one pairwise step of a path: the nest when m, n or k
    is too small for a GEMM and both slots hold the compute dtype."""
    if b.gemm_only or not nest_dtype_ok(b.dtype):
        return "gemm"
    if is_complex and (x.cplx != "c" or y.cplx != "c"):
        return "gemm"   # a real array in a complex product: the GEMM's split
    return choose_engine(*_step_extents(x.labels, y.labels, c_labels, b.sizes))


def _step_priced(b, x, y, c_labels, is_complex) -> bool:
    """Whether a pairwise step of a path is planned on both engines and
    priced (``_cheaper_pair_step``): a real GEMM of one register tile or a
    short k, as a two-operand call's step is (``_thin_pair``), or a thin one
    whose m and n are both 3 or more ('ij,jk,kl,lm->im' (9,293965) F x
    (293965,3) x ...: the first step in the nest read A once per k, 9.3 ms;
    the in-place smm GEMM 4.3).  A thin step with an edge of 2 stays in the
    nest: priced by compute alone, a GEMM of a long k and an edge of 2 looks
    cheaper than it runs ('ij,jk,kl,lm->im' (2,9) x (9,29) x (29,184995) x
    (184995,2) f32: 7.7 ms through it, 3.0 ms without).  So is a step with m
    or n of at most one strip of the register-tile kernel, as a two-operand
    call is (``_tile_edge_pair``; ``_tile_edge_only`` then says whether the
    nest must take that kernel or contiguous rows to compete)."""
    if b.gemm_only or is_complex or b.dtype not in _NATIVE:
        return False
    m, n, k = _step_extents(x.labels, y.labels, c_labels, b.sizes)
    return (is_one_tile(m, n, k) or is_short_k(m, n, k) or (is_thin(m, n, k) and min(m, n) >= 3)
            or _tile_edge_only(m, n, k))


def _tile_edge_only(m, n, k) -> bool:
    """A GEMM priced on both engines only for its edge of at most one strip
    of the real register-tile kernel ('ij,jk,kl->il' (12104,821) F x (821,6)
    x ...: the first step packed, 7.2 ms; in tiles, 2.7 ms)."""
    return (_is_tile_edge(m, n, k) and min(m, n, k) >= MIN_GEMM_EDGE
            and not (is_one_tile(m, n, k) or is_short_k(m, n, k)))


def _cheaper_pair_step(b, x, y, c_labels, c_fixed, final, dtype, rest=()):
    """A priced pairwise step: planned as a nest and as a GEMM, the cheaper
    by predicted compute (``engine_by_cost``) kept, the other's steps and
    slots dropped ('ij,j,jk->ik' (104018,4) x (4,) x (4,29) f32 with the
    output F-ordered: the short-k GEMM 2.1 ms packed, 1.2 ms in the nest)."""
    at, slots = len(b.steps), b.n_slots
    nx, nob = _nest_pair_step(b, x, y, c_labels, c_fixed, final, dtype, b.spec.output, rest)
    nest_steps, nest_slots = b.steps[at:], b.n_slots
    del b.steps[at:]
    b.n_slots = slots
    gx, gob = _gemm_step(b, x, y, c_labels, c_fixed, final, False, b.spec.output)
    nests = [st for st in nest_steps if isinstance(st, NestStep)]
    gemms = [st for st in b.steps[at:] if isinstance(st, GemmStep)]
    if len(nests) != 1 or not gemms:
        return gx, gob
    m, n, k = _step_extents(x.labels, y.labels, c_labels, b.sizes)
    if (_tile_edge_only(m, n, k)
            and not (nests[0].ctile or nests[0].row.endswith("contig"))):
        return gx, gob   # priced by compute, other nests look cheaper than they run
    engine, why = engine_by_cost(nests[0], gemms, dtype)
    if engine == "gemm":
        b.steps[at:] = [replace(st, why=why) if isinstance(st, GemmStep) else st
                        for st in b.steps[at:]]
        return gx, gob
    b.steps[at:] = [replace(st, why=why) if st is nests[0] else st for st in nest_steps]
    b.n_slots = nest_slots
    return nx, nob


def _nest_pair_step(b, x, y, c_labels, c_fixed, final, dtype, out_term, rest=()):
    """One pairwise step ``x,y->c_labels`` as a NestStep (into the output or
    a new intermediate, whose order ``_intermediate_orders`` offers; ``rest``:
    the slots still to be contracted)."""
    sizes = b.sizes
    r = assign_roles(x.labels, y.labels, c_labels)
    kind = step_kind(2, r.m, r.n, r.k)
    ins = [(x.slot, x.labels, x.strides), (y.slot, y.labels, y.strides)]
    if final:
        if c_fixed is not None:
            o_st, buf = c_fixed, None
        else:
            o_st, buf = _out_strides(b)
        step = nest_step(kind, ins, OUT, out_term, {c: o_st[c] for c in c_labels}, sizes,
                         dtype)
        b.steps.append(step)
        return None, buf
    dst = b.new_slot()
    step = None
    orders = (_intermediate_orders(x, y, c_labels, sizes) if not b.consumer_order
              else [_readers_order(rest, c_labels, sizes)])
    for order in orders:
        buf = Buffer(tuple(sizes[c] for c in c_labels), order)
        cand = nest_step(kind, ins, dst, c_labels, dict(zip(c_labels, buf.strides)), sizes,
                         dtype, buffer=buf)
        if step is None or nest_seconds(cand, dtype) < nest_seconds(step, dtype):
            step = cand
    buf = step.buffer
    b.steps.append(step)
    return _Slot(dst, c_labels, buf.strides, "c" if np.dtype(dtype) in _COMPLEX else ""), buf


def _intermediate_orders(x, y, c_labels, sizes):
    """Memory orders (outermost first, as positions in ``c_labels``) a nest
    may write an intermediate in: C order of its labels, and the order the
    inputs walk them (by their least stride, largest outermost), so the
    row the inputs run along contiguously is contiguous in the result too."""
    orders = [tuple(range(len(c_labels)))]
    least = _least_strides((x, y), c_labels, sizes)
    walked = tuple(sorted(range(len(c_labels)),
                          key=lambda i: (-least.get(c_labels[i], 0), i)))
    if walked != orders[0]:
        orders.append(walked)
    return orders


def _least_strides(slots, c_labels, sizes) -> dict:
    """{label of ``c_labels``: its least nonzero |stride| in ``slots``},
    for the labels of extent > 1 that some slot walks."""
    least = {}
    for st in slots:
        for c, s in zip(st.labels, st.strides):
            if c in c_labels and sizes[c] != 1 and s != 0:
                least[c] = min(least.get(c, abs(s)), abs(s))
    return least


def _readers_order(rest, c_labels, sizes):
    """The memory order (outermost first, as positions in ``c_labels``) in
    which the slots still to come (``rest``) walk an intermediate's labels:
    by their least stride in any of them, largest outermost, the labels none
    of them walks (absent, or broadcast) outermost of all."""
    least = _least_strides(rest, c_labels, sizes)
    big = max(least.values(), default=0) + 1
    return tuple(sorted(range(len(c_labels)),
                        key=lambda i: (-least.get(c_labels[i], big), i)))


def _gemm_step(b, x, y, c_labels, c_fixed, final, is_complex, out_term):
    """Plan one pairwise contraction ``x,y->c_labels`` as a GemmStep."""
    sizes = b.sizes
    roles = assign_roles(x.labels, y.labels, c_labels)
    f = 2 if is_complex else 1  # C is complex whenever the compute dtype is
    cf = None
    if c_fixed is not None:
        cf = {c: f * c_fixed[c] for c in c_labels}
    c_orders = []
    if final:
        # numpy's 'K' layout first (ties go to it), then plain C order
        c_orders = [o for o in (b.k_order, c_labels) if o is not None and set(o) == set(c_labels)]
    swapped, layout, sc, order = orient_step(roles, sizes, x.kstrides(), y.kstrides(), cf,
                                             c_orders, f, _native.tile(b.kernel_dtype))
    A, B = (y, x) if swapped else (x, y)
    nr = _native.tile(b.kernel_dtype)[1]
    if is_complex and choose_kernel(layout) == KernelKind.GEMM:
        nr //= 2   # 1m: NR real columns hold NR / 2 complex ones
    layout, moved = loop_straddling_axes(layout, nr, np.dtype(b.dtype).itemsize, l2_bytes())
    if final:
        dst, full = OUT, out_term
    else:
        dst, full = b.new_slot(), c_labels
    buf = None
    if c_fixed is None:
        # memory order of C: the chosen order, size-1 output axes outermost
        mem = [c for c in full if c not in order] + list(order)
        buf = Buffer(tuple(sizes[c] for c in full), tuple(full.index(c) for c in mem))
    kind = choose_kernel(layout)
    cmode = ""
    if is_complex:
        # 1m where the kernel packs (a GEMM); GEMV / dot / outer shapes stay
        # on the float views, which the no-pack paths stream in place
        cmode = "1m" if kind == KernelKind.GEMM else "cc"
    step = GemmStep(kind, A.slot, B.slot, dst, A.labels, B.labels, full,
                    layout.batch, layout.m, layout.n, layout.k, swapped, buf if not final else None,
                    cmode, layout.breaks, moved)
    kdtype = b.dtype if cmode == "1m" else b.kernel_dtype
    native = _native.prepare_gemm(kdtype, *step.groups())
    step = replace(step, native=native, kernel=_kernel_choice(step, native, sc, sizes))
    b.steps.append(step)
    st = None
    if not final:
        st = _Slot(dst, full, buf.strides, "c" if is_complex else "")
    return st, buf


def _kernel_choice(step, native, c_strides, sizes) -> KernelChoice:
    """The step's record of the C core's schedule, made with its descriptor
    (``native.planned()``), and of where the orientation put C's unit-stride
    index."""
    sched = native.planned()
    unit = unit_label({c: s for c, s in c_strides.items() if sizes.get(c, 0) != 1})
    role = None
    for r, g in (("batch", step.batch), ("m", step.m), ("n", step.n)):
        if unit is not None and unit in g.labels:
            role = r
    # ep_gemm reads full NR-wide B panels in place when its schedule allows
    # it (m small) and B has one n axis of unit stride and a regular k
    # (or, for more than one MR panel of m, when the process measures that
    # faster than packing it: sched["b_measured"])
    readable = (len(step.n.axes) == 1 and len(step.k.axes) <= 1
                and step.n.axes[0].strides[0] == 1 and sched["N"] >= sched["nr"])
    if not readable:
        sched = dict(sched, b_measured=None)
    return KernelChoice.from_schedule(sched, bool(sched["direct_b"] and readable), unit, role)
