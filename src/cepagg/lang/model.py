"""The bound query: what every engine and the planner consume.

:func:`cepagg.lang.analyze.analyze` turns a syntax tree into a :class:`Query`: names are
resolved to variables, qualifications written inside operators are lifted next to the WHERE
conditions (each assigned to the negation scope it belongs to), sugar is normalised (bare
tuples and ``;`` become SEQ, nested SEQs are flattened, ``(P+)+`` becomes ``P+``), and durations
are converted to the stream's time unit. The meaning of every field is written down in
docs/semantics.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator, Mapping, Union

from .. import units
from ..errors import Position
from . import ast
from .concepts import Hierarchy

NOWHERE = ast.NOWHERE


# ----------------------------------------------------------------------------------------------
# Pattern nodes. Every node has a unique id within its query.


@dataclass(frozen=True, eq=False)
class PNode:
    id: int
    pos: Position = field(default=NOWHERE, repr=False, kw_only=True)

    def children(self) -> tuple["PNode", ...]:
        return ()

    def walk(self) -> Iterator["PNode"]:
        yield self
        for c in self.children():
            yield from c.walk()


@dataclass(frozen=True, eq=False)
class Atom(PNode):
    """One event bound to ``var``; ``type`` None means any type (an untyped variable)."""

    var: str
    type: str | None


@dataclass(frozen=True, eq=False)
class SeqP(PNode):
    """Items in strict time order; ``NotP``/``ExistsP``/``BoolOrP`` items constrain the gaps."""

    items: tuple[PNode, ...]

    def children(self):
        return self.items


@dataclass(frozen=True, eq=False)
class KleeneP(PNode):
    """One or more iterations of ``body``, each strictly after the previous."""

    body: PNode

    def children(self):
        return (self.body,)


@dataclass(frozen=True, eq=False)
class AndP(PNode):
    """NEEL's AND: the positive items in any order; negative items range over its whole scope."""

    items: tuple[PNode, ...]

    def children(self):
        return self.items


@dataclass(frozen=True, eq=False)
class OrP(PNode):
    """Union of the alternatives' matches."""

    alts: tuple[PNode, ...]

    def children(self):
        return self.alts


@dataclass(frozen=True, eq=False)
class NotP(PNode):
    """An item of a SEQ or AND: no match of ``body`` lies in its scope."""

    body: PNode

    def children(self):
        return (self.body,)


@dataclass(frozen=True, eq=False)
class ExistsP(PNode):
    """An item of a SEQ or AND: some match of ``body`` lies in its scope (not returned)."""

    body: PNode

    def children(self):
        return (self.body,)


@dataclass(frozen=True, eq=False)
class BoolOrP(PNode):
    """NEEL's disjunction of boolean items in one slot, e.g. ``!B ∨ ∃C``."""

    alts: tuple[PNode, ...]  # NotP / ExistsP

    def children(self):
        return self.alts


@dataclass(frozen=True, eq=False)
class WindowP(PNode):
    """A sub-pattern whose matches must also span less than ``within`` (NEEL's inner WITHIN)."""

    body: PNode
    within: int

    def children(self):
        return (self.body,)


BOOLEAN_ITEMS = (NotP, ExistsP, BoolOrP)


def is_positive_item(node: PNode) -> bool:
    return not isinstance(node, BOOLEAN_ITEMS)


# ----------------------------------------------------------------------------------------------
# Names, conditions, aggregates


@dataclass(frozen=True)
class Variable:
    """A pattern variable and where it lives.

    Attributes:
        name: the variable (an explicit alias, or the type name when none is given).
        type: the event type it binds, or None for an untyped variable (any event).
        atoms: ids of the Atom nodes declaring it (several for a repeated implicit type name).
        scope: id of the innermost NOT/EXISTS around it, None for positive variables.
        kleene: id of the innermost Kleene around it, None if it binds exactly one event.
        nested_kleene: that Kleene is itself inside another Kleene.
        optional: inside an OR alternative, so a match may not bind it.
    """

    name: str
    type: str | None
    atoms: tuple[int, ...]
    scope: int | None
    kleene: int | None
    nested_kleene: bool
    optional: bool

    @property
    def negated(self) -> bool:
        return self.scope is not None

    @property
    def multi(self) -> bool:
        """Can bind more than one event in one match."""
        return self.kleene is not None or len(self.atoms) > 1


@dataclass(frozen=True)
class Condition:
    """One conjunct of the query's conditions (WHERE and qualifications inside operators).

    Attributes:
        expr: the expression, names resolved (every ``Attr.var`` is a variable name).
        vars: variables it mentions (plainly or through NEXT/FIRST/LAST).
        next_var: X when the condition uses ``NEXT(X)``: it then holds for every pair of
            consecutive X events of a Kleene run, the plain ``X`` meaning the earlier one.
        scope: id of the NOT/EXISTS node it belongs to (None: the match itself).
        kind: "local" (one variable, no NEXT/FIRST/LAST), "edge" (only X and NEXT(X)), or
            "general".
        text: the condition as written.
    """

    expr: ast.Expr
    vars: frozenset[str]
    next_var: str | None
    scope: int | None
    kind: str
    text: str
    pos: Position = field(default=NOWHERE, compare=False, repr=False)


@dataclass(frozen=True)
class StreamFilter:
    """A condition on unqualified attributes: every event of a match (negated ones too) must
    satisfy it, so it acts as a filter on the stream for this query."""

    expr: ast.Expr
    text: str
    pos: Position = field(default=NOWHERE, compare=False, repr=False)


@dataclass(frozen=True)
class GroupKey:
    """A GROUP BY attribute: of every event (var None) or of one variable."""

    column: str
    var: str | None
    attr: str


@dataclass(frozen=True)
class Aggregate:
    """An aggregate of the RETURN/AGG clause.

    ``func`` is COUNT, SUM, AVG, MIN or MAX; ``vars`` is empty for COUNT(*) and otherwise the
    variables whose events are aggregated; ``attr`` is None for COUNT.
    """

    func: str
    vars: tuple[str, ...]
    attr: str | None
    column: str
    written: str = field(default="", compare=False)  # the call as written, e.g. COUNT(A) for vars (a, b)

    @property
    def is_count_star(self) -> bool:
        return self.func == "COUNT" and not self.vars


MATCH_COLUMNS = ("match", "var", "pos", "event_id", "type", "ts")
"""Columns of a RETURN-of-events result: one row per (match, bound event)."""

STRATEGIES = ("skip-till-any-match", "skip-till-next-match", "contiguous")

TIME_UNITS_MS = units.TIME_UNITS_MS  # (re-exported: the query's time units)


@dataclass(frozen=True)
class Query:
    """A checked, bound query. See docs/semantics.md for the meaning of each part."""

    text: str
    pattern: PNode
    variables: Mapping[str, Variable]
    conditions: tuple[Condition, ...]
    stream_filters: tuple[StreamFilter, ...]
    partition_by: tuple[str, ...]
    equivalences: tuple[tuple[str, str], ...]
    group_by: tuple[GroupKey, ...]
    aggregates: tuple[Aggregate, ...]
    return_vars: tuple[str, ...]
    within: int | None
    within_events: int | None
    slide: int | None
    emit_on_change: bool
    strategy: str
    time_unit: str
    syntax: ast.QuerySyntax = field(compare=False, repr=False)
    #: the concept hierarchy the query's types are read in (empty: every type is plain)
    hierarchy: Hierarchy = field(default_factory=Hierarchy, repr=False)

    def members(self, type_: str | None) -> frozenset[str] | None:
        """The event types a pattern type matches: the leaf types below a concept, the type
        itself otherwise (None for an untyped variable: any event). Engines test
        ``e.type in members`` instead of ``e.type == type_``."""
        if type_ is None:
            return None
        return self.hierarchy.leaves(type_) if self.hierarchy.is_concept(type_) else frozenset((type_,))

    @property
    def concept_types(self) -> frozenset[str]:
        """The pattern's types that are concepts of the hierarchy."""
        return frozenset(v.type for v in self.variables.values() if self.hierarchy.is_concept(v.type))

    @property
    def returns_matches(self) -> bool:
        return not self.aggregates

    @property
    def mode(self) -> str:
        """"total" (WITHIN alone), "slide" (WITHIN ... SLIDE) or "emit" (EMIT ON CHANGE)."""
        if self.slide is not None:
            return "slide"
        if self.emit_on_change:
            return "emit"
        return "total"

    @property
    def output_columns(self) -> tuple[str, ...]:
        cols = [g.column for g in self.group_by]
        if self.mode == "slide":
            cols += ["window_start", "window_end"]
        elif self.mode == "emit":
            cols.append("ts")
        if self.returns_matches:
            cols += list(MATCH_COLUMNS)
        else:
            cols += [a.column for a in self.aggregates]
        return tuple(cols)

    def nodes(self) -> Iterator[PNode]:
        return self.pattern.walk()

    def node(self, node_id: int) -> PNode:
        for n in self.pattern.walk():
            if n.id == node_id:
                return n
        raise KeyError(node_id)

    @property
    def event_types(self) -> frozenset[str] | None:
        """Event types the pattern matches (positive or negated; a concept counts as its leaf
        types); None if an untyped variable binds any event."""
        types: set[str] = set()
        for v in self.variables.values():
            if v.type is None:
                return None
            types |= self.members(v.type)
        return frozenset(types)

    @property
    def input_types(self) -> frozenset[str] | None:
        """The types whose events can change the result; None when every event counts.

        Events of other types are ignored (docs/semantics.md, "Arrival"), so a pipeline may drop
        them before any shuffle -- except when the query counts positions: an untyped variable
        binds any event, ``contiguous`` is broken by any event in between, and ``WITHIN n
        EVENTS`` counts them all.
        """
        if self.strategy == "contiguous" or self.within_events is not None:
            return None
        return self.event_types

    @property
    def attributes(self) -> frozenset[str]:
        """Every attribute name the query reads (conditions, aggregates, groups, keys, filters).

        An event's other columns cannot change the result, so a pipeline need not move them.
        Names are as written; a bare name that turns out to be a variable is harmless here.
        """
        names = set(self.partition_by) | {g.attr for g in self.group_by} | {a for _, a in self.equivalences}
        for node in self.syntax.walk():
            if isinstance(node, (ast.Attr, ast.Ref)):
                names.add(node.name)
            elif isinstance(node, ast.AggCall) and node.attr is not None:
                names.add(node.attr)
        return frozenset(names)

    def __str__(self) -> str:  # the normalised text
        from .printer import to_text

        return to_text(self)


Number = Union[int, float]
