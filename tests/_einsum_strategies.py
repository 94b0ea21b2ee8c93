"""Hypothesis strategies and comparison helpers shared by the differential tests.

    einsum_cases()      a random einsum: subscripts, operands (any layout), and
                        the contracted size k (for the tolerance)
    layouts(...)        an array of a given shape in a random memory layout:
                        C, Fortran, negative strides, sliced (gaps), permuted,
                        broadcast (stride 0, via np.broadcast_to)
    assert_matches_numpy(got, expected, ...)
                        same type / shape / dtype as numpy, values within a
                        bound scaled by the contracted size k
"""
from __future__ import annotations

import math
import threading

import numpy as np
from hypothesis import strategies as st

FLOAT_DTYPES = [np.float32, np.float64, np.complex64, np.complex128]
DTYPES = FLOAT_DTYPES + [np.int64, np.bool_]
LAYOUTS = ("C", "F", "negative", "sliced", "permuted", "broadcast")


def fill(rng, shape, dtype):
    """Random values of ``dtype``: small ints for integer/bool, normal floats."""
    return np.asarray(_fill(rng, shape, np.dtype(dtype)))


def _fill(rng, shape, dtype):
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(bool)
    if dtype.kind in "iu":
        return rng.integers(-3, 4, size=shape).astype(dtype)
    if dtype.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def in_layout(rng, shape, dtype, layout):
    """An array with logical ``shape`` whose memory layout is ``layout``."""
    shape = tuple(shape)
    nd = len(shape)
    if layout == "F":
        return np.array(fill(rng, shape, dtype), order="F")  # asfortranarray makes 0-d 1-d
    if layout == "negative":
        # every other axis reversed; the data of a bigger array read backwards
        arr = fill(rng, shape, dtype)
        return arr[tuple(slice(None, None, -1) if i % 2 == 0 else slice(None)
                         for i in range(nd)) + (Ellipsis,)]
    if layout == "sliced":
        # gaps between elements: every second element along every axis
        big = fill(rng, tuple(2 * e + 1 for e in shape), dtype)
        return big[tuple(slice(1, 2 * e + 1, 2) for e in shape) + (Ellipsis,)]
    if layout == "permuted":
        perm = rng.permutation(nd) if nd else np.arange(0)
        inv = np.argsort(perm)
        base = fill(rng, tuple(shape[p] for p in perm), dtype)
        return base.transpose(inv)
    if layout == "broadcast":
        # stride 0 on a random subset of axes (read-only, like numpy's own)
        small = tuple(1 if (e > 1 and rng.random() < 0.5) else e for e in shape)
        return np.broadcast_to(fill(rng, small, dtype), shape)
    return fill(rng, shape, dtype)


@st.composite
def layouts(draw, shape, dtype, seed=None):
    layout = draw(st.sampled_from(LAYOUTS))
    if seed is None:
        seed = draw(st.integers(0, 2**32 - 1))
    return in_layout(np.random.default_rng(seed), shape, dtype, layout)


LABELS = "abcdefgAB"  # upper case letters too: implicit output sorts them first


@st.composite
def einsum_specs(draw, min_ops=1, max_ops=4, max_dims=4, allow_zero=True):
    """(subscripts, shapes, sizes): a valid einsum spec and matching operand shapes.

    Labels repeat within a term (diagonals) and across terms; size-1 axes
    broadcast against larger ones; an ellipsis may cover different numbers
    of dims (right-aligned broadcast); the output is implicit or explicit.
    """
    nops = draw(st.integers(min_ops, max_ops))
    pool = draw(st.lists(st.sampled_from(LABELS), min_size=1, max_size=6, unique=True))
    size_choices = [1, 2, 3, 4, 5] + ([0] if allow_zero else [])
    sizes = {c: draw(st.sampled_from(size_choices)) for c in pool}
    use_ellipsis = draw(st.booleans())
    ell_shape = tuple(draw(st.lists(st.sampled_from([1, 2, 3]), max_size=2))) if use_ellipsis else ()

    terms, shapes = [], []
    for _ in range(nops):
        labels = draw(st.lists(st.sampled_from(pool), max_size=max_dims))
        shape = []
        for c in labels:
            # an operand may hold a label with extent 1 where others have N
            shape.append(1 if draw(st.integers(0, 5)) == 0 else sizes[c])
        # a repeated label within one term needs one extent at every occurrence
        first = {}
        shape = [first.setdefault(c, e) for c, e in zip(labels, shape)]
        term = "".join(labels)
        if use_ellipsis and draw(st.booleans()):
            at = draw(st.integers(0, len(labels)))
            n_ell = draw(st.integers(0, len(ell_shape)))
            ell = ell_shape[len(ell_shape) - n_ell:]
            ell = tuple(1 if draw(st.integers(0, 3)) == 0 else e for e in ell)
            term = term[:at] + "..." + term[at:]
            shape = shape[:at] + list(ell) + shape[at:]
        terms.append(term)
        shapes.append(tuple(shape))

    subscripts = ",".join(terms)
    if draw(st.booleans()):  # explicit output
        present = sorted(set("".join(t.replace(".", "") for t in terms)))
        out = draw(st.permutations(present))
        out = out[:draw(st.integers(0, len(out)))]
        out = "".join(out)
        if any("..." in t for t in terms):
            at = draw(st.integers(0, len(out)))
            out = out[:at] + "..." + out[at:]
        subscripts += "->" + out
    return subscripts, shapes


def contracted_size(subscripts, operands) -> int:
    """Product of the extents of the labels summed over (the k of the tolerance)."""
    import einplan.spec as spec_mod
    spec, _ = spec_mod.parse_spec((subscripts,) + tuple(operands))
    k = 1
    for c in set("".join(spec.inputs)) - set(spec.output):
        k *= max(spec.sizes[c], 1)
    return k


def assert_matches_numpy(got, expected, subscripts, operands, k=None, out=None, dtype=None):
    """``got`` is einplan's result, ``expected`` numpy's, for the same call."""
    assert isinstance(got, np.ndarray) == isinstance(expected, np.ndarray), (
        type(got), type(expected))
    assert np.shape(got) == np.shape(expected)
    got_dt, exp_dt = np.asarray(got).dtype, np.asarray(expected).dtype
    assert got_dt == exp_dt, (got_dt, exp_dt)
    if out is not None:
        assert got is out
    if exp_dt.kind in "biu":
        np.testing.assert_array_equal(got, expected)
        return
    if k is None:
        k = contracted_size(subscripts, operands)
    # rounding-error bound for a sum of k products: 8 (k + n_ops) eps sum|terms|,
    # sum|terms| from einsum over the absolute values in float64
    absops = [np.abs(np.asarray(op)).astype(np.float64) for op in operands]
    bound = np.einsum(subscripts, *absops, optimize=False)
    # the compute dtype (operands' result type or dtype=) may be narrower
    # than the result's (out= of a wider dtype)
    compute = np.dtype(dtype) if dtype is not None else np.result_type(*operands)
    eps = max(np.finfo(d).eps for d in (exp_dt, compute) if d.kind in "fc")
    n_ops = len(operands)
    tol = 8 * (k + n_ops) * eps * np.asarray(bound) + np.finfo(exp_dt).tiny
    err = np.abs(np.asarray(got, dtype=np.complex128) - np.asarray(expected, dtype=np.complex128))
    bad = err > tol
    assert not np.any(bad), (
        f"{subscripts}: max error {np.max(err)} exceeds bound "
        f"{np.asarray(tol)[bad].min() if np.ndim(tol) else tol} (k={k})")


def run_in_threads(work, n=4):
    """Run work(t) for t in range(n) in n threads started together (a
    barrier); re-raise the first exception any of them hit."""
    errors = []
    barrier = threading.Barrier(n)

    def wrapped(t):
        try:
            barrier.wait()
            work(t)
        except BaseException as exc:   # reported below, in the caller's thread
            errors.append(exc)

    threads = [threading.Thread(target=wrapped, args=(t,)) for t in range(n)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors[0]


NEST_FORMS = ("dot", "hadamard", "reduce", "diagonal", "gemv", "broadcast", "product")


@st.composite
def nest_specs(draw):
    """(subscripts, shapes) of the loop-nest engine's patterns: permuted dots
    ('abc,cab->'), Hadamard products and their partial sums, reductions to a
    permuted subset (stride-0 output axes), diagonals ('ii->', 'ijj->ij'),
    GEMVs whose vector is any subset, broadcast operands (a missing label is
    a stride-0 loop), elementwise products of three operands.  Extents reach
    past every vector width and past one summation block along one axis."""
    form = draw(st.sampled_from(NEST_FORMS))
    nl = draw(st.integers(1, 4))
    labels = "abcd"[:nl]
    sizes = {c: draw(st.integers(1, 9)) for c in labels}
    big = draw(st.sampled_from(labels))
    sizes[big] = draw(st.sampled_from([1, 7, 16, 33, 70, 257, 2100]))
    while math.prod(sizes.values()) > 40000:
        c = max(sizes, key=sizes.get)
        sizes[c] = max(1, sizes[c] // 2)

    def perm(t):
        return "".join(draw(st.permutations(list(t))))

    def subset(t):
        return "".join(c for c in t if draw(st.booleans()))

    if form == "dot":
        terms, out = [labels, perm(labels)], ""
    elif form == "hadamard":
        terms, out = [labels, perm(labels)], perm(subset(labels))
    elif form == "reduce":
        terms, out = [labels], perm(subset(labels))
    elif form == "diagonal":
        d = draw(st.sampled_from(labels))
        rep = labels.replace(d, d + d)
        terms = [perm(rep)] + ([labels] if draw(st.booleans()) else [])
        out = perm(subset(labels))
    elif form == "gemv":
        terms, out = [labels, perm(subset(labels) or labels[0])], perm(subset(labels))
    elif form == "broadcast":
        terms, out = [labels, perm(subset(labels) or labels[-1])], perm(labels)
    else:
        terms, out = [labels, perm(labels), perm(labels)], perm(subset(labels))
    shapes = [tuple(sizes[c] for c in t) for t in terms]
    return ",".join(terms) + "->" + out, shapes
