"""The reference evaluator's top level: partitions, the three result modes, aggregates.

It enumerates every match (:mod:`.matches`), then aggregates them: the "two-step" approach the
papers compare against, and the definition every other engine is tested against.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Iterator, Sequence

from ...events import Event
from ...lang.model import Aggregate, Query
from .matches import NEG_INF, POS_INF, Binding, M, Matcher, events_of
from .strategy import Adjacency


def partition_key(query: Query, e: Event) -> tuple | None:
    """The partition of an event (None: it lacks a key attribute and joins no match)."""
    key = tuple(e.get(a) for a in query.partition_by)
    return None if any(v is None for v in key) else key


def relevant(query: Query, e: Event) -> bool:
    types = query.event_types
    return types is None or e.type in types


@dataclass
class Acc:
    """Aggregates over a set of matches."""

    aggs: Sequence[Aggregate]
    count: int = 0
    values: list[Any] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.values = [_empty(a) for a in self.aggs]

    def add(self, env: Binding) -> None:
        self.count += 1
        for i, a in enumerate(self.aggs):
            if a.is_count_star:
                continue
            evs = [e for v in a.vars for run in env.get(v, ()) for e in run]
            if a.func == "COUNT":
                self.values[i] += len(evs)
                continue
            vals = [e.get(a.attr) for e in evs]
            vals = [v for v in vals if v is not None]
            if not vals:
                continue
            cur = self.values[i]
            if a.func in ("SUM", "AVG"):
                total, n = cur
                self.values[i] = (total + sum(_exact(v) for v in vals), n + len(vals))
            elif a.func == "MIN":
                self.values[i] = min(vals) if cur is None else min(cur, min(vals))
            else:
                self.values[i] = max(vals) if cur is None else max(cur, max(vals))

    def partial(self) -> tuple:
        """Mergeable cells (see cepagg.engines.aggregates)."""
        out = []
        for a, v in zip(self.aggs, self.values):
            out.append(self.count if a.is_count_star else v)
        return tuple(out)

    def result(self) -> tuple:
        out = []
        for a, v in zip(self.aggs, self.values):
            if a.is_count_star:
                out.append(self.count)
            elif a.func == "SUM":
                total, n = v
                out.append(None if n == 0 else _plain(total))
            elif a.func == "AVG":
                total, n = v
                out.append(None if n == 0 else float(Fraction(total) / n))
            else:
                out.append(v)
        return tuple(out)


def _empty(a: Aggregate) -> Any:
    if a.func == "COUNT":
        return 0
    if a.func in ("SUM", "AVG"):
        return (0, 0)
    return None


def _exact(v: Any) -> int | Fraction:
    if isinstance(v, bool):
        return int(v)
    return v if isinstance(v, int) else Fraction(v)


def _plain(total: int | Fraction) -> int | float:
    return total if isinstance(total, int) else float(total)


def empty_result(query: Query) -> tuple:
    return Acc(query.aggregates).result()


class Evaluation:
    """Evaluate one query over all events (sorted by ts, id)."""

    def __init__(self, query: Query, events: Sequence[Event], partial: bool = False,
                 start_range: tuple[int, int] | None = None):
        self.q = query
        self.partial = partial
        self.lo, self.hi = start_range if start_range is not None else (NEG_INF, POS_INF)
        parts: dict[tuple, list[Event]] = defaultdict(list)
        for e in events:
            key = partition_key(query, e)
            if key is not None:
                parts[key].append(e)
        self.partitions = dict(parts)
        self.matchers = {k: Matcher(query, evs) for k, evs in self.partitions.items()}
        self.adjacency = Adjacency(query) if query.strategy != "skip-till-any-match" else None

    # -- matches per mode ---------------------------------------------------------------------

    def accept(self, mt: Matcher, m: M, lo: int, hi: int) -> Binding | None:
        """The binding of skeleton ``m`` if it is a match with scope ``[lo, hi)``."""
        env = mt.binding(m)
        if not mt.conditions_hold(None, env):
            return None
        if self.adjacency is not None and not self.adjacency.allowed(mt, m):
            return None
        if not mt.valid(m, lo, hi, env):
            return None
        return env

    def matches_total(self, key: tuple) -> Iterator[tuple[M, Binding]]:
        """Every match of the partition under WITHIN alone (or no window)."""
        mt, q = self.matchers[key], self.q
        seen: set = set()
        top = q.pattern
        if q.within is not None:
            w = q.within
            for t0 in sorted({e.ts for e in mt.events if self.lo <= e.ts < self.hi}):
                for m in mt.gen(top, t0, t0 + w):
                    if m.start == t0:
                        yield from self._dedup(mt, m, m.end - w + 1, m.start + w, seen)
        elif q.within_events is not None:
            c = q.within_events
            for p0 in range(len(mt.events)):
                if not self.lo <= mt.events[p0].ts < self.hi:
                    continue
                mt.pos_bounds = (p0, p0 + c)
                found = [m for m in mt.gen(top, NEG_INF, POS_INF) if mt.position[events_of(m)[0].id] == p0]
                for m in found:
                    evs = events_of(m)
                    mt.pos_bounds = (mt.position[evs[-1].id] - c + 1, mt.position[evs[0].id] + c)
                    yield from self._dedup(mt, m, NEG_INF, POS_INF, seen)
                    mt.pos_bounds = (p0, p0 + c)
            mt.pos_bounds = (NEG_INF, POS_INF)
        else:
            for m in mt.gen(top, NEG_INF, POS_INF):
                if self.lo <= m.start < self.hi:
                    yield from self._dedup(mt, m, NEG_INF, POS_INF, seen)

    def matches_in(self, key: tuple, lo: int, hi: int) -> Iterator[tuple[M, Binding]]:
        """Every match lying in the window ``[lo, hi)`` (negation scoped to it too)."""
        mt = self.matchers[key]
        seen: set = set()
        for m in mt.gen(self.q.pattern, lo, hi):
            yield from self._dedup(mt, m, lo, hi, seen)

    def _dedup(self, mt: Matcher, m: M, lo: int, hi: int, seen: set):
        env = self.accept(mt, m, lo, hi)
        if env is None:
            return
        ident = frozenset((v, e.id) for v, runs in env.items() for run in runs for e in run)
        if ident not in seen:  # the same events in the same roles is the same match (OR)
            seen.add(ident)
            yield m, env

    # -- grouping -------------------------------------------------------------------------------

    def group_of(self, key: tuple, env: Binding) -> tuple:
        out = []
        for g in self.q.group_by:
            if g.var is None:
                out.append(key[self.q.partition_by.index(g.attr)])
            else:
                runs = env.get(g.var)
                out.append(runs[0][0].get(g.attr) if runs else None)
        return tuple(out)

    def unqualified_group(self, key: tuple) -> tuple:
        return tuple(key[self.q.partition_by.index(g.attr)] for g in self.q.group_by if g.var is None)

    # -- modes ----------------------------------------------------------------------------------

    def rows(self) -> list[tuple]:
        q = self.q
        if q.mode == "total":
            return self._rows_total()
        if q.mode == "slide":
            return self._rows_slide()
        return self._rows_emit()

    def _rows_total(self) -> list[tuple]:
        q = self.q
        if q.returns_matches:
            found = [(self.group_of(k, env), m, env) for k in self.partitions
                     for m, env in self.matches_total(k)]
            return self._match_rows(found, lambda g: g)
        accs: dict[tuple, Acc] = {}
        for k in self.partitions:
            for m, env in self.matches_total(k):
                g = self.group_of(k, env)
                accs.setdefault(g, Acc(q.aggregates)).add(env)
        if self.partial:
            return [g + acc.partial() for g, acc in accs.items()]
        if not q.group_by and not accs:
            accs[()] = Acc(q.aggregates)  # an ungrouped aggregate has one row, as in SQL
        return [g + acc.result() for g, acc in accs.items()]

    def _window_ids(self, key: tuple) -> list[int]:
        s, w = self.q.slide, self.q.within
        ids: set[int] = set()
        for e in self.partitions[key]:
            if relevant(self.q, e):
                ids.update(range((e.ts - w) // s + 1, e.ts // s + 1))
        return sorted(i for i in ids if self.lo <= i * s < self.hi)

    def _rows_slide(self) -> list[tuple]:
        q, s, w = self.q, self.q.slide, self.q.within
        if q.returns_matches:
            found = []
            for k in self.partitions:
                for wid in self._window_ids(k):
                    lo = wid * s
                    found += [(self.group_of(k, env) + (lo, lo + w), m, env)
                              for m, env in self.matches_in(k, lo, lo + w)]
            return self._match_rows(found, lambda g: g)
        accs: dict[tuple, Acc] = {}
        for k in self.partitions:
            for wid in self._window_ids(k):
                lo = wid * s
                for m, env in self.matches_in(k, lo, lo + w):
                    g = self.group_of(k, env) + (lo, lo + w)
                    accs.setdefault(g, Acc(q.aggregates)).add(env)
        if self.partial:
            return [g + acc.partial() for g, acc in accs.items()]
        return [g + acc.result() for g, acc in accs.items()]

    def _rows_emit(self) -> list[tuple]:
        q = self.q
        w = q.within
        by_group: dict[tuple, list[tuple]] = defaultdict(list)
        for k in self.partitions:
            by_group[self.unqualified_group(k)].append(k)
        empty = empty_result(q)
        rows: list[tuple] = []
        for ug, keys in by_group.items():
            instants = sorted({e.ts for k in keys for e in self.partitions[k]
                               if relevant(q, e) and self.lo <= e.ts < self.hi})
            every_instant = self.hi != POS_INF or self.lo != NEG_INF
            last: dict[tuple, tuple] = {}
            for t in instants:
                lo = t - w + 1 if w is not None else NEG_INF
                accs: dict[tuple, Acc] = {}
                for k in keys:
                    for m, env in self.matches_in(k, lo, t + 1):
                        accs.setdefault(self.group_of(k, env), Acc(q.aggregates)).add(env)
                groups = set(last) | set(accs)
                if every_instant and all(g.var is None for g in q.group_by):
                    groups.add(ug)  # slices must show every instant, also when the value is empty
                for g in sorted(groups, key=repr):
                    value = accs[g].result() if g in accs else empty
                    if value != last.get(g, empty) or every_instant:
                        rows.append(g + (t,) + value)
                        last[g] = value
        return rows

    def _match_rows(self, found, group_of) -> list[tuple]:
        def order(item):
            g, m, env = item
            evs = events_of(m)
            return (tuple(_sk(v) for v in g), evs[-1].ts, evs[0].ts, tuple(e.id for e in evs))

        rows: list[tuple] = []
        for number, (g, m, env) in enumerate(sorted(found, key=order), start=1):
            for var in self.q.return_vars:
                display = var.split("@")[0]
                for pos, e in enumerate(e for run in env.get(var, ()) for e in run):
                    rows.append(g + (number, display, pos, e.id, e.type, e.ts))
        return rows


def _sk(v: Any) -> tuple:
    from ...result import sort_key

    return sort_key(v)
