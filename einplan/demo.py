"""``einplan demo``: five failures of mature systems, run on built-in data.

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

from . import _native
from ._version import __version__
from .api import einsum
from .explain import explain
from .prepack import plan
from .timing import load, median_after_idle

RULE = "-" * 78

# OpenBLAS cores whose kernels stop short of AVX-512 (threadpoolctl's 'architecture')
_AVX2_CORES = {"haswell", "zen", "sandybridge"}


def _numpy_blas():
    """(name of numpy's BLAS and its kernels, whether they are AVX2 kernels on an
    AVX-512 CPU), or ('', False) without threadpoolctl."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return "", False
    for lib in threadpool_info():
        if lib.get("user_api") == "blas":
            arch = lib.get("architecture") or ""
            name = f"{lib.get('internal_api', 'blas')} {lib.get('version', '')} {arch}".strip()
            return name, _native.isa() == "avx512" and arch.lower() in _AVX2_CORES
    return "", False


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


class _Demo:
    """The state the five cases share: where to write, how long to time,
    the random data source, and whether every result agreed with numpy."""

    def __init__(self, fast, out):
        self.fast, self.out = fast, out
        self.runs = 3 if fast else 7
        self.budget = 0.5 if fast else 2.5
        self.rng = np.random.default_rng(0)
        self.ok = True

    def data(self, shape):
        return self.rng.standard_normal(shape, dtype=np.float32)

    def check(self, res, ref, what):
        good = np.allclose(res, ref, rtol=2e-3, atol=2e-3)
        self.ok &= bool(good)
        if not good:
            self.out.write(f"  !! {what}: einplan and numpy disagree\n")

    def summary(self, rep):
        self.out.write(_indent(rep.summary()) + "\n")

    def compare(self, name, ours, peers):
        _compare(self.out, name, ours, peers, self.runs, self.budget)


def run(fast: bool = False, out=None) -> int:
    out = out or sys.stdout
    demo = _Demo(fast, out)
    progress = _Progress(len(_CASES))
    out.write(f"einplan {__version__} demo: kernels {_native.isa()}, "
              f"{_native.get_num_threads()} thread(s); numpy {np.__version__}"
              + (" (fast mode)" if fast else "") + "\n")
    blas, hobbled = _numpy_blas()
    if blas:
        out.write(f"numpy's BLAS: {blas}\n")
    if hobbled:
        out.write("note: numpy's OpenBLAS runs its AVX2 kernels on this AVX-512 CPU, at about "
                  "half their speed; OPENBLAS_CORETYPE=SkylakeX einplan demo compares against "
                  "its AVX-512 kernels\n")
    load_avg, ncpu, busy = load()
    if busy:
        out.write(f"note: load average {load_avg:.1f} on {ncpu} core(s): other processes "
                  "share the cores, timings below are pessimistic\n")
    for i, (what, case) in enumerate(_CASES, 1):
        progress(i, what)
        case(demo)
    out.write(RULE + "\n")
    out.write("all results agree with numpy\n" if demo.ok else
              "SOME RESULTS DISAGREE WITH NUMPY\n")
    out.write("more: einplan explain \"bij,jk->bik\" 77x6x512 512x1536 --dtype float32 "
              "--measure\n")
    out.flush()
    progress.done()
    return 0 if demo.ok else 1


def _tract(demo):
    demo.out.write(f"{RULE}\n1. tract: a [77, 6, 512] x [512, 1536] matmul ran as 77 small "
                   "GEMMs\n")
    A, W = demo.data((77, 6, 512)), demo.data((512, 1536))
    demo.summary(explain("bij,jk->bik", A, W))
    demo.check(einsum("bij,jk->bik", A, W), np.matmul(A, W), "tract")
    demo.compare("tract", lambda: einsum("bij,jk->bik", A, W),
                 [("numpy.matmul", lambda: np.matmul(A, W)),
                  ("numpy.einsum", lambda: np.einsum("bij,jk->bik", A, W, optimize=True))])


def _jax(demo):
    out = demo.out
    out.write(f"{RULE}\n2. JAX/XLA: the argument order of dot_general decided whether the "
              "output needed a transpose\n")
    w, a = demo.data((600, 821)), demo.data((32, 100, 821))
    demo.summary(explain("ab,...b->...a", w, a))
    res = einsum("ab,...b->...a", w, a)
    out.write(f"  result     shape {res.shape}, C-contiguous: {res.flags.c_contiguous}\n")
    demo.ok &= bool(res.flags.c_contiguous)
    demo.check(res, np.einsum("ab,...b->...a", w, a, optimize=True), "JAX")
    demo.compare("jax", lambda: einsum("ab,...b->...a", w, a),
                 [("numpy.einsum", lambda: np.einsum("ab,...b->...a", w, a, optimize=True)),
                  ("a @ w.T", lambda: a @ w.T)])


def _tvm(demo):
    shape = (1, 32, 2, 2, 36, 64) if demo.fast else (1, 32, 2, 2, 360, 640)
    demo.out.write(f"{RULE}\n3. TVM: layout changes around depth_to_space took up to 25% "
                   f"of run time\n  x {shape} float32, 'ncabhw->nchawb' into a "
                   "preallocated out=\n")
    x = demo.data(shape)
    n, c, a_, b_, h, w_ = shape
    dst = np.empty((n, c, h, a_, w_, b_), np.float32)
    demo.summary(explain("ncabhw->nchawb", x, out=dst))
    einsum("ncabhw->nchawb", x, out=dst)
    demo.ok &= bool(np.array_equal(dst, x.transpose(0, 1, 4, 2, 5, 3)))
    ref = np.empty_like(dst)
    demo.compare("tvm", lambda: einsum("ncabhw->nchawb", x, out=dst),
                 [("numpy.einsum", lambda: np.einsum("ncabhw->nchawb", x, out=ref)),
                  ("transpose+copy", lambda: np.copyto(ref, x.transpose(0, 1, 4, 2, 5, 3)))])


def _iree(demo):
    m, k, n_ = (203, 301, 199) if demo.fast else (1001, 999, 1003)
    demo.out.write(f"{RULE}\n4. IREE: padding materialized as separate fill + copy "
                   f"dispatches\n  'ij,jk->ik' f32 with m, k, n = {m}, {k}, {n_} (no "
                   "multiple of any tile)\n")
    X, Y = demo.data((m, k)), demo.data((k, n_))
    demo.summary(explain("ij,jk->ik", X, Y))
    demo.check(einsum("ij,jk->ik", X, Y), X @ Y, "IREE")
    demo.compare("iree", lambda: einsum("ij,jk->ik", X, Y),
                 [("numpy.matmul", lambda: X @ Y),
                  ("numpy.einsum", lambda: np.einsum("ij,jk->ik", X, Y, optimize=True))])


def _webnn(demo):
    out = demo.out
    out.write(f"{RULE}\n5. WebNN: constant weights should be packed once, ahead of time\n")
    try:
        xs, Wc = demo.data((64, 512)), demo.data((512, 1536))
        p = plan("ij,jk->ik", xs.shape, Wc, constants=[1])
        demo.check(p(xs), xs @ Wc, "WebNN")
        out.write("  weights packed once into the plan; each call packs only x\n")
        demo.compare("webnn", lambda: p(xs),
                     [("numpy.matmul", lambda: xs @ Wc),
                      ("einplan.einsum", lambda: einsum("ij,jk->ik", xs, Wc))])
    except Exception as exc:  # noqa: BLE001 - one failing case must not end the demo
        out.write(f"  skipped: einplan.plan is present but this case could not run "
                  f"({type(exc).__name__}: {exc})\n")


_CASES = (("tract: merged m", _tract), ("JAX: orientation", _jax),
          ("TVM: permutation into out=", _tvm), ("IREE: fringe tiles", _iree),
          ("WebNN: prepacked weights", _webnn))


def _indent(text, pad="  "):
    return "\n".join(pad + line for line in text.splitlines())
