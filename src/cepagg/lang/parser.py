"""Query text -> syntax tree (:mod:`cepagg.lang.ast`).

The grammar (``grammar.lark``) is LALR(1); lark reports syntax errors with the offending token,
which are translated here into :class:`~cepagg.errors.QueryError` with line, column and a
caret-marked excerpt. Nothing in the query text is ever evaluated: the tree is data.

Any text gives a syntax tree or a positioned ``QueryError``, never another exception: the
parser and the tree builder use no recursion (a long sequence or deep parentheses cost only
memory), the tree is then refused if it nests more than :data:`MAX_DEPTH` operators (the
analyser, the printer and the engines walk it recursively), numbers are read exactly and
refused when out of range, and strings know a fixed set of escapes.
"""

from __future__ import annotations

import functools
import math
import re
from fractions import Fraction
from importlib import resources

from lark import Lark, Token, Transformer_NonRecursive, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken, VisitError

from ..errors import Position, QueryError
from ..units import UNIT_NAMES
from . import ast

#: the query's words for durations: the time units of the one table (the grammar's UNIT terminal
#: spells the same words; a duration must be a whole number of the stream's unit), and EVENTS for
#: a window counted in events
_UNITS = dict(UNIT_NAMES) | {
    "tuple": "events", "tuples": "events", "event": "events", "events": "events"}

# Human names for grammar terminals, used in "Expected one of ..." messages.
_TOKEN_NAMES = {
    "RPAR": "')'", "LPAR": "'('", "COMMA": "','", "SEMICOLON": "';'", "DOT": "'.'", "PLUS": "'+'",
    "STAR": "'*'", "QMARK": "'?'", "LSQB": "'['", "RSQB": "']'", "NAME": "a name", "NUMBER": "a number",
    "STRING": "a string", "CMP_OP": "a comparison", "ADD_OP": "'+' or '-'", "MUL_OP": "'*' or '/'",
    "UNIT": "a time unit", "AGG_FUNC": "an aggregate (COUNT, SUM, AVG, MIN, MAX)",
    "REF_FUNC": "NEXT/FIRST/LAST", "GROUP_BY": "GROUP BY", "STRATEGY_NAME": "a selection strategy",
    "QUOTED_NAME": "a `quoted` name", "$END": "end of query", "BANG": "'!'",
}


#: Deepest nesting of operators accepted (SEQ, AND, OR, NOT, EXISTS, +, a sub-pattern with its own
#: window, NOT/AND/OR in conditions, arithmetic operators). Parentheses that only group add no
#: level. Deeper queries are refused at the first node beyond it; the limit keeps every recursive
#: walk of the tree (analysis, printing, engines) far below Python's recursion limit.
MAX_DEPTH = 100

#: The largest integer literal: attribute values are 64-bit integers.
MAX_INT = 2**63 - 1

#: Escapes known inside string literals; any other backslash sequence is an error.
ESCAPES = {"\\": "\\", '"': '"', "'": "'", "n": "\n", "t": "\t", "r": "\r"}

# A number literal is read exactly only when it has at most this many digits and an exponent of
# at most this size; any such number beyond every range check is refused without building it.
_MAX_NUMBER_DIGITS = 1000
_NUMBER_PARTS = re.compile(r"(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?")


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
    >>> q.within.value == 10, q.within.unit
    (True, 's')
    """
    if not text or not text.strip():
        raise QueryError("Empty query: expected a PATTERN clause.")
    try:
        tree = _lark().parse(text)
    except UnexpectedInput as exc:
        raise _syntax_error(text, exc) from None
    try:
        syntax = _Build(text).transform(tree)
    except VisitError as exc:
        if isinstance(exc.orig_exc, QueryError):
            raise exc.orig_exc from None
        raise
    _check_depth(text, syntax)
    return syntax


def _check_depth(text: str, root: ast.Node) -> None:
    """Refuse a tree nesting more than MAX_DEPTH operators, at the first operator too deep.

    Iterative, so that it can measure any tree the builder made. The clauses of the query are at
    depth 1; events, attributes, numbers and strings are leaves and add no level."""
    stack = [(c, 1) for c in root.children()]
    while stack:
        node, depth = stack.pop()
        children = list(node.children())
        if children and depth > MAX_DEPTH:
            raise QueryError(f"Nested too deeply: a query may nest at most {MAX_DEPTH} operators "
                             "inside one another.", text, node.pos)
        stack.extend((c, depth + 1) for c in children)


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


def exact_number(text: str, tok: Token) -> Fraction:
    """The exact value of a NUMBER token; refused when it has too many digits or too large an
    exponent to be in any range the language accepts (so no huge integer is ever built)."""
    whole, frac, exp = _NUMBER_PARTS.fullmatch(str(tok)).groups()
    frac = frac or ""
    if len(whole) + len(frac) > _MAX_NUMBER_DIGITS or (exp and len(exp.lstrip("+-0")) > 3):
        raise QueryError(f"The number {_short(str(tok))} is out of range.", text, _pos(text, tok))
    return Fraction(int(whole + frac), 10 ** len(frac)) * Fraction(10) ** int(exp or 0)


def _literal_number(text: str, tok: Token) -> int | float:
    """A number in a condition: an integer if written without '.' or exponent (it must fit in
    64 bits, as attribute values do), else a float (finite, and not so small that it is 0)."""
    s = str(tok)
    value = exact_number(text, tok)
    if not any(c in s for c in ".eE"):
        if value > MAX_INT:
            raise QueryError(f"The integer {_short(s)} is out of range: integers are 64-bit "
                             f"(at most {MAX_INT}).", text, _pos(text, tok))
        return int(value)
    f = float(value) if abs(value) < 2**1024 else math.inf
    if math.isinf(f) or (f == 0 and value != 0):
        raise QueryError(f"The number {_short(s)} is out of the range of a 64-bit float.", text,
                         _pos(text, tok))
    return f


def _short(s: str) -> str:
    return s if len(s) <= 40 else f"{s[:20]}...{s[-10:]} ({len(s)} characters)"


def _unescape(text: str, tok: Token) -> str:
    """The value of a STRING token: the characters between the quotes, with each escape of
    :data:`ESCAPES` replaced; any other backslash is a positioned error."""
    raw = str(tok)[1:-1]
    if "\\" not in raw:
        return raw
    out: list[str] = []
    i = 0
    while i < len(raw):
        c = raw[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        nxt = raw[i + 1]  # the lexer guarantees a character after every backslash
        if nxt not in ESCAPES:
            start = tok.start_pos + 1 + i
            raise QueryError(f"Unknown escape '{raw[i:i + 2]}' in a string; the escapes are "
                             + ", ".join("\\" + k for k in ESCAPES) + ".",
                             text, Position.of(text, start, start + 2))
        out.append(ESCAPES[nxt])
        i += 2
    return "".join(out)


@v_args(meta=True)
class _Build(Transformer_NonRecursive):
    """Lark tree -> ast nodes, keeping positions (non-recursive: any depth of tree works)."""

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
        value = exact_number(self.text, c[0])
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
        attr = ast.Attr(_name(c[0]), _name(c[1]),
                        pos=Position(c[0].start_pos, c[1].end_pos, c[0].line, c[0].column))
        return self._item(meta, attr, c[2:])

    def return_name(self, meta, c):
        attr = ast.Attr(None, _name(c[0]), pos=_pos(self.text, c[0]))
        return self._item(meta, attr, c[1:])

    def agg_star(self, meta, c):
        return ast.AggCall(str(c[0]).upper(), None, None, pos=self.P(meta))

    def agg_bare(self, meta, c):
        return ast.AggCall(str(c[0]).upper(), None, None, pos=self.P(meta))

    def agg_var(self, meta, c):
        return ast.AggCall(str(c[0]).upper(), _name(c[1]), None, pos=self.P(meta))

    def agg_attr(self, meta, c):
        return ast.AggCall(str(c[0]).upper(), _name(c[1]), _name(c[2]), pos=self.P(meta))

    # -- patterns --------------------------------------------------------------------------
    def event(self, meta, c):
        type_tok = c[0]
        var = str(c[1]) if len(c) > 1 else None
        name = _name(type_tok)
        quoted = str(type_tok).startswith("`")
        if var is None and not quoted and name[:1].islower():
            # SASE convention: a lower-case bare name is an untyped variable (any event binds).
            return ast.EventPattern(None, name, pos=self.P(meta))
        if var == name:  # `A A` is `A`: the variable a type gives itself when written alone
            var = None
        return ast.EventPattern(name, var, pos=self.P(meta))

    def _split_args(self, meta, args):
        items = tuple(a for a in args if isinstance(a, ast.Pattern))
        quals = tuple(a for a in args if isinstance(a, ast.Expr))
        if not items:
            raise QueryError("An operator needs at least one event or sub-pattern, not only conditions.",
                             self.text, self.P(meta))
        return items, quals

    # The right-recursive args rule yields its items last first: each list is extended at its
    # end (linear in the number of items) and reversed once by the operator.
    def args_last(self, meta, c):
        return [c[0]]

    def args_more(self, meta, c):
        rest = [x for x in c[1:] if not isinstance(x, Token)][-1]
        rest.append(c[0])
        return rest

    def seq_op(self, meta, c):
        items, quals = self._split_args(meta, c[1][::-1])
        return ast.Seq(items, quals, pos=self.P(meta))

    def and_op(self, meta, c):
        items, quals = self._split_args(meta, c[1][::-1])
        return ast.AndPattern(items, quals, pos=self.P(meta))

    def or_op(self, meta, c):
        items, quals = self._split_args(meta, c[1][::-1])
        return ast.OrPattern(items, quals, pos=self.P(meta))

    def paren(self, meta, c):
        items, quals = self._split_args(meta, c[1][::-1])
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
        for op, right in zip(c[1::2], c[2::2]):  # each operation spans its own operands
            pos = Position(node.pos.start, right.pos.end, node.pos.line, node.pos.column)
            node = ast.Arith(str(op), node, right, pos=pos)
        return node

    def negate(self, meta, c):
        return c[1] if str(c[0]) == "+" else ast.Negate(c[1], pos=self.P(meta))

    def number(self, meta, c):
        return ast.Literal(_literal_number(self.text, c[0]), pos=self.P(meta))

    def string(self, meta, c):
        return ast.Literal(_unescape(self.text, c[0]), pos=self.P(meta))

    def qualified_attr(self, meta, c):
        return ast.Attr(_name(c[0]), _name(c[1]), pos=self.P(meta))

    def bare_attr(self, meta, c):
        return ast.Attr(None, _name(c[0]), pos=self.P(meta))

    def ref_dot(self, meta, c):
        return ast.Ref(str(c[0]).upper(), _name(c[1]), _name(c[2]), pos=self.P(meta))

    def ref_inner(self, meta, c):
        return ast.Ref(str(c[0]).upper(), _name(c[1]), _name(c[2]), pos=self.P(meta))

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
