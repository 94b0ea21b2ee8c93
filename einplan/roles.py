"""Steps 2b-2c of the data flow in DESIGN.md: local views, pre-sums, roles.

2b, per operand (``diagonal_view``):
  * a repeated label is a diagonal: one axis whose stride is the SUM of the
    repeated axes' strides -- a view, never a copy (``ii->i``);
  * an axis of extent 1 is dropped: either its label has size 1 (it blocks
    nothing) or it broadcasts against a larger extent elsewhere (stride 0,
    i.e. the operand does not depend on that label);
  * a label found only in this operand and not in the output (nor in any
    other operand) is summed out first (``presum_labels``): ``ab,bc->c``
    sums over 'a' before the contraction.

2c, per pairwise step (``assign_roles``), each label of A, B, C is one of

    role   appears in   numpy (einsumfunc.py)   TBLIS
    batch  A, B, C      bat_inds                ABC
    m      A, C         a_keep                  AC
    n      B, C         b_keep                  BC
    k      A, B         con_inds                AB

Labels of size 1 are dropped before classification: they never block a merge
or force a loop.  Which operand ends up as the kernel's A (rows, m) and which
as B (columns, n) is decided later (orient.orient_step).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LocalView:
    """One operand after step 2b: unique labels, extents > 1, element strides."""
    labels: str
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    diagonal: str = ""   # labels that were repeated in the term
    dropped: str = ""    # labels whose axis had extent 1 (size 1 or broadcast)


@dataclass(frozen=True)
class Roles:
    """The labels of one pairwise step, by role (order: as in C, k as in A)."""
    batch: str
    m: str
    n: str
    k: str
    presum_a: str = ""  # only in A, not in B or C: summed out of A first
    presum_b: str = ""

    def swapped(self) -> "Roles":
        """The same step with A and B exchanged (m <-> n)."""
        return Roles(self.batch, self.n, self.m, self.k, self.presum_b, self.presum_a)


def diagonal_view(term: str, shape, strides) -> LocalView:
    """Collapse repeated labels into one summed-stride axis; drop extent-1 axes.

    ``'ii'`` on a C-contiguous (3, 3) float array, strides (3, 1)
    -> labels 'i', shape (3,), strides (4,).
    """
    labels, ext, st = [], [], []
    diagonal, dropped = [], []
    for lab, e, s in zip(term, shape, strides):
        if lab in labels:
            j = labels.index(lab)
            st[j] += s
            if lab not in diagonal:
                diagonal.append(lab)
            continue
        labels.append(lab)
        ext.append(e)
        st.append(s)
    keep = [j for j, e in enumerate(ext) if e != 1]
    dropped = [labels[j] for j, e in enumerate(ext) if e == 1]
    return LocalView("".join(labels[j] for j in keep), tuple(ext[j] for j in keep),
                     tuple(st[j] for j in keep), "".join(diagonal), "".join(dropped))


def presum_labels(labels: str, others, output: str) -> str:
    """Labels of this operand found nowhere else: summed out before any step.

    ``"ab,bc->c"``: 'a' is only in the first operand -> 'a'.
    """
    elsewhere = set(output).union(*map(set, others)) if others else set(output)
    return "".join(c for c in labels if c not in elsewhere)


def assign_roles(a_labels: str, b_labels: str, c_labels: str) -> Roles:
    """Classify the labels of one pairwise step ``a,b->c`` into batch/m/n/k.

    ``"bij,bjk->bik"`` -> batch 'b', m 'i', n 'k', k 'j'.
    Labels in C but in neither A nor B are an error of the caller (C's labels
    must come from A or B); size-1 labels must already be dropped.
    """
    sa, sb, sc = set(a_labels), set(b_labels), set(c_labels)
    batch = "".join(c for c in c_labels if c in sa and c in sb)
    m = "".join(c for c in c_labels if c in sa and c not in sb)
    n = "".join(c for c in c_labels if c in sb and c not in sa)
    k = "".join(c for c in a_labels if c in sb and c not in sc)
    presum_a = "".join(c for c in a_labels if c not in sb and c not in sc)
    presum_b = "".join(c for c in b_labels if c not in sa and c not in sc)
    missing = sc - sa - sb
    if missing:
        raise ValueError(f"output labels {''.join(sorted(missing))!r} are in neither operand")
    return Roles(batch, m, n, k, presum_a, presum_b)
