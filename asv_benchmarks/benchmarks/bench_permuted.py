"""Permuted contractions: operands whose contracted or kept axes are not where a
transpose+GEMM library wants them, so it copies them first.  Shapes of
../shared/bench/compare.py ("permuted").

Planner paths (one gemm step each; packing reads the strided layout directly):
  abcd,dbef->aecf 48^4   m=(a:48,c:48) n=(ef:2304 merged) k=(b:48,d:48): two-axis
                         m and k groups read through block-scatter, no copies
  ikj,jlk->il            m=(i:512) n=(l:512) k=(k:64,j:64): k group of two axes
                         with different strides in A and B
  acb,cd->adb            swapped: A=W, m=(d:256), n=(a:64,b:256), k=(c:256): the
                         output's unit-stride axis b goes to n
  bik,bjk->bij           batch=(b:64) m=(i) n=(j) k=(k): B read "transposed" by
                         the packer (numpy: matmul(A, B.mT))
"""
import numpy as np

from .common import (EINPLAN, HAND, IMPLS, OE, OPT, ThreadsMixin, THREADS, make_call, rnd, temp_bytes, warm)

CASES = {
    # name: (spec, shapes, dtype, hand-written numpy)
    "abcd,dbef->aecf 48^4 f32": ("abcd,dbef->aecf", [(48,) * 4] * 2, np.float32,
                                 lambda A, B: np.tensordot(A, B, axes=((3, 1), (0, 1))).transpose(0, 2, 1, 3)),
    "abcd,dbef->aecf 48^4 f64": ("abcd,dbef->aecf", [(48,) * 4] * 2, np.float64,
                                 lambda A, B: np.tensordot(A, B, axes=((3, 1), (0, 1))).transpose(0, 2, 1, 3)),
    "ikj,jlk->il f32": ("ikj,jlk->il", [(512, 64, 64), (64, 512, 64)], np.float32,
                        lambda A, B: np.tensordot(A, B, axes=((1, 2), (2, 0)))),
    "ikj,jlk->il f64": ("ikj,jlk->il", [(512, 64, 64), (64, 512, 64)], np.float64,
                        lambda A, B: np.tensordot(A, B, axes=((1, 2), (2, 0)))),
    "acb,cd->adb f32": ("acb,cd->adb", [(64, 256, 256), (256, 256)], np.float32,
                        lambda A, W: np.matmul(W.T, A)),
    "bik,bjk->bij f32": ("bik,bjk->bij", [(64, 128, 128)] * 2, np.float32,
                         lambda A, B: np.matmul(A, B.transpose(0, 2, 1))),
}


def case_call(case, impl):
    spec, shapes, dtype, hand = CASES[case]
    A, B = (rnd(s, dtype, seed=10 + i) for i, s in enumerate(shapes))
    return spec, [A, B], make_call(impl, spec, [A, B], hand=lambda: hand(A, B))


class Permuted(ThreadsMixin):
    """time per call (GFLOP/s = 2 * product of extents / time)."""
    params = [list(CASES), IMPLS, THREADS]
    param_names = ["case", "impl", "threads"]
    timeout = 300

    def setup(self, case, impl, threads):
        spec, ops, self.fn = case_call(case, impl)
        self.pin(threads)
        warm(self.fn, spec, [o.shape for o in ops])

    def time_permuted(self, case, impl, threads):
        self.fn()


class PermutedMemory:
    """peakmem: the process's peak RSS while calling (operands included);
    a peer that transposes operands into copies peaks higher."""
    params = [list(CASES), [EINPLAN, OPT, HAND, OE]]
    param_names = ["case", "impl"]
    timeout = 300

    def setup(self, case, impl):
        spec, ops, self.fn = case_call(case, impl)

    def peakmem_permuted(self, case, impl):
        self.fn()


class PermutedTemporaries:
    """Bytes numpy allocates during one call beyond the result (tracemalloc);
    einplan should stay ~0: it packs from the strided operands."""
    params = [list(CASES), [EINPLAN, OPT, HAND, OE]]
    param_names = ["case", "impl"]
    timeout = 300

    def setup(self, case, impl):
        spec, ops, self.fn = case_call(case, impl)
        self.result_nbytes = np.asarray(self.fn()).nbytes

    def track_temp_bytes(self, case, impl):
        return temp_bytes(self.fn, self.result_nbytes)

    track_temp_bytes.unit = "bytes"
