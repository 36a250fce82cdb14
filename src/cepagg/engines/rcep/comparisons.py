"""Conditions between variables as a table the compiled join evaluates while a match grows.

The compiled join (:mod:`._kernels`) binds a match's events in time order, one stack level per
event, a Kleene run's events on consecutive levels. A comparison between two sides (a number
constant, or a numeric attribute of one variable -- plain, ``FIRST``, ``LAST`` or ``NEXT`` --
with at most one ``+``/``-`` of a constant) is checked as soon as the events it reads are bound,
so a branch that fails it is never entered (RCEP, Kammoun et al., EDBT 2018, Sec. 2.3: NEXT,
FIRST and LAST checked while a Kleene subset grows):

* ``EACH`` at position ``q``: on every event of ``q``'s run (a plain reference to a Kleene
  variable against what is known when its run starts: ``a.price < b.price``);
* ``PAIR`` at ``q``: on every event of the run but its first, against the one before
  (``b.price < NEXT(b).price``: the plain ``b`` is the earlier of the pair);
* ``START`` at ``q``: once, when position ``q``'s first event is bound (``q = k``: when the
  trigger is), e.g. ``c.price < FIRST(b).price`` once ``b`` starts (the trigger is bound before
  anything else: it is known from the first level on). A plain Kleene reference read there
  (``c.x > b.x``, after the run ends) is checked on every event of the run (``LOOP``).

The meaning is the reference's (docs/semantics.md §5): a condition holds for every combination
of the events it reads; a null (or missing) value makes a comparison unknown, and the
condition does not hold. Values are float64 in the join: numbers of an integer column are
exact as long as they stay within 2^52 in magnitude (the engine checks each batch), and ``+``
and ``-`` of a constant give Python's result. A condition of another form (OR, NOT,
arithmetic between two attributes, ``*``, ``/``, a string constant, two Kleene runs compared
event by event) is not compiled: :func:`compile_conditions` says why, and the query takes the
Python join.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...lang import ast
from .shape import Shape

# columns of the condition table (one row per comparison)
WHEN, AT, OP = 0, 1, 2  # then per side s: kind, position, slot, arithmetic at 3 + 4 * s
WIDTH = 11
START, EACH, PAIR = 0, 1, 2
CONST, TRIGGER, FIRST, LAST, CUR, PREV, LOOP = range(7)  # side kinds (where the event is)
OPS = {"=": 0, "!=": 1, "<": 2, "<=": 3, ">": 4, ">=": 5}
NO_ARITH, ADD, SUB, RSUB = 0, 1, 2, 3  # v, v + c, v - c, c - v

#: integer constants and values the join takes exactly (their sums stay within float64's 2^53)
EXACT = 2**52


@dataclass(frozen=True)
class Compiled:
    """The condition table: ``table`` (int64, one row per comparison, :data:`WIDTH` columns),
    ``consts`` (float64, a constant per side) and ``slots`` (the attributes read, in slot
    order)."""

    table: np.ndarray
    consts: np.ndarray
    slots: tuple[str, ...]


class NotCompiled(Exception):
    """A condition the compiled join does not evaluate (the message says why)."""


@dataclass(frozen=True)
class _Side:
    ref: str | None  # None (a constant), "PLAIN", "FIRST", "LAST", "NEXT"
    var: str | None
    attr: str | None
    arith: int
    const: float


def compile_conditions(shape: Shape) -> Compiled:
    """The table of ``shape.cross``; raises :class:`NotCompiled` for a condition it cannot
    take."""
    k = len(shape.positions)
    pos = {p.var: p for p in shape.positions}
    slots: dict[str, int] = {}
    rows, consts = [], []
    for c in shape.cross:
        e = c.expr
        if not isinstance(e, ast.Compare):
            raise NotCompiled(f"condition {c.text!r} is not a comparison")
        for op, left, right in zip(e.ops, e.operands, e.operands[1:]):
            sides = (_side(left, c.text), _side(right, c.text))
            row, cs = _place(sides, c.next_var, pos, k, c.text)
            row[OP] = OPS[op]
            for s, side in enumerate(sides):
                if side.attr is not None:
                    row[3 + 4 * s + 2] = slots.setdefault(side.attr, len(slots))
            rows.append(row)
            consts.append(cs)
    table = np.array(rows, dtype=np.int64).reshape(len(rows), WIDTH)
    return Compiled(table, np.array(consts, dtype=np.float64).reshape(len(rows), 2), tuple(slots))


def _number(e: ast.Expr) -> float | None:
    """The value of a number constant (``3``, ``-2.5``), None for anything else."""
    if isinstance(e, ast.Negate):
        v = _number(e.operand)
        return None if v is None else -v
    if isinstance(e, ast.Literal) and isinstance(e.value, (int, float)) and not isinstance(e.value, bool):
        return e.value
    return None


def _side(e: ast.Expr, text: str) -> _Side:
    n = _number(e)
    if n is not None:
        return _Side(None, None, None, NO_ARITH, _constant(n, text))
    if isinstance(e, (ast.Attr, ast.Ref)) and e.name == "type":
        raise NotCompiled(f"condition {text!r} compares event types (strings)")
    if isinstance(e, ast.Attr) and e.var is not None:
        return _Side("PLAIN", e.var, e.name, NO_ARITH, 0.0)
    if isinstance(e, ast.Ref):
        return _Side(e.kind, e.var, e.name, NO_ARITH, 0.0)
    if isinstance(e, ast.Arith) and e.op in "+-":
        for inner, other, flip in ((e.left, e.right, False), (e.right, e.left, True)):
            n = _number(other)
            if n is not None and not isinstance(inner, ast.Arith):
                s = _side(inner, text)
                if s.ref is not None:
                    arith = ADD if e.op == "+" else (RSUB if flip else SUB)
                    return _Side(s.ref, s.var, s.attr, arith, _constant(n, text))
    raise NotCompiled(f"condition {text!r} computes more than an attribute plus or minus a number")


def _constant(n, text: str) -> float:
    if isinstance(n, int) and abs(n) > EXACT:
        raise NotCompiled(f"condition {text!r} has an integer beyond 2^52")
    return float(n)


def _place(sides, next_var, pos: dict, k: int, text: str) -> tuple[list[int], list[float]]:
    """When the comparison is checked and where each side's event is."""
    kinds, at_pos, moments = [], [], []
    kleene_plain = []
    for s, side in enumerate(sides):
        if side.ref is None:
            kinds.append(CONST)
            at_pos.append(0)
            moments.append(-1)
            continue
        p = pos[side.var]
        i = p.index
        if side.ref == "NEXT" or (side.ref == "PLAIN" and side.var == next_var):
            kinds.append(CUR if side.ref == "NEXT" else PREV)
            moments.append(None)
        elif (side.ref == "PLAIN" and not p.kleene) or (side.ref == "LAST" and i == k - 1):
            # a singleton's event; the trigger is the last position's (last) event
            kinds.append(TRIGGER if i == k - 1 else FIRST)
            moments.append(-1 if i == k - 1 else i)
        elif side.ref == "FIRST":
            kinds.append(FIRST)
            moments.append(i)
        elif side.ref == "LAST":
            kinds.append(LAST)
            moments.append(i + 1)
        else:  # a plain reference to a Kleene variable: every event of its run
            kinds.append(LOOP)
            moments.append(None)
            kleene_plain.append(s)
        at_pos.append(i)
    if next_var is not None:
        q = pos[next_var].index
        others = [m for m in moments if m is not None]
        if kleene_plain or any(m > q for m in others):
            raise NotCompiled(f"condition {text!r} pairs NEXT with what is known only after the run")
        when = PAIR
    elif len(kleene_plain) == 2:
        raise NotCompiled(f"condition {text!r} compares two Kleene runs event by event")
    elif kleene_plain:
        (s,) = kleene_plain
        q = at_pos[s]
        other = moments[1 - s]
        if other <= q:
            kinds[s] = CUR  # checked on each event as the run grows
            when = EACH
        else:
            when, q = START, other  # checked once the later side is bound, on the whole run
    else:
        when, q = START, max(0, *moments)
    row = [when, q, 0] + [0] * 8
    for s, side in enumerate(sides):
        row[3 + 4 * s] = kinds[s]
        row[3 + 4 * s + 1] = at_pos[s]
        row[3 + 4 * s + 3] = side.arith
    return row, [sides[0].const, sides[1].const]
