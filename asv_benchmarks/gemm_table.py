"""The packed kernel against numpy.matmul (OpenBLAS), one process, medians.

    python asv_benchmarks/gemm_table.py             # 1 and 2 threads, every row
    python asv_benchmarks/gemm_table.py --threads 1 --quick

Rows (issue 2's benchmark):
  * square GEMM 64 .. 4096, float32 and float64 (ratio = numpy time / einplan time);
  * 2048^3 with A a permuted, non-contiguous view -- a transposed 3-D tensor
    whose m group has two axes that cannot merge -- against einplan on the
    contiguous A (goal >= 0.95x: packing reads the view, nothing is copied);
  * thin shapes: m = 6, 16 with k = 512, n = 1536 (the tract weights).
Threads are pinned before numpy loads (OPENBLAS/OMP/EINPLAN_NUM_THREADS) and
again with threadpoolctl / einplan.set_num_threads for each thread count.
"""
import argparse
import os
import statistics
import sys
import time

ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument("--threads", default="1,2", help="thread counts, comma-separated (default 1,2)")
ap.add_argument("--quick", action="store_true", help="fewer repeats, sizes up to 2048")
args = ap.parse_args()
THREADS = [int(t) for t in args.threads.split(",")]
for var in ("OMP", "OPENBLAS", "MKL", "EINPLAN"):
    os.environ[f"{var}_NUM_THREADS"] = str(max(THREADS))

import numpy as np  # noqa: E402

import einplan  # noqa: E402

try:
    from threadpoolctl import threadpool_limits
except ImportError:  # pragma: no cover
    threadpool_limits = None


def median_time(fn, budget):
    fn()
    t0 = time.perf_counter()
    fn()
    one = time.perf_counter() - t0
    reps = max(3, min(50, int(budget / max(one, 1e-6))))
    samples = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def pair(fa, fb, budget):
    """Interleave two rows (A B A B ...) so drift hits both alike; medians."""
    ta, tb = [], []
    for _ in range(3):
        ta.append(median_time(fa, budget / 3))
        tb.append(median_time(fb, budget / 3))
    return statistics.median(ta), statistics.median(tb)


def main():
    rng = np.random.default_rng(0)
    budget = 0.3 if args.quick else 1.0
    sizes = [64, 128, 256, 512, 1024, 2048] + ([] if args.quick else [4096])
    print(f"einplan {einplan.__version__}, kernels {einplan.isa()}, numpy {np.__version__}")
    print(f"{'case':40s} {'thr':>3s} {'einplan':>11s} {'peer':>11s} {'GFLOP/s':>8s} {'ratio':>6s}")
    for nt in THREADS:
        einplan.set_num_threads(nt)
        ctx = threadpool_limits(limits=nt) if threadpool_limits else None
        try:
            for dt in (np.float64, np.float32):
                name = np.dtype(dt).name
                for n in sizes:
                    A, B = rng.standard_normal((n, n)).astype(dt), rng.standard_normal((n, n)).astype(dt)
                    te, tn = pair(lambda: einplan.matmul(A, B), lambda: A @ B, budget)
                    print(f"{'gemm ' + str(n) + '^3 ' + name:40s} {nt:3d} {te * 1e3:9.3f}ms "
                          f"{tn * 1e3:9.3f}ms {2 * n ** 3 / te / 1e9:8.1f} {tn / te:6.3f}")
                # permuted view: m = (a, b) with b outer in memory -> two axes, no merge
                n = 2048
                T = rng.standard_normal((32, 64, n)).astype(dt)
                Av = T.transpose(1, 0, 2)               # (64, 32, n) view, not contiguous
                Ac = np.ascontiguousarray(Av).reshape(n, n)
                B = rng.standard_normal((n, n)).astype(dt)
                tv, tc = pair(lambda: einplan.einsum("abk,kn->abn", Av, B),
                              lambda: einplan.einsum("mk,kn->mn", Ac, B), budget)
                print(f"{'permuted-view A 2048^3 ' + name + ' (vs contig)':40s} {nt:3d} {tv * 1e3:9.3f}ms "
                      f"{tc * 1e3:9.3f}ms {2 * n ** 3 / tv / 1e9:8.1f} {tc / tv:6.3f}")
                for m in (6, 16):
                    A = rng.standard_normal((m, 512)).astype(dt)
                    W = rng.standard_normal((512, 1536)).astype(dt)
                    te, tn = pair(lambda: einplan.matmul(A, W), lambda: A @ W, budget)
                    print(f"{f'thin m={m} k=512 n=1536 ' + name:40s} {nt:3d} {te * 1e3:9.3f}ms "
                          f"{tn * 1e3:9.3f}ms {2 * m * 512 * 1536 / te / 1e9:8.1f} {tn / te:6.3f}")
        finally:
            if ctx is not None:
                ctx.unregister()
    return 0


if __name__ == "__main__":
    sys.exit(main())
