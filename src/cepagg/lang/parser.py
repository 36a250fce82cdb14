"""Query text -> syntax tree (:mod:`cepagg.lang.ast`).

The grammar (``grammar.lark``) is LALR(1); lark reports syntax errors with the offending token,
which are translated here into :class:`~cepagg.errors.QueryError` with line, column and a
caret-marked excerpt. Nothing in the query text is ever evaluated: the tree is data.
"""

from __future__ import annotations

import functools
from importlib import resources

from lark import Lark, Token, Transformer, Tree, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken, VisitError

from ..errors import Position, QueryError
from . import ast

_UNITS = {
    "ms": "ms", "msec": "ms", "msecs": "ms", "millis": "ms", "millisecond": "ms", "milliseconds": "ms",
    "s": "s", "sec": "s", "secs": "s", "second": "s", "seconds": "s",
    "m": "min", "min": "min", "mins": "min", "minute": "min", "minutes": "min",
    "h": "h", "hr": "h", "hrs": "h", "hour": "h", "hours": "h",
    "d": "d", "day": "d", "days": "d",
    "tuple": "events", "tuples": "events", "event": "events", "events": "events",
}

# Human names for grammar terminals, used in "Expected one of ..." messages.
_TOKEN_NAMES = {
    "RPAR": "')'", "LPAR": "'('", "COMMA": "','", "SEMICOLON": "';'", "DOT": "'.'", "PLUS": "'+'",
    "STAR": "'*'", "QMARK": "'?'", "LSQB": "'['", "RSQB": "']'", "NAME": "a name", "NUMBER": "a number",
    "STRING": "a string", "CMP_OP": "a comparison", "ADD_OP": "'+' or '-'", "MUL_OP": "'*' or '/'",
    "UNIT": "a time unit", "AGG_FUNC": "an aggregate (COUNT, SUM, AVG, MIN, MAX)",
    "REF_FUNC": "NEXT/FIRST/LAST", "GROUP_BY": "GROUP BY", "STRATEGY_NAME": "a selection strategy",
    "QUOTED_NAME": "a `quoted` type name", "$END": "end of query", "BANG": "'!'",
}


@functools.cache
def _lark() -> Lark:
    grammar = resources.files(__package__).joinpath("grammar.lark").read_text(encoding="utf-8")
    return Lark(grammar, parser="lalr", lexer="contextual", propagate_positions=True,
                maybe_placeholders=False)


def parse(text: str) -> ast.QuerySyntax:
    """Parse query text into a :class:`~cepagg.lang.ast.QuerySyntax`.

    Raises:
        QueryError: the text is not a query, with the position of the first problem.

    >>> q = parse("PATTERN SEQ(A a, B b) WITHIN 10 s")
    >>> q.within.value, q.within.unit
    (10.0, 's')
    """
    if not text or not text.strip():
        raise QueryError("Empty query: expected a PATTERN clause.")
    try:
        tree = _lark().parse(text)
    except UnexpectedInput as exc:
        raise _syntax_error(text, exc) from None
    try:
        return _Build(text).transform(tree)
    except VisitError as exc:
        if isinstance(exc.orig_exc, QueryError):
            raise exc.orig_exc from None
        raise


def _syntax_error(text: str, exc: UnexpectedInput) -> QueryError:
    if isinstance(exc, UnexpectedEOF):
        pos = Position.of(text, len(text.rstrip()))
        return QueryError(f"Unexpected end of query; expected {_expected(exc.expected)}.", text, pos)
    if isinstance(exc, UnexpectedCharacters):
        pos = Position.of(text, exc.pos_in_stream, exc.pos_in_stream + 1)
        return QueryError(f"Unexpected character {text[exc.pos_in_stream]!r}.", text, pos)
    assert isinstance(exc, UnexpectedToken)
    tok = exc.token
    if tok.type == "$END":
        pos = Position.of(text, len(text.rstrip()))
        return QueryError(f"Unexpected end of query; expected {_expected(exc.expected)}.", text, pos)
    pos = Position.of(text, tok.start_pos, tok.end_pos)
    return QueryError(f"Unexpected {str(tok)!r}; expected {_expected(exc.expected)}.", text, pos)


def _expected(names) -> str:
    shown = sorted({_TOKEN_NAMES.get(n, n if not n.startswith("__") else "") for n in names} - {""})
    if len(shown) > 8:
        shown = shown[:8] + ["..."]
    return "one of " + ", ".join(shown) if len(shown) > 1 else (shown[0] if shown else "something else")


def _pos(text: str, meta_or_token) -> Position:
    if isinstance(meta_or_token, Token):
        return Position(meta_or_token.start_pos, meta_or_token.end_pos, meta_or_token.line,
                        meta_or_token.column)
    m = meta_or_token
    if getattr(m, "empty", True):
        return ast.NOWHERE
    return Position(m.start_pos, m.end_pos, m.line, m.column)


def _name(tok: Token) -> str:
    s = str(tok)
    return s[1:-1] if s.startswith("`") else s


def _number(s: str) -> int | float:
    return float(s) if any(c in s for c in ".eE") else int(s)


@v_args(meta=True)
class _Build(Transformer):
    """Lark tree -> ast nodes, keeping positions."""

    def __init__(self, text: str):
        super().__init__()
        self.text = text

    def P(self, meta) -> Position:
        return _pos(self.text, meta)

    # -- query -----------------------------------------------------------------------------
    def start(self, meta, clauses):
        seen: dict[str, Position] = {}
        values: dict[str, object] = {}
        for name, value, pos in clauses:
            if name in seen:
                raise QueryError(f"Duplicate {name} clause.", self.text, pos)
            seen[name] = pos
            values[name] = value
        if "PATTERN" not in values:
            raise QueryError("A query needs a PATTERN clause.", self.text, Position.of(self.text, 0))
        return ast.QuerySyntax(
            pattern=values["PATTERN"],
            where=values.get("WHERE"),
            group_by=values.get("GROUP BY", ()),
            returns=values.get("RETURN", ()),
            agg=values.get("AGG", ()),
            within=values.get("WITHIN"),
            slide=values.get("SLIDE"),
            emit_on_change=bool(values.get("EMIT ON CHANGE", False)),
            strategy=values.get("STRATEGY"),
            clause_pos=tuple(seen.items()),
            pos=self.P(meta),
        )

    def pattern_clause(self, meta, c):
        return ("PATTERN", c[1], self.P(meta))

    def where_clause(self, meta, c):
        return ("WHERE", c[1], self.P(meta))

    def group_clause(self, meta, c):
        return ("GROUP BY", tuple(c[1:]), self.P(meta))

    def return_clause(self, meta, c):
        return ("RETURN", tuple(c[1:]), self.P(meta))

    def agg_clause(self, meta, c):
        return ("AGG", tuple(c[1:]), self.P(meta))

    def within_clause(self, meta, c):
        return ("WITHIN", c[1], self.P(meta))

    def slide_clause(self, meta, c):
        return ("SLIDE", c[1], self.P(meta))

    def emit_clause(self, meta, c):
        return ("EMIT ON CHANGE", True, self.P(meta))

    def strategy_clause(self, meta, c):
        return ("STRATEGY", (str(c[1]), _pos(self.text, c[1])), self.P(meta))

    # -- clause contents -------------------------------------------------------------------
    def duration(self, meta, c):
        value = float(c[0])
        unit = _UNITS[str(c[1]).lower()] if len(c) > 1 else None
        if unit == "events":
            return ast.Duration(value, None, True, pos=self.P(meta))
        return ast.Duration(value, unit, pos=self.P(meta))

    def alias(self, meta, c):
        return str(c[1])

    def _item(self, meta, expr, rest):
        alias = rest[0] if rest else None
        written = " ".join(self.text[expr.pos.start:expr.pos.end].split())
        return ast.ReturnItem(expr, alias, written, pos=self.P(meta))

    def return_agg(self, meta, c):
        return self._item(meta, c[0], c[1:])

    def agg_item(self, meta, c):
        item = self._item(meta, c[0], c[1:])
        if isinstance(c[0], ast.AggCall) and c[0].var is None and "(" not in item.text:
            # A-Seq's `AGG COUNT` is COUNT(*)
            item = ast.ReturnItem(item.expr, item.alias, f"{c[0].func}(*)", pos=item.pos)
        return item

    def return_qualified(self, meta, c):
        attr = ast.Attr(str(c[0]), str(c[1]),
                        pos=Position(c[0].start_pos, c[1].end_pos, c[0].line, c[0].column))
        return self._item(meta, attr, c[2:])

    def return_name(self, meta, c):
        attr = ast.Attr(None, str(c[0]), pos=_pos(self.text, c[0]))
        return self._item(meta, attr, c[1:])

    def agg_star(self, meta, c):
        return ast.AggCall(str(c[0]).upper(), None, None, pos=self.P(meta))

    def agg_bare(self, meta, c):
        return ast.AggCall(str(c[0]).upper(), None, None, pos=self.P(meta))

    def agg_var(self, meta, c):
        return ast.AggCall(str(c[0]).upper(), str(c[1]), None, pos=self.P(meta))

    def agg_attr(self, meta, c):
        return ast.AggCall(str(c[0]).upper(), str(c[1]), str(c[2]), pos=self.P(meta))

    # -- patterns --------------------------------------------------------------------------
    def event(self, meta, c):
        type_tok = c[0]
        var = str(c[1]) if len(c) > 1 else None
        name = _name(type_tok)
        quoted = str(type_tok).startswith("`")
        if var is None and not quoted and name[:1].islower():
            # SASE convention: a lower-case bare name is an untyped variable (any event binds).
            return ast.EventPattern(None, name, pos=self.P(meta))
        return ast.EventPattern(name, var, pos=self.P(meta))

    def _split_args(self, meta, args):
        items = tuple(a for a in args if isinstance(a, ast.Pattern))
        quals = tuple(a for a in args if isinstance(a, ast.Expr))
        if not items:
            raise QueryError("An operator needs at least one event or sub-pattern, not only conditions.",
                             self.text, self.P(meta))
        return items, quals

    def args_last(self, meta, c):
        return [c[0]]

    def args_more(self, meta, c):
        return [c[0]] + [x for x in c[1:] if not isinstance(x, Token)][-1]

    def seq_op(self, meta, c):
        items, quals = self._split_args(meta, c[1])
        return ast.Seq(items, quals, pos=self.P(meta))

    def and_op(self, meta, c):
        items, quals = self._split_args(meta, c[1])
        return ast.AndPattern(items, quals, pos=self.P(meta))

    def or_op(self, meta, c):
        items, quals = self._split_args(meta, c[1])
        return ast.OrPattern(items, quals, pos=self.P(meta))

    def paren(self, meta, c):
        items, quals = self._split_args(meta, c[1])
        within = c[2] if len(c) > 2 else None
        if len(items) == 1:
            node = ast.Qualified(items[0], quals, pos=self.P(meta)) if quals else items[0]
        else:  # A-Seq's bare tuple (A, B, C) is a sequence
            node = ast.Seq(items, quals, pos=self.P(meta))
        if within is not None:
            node = ast.Windowed(node, within, pos=self.P(meta))
        return node

    def inner_within(self, meta, c):
        return c[1]

    def kleene(self, meta, c):
        return ast.Kleene(c[0], pos=self.P(meta))

    def star(self, meta, c):
        return ast.Unsupported(c[0], "Kleene star '*'", pos=self.P(meta))

    def optional(self, meta, c):
        return ast.Unsupported(c[0], "optional '?'", pos=self.P(meta))

    def not_pattern(self, meta, c):
        return ast.Not(c[-1], pos=self.P(meta))

    def exists_pattern(self, meta, c):
        return ast.Exists(c[-1], pos=self.P(meta))

    def _infix(self, meta, c, cls):
        items = tuple(x for x in c if isinstance(x, ast.Pattern))
        return items[0] if len(items) == 1 else cls(items, pos=self.P(meta))

    def infix_or(self, meta, c):
        return self._infix(meta, c, ast.OrPattern)

    def infix_and(self, meta, c):
        return self._infix(meta, c, ast.AndPattern)

    def semicolon_seq(self, meta, c):
        return self._infix(meta, c, ast.Seq)

    # -- expressions -----------------------------------------------------------------------
    def q_compare(self, meta, c):
        return self._compare(meta, c)

    def w_compare(self, meta, c):
        return self._compare(meta, c)

    def _compare(self, meta, c):
        operands = tuple(c[0::2])
        ops = tuple(_canonical_cmp(str(t)) for t in c[1::2])
        return ast.Compare(ops, operands, pos=self.P(meta))

    def arith_chain(self, meta, c):
        node = c[0]
        for op, right in zip(c[1::2], c[2::2]):
            node = ast.Arith(str(op), node, right, pos=self.P(meta))
        return node

    def negate(self, meta, c):
        return c[1] if str(c[0]) == "+" else ast.Negate(c[1], pos=self.P(meta))

    def number(self, meta, c):
        return ast.Literal(_number(str(c[0])), pos=self.P(meta))

    def string(self, meta, c):
        raw = str(c[0])[1:-1]
        return ast.Literal(raw.encode("utf-8").decode("unicode_escape") if "\\" in raw else raw,
                           pos=self.P(meta))

    def qualified_attr(self, meta, c):
        return ast.Attr(str(c[0]), str(c[1]), pos=self.P(meta))

    def bare_attr(self, meta, c):
        return ast.Attr(None, str(c[0]), pos=self.P(meta))

    def ref_dot(self, meta, c):
        return ast.Ref(str(c[0]).upper(), str(c[1]), str(c[2]), pos=self.P(meta))

    def ref_inner(self, meta, c):
        return ast.Ref(str(c[0]).upper(), str(c[1]), str(c[2]), pos=self.P(meta))

    def parens(self, meta, c):
        return c[1]

    def agg_subquery(self, meta, c):
        return ast.AggSubquery(c[2], c[3], pos=self.P(meta))

    def cond_or(self, meta, c):
        ops = tuple(x for x in c if isinstance(x, ast.Expr))
        return ops[0] if len(ops) == 1 else ast.BoolOp("or", ops, pos=self.P(meta))

    def cond_and(self, meta, c):
        ops = tuple(x for x in c if isinstance(x, ast.Expr))
        return ops[0] if len(ops) == 1 else ast.BoolOp("and", ops, pos=self.P(meta))

    def cond_not(self, meta, c):
        return ast.NotExpr(c[1], pos=self.P(meta))

    def equivalence(self, meta, c):
        return ast.Equivalence(tuple(c), pos=self.P(meta))

    def __default__(self, data, children, meta):  # pragma: no cover - every rule is handled
        raise AssertionError(f"unhandled grammar rule {data}")


def _canonical_cmp(op: str) -> str:
    return {"==": "=", "<>": "!=", "≠": "!=", "≤": "<=", "≥": ">="}.get(op, op)
