"""Step 2d of the data flow in DESIGN.md: merge axes within each role.

After roles are assigned, letters no longer matter: every role is a group of
(extent, stride per operand) axes.  Two adjacent axes of one role merge into
one when EVERY operand holding the role has

    stride[outer] == extent[inner] * stride[inner]

so e.g. tract's ``bij,jk->bik`` with A (77, bs, 512) C-contiguous and C
C-contiguous merges b and i into one m axis of extent 77*bs -> one GEMM
instead of 77 small ones.  Axes are ordered within a group by C's strides
(batch, m, n; largest first) or by A's / B's strides (k), so that merges are
found whatever the label order in the subscripts.  Pairs that stay apart are
recorded (``MergeBreak``) with the operands that broke them, for explain.
"""
from __future__ import annotations

from dataclasses import dataclass

from .plan import Axis, MergeBreak, Role, RoleGroup

# which operands hold each role, in the kernel contract's stride order
HOLDERS = {Role.BATCH: ("A", "B", "C"), Role.M: ("A", "C"),
           Role.N: ("B", "C"), Role.K: ("A", "B")}


@dataclass(frozen=True)
class GroupLayout:
    batch: RoleGroup
    m: RoleGroup
    n: RoleGroup
    k: RoleGroup
    breaks: tuple[MergeBreak, ...] = ()

    @property
    def n_axes(self) -> int:
        return sum(len(g.axes) for g in (self.batch, self.m, self.n, self.k))


def merge_group(role: Role, labels: str, sizes, strides: dict,
                order_by: str) -> tuple[RoleGroup, tuple[MergeBreak, ...]]:
    """Order ``labels`` by ``strides[order_by]`` (descending |stride|), then merge.

    ``strides`` maps an operand name ('A', 'B', 'C') to {label: element stride}.
    """
    holders = HOLDERS[role]
    key = strides[order_by]
    # stable sort: equal strides keep the subscripts' order
    ordered = sorted(labels, key=lambda c: -abs(key[c]))
    axes: list[list] = []   # [labels, extent, [strides]] inner-most last
    breaks = []
    for lab in reversed(ordered):  # inner to outer
        st = [strides[h][lab] for h in holders]
        if axes:
            inner = axes[0]
            bad = tuple(h for h, s_o, s_i in zip(holders, st, inner[2])
                        if s_o != inner[1] * s_i)
            if not bad:
                inner[0] = lab + inner[0]
                inner[1] *= sizes[lab]
                continue
            breaks.append(MergeBreak(role, lab, inner[0][0], bad))
        axes.insert(0, [lab, sizes[lab], st])
    group = RoleGroup(role, tuple(Axis(l, e, tuple(s)) for l, e, s in axes))
    return group, tuple(reversed(breaks))


# The largest stride (in reals) a B along k packs from as a unit-stride one
# does: a complex's pair of reals (1m: the strides are the real views')
UNIT_PAIR = 2


def merge_axes(roles, sizes, strides_a: dict, strides_b: dict, strides_c: dict) -> GroupLayout:
    """Merge contiguous axes in every role of one step.

    ``roles`` is a roles.Roles already oriented (m belongs to A, n to B).
    For k (not in C) both A's and B's orders are tried; the one leaving fewer
    axes wins (``abcd,dbef->aecf``: k = {b, d}); with as many, B's when it is
    the larger operand (n > m) and its order alone makes its innermost k axis
    unit-stride (a stride of 2 too: complex B's reals, or a [..., ::2]
    slice): each panel of B then packs through the transposes of rows
    contiguous along k, where an irregular k went element by element
    ('ijk,jkl->il' (22,23,68) x (23,68,350) f32, B unit along k then j: 47%
    of the call in B's packing, 0.64x numpy; (5,616,563):T x
    (616,563,43):T c128, B's k a complex apart: 0.37x numpy).
    """
    strides = {"A": strides_a, "B": strides_b, "C": strides_c}
    batch, br_b = merge_group(Role.BATCH, roles.batch, sizes, strides, "C")
    m, br_m = merge_group(Role.M, roles.m, sizes, strides, "C")
    n, br_n = merge_group(Role.N, roles.n, sizes, strides, "C")
    k, br_k = merge_group(Role.K, roles.k, sizes, strides, "A")
    if len(k.axes) > 1:
        k2, br_k2 = merge_group(Role.K, roles.k, sizes, strides, "B")
        larger_b = (n.extent > m.extent and abs(k2.axes[-1].strides[1]) <= UNIT_PAIR
                    and abs(k.axes[-1].strides[1]) > UNIT_PAIR)
        if len(k2.axes) < len(k.axes) or (len(k2.axes) == len(k.axes) and larger_b):
            k, br_k = k2, br_k2
    return GroupLayout(batch, m, n, k, br_b + br_m + br_n + br_k)


# An inner axis at least this long makes a GEMM worth running on its own.
PANEL_LOOP_MIN_RUN = 128
# A shorter one does too when the loop is a few GEMMs of at least this many
# elements of C each, and A, packed again for each, stays in L2: its
# straddled tiles are then most of the tiles.
PANEL_LOOP_MAX_GEMMS = 16
PANEL_LOOP_MIN_C = 16384


def loop_straddling_axes(layout: GroupLayout, nr: int, itemsize: int, l2_bytes: int):
    """Outer axes of a multi-axis n group become batch loops when the
    group's innermost axis is long (>= PANEL_LOOP_MIN_RUN) but not a multiple
    of NR: then micro-panels would straddle its runs, and every such panel is
    gathered when packed and its C tile scattered element by element.  As a
    loop, each GEMM has whole runs and a narrow last panel instead; A (which
    lacks the axis) is read with stride 0 and its block packed once per loop
    index, 1/run of the arithmetic.

    ``acb,cd->adb`` (a=64, b=c=d=256, f32, NR=48): n = (a, b) straddled at
    every 256th column (1 panel in 5.3); Zen 4, 2026-11-21, 1 thread: one
    GEMM 25.9 ms, a loop over a 23.2 ms (numpy.matmul(W.T, A) 22.6 ms).
    A shorter inner axis loops when the loop is a few large GEMMs:
    ``...ij,...jk->...ik`` (1,1,38557,10) x (1,4,10,17) f32, n = (4, 17),
    every tile straddled; Emerald Rapids, 1 thread: one GEMM 1.8-3.0 ms, a
    loop of 4 GEMMs 1.0-1.3 ms (numpy.matmul 1.2 ms).  Not when A passes
    L2: each GEMM then packs it from L3 or memory again ('abc,cd->adb'
    (7,5,3698)[::-1] x (3698,3919) F f64, A 116 MB: 93 ms as 7 GEMMs, 28 ms
    as one, numpy 38; with j = 100, A 15 MB: 9.8 ms against 6.9).

    m stays whole: a straddled MR panel only gathers rows when A is packed,
    and its tile goes out row by row, each row a run along n; a loop would
    pack B again per index for 1/run of the arithmetic, into GEMMs of a few
    rows.  ``abc,cd->abd`` with A[::-1] (m = (a, b) apart), Emerald Rapids,
    1 thread, f32: (6,13,200) x (200,3000) 1.48 ms as a loop, 0.73 one GEMM
    (numpy 0.88); (4,130,200) 4.6 / 4.0 (numpy 4.3); (4,300,256) x
    (256,2000) 8.3 / 7.6 (numpy 8.5).

    Returns (layout, moved) with moved = ((role, labels), ...)."""
    batch_axes = list(layout.batch.axes)
    g = layout.n
    if len(g.axes) < 2 or g.axes[-1].extent % nr == 0:
        return layout, ()
    inner = g.axes[-1].extent
    few_large = (g.extent // inner <= PANEL_LOOP_MAX_GEMMS
                 and layout.m.extent * inner >= PANEL_LOOP_MIN_C
                 and layout.m.extent * layout.k.extent * itemsize <= l2_bytes)
    if inner < PANEL_LOOP_MIN_RUN and not few_large:
        return layout, ()
    # batch strides are (A, B, C); n holds (B, C)
    for ax in g.axes[:-1]:
        batch_axes.append(Axis(ax.labels, ax.extent, (0, ax.strides[0], ax.strides[1])))
    moved = tuple(("n", ax.labels) for ax in g.axes[:-1])
    return (GroupLayout(RoleGroup(Role.BATCH, tuple(batch_axes)), layout.m,
                        RoleGroup(g.role, g.axes[-1:]), layout.k, layout.breaks), moved)
