"""The options of one einsum call (dtype=, order=, casting=, optimize=) as
the planner takes them.

numpy gives some keywords a different meaning when they are passed than
when they are left out (an explicit ``casting='safe'`` is checked per pair on
its pairwise path; an explicit ``optimize=True`` is its 'greedy' path
finder), so an omitted keyword's default is a sentinel (``Omitted``) that
prints as numpy's default value.
"""
from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass

import numpy as np

from .operands import check_options, optimize_key

# The order ('C' or 'F') of the new arrays the pytblis-style calls make
# (``contract``, ``einplan.tblis``): pytblis's default, set per thread and task
# by ``einplan.tblis.use_default_array_order``.
DEFAULT_ARRAY_ORDER: ContextVar[str] = ContextVar("einplan_default_array_order", default="C")


class Omitted:
    """The default of a keyword whose meaning changes when it is given.

    numpy's pairwise path forwards only the options given (an explicit
    casting='safe' is checked per pair), and an explicit optimize=True is
    numpy's 'greedy' path finder with that path's casting and out= rules;
    einplan's own default pairwise order keeps numpy's optimize=False
    semantics.  Prints as the value it stands for, so a signature reads as
    numpy's.
    """
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __repr__(self):
        return repr(self.value)


CASTING_OMITTED = Omitted("safe")
OPTIMIZE_OMITTED = Omitted(True)


def omitted_as_value(option):
    """An option as numpy takes it (an omitted one as its default value)."""
    return option.value if option.__class__ is Omitted else option


@dataclass(frozen=True)
class Options:
    dtype: object = None
    order: str = "K"
    casting: str = "safe"
    optimize: object = True      # True: einplan's own order, numpy's optimize=False rules
    # numpy's pairwise path passes casting= to its ufuncs only when given
    casting_given: bool = False

    @classmethod
    def make(cls, dtype=None, order="K", casting=CASTING_OMITTED, optimize=OPTIMIZE_OMITTED):
        """Options of one call; ``casting`` and ``optimize`` may be omitted (Omitted)."""
        casting_given = casting is not CASTING_OMITTED
        order, casting = check_options(order, omitted_as_value(casting))
        if optimize is OPTIMIZE_OMITTED:
            optimize = True
        elif optimize is True:
            optimize = "greedy"      # numpy's meaning of an explicit True
        return cls(None if dtype is None else np.dtype(dtype), order, casting,
                   optimize_key(optimize), casting_given and casting == "safe")

    def key(self) -> tuple:
        """(dtype, order, casting, optimize): the options a Plan records."""
        return (self.dtype, self.order, self.casting, self.optimize)

    def numpy_kwargs(self) -> tuple:
        """The options as numpy.einsum's pairwise path receives them: only those given."""
        kw = [] if self.dtype is None else [("dtype", self.dtype)]
        if self.order != "K":
            kw.append(("order", self.order))
        if self.casting != "safe" or self.casting_given:
            kw.append(("casting", self.casting))
        return tuple(kw)
