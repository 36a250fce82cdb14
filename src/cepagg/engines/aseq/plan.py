"""What a query compiles to for A-Seq, and why a query is refused.

A-Seq evaluates fixed-length sequences ``SEQ(E1, ..., En)`` whose gaps may hold negated single
events, under skip-till-any-match. The bound :class:`~cepagg.lang.model.Query` is turned into a
:class:`SeqPlan`:

* the positive events ``E1..En`` (*positions*), each with the variable it binds and its
  :class:`Feed` — the event type and the local conditions an event needs to take that role
  (local predicates are arrival filters, paper §3.4);
* the negated events of every gap: ``gaps[0]`` is the leading gap (before E1), ``gaps[i]`` the
  gap between positions ``i-1`` and ``i``, ``gaps[n]`` the trailing gap;
* the partition key (HPC, paper §3.4): the query's unqualified equivalence and GROUP BY
  attributes, plus the attributes of equality chains ``A.id = B.id = ...`` that tie every
  event of a match (negated ones included) — those are partition keys in disguise;
* aggregates, window, slide and result mode.

Everything else is refused at plan time with a sentence saying why (:func:`refusal`); the
planner then falls back to another engine.

Reference: Qi, Cao, Ray, Rundensteiner, "Complex Event Analytics: Online Aggregation of Stream
Sequence Patterns", SIGMOD 2014, §2.1 (query model), §3.4 (predicates); negation at either end of a
pattern, negation under predicates and cross-event predicates other than equivalence are left open
by the paper.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ...errors import UnsupportedQuery
from ...lang import ast
from ...lang.model import Aggregate, Atom, Condition, ExistsP, NotP, Query, SeqP
from ...lang.printer import expr_text

#: Longest pattern aseq compiles (its maps are n x n matrices).
MAX_LENGTH = 60


@dataclass(frozen=True)
class Feed:
    """Which events can take one role: a type (None: any) and local conditions on the event.

    ``members`` are the event types the role accepts (a concept of the query's hierarchy
    accepts the types below it; None: any). ``key`` identifies the predicate independently of
    variable names, so that roles of different queries with the same types and conditions are
    recognised as the same (sharing).
    """

    type: str | None
    conds: tuple[ast.Expr, ...]
    key: tuple
    members: frozenset[str] | None = None

    @staticmethod
    def of(type_: str | None, conds: Sequence[Condition], members: frozenset[str] | None = None) -> "Feed":
        exprs = tuple(c.expr for c in conds)
        if type_ is not None and members is None:
            members = frozenset((type_,))
        key = (type_, tuple(sorted(members)) if members is not None else None,
               tuple(sorted(_canon(e) for e in exprs)))
        return Feed(type_, exprs, key, members)

    def text(self) -> str:
        t = self.type or "any"
        if not self.conds:
            return t
        return f"{t}[{' AND '.join(sorted(_canon(e) for e in self.conds))}]"


@dataclass(frozen=True)
class SeqPlan:
    """A query as A-Seq sees it. See the module docstring."""

    query: Query
    variables: tuple[str, ...]  # positive variable of each position
    feeds: tuple[Feed, ...]  # feed of each position
    gaps: tuple[tuple[Feed, ...], ...]  # n + 1 gaps of negated feeds
    partition_attrs: tuple[str, ...]  # internal partition key: partition_by, then chain attributes
    chain_attrs: tuple[str, ...]
    group_index: tuple[int, ...]  # per GROUP BY key, its index in partition_attrs
    within: int | None
    slide: int | None
    mode: str  # total | slide | emit

    @property
    def length(self) -> int:
        return len(self.feeds)

    @property
    def leading(self) -> tuple[Feed, ...]:
        return self.gaps[0]

    @property
    def trailing(self) -> tuple[Feed, ...]:
        return self.gaps[-1]

    @property
    def aggregates(self) -> tuple[Aggregate, ...]:
        return self.query.aggregates

    def nodes_of(self, variables: Sequence[str]) -> tuple[int, ...]:
        """Positions bound to any of ``variables``."""
        return tuple(i for i, v in enumerate(self.variables) if v in variables)

    def describe(self) -> str:
        parts = []
        for i, feed in enumerate(self.feeds):
            parts += [f"!{g.text()}" for g in self.gaps[i]]
            parts.append(feed.text())
        parts += [f"!{g.text()}" for g in self.gaps[-1]]
        return "(" + ", ".join(parts) + ")"


def _canon(e: ast.Expr) -> str:
    """A condition's text with variable names removed (``a.x > 3`` and ``A.x > 3`` agree)."""

    def strip(x: ast.Expr) -> ast.Expr:
        if isinstance(x, ast.Attr):
            return ast.Attr(None if x.var is None else "_", x.name)
        if isinstance(x, ast.Arith):
            return ast.Arith(x.op, strip(x.left), strip(x.right))
        if isinstance(x, ast.Negate):
            return ast.Negate(strip(x.operand))
        if isinstance(x, ast.Compare):
            return ast.Compare(x.ops, tuple(strip(o) for o in x.operands))
        if isinstance(x, ast.BoolOp):
            return ast.BoolOp(x.op, tuple(strip(o) for o in x.operands))
        if isinstance(x, ast.NotExpr):
            return ast.NotExpr(strip(x.operand))
        return x

    return expr_text(strip(e))


def explain_lines(query: Query) -> list[str]:
    """What aseq runs for ``query`` (for ``cepagg explain``)."""
    p = compile_plan(query)
    lines = [f"aseq pattern: {p.describe()} (local conditions are arrival filters)"]
    if p.partition_attrs:
        how = ", ".join(p.partition_attrs)
        if p.chain_attrs:
            how += f" (equality chain on {', '.join(p.chain_attrs)})"
        lines.append(f"aseq hashed partitions: {how}")
    lines.append("aseq windows: " + ("none (one prefix-counter vector per partition)" if p.within is None else
                                     "two-stacks over per-START maps" + (", blocked segment for the leading negation"
                                                                        if p.leading else "")))
    return lines


# ----------------------------------------------------------------------------------------------
# Refusal and compilation


def refusal(query: Query) -> str | None:
    """Why A-Seq cannot evaluate ``query`` (None when it can)."""
    try:
        compile_plan(query)
    except UnsupportedQuery as exc:
        return exc.reason
    return None


def _refuse(reason: str) -> UnsupportedQuery:
    return UnsupportedQuery("aseq", reason)


def compile_plan(query: Query) -> SeqPlan:
    """The :class:`SeqPlan` of ``query``; raises UnsupportedQuery with the reason otherwise."""
    q = query
    if q.returns_matches:
        raise _refuse("it returns matches; aseq computes aggregates without constructing matches")
    if q.strategy != "skip-till-any-match":
        raise _refuse(f"selection strategy {q.strategy}: aseq counts under skip-till-any-match only")
    if q.within_events is not None:
        raise _refuse("tuple-count windows (WITHIN n EVENTS) are not supported; use a time window")

    items = _items(q)
    positives: list[Atom] = []
    gaps: list[list[Atom]] = [[]]
    for item in items:
        if isinstance(item, Atom):
            positives.append(item)
            gaps.append([])
        else:
            gaps[-1].append(item.body)
    if len(positives) > MAX_LENGTH:
        raise _refuse(f"the pattern has {len(positives)} positive events; aseq compiles at most {MAX_LENGTH}")

    variables = q.variables
    local: dict[str, list[Condition]] = {}
    general: list[Condition] = []
    for c in q.conditions:
        if c.kind == "edge":  # pragma: no cover - NEXT needs a Kleene variable, refused above
            raise _refuse("NEXT conditions need Kleene patterns")
        if c.kind == "general":
            general.append(c)
            continue
        (var,) = c.vars
        v = variables[var]
        if c.scope != v.scope:
            raise _refuse(f"the condition '{c.text}' on a positive event is written inside a negation; "
                          "it couples the negation with that event")
        local.setdefault(var, []).append(c)

    for v, a in q.equivalences:
        if variables[v].multi:
            raise _refuse(f"the equivalence on {v.split('@')[0]}.{a} ties events of a repeated type; "
                          "use an unqualified equivalence [..] instead")

    chain = _chain_attributes(q, general, [a.var for a in positives])
    partition_attrs = tuple(q.partition_by) + tuple(a for a in chain if a not in q.partition_by)

    group_index = []
    for g in q.group_by:
        if g.var is None:
            group_index.append(partition_attrs.index(g.attr))
        elif g.attr in chain:
            group_index.append(partition_attrs.index(g.attr))
        else:
            raise _refuse(f"GROUP BY {g.var.split('@')[0]}.{g.attr} is not a partition key; write "
                          f"GROUP BY {g.attr}, or tie every event with equalities on {g.attr}")

    def feed(atom: Atom) -> Feed:
        return Feed.of(atom.type, local.get(atom.var, ()), q.members(atom.type))

    return SeqPlan(
        query=q,
        variables=tuple(a.var for a in positives),
        feeds=tuple(feed(a) for a in positives),
        gaps=tuple(tuple(feed(a) for a in g) for g in gaps),
        partition_attrs=partition_attrs,
        chain_attrs=tuple(a for a in chain if a not in q.partition_by),
        group_index=tuple(group_index),
        within=q.within,
        slide=q.slide,
        mode=q.mode,
    )


def _items(q: Query) -> tuple:
    p = q.pattern
    if isinstance(p, Atom):
        return (p,)
    if not isinstance(p, SeqP):
        raise _refuse(f"the pattern is {_what(p)}; aseq evaluates fixed-length SEQ patterns")
    for item in p.items:
        if isinstance(item, Atom):
            continue
        if isinstance(item, NotP):
            if not isinstance(item.body, Atom):
                raise _refuse(f"NOT around {_what(item.body)}: aseq negates single events only")
            continue
        if isinstance(item, ExistsP):
            raise _refuse("EXISTS items are not supported by aseq")
        raise _refuse(f"the SEQ holds {_what(item)}; aseq evaluates SEQs of single events")
    return p.items


def _what(node) -> str:
    names = {"KleeneP": "a Kleene pattern (P+)", "AndP": "AND", "OrP": "OR", "BoolOrP": "a disjunction of negations",
             "SeqP": "a sequence", "WindowP": "a sub-pattern with its own window", "NotP": "a negation",
             "ExistsP": "EXISTS", "Atom": "an event"}
    return names.get(type(node).__name__, type(node).__name__)


def _equality_attr(c: Condition) -> str | None:
    """The attribute of ``X.a = Y.a (= ...)`` conditions; None for anything else."""
    e = c.expr
    if not isinstance(e, ast.Compare) or any(op != "=" for op in e.ops):
        return None
    names = set()
    for o in e.operands:
        if not isinstance(o, ast.Attr) or o.var is None:
            return None
        names.add(o.name)
    return names.pop() if len(names) == 1 else None


def _chain_attributes(q: Query, general: list[Condition], positives: list[str]) -> tuple[str, ...]:
    """Attributes of equality chains that partition the stream, or refuse.

    An attribute ``a`` qualifies when equalities on ``a`` outside any negation connect every
    positive variable, and every negated variable is tied to them by an equality on ``a``
    inside its negation. A null then excludes the event from every match, exactly as a
    partition key does.
    """
    by_attr: dict[str, list[Condition]] = {}
    for c in general:
        a = _equality_attr(c)
        if a is None:
            raise _refuse(f"the cross-event condition '{c.text}' is not an equality chain on one "
                          "attribute (aseq supports only those, as partition keys)")
        by_attr.setdefault(a, []).append(c)
    chain = []
    negated = [v.name for v in q.variables.values() if v.negated]
    for a, conds in by_attr.items():
        parent = {v: v for v in positives}

        def find(x: str) -> str:
            while parent[x] != x:
                x = parent[x]
            return x

        tied: set[str] = set()
        for c in conds:
            if c.scope is None:
                vs = sorted(c.vars)
                for x in vs[1:]:
                    parent[find(x)] = find(vs[0])
            else:
                neg = [v for v in c.vars if q.variables[v].negated]
                if not any(not q.variables[v].negated for v in c.vars) or len(neg) != 1:
                    raise _refuse(f"the condition '{c.text}' inside a negation does not tie the negated "
                                  "event to the match")
                tied.add(neg[0])
        if len(positives) < 2 or len({find(v) for v in positives}) != 1:
            raise _refuse(f"the equalities on '{a}' do not tie every event of the match; aseq uses "
                          "equality chains only as partition keys")
        missing = [v for v in negated if v not in tied]
        if missing:
            raise _refuse(f"the negated event {missing[0].split('@')[0]} is not tied by an equality on "
                          f"'{a}'; it would have to act across partitions")
        chain.append(a)
    return tuple(chain)


# Reference: A-Seq (SIGMOD 2014) §2.1 (query model), §3.3 (negation), §3.4 (local, equivalence
# predicates, HPC); the cases the paper leaves open are decided here.
