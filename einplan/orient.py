"""Step 2e of the data flow in DESIGN.md: which operand of a pairwise step
is the kernel's A (rows, m) and which its B (columns, n), and the memory
order of a result the planner is free to lay out (numpy's order='K').

The micro-kernel's vectors run along n, so the operand holding C's
unit-stride index becomes B; for a free output, C's order is chosen too.
``choose_kernel`` (2f) names the GEMM's shape once the groups are known.
"""
from __future__ import annotations

from .layout import merge_axes
from .model import tiles_scattered
from .operands import dense_strides
from .plan import KernelKind


def out_eff_labels(spec) -> str:
    """The output term without its size-1 labels (they carry no layout)."""
    return "".join(c for c in spec.output if spec.sizes[c] != 1)


def numpy_k_order(spec, infos, out_labels) -> str:
    """``out_labels`` in the memory order numpy.einsum gives an order='K' output.

    numpy iterates over the output labels then the summed labels (ascending
    code) and sorts these axes the way its nditer does for 'K': a stable
    insertion sort from the innermost axis, where two axes are compared only
    in operands that have a nonzero stride for both (smaller |stride| =
    inner; operands that disagree -> C order wins; no such operand ->
    ambiguous, keep looking).  ``'...ft,mf->...mt'`` on Fortran operands ->
    't', ..., 'm' (neither C nor F contiguous), as numpy.
    """
    summed = sorted(set("".join(spec.inputs)) - set(spec.output))
    iter_labels = list(spec.output) + summed
    views = [dict(zip(*label_strides(t, i))) for t, i in zip(spec.inputs, infos)]
    strides = {c: [v.get(c, 0) for v in views] for c in iter_labels}
    perm = list(reversed(iter_labels))  # innermost first
    for i0 in range(1, len(perm)):
        s0 = strides[perm[i0]]
        ipos = i0
        for i1 in range(i0 - 1, -1, -1):
            s1 = strides[perm[i1]]
            ambig, swap = True, False
            for a, c in zip(s0, s1):
                if a and c:
                    if abs(c) <= abs(a):
                        swap = False
                    elif ambig:
                        swap = True
                    ambig = False
            if not ambig:
                if swap:
                    ipos = i1
                else:
                    break
        if ipos != i0:
            perm.insert(ipos, perm.pop(i0))
    return "".join(c for c in reversed(perm) if c in out_labels)


def label_strides(term, info):
    """(labels, strides) of one operand: diagonals summed, broadcast axes stride 0."""
    labels, strides = [], []
    for c, e, st in zip(term, info.shape, info.strides):
        st = 0 if e == 1 else st
        if c in labels:
            strides[labels.index(c)] += st
        else:
            labels.append(c)
            strides.append(st)
    return labels, strides


def choose_kernel(layout) -> KernelKind:
    """KernelKind from which groups are empty (all run by _native.gemm for now)."""
    m, n, k = bool(layout.m.axes), bool(layout.n.axes), bool(layout.k.axes)
    if k:
        if m and n:
            return KernelKind.GEMM
        return KernelKind.GEMV if (m or n) else KernelKind.DOT
    return KernelKind.OUTER if (m and n) else KernelKind.BATCH_ONLY


def unit_label(c_strides: dict):
    """C's label with the smallest |stride| (its contiguous axis), or None."""
    if not c_strides:
        return None
    return min(c_strides, key=lambda c: abs(c_strides[c]))


def orient_step(roles, sizes, sa: dict, sb: dict, c_fixed: dict | None,
                c_orders=(), c_scale=1, tile=None):
    """Pick (swapped, layout, c_strides, c_order) for one pairwise step.

    ``sa``/``sb`` are kernel-view strides of the einsum's first / second
    operand.  With ``c_fixed`` (out= or order='C'/'F') C's strides are given
    and only A/B are chosen: the operand holding C's unit-stride label becomes
    B, so it lands in n (JAX's ``ab,...b->...a``: w is B, the output's last
    axis 'a' is n).  Without it, C's memory order is chosen too among
    [batch, m, n] (each group in its operand's stride order) for both
    orientations and the ``c_orders`` candidates tried first (e.g. C order of
    the output term); ``c_scale`` = 2 when C is complex (seen through float
    views).  Score: C's unit stride in n first, then most of C's tiles (of
    ``tile`` = (MR, NR)) stored whole rather than element by element across
    a break in C's strides, then fewest kernel axes after merging, then the
    earlier candidate.  ('ij...,jk...->ik...' (4830,17,2,1) x (17,189,1,1)
    f32: in numpy's 'K' layout n = (i, A) breaks in C every 2 columns, 7.5
    ms; in C laid out (k, i, A), B's panels gathered instead, 1.3 ms --
    numpy.einsum(optimize=True)'s own layout, 1.8 ms.)

    A tie keeps numpy's 'K' layout even where the other orientation writes C
    in denser blocks: the caller's next numpy operations on the result run
    at numpy's speed in the layout numpy would give.  PySCF's cc_Wvvvv
    (``kdac,kb->abcd`` minus ``kcbd,ka->abcd`` plus vvvv.transpose(0,2,1,3),
    then ``abcd,ijcd->ijab``; 21 occupied, 93 virtual, 1 thread, Zen 3): the
    tensordot-like layouts (m = the big operand's merged axes) made the two
    contractions 0.2 s faster and the numpy updates 0.7 s slower.
    """
    best = None
    for swapped in (False, True):
        r = roles.swapped() if swapped else roles
        a, bb = (sb, sa) if swapped else (sa, sb)
        if c_fixed is not None:
            cands = [(None, c_fixed)]
        else:
            own = (sorted(r.batch, key=lambda c: -abs(a[c]))
                   + sorted(r.m, key=lambda c: -abs(a[c]))
                   + sorted(r.n, key=lambda c: -abs(bb[c])))
            # the caller's preferred orders first: on a tie they win (a
            # C-contiguous result, like numpy, when it costs nothing)
            cands = []
            for order in [list(o) for o in c_orders] + [own]:
                st = dense_strides([sizes[c] for c in order], unit=c_scale)
                cands.append((order, dict(zip(order, st))))
        for ci, (order, sc) in enumerate(cands):
            layout = merge_axes(r, sizes, a, bb, sc)
            unit = unit_label({c: s for c, s in sc.items() if sizes[c] != 1})
            bad_unit = unit is not None and unit not in r.n
            scattered = tile is not None and c_fixed is None and tiles_scattered(
                layout.m.axes, layout.n.axes, *tile, c_scale) > 0.5
            score = (bool(bad_unit), scattered, layout.n_axes, ci, swapped)
            if best is None or score < best[0]:
                best = (score, swapped, layout, sc, order)
    return best[1:]
