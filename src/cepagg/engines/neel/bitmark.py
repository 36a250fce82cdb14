"""Bit-marking: disjuncts with the same positive events found by one construction.

Negation push-down makes disjuncts that bind the same events in the same order and differ only
in what their gaps forbid or require -- ``NOT SEQ(B, C)`` between A and D gives
``SEQ(A a, NOT C, D d)`` and ``SEQ(A a, EXISTS SEQ(NOT B, C, NOT C), D d)``. Mo Liu's
dissertation (§5.3.2) evaluates such a group once: the matches of the common positive events
(the *skeleton*, here ``SEQ(A a, D d)``) are built once, and each is tested against every
disjunct of the group with two bit arrays:

* the **EMap** (compile time): one column per boolean item at its gap -- ``NOT C`` between the
  first and second event is one column, the same item in another gap another -- and one row per
  disjunct, the bits of the columns it holds (:class:`EMap`);
* the **RVI** (run time, per skeleton match): the columns evaluated so far and their truth.

A disjunct is dead once one of its columns is evaluated false (the chapter's Lemma 3: its row
is no subset of the RVI), satisfied once all of its columns are evaluated true; columns are
evaluated only until one disjunct is satisfied or all are dead, and a match is returned once
however many disjuncts it satisfies (Lemma 4: one construction, so no duplicates to remove).

The chapter's own example of this group (its Fig. 5.5) drops the "last event" negations that
negation push-down produces, and is not equivalent to the query; the columns here are the gap
items of the normal form as the rewriting derives it (``EXISTS SEQ(NOT B, C, NOT C)`` is one
column: the last C of the gap has no B before it).

Columns are evaluated on an index of the events of the types they name, per partition, over
the open gap between the neighbouring positive events (docs/semantics.md §4): ``NOT T`` holds
when no T event lies in the gap, ``EXISTS SEQ(...)`` when a match of its body lies in it, the
body's own leading and trailing NOTs bounded by the gap (:func:`exists_in`).

>>> from cepagg.lang.neel.rules.base import pattern
>>> emap = EMap.of([pattern("SEQ(A a, NOT C, D d)"), pattern("SEQ(A a, EXISTS SEQ(NOT B, C, NOT C), D d)")])
>>> for line in emap.lines(): print(line)
columns: c0 = NOT C between positive events 1 and 2, c1 = EXISTS SEQ(NOT B, C, NOT C) between positive events 1 and 2
EMap: row 0 = c0, row 1 = c1
>>> index = EventIndex(("B", "C"))
>>> index.add_rows([((), "C", 3, 0), ((), "B", 4, 1), ((), "C", 5, 2)])
>>> emap.satisfied(index, (), [1, 9]), emap.satisfied(index, (), [1, 5]), emap.satisfied(index, (), [3, 9])
(False, True, False)
"""

from __future__ import annotations

import bisect
from collections import deque
from dataclasses import dataclass, field

from ...lang import ast
from ...lang.neel.text import pattern_text
from .terms import gaps_of


class NotMarkable(Exception):
    """A disjunct whose gap items the bit-marking index cannot evaluate; ``str()`` says why."""


def _plain(p: ast.Pattern) -> str | None:
    return p.type if isinstance(p, ast.EventPattern) and p.type is not None else None


def column_of(item: ast.Pattern) -> tuple:
    """A boolean gap item as a column shape, variables left out: ``("not", T)`` or
    ``("exists", ((positive?, T), ...))``. Raises :class:`NotMarkable` for items with conditions,
    untyped events or nesting below the EXISTS's flat sequence."""
    if isinstance(item, ast.Not):
        t = _plain(item.body)
        if t is None:
            raise NotMarkable(f"{pattern_text(item)} is no NOT of an event without conditions")
        return ("not", t)
    if isinstance(item, ast.Exists):
        body = item.body
        parts = list(body.items) if isinstance(body, ast.Seq) and not body.quals else [body]
        out = []
        for x in parts:
            if isinstance(x, ast.Not) and _plain(x.body) is not None:
                out.append((False, _plain(x.body)))
            elif _plain(x) is not None:
                out.append((True, _plain(x)))
            else:
                raise NotMarkable(f"{pattern_text(item)}: {pattern_text(x)} is no event without conditions")
        if not any(pos for pos, _ in out):
            raise NotMarkable(f"{pattern_text(item)} has no event")
        return ("exists", tuple(out))
    raise NotMarkable(f"{pattern_text(item)} is no NOT or EXISTS")


def column_text(col: tuple) -> str:
    if col[0] == "not":
        return f"NOT {col[1]}"
    body = ", ".join(t if pos else f"NOT {t}" for pos, t in col[1])
    return f"EXISTS SEQ({body})" if len(col[1]) > 1 else f"EXISTS {col[1][0][1]}"


def markable(p: ast.Pattern) -> str | None:
    """Why the disjunct ``p`` cannot be bit-marked, or None: its positive items are events (no
    Kleene), it has NOT/EXISTS only between two of them, each of events without conditions."""
    pos, gaps = gaps_of(p)
    for x in pos:
        body = x.body if isinstance(x, ast.Qualified) else x
        if not isinstance(body, ast.EventPattern):
            return f"{pattern_text(x)} is no event"
    if gaps[0] or gaps[-1]:
        return "a NOT/EXISTS before the first or after the last event (its scope reaches past the match)"
    try:
        for g in gaps:
            for x in g:
                column_of(x)
    except NotMarkable as e:
        return str(e)
    return None


@dataclass
class EMap:
    """Columns (gap index, column shape) and, per disjunct, the bit mask of its columns."""

    columns: list[tuple[int, tuple]]
    rows: list[int]

    @staticmethod
    def of(patterns: list[ast.Pattern]) -> "EMap":
        columns: list[tuple[int, tuple]] = []
        rows = []
        for p in patterns:
            _, gaps = gaps_of(p)
            mask = 0
            for g, items in enumerate(gaps):
                for x in items:
                    col = (g, column_of(x))
                    if col not in columns:
                        columns.append(col)
                    mask |= 1 << columns.index(col)
            rows.append(mask)
        # NOT columns first: one look-up each, where an EXISTS walks its body
        order = sorted(range(len(columns)), key=lambda c: (columns[c][1][0] != "not", c))
        remap = {old: new for new, old in enumerate(order)}
        rows = [sum(1 << remap[c] for c in range(len(columns)) if m >> c & 1) for m in rows]
        return EMap([columns[c] for c in order], rows)

    @property
    def types(self) -> set[str]:
        out = set()
        for _, col in self.columns:
            out |= {col[1]} if col[0] == "not" else {t for _, t in col[1]}
        return out

    def satisfied(self, index: "EventIndex", part: tuple, times: list[int]) -> bool:
        """Does some disjunct hold for the skeleton match whose positive events are at
        ``times`` (in pattern order) in partition ``part``? Columns are evaluated in order
        until a row is satisfied or every row is dead (the chapter's Lemma 3)."""
        rows = self.rows
        if 0 in rows:
            return True
        times_of = index.times.get(part, {})
        value = 0  # the RVI: the columns evaluated true (a false one kills the rows holding it)
        alive = rows
        for c, (g, col) in enumerate(self.columns):
            bit = 1 << c
            if not any(r & bit for r in alive):
                continue
            lo, hi = times[g - 1], times[g]
            if col[0] == "not":
                lst = times_of.get(col[1])
                holds = not lst or not _any_in(lst, lo, hi)
            else:
                holds = exists_in(times_of, col[1], lo, hi)
            if holds:
                value |= bit
                if any(not (r & ~value) for r in alive):
                    return True
            else:
                alive = [r for r in alive if not (r & bit)]
                if not alive:
                    return False
        return False

    def lines(self) -> list[str]:
        cols = ", ".join(f"c{c} = {column_text(col)} between positive events {g} and {g + 1}"
                         for c, (g, col) in enumerate(self.columns))
        rows = ", ".join(f"row {i} = " + (" ".join(f"c{c}" for c in range(len(self.columns)) if r >> c & 1) or "-")
                         for i, r in enumerate(self.rows))
        return [f"columns: {cols}", f"EMap: {rows}"]


@dataclass
class EventIndex:
    """Times of the events of some types, per partition and type (sorted); with ``keyed``, the
    partition of every event by its id (a match's partition is its first event's). Events
    older than a horizon are purged (:meth:`purge`)."""

    types: tuple[str, ...]
    keyed: bool = False
    times: dict[tuple, dict[str, list[int]]] = field(default_factory=dict)
    parts: dict[int, tuple] = field(default_factory=dict)
    order: deque = field(default_factory=deque)  # (ts, partition, type or None, id), arrival order

    def add_rows(self, rows) -> None:
        """``rows``: (partition, type, ts, id) of events; partition None joins no match."""
        wanted = set(self.types)
        keyed = self.keyed
        for part, typ, ts, eid in rows:
            if part is None:
                continue
            if keyed:
                self.parts[eid] = part
            if typ not in wanted:
                if keyed:
                    self.order.append((ts, part, None, eid))
                continue
            lst = self.times.setdefault(part, {}).setdefault(typ, [])
            if not lst or lst[-1] <= ts:
                lst.append(ts)
            else:
                bisect.insort(lst, ts)
            self.order.append((ts, part, typ, eid))

    def part_of(self, eid: int) -> tuple:
        return self.parts[eid] if self.keyed else ()

    def purge(self, before: int) -> None:
        """Forget events at times < ``before``."""
        while self.order and self.order[0][0] < before:
            ts, part, typ, eid = self.order.popleft()
            self.parts.pop(eid, None)
            if typ is None:
                continue
            per = self.times[part]
            lst = per[typ]
            del lst[bisect.bisect_left(lst, ts)]
            if not lst:
                del per[typ]
                if not per:
                    del self.times[part]

    def __len__(self) -> int:
        return len(self.order)


def _any_in(lst, lo: int, hi: int) -> bool:
    i = bisect.bisect_right(lst, lo)
    return i < len(lst) and lst[i] < hi


def exists_in(times: dict[str, list[int]], body: tuple, lo: int, hi: int) -> bool:
    """Is there a match of the flat sequence ``body`` ((positive?, type) items) strictly inside
    ``(lo, hi)``, its NOTs holding in the gaps between its events (the first and last gap
    bounded by ``lo`` and ``hi``)? Left to right, for each event of the k-th positive type the
    latest reachable event of the (k-1)-th before it is the best predecessor: the gap between
    them is the smallest, so it holds a forbidden event least."""
    nots: list[set[str]] = [set()]
    positives: list[str] = []
    for pos, t in body:
        if pos:
            positives.append(t)
            nots.append(set())
        else:
            nots[-1].add(t)

    def clear(a: int, b: int, banned: set[str]) -> bool:
        return not any(_any_in(times.get(t, ()), a, b) for t in banned)

    reach = [lo]  # times of the reachable previous items (lo: the gap's start)
    for k, t in enumerate(positives):
        lst = times.get(t, ())
        i = bisect.bisect_right(lst, lo)
        nxt = []
        for ts in lst[i:]:
            if ts >= hi:
                break
            j = bisect.bisect_left(reach, ts) - 1
            if j >= 0 and clear(reach[j], ts, nots[k]):
                if not nxt or nxt[-1] != ts:
                    nxt.append(ts)
        if not nxt:
            return False
        reach = nxt
    return clear(reach[-1], hi, nots[-1])
