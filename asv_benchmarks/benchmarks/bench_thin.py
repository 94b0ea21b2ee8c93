"""Batched and thin shapes: where a GEMM-only library leaves speed behind.

  BatchedMatvec   'bij,bj->bi' b=i=j=256 f32 (compare.py "matvec")
  ThinGemm        'ij,jk->ik' m=6 or 16, k=512, n=1536 f32 (one tract row block)
  BatchedSmall    'bij,bjk->bik' many small matrices f32
"""
import numpy as np

from .common import IMPLS, ThreadsMixin, THREADS, make_call, rnd, warm


class BatchedMatvec(ThreadsMixin):
    """Planner path: kind gemv, swapped (A=the matrices), batch=(b:256),
    m=() n=(i:256) k=(j:256): memory-bound, one pass over A; threads split
    the batch loop.  Hand-written: np.matmul(A, x[..., None])[..., 0]."""
    params = [IMPLS, THREADS]
    param_names = ["impl", "threads"]

    def setup(self, impl, threads):
        A, x = rnd((256, 256, 256), np.float32, seed=20), rnd((256, 256), np.float32, seed=21)
        self.fn = make_call(impl, "bij,bj->bi", [A, x], hand=lambda: np.matmul(A, x[..., None])[..., 0])
        self.pin(threads)
        warm(self.fn)

    def time_matvec(self, impl, threads):
        self.fn()


class ThinGemm(ThreadsMixin):
    """Planner path: kind gemm with a thin m=(i:6|16) (at most two MR blocks),
    n=(k:1536), k=(j:512): B's packing dominates, threads split n (jc/jr)."""
    params = [[6, 16], IMPLS, THREADS]
    param_names = ["m", "impl", "threads"]

    def setup(self, m, impl, threads):
        A, W = rnd((m, 512), np.float32, seed=22), rnd((512, 1536), np.float32, seed=23)
        self.fn = make_call(impl, "ij,jk->ik", [A, W], hand=lambda: A @ W)
        self.pin(threads)
        warm(self.fn)

    def time_thin(self, m, impl, threads):
        self.fn()


class BatchedSmall(ThreadsMixin):
    """Planner path: kind gemm with a batch group, batch=(b) m=(i) n=(k) k=(j),
    each matrix a few micro-tiles: the narrow in-place path (smm), threads over
    batches or rows; the last shape is one narrow GEMM (n = 32) of many rows.
    Hand-written: np.matmul."""
    params = [["4000x4x4x4", "256x16x16x16", "1000x32x32x32", "64x48x48x48", "1x10000x512x32"],
              IMPLS, THREADS]
    param_names = ["b x m x k x n", "impl", "threads"]

    def setup(self, shape, impl, threads):
        b, m, k, n = (int(v) for v in shape.split("x"))
        A, B = rnd((b, m, k), np.float32, seed=24), rnd((b, k, n), np.float32, seed=25)
        self.fn = make_call(impl, "bij,bjk->bik", [A, B], hand=lambda: np.matmul(A, B))
        self.pin(threads)
        warm(self.fn)

    def time_batched_small(self, shape, impl, threads):
        self.fn()
