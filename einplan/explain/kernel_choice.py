"""The kernel decisions explain prints, read from the Plan.

A GemmStep's ``kernel`` record holds the C core's schedule (made once with
the step's compiled descriptor, which runs it) and where the orientation put
C's unit-stride index; explain reads them here and derives only what they
imply (tile counts, the words of the report).  Two things are still asked of
the C core at explain time: the schedule of a loop of smaller GEMMs (a GEMM
no plan holds) and ep_copy's schedule for a copy step.
"""
from __future__ import annotations

from .. import _native, model
from ..plan import OUT
from .schema import Orientation


def gemm_schedule(step):
    """The schedule the step's descriptor runs, with its tile counts.  A 1m
    step runs one real GEMM of m x 2n x 2k."""
    c2 = 2 if step.complex_mode == "1m" else 1
    return model.schedule_of(step.kernel, step.m.extent, c2 * step.n.extent,
                             c2 * step.k.extent, step.batch.extent)


def loop_schedule(m, n, k, nb, dtype):
    """The schedule of a batched loop of contiguous m x k x n GEMMs (the
    alternative a merge avoids)."""
    return model.gemm_schedule(m, n, k, nb, _native.get_num_threads(), dtype=dtype)


def copy_schedule(ctx, step, src_st, dst_st, itemsize):
    """What ep_copy runs for a same-dtype copy step (the C core's own
    decision, as execute calls it), or None when the step's copy is not
    ep_copy's (element size, unknown dst strides)."""
    labels = [c for c in step.src_labels if ctx.sizes[c] != 1]
    if itemsize not in (1, 2, 4, 8, 16) or any(c not in dst_st for c in labels):
        return None
    return _native.copy_schedule([ctx.sizes[c] for c in labels],
                                 [src_st[c] for c in labels],
                                 [dst_st[c] for c in labels], itemsize)


def orientation(ctx, step) -> Orientation:
    """Which operand feeds the kernel's rows (A) and which its columns (B),
    and why: C's unit-stride index lands in n where the vectors run."""
    unit, role = step.kernel.c_unit, step.kernel.c_unit_role
    a_src, b_src = ctx.slot_source.get(step.a), ctx.slot_source.get(step.b)
    first, second = ("second", "first") if step.swapped else ("first", "second")
    if role == "n":
        why = (f"C's unit-stride index '{ctx.d(unit)}' is in {b_src}, so that operand "
               "feeds the columns (n), where the micro-kernel's vectors run")
        if step.swapped:
            why += "; the einsum's operands were exchanged to get there"
        else:
            why += "; einsum operand order kept"
        scattered = model.scattered_share(step)
        if scattered >= 1.0:
            how = ("every C tile crosses a break in C's strides (its axes did not merge) "
                   "and is stored element by element through a private tile,")
        elif scattered:
            how = (f"{scattered:.0%} of C's tiles cross a break in C's strides (its axes "
                   "did not merge) and are stored element by element through a private "
                   "tile, the rest as contiguous vectors,")
        else:
            how = "C tiles are stored as contiguous vectors"
        result = (f"{how} straight into the output's own layout: no transpose and no "
                  "copy of the output")
    elif unit is None:
        why = "C has no axis of extent > 1"
        result = "no transpose and no copy of the output"
    else:
        why = (f"C's unit-stride index '{ctx.d(unit)}' is a {role} index: no operand order "
               "puts it in n")
        result = ("C tiles are written through strided stores (a private tile where "
                  "offsets are irregular); still no transpose or copy of the output")
    out_layout = None
    if step.c == OUT:
        out_layout = ctx.plan_out_layout()
        if ctx.plan.out_cast:
            result += ("; then the result is cast/copied into out= (its dtype or "
                       "layout differs: see copies)")
    return Orientation(a_src, b_src, bool(step.swapped), first, second,
                       None if unit is None else ctx.d(unit), role, out_layout, False,
                       bool(ctx.plan.out_cast and step.c == OUT), why, result)
