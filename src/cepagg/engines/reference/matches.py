"""Enumerating the matches of a pattern, exactly as docs/semantics.md defines them.

This is the oracle: obviously-correct enumeration, not speed. A match is found in two steps:

1. ``gen`` enumerates *skeletons*: assignments of events to the positive part of the pattern
   that respect strict time order inside SEQ and between Kleene iterations, using only events
   with ``lo <= ts < hi``.
2. ``valid`` walks a skeleton with the scope interval of every node (the gap between its
   positive neighbours, or its parent's scope at the edges) and checks the NOT/EXISTS items
   there, each by searching for a match of the negated sub-pattern inside the gap.

Conditions are checked on the binding of each variable: a list of *runs* (one per instance
of the variable's innermost Kleene, each run in time order). A plain ``X`` in a condition
means every event bound to X; ``NEXT(X)`` pairs consecutive events of a run.
"""

from __future__ import annotations

import bisect
import itertools
from dataclasses import dataclass
from typing import Iterator, Sequence

from ...events import Event
from ...lang import ast
from ...lang.expr import holds
from ...lang.model import (
    AndP,
    Atom,
    BoolOrP,
    Condition,
    ExistsP,
    KleeneP,
    NotP,
    OrP,
    PNode,
    Query,
    SeqP,
    WindowP,
    is_positive_item,
)
from .conditions import Check

NEG_INF = -(2**62)
POS_INF = 2**62

Binding = dict  # var name -> list of runs (list[list[Event]])


@dataclass(frozen=True, slots=True)
class M:
    """A skeleton match of ``node`` covering events with times ``start``..``end``."""

    node: PNode
    start: int
    end: int
    parts: tuple  # Atom: (Event,); Seq/And: sub-matches of positive items; Kleene: iterations;
    # Or: (alternative index, sub-match); Window: (sub-match,)


def _span(parts: Sequence[M]) -> tuple[int, int]:
    return min(p.start for p in parts), max(p.end for p in parts)


class Matcher:
    """Matches of one query over the events of one partition (sorted by ts, id)."""

    def __init__(self, query: Query, events: Sequence[Event]):
        """``events``: all events of the partition in stream order; stream filters and local
        conditions are applied here, positions (count windows, contiguity) count them all."""
        self.q = query
        self.events = list(events)
        self.position = {e.id: i for i, e in enumerate(self.events)}
        self.pos_bounds = (NEG_INF, POS_INF)
        self.conditions: dict[int | None, list[Condition]] = {}
        self.local: dict[str, list[Condition]] = {}
        for c in query.conditions:
            if c.kind == "local":
                (var,) = c.vars
                self.local.setdefault(var, []).append(c)
            else:
                self.conditions.setdefault(c.scope, []).append(c)
        self.equivalences: dict[int | None, list[tuple[str, str]]] = {}
        for var, attr in query.equivalences:
            self.equivalences.setdefault(query.variables[var].scope, []).append((var, attr))
        self._candidates: dict[str, tuple[list[Event], list[int]]] = {}
        admitted = [e for e in self.events
                    if all(holds(f.expr, lambda node, e=e: e.get(node.name)) for f in query.stream_filters)]
        for v in query.variables.values():
            members = query.members(v.type)  # (a concept matches the types below it)
            evs = [e for e in admitted if (members is None or e.type in members)
                   and all(self._holds_one(c, v.name, e) for c in self.local.get(v.name, ()))]
            self._candidates[v.name] = (evs, [e.ts for e in evs])
        self._memo: dict[tuple, tuple[M, ...]] = {}
        # NEXT conditions of a Kleene over a single event (X+) hold pairwise on consecutive
        # iterations; checking them while enumerating prunes early. They are checked again on
        # the whole binding, so this is only a shortcut.
        self._pairwise: dict[int, list[Condition]] = {}
        for n in query.pattern.walk():
            if isinstance(n, KleeneP) and isinstance(n.body, Atom):
                conds = [c for c in query.conditions if c.kind == "edge" and c.next_var == n.body.var]
                if conds:
                    self._pairwise[n.id] = conds

    # -- conditions ---------------------------------------------------------------------------

    def _holds_one(self, c: Condition, var: str, e: Event) -> bool:
        return holds(c.expr, lambda node: e.get(node.name))

    def conditions_hold(self, scope: int | None, env: Binding) -> bool:
        """The conditions of ``scope`` and its qualified equivalences (``[P.vehicle]``: every
        event bound to P has one, non-null, value of ``vehicle``)."""
        for var, attr in self.equivalences.get(scope, ()):
            values = {e.get(attr) for run in env.get(var, ()) for e in run}
            if None in values or len(values) > 1:
                return False
        return all(condition_holds(c, env) for c in self.conditions.get(scope, ()))

    # -- step 1: skeletons --------------------------------------------------------------------

    def gen(self, node: PNode, lo: int, hi: int) -> tuple[M, ...]:
        """Skeleton matches of ``node`` whose events all have ``lo <= ts < hi``."""
        key = (node.id, lo, hi, self.pos_bounds)
        found = self._memo.get(key)
        if found is None:
            found = tuple(self._gen(node, lo, hi))
            self._memo[key] = found
        return found

    def _gen(self, node: PNode, lo: int, hi: int) -> Iterator[M]:
        if lo >= hi:
            return
        if isinstance(node, Atom):
            evs, ts = self._candidates[node.var]
            plo, phi = self.pos_bounds
            for e in evs[bisect.bisect_left(ts, lo):bisect.bisect_left(ts, hi)]:
                if plo <= self.position[e.id] < phi:
                    yield M(node, e.ts, e.ts, (e,))
        elif isinstance(node, SeqP):
            items = [i for i in node.items if is_positive_item(i)]
            for parts in self._chain(items, 0, lo, hi):
                yield M(node, parts[0].start, parts[-1].end, parts)
        elif isinstance(node, KleeneP):
            pairwise = self._pairwise.get(node.id, ())
            for its in self._iterations(node.body, lo, hi, pairwise):
                yield M(node, its[0].start, its[-1].end, its)
        elif isinstance(node, AndP):
            items = [i for i in node.items if is_positive_item(i)]
            for parts in itertools.product(*(self.gen(i, lo, hi) for i in items)):
                ids = [e.id for p in parts for e in _events(p)]
                if len(ids) == len(set(ids)):  # distinct events (NEEL decision 7)
                    yield M(node, *_span(parts), parts)
        elif isinstance(node, OrP):
            for k, alt in enumerate(node.alts):
                for m in self.gen(alt, lo, hi):
                    yield M(node, m.start, m.end, (k, m))
        elif isinstance(node, WindowP):
            for m in self.gen(node.body, lo, hi):
                if m.end - m.start < node.within:
                    yield M(node, m.start, m.end, (m,))
        else:
            raise AssertionError(f"not a positive pattern node: {node!r}")

    def _chain(self, items: list[PNode], i: int, lo: int, hi: int) -> Iterator[tuple[M, ...]]:
        if i == len(items):
            yield ()
            return
        for m in self.gen(items[i], lo, hi):
            for rest in self._chain(items, i + 1, m.end + 1, hi):
                yield (m,) + rest

    def _iterations(self, body: PNode, lo: int, hi: int, pairwise=(), prev: M | None = None
                    ) -> Iterator[tuple[M, ...]]:
        for m in self.gen(body, lo, hi):
            if prev is not None and not all(_pair_holds(c, prev.parts[0], m.parts[0]) for c in pairwise):
                continue
            yield (m,)
            for rest in self._iterations(body, m.end + 1, hi, pairwise, m if pairwise else None):
                yield (m,) + rest

    # -- bindings -----------------------------------------------------------------------------

    def binding(self, m: M, env: Binding | None = None) -> Binding:
        """Runs of every variable bound by skeleton ``m`` (added to a copy of ``env``)."""
        out: Binding = {k: list(v) for k, v in (env or {}).items()}
        self._collect(m, out, {})
        for runs in out.values():
            for run in runs:
                run.sort(key=lambda e: (e.ts, e.id))
        return out

    def _collect(self, m: M, out: Binding, current: dict[str, list[Event]]) -> None:
        node = m.node
        if isinstance(node, Atom):
            var = self.q.variables[node.var]
            if var.kleene is not None and node.var in current:
                current[node.var].append(m.parts[0])
            else:
                out.setdefault(node.var, []).append([m.parts[0]])
        elif isinstance(node, KleeneP):
            current = dict(current)
            for v in self.q.variables.values():
                if v.kleene == node.id:
                    run: list[Event] = []
                    out.setdefault(v.name, []).append(run)
                    current[v.name] = run
            for it in m.parts:
                self._collect(it, out, current)
        elif isinstance(node, OrP):
            self._collect(m.parts[1], out, current)
        else:
            for p in m.parts:
                self._collect(p, out, current)

    # -- step 2: negation scopes --------------------------------------------------------------

    def valid(self, m: M, lo: int, hi: int, env: Binding) -> bool:
        """Check every NOT/EXISTS inside ``m``, whose own scope is ``[lo, hi)``."""
        node = m.node
        if isinstance(node, Atom):
            return True
        if isinstance(node, SeqP):
            parts = iter(m.parts)
            matched = [next(parts) if is_positive_item(i) else None for i in node.items]
            for k, item in enumerate(node.items):
                before = [p for p in matched[:k] if p is not None]
                after = [p for p in matched[k + 1:] if p is not None]
                g_lo = before[-1].end + 1 if before else lo
                g_hi = after[0].start if after else hi
                if matched[k] is not None:
                    if not self.valid(matched[k], g_lo, g_hi, env):
                        return False
                elif not self.check_item(item, g_lo, g_hi, env):
                    return False
            return True
        if isinstance(node, KleeneP):
            its = m.parts
            for j, it in enumerate(its):
                g_lo = its[j - 1].end + 1 if j > 0 else lo
                g_hi = its[j + 1].start if j + 1 < len(its) else hi
                if not self.valid(it, g_lo, g_hi, env):
                    return False
            return True
        if isinstance(node, AndP):
            parts = iter(m.parts)
            for item in node.items:
                if is_positive_item(item):
                    if not self.valid(next(parts), lo, hi, env):
                        return False
                elif not self.check_item(item, lo, hi, env):
                    return False
            return True
        if isinstance(node, OrP):
            return self.valid(m.parts[1], lo, hi, env)
        if isinstance(node, WindowP):
            return self.valid(m.parts[0], lo, hi, env)
        raise AssertionError(node)

    def check_item(self, item: PNode, lo: int, hi: int, env: Binding) -> bool:
        """Truth of a boolean item (NOT/EXISTS/disjunction) over the gap ``[lo, hi)``."""
        if isinstance(item, BoolOrP):
            return any(self.check_item(a, lo, hi, env) for a in item.alts)
        assert isinstance(item, (NotP, ExistsP))
        found = self.exists(item, lo, hi, env)
        return not found if isinstance(item, NotP) else found

    def exists(self, item: NotP | ExistsP, lo: int, hi: int, env: Binding) -> bool:
        """Is there a match of ``item.body`` inside ``[lo, hi)`` (with the item's conditions)?"""
        w = self.q.within
        for n in self.gen(item.body, lo, hi):
            if w is not None and n.end - n.start >= w:
                continue
            if self.q.within_events is not None:
                first, last = _first_last(n)
                if self.position[last.id] - self.position[first.id] >= self.q.within_events:
                    continue
            env2 = self.binding(n, env)
            if self.conditions_hold(item.id, env2) and self.valid(n, lo, hi, env2):
                return True
        return False


def _pair_holds(c: Condition, cur: Event, nxt: Event) -> bool:
    return holds(c.expr, lambda node: (nxt if isinstance(node, ast.Ref) else cur).get(node.name))


def _events(m: M) -> Iterator[Event]:
    if isinstance(m.node, Atom):
        yield m.parts[0]
    elif isinstance(m.node, OrP):
        yield from _events(m.parts[1])
    else:
        for p in m.parts:
            yield from _events(p)


def events_of(m: M) -> list[Event]:
    """The events of a skeleton in stream order."""
    return sorted(_events(m), key=lambda e: (e.ts, e.id))


def atoms_of(m: M) -> list[tuple[int, Event]]:
    """(atom id, event) pairs of a skeleton in stream order."""
    out: list[tuple[int, Event]] = []

    def go(x: M) -> None:
        if isinstance(x.node, Atom):
            out.append((x.node.id, x.parts[0]))
        elif isinstance(x.node, OrP):
            go(x.parts[1])
        else:
            for p in x.parts:
                go(p)

    go(m)
    return sorted(out, key=lambda p: (p[1].ts, p[1].id))


def _first_last(m: M) -> tuple[Event, Event]:
    evs = events_of(m)
    return evs[0], evs[-1]


# ----------------------------------------------------------------------------------------------
# Conditions over a binding


def condition_holds(c: Condition, env: Binding) -> bool:
    """Does condition ``c`` hold for every combination of the events it mentions?"""
    return Check(c).holds(env)
