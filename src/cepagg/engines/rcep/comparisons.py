"""Conditions between variables as small programs the compiled join runs while a match grows.

The compiled join (:mod:`._kernels`) binds a match's events in time order, one stack level per
event, a Kleene run's events on consecutive levels. A condition -- comparisons of numbers
combined by AND, OR and NOT, each side an arithmetic expression (``+ - * /``, unary minus) of
number constants and numeric attributes of variables (plain, ``FIRST``, ``LAST``, ``NEXT``) --
is split into conjuncts (NOT pushed down to the comparisons, so ``NOT (x OR y)`` gives two),
and each conjunct is checked as soon as every event it reads is bound, so a branch that fails it
is never entered (RCEP, Kammoun et al., EDBT 2018, Sec. 2.3: NEXT, FIRST and LAST checked while
a Kleene subset grows). A disjunction is checked once all its sides are known: before that it
cannot fail. When a conjunct is checked:

* ``EACH`` at position ``q``: on every event of ``q``'s run (a plain reference to a Kleene
  variable with what is known when its run starts: ``a.price < b.price``);
* ``PAIR`` at ``q``: on every event of the run but its first, against the one before
  (``b.price < NEXT(b).price``: the plain ``b`` is the earlier of the pair; every conjunct of a
  condition that uses NEXT is checked per pair, as the condition holds for every pair);
* ``START`` at ``q``: once, when position ``q``'s first event is bound (``q = k``: when the
  trigger is), e.g. ``c.price < FIRST(b).price`` once ``b`` starts (the trigger is bound before
  anything else: it is known from the first level on). A plain Kleene reference read there
  (``c.x > b.x``, after the run ends) is checked on every event of the run (``LOOP``).

A conjunct is postfix code (rows of :data:`CODE_WIDTH`: opcode, argument, position, slot) run on
a stack of values with a validity flag, its operations those of :mod:`cepagg.engines.postfix`
(shared with GRETA's edge programs): truth values are 0, 1 and 2 (unknown), and the conjunct
holds only when true. The meaning is the reference's (docs/semantics.md §5): a condition holds for every
combination of the events it reads; a null (or missing) value makes arithmetic null and a
comparison unknown; division by zero is null. Values are float64 in the join (NaN stands for a
null in the store): the result equals Python's wherever no integer result passes 2^53, so the
join takes integers only up to :attr:`Compiled.limit` in magnitude, a bound computed from the
programs (2^52 for sums of an attribute and a constant; ``a.x * b.x`` takes integers up to
2^26), and the engine checks each batch against it. A condition of another form (strings,
``type``, integer constants beyond 2^52, two Kleene runs compared event by event) is not
compiled: :func:`compile_conditions` says why, and the query takes the Python join.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...lang import ast
from ..postfix import ADD, AND, CMP, CMP_CODES, CONST, DIV, MUL, NEG, NOT, OR, SUB
from .shape import Shape

# columns of the condition table (one row per conjunct): when, at which position, the
# position whose run a LOOP reads (-1: none), and the conjunct's code rows [start, stop)
WHEN, AT, LOOP_POS, CODE_START, CODE_STOP = range(5)
WIDTH = 5
START, EACH, PAIR = 0, 1, 2
# opcodes (code column 0): LOAD, whose argument is the kind of reference (where the event is),
# and the operations of :mod:`cepagg.engines.postfix`
LOAD = 0
CODE_WIDTH = 4
TRIGGER, FIRST, LAST, CUR, PREV, LOOP = range(1, 7)
OPS = CMP_CODES
_ARITH = {"+": ADD, "-": SUB, "*": MUL, "/": DIV}

#: integer constants the join takes (exact in float64, whatever arithmetic follows)
EXACT = 2**52
_INT_RESULT = 2**53  # integers up to this are exact in float64


@dataclass(frozen=True)
class Compiled:
    """The conjuncts: ``table`` (int64, one row per conjunct, :data:`WIDTH` columns), ``code``
    (int64, :data:`CODE_WIDTH` columns), ``consts`` (float64, the constant of each code row),
    ``slots`` (the attributes read, in slot order), ``depth`` (the largest stack a conjunct
    needs) and ``limit`` (the largest magnitude of an integer value the join compares exactly)."""

    table: np.ndarray
    code: np.ndarray
    consts: np.ndarray
    slots: tuple[str, ...]
    depth: int
    limit: int = EXACT


class NotCompiled(Exception):
    """A condition the compiled join does not evaluate (the message says why)."""


def compile_conditions(shape: Shape) -> Compiled:
    """The programs of ``shape.cross``; raises :class:`NotCompiled` for a condition it cannot
    take."""
    k = len(shape.positions)
    pos = {p.var: p for p in shape.positions}
    slots: dict[str, int] = {}
    rows: list[list[int]] = []
    code: list[list[int]] = []
    consts: list[float] = []
    depth = 1
    exprs: list[ast.Expr] = []
    for c in shape.cross:
        for part in _conjuncts(_push_not(c.expr, False, c.text)):
            refs = {}
            for n in part.walk():
                if isinstance(n, (ast.Attr, ast.Ref)):
                    if n.name == "type":
                        raise NotCompiled(f"condition {c.text!r} compares event types (strings)")
                    refs[_ref_of(n)] = None
            kinds, when, at, loop_pos = _place(list(refs), c.next_var, pos, k, c.text)
            start = len(code)
            _emit(part, kinds, pos, slots, code, consts, c.text)
            rows.append([when, at, loop_pos, start, len(code)])
            depth = max(depth, len(code) - start)
            exprs.append(part)
    table = np.array(rows, dtype=np.int64).reshape(len(rows), WIDTH)
    return Compiled(table, np.array(code, dtype=np.int64).reshape(len(code), CODE_WIDTH),
                    np.array(consts, dtype=np.float64), tuple(slots), depth, _limit(exprs))


def _ref_of(n) -> tuple[str, str]:
    return ("PLAIN", n.var) if isinstance(n, ast.Attr) else (n.kind, n.var)


def _push_not(e: ast.Expr, negate: bool, text: str) -> ast.Expr:
    """``e`` (negated when ``negate``) with NOT moved down to the comparisons (De Morgan holds in
    three-valued logic) and chains ``a < b < c`` split into ANDs of one comparison each."""
    if isinstance(e, ast.NotExpr):
        return _push_not(e.operand, not negate, text)
    if isinstance(e, ast.BoolOp):
        op = e.op if not negate else ("or" if e.op == "and" else "and")
        return ast.BoolOp(op, tuple(_push_not(x, negate, text) for x in e.operands))
    if isinstance(e, ast.Compare):
        pairs = [ast.Compare((op,), (a, b)) for op, a, b in zip(e.ops, e.operands, e.operands[1:])]
        if negate:
            pairs = [ast.NotExpr(p) for p in pairs]
        if len(pairs) == 1:
            return pairs[0]
        return ast.BoolOp("or" if negate else "and", tuple(pairs))
    raise NotCompiled(f"condition {text!r} is not a combination of comparisons")


def _conjuncts(e: ast.Expr) -> list[ast.Expr]:
    if isinstance(e, ast.BoolOp) and e.op == "and":
        return [c for x in e.operands for c in _conjuncts(x)]
    return [e]


def _number(e: ast.Expr):
    """The value of a number literal, None for anything else."""
    if isinstance(e, ast.Literal) and isinstance(e.value, (int, float)) and not isinstance(e.value, bool):
        return e.value
    return None


def _emit(e: ast.Expr, kinds: dict, pos: dict, slots: dict, code: list, consts: list, text: str) -> None:
    """Append the postfix code of ``e``."""
    def put(op, arg=0, p=0, slot=0, const=0.0):
        code.append([op, arg, p, slot])
        consts.append(const)

    if isinstance(e, ast.Literal):
        n = _number(e)
        if n is None:
            what = "strings" if isinstance(e.value, str) else "a constant other than a number"
            raise NotCompiled(f"condition {text!r} compares {what}")
        if isinstance(n, int) and abs(n) > EXACT:
            raise NotCompiled(f"condition {text!r} has an integer beyond 2^52")
        put(CONST, const=float(n))
    elif isinstance(e, (ast.Attr, ast.Ref)):
        ref = _ref_of(e)
        put(LOAD, kinds[ref], pos[e.var].index, slots.setdefault(e.name, len(slots)))
    elif isinstance(e, ast.Negate):
        _emit(e.operand, kinds, pos, slots, code, consts, text)
        put(NEG)
    elif isinstance(e, ast.Arith):
        _emit(e.left, kinds, pos, slots, code, consts, text)
        _emit(e.right, kinds, pos, slots, code, consts, text)
        put(_ARITH[e.op])
    elif isinstance(e, ast.Compare):
        (op,) = e.ops
        for x in e.operands:
            _emit(x, kinds, pos, slots, code, consts, text)
        put(CMP, OPS[op])
    elif isinstance(e, ast.NotExpr):
        _emit(e.operand, kinds, pos, slots, code, consts, text)
        put(NOT)
    elif isinstance(e, ast.BoolOp):
        for x in e.operands:
            _emit(x, kinds, pos, slots, code, consts, text)
        put(AND if e.op == "and" else OR, len(e.operands))
    else:
        raise NotCompiled(f"condition {text!r} is not a combination of comparisons")


def _place(refs: list, next_var, pos: dict, k: int, text: str) -> tuple[dict, int, int, int]:
    """Where each reference's event is and when the conjunct is checked: (kinds by reference,
    when, at, the position a LOOP runs over or -1)."""
    kinds: dict = {}
    moments: list[int] = []  # when each reference other than a plain Kleene one is known
    kleene_plain: set[str] = set()
    for ref, var in refs:
        p = pos[var]
        i = p.index
        if ref == "NEXT" or (ref == "PLAIN" and var == next_var):
            kinds[(ref, var)] = CUR if ref == "NEXT" else PREV
        elif (ref == "PLAIN" and not p.kleene) or (ref == "LAST" and i == k - 1):
            # a singleton's event; the trigger is the last position's (last) event
            kinds[(ref, var)] = TRIGGER if i == k - 1 else FIRST
            moments.append(-1 if i == k - 1 else i)
        elif ref == "FIRST":
            kinds[(ref, var)] = FIRST
            moments.append(i)
        elif ref == "LAST":
            kinds[(ref, var)] = LAST
            moments.append(i + 1)
        else:  # a plain reference to a Kleene variable: every event of its run
            kleene_plain.add(var)
    if next_var is not None:
        q = pos[next_var].index
        if kleene_plain or any(m > q for m in moments):
            raise NotCompiled(f"condition {text!r} pairs NEXT with what is known only after the run")
        return kinds, PAIR, q, -1
    if len(kleene_plain) > 1:
        raise NotCompiled(f"condition {text!r} compares two Kleene runs event by event")
    if kleene_plain:
        (var,) = kleene_plain
        q = pos[var].index
        later = max(moments, default=-1)
        if later <= q:  # checked on each event as the run grows
            kinds[("PLAIN", var)] = CUR
            return kinds, EACH, q, -1
        kinds[("PLAIN", var)] = LOOP  # checked once the later side is bound, on the whole run
        return kinds, START, later, q
    return kinds, START, max([0, *moments]), -1


def _limit(exprs: list[ast.Expr]) -> int:
    """The largest power of two ``L`` (at most 2^52) such that, with integer attributes of
    magnitude at most ``L``, no integer the programs compute passes 2^53 (float64 then gives
    Python's exact results: integer results are exact, and a float result is the correctly
    rounded value of exact operands, as in Python)."""
    for e in range(52, -1, -1):
        if all(_fits(x, 2**e) for x in exprs):
            return 2**e
    raise NotCompiled("a condition computes integers beyond 2^53")


def _fits(e: ast.Expr, bound: int) -> bool:
    """Whether every integer ``e`` may compute stays within 2^53 (attributes within ``bound``)."""
    ok = True

    def size(x) -> int | None:
        """The largest magnitude of ``x`` when it may be an integer, None when it is a float."""
        nonlocal ok
        if isinstance(x, ast.Literal):
            return abs(x.value) if isinstance(x.value, int) else None
        if isinstance(x, (ast.Attr, ast.Ref)):
            return bound
        if isinstance(x, ast.Negate):
            return size(x.operand)
        if isinstance(x, ast.Arith):
            a, b = size(x.left), size(x.right)
            if x.op == "/" or a is None or b is None:
                return None
            r = a * b if x.op == "*" else a + b
            ok = ok and r <= _INT_RESULT
            return r
        for y in (x.operands if isinstance(x, (ast.Compare, ast.BoolOp)) else (x.operand,)):
            size(y)
        return None

    size(e)
    return ok
