"""The normalised text of a bound query (what ``cepagg check`` prints).

The output is itself a valid query with the same meaning: clauses in a fixed order, SEQ for
every sequence, conditions lifted out of operators into WHERE, durations in the largest unit
that divides them.
"""

from __future__ import annotations

import re

from . import ast
from .model import (
    TIME_UNITS_MS,
    AndP,
    Atom,
    BoolOrP,
    ExistsP,
    KleeneP,
    NotP,
    OrP,
    PNode,
    Query,
    SeqP,
    WindowP,
)

_UNIT_WORDS = (("d", "days"), ("h", "hours"), ("min", "minutes"), ("s", "seconds"), ("ms", "ms"))


def duration_text(value: int, time_unit: str) -> str:
    """``600000`` ms -> ``10 minutes``."""
    ms = value * TIME_UNITS_MS[time_unit]
    for unit, word in _UNIT_WORDS:
        if ms % TIME_UNITS_MS[unit] == 0 and TIME_UNITS_MS[unit] >= TIME_UNITS_MS[time_unit]:
            n = ms // TIME_UNITS_MS[unit]
            if n == 1:
                word = {"days": "day", "hours": "hour", "minutes": "minute", "seconds": "second"}.get(word, word)
            return f"{n} {word}"
    return str(value)


def _display(var: str) -> str:
    return var.split("@")[0]


_PLAIN_NAME = re.compile(r"(?!\d)\w+")

# Words the lexer reads as keywords or functions where a type or variable could also stand.
_RESERVED = {"PATTERN", "WHERE", "GROUP", "RETURN", "AGG", "WITHIN", "SLIDE", "EMIT", "ON", "CHANGE",
             "CHANGES", "STRATEGY", "USING", "AS", "SEQ", "AND", "OR", "NOT", "EXISTS", "EXIST",
             "COUNT", "SUM", "AVG", "MIN", "MAX", "NEXT", "FIRST", "LAST"}


def _plain(name: str) -> bool:
    return bool(_PLAIN_NAME.fullmatch(name)) and name.upper() not in _RESERVED


def _attr(name: str) -> str:
    """An attribute name as written in a query: in backticks unless it is a plain name."""
    return name if _PLAIN_NAME.fullmatch(name) else f"`{name}`"


def _ref(var: str) -> str:
    """A variable where it is referred to (conditions, RETURN, aggregates, GROUP BY): its name,
    in backticks when it is a type name that is not a plain name or reads as a keyword."""
    name = _display(var)
    return name if _plain(name) else f"`{name}`"


def pattern_text(node: PNode, scoped: dict[int, list[str]] | None = None,
                 time_unit: str = "ms") -> str:
    """Text of a pattern; ``scoped`` maps a NOT/EXISTS id to conditions written inside it."""
    scoped = scoped or {}

    def rec(n: PNode) -> str:
        return pattern_text(n, scoped, time_unit)

    if isinstance(node, Atom):
        if node.type is None:
            return _display(node.var)
        if _display(node.var) == node.type:
            return type_text(node.type)
        return f"{type_text(node.type)} {_display(node.var)}"
    if isinstance(node, SeqP):
        return "SEQ(" + ", ".join(rec(i) for i in node.items) + ")"
    if isinstance(node, AndP):
        return "AND(" + ", ".join(rec(i) for i in node.items) + ")"
    if isinstance(node, OrP):
        return "OR(" + ", ".join(rec(i) for i in node.alts) + ")"
    if isinstance(node, BoolOrP):
        return " ∨ ".join(rec(i) for i in node.alts)
    if isinstance(node, KleeneP):
        inner = rec(node.body)
        return f"{inner}+" if isinstance(node.body, Atom) and node.body.type is None or (
            isinstance(node.body, Atom) and _display(node.body.var) == node.body.type) else f"({inner})+"
    if isinstance(node, (NotP, ExistsP)):
        word = "NOT" if isinstance(node, NotP) else "EXISTS"
        conds = scoped.get(node.id)
        if conds:
            return f"{word} ({rec(node.body)}, " + ", ".join(conds) + ")"
        return f"{word} {rec(node.body)}"
    if isinstance(node, WindowP):
        return f"({rec(node.body)} WITHIN {duration_text(node.within, time_unit)})"
    raise AssertionError(node)


def type_text(name: str) -> str:
    """A type in a pattern: in backticks unless it is a plain name starting in upper case."""
    return name if _plain(name) and not name[:1].islower() else f"`{name}`"


_PRECEDENCE = {"or": 1, "and": 2}

# The inverse of the parser's escapes, for a double-quoted string.
_STRING_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r"}


def expr_text(e: ast.Expr) -> str:
    if isinstance(e, ast.Literal):
        if isinstance(e.value, str):
            return '"' + "".join(_STRING_ESCAPES.get(c, c) for c in e.value) + '"'
        return repr(e.value) if isinstance(e.value, float) else str(e.value)
    if isinstance(e, ast.Attr):
        return _attr(e.name) if e.var is None else f"{_ref(e.var)}.{_attr(e.name)}"
    if isinstance(e, ast.Ref):
        return f"{e.kind}({_ref(e.var)}).{_attr(e.name)}"
    if isinstance(e, ast.Arith):
        left, right = expr_text(e.left), expr_text(e.right)
        if isinstance(e.left, ast.Arith) and e.op in "*/" and e.left.op in "+-":
            left = f"({left})"
        if isinstance(e.right, ast.Arith) and (e.op in "*/" or e.op == "-" or e.right.op in "+-" and e.op != "+"):
            right = f"({right})"
        return f"{left} {e.op} {right}"
    if isinstance(e, ast.Negate):
        inner = expr_text(e.operand)
        # -(-x): two minus signs in a row would start a comment
        return f"-({inner})" if isinstance(e.operand, (ast.Arith, ast.Negate)) else f"-{inner}"
    if isinstance(e, ast.Compare):
        parts = [expr_text(e.operands[0])]
        for op, operand in zip(e.ops, e.operands[1:]):
            parts += [op, expr_text(operand)]
        return " ".join(parts)
    if isinstance(e, ast.BoolOp):
        sep = f" {e.op.upper()} "
        return sep.join(f"({expr_text(o)})" if isinstance(o, ast.BoolOp) else expr_text(o) for o in e.operands)
    if isinstance(e, ast.NotExpr):
        return f"NOT ({expr_text(e.operand)})"
    if isinstance(e, ast.Equivalence):
        return "[" + ", ".join(expr_text(a) for a in e.attrs) + "]"
    raise AssertionError(e)


def to_text(q: Query) -> str:
    """The normalised query text; parsing it gives a query with the same meaning."""
    scoped: dict[int, list[str]] = {}
    for c in q.conditions:
        if c.scope is not None:
            scoped.setdefault(c.scope, []).append(expr_text(c.expr))
    lines = [f"PATTERN {pattern_text(q.pattern, scoped, q.time_unit)}"]
    conds: list[str] = []
    equiv = [_attr(a) for a in q.partition_by if a not in {g.attr for g in q.group_by if g.var is None}]
    # GROUP BY X.a implies [X.a] only when X can bind several events (as the analyser adds it)
    implied = {(g.var, g.attr) for g in q.group_by if g.var is not None and q.variables[g.var].multi}
    equiv += [f"{_ref(v)}.{_attr(a)}" for v, a in q.equivalences if (v, a) not in implied]
    if equiv:
        conds.append("[" + ", ".join(equiv) + "]")
    conds += [expr_text(f.expr) for f in q.stream_filters]
    conds += [_scoped(c.expr) for c in q.conditions if c.scope is None]
    if conds:
        lines.append("WHERE " + "\n  AND ".join(conds))
    if q.group_by:
        lines.append("GROUP BY " + ", ".join(_attr(g.attr) if g.var is None else f"{_ref(g.var)}.{_attr(g.attr)}"
                                             for g in q.group_by))
    if q.within is not None:
        window = f"WITHIN {duration_text(q.within, q.time_unit)}"
        if q.slide is not None:
            window += f" SLIDE {duration_text(q.slide, q.time_unit)}"
        lines.append(window)
    elif q.within_events is not None:
        lines.append(f"WITHIN {q.within_events} events")
    if q.emit_on_change:
        lines.append("EMIT ON CHANGE")
    if q.strategy != "skip-till-any-match":
        lines.append(f"STRATEGY {q.strategy}")
    if q.aggregates:
        items = []
        for a in q.aggregates:
            if len(a.vars) > 1:  # a type name standing for several variables: as written
                text = a.written
            else:
                arg = _ref(a.vars[0]) if a.vars else "*"
                text = f"{a.func}({arg}.{_attr(a.attr)})" if a.attr else f"{a.func}({arg})"
            if a.column == text:
                items.append(text)
            elif _PLAIN_NAME.fullmatch(a.column):
                items.append(f"{text} AS {a.column}")
            else:  # the default column, the call as written (`count(b)`): written again
                items.append(a.column)
        # group columns are output anyway; listed when they can be written as a name
        lines.append("RETURN " + ", ".join([g.column for g in q.group_by if _plain(g.column)] + items))
    else:
        lines.append("RETURN " + ", ".join(_ref(v) for v in q.return_vars))
    if q.hierarchy:
        lines.append(q.hierarchy.lines())
    return "\n".join(lines)


def _scoped(e: ast.Expr) -> str:
    return expr_text(e) if not isinstance(e, ast.BoolOp) or e.op == "and" else f"({expr_text(e)})"
