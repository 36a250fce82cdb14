"""The stack-based two-step baseline (SASE [19]), as A-Seq describes it in its Sec. 2.2.

Step one *constructs* every match; step two aggregates them. Each positive position ``Ei`` of
``SEQ(E1..En)`` has a stack; a new ``Ei`` event is pushed with a pointer to the top of stack
``Ei-1`` at that moment (SASE's RIP pointer), so every earlier ``Ei-1`` event is a possible
predecessor. When an ``En`` event (TRIG) arrives, a depth-first search from it along the
pointers enumerates every match with strictly increasing times inside the window; negation is
a post-filter (a stored negative event strictly between the two positive neighbours discards
the match). Events leave the stacks when they leave the window. Under EMIT ON CHANGE the
constructed matches are kept so that expired ones can be removed from the aggregate (paper
Example 1). Cost grows with the number of matches, ``|E|^n`` per window (paper Eq. 3) — that
is the point of the comparison with A-Seq.

It is a baseline for ``cepagg bench aseq`` and refuses everything but fixed-length SEQ with
negation between positive events, WITHIN alone or EMIT ON CHANGE, partitions by unqualified
equivalence/GROUP BY attributes, local conditions. ``peak_objects`` counts stored events,
pointers and kept matches (the paper's memory metric).

Reference: the stack-based two-step baseline (SASE) as A-Seq describes it: Qi, Cao, Ray,
Rundensteiner, "Complex Event Analytics: Online Aggregation of Stream Sequence Patterns",
SIGMOD 2014, Section 2.2 (Fig. 1, Example 1) and Eq. 3 (its cost).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from ..events import EventBatch
from ..lang.expr import holds
from ..lang.model import Atom, NotP, Query, SeqP
from .aggregates import empty, finalize, merge
from .base import Engine


@dataclass
class _Part:
    stacks: list = field(default_factory=list)  # per position: [(ts, values, pointer)]
    base: list = field(default_factory=list)  # per position: index of stack[0] in the stream of pushes
    negs: list = field(default_factory=list)  # per gap: [ts] of negative events in the window
    matches: list = field(default_factory=list)  # EMIT: [(first ts, cells)]
    last: tuple | None = None
    instant: int | None = None  # EMIT: an instant whose simultaneous events may still come


class Stack(Engine):
    """SASE-style two-step evaluation: construct matches with stacks, then aggregate."""

    name = "stack"

    @classmethod
    def refusal(cls, query: Query) -> str | None:
        if query.returns_matches:
            return "the baseline aggregates matches"
        if query.strategy != "skip-till-any-match" or query.within_events is not None:
            return "skip-till-any-match with a time window only"
        if query.mode == "slide":
            return "SLIDE windows are not part of the baseline"
        p = query.pattern
        items = p.items if isinstance(p, SeqP) else (p,)
        for i in items:
            if not (isinstance(i, Atom) or isinstance(i, NotP) and isinstance(i.body, Atom)):
                return "fixed-length SEQ of events with negated events between them only"
        if not isinstance(items[0], Atom) or not isinstance(items[-1], Atom):
            return "leading or trailing negation is not part of the baseline"
        for c in query.conditions:
            if c.kind != "local":
                return "cross-event conditions are not part of the baseline"
        if any(g.var is not None for g in query.group_by) or query.equivalences:
            return "groups and equivalences on unqualified attributes only"
        if query.mode == "emit" and set(query.partition_by) != {g.attr for g in query.group_by}:
            # its EMIT ON CHANGE follows one partition's value; a group over several partitions
            # would need their sum at every instant
            return "EMIT ON CHANGE with partitions that are not the groups is not part of the baseline"
        return None

    def __init__(self, query: Query, **kw):
        super().__init__(query, **kw)
        items = query.pattern.items if isinstance(query.pattern, SeqP) else (query.pattern,)
        self.pos: list[Atom] = []
        self.gap_of_neg: list[tuple[Atom, int]] = []
        for it in items:
            if isinstance(it, Atom):
                self.pos.append(it)
            else:
                self.gap_of_neg.append((it.body, len(self.pos) - 1))  # gap after position
        self.local = defaultdict(list)
        for c in query.conditions:
            self.local[next(iter(c.vars))].append(c)
        self.funcs = tuple(a.func for a in query.aggregates)
        self.peak_objects = 0
        self.lo, self.hi = self.start_range if self.start_range is not None else (-(2**63), 2**63)

    def new_state(self) -> dict:
        return {"parts": {}, "totals": {}, "objects": 0}

    def _feeds(self, atom: Atom, e) -> bool:
        if atom.type is not None and e.type not in self.query.members(atom.type):
            return False
        return all(holds(c.expr, lambda n, e=e: e.get(n.name)) for c in self.local[atom.var])

    def process(self, state: dict, batch: EventBatch) -> list[tuple]:
        q = self.query
        n = len(self.pos)
        w = q.within
        out = []
        for e in batch.events():
            if not all(holds(f.expr, lambda x, e=e: e.get(x.name)) for f in q.stream_filters):
                continue
            key = tuple(e.get(a) for a in q.partition_by)
            if any(v is None for v in key):
                continue
            part = state["parts"].get(key)
            if part is None:
                part = state["parts"][key] = _Part([[] for _ in range(n)], [0] * n, [[] for _ in range(n)])
            if part.instant is not None and part.instant < e.ts:
                row = self._emit(part, part.instant, key)
                part.instant = None
                if row is not None:
                    out.append(row)
            if w is not None:
                self._expire(part, e.ts - w)
            for atom, gap in self.gap_of_neg:
                if self._feeds(atom, e):
                    part.negs[gap].append(e.ts)
            for i in range(n - 1, -1, -1):
                if not self._feeds(self.pos[i], e):
                    continue
                vals = {a.attr: e.get(a.attr) for a in q.aggregates if a.attr}
                ptr = part.base[i - 1] + len(part.stacks[i - 1]) if i else 0
                part.stacks[i].append((e.ts, vals, ptr))
                if i == n - 1:
                    self._trigger(state, key, part, e.ts, vals)
            if q.mode == "emit" and (q.event_types is None or e.type in q.event_types):
                part.instant = e.ts
            objects = sum(len(s) * 2 for p in state["parts"].values() for s in p.stacks) + sum(
                len(g) for p in state["parts"].values() for g in p.negs) + sum(
                len(p.matches) for p in state["parts"].values())
            self.peak_objects = max(self.peak_objects, objects)
        return out

    def _expire(self, part: _Part, horizon: int) -> None:
        for i, s in enumerate(part.stacks):
            k = 0
            while k < len(s) and s[k][0] <= horizon:
                k += 1
            if k:
                del s[:k]
                part.base[i] += k
        for g in part.negs:
            while g and g[0] <= horizon:
                g.pop(0)
        part.matches = [m for m in part.matches if m[0] > horizon]

    def _trigger(self, state: dict, key: tuple, part: _Part, ts: int, vals: dict) -> None:
        """Depth-first search from the new last event along the pointers (step one), then
        aggregate every match found (step two)."""
        q = self.query
        n = len(self.pos)
        w = q.within
        chosen: list[tuple] = [None] * n  # type: ignore[list-item]
        chosen[n - 1] = (ts, vals)

        def dfs(i: int, ptr: int, after: int):
            # candidates of position i: pushes before ptr, strictly before `after`, in the window
            s = part.stacks[i]
            top = min(len(s), ptr - part.base[i])
            for k in range(top - 1, -1, -1):
                t_i, v_i, p_i = s[k]
                if t_i >= after:
                    continue
                if w is not None and ts - t_i >= w:
                    break
                chosen[i] = (t_i, v_i)
                if i == 0:
                    self._found(state, key, part, chosen)
                else:
                    dfs(i - 1, p_i, t_i)

        if n == 1:
            self._found(state, key, part, chosen)
        else:
            dfs(n - 2, part.stacks[n - 1][-1][2], ts)

    def _found(self, state: dict, key: tuple, part: _Part, chosen: list) -> None:
        for atom, gap in self.gap_of_neg:  # negation as a post-filter
            lo, hi = chosen[gap][0], chosen[gap + 1][0]
            if any(lo < t < hi for t in part.negs[gap]):
                return
        cells = self._cells(chosen)
        if self.query.mode != "emit" and not self.lo <= chosen[0][0] < self.hi:
            return
        if self.query.mode == "emit":
            part.matches.append((chosen[0][0], cells))
        else:
            g = tuple(key[self.query.partition_by.index(x.attr)] for x in self.query.group_by)
            tot = state["totals"].get(g)
            state["totals"][g] = cells if tot is None else merge(self.funcs, tot, cells)

    def _cells(self, chosen: list) -> tuple:
        out = []
        for a in self.query.aggregates:
            if a.is_count_star:
                out.append(1)
                continue
            vals = [v.get(a.attr) if a.attr else True
                    for (atom, (t, v)) in zip(self.pos, chosen) if atom.var in a.vars]
            if a.func == "COUNT":
                out.append(len(vals))
                continue
            vals = [x for x in vals if x is not None]
            if a.func in ("SUM", "AVG"):
                out.append((sum(_exact(x) for x in vals), len(vals)))
            elif not vals:
                out.append(None)
            else:
                out.append(min(vals) if a.func == "MIN" else max(vals))
        return tuple(out)

    def _emit(self, part: _Part, t: int, key: tuple):
        w = self.query.within
        if w is not None:
            self._expire(part, t - w)
        cells = empty(self.funcs)
        for _, c in part.matches:
            cells = merge(self.funcs, cells, c)
        value = _plain(finalize(self.funcs, cells))
        last = part.last if part.last is not None else _plain(finalize(self.funcs, empty(self.funcs)))
        if not self.lo <= t < self.hi:
            return None
        if value == last and self.start_range is None:
            return None
        part.last = value
        g = tuple(key[self.query.partition_by.index(x.attr)] for x in self.query.group_by)
        return g + (t,) + value

    def advance(self, state: dict, watermark: int) -> list[tuple]:
        """EMIT ON CHANGE: an instant at or before the watermark can gain no more events, so
        its row is final now rather than when the partition's next event arrives."""
        rows = []
        if self.query.mode == "emit":
            for key, part in state["parts"].items():
                if part.instant is not None and part.instant <= watermark:
                    row = self._emit(part, part.instant, key)
                    part.instant = None
                    if row is not None:
                        rows.append(row)
        return rows

    def finish(self, state: dict) -> list[tuple]:
        if self.query.mode == "emit":
            rows = []
            for key, part in state["parts"].items():
                if part.instant is not None:
                    row = self._emit(part, part.instant, key)
                    if row is not None:
                        rows.append(row)
            return rows
        if self.partial:
            return [g + c for g, c in state["totals"].items()]
        rows = [g + _plain(finalize(self.funcs, c)) for g, c in state["totals"].items()]
        if not rows and not self.query.group_by:
            rows = [_plain(finalize(self.funcs, empty(self.funcs)))]
        return rows


def _exact(v: Any):
    if isinstance(v, bool):
        return int(v)
    return v if isinstance(v, int) else Fraction(v)


def _plain(cells: tuple) -> tuple:
    return tuple(float(c) if isinstance(c, Fraction) else c for c in cells)


# Reference: A-Seq (SIGMOD 2014) Section 2.2 (stack-based two-step, Fig. 1, Example 1), Eq. 3
# (cost).
