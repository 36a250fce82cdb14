"""Semantic checks and name binding: syntax tree -> :class:`~cepagg.lang.model.Query`.

Every rule that makes a query meaningless is checked here and reported as a positioned
:class:`~cepagg.errors.QueryError` (unknown variable, NEXT outside a Kleene pattern, negation
with nothing around it, SLIDE without WITHIN, ...). The rules themselves are stated in
docs/semantics.md; this module is their executable form.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Mapping

from ..errors import Position, QueryError
from ..units import UNIT_NS
from . import ast
from .model import (
    STRATEGIES,
    TIME_UNITS_MS,
    Aggregate,
    AndP,
    Atom,
    BoolOrP,
    Condition,
    ExistsP,
    GroupKey,
    KleeneP,
    NotP,
    OrP,
    PNode,
    Query,
    SeqP,
    StreamFilter,
    Variable,
    WindowP,
    is_positive_item,
)

#: Attributes every event has, whatever the input columns.
BUILTIN_ATTRS = ("ts", "type")

#: The longest window or slide, in the stream's time unit, and the largest tuple-count window.
#: Engines compute times such as ``ts - w``, ``ts + w`` and ``k * slide + w`` in 64-bit
#: integers; at most 2^61 keeps them in range with a margin (every in-process engine returns the
#: same rows at this limit: tests/lang/test_query_limits.py).
MAX_SPAN = 2**61
#: The most windows one event may lie in under WITHIN w SLIDE s (w / s rounded up): every engine
#: keeps a value per open window, and a row per window is reported.
MAX_WINDOWS_PER_EVENT = 100_000

_STRATEGY_ALIASES = {
    "skip-till-any-match": "skip-till-any-match", "any": "skip-till-any-match",
    "skip-till-next-match": "skip-till-next-match", "next": "skip-till-next-match",
    "contiguous": "contiguous", "strict-contiguity": "contiguous", "strict": "contiguous",
}


@dataclass
class _Decl:
    """One occurrence of a variable in the pattern, before variables are merged."""

    name: str  # internal variable name
    written: str  # the name as written (alias or type)
    explicit: bool
    type: str | None
    atom: int
    scope: int | None
    scopes: tuple[int, ...]  # chain of NOT/EXISTS ids, outermost first
    kleenes: tuple[int, ...]  # chain of Kleene ids, outermost first
    optional: bool
    pos: Position
    alts: tuple[tuple[int, int], ...] = ()


def _exclusive(d1: _Decl, d2: _Decl) -> bool:
    """The two declarations sit in different alternatives of one OR: never bound together."""
    o1, o2 = dict(d1.alts), dict(d2.alts)
    return any(o1[k] != o2[k] for k in o1.keys() & o2.keys())


@dataclass(frozen=True, eq=False)
class _PendingAtom(PNode):
    """An atom whose variable name is final only once the whole pattern is bound."""

    decl: _Decl


@dataclass(frozen=True, eq=False)
class _Conj(PNode):
    """``!A ∧ !B`` in one SEQ slot: spliced into the SEQ as consecutive items of one gap."""

    items: tuple[PNode, ...]


def _finalize(node: PNode, a: "_Analyzer") -> PNode:
    """Replace pending atoms by final ones; refuse what cannot stand where it is."""
    if isinstance(node, _Conj):
        raise a.error("A conjunction of negated items needs a SEQ around it (negation with "
                      "nothing around it).", node.pos)
    if isinstance(node, _PendingAtom):
        return Atom(node.id, node.decl.name, node.decl.type, pos=node.pos)
    if isinstance(node, (SeqP, AndP)):
        return replace(node, items=tuple(_finalize(i, a) for i in node.items))
    if isinstance(node, (OrP, BoolOrP)):
        return replace(node, alts=tuple(_finalize(i, a) for i in node.alts))
    if isinstance(node, (KleeneP, NotP, ExistsP, WindowP)):
        return replace(node, body=_finalize(node.body, a))
    return node


@dataclass
class _Ctx:
    scopes: tuple[int, ...] = ()
    kleenes: tuple[int, ...] = ()
    optional: bool = False
    alts: tuple[tuple[int, int], ...] = ()  # (OR node id, alternative index) around this point


@dataclass
class _Analyzer:
    text: str
    time_unit: str
    schema: Mapping[str, str] | None
    next_id: int = 0
    decls: list[_Decl] = field(default_factory=list)
    quals: list[tuple[ast.Expr, tuple[int, ...]]] = field(default_factory=list)
    scope_pos: dict[int, Position] = field(default_factory=dict)

    def error(self, message: str, node: ast.Node | Position | None = None) -> QueryError:
        pos = node if isinstance(node, Position) or node is None else node.pos
        return QueryError(message, self.text, pos)

    def new_id(self) -> int:
        self.next_id += 1
        return self.next_id

    # ------------------------------------------------------------------------------------------
    # Pattern

    def bind(self, node: ast.Pattern, ctx: _Ctx) -> PNode:
        if isinstance(node, ast.EventPattern):
            return self._event(node, ctx)
        if isinstance(node, ast.Seq):
            return self._seq(node, ctx)
        if isinstance(node, ast.AndPattern):
            items = self._items(node.items, ctx, node.quals)
            if not any(is_positive_item(i) for i in items):
                return _Conj(self.new_id(), items, pos=node.pos)
            if len(items) == 1:
                return items[0]
            return AndP(self.new_id(), items, pos=node.pos)
        if isinstance(node, ast.OrPattern) and len(node.items) == 1:  # OR(P) is P, bound in every match
            body = self.bind(node.items[0], ctx)
            self.quals.extend((q, ctx.scopes) for q in node.quals)
            return body
        if isinstance(node, ast.OrPattern):
            oid = self.new_id()
            alts = tuple(self.bind(i, _Ctx(ctx.scopes, ctx.kleenes, True, ctx.alts + ((oid, k),)))
                         for k, i in enumerate(node.items))
            self.quals.extend((q, ctx.scopes) for q in node.quals)
            if len(alts) == 1:
                return alts[0]
            booleans = [not is_positive_item(a) for a in alts]
            if all(booleans):
                return BoolOrP(oid, alts, pos=node.pos)
            if any(booleans):
                raise self.error("OR mixes negated (!/NOT, EXISTS) and positive alternatives; "
                                 "a boolean disjunction needs every alternative negated or EXISTS.",
                                 node)
            return OrP(oid, alts, pos=node.pos)
        if isinstance(node, ast.Kleene):
            kid = self.new_id()
            body = self.bind(node.body, _Ctx(ctx.scopes, ctx.kleenes + (kid,), ctx.optional, ctx.alts))
            if isinstance(body, (NotP, ExistsP, BoolOrP, KleeneP)):
                # (NOT P)+ is NOT P (GRETA, PVLDB 2017, Sec. 2); (P+)+ has the same matches as P+
                self._drop_kleene(kid)
                return body
            return KleeneP(kid, body, pos=node.pos)
        if isinstance(node, (ast.Not, ast.Exists)):
            nid = self.new_id()
            self.scope_pos[nid] = node.pos
            body = self.bind(node.body, _Ctx(ctx.scopes + (nid,), ctx.kleenes, ctx.optional, ctx.alts))
            negate = isinstance(node, ast.Not)
            while isinstance(body, KleeneP):  # NOT (P+) is NOT P
                self._drop_kleene(body.id)
                body = body.body
            if isinstance(body, (NotP, ExistsP)):
                # NOT EXISTS P is NOT P (NEEL's NOT EXIST); NOT NOT P is EXISTS P
                self._rename_scope(body.id, nid)
                inner_negated = isinstance(body, NotP)
                cls = ExistsP if negate == inner_negated else NotP
                return cls(nid, body.body, pos=node.pos)
            if isinstance(body, BoolOrP):
                raise self.error("Negating a disjunction of negations is not supported; rewrite it "
                                 "as a conjunction.", node)
            return NotP(nid, body, pos=node.pos) if negate else ExistsP(nid, body, pos=node.pos)
        if isinstance(node, ast.Qualified):
            body = self.bind(node.body, ctx)
            self.quals.extend((q, ctx.scopes) for q in node.quals)
            return body
        if isinstance(node, ast.Windowed):
            body = self.bind(node.body, ctx)
            if isinstance(body, _Conj) or not is_positive_item(body):
                raise self.error("A sub-pattern with its own window needs a positive event (negation "
                                 "with nothing around it); write the window around a SEQ holding it.",
                                 node)
            return WindowP(self.new_id(), body, self.duration(node.within, "WITHIN"), pos=node.pos)
        if isinstance(node, ast.Unsupported):  # pragma: no branch
            raise self.error(f"{node.what} is not supported; write P+ for one or more, or list the "
                             "alternatives with OR.", node)
        raise AssertionError(f"unexpected pattern node {node!r}")

    def _drop_kleene(self, kid: int) -> None:
        for d in self.decls:
            if kid in d.kleenes:
                d.kleenes = tuple(k for k in d.kleenes if k != kid)

    def _rename_scope(self, old: int, new: int) -> None:
        for d in self.decls:
            if old in d.scopes:
                d.scopes = tuple(dict.fromkeys(new if s == old else s for s in d.scopes))
                d.scope = d.scopes[-1]
                if d.name.endswith(f"@{old}"):
                    d.name = d.name[: -len(str(old))] + str(new)
        self.quals = [(q, tuple(dict.fromkeys(new if s == old else s for s in sc)))
                      for q, sc in self.quals]

    def _event(self, node: ast.EventPattern, ctx: _Ctx) -> Atom:
        aid = self.new_id()
        if node.type is None:
            name, written, explicit = node.var, node.var, True
        elif node.var is not None:
            name, written, explicit = node.var, node.var, True
        else:
            written, explicit = node.type, False
            # implicit names are per scope: SEQ(C, !C, D) has two variables called C
            name = node.type if not ctx.scopes else f"{node.type}@{ctx.scopes[-1]}"
        decl = _Decl(name, written, explicit, node.type, aid,
                     ctx.scopes[-1] if ctx.scopes else None, ctx.scopes, ctx.kleenes,
                     ctx.optional, node.pos, ctx.alts)
        self.decls.append(decl)
        return _PendingAtom(aid, decl, pos=node.pos)

    def _items(self, items, ctx: _Ctx, quals) -> tuple[PNode, ...]:
        bound = tuple(self.bind(i, ctx) for i in items)
        self.quals.extend((q, ctx.scopes) for q in quals)
        return bound

    def _seq(self, node: ast.Seq, ctx: _Ctx) -> PNode:
        bound = self._items(node.items, ctx, node.quals)
        flat: list[PNode] = []
        for item in bound:
            # SEQ(SEQ(A, B), C) = SEQ(A, B, C), also with negation inside (NEEL FR1/FR2)
            # and `!A ∧ !B` in one slot is two negations of the same gap
            flat.extend(item.items if isinstance(item, (SeqP, _Conj)) else (item,))
        if not any(is_positive_item(i) for i in flat):
            raise self.error("SEQ needs at least one positive item (negation with nothing "
                             "around it).", node)
        if len(flat) == 1:
            return flat[0]
        return SeqP(self.new_id(), tuple(flat), pos=node.pos)

    # ------------------------------------------------------------------------------------------
    # Variables

    def separate_scopes(self) -> None:
        """An alias reused in exclusive OR alternatives at different negation depths (NEEL's
        ``SEQ(R r, W w) OR SEQ(R r, !W w, S s)``) names one variable per scope; so does an alias
        equal to a type used without alias in another scope (``SEQ(A, NOT A A, C)``: the negated
        ``A A`` is not the positive ``A``)."""
        by_written: dict[str, list[_Decl]] = {}
        for d in self.decls:  # implicit names are per scope already; an equal alias follows them
            by_written.setdefault(d.written, []).append(d)
        for written, ds in by_written.items():
            if any(d.explicit for d in ds) and len({d.scope for d in ds}) > 1:
                for d in ds:
                    if d.explicit:
                        d.name = written if d.scope is None else f"{written}@{d.scope}"

    def variables(self) -> dict[str, Variable]:
        by_name: dict[str, list[_Decl]] = {}
        for d in self.decls:
            by_name.setdefault(d.name, []).append(d)
        implicit_names = {d.written for d in self.decls if not d.explicit}
        out: dict[str, Variable] = {}
        for name, ds in by_name.items():
            if any(d.explicit for d in ds) and len({d.scope for d in ds}) == 1:
                for i, d1 in enumerate(ds):
                    for d2 in ds[i + 1:]:
                        if not _exclusive(d1, d2):
                            raise self.error(f"Variable '{name}' is declared twice.", d2.pos)
                        if d1.type != d2.type:
                            raise self.error(f"Variable '{name}' is declared with two different "
                                             "types.", d2.pos)
                if name in implicit_names:
                    other = next(d for d in self.decls if not d.explicit and d.written == name)
                    raise self.error(f"'{name}' names both a variable and an event type used "
                                     "without alias; give the type an alias.", other.pos)
            chains = {d.kleenes for d in ds}
            chain = next(iter(chains)) if len(chains) == 1 else ()
            out[name] = Variable(
                name=name, type=ds[0].type, atoms=tuple(d.atom for d in ds), scope=ds[0].scope,
                kleene=chain[-1] if chain else None, nested_kleene=len(chain) > 1,
                optional=all(d.optional for d in ds),
            )
        return out

    def resolve(self, written: str, variables: dict[str, Variable], node: ast.Node,
                scopes: tuple[int, ...] | None = None) -> list[str]:
        """Variables named ``written``: a variable, or every variable of a type used unaliased."""
        if written in variables:
            return [written]
        same_type = [d.name for d in self.decls if not d.explicit and d.written == written]
        same_type = list(dict.fromkeys(same_type))
        if not same_type:
            aliased = [d.name for d in self.decls if d.type == written]
            if aliased:
                same_type = list(dict.fromkeys(aliased))
        if not same_type:
            raise self.error(f"Unknown variable '{written}'; the pattern declares "
                             f"{_listing(v.name.split('@')[0] for v in variables.values())}.", node)
        if len(same_type) > 1:
            positive = [n for n in same_type if variables[n].scope is None]
            if scopes is not None:  # prefer the variable of the scope the condition is written in
                local = [n for n in same_type if variables[n].scope == (scopes[-1] if scopes else None)]
                if len(local) == 1:
                    return local
            if positive:
                return positive
        return same_type

    # ------------------------------------------------------------------------------------------
    # Durations

    def duration(self, d: ast.Duration, clause: str) -> int:
        """A time duration in the stream's time unit: positive, whole, at most MAX_SPAN."""
        if d.count:
            raise self.error("A tuple-count window is only allowed in the query's WITHIN.", d)
        value = d.value * UNIT_NS[d.unit or self.time_unit] / UNIT_NS[self.time_unit]
        written = " ".join(self.text[d.pos.start:d.pos.end].split())
        if value <= 0:
            raise self.error(f"{clause} must be positive.", d)
        if value.denominator != 1:
            raise self.error(f"{clause} {written} is not a whole number of "
                             f"{self.time_unit}, the stream's time unit.", d)
        if value > MAX_SPAN:
            raise self.error(f"{clause} {written} is too long: a window or slide is at most "
                             f"2^61 = {MAX_SPAN} {self.time_unit} (the stream's time unit).", d)
        return int(value)

    # ------------------------------------------------------------------------------------------
    # Schema checks

    def check_attr(self, name: str, node: ast.Node) -> None:
        if self.schema is None or name in BUILTIN_ATTRS:
            return
        if name not in self.schema:
            raise self.error(f"Unknown attribute '{name}'; the events have "
                             f"{_listing(list(BUILTIN_ATTRS) + sorted(self.schema))}.", node)
        kind = self.schema[name]
        if re.match(_UNUSABLE_KINDS, kind):
            raise self.error(f"Attribute '{name}' holds {kind} values, which a query cannot compare, group or "
                             "aggregate; store it as a number or a string.", node)


#: Arrow kinds of attribute columns that a query cannot use (the engines compare, hash and add
#: scalars): lists, structs, maps, unions and bytes. Such a column is still carried to returned matches.
_UNUSABLE_KINDS = r"(large_|fixed_size_)?(list|binary)\b|struct\b|map\b|(dense_|sparse_)?union\b"


def _listing(names) -> str:
    names = list(dict.fromkeys(names))
    return ", ".join(names) if names else "nothing"


def _conjuncts(expr: ast.Expr) -> list[ast.Expr]:
    if isinstance(expr, ast.BoolOp) and expr.op == "and":
        return [c for op in expr.operands for c in _conjuncts(op)]
    return [expr]


def analyze(syntax: ast.QuerySyntax, text: str, *, time_unit: str = "ms",
            schema: Mapping[str, str] | None = None) -> Query:
    """Check ``syntax`` and bind its names.

    Args:
        syntax: the parsed query.
        text: the query text (for error excerpts).
        time_unit: unit of the stream's integer timestamps ("ms", "s", ...); durations are
            converted to it.
        schema: attribute name -> kind ("int", "float", "str", "bool") of the events, when known;
            attribute names are then checked.
    """
    if time_unit not in TIME_UNITS_MS:
        raise QueryError(f"Unknown time unit {time_unit!r}; use one of {', '.join(TIME_UNITS_MS)}.")
    a = _Analyzer(text, time_unit, schema)
    bound = a.bind(syntax.pattern, _Ctx())
    a.separate_scopes()
    pattern = _finalize(bound, a)
    if not is_positive_item(pattern):
        raise a.error("Negation with nothing around it: a pattern cannot be only NOT/EXISTS; "
                      "put it inside SEQ with a positive event.", syntax.pattern)
    variables = a.variables()

    conditions, filters, partition_by, equivalences = _conditions(a, syntax, variables)
    group_by, partition_by, equivalences = _group_by(a, syntax, variables, partition_by, equivalences)
    aggregates, return_vars = _returns(a, syntax, variables, group_by)
    within, within_events, slide = _windows(a, syntax)

    strategy = "skip-till-any-match"
    if syntax.strategy is not None:
        raw, pos = syntax.strategy
        key = raw.lower().replace("_", "-")
        if key not in _STRATEGY_ALIASES:
            raise a.error(f"Unknown selection strategy '{raw}'; use one of {', '.join(STRATEGIES)}.", pos)
        strategy = _STRATEGY_ALIASES[key]
        if strategy != "skip-till-any-match" and any(isinstance(n, AndP) for n in pattern.walk()):
            raise a.error(f"{strategy} needs an order between events; AND has none.", pos)

    if syntax.emit_on_change and not aggregates:
        raise a.error("EMIT ON CHANGE reports aggregates; the query returns matches.",
                      dict(syntax.clause_pos).get("EMIT ON CHANGE"))

    query = Query(
        text=text, pattern=pattern, variables=variables, conditions=tuple(conditions),
        stream_filters=tuple(filters), partition_by=tuple(partition_by),
        equivalences=tuple(equivalences), group_by=tuple(group_by), aggregates=tuple(aggregates),
        return_vars=tuple(return_vars), within=within, within_events=within_events, slide=slide,
        emit_on_change=syntax.emit_on_change, strategy=strategy, time_unit=time_unit, syntax=syntax,
    )
    columns = query.output_columns
    for attr, key in zip(syntax.group_by, group_by):  # (an attribute named window_start, ts, match, ...)
        if columns.count(key.column) > 1:
            raise a.error(f"GROUP BY {key.column}: the output already has a column named '{key.column}' "
                          "(a window or result column); rename the attribute.", attr)
    for item in list(syntax.returns) + list(syntax.agg):
        if item.alias and columns.count(item.alias) > 1:
            raise a.error(f"The output already has a column named '{item.alias}'; choose another alias.", item)
    types = {v.type for v in variables.values()}
    if "type" in partition_by and None not in types and len(types) > 1:
        raise a.error("Grouping or partitioning by the event type leaves a pattern of several "
                      "types without any match.", syntax.pattern)
    return query


# ----------------------------------------------------------------------------------------------
# Conditions


def _conditions(a: _Analyzer, syntax: ast.QuerySyntax, variables: dict[str, Variable]):
    written: list[tuple[ast.Expr, tuple[int, ...]]] = []
    if syntax.where is not None:
        written.extend((c, ()) for c in _conjuncts(syntax.where))
    for q, scopes in a.quals:
        written.extend((c, scopes) for c in _conjuncts(q))

    decl_scopes = {d.name: d.scopes for d in a.decls}
    conditions: list[Condition] = []
    filters: list[StreamFilter] = []
    partition_by: list[str] = []
    equivalences: list[tuple[str, str]] = []

    for expr, scopes in written:
        text = " ".join(a.text[expr.pos.start:expr.pos.end].split())
        if isinstance(expr, ast.Equivalence):
            if scopes:
                raise a.error("An equivalence list [..] applies to whole matches; write it in WHERE.", expr)
            for attr in expr.attrs:
                a.check_attr(attr.name, attr)
                if attr.var is None:
                    if attr.name not in partition_by:
                        partition_by.append(attr.name)
                else:
                    for v in a.resolve(attr.var, variables, attr):
                        if (v, attr.name) not in equivalences:
                            equivalences.append((v, attr.name))
            continue
        for node in expr.walk():
            if isinstance(node, ast.Equivalence):
                raise a.error("An equivalence list [..] cannot be combined with OR or NOT; "
                              "write it as a condition of its own.", node)
            if isinstance(node, ast.AggSubquery):
                raise a.error("Aggregate sub-queries inside conditions (NEEL's decorrelation, Liu's "
                              "dissertation Sec. 5.6) are not supported.", node)
            if isinstance(node, ast.AggCall):
                raise a.error("Aggregates belong in RETURN, not in conditions.", node)
        bound_expr, used, unqualified, next_var, has_first_last = _resolve_expr(a, expr, variables, scopes)
        if unqualified and used:
            raise a.error("This condition mixes unqualified attributes (meaning: every event) with "
                          "qualified ones; qualify every attribute.", expr)
        if not used and not unqualified:
            raise a.error("This condition names no event attribute.", expr)
        if not used:
            if scopes:
                raise a.error("A condition on unqualified attributes inside an operator is "
                              "ambiguous; qualify the attribute with its variable.", expr)
            filters.append(StreamFilter(bound_expr, text, pos=expr.pos))
            continue
        chains = [decl_scopes.get(v, ()) for v in used] + [scopes]
        deepest = max(chains, key=len)
        for c in chains:
            if deepest[: len(c)] != c:
                raise a.error("This condition relates variables of two different negated or "
                              "EXISTS sub-patterns; it has no meaning.", expr)
        scope = deepest[-1] if deepest else None
        if next_var is not None and not has_first_last and used == {next_var}:
            kind = "edge"
        elif len(used) == 1 and next_var is None and not has_first_last:
            kind = "local"
        else:
            kind = "general"
        conditions.append(Condition(bound_expr, frozenset(used), next_var, scope, kind, text, expr.pos))
    return conditions, filters, partition_by, equivalences


def _resolve_expr(a: _Analyzer, expr: ast.Expr, variables: dict[str, Variable], scopes):
    """Replace written variable names by variable names; collect what the expression uses."""
    used: set[str] = set()
    state = {"unqualified": False, "next": None, "first_last": False}

    def one_var(written: str, node: ast.Node) -> str:
        names = a.resolve(written, variables, node, scopes)
        if len(names) > 1:
            raise a.error(f"'{written}' is ambiguous here: it names {len(names)} pattern "
                          "positions; give them aliases.", node)
        return names[0]

    def go(e: ast.Expr) -> ast.Expr:
        if isinstance(e, ast.Attr):
            a.check_attr(e.name, e)
            if e.var is None:
                state["unqualified"] = True
                return e
            v = one_var(e.var, e)
            used.add(v)
            return ast.Attr(v, e.name, pos=e.pos)
        if isinstance(e, ast.Ref):
            a.check_attr(e.name, e)
            v = one_var(e.var, e)
            var = variables[v]
            if var.kleene is None:
                raise a.error(f"{e.kind}({e.var}) is only meaningful for a variable inside a "
                              f"Kleene pattern ({e.var}+).", e)
            if e.kind == "NEXT":
                if state["next"] not in (None, v):
                    raise a.error("A condition may use NEXT of only one variable.", e)
                state["next"] = v
            else:
                if var.nested_kleene:
                    raise a.error(f"{e.kind}({e.var}) is ambiguous: {e.var} repeats inside an "
                                  "outer Kleene pattern.", e)
                state["first_last"] = True
            used.add(v)
            return ast.Ref(e.kind, v, e.name, pos=e.pos)
        if isinstance(e, ast.Literal):
            return e
        if isinstance(e, ast.Arith):
            return ast.Arith(e.op, go(e.left), go(e.right), pos=e.pos)
        if isinstance(e, ast.Negate):
            return ast.Negate(go(e.operand), pos=e.pos)
        if isinstance(e, ast.Compare):
            return ast.Compare(e.ops, tuple(go(o) for o in e.operands), pos=e.pos)
        if isinstance(e, ast.BoolOp):
            return ast.BoolOp(e.op, tuple(go(o) for o in e.operands), pos=e.pos)
        if isinstance(e, ast.NotExpr):
            return ast.NotExpr(go(e.operand), pos=e.pos)
        raise a.error("Unexpected expression here.", e)

    bound = go(expr)
    if not isinstance(bound, (ast.Compare, ast.BoolOp, ast.NotExpr)):
        raise a.error("A condition must compare values.", expr)
    _static_kind(a, bound)
    return bound, used, state["unqualified"], state["next"], state["first_last"]


_NUMERIC = {"int": "number", "float": "number", "timestamp": "number", "str": "string", "bool": "bool"}


def _static_kind(a: _Analyzer, e: ast.Expr) -> str | None:
    """The kind of a value expression when it is known before running ("number", "string",
    "bool"); raises for arithmetic or comparisons that cannot work on any data."""
    if isinstance(e, ast.Literal):
        return "bool" if isinstance(e.value, bool) else "string" if isinstance(e.value, str) else "number"
    if isinstance(e, (ast.Attr, ast.Ref)):
        if e.name == "ts":
            return "number"
        if e.name == "type":
            return "string"
        return _NUMERIC.get(a.schema.get(e.name, "")) if a.schema else None
    if isinstance(e, (ast.Arith, ast.Negate)):
        operands = (e.left, e.right) if isinstance(e, ast.Arith) else (e.operand,)
        for o in operands:
            k = _static_kind(a, o)
            if k not in (None, "number"):
                raise a.error(f"Arithmetic needs numbers; this is a {k}.", o)
        return "number"
    if isinstance(e, ast.Compare):
        kinds = [_static_kind(a, o) for o in e.operands]
        known = [(k, o) for k, o in zip(kinds, e.operands) if k is not None]
        for (k1, _), (k2, o2) in zip(known, known[1:]):
            if k1 != k2:
                raise a.error(f"This compares a {k1} with a {k2}.", e)
        return "bool"
    if isinstance(e, ast.BoolOp):
        for o in e.operands:
            _static_kind(a, o)
        return "bool"
    if isinstance(e, ast.NotExpr):
        _static_kind(a, e.operand)
        return "bool"
    return None


# ----------------------------------------------------------------------------------------------
# GROUP BY, RETURN, windows


def _group_by(a: _Analyzer, syntax, variables, partition_by, equivalences):
    keys: list[GroupKey] = []
    partition_by = list(partition_by)
    equivalences = list(equivalences)
    columns: set[str] = set()
    for attr in syntax.group_by:
        a.check_attr(attr.name, attr)
        if attr.var is None:
            if attr.name not in partition_by:
                partition_by.append(attr.name)
            key = GroupKey(attr.name, None, attr.name)
        else:
            names = a.resolve(attr.var, variables, attr)
            if len(names) != 1:
                raise a.error(f"'{attr.var}' names several pattern positions; give it an alias.", attr)
            var = variables[names[0]]
            if var.negated:
                raise a.error(f"GROUP BY {attr.var}.{attr.name}: {attr.var} is negated and binds no event.", attr)
            if var.optional:
                raise a.error(f"GROUP BY {attr.var}.{attr.name}: {attr.var} is inside OR and is not "
                              "bound in every match.", attr)
            if var.multi and (var.name, attr.name) not in equivalences:
                equivalences.append((var.name, attr.name))
            column = attr.name if attr.name not in columns else f"{attr.var}_{attr.name}"
            key = GroupKey(column, var.name, attr.name)
        if key.column in columns or any((k.var, k.attr) == (key.var, key.attr) for k in keys):
            raise a.error(f"GROUP BY lists '{attr.name}' twice.", attr)
        columns.add(key.column)
        keys.append(key)
    return keys, partition_by, equivalences


def _returns(a: _Analyzer, syntax, variables, group_by):
    aggregates: list[Aggregate] = []
    return_vars: list[str] = []
    grouped: set[str] = set()  # group attributes named in RETURN, as written
    columns = {g.column for g in group_by}
    items = list(syntax.returns) + list(syntax.agg)
    for item in items:
        e = item.expr
        if isinstance(e, ast.AggCall):
            aggregates.append(_aggregate(a, item, variables))
            col = aggregates[-1].column
            if col in columns:
                raise a.error(f"Two output columns are named '{col}'; give one an alias with AS.", item)
            columns.add(col)
            continue
        assert isinstance(e, ast.Attr)
        if e.var is None:
            if any(g.column == e.name or (g.var is None and g.attr == e.name) for g in group_by):
                if e.name in grouped:
                    raise a.error(f"RETURN lists '{e.name}' twice.", e)
                grouped.add(e.name)
                continue
            try:
                names = a.resolve(e.name, variables, e)
            except QueryError:
                raise a.error(f"RETURN {e.name}: not a GROUP BY attribute, a variable or an aggregate.", e) from None
            for n in names:
                if variables[n].negated:
                    raise a.error(f"RETURN {e.name}: a negated variable binds no event.", e)
                if n in return_vars:  # (the output would hold its events once: one item is dropped)
                    raise a.error(f"RETURN lists '{e.name}' twice" + ("." if n == e.name else
                                  f" (it names variable '{n}', returned already)."), e)
                return_vars.append(n)
            continue
        if any(g.attr == e.name and (g.var is None or g.var in a.resolve(e.var, variables, e)) for g in group_by):
            if f"{e.var}.{e.name}" in grouped:
                raise a.error(f"RETURN lists '{e.var}.{e.name}' twice.", e)
            grouped.add(f"{e.var}.{e.name}")
            continue
        raise a.error(f"RETURN {e.var}.{e.name}: not a GROUP BY attribute; only group attributes, "
                      "variables and aggregates can be returned.", e)
    if aggregates and return_vars:
        raise a.error("RETURN mixes aggregates with matched events; return one or the other.",
                      next(i for i in items if not isinstance(i.expr, ast.AggCall)))
    if not aggregates and not return_vars:
        return_vars = [v.name for v in variables.values() if not v.negated]
    return aggregates, return_vars


def _aggregate(a: _Analyzer, item: ast.ReturnItem, variables) -> Aggregate:
    call: ast.AggCall = item.expr  # type: ignore[assignment]
    column = item.alias or item.text
    if call.var is None:
        if call.func != "COUNT":
            raise a.error(f"{call.func} needs an attribute: {call.func}(X.attr).", call)
        return Aggregate("COUNT", (), None, column, item.text)
    names = a.resolve(call.var, variables, call)
    for n in names:
        if variables[n].negated:
            raise a.error(f"{call.func}({call.var}...): a negated variable binds no event.", call)
    if call.func == "COUNT":
        if call.attr is not None:
            raise a.error("COUNT takes * or a variable, e.g. COUNT(*) or COUNT(E).", call)
        return Aggregate("COUNT", tuple(names), None, column, item.text)
    if call.attr is None:
        raise a.error(f"{call.func} needs an attribute: {call.func}({call.var}.attr).", call)
    a.check_attr(call.attr, call)
    if call.attr == "type":
        raise a.error(f"{call.func} over the event type is meaningless.", call)
    kind = a.schema.get(call.attr) if a.schema else None
    if call.func in ("SUM", "AVG") and kind in ("str", "bool"):
        raise a.error(f"{call.func} needs a numeric attribute; {call.attr} holds {kind} values.", call)
    return Aggregate(call.func, tuple(names), call.attr, column, item.text)


def _windows(a: _Analyzer, syntax):
    within = within_events = slide = None
    if syntax.within is not None:
        if syntax.within.count:
            n = syntax.within.value
            if n <= 0 or n.denominator != 1:
                raise a.error("A tuple-count window must be a positive whole number.", syntax.within)
            if n > MAX_SPAN:
                raise a.error(f"A tuple-count window is at most 2^61 = {MAX_SPAN} events.", syntax.within)
            within_events = int(n)
        else:
            within = a.duration(syntax.within, "WITHIN")
    if syntax.slide is not None:
        if syntax.within is None:
            raise a.error("SLIDE needs a WITHIN window.", syntax.slide)
        if within_events is not None:
            raise a.error("SLIDE is only defined for time windows, not tuple-count windows.", syntax.slide)
        if syntax.emit_on_change:
            raise a.error("Use either SLIDE (one row per window) or EMIT ON CHANGE, not both.", syntax.slide)
        slide = a.duration(syntax.slide, "SLIDE")
        if -(-within // slide) > MAX_WINDOWS_PER_EVENT:
            raise a.error(f"Each event would lie in {-(-within // slide):,} windows (WITHIN / SLIDE), each a "
                          f"result row; at most {MAX_WINDOWS_PER_EVENT:,} are supported: use a longer "
                          "SLIDE, or EMIT ON CHANGE for a continuously sliding window.", syntax.slide)
    if syntax.emit_on_change and within_events is not None:
        raise a.error("EMIT ON CHANGE is only defined for time windows.", syntax.within)
    return within, within_events, slide
