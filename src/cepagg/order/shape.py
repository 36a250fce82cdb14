"""What the ordering layer needs to know about a query, independent of any engine.

* **Lanes.** The layer keeps one in-order engine state per *lane*: per output group for
  aggregates, per partition for matches, as the plan says (:func:`cepagg.plan.split.order_lanes`).
* **Relevant types.** Events of types the pattern does not mention cannot change any result
  (unless the query counts positions: ``contiguous``, ``WITHIN n EVENTS``, or has an untyped
  variable); the layer drops them on arrival.
* **Units.** A result is a set of *units*: an aggregate row keyed by its group and window (or
  instant), or one match (its group/window cells and its returned events). Units are what the
  layer emits, revises and retracts.
* **Requirements.** For every unit, the punctuation it needs per event type before no later
  event can change it: ``{type: t}`` means "once no more events of that type with ts <= t can
  come, this unit is final" (``"*"`` stands for every relevant type). An aggregate row of a
  window needs every relevant type up to the window's last instant. A match whose events are
  all present can only be invalidated by events of the types under a negation (or, with
  ``skip-till-next-match``/``contiguous``, by any event between its events), so it needs those
  types only, and only up to the end of the negation's scope.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Iterable

from ..engines.aggregates import key_width
from ..engines.reference.evaluate import partition_key
from ..errors import UnsupportedQuery
from ..events import Event
from ..lang.model import Atom, NotP, PNode, Query, SeqP, is_positive_item
from ..plan.split import order_lanes

INF = 2**62
NEG = -(2**62)
ALL = "*"  # every relevant type


def _atom_types(node: PNode) -> set:
    return {n.type if n.type is not None else ALL for n in node.walk() if isinstance(n, Atom)}


def _negated_types(node: PNode) -> set:
    """Types of atoms that lie under some NOT inside ``node`` (their events can invalidate)."""
    found: set = set()
    for n in node.walk():
        if isinstance(n, NotP):
            found |= _atom_types(n)
    return found


class Shape:
    """Lanes, units and requirements of one query (see the module docstring)."""

    def __init__(self, query: Query):
        q = self.q = query
        if q.concept_types:  # punctuations name event types; a concept's would be its leaves'
            raise UnsupportedQuery("order", f"the ordering layer reads punctuations per event type and does not "
                                   f"map them to concepts ({', '.join(sorted(q.concept_types))}); run the query "
                                   "over events in time order")
        self.matches = q.returns_matches
        self.mode = q.mode
        self.groups = len(q.group_by)
        self.width = key_width(q)
        types = q.event_types
        positional = q.strategy == "contiguous" or q.within_events is not None
        self.relevant: frozenset | None = None if (types is None or positional) else types
        self.lane_attrs = order_lanes(q)
        self.span = (q.within or 0) + (q.slide or 0) + 1
        self._analyse_negation()
        ret = {v.split("@")[0] for v in q.return_vars}
        positive = {v.split("@")[0] for v, var in q.variables.items() if not var.negated}
        self.full = positive <= ret

    # -- lanes --------------------------------------------------------------------------------

    def lane_of(self, e: Event) -> tuple | None:
        """The lane of an event; None: it can take part in no match (a key attribute is null,
        or its type is irrelevant)."""
        if self.relevant is not None and e.type not in self.relevant:
            return None
        if self.matches:
            return partition_key(self.q, e)
        key = tuple(e.get(a) for a in self.lane_attrs)
        return None if any(v is None for v in key) else key

    # -- negation analysis --------------------------------------------------------------------

    def _analyse_negation(self) -> None:
        """Types that can invalidate an existing match, split by how far their scope reaches:
        ``inner`` ones only up to the match's last event, ``outer`` ones to the end of the
        top-level scope (trailing negation, negation inside Kleene/AND/OR, ...)."""
        q = self.q
        inner: set = set()
        outer: set = set()
        root = q.pattern
        if isinstance(root, SeqP):
            items = root.items
            for i, item in enumerate(items):
                neg = _negated_types(item)
                if not neg:
                    continue
                later_positive = any(is_positive_item(x) for x in items[i + 1:])
                if not is_positive_item(item) and later_positive:
                    inner |= neg
                else:
                    outer |= neg
        else:
            outer |= _negated_types(root)
        if q.strategy != "skip-till-any-match":
            # an event between two adjacent events of a match can break it
            inner |= {ALL}
        self.unbounded = q.within_events is not None  # positions shift with every late event
        self.inner, self.outer = inner, outer

    # -- units --------------------------------------------------------------------------------

    def units(self, rows: Iterable[tuple]):
        """Engine rows as units: {key: row} for aggregates, Counter of match identities."""
        if not self.matches:
            return {tuple(r[:self.width]): tuple(r) for r in rows}
        found: dict[tuple, list] = {}
        for r in rows:
            prefix, number = tuple(r[:self.width]), r[self.width]
            found.setdefault((prefix, number), []).append(tuple(r[self.width + 1:]))
        return Counter((prefix, tuple(sorted(evs, key=_ev_order))) for (prefix, _), evs in found.items())

    def empty_units(self):
        return Counter() if self.matches else {}

    def match_rows(self, ident: tuple, number: int) -> list[tuple]:
        prefix, evs = ident
        return [prefix + (number,) + ev for ev in evs]

    def retract_row(self, key: tuple) -> tuple:
        return key + (None,) * (len(self.q.output_columns) - self.width)

    # -- times ----------------------------------------------------------------------------------

    def due(self, key: tuple) -> int:
        """Aggregate rows: the watermark at which an in-order engine knows the row."""
        if self.mode == "slide":
            return key[self.groups + 1] - 1
        if self.mode == "emit":
            return key[self.groups]
        return INF

    def requirement(self, key: Any) -> dict:
        """{type or ALL: t}: punctuations that make the unit final (see the module docstring)."""
        if not self.matches:
            return {ALL: self.due(key)}
        prefix, evs = key
        if self.unbounded:
            return {ALL: INF}
        times = [e[4] for e in evs]
        hi = max(times)
        outer_end = self._scope_end(key)
        inner_end = hi - 1 if self.full else outer_end
        if ALL in self.inner and self.q.strategy == "contiguous":
            inner_end = hi if self.full else outer_end  # equal times: positions decide
        req: dict = {}
        for t in self.inner:
            req[t] = max(req.get(t, NEG), inner_end)
        for t in self.outer:
            req[t] = max(req.get(t, NEG), outer_end)
        return req

    def _scope_end(self, key: Any) -> int:
        """A match unit: the last instant of its scope, after which none of its events (returned
        or not) can lie."""
        prefix, evs = key
        if self.mode == "slide":
            return prefix[self.groups + 1] - 1
        if self.q.within is not None:
            return min(e[4] for e in evs) + self.q.within - 1  # first.ts <= lo; the scope ends before first.ts + w
        return INF

    def seal_time(self, key: Any) -> int:
        """Once every relevant type is complete up to this time, the unit can never change.
        When the query returns only some of its variables, a match's other events may come
        later than its returned ones (``RETURN a`` of ``SEQ(A a, B b)``): the unit can still
        gain matches up to the end of its scope."""
        if not self.matches:
            return self.due(key)
        req = self.requirement(key)
        top = max(e[4] for e in key[1]) if self.full else self._scope_end(key)
        return max([top, *req.values()])

    def due_clock(self, key: Any) -> int:
        """The earliest stream clock (max ts arrived) at which an in-order engine could emit
        the unit: used for latency."""
        if not self.matches:
            d = self.due(key)
            return d if d >= INF else d + 1
        req = self.requirement(key)
        top = max(e[4] for e in key[1])
        return max([top, *(t + 1 if t < INF else INF for t in req.values())])


def _ev_order(ev: tuple) -> tuple:
    var, pos, event_id, _type, ts = ev
    return (ts, event_id, str(var), pos)
