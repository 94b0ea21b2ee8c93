"""``einplan demo``: the five field failures of DESIGN.md, run on built-in data.

For each case: a short explain summary (the planner's decisions, from the
very Plan that runs) and the measured median time next to numpy's.

    1 tract   bij,jk->bik, A (77, 6, 512) x W (512, 1536) f32: b*i merged into one m
    2 JAX     ab,...b->...a, w (600, 821), a (32, 100, 821) f32: no output transpose
    3 TVM     ncabhw->nchawb, x (1, 32, 2, 2, 360, 640) f32 into out=: no temporaries
    4 IREE    ij,jk->ik with m, n, k not multiples of the tile: fringe in the kernel
    5 WebNN   prepacked constant weights (einplan.plan(..., constants=[1]))

``fast=True`` (``--fast`` or EINPLAN_DEMO_FAST=1) shrinks the TVM tensor and
the IREE GEMM and runs fewer repetitions (for tests); the full demo takes
well under a minute.
"""
from __future__ import annotations

import sys
import time

import numpy as np

from .explain import explain
from .timing import load, median_after_idle

RULE = "-" * 78


def _fmt(s):
    return f"{s * 1e3:8.2f} ms" if s >= 1e-3 else f"{s * 1e6:8.1f} us"


class _Progress:
    """One progress line on stderr, rewritten in place on a terminal."""

    def __init__(self, total, stream=sys.stderr):
        self.total, self.stream = total, stream
        self.tty = hasattr(stream, "isatty") and stream.isatty()
        self.t0 = time.perf_counter()

    def __call__(self, i, what):
        msg = f"[{i}/{self.total}] {what} ... ({time.perf_counter() - self.t0:.1f} s)"
        if self.tty:
            self.stream.write("\r\033[K" + msg)
        else:
            self.stream.write(msg + "\n")
        self.stream.flush()

    def done(self):
        if self.tty:
            self.stream.write("\r\033[K")
        self.stream.write(f"demo finished in {time.perf_counter() - self.t0:.1f} s\n")
        self.stream.flush()


def _compare(out, name, ours, peers, runs, budget):
    """Time ``ours`` and each (label, fn) in ``peers``; print one line each."""
    t_ours, n = median_after_idle(ours, runs, budget)
    out.write(f"  time       einplan         {_fmt(t_ours)}   (median of {n})\n")
    for label, fn in peers:
        t, n = median_after_idle(fn, runs, budget)
        ratio = t / t_ours if t_ours else float("nan")
        out.write(f"             {label:<15} {_fmt(t)}   -> einplan {ratio:.2f}x "
                  f"{'faster' if ratio >= 1 else 'slower'}\n")
    return t_ours


def run(fast: bool = False, out=None) -> int:
    import einplan

    out = out or sys.stdout
    runs = 3 if fast else 7
    budget = 0.5 if fast else 2.5
    rng = np.random.default_rng(0)
    progress = _Progress(5)
    out.write(f"einplan {einplan.__version__} demo: kernels {einplan.isa()}, "
              f"{einplan.get_num_threads()} thread(s); numpy {np.__version__}"
              + (" (fast mode)" if fast else "") + "\n")
    load_avg, ncpu, busy = load()
    if busy:
        out.write(f"note: load average {load_avg:.1f} on {ncpu} core(s): other processes "
                  "share the cores, timings below are pessimistic\n")
    ok = True

    def check(res, ref, what):
        nonlocal ok
        good = np.allclose(res, ref, rtol=2e-3, atol=2e-3)
        ok &= bool(good)
        if not good:
            out.write(f"  !! {what}: einplan and numpy disagree\n")

    # 1 tract -------------------------------------------------------------------
    progress(1, "tract: merged m")
    out.write(f"{RULE}\n1. tract: a [77, 6, 512] x [512, 1536] matmul ran as 77 small GEMMs\n")
    A = rng.standard_normal((77, 6, 512), dtype=np.float32)
    W = rng.standard_normal((512, 1536), dtype=np.float32)
    rep = explain("bij,jk->bik", A, W)
    out.write(_indent(rep.summary()) + "\n")
    check(einplan.einsum("bij,jk->bik", A, W), np.matmul(A, W), "tract")
    _compare(out, "tract", lambda: einplan.einsum("bij,jk->bik", A, W),
             [("numpy.matmul", lambda: np.matmul(A, W)),
              ("numpy.einsum", lambda: np.einsum("bij,jk->bik", A, W, optimize=True))],
             runs, budget)

    # 2 JAX ---------------------------------------------------------------------
    progress(2, "JAX: orientation")
    out.write(f"{RULE}\n2. JAX/XLA: the argument order of dot_general decided whether the "
              "output needed a transpose\n")
    w = rng.standard_normal((600, 821), dtype=np.float32)
    a = rng.standard_normal((32, 100, 821), dtype=np.float32)
    rep = explain("ab,...b->...a", w, a)
    out.write(_indent(rep.summary()) + "\n")
    res = einplan.einsum("ab,...b->...a", w, a)
    out.write(f"  result     shape {res.shape}, C-contiguous: {res.flags.c_contiguous}\n")
    ok &= bool(res.flags.c_contiguous)
    check(res, np.einsum("ab,...b->...a", w, a, optimize=True), "JAX")
    _compare(out, "jax", lambda: einplan.einsum("ab,...b->...a", w, a),
             [("numpy.einsum", lambda: np.einsum("ab,...b->...a", w, a, optimize=True)),
              ("a @ w.T", lambda: a @ w.T)], runs, budget)

    # 3 TVM ---------------------------------------------------------------------
    progress(3, "TVM: permutation into out=")
    shape = (1, 32, 2, 2, 36, 64) if fast else (1, 32, 2, 2, 360, 640)
    out.write(f"{RULE}\n3. TVM: layout changes around depth_to_space took up to 25% of run "
              f"time\n  x {shape} float32, 'ncabhw->nchawb' into a preallocated out=\n")
    x = rng.standard_normal(shape, dtype=np.float32)
    n, c, a_, b_, h, w_ = shape
    dst = np.empty((n, c, h, a_, w_, b_), np.float32)
    rep = explain("ncabhw->nchawb", x, out=dst)
    out.write(_indent(rep.summary()) + "\n")
    einplan.einsum("ncabhw->nchawb", x, out=dst)
    ok &= bool(np.array_equal(dst, x.transpose(0, 1, 4, 2, 5, 3)))
    ref = np.empty_like(dst)
    _compare(out, "tvm", lambda: einplan.einsum("ncabhw->nchawb", x, out=dst),
             [("numpy.einsum", lambda: np.einsum("ncabhw->nchawb", x, out=ref)),
              ("transpose+copy", lambda: np.copyto(ref, x.transpose(0, 1, 4, 2, 5, 3)))],
             runs, budget)
    del x, dst, ref

    # 4 IREE --------------------------------------------------------------------
    progress(4, "IREE: fringe tiles")
    m, k, n_ = (203, 301, 199) if fast else (1001, 999, 1003)
    out.write(f"{RULE}\n4. IREE: padding materialized as separate fill + copy dispatches\n"
              f"  'ij,jk->ik' f32 with m, k, n = {m}, {k}, {n_} (no multiple of any tile)\n")
    X = rng.standard_normal((m, k), dtype=np.float32)
    Y = rng.standard_normal((k, n_), dtype=np.float32)
    rep = explain("ij,jk->ik", X, Y)
    out.write(_indent(rep.summary()) + "\n")
    check(einplan.einsum("ij,jk->ik", X, Y), X @ Y, "IREE")
    _compare(out, "iree", lambda: einplan.einsum("ij,jk->ik", X, Y),
             [("numpy.matmul", lambda: X @ Y),
              ("numpy.einsum", lambda: np.einsum("ij,jk->ik", X, Y, optimize=True))],
             runs, budget)

    # 5 WebNN -------------------------------------------------------------------
    progress(5, "WebNN: prepacked weights")
    out.write(f"{RULE}\n5. WebNN: constant weights should be packed once, ahead of time\n")
    plan_fn = einplan.plan
    try:
        xs = rng.standard_normal((64, 512), dtype=np.float32)
        Wc = rng.standard_normal((512, 1536), dtype=np.float32)
        p = plan_fn("ij,jk->ik", xs.shape, Wc, constants=[1])
        check(p(xs), xs @ Wc, "WebNN")
        out.write("  weights packed once into the plan; each call packs only x\n")
        _compare(out, "webnn", lambda: p(xs),
                 [("numpy.matmul", lambda: xs @ Wc),
                  ("einplan.einsum", lambda: einplan.einsum("ij,jk->ik", xs, Wc))],
                 runs, budget)
    except Exception as exc:  # noqa: BLE001 - one failing case must not end the demo
        out.write(f"  skipped: einplan.plan is present but this case could not run "
                  f"({type(exc).__name__}: {exc})\n")

    out.write(RULE + "\n")
    out.write("all results agree with numpy\n" if ok else "SOME RESULTS DISAGREE WITH NUMPY\n")
    out.write("more: einplan explain \"bij,jk->bik\" 77x6x512 512x1536 --dtype float32 "
              "--measure\n")
    out.flush()
    progress.done()
    return 0 if ok else 1


def _indent(text, pad="  "):
    return "\n".join(pad + line for line in text.splitlines())
