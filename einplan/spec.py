"""Step 1 of the data flow in DESIGN.md: parse and validate einsum subscripts.

``parse_spec(args)`` takes the positional arguments of ``einsum`` in either form,

    einsum("ij,jk->ik", a, b)                      # subscripts string
    einsum(a, [0, 1], b, [1, 2], [0, 2])           # interleaved sublists

and returns a ``Spec``: one term per operand with the ellipsis expanded, the
output term, and the extent of every label. Validation follows numpy.einsum's
default (C) path, raising the same exception classes; messages name the
operand, the label and the sizes involved.

Label alphabet. User labels are the ASCII letters. The dimensions covered by
an ellipsis get private labels ``chr(0x100 + d)`` (``d`` = position in the
broadcast ellipsis shape), right-aligned like numpy broadcasts, so an operand
whose ellipsis covers fewer dimensions gets the *last* of those labels:

    "...ij,...jk" with ndims 4 and 3  ->  inputs ("\u0100\u0101ij", "\u0101jk")

Broadcasting. As in numpy.einsum, a label may have extent 1 in one operand and
N in another (the size-1 axis is broadcast); ``Spec.sizes`` holds the
broadcast extent N, and later stages read each operand's own extent from its
shape. A label repeated *within* one operand (a diagonal, "ii") must have the
same extent at every occurrence; repeated labels are kept in the term.

Parsing is cached on (subscripts, shapes) because einsum on tiny arrays is
dominated by per-call overhead.
"""
from __future__ import annotations

import functools
import operator
from dataclasses import dataclass
from typing import Mapping

import numpy as np

__all__ = ["Spec", "parse_spec", "ELLIPSIS_BASE", "is_ellipsis_label"]

# The 52 labels, in numpy's order: interleaved sublists use ints 0..51 for
# "A".."Z", "a".."z"; letters einplan makes up are taken in this order too.
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_LETTERS = frozenset(LETTERS)
ELLIPSIS_BASE = 0x100  # private labels for ellipsis dims; numpy allows 64 dims
_shape = operator.attrgetter("shape")


def is_ellipsis_label(label: str) -> bool:
    """True for the private labels that stand for ellipsis ('...') dimensions."""
    return ord(label) >= ELLIPSIS_BASE


class Sizes(dict):
    """Read-only, hashable ``label -> extent`` map, so a Spec can key caches."""

    __slots__ = ()

    def __hash__(self):
        return hash(frozenset(self.items()))

    def __reduce__(self):  # pickle rebuilds through __init__, not __setitem__
        return Sizes, (dict(self),)

    def _read_only(self, *args, **kwargs):
        raise TypeError("Spec.sizes is read-only")

    __setitem__ = __delitem__ = __ior__ = _read_only
    clear = pop = popitem = setdefault = update = _read_only


@dataclass(frozen=True)
class Spec:
    """A validated einsum: what to compute, not yet how.

    inputs  one term per operand, one label per axis in the operand's axis order
            (ellipsis dims replaced by private labels, see the module docstring)
    output  the output term, in the same alphabet (implicit mode resolved)
    sizes   broadcast extent of every label
    """

    inputs: tuple[str, ...]
    output: str
    sizes: Mapping[str, int]

    @property
    def subscripts(self) -> str:
        """Normalized 'ab,bc->ac' text (ellipsis dims shown as their labels)."""
        return ",".join(self.inputs) + "->" + self.output

    def plain_labels(self) -> dict:
        """label -> ASCII letter for the ellipsis dims (the caller's letters
        stay as they are): unused letters in numpy's interleaved order,
        upper case first, outermost dim first; '?' once the 52 run out."""
        labels = set("".join(self.inputs) + self.output)
        free = iter([c for c in LETTERS if c not in labels])
        return {c: next(free, "?") for c in sorted(c for c in labels if is_ellipsis_label(c))}

    def plain_subscripts(self) -> str:
        """The spec as subscripts numpy.einsum accepts ('...' dims as
        letters), or '' when more than 52 labels leave no letter for one."""
        mapping = self.plain_labels()
        if "?" in mapping.values():
            return ""
        tr = lambda t: "".join(mapping.get(c, c) for c in t)  # noqa: E731
        return ",".join(tr(t) for t in self.inputs) + "->" + tr(self.output)


# numpy's iterator takes at most 64 arrays: the operands and the output
_MAX_OPERANDS = 64


def parse_spec(args: tuple) -> tuple[Spec, tuple]:
    """Parse ``einsum``'s positional arguments into ``(Spec, operands)``.

    ``args`` is ``(subscripts, *operands)`` or the interleaved form
    ``(op0, sublist0, op1, sublist1, ..., [sublistout])``. Operands come back
    converted with ``np.asanyarray`` (ndarrays pass through untouched).
    Results are cached on (subscripts, shapes); the Spec is immutable.
    Raises ValueError / TypeError as numpy.einsum does.
    """
    if not args:
        raise ValueError(
            "must specify the einstein sum subscripts string and at least one "
            "operand, or at least one operand and its corresponding subscripts list")
    first = args[0]
    if isinstance(first, str):
        if not first.isascii():
            first.encode("ascii")   # numpy's UnicodeEncodeError, naming the character
        subscripts, operands = first, args[1:]
    elif isinstance(first, bytes):
        subscripts, operands = first.decode("latin-1"), args[1:]
    else:
        subscripts, operands = _interleaved_to_subscripts(args)
    if not operands:
        raise ValueError(
            "must specify the einstein sum subscripts string and at least one operand")
    if len(operands) >= _MAX_OPERANDS:
        raise ValueError("too many operands")
    operands = tuple(map(np.asanyarray, operands))
    return _spec_for(subscripts, *map(_shape, operands)), operands


def _interleaved_to_subscripts(args: tuple) -> tuple[str, tuple]:
    """(a, [0, 1], b, [1, 2], [0, 2]) -> ("AB,BC->AC", (a, b))."""
    if len(args) < 2:
        raise ValueError("must provide at least an operand and a subscripts list to einsum")
    nops = len(args) // 2
    terms = [_sublist_to_term(args[2 * i + 1]) for i in range(nops)]
    text = ",".join(terms)
    if len(args) % 2:  # odd count: the last sublist is the output
        text += "->" + _sublist_to_term(args[-1])
    return text, args[0:2 * nops:2]


def _sublist_to_term(sublist) -> str:
    try:
        items = iter(sublist)
    except TypeError:
        raise TypeError("the subscripts for each operand must be a list or a tuple") from None
    term = []
    for item in items:
        if item is Ellipsis:
            if "..." in term:
                raise ValueError("each subscripts list may have only one ellipsis")
            term.append("...")
            continue
        # numpy rejects bools although they are ints
        if isinstance(item, (bool, np.bool_)):
            raise TypeError("each subscript must be either an integer or an ellipsis")
        try:
            value = operator.index(item)
        except TypeError:
            raise TypeError("each subscript must be either an integer or an ellipsis") from None
        if not 0 <= value < 52:
            raise ValueError(f"subscript {value} is not within the valid range [0, 52)")
        term.append(LETTERS[value])
    return "".join(term)


# Shapes are passed as separate arguments: lru_cache builds its key tuple
# anyway, and this saves building another one per call.
@functools.lru_cache(maxsize=4096)
def _spec_for(subscripts: str, *shapes: tuple[int, ...]) -> Spec:
    inputs, output = _expand_terms(subscripts, tuple(map(len, shapes)))
    sizes = {}
    for iop, (term, shape) in enumerate(zip(inputs, shapes)):
        own = {}  # extents seen in this operand: diagonals must match exactly
        for label, extent in zip(term, shape):
            seen = own.setdefault(label, extent)
            if seen != extent:
                raise ValueError(
                    f"dimensions in operand {iop} for collapsing index "
                    f"{_describe(label)} don't match ({seen} != {extent})")
            previous = sizes.setdefault(label, extent)
            if previous == extent or extent == 1:
                continue
            if previous == 1:
                sizes[label] = extent
            else:
                raise ValueError(
                    f"operands could not be broadcast together: size of "
                    f"{_describe(label)} for operand {iop} ({extent}) does not "
                    f"match previous terms ({previous})")
    return Spec(inputs, output, Sizes(sizes))


def _describe(label: str) -> str:
    if is_ellipsis_label(label):
        return f"ellipsis ('...') dimension {ord(label) - ELLIPSIS_BASE}"
    return f"label '{label}'"


@functools.lru_cache(maxsize=1024)
def _expand_terms(subscripts: str, ndims: tuple[int, ...]) -> tuple[tuple[str, ...], str]:
    """Split, check and ellipsis-expand the subscripts for operands of these ndims."""
    arrow = subscripts.find("-")
    if arrow >= 0:
        if subscripts[arrow + 1:arrow + 2] != ">":
            raise ValueError(
                "einstein sum subscript string does not contain proper '->' output specified")
        input_text, output_text = subscripts[:arrow], subscripts[arrow + 2:]
    else:
        input_text, output_text = subscripts, None

    raw_terms = input_text.split(",")
    if len(raw_terms) != len(ndims):
        raise ValueError(
            f"einstein sum subscripts string specifies {len(raw_terms)} operand(s) "
            f"but {len(ndims)} operand(s) were provided")

    # (labels, ellipsis position or -1, ellipsis ndim) per operand
    parsed = []
    for iop, (text, ndim) in enumerate(zip(raw_terms, ndims)):
        labels, ell_at = _scan_term(text, f"operand {iop}")
        if len(labels) > ndim:
            raise ValueError(
                f"einstein sum subscripts string contains too many subscripts "
                f"for operand {iop}: {len(labels)} subscripts for {ndim} dimension(s)")
        if ell_at < 0 and len(labels) < ndim:
            raise ValueError(
                f"operand has more dimensions than subscripts given in einstein "
                f"sum, but no '...' ellipsis provided to broadcast the extra "
                f"dimensions (operand {iop} has {ndim} dimension(s), "
                f"{len(labels)} subscript(s) given)")
        parsed.append((labels, ell_at, ndim - len(labels)))

    ell_ndim = max([n for _, at, n in parsed if at >= 0], default=0)
    ell_labels = "".join(chr(ELLIPSIS_BASE + d) for d in range(ell_ndim))
    inputs = tuple(
        labels if at < 0 else labels[:at] + ell_labels[ell_ndim - n:] + labels[at:]
        for labels, at, n in parsed)

    if output_text is None:
        # implicit mode: ellipsis dims, then labels used exactly once, sorted
        # in ASCII order (upper case first) like numpy
        counts = {}
        for labels, _, _ in parsed:
            for label in labels:
                counts[label] = counts.get(label, 0) + 1
        output = ell_labels + "".join(sorted(l for l, c in counts.items() if c == 1))
        return inputs, output

    labels, ell_at = _scan_term(output_text, "the output")
    used = set("".join(inputs))
    for i, label in enumerate(labels):
        if label not in used:
            raise ValueError(
                f"einstein sum subscripts string included output subscript "
                f"'{label}' which never appeared in an input")
        if label in labels[:i]:
            raise ValueError(
                f"einstein sum subscripts string includes output subscript "
                f"'{label}' multiple times")
    if ell_at < 0:
        if ell_ndim:
            raise ValueError(
                f"output has more dimensions than subscripts given in einstein "
                f"sum, but no '...' ellipsis provided to broadcast the extra "
                f"dimensions (the input ellipses cover {ell_ndim} dimension(s))")
        return inputs, labels
    return inputs, labels[:ell_at] + ell_labels + labels[ell_at:]


def _scan_term(text: str, where: str) -> tuple[str, int]:
    """'i...j ' -> ('ij', 1): the letters and where the ellipsis sits (-1: none)."""
    labels = []
    ell_at = -1
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in _LETTERS:
            labels.append(c)
        elif c == ".":
            if ell_at >= 0 or text[i:i + 3] != "...":
                raise ValueError(
                    f"einstein sum subscripts string contains a '.' that is not "
                    f"part of an ellipsis ('...') in {where}")
            ell_at = len(labels)
            i += 2
        elif c != " ":
            raise ValueError(
                f"invalid subscript '{c}' in einstein sum subscripts string "
                f"({where}), subscripts must be letters")
        i += 1
    return "".join(labels), ell_at
