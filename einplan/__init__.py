"""einplan: tensor contractions planned, then run on packed kernels.

    einsum(subscripts, *operands) / matmul / dot / tensordot / inner / outer / vdot
        |  frontends.py   matmul & co. -> einsum spec
        v
    spec.py        1. parse + validate -> Spec (ellipsis expanded, sizes)
    operands.py       shapes, element strides, dtypes -> the plan-cache key
    options.py        dtype= / order= / casting= / optimize=, omitted or given
    planner.py     2. the pipeline below, assembled into a cached Plan:
      path.py        2a. >2 operands: pairwise orders (opt_einsum's path finders)
      cost.py            each candidate (one nest, or a path) priced: bytes,
                         rows, start-ups; the cheapest runs
      roles.py       2b-c. diagonal views, pre-sums, batch / m / n / k per step
      layout.py      2d. merge axes contiguous in every operand holding them
      orient.py      2e. orientation (A rows / B columns), the output's order
      nest.py        2f. the loop-nest engine's plan (loop order, row kernel,
                        threads) and the choice between it and the GEMM engine
      single_operand.py  one-operand calls: diagonal view, then sum or copy
    plan.py           the Plan: frozen dataclasses, the very object that runs
    execute.py     3. run a Plan: views in, output written in place
    buffers.py        outputs and intermediates: np.empty, or a large block
                      an earlier call freed (no page faults again)
    _native.py        the only importer of the compiled einplan._kernels
        |
        v
    cython_kernels/   _kernels.pyx: checked bindings and einsum's hot path;
                      ep_schedule.c: path, threads, blocking -> ep_gemm.c:
                      pack A / pack B from strided layout, BLIS five loops,
                      SIMD micro-kernels chosen at run time (ukr/: AVX-512,
                      AVX2, C); ep_nest.c: the loop nests (sums of products,
                      reductions, traces, elementwise) at memory bandwidth

    explain/          the Plan that runs, as a report (model.py prices it):
      entry.py          operands or shapes -> the cached Plan -> Report
      build.py          the whole call: operands, slots, path, copies, totals
        gemm_step.py    one builder per step type: roles, merges,
        reduce_step.py  orientation, kernel, cost
        nest_step.py
        kernel_choice.py  the kernel choice, read from the Plan
      schema.py         frozen records (one field per key) -> SCHEMA, validate
      report.py, render.py   dict / JSON / text / summary / markdown
      measure.py        measure=True: the call timed beside the model
    timing.py         medians of timed calls (explain, demo, profile)

Around the data flow, for whole programs:
    patching.py       numpy.einsum & co. routed to einplan (patch_numpy, patched)
    scaled_update.py  contract: C = alpha * einsum(a, b) + beta * C (pytblis's call)
    tblis.py          pytblis's API (einsum, contract, tensordot) with its array order
    autoray_backend.py  einplan as autoray's numpy contractions (quimb, cotengra)
    profile.py        every distinct contraction of a program: time, engine, rate
"""
from ._version import __version__
from ._native import get_num_threads, isa, set_num_threads
from .api import einsum
from .config import show_config
from .scaled_update import contract
from .buffers import release_buffers, set_buffer_pool
from . import tblis
from .explain import Report, explain, explain_call
from .frontends import dot, inner, matmul, outer, tensordot, vdot
from .patching import patch_numpy, patched, restore_numpy
from .prepack import ContractPlan, plan
from .profile import profile
from .autoray_backend import register_autoray


def _register_threadpoolctl():
    # threadpool_limits() then sets einplan's thread count process-wide (the
    # OpenMP runtime's own limit is per calling thread); optional dependency
    try:
        from .backends import register_threadpoolctl
        register_threadpoolctl()
    except Exception:  # threadpoolctl missing or too old: nothing to register
        pass


_register_threadpoolctl()

__all__ = ["einsum", "matmul", "dot", "tensordot", "inner", "outer", "vdot",
           "explain", "explain_call", "Report", "plan", "ContractPlan",
           "isa", "show_config", "set_num_threads", "get_num_threads",
           "contract", "patch_numpy", "restore_numpy", "patched", "profile",
           "register_autoray", "tblis", "set_buffer_pool", "release_buffers"]
