"""The operations of condition programs, shared by the interpreters of GRETA and rcep.

GRETA's edge conditions (:mod:`.greta._program`) and rcep's conditions between variables
(:mod:`.rcep._kernels`, the programs made by :mod:`.rcep.comparisons`) are compiled once to
postfix code and run inside the kernels: no Python per evaluation and no ``eval``. The engines
differ only in where a value is loaded from (a predecessor and a new event in GRETA, a level of
the match being built in rcep): each interpreter pushes the values it loads itself -- opcodes
0 and 1 are left to the engines' loads -- and hands every other opcode to :func:`apply`.

The stack is two arrays of the same length: ``sv`` (float64 values) and ``sk`` (int64: the
validity of a value, or a truth value). Values are float64 with a validity flag (SQL nulls;
arithmetic on a null, and division by zero, is null); a comparison with a null is unknown;
truth values are 0 (false), 1 (true), :data:`UNKNOWN` (2), combined as SQL's three-valued
logic. The meaning is the reference evaluator's (docs/semantics.md §5).

Opcodes (``op``, ``arg``, ``val``):

==========  =====================================================
CONST       push ``val``
ADD..DIV    arithmetic on the two top values
NEG         negate the top value
CMP k       compare (k: :data:`CMP_CODES`, = != < <= > >=) -> truth
AND n, OR n combine the ``n`` top truths (three-valued)
NOT         negate the top truth
==========  =====================================================

A kernel module (:mod:`.kernels`): compiled and cached by numba, or run as its Python twin.
"""

from __future__ import annotations

from . import kernels

_TWIN = kernels.is_twin(globals())
inline = kernels.jit(_TWIN, inline=True, python=False)  # called per operation of every evaluation

#: opcodes 0 and 1 are the engines' loads
CONST, ADD, SUB, MUL, DIV, NEG, CMP, AND, OR, NOT = range(2, 12)
CMP_CODES = {"=": 0, "!=": 1, "<": 2, "<=": 3, ">": 4, ">=": 5}
UNKNOWN = 2


@inline
def apply(op, arg, val, sv, sk, top):
    """Run operation ``op`` (any opcode but a load; ``arg`` and ``val`` its argument and
    constant) on the stack ``sv``/``sk`` of height ``top``; returns the new height."""
    if op == CONST:
        sv[top] = val
        sk[top] = 1
        return top + 1
    if op <= DIV:
        b = sv[top - 1]
        bk = sk[top - 1]
        top -= 1
        a = sv[top - 1]
        ok = sk[top - 1] == 1 and bk == 1
        r = 0.0
        if ok:
            if op == ADD:
                r = a + b
            elif op == SUB:
                r = a - b
            elif op == MUL:
                r = a * b
            elif b == 0.0:
                ok = False  # (division by zero: null)
            else:
                r = a / b
        sv[top - 1] = r
        sk[top - 1] = 1 if ok else 0
    elif op == NEG:
        sv[top - 1] = -sv[top - 1]
    elif op == CMP:
        b = sv[top - 1]
        bk = sk[top - 1]
        top -= 1
        a = sv[top - 1]
        if sk[top - 1] != 1 or bk != 1:
            sk[top - 1] = UNKNOWN
        else:
            if arg == 0:
                t = a == b
            elif arg == 1:
                t = a != b
            elif arg == 2:
                t = a < b
            elif arg == 3:
                t = a <= b
            elif arg == 4:
                t = a > b
            else:
                t = a >= b
            sk[top - 1] = 1 if t else 0
    elif op == AND or op == OR:
        unknown = False
        decided = False
        for j in range(top - arg, top):
            t3 = sk[j]
            if t3 == UNKNOWN:
                unknown = True
            elif (op == AND and t3 == 0) or (op == OR and t3 == 1):
                decided = True
        top -= arg - 1
        if decided:
            sk[top - 1] = 0 if op == AND else 1
        elif unknown:
            sk[top - 1] = UNKNOWN
        else:
            sk[top - 1] = 1 if op == AND else 0
    else:  # NOT
        t3 = sk[top - 1]
        sk[top - 1] = UNKNOWN if t3 == UNKNOWN else 1 - t3
    return top


# Reference: GRETA (Poppe et al., PVLDB 11(1), 2017) Section 6, edge predicates evaluated during
# graph construction; RCEP (Kammoun et al., EDBT 2018) Sec. 2.3, conditions checked while a
# Kleene subset grows.
