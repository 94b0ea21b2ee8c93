"""Complex contractions, complex64 and complex128, against numpy's best.

Planner path: one pairwise gemm step run by the 1m method -- one real GEMM of
m x 2n x 2k on the real micro-kernel, A and C through their float views, B
packed as 2x2 real blocks [[re, im], [-im, re]] (8 real flops per complex
multiply-add, as BLAS counts them).

  'bij,bjk->bik' (64,96,96): 64 batched GEMMs -- hand-written: numpy.matmul
  'ij,jk->ik' 2048^2: the kernel's rate -- hand-written: numpy.matmul
  'abcd,dbef->aecf' 32^4: multi-axis m, n and k groups packed by block
        scatter (no transposed copies) -- no hand-written form
  tract 'bij,jk->bik' A=(77,6,512) W=(512,1536), complex64: b and i merged
        into one m of 462 -- hand-written: numpy's merged reshape@
  'bij,bjk->bik' (64,16,16) and (256,8,8): batches of tiny GEMMs on the smm
        kernel (B packed per batch index as its 2x2 real blocks into an
        L1-sized buffer, A and C read in place) -- hand-written: numpy.matmul

ComplexVdot: numpy.vdot (conjugating dot) of 2**20 complex elements --
einplan.vdot against numpy.vdot.
"""
import numpy as np

from .common import (EINPLAN, HAND, OPT, ThreadsMixin, THREADS, best_seconds, einplan,
                     make_call, peak_gflops, warm)

DTYPES = ["complex64", "complex128"]
IMPLS = [EINPLAN, OPT, HAND]


def _merged(A, W):
    return (A.reshape(-1, A.shape[-1]) @ W).reshape(A.shape[:-1] + W.shape[-1:])


# the cheapest case first: smoke.py runs the first parameter set
CASES = {
    "bij,bjk->bik 64x96x96": ("bij,bjk->bik", [(64, 96, 96), (64, 96, 96)], np.matmul),
    "ij,jk->ik 2048": ("ij,jk->ik", [(2048, 2048), (2048, 2048)], np.matmul),
    "abcd,dbef->aecf 32": ("abcd,dbef->aecf", [(32,) * 4, (32,) * 4], None),
    "tract bij,jk->bik 77x6x512x1536": ("bij,jk->bik", [(77, 6, 512), (512, 1536)], _merged),
    "bij,bjk->bik 64x16x16": ("bij,bjk->bik", [(64, 16, 16), (64, 16, 16)], np.matmul),
    "bij,bjk->bik 256x8x8": ("bij,bjk->bik", [(256, 8, 8), (256, 8, 8)], np.matmul),
}


def crnd(shape, dtype, seed):
    """Uniform [-1, 1) real and imaginary parts, reproducible per shape."""
    rng = np.random.default_rng(seed + int(np.prod(shape)) % 9973)
    x = np.empty(shape, dtype)
    x.real = rng.random(shape) * 2 - 1
    x.imag = rng.random(shape) * 2 - 1
    return x


def flops(case):
    spec, shapes, _ = CASES[case]
    sizes = {}
    for term, shape in zip(spec.split("->")[0].split(","), shapes):
        sizes.update(zip(term, shape))
    return 8.0 * np.prod([float(e) for e in sizes.values()])   # complex multiply-add: 8 flops


def case_call(case, dtype, impl):
    if case.startswith("tract") and dtype != "complex64":
        raise NotImplementedError("the tract case is complex64 only")
    spec, shapes, hand = CASES[case]
    ops = [crnd(s, dtype, 40 + i) for i, s in enumerate(shapes)]
    return make_call(impl, spec, ops, hand=None if hand is None else (lambda: hand(*ops))), spec, ops


class Complex(ThreadsMixin):
    """time per call."""
    params = [list(CASES), DTYPES, IMPLS, THREADS]
    param_names = ["case", "dtype", "impl", "threads"]
    timeout = 300
    repeat = (1, 5, 20.0)

    def setup(self, case, dtype, impl, threads):
        self.fn, spec, ops = case_call(case, dtype, impl)
        self.pin(threads)
        warm(self.fn, spec, [o.shape for o in ops])

    def time_complex(self, case, dtype, impl, threads):
        self.fn()


class ComplexPercentOfPeak(ThreadsMixin):
    """einplan's GFLOP/s (8 real flops per complex multiply-add) as a share of
    the real-domain FMA peak estimate (common.peak_gflops of the float dtype)."""
    params = [list(CASES), DTYPES, THREADS]
    param_names = ["case", "dtype", "threads"]
    timeout = 300

    def setup(self, case, dtype, threads):
        self.fn, _, _ = case_call(case, dtype, EINPLAN)
        self.pin(threads)
        self.fn()

    def track_percent_of_peak(self, case, dtype, threads):
        real = np.float32 if dtype == "complex64" else np.float64
        gflops = flops(case) / best_seconds(self.fn) / 1e9
        return 100.0 * gflops / peak_gflops(real, threads)

    track_percent_of_peak.unit = "%"


class ComplexVdot(ThreadsMixin):
    """numpy.vdot (the first operand conjugated) on 2**20 elements: time per call."""
    params = [DTYPES, [EINPLAN, HAND], THREADS]
    param_names = ["dtype", "impl", "threads"]
    timeout = 120

    def setup(self, dtype, impl, threads):
        a, b = crnd((1 << 20,), dtype, 50), crnd((1 << 20,), dtype, 51)
        if impl == EINPLAN:
            if einplan is None:
                raise NotImplementedError("einplan is not importable")
            self.fn = lambda: einplan.vdot(a, b)
        else:
            self.fn = lambda: np.vdot(a, b)
        self.pin(threads)
        self.fn()

    def time_vdot(self, dtype, impl, threads):
        self.fn()
