"""Ways to compute one cube query, each exact, with an estimated cost (the reuse graph's edges).

For aggregates (what cepagg returns) the chapter's reuse of match results (§4.4) becomes:

* **alone**: the query evaluated by itself (the engine ``auto`` picks).
* **shared** (any refinement, either direction): evaluated in one shared A-Seq plan with a
  query it refines or that refines it (Qi et al., "Complex Event Analytics: Online Aggregation
  of Stream Sequence Patterns", SIGMOD 2014, §4: the plan shares their common prefix, e.g.
  SEQ(Computer, Finance) of SEQ(Computer, Finance, Education) and SEQ(Computer, Finance, EFC)).
* **roll-up** (concept refinement, specific to general, §4.4.5): a coarser query's cells are the
  finer query's cells plus those of *delta* queries -- the matches with some position's event
  outside the finer type. With positions d1..dk where the types differ, delta i takes the finer
  type at d1..d(i-1), the coarser type minus the finer type at di and the coarser type after:
  every match of the coarser query is a match of the finer one or of exactly one delta, because
  each event has one type. COUNT and SUM add, MIN and MAX take the extreme.
* **drill-down** (concept refinement, general to specific, §4.4.2): the finer query's counts are
  the coarser query's minus the deltas' (COUNT only: subtracting is exact for integers).

Concept reuse needs the two queries to differ only in the types of positive positions (a
negated concept is not a sum of its children) and to agree on everything else (aggregates,
window, conditions, groups). Costs are in units of event-position updates: the events of the
query's types times the positions that read them (A-Seq does a constant amount of work per
event and position); a delta is costed like a query.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..lang.concepts import Hierarchy
from ..lang.model import Query
from ..lang.printer import to_text
from .shape import Item, Shape, TypeSets, with_items

ADDITIVE = ("COUNT", "SUM", "MIN", "MAX")


@dataclass(frozen=True)
class Reuse:
    """How ``dst`` is computed: from ``src`` (None: from the ground, i.e. alone) by ``kind``."""

    src: str | None
    dst: str
    kind: str  # "alone" | "shared" | "roll-up" | "drill-down" | "known"
    cost: float

    def text(self) -> str:
        if self.src is None:
            return f"{self.dst}: {self.kind} (cost {self.cost:,.0f})"
        return f"{self.src} -> {self.dst}: {self.kind} (cost {self.cost:,.0f})"


class Costs:
    """Event counts per type (from the events, or uniform), and the cost estimates built on them."""

    def __init__(self, counts: dict[str, int] | None = None, matches: dict[str, int] | None = None):
        self.counts = counts or {}
        #: per query name, its number of matches (queries returning matches, when estimated)
        self.matches = matches or {}

    def rows(self, name: str, length: int) -> float:
        """The work of producing a query's match rows: one per match and position (0 unknown)."""
        return float(self.matches.get(name, 0) * length)

    def events_of(self, q: Query) -> float:
        types = q.event_types
        if types is None:
            return float(sum(self.counts.values()) or 1)
        if not self.counts:
            return float(len(types))
        return float(sum(self.counts.get(t, 0) for t in types))

    def alone(self, q: Query, length: int) -> float:
        return self.events_of(q) * (1 + length) + 1

    def shared(self, src: Shape, dst: Shape, q: Query) -> float:
        prefix = 0
        for a, b in zip(src.key, dst.key):
            if a != b:
                break
            prefix += 1
        return self.events_of(q) * max(0.5, len(dst) - prefix) + 1


def context(q: Query) -> str:
    """Everything of the query but its pattern, as text (positions' variables as written)."""
    text = to_text(replace(q, hierarchy=Hierarchy()))
    return text.split("\n", 1)[1] if "\n" in text else ""


def referenced(q: Query) -> set[str]:
    """Variables the clauses other than the pattern read."""
    names = set()
    for a in q.aggregates:
        names.update(v.split("@")[0] for v in a.vars)
    for c in q.conditions:
        names.update(v.split("@")[0] for v in c.vars)
    names.update(g.var.split("@")[0] for g in q.group_by if g.var)
    names.update(v.split("@")[0] for v, _ in q.equivalences)
    return names


def concept_positions(coarse: Shape, fine: Shape, qc: Query, qf: Query) -> list[int] | None:
    """The positions where a concept reuse between the two queries changes the type, or None when
    no exact aggregate reuse exists (a negated position differs, the other clauses differ, or an
    aggregate cannot be combined)."""
    if qc.returns_matches or qf.returns_matches or qc.mode == "emit" or len(coarse) != len(fine):
        return None
    if any(a.func not in ADDITIVE for a in qc.aggregates):
        return None
    if context(qc) != context(qf):
        return None
    used = referenced(qc) | referenced(qf)
    diff = []
    for k, (a, b) in enumerate(zip(coarse.items, fine.items)):
        if a.type != b.type:
            if a.negated:
                return None
            diff.append(k)
        if not a.negated and (a.var in used or b.var in used) and a.var != b.var:
            return None
    return diff or None


def deltas(qc: Query, coarse: Shape, fine: Shape, diff: list[int]) -> list[Query]:
    """The delta queries (module docstring): the matches of the coarse query that are not matches
    of the fine one, split by the first differing position outside the fine type."""
    h = qc.hierarchy
    out = []
    for i, d in enumerate(diff):
        rest = h.leaves(coarse.items[d].type) - h.leaves(fine.items[d].type)
        if not rest:
            continue
        sets, items = {}, []
        for k, item in enumerate(coarse.items):
            name = f"__p{k}"
            if k in diff[:i]:
                sets[name] = h.leaves(fine.items[k].type)
            elif k == d:
                sets[name] = rest
            else:
                sets[name] = h.leaves(item.type)
            items.append(Item(name, item.negated, item.var))
        out.append(with_items(qc, items, hierarchy=TypeSets.of(sets)))
    return out
