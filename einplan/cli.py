"""The command line: ``einplan explain`` / ``einplan demo`` / ``einplan config``.

Also reached as ``python -m einplan ...``.  Bad input (a wrong spec, a shape
that does not parse or does not fit the spec, an unknown dtype) prints ONE
line on stderr and exits with status 2; no traceback unless EINPLAN_DEBUG=1.
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

from . import _native
from .config import show_config
from .demo import run as run_demo
from .explain import explain, explain_call
from .operands import Virtual, dense_strides
from .profile import run_script

EXAMPLES = """\
examples:
  einplan explain "bij,jk->bik" 77x6x512 512x1536 --dtype float32
        tract's matmul: b and i merge into one m = 462, one GEMM
  einplan explain "ab,...b->...a" 600x821 32x100x821 --dtype float32 --json
        JAX's dot_general: which operand feeds the rows, no output transpose
  einplan explain "abcd,dbef->aecf" 8x9x10x11 11x9x12x13 --measure
        a permuted contraction packed straight from strided layout; timed
  einplan explain "ij,jk->ik" 1000x999:F 999x1001 --out 1000x1001
        ':F' = Fortran-order operand; --out = a preallocated output (C order)
  einplan explain --function matmul 10x20x30 30x40
        matmul (or dot, tensordot, inner, outer, vdot) via its einsum spec
  einplan demo            the five field cases of DESIGN.md vs numpy (< 1 minute)
  einplan config          kernels, tiles, blocking, caches, threads
  einplan profile [--compare] [--json OUT.json] [--plot OUT.png] script.py [args...]
        run the script with numpy.einsum & co. routed to einplan, then list every
        distinct contraction by total time (--compare: speedup vs numpy.einsum)

shapes: 77x6x512 or 77,6,512; 'scalar' (or '()') for a 0-d operand;
suffix ':F' for Fortran order.  exit status: 0 ok, 2 bad input, 1 internal error.
"""


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr and status 2."""

    def error(self, message):
        sys.stderr.write(f"einplan: error: {message} (see einplan --help)\n")
        sys.exit(2)


class InputError(ValueError):
    """Bad command-line input: reported in one line, exit status 2."""


def parse_shape(text: str):
    """'77x6x512' -> (77, 6, 512); 'scalar' / '()' / '' -> (); ':F' suffix -> order."""
    t = text.strip()
    order = "C"
    if t.upper().endswith(":F") or t.upper().endswith(":C"):
        order = t[-1].upper()
        t = t[:-2]
    if t.lower() in ("", "()", "scalar"):
        return (), order
    t = t.strip("()[] ")
    parts = [p for p in t.replace(",", "x").replace("X", "x").replace("*", "x").split("x")]
    try:
        shape = tuple(int(p) for p in parts)
    except ValueError:
        raise InputError(f"bad shape {text!r}: write extents like 77x6x512 or 77,6,512") from None
    if any(e < 0 for e in shape):
        raise InputError(f"bad shape {text!r}: extents must be >= 0")
    return shape, order


def _operand(shape, order, dtype):
    return Virtual(shape, dtype, dense_strides(shape, order))


def _build_parser():
    p = _Parser(prog="einplan", description=(
        "einplan: numpy.einsum planned and run on packed kernels. "
        "'explain' prints every decision the planner made and what it costs."),
        epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", metavar="{explain,demo,config,profile}", parser_class=_Parser)
    e = sub.add_parser("explain", help="explain how one einsum (or matmul, ...) call runs",
                       epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    e.add_argument("spec", nargs="?", help='einsum subscripts, e.g. "bij,jk->bik" '
                   "(omit with --function)")
    e.add_argument("shapes", nargs="*", help="one shape per operand, e.g. 77x6x512")
    e.add_argument("--dtype", default="float64", help="operand dtype (default float64)")
    e.add_argument("--out", metavar="SHAPE", help="explain with a preallocated out= of this "
                   "shape (':F' for Fortran order)")
    e.add_argument("--order", default="K", help="einsum order= (K, C, F, A)")
    e.add_argument("--optimize", default="greedy",
                   help="path strategy for > 2 operands (greedy, optimal, ...; 'false' = "
                   "left to right)")
    e.add_argument("--function", choices=["einsum", "matmul", "dot", "tensordot", "inner",
                                          "outer", "vdot"], default="einsum",
                   help="explain this front end on the shapes instead of an einsum spec")
    e.add_argument("--axes", help="tensordot axes: an int, or 'a0,a1;b0,b1'")
    e.add_argument("--threads", type=int, help="kernel threads (default: all usable cores)")
    e.add_argument("--json", action="store_true", help="print the report as JSON")
    e.add_argument("--measure", action="store_true",
                   help="also run the call on random data and print the median time")
    d = sub.add_parser("demo", help="the five field cases of DESIGN.md, timed against numpy")
    d.add_argument("--fast", action="store_true",
                   help="smaller data, fewer runs (also EINPLAN_DEMO_FAST=1)")
    sub.add_parser("config", help="kernels, tiles, blocking, caches, threads")
    pr = sub.add_parser("profile", help="run a script, then list its contractions by time")
    pr.add_argument("--compare", action="store_true",
                    help="replay each distinct call against numpy.einsum: speedups")
    pr.add_argument("--json", metavar="OUT.json", help="also write the profile as JSON")
    pr.add_argument("--plot", metavar="OUT.png", help="also plot where the time goes "
                    "(needs matplotlib)")
    pr.add_argument("--no-patch", action="store_true",
                    help="do not route numpy.einsum & co. to einplan (record einplan's "
                    "own calls only)")
    pr.add_argument("script", help="the Python script to run")
    pr.add_argument("args", nargs=argparse.REMAINDER, help="the script's arguments")
    return p


def _parse_axes(text):
    if text is None:
        return 2
    t = text.strip()
    if ";" not in t:
        try:
            return int(t)
        except ValueError:
            raise InputError(f"bad --axes {text!r}: an int or 'a0,a1;b0,b1'") from None
    try:
        a, b = t.split(";")
        return ([int(x) for x in a.split(",") if x.strip()],
                [int(x) for x in b.split(",") if x.strip()])
    except ValueError:
        raise InputError(f"bad --axes {text!r}: an int or 'a0,a1;b0,b1'") from None


def _explain(args):
    try:
        dtype = np.dtype(args.dtype)
    except TypeError:
        raise InputError(f"unknown dtype {args.dtype!r}") from None
    texts = list(args.shapes)
    if args.function == "einsum":
        if args.spec is None:
            raise InputError("missing the einsum spec, e.g. \"bij,jk->bik\"")
    elif args.spec is not None:
        texts.insert(0, args.spec)   # no spec with --function: all positionals are shapes
    ops = [_operand(*parse_shape(t), dtype) for t in texts]
    if not ops:
        raise InputError("give one shape per operand, e.g. 77x6x512 512x1536")
    out = None
    if args.out is not None:
        out = _operand(*parse_shape(args.out), dtype)
    optimize = args.optimize
    if optimize.lower() in ("false", "no", "none"):
        optimize = False
    elif optimize.lower() in ("true", "yes"):
        optimize = True
    elif optimize not in ("greedy", "optimal"):
        raise InputError(f"--optimize must be true, false, greedy or optimal, got {optimize!r}")
    old_threads = None
    if args.threads is not None:
        if args.threads < 1:
            raise InputError(f"--threads must be >= 1, got {args.threads}")
        old_threads = _native.get_num_threads()
        _native.set_num_threads(args.threads)
    try:
        if args.function == "einsum":
            rep = explain(args.spec, *ops, dtype=dtype, out=out, optimize=optimize,
                          order=args.order, measure=args.measure)
        else:
            kw = {}
            if args.function == "tensordot":
                kw["axes"] = _parse_axes(args.axes)
            if out is not None and args.function in ("matmul", "dot", "outer"):
                kw["out"] = out
            rep = explain_call(args.function, *ops, dtype=dtype, measure=args.measure, **kw)
    finally:
        if old_threads is not None:
            _native.set_num_threads(old_threads)
    print(rep.to_json() if args.json else str(rep))
    return 0


def main(argv=None) -> int:
    """Entry point of the ``einplan`` console script and ``python -m einplan``."""
    parser = _build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    debug = os.environ.get("EINPLAN_DEBUG") not in (None, "", "0")
    try:
        if args.command == "explain":
            return _explain(args)
        if args.command == "demo":
            return run_demo(fast=args.fast or os.environ.get("EINPLAN_DEMO_FAST") not in (None, "", "0"))
        if args.command == "profile":
            if not os.path.isfile(args.script):
                raise InputError(f"no such script: {args.script}")
            return run_script(args.script, args.args, compare=args.compare,
                              json_path=args.json, plot_path=args.plot,
                              patch=not args.no_patch)
        if args.command == "config":
            show_config()
            return 0
    except (InputError, ValueError, TypeError, IndexError, KeyError, OverflowError) as exc:
        if debug:
            raise
        msg = " ".join(str(exc).split()) or type(exc).__name__
        sys.stderr.write(f"einplan: error: {msg}\n")
        return 2
    except MemoryError as exc:
        # --measure on a problem larger than this machine's memory: the input
        # is too big, not a fault of einplan
        if debug:
            raise
        sys.stderr.write(f"einplan: error: the problem does not fit in memory ({exc})\n")
        return 2
    except BrokenPipeError:
        # `einplan explain ... | head`: the reader left; not an error of ours
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return 0
    except KeyboardInterrupt:
        sys.stderr.write("einplan: interrupted\n")
        return 130
    except Exception as exc:  # noqa: BLE001 - the CLI never shows a traceback
        if debug:
            raise
        sys.stderr.write(f"einplan: internal error: {type(exc).__name__}: {exc} "
                         "(EINPLAN_DEBUG=1 shows the traceback)\n")
        return 1
    parser.print_help()
    return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
