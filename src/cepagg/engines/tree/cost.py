"""Choosing a join tree: statistics measured on the input and a cost per tree.

Statistics (from the first batch an engine sees, up to :data:`SAMPLE` events): for each
position, the events per window and partition that may bind it (its rate times the window), and
for each condition between variables its selectivity, the fraction of sampled bindings (events
drawn from each variable's candidates) on which it holds.

The cardinality of a node is the product of its positions' events per window, the selectivities
of the conditions checked in its subtree, and ``1/n!`` (the chance that ``n`` events come in the
pattern's order). A node's join looks at ``|left| * |right| / 2`` pairs (the left composites
that end before a right one starts); each costs :data:`SCAN` of a condition evaluation to
form, and one evaluation when the node has conditions -- or, where stores may condense, one
evaluation per group of the left store: ``|right|`` times the number of distinct values of the
store's condensation terms in a window (measured on the sample, at most ``|left|``). A node
also costs the composites it forms, and a stored node the composites it keeps.

The tree of least total cost is chosen among every tree for up to :data:`EXHAUSTIVE`
positions, among the left-deep, right-deep and balanced ones beyond.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field

from ...errors import CepaggError
from ...lang import ast
from ...lang.expr import holds
from ..rcep.shape import Shape
from .plan import all_trees, bushy, compile_tree, left_deep, right_deep

SAMPLE = 20_000
SCAN = 0.2  # forming a candidate pair, in condition evaluations
PAIRS = 200
EXHAUSTIVE = 7


@dataclass(frozen=True)
class Stats:
    per_window: tuple  # per position: candidate events per window and partition
    selectivity: tuple  # per condition of Shape.cross
    distinct: dict = field(default_factory=dict)  # (position, attribute) -> distinct values


def measure(shape: Shape, events: list, fits: list, key_of, within: int, seed: int = 0) -> Stats:
    """Statistics of ``events`` (in stream order) for the query's positions."""
    events = events[:SAMPLE]
    k = len(shape.positions)
    cands: list[list] = [[] for _ in range(k)]
    keys = set()
    for e in events:
        key = key_of(e)
        if key is None:
            continue
        keys.add(key)
        for p in range(k):
            if fits[p](e):
                cands[p].append(e)
    if not events:
        return Stats(tuple([1.0] * k), tuple([0.5] * len(shape.cross)))
    span = max(1, events[-1].ts - events[0].ts + 1)
    share = min(1.0, within / span) / max(1, len(keys))
    per_window = tuple(len(c) * share for c in cands)
    rng = random.Random(seed)
    var_pos = {p.var: p.index for p in shape.positions}
    sel = []
    for c in shape.cross:
        doms = [cands[var_pos[v]] for v in sorted(c.vars)]
        if any(not d for d in doms):
            sel.append(0.5)
            continue
        hits = 0
        try:
            for _ in range(PAIRS):
                ev = {v: rng.choice(d) for v, d in zip(sorted(c.vars), doms)}
                hits += holds(c.expr, lambda n: ev[n.var].get(n.name))
            sel.append(max(hits, 0.5) / PAIRS)
        except CepaggError:
            sel.append(1.0)
    distinct = {}
    for c in shape.cross:
        for x in c.expr.walk():
            if isinstance(x, ast.Attr) and x.var in var_pos:
                p = var_pos[x.var]
                distinct[(p, x.name)] = len({_hashable(e.get(x.name)) for e in cands[p]})
    return Stats(per_window, tuple(sel), distinct)


def _hashable(v):
    return v if not isinstance(v, (list, dict)) else repr(v)


def tree_cost(shape: Shape, stats: Stats, tree, condense: bool = True) -> float:
    """Estimated work per window of ``tree``, in condition evaluations (``condense``: stores
    may condense)."""
    var_pos = {p.var: p.index for p in shape.positions}
    spans = [(min(var_pos[v] for v in c.vars), max(var_pos[v] for v in c.vars)) for c in shape.cross]
    plan = compile_tree(shape, tree)

    def card(lo: int, hi: int) -> float:
        x = math.prod(stats.per_window[lo:hi + 1]) / math.factorial(hi - lo + 1)
        for (a, b), s in zip(spans, stats.selectivity):
            if lo <= a and b <= hi:
                x *= s
        return x

    total = 0.0
    for n in plan.nodes:
        if n.leaf:
            continue
        left, right = card(n.left.lo, n.left.hi), card(n.right.lo, n.right.hi)
        pairs = left * right / 2
        work = SCAN * pairs
        if n.checks:
            groups = left
            if condense and n.left.terms:
                groups = min(left, math.prod(min(stats.distinct.get((n.left.lo + i, a), left),
                                                 stats.per_window[n.left.lo + i])
                                             for i, a in n.left.terms))
            work += min(pairs, right * groups)
        out = card(n.lo, n.hi)
        total += work + out + (out if n.stored else 0.0)
    return total


def candidates(k: int) -> tuple:
    if k <= EXHAUSTIVE:
        return all_trees(0, k - 1)
    return tuple(dict.fromkeys([left_deep(k), right_deep(k), bushy(0, k - 1)]))


def choose_tree(shape: Shape, stats: Stats, condense: bool = True):
    """The cheapest tree and its estimated cost."""
    k = len(shape.positions)
    costs = [(tree_cost(shape, stats, t, condense), t) for t in candidates(k)]
    return min(costs, key=lambda x: x[0])[::-1]
