"""Differential fuzzer: random einsum calls, einplan against numpy.einsum.

Each case draws subscripts, operands (dtype, byte order, memory layout, 0-d
arrays and Python scalars), ``dtype=``, ``out=`` (dtype, layout, wrong shape,
read-only), ``casting=``, ``order=`` and ``optimize=``, calls both libraries
and compares: the exception class, or the result's type, shape, dtype and
values (and that ``out=`` is returned and written).  An omitted ``optimize``
(einplan's own pairwise order) has numpy's default (``optimize=False``)
semantics, so it is compared with that; an explicit ``optimize=True`` is
numpy's pairwise path.  numpy computes a byte-swapped ``dtype=`` into
garbage values, so its values come from the same call in native byte order
and only the result's dtype from the call as given.

    python tests/fuzz_differential.py --cases 100000 [--seed 0] [--show 20]

prints the number of cases and of differences and exits 1 if any differ.
``run(n, seed)`` is the same as a function (the test suite runs a small one).
"""
from __future__ import annotations

import argparse
import sys
import warnings

import numpy as np

import einplan

DTYPES = ["?", "i1", "u1", "i4", "i8", "f2", "f4", "f8", "c8", "c16", ">f8", ">c16", ">i4",
          ">f4"]
CASTINGS = ["no", "equiv", "safe", "same_kind", "unsafe"]
OPTIMIZE = [None, True, False, "greedy", "optimal"]    # None: left out
ORDERS = ["K", "C", "F", "A"]
SPECS = ["i->", "i,i->", "i,i", "ij,jk->ik", "ij,jk", "ij,kj->ik", "i,->i", "->", ",->",
         ",", "ij->ji", "ii->i", "ii", "ij->", "ij->j", "bij,bjk->bik", "ij,ij->ij",
         "i,j->ij", "ijk,kl->ijl", "ij,jk,kl->il", "...i,...i->...", "i...,i->...",
         "ab,bc,cd,de->ae", "iij,jk->ik", "ij,j->i", "ji,j", "i,i,i->i"]
_TOL = {"e": 1e-2, "f": 1e-4, "d": 1e-11, "F": 1e-4, "D": 1e-11, "g": 1e-11}


def _operand(rng, shape, dt):
    dt = np.dtype(dt)
    if dt.kind == "b":
        a = rng.integers(0, 2, size=shape).astype(bool)
    elif dt.kind in "iu":
        a = rng.integers(0, 4, size=shape).astype(dt)
    elif dt.kind == "c":
        a = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt)
    else:
        a = rng.standard_normal(shape).astype(dt)
    layout = rng.integers(0, 6)
    if len(shape) == 0:
        if layout == 0:                     # a Python / numpy scalar
            return a[()].item() if rng.integers(0, 2) else a[()]
        return a
    if layout == 1:
        a = np.asfortranarray(a)
    elif layout == 2:
        a = np.flip(np.flip(a).copy())      # same values, negative strides
    elif layout == 3:
        big = np.repeat(a, 2, axis=-1) if a.size else a
        a = big[..., ::2] if a.size else a
    elif layout == 4 and len(shape) >= 1 and 0 not in shape:
        a = np.broadcast_to(a[..., :1], shape)
    return a


def _case(rng):
    spec = SPECS[rng.integers(len(SPECS))]
    ins = spec.split("->")[0].split(",")
    size = {c: int(rng.choice([0, 1, 2, 3, 4])) if rng.random() < 0.1
            else int(rng.integers(1, 5)) for c in sorted(set("".join(ins))) if c.isalpha()}
    ell = tuple(int(rng.integers(1, 4)) for _ in range(rng.integers(0, 3)))
    ops = []
    for t in ins:
        shape = []
        for c in t.replace("...", "."):
            shape.extend(ell if c == "." else (size[c],))
        ops.append(_operand(rng, tuple(shape), DTYPES[rng.integers(len(DTYPES))]))
    kw = {}
    if rng.random() < 0.4:
            kw["dtype"] = DTYPES[rng.integers(len(DTYPES))]
    if rng.random() < 0.6:
        kw["casting"] = CASTINGS[rng.integers(len(CASTINGS))] if rng.random() < 0.98 else "bogus"
    if rng.random() < 0.3:
        kw["order"] = ORDERS[rng.integers(len(ORDERS))]
    optimize = OPTIMIZE[rng.integers(len(OPTIMIZE))]
    if optimize is not None:
        kw["optimize"] = optimize
    if kw.get("casting") == "bogus" and optimize not in (None, False):
        kw["casting"] = "unsafe"   # numpy's pairwise path raises from wherever it fails
    out = None
    if rng.random() < 0.4:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                shape = np.einsum(spec, *[np.zeros(np.shape(o)) for o in ops]).shape
        except Exception:
            shape = ()
        r = rng.random()
        if r < 0.03:
            shape = shape + (2,)
        out = np.zeros(shape, DTYPES[rng.integers(len(DTYPES))])
        if r > 0.97:
            out.flags.writeable = False
        elif r > 0.9 and out.ndim:
            out = np.asfortranarray(out)
    return spec, ops, kw, out


def _call(fn, spec, ops, kw, out):
    if out is not None:
        out = out.copy() if out.flags.writeable else out
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = fn(spec, *ops, out=out, **kw)
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return ("raise", type(e)), out
    return ("ok", res), out


def compare(spec, ops, kw, out):
    """None if einplan agrees with numpy on this call, else a description."""
    nkw = dict(kw)
    nkw.setdefault("optimize", False)
    (rk, ref), ref_out = _call(np.einsum, spec, ops, nkw, out)
    swapped = kw.get("dtype") is not None and not np.dtype(kw["dtype"]).isnative
    if swapped and rk == "ok":
        ref_dtype = ref.dtype if isinstance(ref, np.ndarray) and out is None else None
        nkw["dtype"] = np.dtype(kw["dtype"]).newbyteorder("=")
        (rk, ref), ref_out = _call(np.einsum, spec, ops, nkw, out)
        if rk == "ok" and ref_dtype is not None and ref is not ref_out:
            ref = ref.astype(ref_dtype)
    (gk, got), got_out = _call(einplan.einsum, spec, ops, kw, out)
    if rk == "raise" or gk == "raise":
        if rk != gk:
            return f"numpy {rk} {ref if rk == 'raise' else ''} einplan {gk} {got if gk == 'raise' else ''}"
        if not issubclass(got, ref) and not issubclass(ref, got):
            return f"exception class: numpy {ref.__name__} einplan {got.__name__}"
        return None
    if out is not None:
        if (ref is ref_out) != (got is got_out):
            return "out= is not returned"
        ref, got = ref_out, got_out
    # numpy's pairwise path returns some 0-d results as 0-d arrays where its
    # single loop returns scalars; einplan returns the scalar on every path
    if isinstance(ref, np.ndarray) and ref.ndim == 0 and out is None:
        ref = ref[()]
    if type(ref) is not type(got) and not (isinstance(ref, np.ndarray) and isinstance(got, np.ndarray)):
        return f"type: numpy {type(ref).__name__} einplan {type(got).__name__}"
    ref, got = np.asarray(ref), np.asarray(got)
    if ref.shape != got.shape or ref.dtype != got.dtype:
        return f"shape/dtype: numpy {ref.shape} {ref.dtype} einplan {got.shape} {got.dtype}"
    inexact = any(np.asarray(o).dtype.kind in "fc" for o in ops) or (
        kw.get("dtype") is not None and np.dtype(kw["dtype"]).kind in "fc")
    if ref.dtype.kind in "biu" and inexact:
        # a float sum truncated to an integer out=: rounding in another
        # order may land on the other side of an integer
        with np.errstate(all="ignore"):
            same = bool(np.all(np.abs(ref.astype(float) - got.astype(float)) <= 1))
    elif ref.dtype.kind in "biu":
        same = np.array_equal(ref, got)
    else:
        # the loosest precision involved: a float32 sum written to float64
        # out= carries float32 rounding
        involved = [np.asarray(o).dtype for o in ops] + [ref.dtype]
        if kw.get("dtype") is not None:
            involved.append(np.dtype(kw["dtype"]))
        tol = max(_TOL.get(d.newbyteorder("=").char, 0.0) for d in involved) or 1e-11
        with np.errstate(all="ignore"):
            scale = max(1.0, float(np.max(np.abs(ref.astype(complex)))) if ref.size else 1.0)
            same = np.allclose(ref, got, rtol=tol, atol=tol * scale, equal_nan=True)
    return None if same else "values differ"


def run(n, seed=0, show=0):
    rng = np.random.default_rng(seed)
    diffs = []
    for i in range(n):
        case = _case(rng)
        why = compare(*case)
        if why is not None:
            diffs.append((i, why, case))
            if len(diffs) <= show:
                spec, ops, kw, out = case
                print(f"case {i}: {why}\n  {spec!r} ops={[_desc(o) for o in ops]} kw={kw} "
                      f"out={None if out is None else _desc(out)}")
    return diffs


def _desc(x):
    if isinstance(x, np.ndarray):
        return f"{x.dtype.str}{x.shape}{x.strides}"
    return f"{type(x).__name__}({x!r})"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--show", type=int, default=20)
    args = ap.parse_args(argv)
    diffs = run(args.cases, args.seed, args.show)
    print(f"{args.cases} cases, {len(diffs)} differences (seed {args.seed}, "
          f"numpy {np.__version__})")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
