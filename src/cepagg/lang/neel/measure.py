"""The measure that proves the rewrite to normal form terminates.

``measure(p) = (W(p), number of EXISTS nodes)``, compared lexicographically, with

* ``W(event) = 2``, and 2 for a Kleene, a sub-window or a qualified sub-pattern (the rules never
  rewrite inside them),
* ``W(SEQ(x1..xn)) = W(AND(x1..xn)) = 2 · Π W(xi)``,
* ``W(OR(x1..xn)) = W(x1 ∨ ... ∨ xn) = Σ W(xi) + 2``,
* ``W(NOT x) = 3 ** W(x)``, ``W(EXISTS x) = W(x)``.

Every interpretation is strictly increasing in each argument (all values are at least 2), so a
rule that lowers the measure of the node it rewrites lowers the measure of the whole pattern.
Per rule: flattening removes a factor 2 (FR1-FR5, UNWRAP; FR7's split replaces ``2·ΠW(xi)`` by
``ΠW(xi)``); distribution replaces ``2·A·(Σx + 2)·B`` by ``Σ(2·A·x·B) + 2`` (DR1-DR6, as
``A·B ≥ 1``); NPDR3/4 replace ``3^(2·Π)`` by at most ``Σ 3^(xi) + 2``; NPDR5 replaces
``3^(Σx + 2)`` by ``Π 3^(x)``; NPDR1 replaces ``3^(4P)`` by ``3^2 + 2·3^(2P)·2·3^2 + 2`` where
``P ≥ 2`` is the product of the other items' weights (``6561 > 2927`` at ``P = 2``);
FR6/FR7/NPDR6/NPDR7 keep ``W`` and remove one EXISTS node. ``normalize`` asserts the decrease
at every step. ``W`` of a pattern with negations inside negations is a tower of powers: a
pattern whose ``W`` has an exponent above :data:`MAX_EXPONENT` is refused before rewriting (its
normal form would be too large to build anyway).

>>> from .rules.base import pattern
>>> measure(pattern("SEQ(A, NOT SEQ(B, C), D)"))
(52488, 0)
"""

from __future__ import annotations

from .. import ast

MAX_EXPONENT = 100_000


class TooLarge(Exception):
    """The measure (and so the normal form) of a pattern is too large to compute."""


def weight(p: ast.Pattern) -> int:
    if isinstance(p, (ast.Seq, ast.AndPattern)):
        out = 2
        for x in p.items:
            out *= weight(x)
        return out
    if isinstance(p, ast.OrPattern):
        return sum(weight(x) for x in p.items) + 2
    if isinstance(p, ast.Not):
        w = weight(p.body)
        if w > MAX_EXPONENT:
            raise TooLarge(f"negations nested too deeply to rewrite (measure above 3^{MAX_EXPONENT})")
        return 3 ** w
    if isinstance(p, ast.Exists):
        return weight(p.body)
    return 2


def measure(p: ast.Pattern) -> tuple[int, int]:
    return weight(p), sum(1 for n in p.walk() if isinstance(n, ast.Exists))
