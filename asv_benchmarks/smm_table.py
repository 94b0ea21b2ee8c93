"""Batched small matmuls 'bij,bjk->bik' against numpy.matmul, one process.

    python asv_benchmarks/smm_table.py               # 1 thread, every row
    python asv_benchmarks/smm_table.py --threads 2

Issue 5's "batched small matmuls (4x4 .. 32x32) at least as fast as
numpy.matmul", and the narrow in-place path (smm) up to 64^3: each row is
about 8 MFLOP of batches (and one small call of a few batches), out=
preallocated for both.  The two calls alternate within each repeat, so a
slow spell of this shared machine hits both; ratio = numpy time / einplan
time of the medians.
"""
import argparse
import os
import time

ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument("--threads", type=int, default=1, help="threads for both (default 1)")
ap.add_argument("--repeats", type=int, default=41, help="alternating repeats (default 41)")
args = ap.parse_args()
for var in ("OMP", "OPENBLAS", "MKL", "EINPLAN"):
    os.environ[f"{var}_NUM_THREADS"] = str(args.threads)

import numpy as np  # noqa: E402

import einplan  # noqa: E402

# (n, batches): ~8 MFLOP per call, and a few small calls
ROWS = [(4, 62500), (8, 7812), (12, 2314), (16, 976), (16, 50), (24, 289), (32, 122),
        (32, 20), (48, 36), (64, 15), (64, 4)]


def paired_medians(f, g, reps):
    f(), g()
    tf, tg = [], []
    for _ in range(reps):
        t = time.perf_counter()
        f()
        tf.append(time.perf_counter() - t)
        t = time.perf_counter()
        g()
        tg.append(time.perf_counter() - t)
    return sorted(tf)[reps // 2], sorted(tg)[reps // 2]


def main():
    einplan.set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    print(f"einplan {einplan.__version__} ({einplan.isa()}), numpy {np.__version__}, "
          f"{args.threads} thread(s); ratio = numpy.matmul / einplan.einsum")
    print(f"{'dtype':8} {'n':>4} {'batches':>8} {'einplan':>11} {'numpy':>11} {'ratio':>6}  path")
    for dt in (np.float32, np.float64):
        for n, nb in ROWS:
            a = rng.standard_normal((nb, n, n)).astype(dt)
            b = rng.standard_normal((nb, n, n)).astype(dt)
            out = np.empty((nb, n, n), dt)
            te, tm = paired_medians(lambda: einplan.einsum("bij,bjk->bik", a, b, out=out),
                                    lambda: np.matmul(a, b, out=out), args.repeats)
            path = einplan.explain("bij,bjk->bik", a, b).to_dict()["steps"][0]["kernel"]["path"]
            print(f"{np.dtype(dt).name:8} {n:4d} {nb:8d} {te * 1e6:9.1f}us {tm * 1e6:9.1f}us "
                  f"{tm / te:6.2f}  {path.split(':')[0]}")


if __name__ == "__main__":
    main()
