"""Matches of a nested query: the union of its disjuncts' matches, found by the match engines.

The normal form of a nested pattern is a union of flat sequences (:mod:`.terms`); a match of
the query is a match of at least one of them, binding the same events to the same variables
(docs/semantics.md §3: OR is a set union, the same events in the same roles are one match).
So a query that returns matches runs each disjunct as a flat RETURN-of-events query on a match
engine -- rcep or tree, chosen per disjunct as the planner chooses for a flat query
(:mod:`cepagg.plan.matches`) -- with its EXISTS items as witness events (:mod:`.witness`) and an
AND's tie pairs as a time transform (:mod:`.interleave`), exactly as the aggregate terms run.

Disjuncts binding different variables, or the same variables in another order, share no match
(SEQ orders are strict; an AND's interleavings are disjoint by construction). Disjuncts binding
the same variables in the same order are disjoint too when they contradict each other, as
negation push-down's ``SEQ(A a, NOT C, D d)`` and ``SEQ(A a, EXISTS SEQ(NOT B, C, NOT C), D
d)`` do (:func:`.terms._intersection`). The others may find the same match -- ``NOT AND(B, C)``
makes ``SEQ(A a, NOT B, D d)`` and ``SEQ(A a, NOT C, D d)``, both matching where neither B nor
C occurs -- and their matches pass a *seen* set keyed by (group and window cells, the
(variable, event) pairs), and only the first to find one returns it. A match can be found by
another disjunct only until every engine has passed the deadline of its trailing negation (at
most one window after its last event), so an entry leaves the set once a watermark passes its
last event by a window: with watermarks (the match writer gives one after every piece), the set
holds the matches of about one window, not of the stream. A disjunct that binds none of the
returned variables returns no rows and is not run.

Disjuncts with the same positive events may instead run as one **bit-marked** unit
(:mod:`.bitmark`): one flat query of their common events, each match tested against the
group's EMap on an index of the events its NOT/EXISTS items name, and returned once -- no seen
set within the group. Which disjuncts are grouped is Plan-Finder's choice by cost
(:mod:`.plan_finder`); units of one cluster that may find the same match pass the seen set.

Rows keep the reference's long form; matches are numbered 1, 2, ... in the order they are
found, and handed on as the engines find them (the engines' ``spill``), so output streams in
bounded memory as with rcep alone.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from typing import Any

from ...events import EventBatch
from ...lang import ast
from ...lang.model import Query
from ...lang.neel.terms import declared_vars
from ...lang.neel.text import pattern_text
from .bitmark import EMap, EventIndex, NotMarkable, column_of, markable
from .plan_finder import DENSITY, Plan, find
from .terms import (
    MAX_TERMS,
    NotDecomposable,
    _intersection,
    _skeleton,
    disjuncts,
    flat_query,
    gaps_of,
    interleaving_lines,
)


@dataclass
class FlatMatch:
    """A flat RETURN-of-events query that a match engine runs for the union.

    Attributes:
        query: the flat query, returning every positive variable (what a match is, for the
            seen set).
        text: its pattern as text.
        binds: its positive variables, in order.
        returned: those of them the whole query returns (the rows kept).
        shared: another disjunct or unit may find the same match (its matches pass the seen
            set).
        engine: the match engine (rcep or tree), and ``why`` it was chosen.
        offsets, scale, witnesses: as :class:`.terms.Term`'s.
    """

    query: Query
    text: str
    binds: tuple[str, ...]
    returned: frozenset[str]
    shared: bool
    engine: str
    why: str
    offsets: dict[str, int] = field(default_factory=dict)
    scale: int = 1
    witnesses: dict[str, tuple] = field(default_factory=dict)


@dataclass
class MatchTerm(FlatMatch):
    """One disjunct as a flat match query (``pattern``: the disjunct, NOT/EXISTS items as
    written). ``shared``: another disjunct binds the same variables in the same order and does
    not contradict this one (:func:`.terms._intersection`)."""

    pattern: ast.Pattern | None = None


@dataclass
class MatchUnit(FlatMatch):
    """What one match engine runs: the disjuncts ``members``, one alone (``emap`` None: its own
    flat query), or a bit-marked group of disjuncts with the same positive events
    (:mod:`.bitmark`: the flat query of those events, each match tested against the group's
    EMap)."""

    members: tuple[int, ...] = ()
    emap: EMap | None = None


@dataclass
class MatchPlan:
    terms: list[MatchTerm]
    interleavings: list[str]
    steps: list[str]
    skipped: list[str]  # disjuncts that bind no returned variable (not run)
    units: list[MatchUnit] = field(default_factory=list)
    finder: list[tuple[Plan, list[str]]] = field(default_factory=list)  # per cluster: plan, unmarkable notes


def match_plan(query: Query, groups: list[tuple[int, ...]] | None = None,
               density: float | None = None) -> MatchPlan:
    """The disjuncts of a RETURN-of-events query as flat match queries, grouped into units by
    Plan-Finder (:mod:`.plan_finder`; ``groups``, a partition of the disjuncts' indices, to run
    another plan; ``density``: :data:`.plan_finder.DENSITY` unless measured); raises
    :class:`NotDecomposable` when a disjunct is no query a match engine takes."""
    from ...plan.matches import choose
    from .. import ENGINES

    alts, steps, interleavings = disjuncts(query)
    returned = {v.split("@")[0] for v in query.return_vars}
    taken = declared_vars(query.syntax.pattern)  # (witness variables named apart from all of them)
    kept = _group_items(query)
    found: list[tuple] = []
    skipped: list[str] = []
    for p, ties in alts:
        binds = tuple(v for v, _, _ in _skeleton(p))
        if not returned & set(binds):
            skipped.append(pattern_text(p))
            continue
        items = kept + tuple(ast.ReturnItem(ast.Attr(None, v), None, v) for v in binds)
        flat, offsets, scale, witnesses = flat_query(query, p, items, (), ties, taken)
        reason = ENGINES["rcep"].refusal(flat)
        if reason is not None:
            raise NotDecomposable(f"no match engine takes the flat pattern {pattern_text(p)} (rcep: {reason})")
        engine, why, _ = choose(flat)
        found.append((p, flat, binds, engine, why, offsets, scale, witnesses))
        if len(found) > MAX_TERMS:
            raise NotDecomposable(f"more than {MAX_TERMS} disjuncts")
    terms = [MatchTerm(flat, pattern_text(p), binds, frozenset(returned & set(binds)),
                       any(j != i and f[2] == binds and _intersection([p, f[0]]) is not None
                           for j, f in enumerate(found)),
                       engine, why, offsets, scale, witnesses, p)
             for i, (p, flat, binds, engine, why, offsets, scale, witnesses) in enumerate(found)]
    plan = MatchPlan(terms, interleavings, steps, skipped)
    plan.units, plan.finder = _units(query, terms, groups, taken, density)
    return plan


def _units(query: Query, terms: list[MatchTerm], groups, taken: set[str], density: float | None):
    """Plan-Finder's groups (or the given ones) as units, and per cluster of two or more
    disjuncts with the same positive events, the plan and why some could not be marked."""
    overlaps = {(i, j) for i, a in enumerate(terms) for j, b in enumerate(terms)
                if i != j and a.binds == b.binds and _intersection([a.pattern, b.pattern]) is not None}
    clusters: dict[tuple, list[int]] = {}
    for i, t in enumerate(terms):
        clusters.setdefault(_positive_key(t), []).append(i)
    why: dict[int, str | None] = {i: _unmarkable(query, t) for i, t in enumerate(terms)}
    finder = []
    chosen: list[tuple[int, ...]] = []
    for members in clusters.values():
        if len(members) < 2:
            chosen.append(tuple(members))
            continue
        ds = [_describe(terms[i]) for i in members]
        plan = find(ds, [why[i] is None for i in members], lambda a, b: (members[a], members[b]) in overlaps,
                    density or DENSITY)
        plan = Plan(tuple(members), tuple(tuple(members[k] for k in g) for g in plan.chosen),
                    [(tuple(tuple(members[k] for k in g) for g in c), v) for c, v in plan.candidates], plan.density,
                    density is not None)
        notes = [f"{terms[i].text}: not bit-marked, {why[i]}" for i in members if why[i] is not None]
        finder.append((plan, notes))
        chosen += plan.chosen
    if groups is not None:
        if sorted(i for g in groups for i in g) != list(range(len(terms))):
            raise ValueError(f"{groups} is no partition of the {len(terms)} disjuncts")
        for g in groups:
            if len(g) > 1 and (len({_positive_key(terms[i]) for i in g}) > 1 or any(why[i] for i in g)):
                raise ValueError(f"disjuncts {g} cannot be bit-marked together")
        chosen = [tuple(g) for g in groups]
    units = []
    for g in chosen:
        shared = any((i, j) in overlaps for i in g for j in range(len(terms)) if j not in g)
        unit = _marked_unit(query, [terms[i] for i in g], g, shared, taken) if len(g) > 1 else None
        if unit is not None:
            units.append(unit)
            continue
        for i in g:  # (alone; or a group whose common events are no query of their own)
            t = terms[i]
            shared = any((i, j) in overlaps for j in range(len(terms)) if j != i)
            units.append(MatchUnit(t.query, t.text, t.binds, t.returned, shared, t.engine, t.why,
                                   t.offsets, t.scale, t.witnesses, members=(i,)))
    return units, finder


def _marked_unit(query: Query, ts: list[MatchTerm], g: tuple[int, ...], shared: bool,
                 taken: set[str]) -> MatchUnit | None:
    """A bit-marked group: the flat query of the common positive events with the group's EMap;
    None when those events are no query a match engine takes."""
    from ...plan.matches import choose
    from .. import ENGINES

    t = ts[0]
    pos, _ = gaps_of(t.pattern)
    skeleton = ast.Seq(tuple(pos), t.pattern.quals if isinstance(t.pattern, ast.Seq) else ())
    items = _group_items(query) + tuple(ast.ReturnItem(ast.Attr(None, v), None, v) for v in t.binds)
    try:
        flat, _, _, _ = flat_query(query, skeleton, items, (), frozenset(), taken)
    except NotDecomposable:
        return None
    if ENGINES["rcep"].refusal(flat) is not None:
        return None
    engine, reason, _ = choose(flat)
    return MatchUnit(flat, pattern_text(skeleton), t.binds, t.returned, shared, engine, reason,
                     members=g, emap=EMap.of([x.pattern for x in ts]))


def _positive_key(t: MatchTerm) -> tuple:
    """What a bit-marked group must share: its positive items as written and the SEQ's conditions."""
    pos, _ = gaps_of(t.pattern)
    quals = t.pattern.quals if isinstance(t.pattern, ast.Seq) else ()
    return tuple(pattern_text(x) for x in pos) + ("|",) + tuple(map(str, quals))


def _unmarkable(query: Query, t: MatchTerm) -> str | None:
    """Why disjunct ``t`` cannot be bit-marked (its gap items must be evaluable on the event
    index, which knows types, times and partitions only), or None."""
    if t.scale != 1:
        return "its events are ordered with ties (an AND's interleaving)"
    if query.concept_types:
        return "the query names concept types"
    if query.stream_filters:
        return "the query filters the stream"
    reason = markable(t.pattern)
    if reason is not None:
        return reason
    names = set(t.binds)
    if any(not c.vars <= names for c in t.query.conditions) or any(v not in names for v, _ in t.query.equivalences):
        return "a condition reads an event of a NOT/EXISTS"
    return None


def _describe(t: MatchTerm):
    """The disjunct as Plan-Finder prices it (:data:`.plan_finder.Disjunct`)."""
    pos, gaps = gaps_of(t.pattern)
    cols = []
    for k, g in enumerate(gaps):
        for x in g:
            try:
                cols.append((k, column_of(x)))
            except NotMarkable:
                cols.append((k, ("not", "?")))
    types = {n.type for n in t.pattern.walk() if isinstance(n, ast.EventPattern) and n.type is not None}
    return (t.text, len(pos), cols, types, len(t.witnesses))


def _group_items(query: Query) -> tuple:
    """The RETURN items that name group attributes (kept in every disjunct's RETURN)."""
    out = []
    for item in query.syntax.returns:
        e = item.expr
        if not isinstance(e, ast.Attr):
            continue
        if e.var is not None or any(g.column == e.name or (g.var is None and g.attr == e.name)
                                    for g in query.group_by):
            out.append(item)
    return tuple(out)


@dataclass
class UnionState:
    runners: list[Any]
    waiting: list[Any]
    seen: dict = field(default_factory=dict)      # (cells, frozenset((var, event id))) -> expiry
    expiry: list = field(default_factory=list)    # heap of (expiry, seq, key)
    next_match: int = 1
    seq: int = 0
    index: EventIndex | None = None               # events of the bit-marked columns' types


class MatchUnion:
    """The protocol's steps for a RETURN-of-events query, on behalf of the ``neel`` engine
    ``owner`` (whose ``spill`` a match writer sets): one runner per unit of the plan."""

    def __init__(self, owner, plan: MatchPlan, start_range: tuple[int, int] | None):
        from .. import ENGINES
        from .engine import Runner

        self.owner = owner
        self.plan = plan
        q = owner.query
        self.groups = len(q.group_by)
        self.slide = q.mode == "slide"
        self.within = q.within
        self.keys = q.partition_by
        self.match_column = q.output_columns.index("match")
        self.runners = []
        for k, u in enumerate(plan.units):
            rng = None if start_range is None else (start_range[0] * u.scale, start_range[1] * u.scale)
            ev = ENGINES[u.engine](u.query, start_range=rng)
            self.runners.append(Runner(u.engine, [k], ev, u.scale, dict(u.offsets), u.query.partition_by,
                                       dict(u.witnesses)))
        self.indexed = tuple(sorted(set().union(*(u.emap.types for u in plan.units if u.emap is not None))))

    def new_state(self) -> UnionState:
        index = EventIndex(self.indexed, keyed=bool(self.keys)) if self.indexed else None
        return UnionState([r.evaluator.new_state() for r in self.runners], [None] * len(self.runners), index=index)

    def _index(self, state: UnionState, batch: EventBatch) -> None:
        """The batch's events into the index of the bit-marked columns, before any engine sees
        it (a match's gaps lie before its last event)."""
        if state.index is None or len(batch) == 0:
            return
        table = batch.table
        cols = [table.column(k).to_pylist() if k in table.column_names else [None] * len(batch) for k in self.keys]
        parts = [tuple(v) if None not in v else None for v in zip(*cols)] if cols else [()] * len(batch)
        state.index.add_rows(zip(parts, table.column("type").to_pylist(), table.column("ts").to_pylist(),
                                 table.column("_id").to_pylist()))

    def process(self, state: UnionState, batch: EventBatch) -> list[tuple]:
        from .engine import fed

        self._index(state, batch)
        return self._collect(state, fed(self.runners, state.runners, state.waiting, batch))

    def advance(self, state: UnionState, watermark: int) -> list[tuple]:
        from .engine import advanced

        out = self._collect(state, advanced(self.runners, state.runners, state.waiting, watermark))
        while state.expiry and state.expiry[0][0] <= watermark:  # no engine finds these again
            _, _, key = heapq.heappop(state.expiry)
            state.seen.pop(key, None)
        if state.index is not None and self.within is not None:
            # an engine returns a match at the latest when its window closes: its events are
            # no older than a window behind the watermark
            state.index.purge(watermark - 2 * self.within)
        return out

    def finish(self, state: UnionState) -> list[tuple]:
        from .engine import finished

        out = self._collect(state, finished(self.runners, state.runners, state.waiting))
        state.seen.clear()
        state.expiry.clear()
        return out

    def _collect(self, state: UnionState, pieces) -> list[tuple]:
        """The rows of every runner, passed through :meth:`_take`; rows an engine spills in the
        middle of a call go straight to the owner's ``spill``."""
        spill = self.owner.spill
        for k, r in enumerate(self.runners):
            if spill is None:
                r.evaluator.spill = None
            else:
                r.evaluator.spill = (lambda rows, k=k: spill(self._take(state, k, rows)))
                r.evaluator.spill_rows = self.owner.spill_rows
        out: list[tuple] = []
        for r, rows in pieces:
            out += self._take(state, r.terms[0], rows)
        return out

    def _take(self, state: UnionState, k: int, rows: list[tuple]) -> list[tuple]:
        """A unit engine's match rows as rows of the query: in the query's time, the returned
        variables only, renumbered; a match no disjunct of a bit-marked group holds, or that
        another unit returned already, dropped."""
        t = self.plan.units[k]
        if not rows:
            return []
        m = self.match_column  # (cells..., match, var, pos, event_id, type, ts)
        out: list[tuple] = []
        start = 0
        for i in range(1, len(rows) + 1):
            if i < len(rows) and rows[i][m] == rows[start][m]:
                continue
            match = rows[start:i]
            if t.emap is None or self._marked(state, t, match, m):
                self._match(state, t, match, m, out)
            start = i
        return out

    def _marked(self, state: UnionState, t: MatchUnit, rows: list[tuple], m: int) -> bool:
        """Does some disjunct of the bit-marked group ``t`` hold for this match of its events?"""
        at = {r[m + 1]: r[m + 5] for r in rows}
        part = state.index.part_of(rows[0][m + 3])
        return t.emap.satisfied(state.index, part, [at[v] for v in t.binds])

    def _match(self, state: UnionState, t: MatchUnit, rows: list[tuple], m: int, out: list) -> None:
        cells = rows[0][:m]
        scale = t.scale
        if scale != 1 and self.slide:
            cells = cells[:self.groups] + tuple(x // scale for x in cells[self.groups:])
        if t.shared:
            key = (cells, frozenset((r[m + 1], r[m + 3]) for r in rows))
            if key in state.seen:
                return
            expiry = max(r[m + 5] for r in rows) // scale + self.within
            state.seen[key] = expiry
            heapq.heappush(state.expiry, (expiry, state.seq, key))
            state.seq += 1
        n = state.next_match
        state.next_match += 1
        returned = t.returned
        out.extend(cells + (n, r[m + 1], r[m + 2], r[m + 3], r[m + 4], r[m + 5] // scale)
                   for r in rows if r[m + 1] in returned)


def explain_lines(plan: MatchPlan) -> list[str]:
    """What ``explain`` shows of a RETURN-of-events nested query: the disjuncts; Plan-Finder's
    priced partitions of each cluster of disjuncts with the same positive events, and its
    choice; the units run, each with its match engine (a bit-marked group with its EMap);
    which units may share matches; the disjuncts not run."""
    lines = []
    lines += interleaving_lines(plan.interleavings)
    lines.append(f"neel matches: the union of {len(plan.terms)} disjunct(s):")
    for k, t in enumerate(plan.terms):
        lines.append(f"  d{k}: {t.text}")
    for p, notes in plan.finder:
        names = ", ".join(f"d{k}" for k in p.members)
        lines.append(f"Plan-Finder for {names} (same positive events): estimated µs per window of a partition, "
                     f"{p.density:g} events of each type per window"
                     f"{'' if p.measured else ' (assumed, not measured)'} (src/cepagg/engines/neel/plan_finder.py):")
        for groups, cost in p.candidates:
            mark = "  <- chosen" if groups == p.chosen else ""
            lines.append(f"  {_partition_text(groups)}: {cost:,.1f}{mark}")
        lines += [f"  {n}" for n in notes]
    lines.append(f"run as {len(plan.units)} unit(s), each on a match engine:")
    for k, u in enumerate(plan.units):
        how = u.engine
        if u.scale != 1:
            how += f", over times {u.scale}*ts + offset (" + ", ".join(f"{a} {b}" for a, b in u.offsets.items()) + ")"
        if u.witnesses:
            how += ", with witness events of " + ", ".join(sorted({b for b, _ in u.witnesses.values()}))
        if u.emap is None:
            lines.append(f"  u{k}: d{u.members[0]} [{how}]")
            continue
        names = ", ".join(f"d{i}" for i in u.members)
        lines.append(f"  u{k}: {names} bit-marked: the matches of {u.text} [{how}], each tested against the EMap "
                     "(one construction, each match returned once)")
        lines += [f"    {x}" for x in u.emap.lines()]
    for why in dict.fromkeys(f"{u.engine}: {u.why}" for u in plan.units if u.why):
        lines.append(f"  why {why}")
    shared = [k for k, u in enumerate(plan.units) if u.shared]
    if shared:
        lines.append("  " + ", ".join(f"u{k}" for k in shared) + " may find the same match as another unit: "
                     "a match found by one is not returned again (a seen set holding about one window)")
    else:
        lines.append("  no two units find the same match (different variables or orders, contradictory "
                     "disjuncts, or one bit-marked group)")
    for text in plan.skipped:
        lines.append(f"  not run: {text} binds none of the returned variables")
    return lines


def _partition_text(groups) -> str:
    return " ".join("{" + ", ".join(f"d{i}" for i in g) + "}" for g in groups)
