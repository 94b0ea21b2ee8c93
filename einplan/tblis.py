"""pytblis's API on einplan: ``einsum``, ``contract``, ``tensordot`` and
``use_default_array_order``, with pytblis's conventions.

Code that takes pytblis as its backend takes this module in its place, e.g.
PySCF's ``lib.einsum`` / ``lib.contract``::

    numpy_helper.EINSUM_BACKEND = "pytblis"
    numpy_helper.pytblis = einplan.tblis

Where pytblis and numpy differ, this module does as pytblis does: a new array
is made in the default array order, 'C' unless ``use_default_array_order("F")``
says 'F', where numpy.einsum (and ``einplan.einsum``) lay the output out after
the operands ('K').  The program around the calls then meets the layouts it
meets under pytblis: PySCF's ``W -= X`` on two 600 MB intermediates runs at
copy speed when both are C-ordered, and about three times slower when each
has its own 'K' permutation.
"""
from __future__ import annotations

import contextlib

from . import api as _api
from . import scaled_update as _scaled_update
from . import frontends as _frontends
from .options import DEFAULT_ARRAY_ORDER

__all__ = ["einsum", "contract", "tensordot", "use_default_array_order",
           "get_default_array_order"]


def get_default_array_order() -> str:
    """The order ('C' or 'F') of the new arrays this module makes."""
    return DEFAULT_ARRAY_ORDER.get()


@contextlib.contextmanager
def use_default_array_order(order):
    """Make new arrays in ``order`` ('C' or 'F') inside the block (per thread and task)."""
    if order not in ("C", "F"):
        raise ValueError("order must be one of 'C' or 'F'")
    token = DEFAULT_ARRAY_ORDER.set(order)
    try:
        yield
    finally:
        DEFAULT_ARRAY_ORDER.reset(token)


def einsum(*operands, out=None, optimize=True, complex_real_contractions=True, **kwargs):
    """pytblis.einsum: numpy.einsum's call, the output in the default array order.

    ``order`` is the one keyword beyond pytblis's own: 'C' and 'F' as given,
    'A' is 'F' when every array operand is F-contiguous and 'C' otherwise,
    'K' (and no order) is the default array order.  ``optimize=True``
    (pytblis's default: find a good pairwise path) leaves the path to
    einplan's planner; any other value means what it means to numpy.einsum.
    A real operand with a complex one is always handled, so
    ``complex_real_contractions`` has nothing to switch.
    """
    unknown = [k for k in kwargs if k != "order"]
    if unknown:
        raise TypeError(f"Did not understand the following kwargs: {unknown}")
    order = kwargs.get("order", "K")
    if order not in ("C", "F", "A", "K"):
        raise ValueError("order must be one of 'C', 'F', 'A', or 'K'")
    if order == "A":
        arrays = [x for x in operands if hasattr(x, "flags")]
        order = "F" if arrays and all(x.flags.f_contiguous for x in arrays) else "C"
    elif order == "K":
        order = DEFAULT_ARRAY_ORDER.get()
    if optimize is True:
        return _api.einsum(*operands, out=out, order=order)
    return _api.einsum(*operands, out=out, order=order, optimize=optimize)


# pytblis.contract: C = alpha * einsum(subscripts, a, b) + beta * C, a new C in
# the default array order (scaled_update.py reads it)
contract = _scaled_update.contract


def tensordot(a, b, axes=2):
    """pytblis.tensordot: numpy.tensordot's call, the result in the default array order."""
    return _frontends.tensordot_in_order(a, b, axes, DEFAULT_ARRAY_ORDER.get())
