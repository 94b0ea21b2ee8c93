"""The five failures of mature systems that DESIGN.md's table names, one class
each, with the shapes of ../shared/bench/compare.py.

  Tract          merge outer axes into one big m (sonos/tract#830)
  Jax            orientation: the output is written in the caller's layout (jax-ml/jax#19327)
  TvmPermuteOut  a pure permutation into out=, no transposed temporaries (apache/tvm#4523)
  IreeFringe     fringe tiles handled in the kernel: no padding, no memset of out (IREE)
  WebnnPrepacked constant weights packed once by einplan.plan(..., constants=[1]) (webnn#86)
  FieldTemporaries  track_temp_bytes: bytes numpy allocates beyond the result, per case
"""
import numpy as np

from .common import (EINPLAN, HAND, IMPLS, OE, OPT, ThreadsMixin, THREADS, make_call, need, need_attr, oe, rnd,
                     temp_bytes, warm)

STACKED = "numpy.matmul(A,W) stacked"

TRACT_SPEC = "bij,jk->bik"
JAX_SPEC = "ab,...b->...a"
TVM_SPEC, TVM_PERM, TVM_SHAPE = "ncabhw->nchawb", (0, 1, 4, 2, 5, 3), (1, 32, 2, 2, 360, 640)
IREE_SPEC = "ij,jk->ik"
IREE_SHAPES = ["1000x999x1001", "97x1031x61"]  # m x k x n, none a multiple of MR or NR


def tract_operands(bs):
    return rnd((77, bs, 512), np.float32, seed=3), rnd((512, 1536), np.float32, seed=4)


class Tract(ThreadsMixin):
    """'bij,jk->bik' A=(77,bs,512) W=(512,1536) f32.

    Planner path: roles b,i -> m, j -> k, k -> n; layout merges b and i (A and
    C are contiguous over them) into one m = 77*bs, so ONE gemm step runs,
    m=(bi:462) for bs=6.  numpy.matmul(A, W) instead loops 77 small GEMMs.
    """
    params = [[1, 6], IMPLS + [STACKED], THREADS]
    param_names = ["bs", "impl", "threads"]

    def setup(self, bs, impl, threads):
        A, W = tract_operands(bs)
        if impl == STACKED:
            self.fn = lambda: np.matmul(A, W)
        else:
            self.fn = make_call(impl, TRACT_SPEC, [A, W],
                                hand=lambda: (A.reshape(-1, 512) @ W).reshape(77, bs, 1536))
        self.pin(threads)
        warm(self.fn)

    def time_tract(self, bs, impl, threads):
        self.fn()


class Jax(ThreadsMixin):
    """'ab,...b->...a' w=(600,821) a=(32,100,821) f32, output C-contiguous.

    Planner path: orientation (step 2e).  The second operand becomes the
    kernel's A (rows, m=(...:3200) merged over both ellipsis axes) and w its
    B (n=(a:600)), "swapped", so n is the output's unit-stride axis and the
    kernel writes C in place: no transpose afterwards.
    """
    params = [IMPLS, THREADS]
    param_names = ["impl", "threads"]

    def setup(self, impl, threads):
        w, a = rnd((600, 821), np.float32, seed=5), rnd((32, 100, 821), np.float32, seed=6)
        self.fn = make_call(impl, JAX_SPEC, [w, a], hand=lambda: (a.reshape(-1, 821) @ w.T).reshape(32, 100, 600))
        self.pin(threads)
        warm(self.fn)

    def time_jax(self, impl, threads):
        self.fn()

    def track_output_c_contiguous(self, impl, threads):
        """1 when the result is C-contiguous (the layout a caller of dot_general asks for)."""
        return int(np.asarray(self.fn()).flags.c_contiguous)

    track_output_c_contiguous.unit = "bool"


class TvmPermuteOut(ThreadsMixin):
    """'ncabhw->nchawb' x=(1,32,2,2,360,640) f32 into a preallocated out=.

    Planner path: single operand, no sum -> one copy step from the permuted
    strided view straight into out (kind copy); nothing is transposed into a
    temporary first.  Hand-written: np.copyto(out, x.transpose(perm)).
    """
    params = [IMPLS, THREADS]
    param_names = ["impl", "threads"]

    def setup(self, impl, threads):
        x = rnd(TVM_SHAPE, np.float32, seed=7)
        out = np.empty(x.transpose(TVM_PERM).shape, np.float32)
        self.fn = make_call(impl, TVM_SPEC, [x], hand=lambda: np.copyto(out, x.transpose(TVM_PERM)), out=out)
        self.pin(threads)
        warm(self.fn)

    def time_permute_out(self, impl, threads):
        self.fn()


def iree_operands(shape):
    m, k, n = (int(v) for v in shape.split("x"))
    return rnd((m, k), np.float32, seed=8), rnd((k, n), np.float32, seed=9), np.empty((m, n), np.float32)


class IreeFringe(ThreadsMixin):
    """'ij,jk->ik' f32 with m, k, n not multiples of any MR, NR or KC, into out=.

    Planner path: one gemm step; the fringe of m % MR and n % NR is
    zero-padded inside the packed panels only and written to C through a small
    tile; out= is fully overwritten so it is never cleared (beta = 0 never
    reads C).  FieldTemporaries tracks that no padded copy is made.
    """
    params = [IREE_SHAPES, IMPLS, THREADS]
    param_names = ["m x k x n", "impl", "threads"]

    def setup(self, shape, impl, threads):
        A, B, out = iree_operands(shape)
        self.fn = make_call(impl, IREE_SPEC, [A, B], hand=lambda: np.matmul(A, B, out=out), out=out)
        self.pin(threads)
        warm(self.fn)

    def time_fringe(self, shape, impl, threads):
        self.fn()


PLAN_CONST = "einplan.plan(constants=[1])"
OE_CONST = "opt_einsum.contract_expression(constants=[1])"


class WebnnPrepacked(ThreadsMixin):
    """'bij,jk->bik' A=(77,1,512) with the weight W=(512,1536) a constant.

    Planner path: einplan.plan(spec, A.shape, W, constants=[1]) packs W once
    into the kernel's B panels (prepack); each call packs only A and runs the
    merged gemm step m=(bi:77).  Skipped (n/a) while einplan has no plan().
    """
    params = [[PLAN_CONST, EINPLAN, HAND, STACKED, OE_CONST], THREADS]
    param_names = ["impl", "threads"]

    def setup(self, impl, threads):
        A, W = tract_operands(1)
        if impl == PLAN_CONST:
            p = need_attr("plan")(TRACT_SPEC, A.shape, W, constants=[1])
            self.fn = lambda: p(A)
        elif impl == STACKED:
            self.fn = lambda: np.matmul(A, W)
        elif impl == OE_CONST:
            expr = need(oe, "opt_einsum").contract_expression(TRACT_SPEC, A.shape, W, constants=[1])
            self.fn = lambda: expr(A)
        else:
            self.fn = make_call(impl, TRACT_SPEC, [A, W], hand=lambda: (A.reshape(-1, 512) @ W).reshape(77, 1, 1536))
        self.pin(threads)
        warm(self.fn)

    def time_prepacked(self, impl, threads):
        self.fn()


def _field_case(case):
    """(spec, operands, hand-written numpy, out or None) of one field case."""
    if case.startswith("tract"):
        A, W = tract_operands(6)
        return TRACT_SPEC, [A, W], lambda: (A.reshape(-1, 512) @ W).reshape(77, 6, 1536), None
    if case == "jax":
        w, a = rnd((600, 821), np.float32, seed=5), rnd((32, 100, 821), np.float32, seed=6)
        return JAX_SPEC, [w, a], lambda: (a.reshape(-1, 821) @ w.T).reshape(32, 100, 600), None
    if case == "tvm permute-out":
        x = rnd(TVM_SHAPE, np.float32, seed=7)
        out = np.empty(x.transpose(TVM_PERM).shape, np.float32)
        return TVM_SPEC, [x], lambda: np.copyto(out, x.transpose(TVM_PERM)), out
    A, B, out = iree_operands(case.split()[-1])
    return IREE_SPEC, [A, B], lambda: np.matmul(A, B, out=out), out


class FieldTemporaries:
    """Bytes numpy allocates during one call beyond the result (tracemalloc).

    Planner path: every case above; einplan's plans create no intermediate
    buffer and never copy an operand, so its number should stay ~0 (a few
    hundred bytes of Python objects), while transpose-then-GEMM peers show
    their copies.  einplan's C packing buffers are not counted (see
    common.temp_bytes).
    """
    params = [["tract bs=6", "jax", "tvm permute-out", "iree fringe " + IREE_SHAPES[0]], [EINPLAN, OPT, HAND, OE]]
    param_names = ["case", "impl"]

    def setup(self, case, impl):
        spec, ops, hand, self.out = _field_case(case)
        self.fn = make_call(impl, spec, ops, hand=hand, out=self.out)
        res = self.fn()  # plan caches, BLAS buffers
        self.result_nbytes = 0 if self.out is not None else np.asarray(res).nbytes

    def track_temp_bytes(self, case, impl):
        return temp_bytes(self.fn, self.result_nbytes)

    track_temp_bytes.unit = "bytes"
