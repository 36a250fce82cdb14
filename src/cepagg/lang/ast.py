"""The typed syntax tree of a cepagg query.

The parser produces these nodes; :mod:`cepagg.lang.analyze` checks them and binds names. Every
node keeps the :class:`~cepagg.errors.Position` of its text so that any later error can point
at it. Nodes are frozen dataclasses; ``children()`` lists sub-nodes so walks need no
per-class code.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from fractions import Fraction
from typing import Iterator, Union

from ..errors import Position

NOWHERE = Position(0, 0, 1, 1)


@dataclass(frozen=True)
class Node:
    pos: Position = field(default=NOWHERE, compare=False, repr=False, kw_only=True)

    def children(self) -> Iterator["Node"]:
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, Node):
                yield value
            elif isinstance(value, tuple):
                for v in value:
                    if isinstance(v, Node):
                        yield v

    def walk(self) -> Iterator["Node"]:
        yield self
        for c in self.children():
            yield from c.walk()


# ----------------------------------------------------------------------------------------------
# Expressions (WHERE clause, qualifications inside operators, RETURN items)


@dataclass(frozen=True)
class Expr(Node):
    pass


@dataclass(frozen=True)
class Literal(Expr):
    value: Union[int, float, str, bool]


@dataclass(frozen=True)
class Attr(Expr):
    """``var.name`` or an unqualified ``name`` (var is None: the attribute of every event)."""

    var: str | None
    name: str


@dataclass(frozen=True)
class Ref(Expr):
    """``NEXT(var).name``, ``FIRST(var).name`` or ``LAST(var).name`` on a Kleene variable."""

    kind: str  # "NEXT" | "FIRST" | "LAST"
    var: str
    name: str


@dataclass(frozen=True)
class Arith(Expr):
    op: str  # + - * /
    left: Expr
    right: Expr


@dataclass(frozen=True)
class Negate(Expr):
    operand: Expr


@dataclass(frozen=True)
class Compare(Expr):
    """A comparison chain ``a op1 b op2 c``, meaning ``a op1 b AND b op2 c``."""

    ops: tuple[str, ...]
    operands: tuple[Expr, ...]


@dataclass(frozen=True)
class BoolOp(Expr):
    op: str  # "and" | "or"
    operands: tuple[Expr, ...]


@dataclass(frozen=True)
class NotExpr(Expr):
    operand: Expr


@dataclass(frozen=True)
class Equivalence(Expr):
    """``[a, P.b, ...]``: each listed attribute has one value across the events it applies to."""

    attrs: tuple[Attr, ...]


@dataclass(frozen=True)
class AggCall(Expr):
    """``COUNT(*)``, ``COUNT(E)``, ``SUM(E.a)``, ... ``var`` is None for ``*`` or a bare ``COUNT``."""

    func: str  # COUNT SUM AVG MIN MAX
    var: str | None
    attr: str | None


@dataclass(frozen=True)
class AggSubquery(Expr):
    """NEEL's correlated ``AGG (Count (*) SEQ(...))`` operand (parsed, then refused)."""

    call: AggCall
    pattern: "Pattern"


# ----------------------------------------------------------------------------------------------
# Patterns


@dataclass(frozen=True)
class Pattern(Node):
    pass


@dataclass(frozen=True)
class EventPattern(Pattern):
    """One event: ``Type``, ``Type var`` or an untyped variable ``var`` (type is None)."""

    type: str | None
    var: str | None


@dataclass(frozen=True)
class Seq(Pattern):
    items: tuple[Pattern, ...]
    quals: tuple[Expr, ...] = ()


@dataclass(frozen=True)
class AndPattern(Pattern):
    items: tuple[Pattern, ...]
    quals: tuple[Expr, ...] = ()


@dataclass(frozen=True)
class OrPattern(Pattern):
    items: tuple[Pattern, ...]
    quals: tuple[Expr, ...] = ()


@dataclass(frozen=True)
class Kleene(Pattern):
    body: Pattern


@dataclass(frozen=True)
class Not(Pattern):
    body: Pattern


@dataclass(frozen=True)
class Exists(Pattern):
    body: Pattern


@dataclass(frozen=True)
class Qualified(Pattern):
    """A parenthesised primitive with qualifications, NEEL's ``(Sharpening s, s.id=1)``."""

    body: Pattern
    quals: tuple[Expr, ...]


@dataclass(frozen=True)
class Windowed(Pattern):
    """A sub-pattern with its own window, NEEL's ``EXIST (SEQ(...) WITHIN 1 hour)``."""

    body: Pattern
    within: "Duration"


@dataclass(frozen=True)
class Unsupported(Pattern):
    """A construct recognised only to refuse it clearly (Kleene star, optional)."""

    body: Pattern
    what: str


# ----------------------------------------------------------------------------------------------
# Clauses


@dataclass(frozen=True)
class Duration(Node):
    value: Fraction  # exact, as written (``1.5e3`` is 1500)
    unit: str | None  # canonical unit name, None for raw time units
    count: bool = False  # True for tuple-count windows (NEEL)


@dataclass(frozen=True)
class ReturnItem(Node):
    expr: Expr  # AggCall or Attr (a group attribute or, when a bare name, possibly a variable)
    alias: str | None
    text: str  # the item as written, used as default column name


@dataclass(frozen=True)
class QuerySyntax(Node):
    """A parsed query, clauses as written (any order, each at most once)."""

    pattern: Pattern | None
    where: Expr | None = None
    group_by: tuple[Attr, ...] = ()
    returns: tuple[ReturnItem, ...] = ()
    agg: tuple[ReturnItem, ...] = ()
    within: Duration | None = None
    slide: Duration | None = None
    emit_on_change: bool = False
    strategy: str | None = None
    clause_pos: tuple[tuple[str, Position], ...] = ()
