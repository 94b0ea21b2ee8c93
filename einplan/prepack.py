"""Reusable plans with constant operands, packed once (DESIGN.md "Prepacked constants").

``plan(subscripts, *shapes_or_arrays, constants=[i, ...])`` returns a
``ContractPlan``: the idiom of opt_einsum's ``contract_expression(...,
constants=...)``.  Calling it, ``p(*variable_operands, out=None)``, runs the
contraction with the constants filled in.

When the plan is one GEMM whose B operand (the kernel's columns) is the
constant -- the inference case, ``bij,jk->bik`` with weights ``W`` -- the
constant is packed once into the micro-kernel's panel format (a
``_kernels.PackedB``) and every call packs only the variable side.  The
packed form depends on the dtype, the kernel set, its blocking and the k/n
extents, never on the thread count.  The plan keeps no reference to the
constant array: the caller may drop it.

Any other plan keeps a private contiguous copy of each constant (named in
``describe()``) and runs through ``einsum``.

Every call checks the variable operands against the plan: a different shape
or dtype is a ValueError; a different stride pattern re-plans the variable
side (the packed constant is reused: the k and n enumeration is fixed by it).
"""
from __future__ import annotations

import threading

import numpy as np
from numpy.lib.stride_tricks import as_strided

from . import _native
from .api import einsum
from .execute import allocate, pools_output
from .explain import explain
from .operands import dense_strides, describe_operands
from .plan import OUT, GemmStep, NestStep
from .options import CASTING_OMITTED, OPTIMIZE_OMITTED, Options
from .planner import make_plan
from .spec import parse_spec



def plan(subscripts, *shapes_or_arrays, constants=(), dtype=None, order="K",
         casting=CASTING_OMITTED, optimize=OPTIMIZE_OMITTED):
    """A callable plan for ``einsum(subscripts, ...)`` with some operands fixed.

    ``shapes_or_arrays``: for each operand, an array (required for the
    positions listed in ``constants``) or a shape tuple (C order).  A shape's
    dtype is ``dtype`` if given, else the constants' common dtype, else
    float64.  Call the result with the variable operands in their order.
    """
    return ContractPlan(subscripts, shapes_or_arrays, constants, dtype, order, casting, optimize)


def _template(shape, dt):
    """An array with this shape, dtype and C-order strides that is never read
    (parse and describe only look at shape, strides and dtype)."""
    return as_strided(np.empty(1, dt), shape=shape, strides=dense_strides(shape, unit=dt.itemsize))


class ContractPlan:
    """A plan for one einsum with constant operands (see the module docstring)."""

    def __init__(self, subscripts, operands, constants, dtype, order, casting, optimize):
        if not isinstance(subscripts, str):
            raise TypeError("plan() takes the subscripts string first (the interleaved form "
                            "is not supported here)")
        n = len(operands)
        consts = sorted({int(c) for c in constants})
        if any(c < 0 or c >= n for c in consts):
            raise ValueError(f"constants {list(constants)} must be operand positions 0..{n - 1}")
        for c in consts:
            if not hasattr(operands[c], "shape") or not hasattr(operands[c], "dtype"):
                raise TypeError(f"constant operand {c} must be an array, got {type(operands[c]).__name__}")
        self.subscripts = subscripts
        self.constants = tuple(consts)
        self.variables = tuple(i for i in range(n) if i not in consts)
        self._options = dict(dtype=dtype, order=order, casting=casting, optimize=optimize)
        const_arrays = {c: np.asarray(operands[c]) for c in consts}
        cdts = {a.dtype for a in const_arrays.values()}
        default_dt = np.dtype(dtype) if dtype is not None else (
            cdts.pop() if len(cdts) == 1 else np.dtype(np.float64))
        default_dt = default_dt.newbyteorder("=")   # what the kernels compute in
        templates = []
        for i, op in enumerate(operands):
            if i in const_arrays:
                templates.append(const_arrays[i])
            elif hasattr(op, "shape") and hasattr(op, "dtype"):
                templates.append(np.asarray(op))
            else:
                try:
                    shape = tuple(int(e) for e in op)
                except TypeError:
                    raise TypeError(f"operand {i} must be an array or a shape tuple, "
                                    f"got {type(op).__name__}") from None
                templates.append(_template(shape, default_dt))
        self._var_shapes = {i: templates[i].shape for i in self.variables}
        self._var_dtypes = {i: templates[i].dtype for i in self.variables}
        self._var_strides = {i: templates[i].strides for i in self.variables}
        self._spec, _ = parse_spec((subscripts, *templates))
        opts = Options.make(dtype, order, casting, optimize)
        self._plan = make_plan(self._spec, describe_operands(templates), opts, None,
                               gemm_only=bool(self.constants))
        self._lock = threading.Lock()
        self._variants = {}
        self.packed = None
        self._copies = {}
        step = self._packable_step(const_arrays)
        if step is not None:
            self._step = step
            self.packed = step.native.pack_b(const_arrays[step.b])
            self._out_buffer = self._plan.out_buffer
        else:
            # no prepacking: a private copy, so the caller may still drop the original
            self._copies = {c: np.array(a, copy=True) for c, a in const_arrays.items()}
        self.constant_nbytes = sum(a.nbytes for a in const_arrays.values())
        self._runner = self._make_runner(templates) if not self.constants else None

    # ------------------------------------------------------------ planning
    def _packable_step(self, const_arrays):
        """The plan's GemmStep if its B operand is the (only) constant and the
        contraction is one GEMM (real, or complex by 1m) without diagonals, else None."""
        step = self._plan.only_step
        if step is None or self._plan.out_buffer is None:
            return None
        # a complex GEMM (1m) packs B once as its 2x2 real blocks
        if (not isinstance(step, GemmStep) or not step.one_call
                or step.b not in const_arrays or step.a in const_arrays
                or len(const_arrays) != 1):
            return None
        if any(len(set(t)) != len(t) for t in self._spec.inputs):
            return None   # diagonals: keep the general path
        if step.m.extent == 1:
            return None   # one row (GEMV): streaming B in place beats any packing
        return step

    def _make_runner(self, templates):
        """A compiled runner for a plan without constants that is one GEMM
        (real or 1m) into a fresh output (the small-call hot path), else None."""
        p = self._plan
        step = p.only_step
        if step is None or p.out_buffer is None:
            return None
        if pools_output(p):
            return None   # the general path takes a large output from the pool
        if isinstance(step, NestStep):
            return _nest_plan_runner(p, step, templates)
        if (not isinstance(step, GemmStep) or not step.one_call
                or _native.reference_gemm() is not None):
            return None   # the runner calls the compiled descriptor directly
        return _native.plan_runner(
            step.native, [(t.shape, t.strides) for t in templates], step.a, step.b,
            p.out_buffer.mem_shape, p.out_buffer.view_axes, p.scalar_result)

    def _variant(self, a_strides, c_strides):
        """A GemmCall for new strides of the variable operand / out=, with the
        k, n and batch enumeration of the packed constant (re-plans the
        variable side; the constant is not repacked)."""
        key = (a_strides, c_strides)
        with self._lock:
            call = self._variants.get(key)
        if call is not None:
            return call
        step, spec = self._step, self._spec
        a_term, c_term = spec.inputs[step.a], spec.output
        a_shape = self._var_shapes[step.a]
        a_st = {l: (0 if a_shape[i] == 1 else s) for i, (l, s) in enumerate(zip(a_term, a_strides))}
        c_st = dict(zip(c_term, c_strides))
        size = spec.sizes
        m = [(size[l], a_st[l], c_st[l]) for l in step.m.labels]
        n = [(size[l], 0, c_st[l]) for l in step.n.labels]
        k = [(size[l], a_st[l], 0) for l in step.k.labels]
        batch = [(size[l], a_st[l], 0, c_st[l]) for l in step.batch.labels]
        call = _native.prepare_gemm(np.dtype(self._plan.dtype), m, n, k, batch)
        with self._lock:
            if len(self._variants) >= 64:     # bounded: a caller cycling layouts
                self._variants.clear()
            self._variants[key] = call
        return call

    # ------------------------------------------------------------ calling
    def _check(self, variables):
        if len(variables) != len(self.variables):
            raise ValueError(f"this plan takes {len(self.variables)} variable operand(s) "
                             f"(positions {list(self.variables)}), got {len(variables)}")
        arrays = []
        for pos, v in zip(self.variables, variables):
            a = np.asanyarray(v)
            if a.shape != self._var_shapes[pos]:
                raise ValueError(f"operand {pos} has shape {a.shape}; this plan was made for "
                                 f"{self._var_shapes[pos]}")
            if not a.dtype.isnative and a.dtype.newbyteorder("=") == self._var_dtypes[pos]:
                # byte-swapped operand: the kernels read native machine words
                a = a.astype(self._var_dtypes[pos])
            if a.dtype != self._var_dtypes[pos]:
                raise ValueError(f"operand {pos} has dtype {a.dtype}; this plan was made for "
                                 f"{self._var_dtypes[pos]}")
            arrays.append(a)
        return arrays

    def __call__(self, *variables, out=None):
        if self._runner is not None and out is None:
            res = self._runner(*variables)   # None: operands differ from the plan
            if res is not None:
                return res
        arrays = self._check(variables)
        if self.packed is None:
            ops = list(arrays)
            for c in self.constants:
                ops.insert(c, self._copies[c])
            return einsum(self.subscripts, *ops, out=out, **self._options)
        A = arrays[0]
        if not A.flags.aligned or any(s % A.itemsize for s, e in zip(A.strides, A.shape)
                                      if e > 1):
            # byte strides that are not whole elements (a field of a
            # structured array), or a misaligned buffer: the kernel loads
            # whole aligned elements, so copy (a fresh array is aligned)
            A = np.array(A, order="C")
        p = self._plan
        if out is None:
            C = allocate(self._out_buffer, p.dtype, pooled=True)
        else:
            if not isinstance(out, np.ndarray):
                raise TypeError("'out' must be an array")
            if out.shape != p.shape or out.dtype != np.dtype(p.dtype):
                raise ValueError(f"out= must have shape {p.shape} and dtype {p.dtype}, got "
                                 f"{out.shape} {out.dtype}")
            if np.may_share_memory(out, A) or not out.flags.aligned or any(
                    s % out.itemsize for s, e in zip(out.strides, out.shape) if e > 1):
                # the kernel re-reads A after writing the first k block of
                # C, and addresses C in whole elements: compute into a
                # fresh array, then copy (as run_plan does)
                out[...] = self(A)
                return out
            C = out
        item = C.itemsize
        a_st = tuple(s // A.itemsize for s in A.strides)
        c_st = tuple(s // item for s in C.strides)
        if A.strides == self._var_strides[self._step.a] and out is None:
            call = self._step.native
        else:
            call = self._variant(a_st, c_st)
        call.with_packed_b(A, self.packed, C)
        if p.scalar_result and out is None:
            return C[()]
        return C

    # ------------------------------------------------------------ reporting
    @property
    def packed_nbytes(self) -> int:
        return 0 if self.packed is None else self.packed.nbytes

    def describe(self) -> str:
        """One line on what was done with the constants."""
        if self.packed is not None:
            return (f"constant operand {self._step.b} prepacked for the kernel "
                    f"({self.packed.nbytes} bytes packed, {self.constant_nbytes} original)")
        if self.constants:
            return (f"constants {list(self.constants)} kept as private copies, not packed "
                    f"(prepacking needs one GEMM whose B operand is the only constant)")
        return "no constants"

    def explain(self, **kw):
        """The explain report of the plan this object runs."""
        ops = []
        for i in range(len(self._spec.inputs)):
            if i in self.variables:
                ops.append(self._var_shapes[i])
            elif i in self._copies:
                ops.append(self._copies[i])
            else:
                ops.append(tuple(self._spec.sizes[l] for l in self._spec.inputs[i]))
        return explain(self.subscripts, *ops, dtype=self._plan.dtype, **kw)

    def __repr__(self):
        return f"<einplan.ContractPlan {self.subscripts!r}: {self.describe()}>"


def _nest_plan_runner(p, step, templates):
    """The small-call runner of a plan that is one nest into a fresh output:
    the operands must match the planned layouts (else None: the general
    path), checked in C with the run."""
    if step.dst != OUT:
        return None
    return _native.nest_plan_runner(step.native, step.inputs, p.out_buffer.mem_shape,
                                    p.out_buffer.view_axes, p.scalar_result,
                                    [(t.shape, t.strides) for t in templates])
