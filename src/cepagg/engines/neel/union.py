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
from .terms import MAX_TERMS, NotDecomposable, _intersection, _skeleton, disjuncts, flat_query, interleaving_lines


@dataclass
class MatchTerm:
    """One disjunct as a flat match query.

    Attributes:
        query: the flat query, returning every positive variable of the disjunct (what a
            match is, for the seen set).
        text: the disjunct's pattern as text.
        binds: its positive variables, in order.
        returned: those of them the whole query returns (the rows kept).
        shared: another disjunct binds the same variables in the same order and does not
            contradict this one (:func:`.terms._intersection`), so their matches may coincide
            and pass the seen set.
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
class MatchPlan:
    terms: list[MatchTerm]
    interleavings: list[str]
    steps: list[str]
    skipped: list[str]  # disjuncts that bind no returned variable (not run)


def match_plan(query: Query) -> MatchPlan:
    """The disjuncts of a RETURN-of-events query as flat match queries; raises
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
                       engine, why, offsets, scale, witnesses)
             for i, (p, flat, binds, engine, why, offsets, scale, witnesses) in enumerate(found)]
    return MatchPlan(terms, interleavings, steps, skipped)


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


class MatchUnion:
    """The protocol's steps for a RETURN-of-events query, on behalf of the ``neel`` engine
    ``owner`` (whose ``spill`` a match writer sets)."""

    def __init__(self, owner, plan: MatchPlan, start_range: tuple[int, int] | None):
        from .. import ENGINES
        from .engine import Runner

        self.owner = owner
        self.plan = plan
        q = owner.query
        self.groups = len(q.group_by)
        self.slide = q.mode == "slide"
        self.within = q.within
        self.match_column = q.output_columns.index("match")
        self.runners = []
        for k, t in enumerate(plan.terms):
            rng = None if start_range is None else (start_range[0] * t.scale, start_range[1] * t.scale)
            ev = ENGINES[t.engine](t.query, start_range=rng)
            self.runners.append(Runner(t.engine, [k], ev, t.scale, dict(t.offsets), t.query.partition_by,
                                       dict(t.witnesses)))

    def new_state(self) -> UnionState:
        return UnionState([r.evaluator.new_state() for r in self.runners], [None] * len(self.runners))

    def process(self, state: UnionState, batch: EventBatch) -> list[tuple]:
        from .engine import fed

        return self._collect(state, fed(self.runners, state.runners, state.waiting, batch))

    def advance(self, state: UnionState, watermark: int) -> list[tuple]:
        from .engine import advanced

        out = self._collect(state, advanced(self.runners, state.runners, state.waiting, watermark))
        while state.expiry and state.expiry[0][0] <= watermark:  # no engine finds these again
            _, _, key = heapq.heappop(state.expiry)
            state.seen.pop(key, None)
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
        """A disjunct engine's match rows as rows of the query: in the query's time, the
        returned variables only, renumbered; a match another disjunct returned already dropped."""
        t = self.plan.terms[k]
        if not rows:
            return []
        m = self.match_column  # (cells..., match, var, pos, event_id, type, ts)
        out: list[tuple] = []
        start = 0
        for i in range(1, len(rows) + 1):
            if i < len(rows) and rows[i][m] == rows[start][m]:
                continue
            self._match(state, t, rows[start:i], m, out)
            start = i
        return out

    def _match(self, state: UnionState, t: MatchTerm, rows: list[tuple], m: int, out: list) -> None:
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
    """What ``explain`` shows of a RETURN-of-events nested query: the disjuncts, each with its
    match engine, which of them may share matches, and those not run."""
    lines = []
    lines += interleaving_lines(plan.interleavings)
    lines.append(f"neel matches: the union of {len(plan.terms)} disjunct(s), each a flat query on a match engine:")
    for k, t in enumerate(plan.terms):
        how = t.engine
        if t.scale != 1:
            how += f", over times {t.scale}*ts + offset (" + ", ".join(f"{a} {b}" for a, b in t.offsets.items()) + ")"
        if t.witnesses:
            how += ", with witness events of " + ", ".join(sorted({b for b, _ in t.witnesses.values()}))
        lines.append(f"  d{k}: {t.text} [{how}]")
    for why in dict.fromkeys(f"{t.engine}: {t.why}" for t in plan.terms if t.why):
        lines.append(f"  why {why}")
    shared: dict[tuple, list[int]] = {}
    for k, t in enumerate(plan.terms):
        if t.shared:
            shared.setdefault(t.binds, []).append(k)
    for members in shared.values():
        lines.append("  " + ", ".join(f"d{k}" for k in members) + " bind the same variables in the same order "
                     "and may overlap: a match found by one is not returned again (a seen set holding about "
                     "one window)")
    if not shared:
        lines.append("  the disjuncts bind different variables or orders, or contradict each other: no match "
                     "is found twice")
    for text in plan.skipped:
        lines.append(f"  not run: {text} binds none of the returned variables")
    return lines
