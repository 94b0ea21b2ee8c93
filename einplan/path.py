"""Step 2a of the data flow in DESIGN.md: the pairwise contraction order.

More than two operands are contracted two at a time; the order comes from
opt_einsum's path finders (einplan writes no path finder of its own).  The
path uses opt_einsum's linear format: each entry lists positions in the
current operand list, those operands are removed and the result appended.

numpy's ``optimize`` values are accepted: False (left to right), True
(= 'greedy', numpy's meaning), 'greedy' or 'optimal' (numpy rejects other
names), ``(strategy, memory_limit)``, or an explicit path
``['einsum_path', (0, 1), ...]``.

einplan's own order (optimize left out) is not one path but a choice:
``candidate_paths`` lists every pairwise order of a few operands (the
planner prices each on its engines and keeps the cheapest), since the path
of fewest FLOPs is not the fastest when its steps differ in how they run
('ia,ib,ic->abc' with i = 2: forming the small 'iab' first lets the last
step write the large output along a unit-stride row).
"""
from __future__ import annotations

import itertools
import math

import opt_einsum

MAX_ENUMERATED = 4       # operands up to which every pairwise order is a candidate
ITERATION_SLACK = 16     # candidates doing at most this many times the fewest iterations
MAX_CANDIDATES = 6       # paths priced at most (each costs a plan build, ~0.5 ms)


def pairwise_path(terms, output, sizes, optimize=True) -> tuple[tuple[int, ...], ...]:
    """Contraction order for operands with (unique-label) ``terms``.

    ``"ab,bc,cd->ad"`` with optimize='greedy' -> ((1, 2), (0, 1)) or similar.
    """
    n = len(terms)
    if isinstance(optimize, (list, tuple)) and optimize and optimize[0] == "einsum_path":
        path = tuple(tuple(c) for c in optimize[1:])
        check_explicit(path, n)
        return path
    if n <= 1:
        return ((0,),) if n == 1 else ()
    if n == 2:
        return ((0, 1),)
    if optimize is False or optimize is None:
        # numpy's optimize=False is one big loop; pairwise, left to right
        return tuple((0, 1) for _ in range(n - 1))
    memory_limit = None
    if isinstance(optimize, (list, tuple)):
        if len(optimize) != 2 or not isinstance(optimize[0], str):
            raise TypeError("Did not understand the path: %s" % str(optimize))
        optimize, memory_limit = optimize
    if optimize is True or (isinstance(optimize, str) and optimize not in ("greedy", "optimal")):
        # numpy knows only these two names, and accepts any other where it
        # has nothing to order (planner.check_path_name raised otherwise)
        optimize = "greedy"
    # opt_einsum wants plain symbols; map einplan labels (incl. private
    # ellipsis labels) onto opt_einsum's alphabet
    symbol = {}
    for lab in "".join(terms) + output:
        if lab not in symbol:
            symbol[lab] = opt_einsum.get_symbol(len(symbol))
    eq = ",".join("".join(symbol[c] for c in t) for t in terms)
    eq += "->" + "".join(symbol[c] for c in output)
    shapes = [tuple(sizes[c] for c in t) for t in terms]
    path, _ = opt_einsum.contract_path(eq, *shapes, shapes=True, optimize=optimize,
                                       memory_limit=memory_limit)
    return tuple(tuple(c) for c in path)


def check_explicit(path, n):
    """Exception classes as numpy's einsum: an operand position out of range is
    an IndexError, a path that leaves operands uncontracted a RuntimeError."""
    live = n
    for c in path:
        if not c or len(set(c)) != len(c):
            raise ValueError(f"invalid contraction {c} in einsum path for {n} operands")
        bad = [i for i in c if not 0 <= i < live]
        if bad:
            raise IndexError(f"invalid contraction {c} in einsum path: operand position "
                             f"{bad[0]} is out of range for {live} remaining operand(s)")
        live -= len(c) - 1
    if live != 1:
        raise RuntimeError(f"Invalid einsum_path is specified: {live - 1} more operands "
                           "has to be contracted.")


def _orders(n):
    """Every pairwise contraction order of n operands, linear format."""
    if n <= 1:
        yield ()
        return
    for i, j in itertools.combinations(range(n), 2):
        for rest in _orders(n - 1):
            yield ((i, j),) + rest


def iterations(terms, output, sizes, path) -> int:
    """Iterations of ``path``'s steps: each step's product of the extents of
    the labels it touches (its loop nest, summed or not)."""
    live = [set(t) for t in terms]
    total = 0
    for contraction in path:
        picked = [live[i] for i in contraction]
        for i in sorted(contraction, reverse=True):
            del live[i]
        union = set().union(*picked)
        total += math.prod(sizes[c] for c in union)
        live.append(union & set(output).union(*live))
    return total


def candidate_paths(terms, output, sizes, optimize=True) -> list:
    """The paths the planner prices for einplan's own order (``optimize``
    True): opt_einsum's greedy path first, then every other pairwise order
    of up to MAX_ENUMERATED operands whose iterations are within
    ITERATION_SLACK of the fewest, fewest first, MAX_CANDIDATES in all.
    Any other ``optimize``: its one path."""
    first = pairwise_path(terms, output, sizes, optimize)
    n = len(terms)
    if optimize is not True or not 3 <= n <= MAX_ENUMERATED:
        return [first]
    others = [p for p in _orders(n) if p != first]
    work = {p: iterations(terms, output, sizes, p) for p in [first] + others}
    least = min(work.values())
    others = sorted((p for p in others if work[p] <= ITERATION_SLACK * least), key=work.get)
    return [first] + others[:MAX_CANDIDATES - 1]
