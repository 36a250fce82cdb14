"""Edge conditions that no index can answer, compiled to a tiny stack program.

The scan path of GRETA (every compatible predecessor examined, as in the paper) evaluates an
edge condition such as ``S.price - NEXT(S).price > 3 OR S.volume < NEXT(S).volume`` for a
predecessor ``p`` and a new event ``e``. The condition is compiled once (:mod:`.plan`) to
postfix code over attribute *slots* and run here inside the kernel: no Python per pair and no
``eval``. Values are float64 with a validity flag (SQL nulls; division by zero is null);
truth values are 0 (false), 1 (true), 2 (unknown). Strings are compared through codes that
preserve equality (the planner sends ordering comparisons of strings to the reference
evaluator's rules only through an index, never here).

Opcodes (``op``, ``arg``, ``val``):

==========  =====================================================
LOAD_P c    push slot ``c`` of the predecessor
LOAD_E c    push slot ``c`` of the new event (``NEXT(X)``)
CONST       push ``val``
ADD..DIV    arithmetic on the two top values
NEG         negate the top value
CMP k       compare (k: = != < <= > >=) -> truth
AND n, OR n combine the ``n`` top truths (three-valued)
NOT         negate the top truth
==========  =====================================================
"""

from __future__ import annotations

from .. import kernels

_TWIN = kernels.is_twin(globals())
inline = kernels.jit(_TWIN, inline=True)  # called per candidate predecessor

LOAD_P, LOAD_E, CONST, ADD, SUB, MUL, DIV, NEG, CMP, AND, OR, NOT = range(12)
CMP_CODES = {"=": 0, "!=": 1, "<": 2, "<=": 3, ">": 4, ">=": 5}


@inline
def run(code, vals, start, stop, pcol, pval, prow, ecol, evalid, erow, sv, sk):
    """Truth (0/1/2) of the program ``code[start:stop]`` (rows: opcode, argument) for
    predecessor row ``prow`` of ``pcol``/``pval`` and event row ``erow`` of ``ecol``/``evalid``.
    ``sv``/``sk`` are scratch stacks (values, validity-or-truth)."""
    top = 0
    for pc in range(start, stop):
        op = code[pc, 0]
        if op == LOAD_P:
            c = code[pc, 1]
            sv[top] = pcol[prow, c]
            sk[top] = 1 if pval[prow, c] else 0
            top += 1
        elif op == LOAD_E:
            c = code[pc, 1]
            sv[top] = ecol[erow, c]
            sk[top] = 1 if evalid[erow, c] else 0
            top += 1
        elif op == CONST:
            sv[top] = vals[pc]
            sk[top] = 1
            top += 1
        elif op <= DIV:
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
                    ok = False
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
                sk[top - 1] = 2
            else:
                k = code[pc, 1]
                if k == 0:
                    t = a == b
                elif k == 1:
                    t = a != b
                elif k == 2:
                    t = a < b
                elif k == 3:
                    t = a <= b
                elif k == 4:
                    t = a > b
                else:
                    t = a >= b
                sk[top - 1] = 1 if t else 0
        elif op == AND or op == OR:
            n = code[pc, 1]
            unknown = False
            decided = False
            for j in range(top - n, top):
                t = sk[j]
                if t == 2:
                    unknown = True
                elif (op == AND and t == 0) or (op == OR and t == 1):
                    decided = True
            top -= n - 1
            if decided:
                sk[top - 1] = 0 if op == AND else 1
            elif unknown:
                sk[top - 1] = 2
            else:
                sk[top - 1] = 1 if op == AND else 0
        else:  # NOT
            t = sk[top - 1]
            sk[top - 1] = 2 if t == 2 else 1 - t
    return sk[0]


# Reference: docs/semantics.md §5 (conditions, SQL nulls); GRETA (PVLDB 2017)
# Section 6 "edge predicates ... evaluated during graph construction".
