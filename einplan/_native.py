"""The one place that imports the compiled module ``einplan._kernels``.

Everything that touches memory through C goes through the functions here, so
the rest of the package sees plain Python signatures and one error if the
extension was not built.

The kernel contract (``gemm``)
------------------------------
``gemm(A, B, C, m, n, k, batch, alpha=1.0, beta=0.0)`` computes, for every
batch index,

    C[m, n] = alpha * sum_k A[m, k] * B[k, n] + beta * C[m, n]

where each of ``m, n, k, batch`` is a *group*: a tuple of axes, outer to inner,
each axis a tuple of its extent and its stride (in elements, relative to that
array's data pointer) in every operand holding it:

    m     : ((extent, stride_a, stride_c), ...)
    n     : ((extent, stride_b, stride_c), ...)
    k     : ((extent, stride_a, stride_b), ...)
    batch : ((extent, stride_a, stride_b, stride_c), ...)

An empty group means extent 1.  Strides may be any integers (negative, zero
for broadcast, gaps).  ``A, B, C`` are ndarrays of one dtype (float32 or
float64; C writeable); only their data pointer and the memory their own
shape/strides can reach are used, and every offset the groups can form is
checked to lie inside that memory (ValueError otherwise).  ``beta == 0``
never reads C, so C may hold garbage or NaN.  The micro-kernel's vectors run
along n: a caller that wants speed orients the step so C's unit stride is in
the n group (DESIGN.md step 2e).
"""
from __future__ import annotations

import os

import numpy as np

from .spec import LETTERS

# libgomp reads its wait policy once, when it is loaded with the compiled
# module.  Its default spins an idle worker for ~300k pauses (milliseconds)
# before it sleeps; where the cores are oversubscribed (other processes,
# or several processes each running threaded calls) the spinning worker
# uses up its time slice and the next region waits for it to run again.
# Zen 3, 2 cores, two processes each running 'ij,jk->ik' 512^2 f32 on 2
# threads (1 thread: 3.3-9 ms), median: default spin 12-20 ms (p90 40 ms),
# passive 5.4-5.6 ms.  Too short a spin costs as much the other way: a thread
# that waits at a barrier longer than its spin sleeps, and its wake-up costs
# tens of microseconds where the other CPU is halted (virtual machines).
# 3000 pauses (~0.1 ms of spinning after each region) keep the barriers
# inside a call awake.  Zen 4 VM, 2 threads, 300 -> 3000 pauses: 'ij,jk->ik'
# 256^2 f32 0.242 -> 0.189 ms, 1024^2 f32 15.9 -> 10.1 ms; 'bij,jk->bik'
# (77,1,512) x (512,1536) f32 0.81 -> 0.57 ms; the two processes above
# 2.7 -> 1.4-1.5 ms.
# A wait policy the user sets (OMP_WAIT_POLICY, GOMP_SPINCOUNT) is kept.
_SET_WAIT_POLICY = "OMP_WAIT_POLICY" not in os.environ and "GOMP_SPINCOUNT" not in os.environ
if _SET_WAIT_POLICY:
    os.environ["GOMP_SPINCOUNT"] = "3000"
try:
    from . import _kernels
except ImportError as exc:  # pragma: no cover - only without a build
    _kernels = None
    _IMPORT_ERROR = exc
else:
    _IMPORT_ERROR = None
finally:
    if _SET_WAIT_POLICY:
        # the setting is libgomp's now; the environment programs inherit is the user's
        del os.environ["GOMP_SPINCOUNT"]


def available():
    """True when the compiled kernels are built and importable."""
    return _kernels is not None


def _require():
    if _kernels is None:
        raise ImportError(
            "einplan's compiled kernels (einplan._kernels) are not built; "
            "install with `pip install .` from the source tree"
        ) from _IMPORT_ERROR
    return _kernels


# The GEMM that plan steps run instead of the compiled kernel, or None: the
# switch below sets it (tests run plans on the numpy oracle or a counting
# wrapper with it).  Plans are always made with the compiled module: the
# schedule each step records is the C core's.
_reference_gemm = None


def gemm(A, B, C, m, n, k, batch=(), alpha=1.0, beta=0.0):
    """Run the GEMM over groups of axes (see the module docstring): the
    packed kernel, or the GEMM set by ``set_reference_gemm``."""
    if _reference_gemm is not None:
        return _reference_gemm(A, B, C, m, n, k, batch, alpha, beta)
    return compiled_gemm(A, B, C, m, n, k, batch, alpha, beta)


def compiled_gemm(A, B, C, m, n, k, batch=(), alpha=1.0, beta=0.0):
    """The packed kernel itself, whatever GEMM is set."""
    return _require().gemm(A, B, C, tuple(m), tuple(n), tuple(k), tuple(batch),
                           float(alpha), float(beta))


def set_reference_gemm(fn):
    """Run every GEMM of a plan through ``fn`` (``gemm``'s signature: the
    numpy oracle ``gemm_reference``, a test's counting wrapper) instead of
    the compiled kernel; None restores the kernel.  Returns the previous
    setting.  Plans cached so far call the compiled descriptors directly,
    so the plan caches are emptied; the ones made from now on call
    ``gemm``.  A prepacked plan object made before keeps its kernel."""
    global _reference_gemm
    previous, _reference_gemm = _reference_gemm, fn
    # the caches live in the modules above this one, which import it
    from . import api, planner
    planner.clear_cache()
    api._fast.clear()
    return previous


def reference_gemm():
    """The GEMM set by ``set_reference_gemm``, or None (the compiled kernel)."""
    return _reference_gemm


def prepare_gemm(dtype, m, n, k, batch=()):
    """A GemmCall: the descriptor validated once, then
    ``call(A, B, C, alpha=1.0, beta=0.0)`` per run (plans keep these)."""
    return _require().GemmCall(dtype, tuple(m), tuple(n), tuple(k), tuple(batch))


def prepare_nest(dtype, nin, loops, split=-1, threads=1, tile=0, block=0, short=False,
                 tile_row=0, conj=False, offsets=None, transposed=False, block_outer=False,
                 across=0):
    """A NestCall: ``out = sum prod(inputs)`` over ``loops`` (outer to inner,
    each (extent, stride per input, stride of the output), in elements),
    validated once; ``call(inputs_tuple, out)`` per run (see ep_nest.h).
    ``short``: 1 (or True): the two innermost loops run in the small-edge
    kernel; 2: the three innermost in the register-tile kernel;
    ``tile`` x ``tile_row`` (0: square): the tiles of the two innermost;
    ``transposed``: tiles of two inputs crossed in their unit strides run the
    transposing kernel (see ep_nest.h).
    ``block`` > 0: the row (``block_outer``: the loop around it) runs in
    blocks of that many elements, the block loop outermost.
    ``across`` > 0: the loop outside that many innermost loops (the block)
    runs in chunks across its elements, each iteration of the block one row
    kernel call over the chunk (see ep_nest.h).
    ``conj``: input 0 enters conjugated (a complex dot over one loop).
    ``offsets``: each operand's first element (inputs, then the output), in
    elements from its array's data pointer; zeros when None."""
    return _require().NestCall(dtype, nin, tuple(loops), split, threads, tile, block, short,
                               tile_row=tile_row, conj=conj, offsets=offsets,
                               transposed=transposed, block_outer=block_outer,
                               across=across)


def nest_runner(call, idx, mem_shape, perm, scalar):
    """A compiled whole-call runner for a one-nest plan (see _kernels.NestRunner)."""
    return _require().NestRunner(call, idx, mem_shape, perm, scalar)


def nest_plan_runner(call, idx, mem_shape, perm, scalar, templates):
    """nest_runner for reusable plan objects: called with the operands, which
    it checks against ``templates`` ((shape, byte strides) each) in C first
    (see _kernels.NestPlanRunner)."""
    return _require().NestPlanRunner(call, idx, mem_shape, perm, scalar, templates)


# the einsum hot path's helpers (see api.py): None without a build
call_key = getattr(_kernels, "call_key", None)
may_overlap = getattr(_kernels, "may_overlap", None)
operand_view = getattr(_kernels, "operand_view", None)


def permute_copy(src, dst):
    """dst[...] = src through any strides, cache-blocked (same shape and dtype)."""
    return _require().permute_copy(src, dst)


def copy_schedule(shape, src_strides, dst_strides, itemsize):
    """What permute_copy does for this shape and these element strides: kind,
    ISA, threads, non-temporal stores (see _kernels.copy_schedule)."""
    return _require().copy_schedule(tuple(shape), tuple(src_strides), tuple(dst_strides),
                                    int(itemsize))


def plan_runner(call, templates, a_idx, b_idx, out_mem_shape, perm, scalar):
    """A compiled whole-call runner for a one-GEMM plan (see _kernels.PlanRunner)."""
    return _require().PlanRunner(call, templates, a_idx, b_idx, out_mem_shape, perm, scalar)


def gemm_reference(A, B, C, m, n, k, batch=(), alpha=1.0, beta=0.0):
    """The same contract in plain numpy (test oracle): strided views, no C code."""
    def view(arr, axes):
        item = arr.itemsize
        shape = [e for e, _ in axes]
        strides = [s * item for _, s in axes]
        return np.lib.stride_tricks.as_strided(arr, shape=shape, strides=strides,
                                               writeable=arr is C)

    nb, nm, nn, nk = len(batch), len(m), len(n), len(k)
    a = view(A, [(e, sa) for e, sa, _, _ in batch] + [(e, sa) for e, sa, _ in m]
             + [(e, sa) for e, sa, _ in k])
    b = view(B, [(e, sb) for e, _, sb, _ in batch] + [(e, sb) for e, _, sb in k]
             + [(e, sb) for e, sb, _ in n])
    c = view(C, [(e, sc) for e, _, _, sc in batch] + [(e, sc) for e, _, sc in m]
             + [(e, sc) for e, _, sc in n])
    letters = iter(LETTERS)
    bl = "".join(next(letters) for _ in range(nb))
    ml = "".join(next(letters) for _ in range(nm))
    nl = "".join(next(letters) for _ in range(nn))
    kl = "".join(next(letters) for _ in range(nk))
    prod = np.einsum(f"{bl}{ml}{kl},{bl}{kl}{nl}->{bl}{ml}{nl}", a, b)
    if beta == 0:
        c[...] = alpha * prod
    else:
        c[...] = alpha * prod + beta * c
    return C


def tile(dtype):
    """(MR, NR) of the micro-kernel in use for dtype (float32 / float64)."""
    k = _require()
    return k.tile(k.isa(), dtype)


def probe_ukr_gflops(isa_name, dtype=np.float32):
    """Best GFLOP/s one core gets from ``isa_name``'s micro-kernel on panels
    in L1 (timed in C: the machine model's peak)."""
    return _require().probe_ukr_gflops(isa_name, dtype)


def stream_order(kind):
    """(order, GB/s one row at a time, GB/s four at a time) of the nest's
    row kernels of ``kind`` ('sums' and 'dots' (rows under 256 bytes), 'long
    sums', 'long dots', 'into one', 'strided') that stream an operand from memory
    (ep_nest.c measures it on those calls)."""
    return _require().stream_order(kind)


def load_width(kind="products"):
    """(way, GB/s whole, GB/s in halves) of the nest's contiguous rows of
    ``kind`` ('products' past L2, 'sums' past L3) on 64-byte vectors
    (ep_nest.c measures each kind on its calls)."""
    return _require().load_width(kind)


def isa():
    """Name of the micro-kernel set in use ("avx512", "avx2" or "generic")."""
    return _require().isa()


def available_isas():
    return _require().available_isas()


def kernel_config():
    """dict: isa, available ISAs, MR/NR per dtype, MC/KC/NC per dtype, caches, threads, build."""
    return _require().config()


def set_isa(name):
    """Use another kernel set this CPU supports (tests; like EINPLAN_ISA)."""
    _require().set_isa(name)


def set_num_threads(n):
    """Threads for the kernels: an integer >= 1 (TypeError for 1.5, ValueError
    for 0), capped at ``max_threads()`` with a RuntimeWarning."""
    _require().set_num_threads(n)


def max_threads():
    return _require().max_threads()


def _check_env_threads():
    """Warn once about an EINPLAN_NUM_THREADS the C side ignores or caps."""
    import os
    import warnings
    env = os.environ.get("EINPLAN_NUM_THREADS", "").strip()
    if not env or _kernels is None:
        return
    try:
        n = int(env)
    except ValueError:
        n = 0
    if n < 1:
        warnings.warn(f"EINPLAN_NUM_THREADS={env!r} is not an integer >= 1; ignored",
                      RuntimeWarning, stacklevel=2)
    elif n > _kernels.max_threads():
        warnings.warn(f"EINPLAN_NUM_THREADS={env} capped at {_kernels.max_threads()}",
                      RuntimeWarning, stacklevel=2)


def get_num_threads():
    return _require().get_num_threads()


_check_env_threads()


def in_forked_child():
    """True in a forked child that runs single-threaded (the OpenMP runtime's
    threads could not be released before the fork); False without a build."""
    return _kernels is not None and _kernels.in_forked_child()
