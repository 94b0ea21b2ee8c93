"""A profile of a program's contractions: the explain report at program scale.

    with einplan.profile() as prof:
        run()
    print(prof)                 # one row per distinct call, by total time
    prof.to_json("p.json")      # the same rows for tools
    prof.compare()              # replay each distinct call against numpy.einsum
    prof.plot("p.png")          # where the time goes (matplotlib)

A distinct call is (subscripts, operand shapes, strides, dtypes, out layout,
options).  Recorded: every ``einplan.einsum`` call (so the frontends
``matmul``, ``dot``, ... too), ``einplan.contract``, and numpy's functions
while ``patched()`` (those einplan takes, and those it hands back to numpy,
as fallback rows).  Per row: calls, total and mean time, the engine and
kernel of each step and the copies and fallbacks (read from the explain
report of the very Plan that ran: ``explain`` shares the plan cache), GFLOP/s
against the kernel's peak for compute-bound calls or GB/s against the
measured memory bandwidth for memory-bound ones (``model.py``'s machine).

Timing adds two clock reads and a dict update per call, and nothing at all
to einsum's hot path when no profile is open (one global test).
"""
from __future__ import annotations

import contextlib
import json
import runpy
import sys
import threading
import time
from collections import Counter

import numpy as np

from . import _native
from . import api as _api
from .explain import explain
from .operands import Virtual
from .patching import original, patched
from .options import omitted_as_value
from .spec import parse_spec
from .timing import time_calls

__all__ = ["profile", "Profile"]


class _Local(threading.local):
    on = False          # inside a recorded call: nested einsum calls are its own
    origin = None       # the numpy function a patched call came through


class Recorder:
    """The process-wide hook einsum, contract and the numpy patch call while a
    profile is open; it times each outermost call and files it under its key."""

    def __init__(self):
        self.busy = _Local()
        self.profiles: list = []
        self.lock = threading.Lock()

    @contextlib.contextmanager
    def origin(self, name):
        prev, self.busy.origin = self.busy.origin, name
        try:
            yield
        finally:
            self.busy.origin = prev

    def einsum(self, operands, out, dtype, order, casting, optimize):
        options = (dtype, order, casting, optimize)
        return self.record(self.busy.origin or "einplan.einsum", _api.einsum, operands,
                           operands, out, options)

    def record(self, via, fn, operands, args, out, options=None):
        """Time ``fn(*args)`` (einsum: ``fn(*args, out=, **options)``) and file
        it under the key of ``operands`` (subscripts first)."""
        self.busy.on = True
        t0 = time.perf_counter()
        try:
            if options is not None:
                dtype, order, casting, optimize = options
                res = fn(*args, out=out, dtype=dtype, order=order, casting=casting,
                         optimize=optimize)
            else:
                res = fn(*args)
        finally:
            self.busy.on = False
        dt = time.perf_counter() - t0
        kind = "contract" if via == "einplan.contract" else "einsum"
        key = (kind, _key(operands), _array_key(out), _hashable(options))
        self._add(key, via, dt, lambda: _sample(kind, operands, out, options))
        return res

    def numpy_call(self, name, reason, fn, args, kwargs):
        """A patched numpy call einplan handed back to numpy (a fallback row)."""
        self.busy.on = True
        t0 = time.perf_counter()
        try:
            res = fn(*args, **kwargs)
        finally:
            self.busy.on = False
        dt = time.perf_counter() - t0
        key = ("numpy", name, reason, tuple(_array_key(x) for x in args))
        self._add(key, f"numpy.{name}", dt,
                  lambda: {"kind": "numpy", "function": f"numpy.{name}", "reason": reason,
                           "shapes": [list(np.shape(x)) for x in args
                                      if hasattr(x, "shape")],
                           "dtypes": [str(x.dtype) for x in args if hasattr(x, "dtype")]})
        return res

    def _add(self, key, via, dt, make_sample):
        with self.lock:
            for prof in self.profiles:
                prof._add(key, via, dt, make_sample)


def _hashable(x):
    try:
        hash(x)
        return x
    except TypeError:
        return repr(x)


def _array_key(x):
    if isinstance(x, np.ndarray):
        return (x.shape, x.strides, x.dtype.str)
    if isinstance(x, str):
        return x
    return (type(x).__name__, np.shape(x)) if not isinstance(x, list) else _hashable(
        tuple(map(_hashable, x)))


def _key(operands):
    return tuple(_array_key(x) for x in operands)


def _virtual(arr):
    arr = np.asarray(arr)
    item = arr.itemsize or 1
    if any(s % item for s in arr.strides):
        return Virtual(arr.shape, arr.dtype)   # odd byte strides: described as C order
    return Virtual(arr.shape, arr.dtype, tuple(s // item for s in arr.strides))


def _sample(kind, operands, out, options):
    """What a row keeps of its first call: enough to explain and replay it."""
    if isinstance(operands[0], str):
        subs, arrays = operands[0], [np.asarray(x) for x in operands[1:]]
    else:   # interleaved form
        spec, arrays = parse_spec(operands)
        subs = spec.plain_subscripts()
    return {"kind": kind, "subscripts": subs, "operands": [_virtual(x) for x in arrays],
            "out": None if out is None else _virtual(out),
            "options": options or (None, "K", "safe", True)}


_recorder = Recorder()


class Profile:
    """The rows of one ``with einplan.profile():`` block (see the module docstring)."""

    def __init__(self):
        self._rows: dict = {}
        self._lock = threading.Lock()
        self.wall_s = 0.0
        self._t0 = None
        self._compared = False
        self._threads = {}

    # -- recording ------------------------------------------------------------
    def _add(self, key, via, dt, make_sample):
        with self._lock:
            row = self._rows.get(key)
            if row is None:
                row = self._rows[key] = {"sample": make_sample(), "count": 0, "total_s": 0.0,
                                         "via": Counter(), "report": None, "compare": None}
            row["count"] += 1
            row["total_s"] += dt
            row["via"][via] += 1

    def __enter__(self):
        with _recorder.lock:
            _recorder.profiles.append(self)
            _api._recorder = _recorder
        self._t0 = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.wall_s += time.perf_counter() - self._t0
        with _recorder.lock:
            _recorder.profiles.remove(self)
            if not _recorder.profiles:
                _api._recorder = None
        return False

    # -- the rows ---------------------------------------------------------------
    def rows(self) -> list[dict]:
        """One dict per distinct call, by total time (largest first)."""
        with self._lock:
            rows = list(self._rows.values())
        rows.sort(key=lambda r: -r["total_s"])
        spent = sum(r["total_s"] for r in rows) or 1.0
        return [self._row(r, spent) for r in rows]

    def _row(self, r, spent):
        s = r["sample"]
        d = {"calls": r["count"], "total_s": r["total_s"], "mean_s": r["total_s"] / r["count"],
             "share": r["total_s"] / spent, "via": dict(r["via"]), "kind": s["kind"]}
        if s["kind"] == "numpy":
            d.update(call=s["function"], shapes=s["shapes"], dtypes=s["dtypes"], layouts=[],
                     engine="numpy", kernel=f"fallback to {s['function']}",
                     fallbacks=[s["reason"]], copies_bytes=0, flops=None, rate=None,
                     rate_unit=None, pct_limit=None, bound=None)
            return d
        rep = r["report"]
        if rep is None:
            rep = r["report"] = _explain_sample(s).to_dict()
        ops = rep["call"]["operands"]
        steps = rep.get("steps", [])
        totals = rep.get("totals", {})
        mach = rep.get("machine", {})
        flops = totals.get("flops") or 0.0
        moved = totals.get("bytes_moved") or 0.0
        mean = d["mean_s"]
        bound = totals.get("bound")
        if bound == "compute" and flops and mean > 0:
            rate, unit = flops / mean / 1e9, "GFLOP/s"
            limit = totals.get("peak_gflops")
        else:
            rate, unit = (moved / mean / 1e9 if mean > 0 else 0.0), "GB/s"
            limit = mach.get("bandwidth_gbs")
        d.update(call=s["subscripts"], shapes=[o["shape"] for o in ops],
                 dtypes=[o["dtype"] for o in ops], layouts=[o["layout"] for o in ops],
                 engine="+".join(st.get("kind", "?") for st in steps) or "fallback",
                 kernel="; ".join(_kernel_text(st) for st in steps),
                 fallbacks=[f.get("reason", str(f)) if isinstance(f, dict) else str(f)
                            for f in rep.get("fallbacks", [])],
                 copies_bytes=rep.get("copies", {}).get("bytes", 0),
                 flops=flops, rate=rate, rate_unit=unit, bound=bound,
                 pct_limit=100.0 * rate / limit if limit else None)
        if r["compare"] is not None:
            d["compare"] = dict(r["compare"])
        return d

    # -- replay against numpy -------------------------------------------------------
    def compare(self, budget_s: float = 0.2, confirm_rounds: int = 2,
                close: float = 1.3) -> dict:
        """Replay each distinct einsum / contract call once (random data in the
        recorded layouts) with einplan and with numpy.einsum; returns the
        whole-program estimate {einplan_s, numpy_s, speedup}.

        numpy.einsum runs with the call's own options; a two-operand call
        under 50 ms also runs with the other ``optimize`` (True is numpy's BLAS
        path, False skips its path search on small arrays), keeping the faster,
        so the speedup is against numpy at its best.  A replay is one call
        (after a warm-up call) when it takes over ``budget_s``, else the median
        of up to 5.  A call within ``close`` of parity either way (speedup
        between 1/close and close) is then replayed ``confirm_rounds`` more
        times, einplan and numpy in turn, and keeps the medians: on a shared
        machine one replay each cannot tell 0.9x from 1.1x.
        """
        np_einsum = original("einsum")
        rng = np.random.default_rng(0)
        prev = _recorder.busy.on
        _recorder.busy.on = True        # the replays are not part of the program
        threads = _native.get_num_threads()
        try:
            with _blas_held_to(threads) as held:
                self._threads = {"einplan": threads, "numpy_blas": held}
                self._replay_rows(np_einsum, rng, budget_s, confirm_rounds, close)
        finally:
            _recorder.busy.on = prev
        self._compared = True
        return self.compare_totals()

    def _replay_rows(self, np_einsum, rng, budget_s, confirm_rounds, close):
        """compare's replays, row by row (see compare)."""
        with self._lock:
            rows = list(self._rows.values())
        for r in rows:
            s = r["sample"]
            if s["kind"] == "numpy":
                continue
            arrays = [v.materialize(rng) for v in s["operands"]]
            dtype, order, casting, optimize = s["options"]
            subs = s["subscripts"]

            def ours(kw=dict(dtype=dtype, order=order, casting=casting, optimize=optimize),
                     subs=subs, arrays=arrays):
                return _api.einsum(subs, *arrays, **kw)

            def theirs(opt, kw=dict(dtype=dtype, order=order,
                                    casting=omitted_as_value(casting)),
                       subs=subs, arrays=arrays):
                return lambda: np_einsum(subs, *arrays, optimize=opt, **kw)
            optimize = omitted_as_value(optimize)
            best_np = theirs(optimize)
            t_ours = _replay(ours, budget_s)
            t_np = _replay(best_np, budget_s)
            if (len(arrays) == 2 and isinstance(optimize, bool)
                    and t_np < _OTHER_MODE_BELOW_S):
                t_other = _replay(theirs(not optimize), budget_s)
                if t_other < t_np:
                    t_np, best_np = t_other, theirs(not optimize)
            rounds = 1
            if t_ours > 0 and t_np > 0 and 1 / close < t_np / t_ours < close:
                t_ours, t_np = _interleaved(ours, best_np, t_ours, t_np,
                                            confirm_rounds, budget_s)
                rounds += confirm_rounds
            r["compare"] = {"einplan_s": t_ours, "numpy_s": t_np, "rounds": rounds,
                            "speedup": t_np / t_ours if t_ours > 0 else None}

    def compare_totals(self) -> dict | None:
        """Replayed times x calls, summed over the rows that were replayed."""
        with self._lock:
            rows = [r for r in self._rows.values() if r["compare"] is not None]
        if not rows:
            return None
        ours = sum(r["compare"]["einplan_s"] * r["count"] for r in rows)
        theirs = sum(r["compare"]["numpy_s"] * r["count"] for r in rows)
        return {"einplan_s": ours, "numpy_s": theirs,
                "speedup": theirs / ours if ours > 0 else None,
                "threads": dict(self._threads)}

    # -- output -------------------------------------------------------------------
    def to_dict(self) -> dict:
        rows = self.rows()
        for d in rows:
            d["via"] = dict(d["via"])
        return {"schema": "einplan.profile/1", "wall_s": self.wall_s,
                "contraction_s": sum(d["total_s"] for d in rows),
                "calls": sum(d["calls"] for d in rows), "distinct_calls": len(rows),
                "rows": rows, "compare": self.compare_totals()}

    def to_json(self, path=None, indent=2) -> str:
        text = json.dumps(self.to_dict(), indent=indent, default=_jsonable)
        if path is not None:
            with open(path, "w") as f:
                f.write(text + "\n")
        return text

    def __str__(self):
        return render_text(self.to_dict())

    def plot(self, path, top: int = 15):
        """A bar chart of the ``top`` calls by total time (needs matplotlib)."""
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError as exc:   # optional dependency
            raise ImportError("profile.plot needs matplotlib: pip install matplotlib") from exc
        rows = self.rows()[:top][::-1]
        labels = [f"{r['call']} {_shapes_text(r['shapes'])}"[:60] for r in rows]
        fig, ax = plt.subplots(figsize=(10, 0.4 * len(rows) + 1.5))
        ax.barh(range(len(rows)), [r["total_s"] for r in rows], color=[
            "tab:red" if r["engine"] == "numpy" or r["fallbacks"] else "tab:blue"
            for r in rows])
        ax.set_yticks(range(len(rows)), labels, fontsize=7)
        ax.set_xlabel("total time (s)")
        ax.set_title("where the contraction time goes (red: numpy fallback)")
        fig.tight_layout()
        fig.savefig(path)
        plt.close(fig)
        return path


_OTHER_MODE_BELOW_S = 0.05


@contextlib.contextmanager
def _blas_held_to(threads):
    """Hold numpy's BLAS to ``threads`` while the replays run, so both sides
    of a speedup use the same cores (a program's BLAS pool is sized when
    numpy loads, before the program pins it); yields the count held, or None
    when threadpoolctl is not installed."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        yield None
        return
    with threadpool_limits(limits=threads, user_api="blas"):
        yield threads


def _replay(fn, budget_s, warm=True):
    """Median time of fn: one timed call after a warm-up when it is long,
    up to 5 within ``budget_s`` otherwise; ``warm`` False: fn has run
    already, a long call is timed once with no warm-up."""
    t0 = time.perf_counter()
    fn()
    first = time.perf_counter() - t0
    if first > budget_s and not warm:
        return first
    if first > budget_s:
        t0 = time.perf_counter()
        fn()
        return time.perf_counter() - t0
    return float(np.median(time_calls(fn, 5, 1, budget_s)))


def _interleaved(ours, theirs, t_ours, t_np, rounds, budget_s):
    """Medians of the first replay and ``rounds`` more of each, taken in turn
    (so a spell of load from other processes falls on both)."""
    mine, other = [t_ours], [t_np]
    for _ in range(rounds):
        mine.append(_replay(ours, budget_s, warm=False))
        other.append(_replay(theirs, budget_s, warm=False))
    return float(np.median(mine)), float(np.median(other))


def _jsonable(x):
    if isinstance(x, (np.integer, np.floating)):
        return x.item()
    if isinstance(x, np.dtype):
        return str(x)
    return repr(x)


def _explain_sample(s):
    dtype, order, casting, optimize = map(omitted_as_value, s["options"])
    return explain(s["subscripts"], *s["operands"], out=s["out"], optimize=optimize,
                   order=order, casting=casting)


def _kernel_text(step):
    k = step.get("kernel") or {}
    if not isinstance(k, dict) or not k:
        return step.get("kind", "?")
    tile = f"{k['mr']}x{k['nr']}" if k.get("mr") and k.get("nr") else None
    parts = [k.get("isa"), tile,
             (k.get("path") or k.get("kind") or "").split(":")[0]]
    return " ".join(p for p in parts if p)


def profile() -> Profile:
    """``with einplan.profile() as prof: run()``: record every contraction
    ``run`` makes (see the module docstring)."""
    return Profile()


def _shapes_text(shapes):
    return ",".join("x".join(map(str, s)) or "()" for s in shapes)


def _fmt_s(s):
    if s is None:
        return "-"
    if s >= 1:
        return f"{s:.2f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.1f} ms"
    return f"{s * 1e6:.1f} us"


def render_text(d: dict) -> str:
    rows = d["rows"]
    spent, wall = d["contraction_s"], d["wall_s"]
    head = (f"einplan profile: {d['calls']} contraction calls, {d['distinct_calls']} distinct; "
            f"{_fmt_s(spent)} in contractions"
            + (f" of {_fmt_s(wall)} wall ({100 * spent / wall:.0f}%)" if wall else ""))
    lines = [head, "rate: GFLOP/s of compute-bound calls (%lim: of the kernel's peak, "
             "model.py), GB/s of memory-bound ones (%lim: of the measured bandwidth)", ""]
    cmp = d.get("compare")
    hdr = (f"{'total':>9} {'%':>4} {'calls':>6} {'mean':>9} {'rate':>15} {'%lim':>5} "
           f"{'copies':>8} " + (f"{'numpy':>9} {'speedup':>7} " if cmp else "")
           + "engine / call")
    lines.append(hdr)
    for r in rows:
        rate = "-" if r["rate"] is None else f"{r['rate']:.1f} {r['rate_unit']}"
        pct = "-" if r["pct_limit"] is None else f"{r['pct_limit']:.0f}"
        copies = f"{r['copies_bytes'] / 1e6:.1f}MB" if r["copies_bytes"] else "0"
        line = (f"{_fmt_s(r['total_s']):>9} {100 * r['share']:>4.0f} {r['calls']:>6} "
                f"{_fmt_s(r['mean_s']):>9} {rate:>15} {pct:>5} {copies:>8} ")
        if cmp:
            c = r.get("compare")
            if c:
                line += f"{_fmt_s(c['numpy_s']):>9} {c['speedup']:>6.2f}x "
            else:
                line += f"{'-':>9} {'-':>7} "
        via = ",".join(sorted(r["via"]))
        line += f"{r['engine']} [{r['kernel']}]  {r['call']} {_shapes_text(r['shapes'])}"
        line += f" {'/'.join(sorted(set(r['dtypes'])))} via {via}"
        if r["fallbacks"]:
            line += f"  FALLBACK: {'; '.join(r['fallbacks'])}"
        lines.append(line)
    if cmp:
        lines += ["", f"whole program (replayed calls x counts): einplan {_fmt_s(cmp['einplan_s'])}, "
                  f"numpy.einsum {_fmt_s(cmp['numpy_s'])}, speedup {cmp['speedup']:.2f}x"]
        th = cmp.get("threads") or {}
        if th:
            blas = th.get("numpy_blas")
            lines.append(f"replayed at {th['einplan']} einplan thread(s); numpy's BLAS "
                         + (f"held to {blas} thread(s)" if blas else
                            "threads not held (threadpoolctl is not installed)"))
    return "\n".join(lines)


def run_script(script: str, args=(), compare=False, json_path=None, plot_path=None,
               patch=True, stream=None) -> int:
    """``einplan profile script.py args...``: run the script as ``__main__``
    (numpy patched unless ``patch`` is False), then print the profile;
    returns the script's exit status."""
    stream = stream or sys.stdout
    old_argv = sys.argv
    sys.argv = [script] + list(args)
    status = 0
    prof = Profile()
    try:
        with contextlib.ExitStack() as stack:
            if patch:
                stack.enter_context(patched())
            stack.enter_context(prof)
            try:
                runpy.run_path(script, run_name="__main__")
            except SystemExit as exc:   # the script's own exit: still report
                code = exc.code
                status = code if isinstance(code, int) else (0 if code is None else 1)
    finally:
        sys.argv = old_argv
    if compare:
        prof.compare()
    stream.write(str(prof) + "\n")
    if json_path:
        prof.to_json(json_path)
    if plot_path:
        prof.plot(plot_path)
    return status
