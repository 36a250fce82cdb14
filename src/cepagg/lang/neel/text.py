"""The text of a pattern syntax tree, parseable again by :func:`cepagg.lang.parse`.

:mod:`cepagg.lang.printer` prints the *bound* model (after analysis); the rewrite steps happen on
the syntax tree, so they are printed here, with the printer's condition text.
"""

from __future__ import annotations

from .. import ast
from ..printer import expr_text, type_text


def pattern_text(p: ast.Pattern) -> str:
    """>>> from cepagg.lang import parse
    >>> pattern_text(parse("PATTERN SEQ(A a, !(B b, b.x > 1) ∨ EXISTS C, D)").pattern)
    'SEQ(A a, NOT (B b, b.x > 1) ∨ EXISTS C, D)'
    """
    if isinstance(p, ast.EventPattern):
        if p.type is None:
            return p.var
        return type_text(p.type) if p.var is None else f"{type_text(p.type)} {p.var}"
    if isinstance(p, ast.Qualified):
        return f"({pattern_text(p.body)}, " + ", ".join(expr_text(q) for q in p.quals) + ")"
    if isinstance(p, ast.OrPattern) and not p.quals and all(isinstance(i, (ast.Not, ast.Exists))
                                                            for i in p.items):
        return " ∨ ".join(pattern_text(i) for i in p.items)
    if isinstance(p, (ast.Seq, ast.AndPattern, ast.OrPattern)):
        word = {ast.Seq: "SEQ", ast.AndPattern: "AND", ast.OrPattern: "OR"}[type(p)]
        parts = [pattern_text(i) for i in p.items] + [expr_text(q) for q in p.quals]
        return f"{word}(" + ", ".join(parts) + ")"
    if isinstance(p, ast.Kleene):
        inner = pattern_text(p.body)
        return f"{inner}+" if isinstance(p.body, ast.EventPattern) else f"({inner})+"
    if isinstance(p, (ast.Not, ast.Exists)):
        word = "NOT" if isinstance(p, ast.Not) else "EXISTS"
        body = pattern_text(p.body)
        if isinstance(p.body, ast.OrPattern) and not isinstance(p.body, ast.Seq) and " ∨ " in body:
            body = f"({body})"
        return f"{word} {body}"
    if isinstance(p, ast.Windowed):
        unit = f" {p.within.unit}" if p.within.unit else ""
        return f"({pattern_text(p.body)} WITHIN {p.within.value:g}{unit})"
    if isinstance(p, ast.Unsupported):
        return f"{pattern_text(p.body)}<{p.what}>"
    raise TypeError(f"not a pattern: {p!r}")
