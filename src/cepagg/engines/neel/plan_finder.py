"""Plan-Finder: which disjuncts of a nested query's matches are bit-marked together.

Disjuncts with the same positive events (a *cluster*) can run each as a flat query on a match
engine, or together as one construction of their common events tested against each of them
(:mod:`.bitmark`). Neither always wins: a flat query tests its NOTs on the
matches of its own events, which, for a disjunct whose EXISTS became witness events, are more or
fewer than the group's common matches; bit-marking builds every match of the common events once
for the whole group and reads the stream once, but tests each match in Python. Mo Liu's
dissertation (§5.4) frames the choice as a partition of the disjuncts into groups, each run by
one shared operator, of least cost; its cost model is in a report outside the dissertation, so
this one is our own, in microseconds per window-length of stream of one partition, with ``λ``
events of each type per window (``λ^k / (k-1)!`` sequences of ``k`` given types start in a
window-length and end within the window):

* a flat query reads the events of the types it names (``PASS`` each; its witness events are
  one more type), builds every match of its positive events, witness events included
  (``BUILT`` each, plus ``NEG`` each when it has a NOT to test: the match engines test NOTs on
  whole matches), and returns those its NOTs let through (``OUT`` each): a NOT of a type lets
  ``exp(-λ/(n+1))`` through (a gap is about ``1/(n+1)`` of the window), an EXISTS of ``m``
  events ``(1 - exp(-λ/(m(n+1))))^m``;
* a bit-marked group reads the events of all its types once, builds every match of the common
  events (``BUILT``), tests each (``CHECK``, plus ``COLUMN`` per column of its EMap, an EXISTS
  column twice that) and returns those some disjunct holds (``OUT``);
* a unit whose matches another unit of its cluster may also find passes them through the seen
  set (``SEEN`` per match).

The constants are fitted by timing ``cepagg.runner.write_matches`` on rcep, writing to Parquet,
over part 1b's file of ``cepagg bench neel`` (``--write``; docs/benchmarks.md, "Nested
patterns"), the flat ``SEQ(A a, D d)``, ``SEQ(A a, NOT C, D d)``, ``SEQ(A a, D d, B b, C c)`` and
``SEQ(A a, NOT B, D d, B b, C c)`` (a match built; a NOT tested on it), and ``neel`` running
``SEQ(A a, NOT AND(B, C), D d, B b, C c)`` with each plan (the union's bookkeeping per match
returned, the seen set, the test of a bit-marked match); with them the estimates order the plans
of part 1b as its clock does. ``λ`` is :data:`DENSITY` unless the caller measured it.

The search is the chapter's iterative improvement (its Fig. 5.8): start from the aggressive
solution -- every markable disjunct of a cluster in one group --, move to the cheapest neighbour
(one disjunct split off into its own group, or two groups merged) while that lowers the cost,
then restart from the disjuncts each alone and keep the cheaper end point. (The chapter's loop
never leaves its first local minimum; the second start is what makes the outer loop search.)

>>> plan = find([("SEQ(A a, NOT C, D d)", 2, [(1, ("not", "C"))], {"A", "C", "D"}, 0),
...              ("SEQ(A a, NOT E, D d)", 2, [(1, ("not", "E"))], {"A", "E", "D"}, 0)], [True, True],
...             lambda i, j: True, density=4.0)
>>> plan.chosen, [round(c) for _, c in plan.candidates]
(((0, 1),), [124, 193])
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

#: events of each type per window of a partition, when nobody measured it
DENSITY = 4.0
PASS = 0.6      # µs per event read by one flat engine
BUILT = 0.7     # µs per match of its positive events a match engine builds
NEG = 2.5       # µs per such match tested for its NOTs by the engine
OUT = 1.0       # µs per match returned through the union (renumbered, rows built)
CHECK = 4.0     # µs per match of a bit-marked group tested against its EMap
COLUMN = 1.0    # µs per NOT column evaluated on the event index (an EXISTS column: twice)
SEEN = 8.0      # µs per match passed through the seen set

#: (disjunct text, positive events n, columns as (gap, shape), types read, witness types)
Disjunct = tuple[str, int, list[tuple[int, tuple]], set[str], int]


def _starting(k: int, lam: float) -> float:
    """Sequences of k given types starting in one window-length, all within a window."""
    return lam ** k / math.factorial(k - 1)


def _selectivity(col: tuple, n: int, lam: float) -> float:
    share = lam / (n + 1)
    if col[0] == "not":
        return math.exp(-share)
    m = sum(1 for pos, _ in col[1] if pos)
    return (1.0 - math.exp(-share / m)) ** m


def _through(d: Disjunct, lam: float) -> float:
    """The disjunct's matches per window-length."""
    n = d[1]
    return _starting(n, lam) * math.prod(_selectivity(c, n, lam) for _, c in d[2])


def alone_cost(d: Disjunct, lam: float, shared: bool) -> float:
    """A disjunct as a flat query on its own match engine."""
    _, n, cols, types, witnesses = d
    built = _starting(n + witnesses, lam)
    out = _through(d, lam)
    return (PASS * lam * (len(types) + witnesses) + (BUILT + (NEG if cols else 0.0)) * built
            + (OUT + (SEEN if shared else 0.0)) * out)


def group_cost(ds: list[Disjunct], lam: float, shared: bool) -> float:
    """Disjuncts bit-marked together: one construction of their common events."""
    n = ds[0][1]
    types = set().union(*(d[3] for d in ds))
    columns = {c for d in ds for c in d[2]}
    matches = _starting(n, lam)
    test = CHECK + sum(COLUMN * (1 if shape[0] == "not" else 2) for _, shape in columns)
    out = matches * (1.0 - math.prod(1.0 - _through(d, lam) / matches for d in ds))
    return PASS * lam * len(types) + (BUILT + test) * matches + (OUT + (SEEN if shared else 0.0)) * out


@dataclass
class Plan:
    """The groups chosen for one cluster and every partition the search priced."""

    members: tuple[int, ...]
    chosen: tuple[tuple[int, ...], ...]
    candidates: list[tuple[tuple[tuple[int, ...], ...], float]] = field(default_factory=list)
    density: float = DENSITY
    measured: bool = False  # the density was measured (else :data:`DENSITY`, assumed)

    @property
    def cost(self) -> float:
        return dict(self.candidates)[self.chosen]


def _canon(groups) -> tuple[tuple[int, ...], ...]:
    return tuple(sorted(tuple(sorted(g)) for g in groups))


def find(disjuncts: list[Disjunct], markable: list[bool], overlap: Callable[[int, int], bool],
         density: float = DENSITY) -> Plan:
    """The partition of one cluster's disjuncts (indices into ``disjuncts``) of least estimated
    cost; a disjunct that cannot be bit-marked stays alone. ``overlap(i, j)``: disjuncts i and j
    may share a match (so their groups, if different, pass the seen set)."""
    members = tuple(range(len(disjuncts)))
    priced: dict[tuple, float] = {}

    def cost(groups) -> float:
        key = _canon(groups)
        if key not in priced:
            total = 0.0
            for g in key:
                shared = any(overlap(i, j) for i in g for j in members if j not in g)
                if len(g) == 1:
                    total += alone_cost(disjuncts[g[0]], density, shared)
                else:
                    total += group_cost([disjuncts[i] for i in g], density, shared)
            priced[key] = total
        return priced[key]

    def neighbours(groups):
        groups = list(groups)
        for a, g in enumerate(groups):
            if len(g) > 1:
                for i in g:
                    yield groups[:a] + [tuple(x for x in g if x != i), (i,)] + groups[a + 1:]
        for a in range(len(groups)):
            for b in range(a + 1, len(groups)):
                merged = groups[a] + groups[b]
                if all(markable[i] for i in merged):
                    yield [g for k, g in enumerate(groups) if k not in (a, b)] + [merged]

    def descend(groups):
        groups = _canon(groups)
        while True:
            best = min((_canon(n) for n in neighbours(groups)), key=cost, default=None)
            if best is None or cost(best) >= cost(groups):
                return groups
            groups = best

    marked = tuple(i for i in members if markable[i])
    start = ([marked] if len(marked) > 1 else [(i,) for i in marked]) + [(i,) for i in members if not markable[i]]
    ends = [descend(start), descend([(i,) for i in members])]
    chosen = min(ends, key=lambda g: (cost(g), g))
    candidates = sorted(priced.items(), key=lambda kv: (kv[1], kv[0]))
    return Plan(members, chosen, candidates, density)


def partitions(items: tuple[int, ...]):
    """Every partition of ``items`` (for tests: each is a plan the engine can be made to run)."""
    if not items:
        yield ()
        return
    first, rest = items[0], items[1:]
    for p in partitions(rest):
        yield ((first,),) + p
        for k in range(len(p)):
            yield p[:k] + ((first,) + p[k],) + p[k + 1:]
