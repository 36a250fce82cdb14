"""Edge conditions that no index can answer, compiled to a tiny stack program.

The scan path of GRETA (every compatible predecessor examined, as in the paper) evaluates an
edge condition such as ``S.price - NEXT(S).price > 3 OR S.volume < NEXT(S).volume`` for a
predecessor ``p`` and a new event ``e``. The condition is compiled once (:mod:`.plan`) to
postfix code over attribute *slots* and run here inside the kernel: no Python per pair and no
``eval``. Strings are compared through codes that preserve equality (the planner sends
ordering comparisons of strings to the reference evaluator's rules only through an index,
never here).

This interpreter loads the values; every other operation, and the meaning of values and truth
values (SQL nulls, three-valued logic), is :mod:`cepagg.engines.postfix`'s, shared with rcep.
Opcodes (``op``, ``arg``, ``val``):

==========  =====================================================
LOAD_P c    push slot ``c`` of the predecessor
LOAD_E c    push slot ``c`` of the new event (``NEXT(X)``)
others      :mod:`cepagg.engines.postfix` (CONST, arithmetic, CMP, AND, OR, NOT)
==========  =====================================================
"""

from __future__ import annotations

from .. import kernels

_TWIN = kernels.is_twin(globals())
inline = kernels.jit(_TWIN, inline=True, python=False)  # called per candidate predecessor
apply = kernels.flavour("cepagg.engines.postfix", _TWIN).apply

LOAD_P, LOAD_E = 0, 1


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
        else:
            top = apply(op, code[pc, 1], vals[pc], sv, sk, top)
    return sk[0]


# Reference: docs/semantics.md §5 (conditions, SQL nulls); GRETA (PVLDB 2017)
# Section 6 "edge predicates ... evaluated during graph construction".
