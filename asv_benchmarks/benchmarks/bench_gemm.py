"""Kernel GEMM: 'ij,jk->ik' on square matrices, float32 and float64, against
numpy.matmul (OpenBLAS) and the einsum peers.

Planner path: one pairwise step, kind gemm, m=(i) n=(k) k=(j), nothing to
merge, no swap (C is row-major so n is its unit-stride axis); the packed BLIS
five loops with the micro-kernel einplan.isa() chose.
"""
import numpy as np

from .common import (EINPLAN, HAND, IMPLS, ThreadsMixin, THREADS, best_seconds, explain_percent_of_peak,
                     make_call, peak_gflops, rnd, warm)

SPEC = "ij,jk->ik"
DTYPES = ["float32", "float64"]
# Above this size only einplan and numpy.matmul run: numpy.einsum(optimize=True)
# and opt_einsum hand the same call to the same BLAS, and each call is seconds.
PEERS_UP_TO = 1024


def _operands(n, dtype):
    return rnd((n, n), dtype, seed=1), rnd((n, n), dtype, seed=2)


class GEMM(ThreadsMixin):
    """time per call; GFLOP/s = 2 n^3 / time."""
    params = [[64, 256, 1024, 4096], DTYPES, IMPLS, THREADS]
    param_names = ["n", "dtype", "impl", "threads"]
    timeout = 300
    repeat = (1, 5, 20.0)

    def setup(self, n, dtype, impl, threads):
        if n > PEERS_UP_TO and impl not in (EINPLAN, HAND):
            raise NotImplementedError("large sizes: einplan and numpy.matmul only")
        A, B = _operands(n, dtype)
        self.fn = make_call(impl, SPEC, [A, B], hand=lambda: np.matmul(A, B))
        self.pin(threads)
        warm(self.fn, SPEC, [A.shape, B.shape])

    def time_gemm(self, n, dtype, impl, threads):
        self.fn()


class GEMMRate(ThreadsMixin):
    """GFLOP/s of einplan.einsum and numpy.matmul (best call of a few)."""
    params = [[256, 2048], DTYPES, [EINPLAN, HAND], THREADS]
    param_names = ["n", "dtype", "impl", "threads"]
    timeout = 300

    def setup(self, n, dtype, impl, threads):
        A, B = _operands(n, dtype)
        self.fn = make_call(impl, SPEC, [A, B], hand=lambda: np.matmul(A, B))
        self.pin(threads)
        self.fn()

    def track_gflops(self, n, dtype, impl, threads):
        return 2 * n ** 3 / best_seconds(self.fn) / 1e9

    track_gflops.unit = "GFLOP/s"


class GEMMPercentOfPeak(ThreadsMixin):
    """einplan's share of the machine's peak on a large GEMM.

    From einplan.explain(..., measure=True) when it reports one; otherwise the
    measured GFLOP/s over common.peak_gflops (an estimate from ISA, FMA pipes,
    nominal clock and thread count).
    """
    params = [DTYPES, THREADS]
    param_names = ["dtype", "threads"]
    timeout = 300
    N = 2048

    def setup(self, dtype, threads):
        self.A, self.B = _operands(self.N, dtype)
        self.fn = make_call(EINPLAN, SPEC, [self.A, self.B])
        self.pin(threads)
        self.fn()

    def track_percent_of_peak(self, dtype, threads):
        pct = explain_percent_of_peak(SPEC, [self.A, self.B])
        if pct is not None:
            return pct
        gflops = 2 * self.N ** 3 / best_seconds(self.fn) / 1e9
        return 100.0 * gflops / peak_gflops(dtype, threads)

    track_percent_of_peak.unit = "% of peak"
