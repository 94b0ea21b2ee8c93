"""einplan.dask.einsum vs dask.array.einsum on one dask.distributed LocalCluster.

    python docs/bench_dask.py                 # 2 worker processes x 1 thread, loopback
    python docs/bench_dask.py --repeat 5 --workers 2

Both sides run the same graph shape (same chunks, same tree reduction over the
chunks of the contracted index); only the per-block kernel differs: einplan's
packed kernels vs numpy.einsum.  dask.array.einsum is timed twice: with its
default ``optimize=False`` (numpy's C einsum loop per block, what a plain
``da.einsum`` call does) and with ``optimize=True`` (numpy routes the block
product to BLAS through tensordot + transpose copies where it can).

Inputs are generated and persisted on the workers first; each timed run
persists the result on the cluster and waits for it (no transfer to the
client), with fresh keys every run, one untimed warm-up run per variant, and
the variants run in turn (round robin) so changing machine load hits all alike.  The nanny sets OMP_NUM_THREADS=OPENBLAS_NUM_THREADS=1 in each worker,
so einplan and OpenBLAS both use one thread per worker.  Prints the median of
``--repeat`` runs per case and the ratio plain-dask / einplan (> 1: einplan
faster).
"""
from __future__ import annotations

import argparse
import statistics
import time

import dask.array as da
import numpy as np
from dask.graph_manipulation import clone
from distributed import Client, LocalCluster, wait

import einplan
import einplan.dask

# name, subscripts, [(shape, chunks) per operand]
CASES = [
    # GEMM, k in 4 chunks: 16 output blocks, 64 block products + a reduction pass
    ("matmul k chunked", "ik,kj->ij",
     [((1536, 1536), (384, 384)), ((1536, 1536), (384, 384))]),
    # the same GEMM with the contracted index in one chunk: no reduction pass
    ("matmul k one chunk", "ik,kj->ij",
     [((1536, 1536), (384, -1)), ((1536, 1536), (-1, 384))]),
    # permuted tensor contraction (DESIGN.md's abcd,dbef->aecf), chunked along a, f
    ("abcd,dbef->aecf", "abcd,dbef->aecf",
     [((48, 24, 32, 64), (12, -1, -1, -1)), ((64, 24, 32, 48), (-1, -1, -1, 12))]),
    # batched matmul with an outer axis to merge (the tract case), chunked along b
    ("bij,jk->bik", "bij,jk->bik",
     [((64, 96, 512), (16, -1, -1)), ((512, 768), (-1, -1))]),
]


def _run_once(client, build, ops):
    x = clone(build(), omit=ops)    # fresh keys: never reuse a result still in memory
    t0 = time.perf_counter()
    x = client.persist(x)
    wait(x)
    elapsed = time.perf_counter() - t0
    client.cancel(x)
    return elapsed


def _medians(client, builds, ops, repeat):
    """Median wall time of each of ``builds`` computed on the cluster.  One
    untimed warm-up run each, then the variants take turns (round robin), so a
    change in machine load hits all of them alike."""
    for build in builds:
        _run_once(client, build, ops)
    times = [[] for _ in builds]
    for _ in range(repeat):
        for t, build in zip(times, builds):
            t.append(_run_once(client, build, ops))
    return [statistics.median(t) for t in times]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)

    cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                           host="127.0.0.1", dashboard_address=":0", silence_logs=40)
    client = Client(cluster)
    try:
        threads = set(client.run(einplan.get_num_threads).values())
        print(f"LocalCluster: {args.workers} worker processes x 1 thread; einplan threads "
              f"per worker {sorted(threads)}; isa {einplan.isa()}; median of {args.repeat}")
        print(f"{'case':22s} {'einplan.dask':>12s} {'da optimize=False':>18s} "
              f"{'da optimize=True':>17s} {'ratio F':>8s} {'ratio T':>8s}")
        rng = da.random.default_rng(0)
        for name, subs, specs in CASES:
            ops = [rng.standard_normal(shape, chunks=chunks) for shape, chunks in specs]
            ops = client.persist(ops)
            wait(ops)
            # correctness first (a cheap check on a slice of the result)
            a = einplan.dask.einsum(subs, *ops)
            b = da.einsum(subs, *ops, optimize=True)
            sl = tuple(slice(0, 8) for _ in range(a.ndim))
            np.testing.assert_allclose(a[sl].compute(), b[sl].compute(), rtol=1e-9, atol=1e-9)
            t_ep, t_f, t_t = _medians(client, [
                lambda: einplan.dask.einsum(subs, *ops),
                lambda: da.einsum(subs, *ops),
                lambda: da.einsum(subs, *ops, optimize=True)], ops, args.repeat)
            print(f"{name:22s} {t_ep:11.3f}s {t_f:17.3f}s {t_t:16.3f}s "
                  f"{t_f / t_ep:7.2f}x {t_t / t_ep:7.2f}x", flush=True)
    finally:
        client.close()
        cluster.close()


if __name__ == "__main__":
    main()
