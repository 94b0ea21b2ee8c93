"""Step 3 of the data flow in DESIGN.md: run a Plan on arrays.

``run_plan(plan, operands, out)`` walks the plan's steps over a list of slots
(slot i = operand i; later slots = intermediates):

  * every buffer (output, intermediates) comes from ``np.empty`` (or, when
    large and written in rows, a block an earlier call freed: buffers.py,
    writes_out_in_rows) in the planned memory order: nothing that is fully
    overwritten is cleared first;
  * ``GemmStep`` calls ``_native.gemm`` with the ORIGINAL arrays and the
    plan's element strides: diagonals and broadcasts are just strides, no view
    or copy is made; complex GEMMs run on the complex arrays (1m), other
    complex steps pass ``.real`` / ``.imag`` float views;
  * ``out=`` is written in place through its own strides (it is C); only when
    it overlaps an operand, or its dtype differs from the compute dtype, is
    the result computed into a temporary and copied.

The only memory-touching numpy calls are the plan's REDUCE / COPY steps
(``np.sum`` / ``np.copyto`` on strided views) and recorded cast copies.
"""
from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import as_strided

from . import _native, buffers
from .operands import strided_empty
from .plan import OUT, GemmStep, NestStep, ReduceStep


def allocate(buffer, dtype, pooled=False) -> np.ndarray:
    """np.empty in ``buffer.order`` (outermost first), viewed in ``buffer.shape``
    order; ``pooled`` (an array written in rows, writes_out_in_rows): a large
    one may be a block freed earlier (buffers.py)."""
    base = (buffers.empty if pooled else np.empty)(buffer.mem_shape, dtype)
    axes = buffer.view_axes
    return base if axes is None else base.transpose(axes)


def _view(arr, shape, strides):
    """``arr`` seen from its data pointer through these element strides."""
    item = arr.itemsize
    st = tuple(s * item for s in strides)
    if _native.operand_view is not None and isinstance(arr, np.ndarray):
        return _native.operand_view(arr, shape, st)   # as_strided costs microseconds
    return as_strided(arr, shape=shape, strides=st, writeable=False)


def _dropped_view(arr, labels, sizes_one):
    """``arr`` without its size-1 axes (they carry no data): for np.sum(out=)."""
    if not sizes_one:
        return arr
    # the trailing Ellipsis keeps a 0-d *view* when every axis is dropped
    return arr[tuple(0 if one else slice(None) for one in sizes_one) + (Ellipsis,)]


def strided_like(out):
    """A fresh array with exactly ``out``'s element strides (for overlap temps)."""
    item = out.itemsize
    return strided_empty(out.shape, [s // item for s in out.strides], out.dtype)


POOL_ROW_BYTES = 1024     # shortest contiguous output row of a nest whose output is pooled


def writes_out_in_rows(plan) -> bool:
    """Whether the output is written in rows of whole vectors, one after
    another: then a large output comes from the pool of freed blocks.  The
    packed GEMM's C tiles go out so (600 MB: 74 ms into reused memory, 147
    fresh), and so does a loop nest whose row runs along the output's unit
    stride for a kilobyte or more ('ia,ib,ic->abc' (4,4) x (4,46) x (4,51387)
    f64, 75 MB: 14 ms reused, 24 fresh).  A nest whose row strides across the
    output scatters its stores across lines ('ia,ib,ic->abc' writing vectors
    along b 1.7 KB apart), and fresh pages, which the kernel zeroes into
    cache just before the first store, took them at twice the speed of
    reused memory (59 MB: 24 against 48 ms); so do shorter rows written a
    few at a time (the register-tile kernel's 8 rows of 728 bytes at a
    time, 60 MB: 17 ms reused, 14.5 fresh).  Short rows written one after
    another in address order, the output one run, are a single stream of
    stores, as a long row is ('i,j->ij' (300000,30) f64, rows of 240 bytes,
    72 MB: 3.7 ms reused, 10.8 fresh; the small-edge kernel's 'ij,jk->ik'
    (200000,3) x (3,24) c64: 2.5 against 5.7)."""
    step = plan.steps[-1] if plan.steps else None
    if isinstance(step, NestStep) and step.dst == OUT and step.loops:
        row = step.loops[-1]
        return abs(row.strides[-1]) == 1 and (
            row.extent * np.dtype(plan.dtype).itemsize >= POOL_ROW_BYTES
            or _writes_in_order(step))
    return isinstance(step, GemmStep) and step.c == OUT


def _writes_in_order(step) -> bool:
    """Whether a nest step (not the register-tile kernel, which writes a
    few rows at a time) stores its output in address order: each loop
    outside the row steps it by what the loops inside cover, or not at all
    where the small-edge kernel holds that loop in registers."""
    if step.ctile:
        return False
    covered = step.loops[-1].extent
    for k in range(len(step.loops) - 2, -1, -1):
        lp = step.loops[k]
        if lp.extent == 1 or (step.short and k == len(step.loops) - 2):
            continue
        if lp.strides[-1] != covered:
            return False
        covered *= lp.extent
    return True


def pools_output(plan) -> bool:
    """Whether a fresh output of ``plan`` comes from the pool: written in
    rows and at least ``buffers.POOL_MIN`` bytes (the compiled runners,
    which allocate with np.empty, step aside for it)."""
    buf = plan.out_buffer
    return (buf is not None and writes_out_in_rows(plan)
            and buffers.nbytes(buf.mem_shape, np.dtype(plan.dtype)) >= buffers.POOL_MIN)


def simple_runner(plan, with_out=False):
    """For the common plan -- one real GEMM into a fresh output, or into the
    caller's ``out=`` (``with_out``) -- a closure that does only that (output
    allocation prepared, descriptor validated); None for any other plan
    (run_plan handles everything)."""
    step = plan.only_step
    if step is None:
        return None
    if (isinstance(step, ReduceStep) and step.as_view and not with_out
            and _native.operand_view is not None):
        return _view_runner(plan, step)
    if (plan.out_buffer is None) != with_out:
        return None
    if isinstance(step, NestStep):
        return _nest_runner(plan, step, with_out)
    if (not isinstance(step, GemmStep) or not step.one_call
            or _native.reference_gemm() is not None):
        return None   # the closures call the compiled descriptor directly
    gemm, a, b, dtype = step.native.run, step.a, step.b, np.dtype(plan.dtype)

    if with_out:
        may_share = _native.may_overlap or np.may_share_memory

        def run_out(operands, out):
            A, B = operands[a], operands[b]
            if may_share(out, A) or may_share(out, B):
                return run_plan(plan, operands, out)
            gemm(A, B, out)
            return out
        return run_out

    mem_shape, perm = plan.out_buffer.mem_shape, plan.out_buffer.view_axes
    scalar = plan.scalar_result
    empty = buffers.empty if pools_output(plan) else np.empty

    def run(operands):
        C = empty(mem_shape, dtype)
        if perm is not None:
            C = C.transpose(perm)
        gemm(operands[a], operands[b], C)
        return C[()] if scalar else C
    return run


def _view_runner(plan, step):
    """'ii->i', 'ijk->kji': the operand's view, made in C (numpy's own cost)."""
    sizes = dict(zip(step.src_labels, step.src_shape))
    st = dict(zip(step.src_labels, step.src_strides))
    shape = tuple(sizes.get(c, 1) for c in step.dst_labels)
    strides = tuple(st.get(c, 0) for c in step.dst_labels)
    view, src, scalar = _native.operand_view, step.src, plan.scalar_result

    def run(operands):
        a = operands[src]
        item = a.itemsize
        res = view(a, shape, [s * item for s in strides])
        return res[()] if scalar else res
    return run


def _nest_runner(plan, step, with_out):
    """The hot-path runner of a one-nest plan: compiled when it allocates the
    output, a closure that checks out= for overlap otherwise."""
    if step.dst != OUT:
        return None
    if not with_out:
        buf = plan.out_buffer
        if pools_output(plan):
            return _pooled_nest_runner(plan, step)
        return _native.nest_runner(step.native, step.inputs, buf.mem_shape, buf.view_axes,
                                   plan.scalar_result)
    call, idx = step.native, step.inputs
    may_share = _native.may_overlap or np.may_share_memory

    def run_out(operands, out):
        ins = tuple([operands[i] for i in idx])
        if any(may_share(out, x) for x in ins):
            return run_plan(plan, operands, out)
        call(ins, out)
        return out
    return run_out


def _pooled_nest_runner(plan, step):
    """A one-nest plan's runner whose large output comes from the pool (the
    compiled runner allocates with np.empty)."""
    buf, dtype, call, idx = plan.out_buffer, np.dtype(plan.dtype), step.native, step.inputs

    def run(operands):
        out = allocate(buf, dtype, pooled=True)
        call(tuple([operands[i] for i in idx]), out)
        return out
    return run


def run_plan(plan, operands, out=None):
    """Execute ``plan`` on ``operands`` (ndarrays matching the planned layouts)."""
    if plan.fallback is not None:
        return _run_numpy_fallback(plan, operands, out)

    dtype = np.dtype(plan.dtype)
    target = out
    if out is not None and (plan.out_cast or _overlaps(out, operands)):
        target = allocate(plan.out_buffer, dtype) if plan.out_cast else strided_like(out)
    elif out is None and plan.out_buffer is not None and not plan.is_view:
        target = allocate(plan.out_buffer, dtype, writes_out_in_rows(plan))

    slots = list(operands) + [None] * (plan.n_slots - len(operands))
    for step in plan.steps:
        if isinstance(step, GemmStep):
            _run_gemm(step, slots, target, dtype)
        elif isinstance(step, NestStep):
            _run_nest(step, slots, target, dtype)
        elif isinstance(step, ReduceStep):
            res = _run_reduce(step, slots, target, dtype)
            if step.as_view:  # numpy returns a 0-d result as a scalar, views too
                return res[()] if plan.scalar_result else res
        else:  # pragma: no cover
            raise TypeError(f"unknown step {step!r}")

    if out is not None:
        if target is not out:
            np.copyto(out, target, casting="unsafe")
        return out
    if plan.scalar_result:
        return target[()]
    if plan.result_dtype is not None:
        return target.astype(plan.result_dtype)
    return target


def _run_numpy_fallback(plan, operands, out):
    """numpy.einsum with the options the plan's fallback names."""
    opts = dict(zip(("dtype", "order", "casting", "optimize"), plan.options))
    opt = opts["optimize"]
    if isinstance(opt, tuple) and opt and opt[0] == "einsum_path":
        opt = list(opt)
    elif plan.fallback.numpy_kwargs is not None:
        opt = list(opt) if isinstance(opt, tuple) else opt
    elif (np.dtype(plan.dtype).hasobject or any(op.dtype != plan.dtype for op in operands)
          or (out is not None and 0 in out.strides)):
        # object arrays: numpy's own default loop (optimize=False).  Its
        # optimize path pairs operands through tensordot/dot, whose
        # error path over-releases object references when an element's
        # __add__/__mul__ raises (numpy's test_einsum_object_errors: a
        # use-after-free seen with valgrind); evaluation order of object
        # arithmetic stays numpy.einsum's default one too.
        # numpy's optimize path computes intermediates in each operand's
        # own dtype (a bool operand summed with OR, an int8 one wrapping
        # at 8 bits) before promoting: 'a,b->' on int64 [2] and bool
        # [True, True] gives 2, not 4.  Its single loop computes in the
        # result dtype throughout, and alone accumulates every product
        # into a zero-stride out=.
        opt = False
    pairwise = plan.fallback.numpy_kwargs is not None
    kw = (dict(plan.fallback.numpy_kwargs) if pairwise else
          {"dtype": opts["dtype"], "order": opts["order"], "casting": opts["casting"]})
    requested = None if kw.get("dtype") is None else np.dtype(kw["dtype"])
    swapped = requested is not None and not requested.isnative
    if swapped:
        # numpy's loops write native values into a byte-swapped result
        # (einsum('i->j', a, dtype='>f8') gives 1e-320s): computed in
        # native order and swapped after.  The pairwise path's own
        # checks (its ufuncs refuse a byte order, its tensordot and
        # one-loop steps do not) run first, into a scratch out=.
        if pairwise:
            scratch = None if out is None else np.empty_like(out)
            if out is not None:
                scratch.flags.writeable = out.flags.writeable
            np.einsum(plan.fallback_subscripts, *operands, optimize=opt, out=scratch, **kw)
        kw["dtype"] = requested.newbyteorder("=")
    res = np.einsum(plan.fallback_subscripts, *operands, out=out, optimize=opt, **kw)
    if swapped and out is None and isinstance(res, np.ndarray) and res.ndim:
        res = res.astype(requested)
    # numpy's optimize path may return a 0-d array where its default
    # path (and einplan) return a scalar
    if out is None and isinstance(res, np.ndarray) and res.ndim == 0:
        return res[()]
    return res


def _overlaps(out, operands):
    return any(np.may_share_memory(out, op) for op in operands)


def _operand_view(src, shape, strides):
    """A view of ``src`` with these byte strides whose ``base`` is ``src``'s, like numpy's.

    numpy.einsum returns ``ii->i`` / ``ij->ji`` as a view with ``view.base is
    a.base`` that is writeable exactly when ``a`` is; ``as_strided`` would
    give a private base object instead.
    """
    owner = src
    while isinstance(owner.base, np.ndarray) and not owner.flags.owndata:
        owner = owner.base
    offset = src.__array_interface__["data"][0] - owner.__array_interface__["data"][0]
    try:
        view = np.ndarray(shape, src.dtype, buffer=owner, offset=offset, strides=strides)
    except (TypeError, ValueError, BufferError):  # owner exports no plain buffer
        return as_strided(src, shape=shape, strides=strides, writeable=src.flags.writeable)
    if view.flags.writeable and not src.flags.writeable:
        view.flags.writeable = False
    return view


def _run_reduce(step, slots, target, dtype):
    src = slots[step.src]
    if step.as_view:
        # ii->i / ij->ji: a writeable view of the operand, as numpy returns
        sizes = dict(zip(step.src_labels, step.src_shape))
        st = dict(zip(step.src_labels, step.src_strides))
        shape = tuple(sizes.get(c, 1) for c in step.dst_labels)
        item = src.itemsize
        return _operand_view(src, shape, tuple(st.get(c, 0) * item for c in step.dst_labels))
    view = _view(src, step.src_shape, step.src_strides)
    fresh = step.dst != OUT
    if fresh:
        dst = allocate(step.buffer, step.cast_to or src.dtype)
        slots[step.dst] = dst
    else:
        dst = target
        one = [d == 1 for d in dst.shape]
        if any(one) and len(step.dst_labels) == dst.ndim:
            # size-1 output axes are not in the source view
            kept = set(step.src_labels)
            one = [d == 1 and c not in kept for d, c in zip(dst.shape, step.dst_labels)]
            dst = _dropped_view(dst, step.dst_labels, one)
    if step.sum_axes:
        np.sum(view, axis=step.sum_axes, out=dst, dtype=dst.dtype)
    elif (view.dtype == dst.dtype and view.shape == dst.shape and not dst.dtype.hasobject
          and dst.itemsize in (1, 2, 4, 8, 16)
          # C reads whole elements; a fresh buffer is aligned and shares nothing
          and view.flags.aligned
          and (fresh or (dst.flags.aligned and not np.may_share_memory(view, dst)))):
        _native.permute_copy(view, dst)   # "ncabhw->nchawb" into out=: cache-blocked
    else:
        np.copyto(dst, view, casting="unsafe")
    return dst


def _run_nest(step, slots, target, dtype):
    if step.dst == OUT:
        dst = target
    else:
        dst = allocate(step.buffer, dtype)
        slots[step.dst] = dst
    step.native(tuple([slots[i] for i in step.inputs]), dst)


def _step_gemm(step):
    """gemm(A, B, C, alpha, beta) for this step: the plan's validated
    descriptor, or _native.gemm when a reference GEMM is set."""
    if step.native is not None and _native.reference_gemm() is None:
        return step.native
    gemm, groups = _native.gemm, step.groups()
    return lambda A, B, C, alpha, beta: gemm(A, B, C, *groups, alpha, beta)


def _run_gemm(step, slots, target, dtype):
    A, B = slots[step.a], slots[step.b]
    if step.c == OUT:
        C = target
    else:
        C = allocate(step.c_buffer, dtype, pooled=True)
        slots[step.c] = C
    gemm = _step_gemm(step)
    if step.complex_mode != "cc":   # real, or complex by 1m: one kernel call
        gemm(A, B, C, 1.0, 0.0)
        return
    Cr, Ci = C.real, C.imag
    Ar, Ai, Br, Bi = A.real, A.imag, B.real, B.imag
    gemm(Ar, Br, Cr, 1.0, 0.0)   # Cr  = Ar Br
    gemm(Ai, Bi, Cr, -1.0, 1.0)  # Cr -= Ai Bi
    gemm(Ar, Bi, Ci, 1.0, 0.0)   # Ci  = Ar Bi
    gemm(Ai, Br, Ci, 1.0, 1.0)   # Ci += Ai Br
