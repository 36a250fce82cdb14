"""The pattern shapes the recomputation engine evaluates, and a refusal for every other query.

RCEP's query form is ``SEQ(p1, ..., pk)`` of singleton and Kleene-plus variables with
conditions, a partition attribute and a window (Kammoun et al., "All that Incremental is not
Efficient: Towards Recomputation Based Complex Event Processing for Expensive Queries", EDBT
2018, Sec. 2.1). This engine takes that form, typed or untyped variables, any condition between
variables (NEXT/FIRST/LAST included), single-event NOT and EXISTS items (leading, between,
trailing) with their own conditions, equivalences on a variable (``[b.vehicle]``) and GROUP BY a
variable's attribute. Everything else is refused with the reason, never answered
approximately.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...lang import ast
from ...lang.model import Atom, Condition, ExistsP, KleeneP, NotP, Query, SeqP


@dataclass(frozen=True)
class Position:
    """A positive item of the SEQ: one variable, singleton or Kleene-plus."""

    index: int
    var: str
    kleene: bool


@dataclass(frozen=True)
class Negation:
    """``NOT v`` (or ``EXISTS v`` when ``exists``) in gap ``gap``: between positions ``gap - 1``
    and ``gap`` (0: leading, k: trailing); ``conditions`` are those scoped to it (they may
    mention positive variables)."""

    var: str
    gap: int
    conditions: tuple[Condition, ...]
    mentions: frozenset[str]  # positive variables its conditions read
    exists: bool = False


@dataclass(frozen=True)
class Shape:
    positions: tuple[Position, ...]
    negations: tuple[Negation, ...]
    cross: tuple[Condition, ...]  # conditions of the match that are not local to one event
    local: dict  # var -> local conditions (checked when an event enters the var's buffer)
    same: dict  # var -> attributes of its equivalences ``[var.attr]``: non-null, one value per run

    @property
    def trailing(self) -> bool:
        return any(n.gap == len(self.positions) for n in self.negations)


_NAMES = {"AndP": "AND", "OrP": "OR", "ExistsP": "EXISTS", "BoolOrP": "a disjunction of NOT/EXISTS",
          "WindowP": "an inner WITHIN", "SeqP": "a nested SEQ"}


def refusal(query: Query) -> str | None:
    """Why rcep cannot evaluate ``query`` (None when it can)."""
    if query.mode == "emit":
        return "EMIT ON CHANGE is not supported (WITHIN alone and SLIDE are)"
    if query.within_events is not None:
        return "WITHIN n EVENTS is not supported (a window in time is)"
    if query.within is None:
        return "a window in time (WITHIN d) is needed: the engine keeps the events of one window"
    if query.strategy != "skip-till-any-match":
        return f"strategy {query.strategy} is not supported (skip-till-any-match is)"
    items = query.pattern.items if isinstance(query.pattern, SeqP) else (query.pattern,)
    for it in items:
        if isinstance(it, (NotP, ExistsP)):
            if not isinstance(it.body, Atom):
                return "negation and EXISTS of a single event only (of a sub-pattern they are " \
                       "not supported)"
        elif isinstance(it, KleeneP):
            if not isinstance(it.body, Atom):
                return "Kleene plus of a single event only (Kleene of a sub-pattern is not supported)"
        elif not isinstance(it, Atom):
            return f"a flat SEQ of events only ({_NAMES.get(type(it).__name__, 'a nested pattern')} " \
                   "is not supported)"
    for v in query.variables.values():
        if len(v.atoms) > 1:
            return f"variable {v.name.split('@')[0]} appears twice in the pattern; give each " \
                   "position its own variable"
    return None


def shape_of(query: Query) -> Shape:
    """The positions, negations and conditions of an accepted query."""
    items = query.pattern.items if isinstance(query.pattern, SeqP) else (query.pattern,)
    positions: list[Position] = []
    negs: list[tuple[str, int, int, bool]] = []
    for it in items:
        if isinstance(it, (NotP, ExistsP)):
            negs.append((it.body.var, len(positions), it.id, isinstance(it, ExistsP)))
        elif isinstance(it, KleeneP):
            positions.append(Position(len(positions), it.body.var, True))
        else:
            positions.append(Position(len(positions), it.var, False))
    positive = {p.var for p in positions}
    local: dict[str, list[Condition]] = {}
    cross: list[Condition] = []
    scoped: dict[int, list[Condition]] = {}
    for c in query.conditions:
        if c.kind == "local":
            (var,) = c.vars
            local.setdefault(var, []).append(c)
        elif c.scope is None:
            cross.append(c)
        else:
            scoped.setdefault(c.scope, []).append(c)
    negations = tuple(
        Negation(var, gap, tuple(scoped.get(nid, ())),
                 frozenset(v for c in scoped.get(nid, ()) for v in c.vars if v in positive), exists)
        for var, gap, nid, exists in negs)
    same: dict[str, tuple[str, ...]] = {}
    for var, attr in query.equivalences:
        same[var] = same.get(var, ()) + (attr,)
    return Shape(tuple(positions), negations, tuple(cross), local, same)


def refs_to(c: Condition, var: str) -> set[str]:
    """Kinds of FIRST/LAST references ``c`` makes to ``var``."""
    return {n.kind for n in c.expr.walk() if isinstance(n, ast.Ref) and n.var == var and n.kind != "NEXT"}
