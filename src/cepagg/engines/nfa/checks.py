"""Where an automaton run checks each condition and negation.

A run binds the positions of the SEQ left to right; the position it reached last is *open*
while it is a Kleene variable (later events may still join it) and every earlier one is
*closed*. A condition holds for every combination of the events it reads (docs/semantics.md
§5), so one that holds on a run still holds after the run grows only if it cannot change when
an open Kleene run grows -- true of plain and NEXT references (they only add combinations to
check) and of FIRST, false of LAST. Each condition is therefore checked on the transitions that
can make it false:

* extending an open Kleene position ``j`` by one event: the conditions reading ``j`` (not its
  LAST) whose other variables are earlier;
* binding position ``j`` (closing ``j - 1``): the conditions reading ``j`` (not its LAST, when
  ``j`` is Kleene) whose other variables are earlier, and those reading LAST of a Kleene
  ``j - 1`` whose variables are all before ``j``;
* completing a match on a Kleene last position: those reading its LAST.

A negation between positions ``g - 1`` and ``g`` is checked when ``g`` is bound, if the
variables its conditions read are closed by then (or are ``g`` itself, a singleton); leading and
trailing negations, and the others, when the match is complete (the leading one's scope starts
a window before the match's last event).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..rcep.shape import Shape, refs_to
from ..reference.conditions import Check


@dataclass(frozen=True)
class Checks:
    extend: tuple[tuple[Check, ...], ...]  # per position: extending its open Kleene run
    bind: tuple[tuple[Check, ...], ...]  # per position: binding its first event
    complete: tuple[Check, ...]  # a complete match (LAST of a Kleene last position)
    negations_at_bind: tuple[tuple[int, ...], ...]  # per position: negations checked when bound
    negations_at_end: tuple[int, ...]  # negations checked on the complete match


def place(shape: Shape) -> Checks:
    k = len(shape.positions)
    var_pos = {p.var: p.index for p in shape.positions}
    kleene = [p.kleene for p in shape.positions]
    extend: list[list[Check]] = [[] for _ in range(k)]
    bind: list[list[Check]] = [[] for _ in range(k)]
    complete: list[Check] = []
    for c in shape.cross:
        ps = {var_pos[v] for v in c.vars if v in var_pos}
        if not ps:
            continue
        top = max(ps)
        reads_last = {p for p in ps if "LAST" in refs_to(c, shape.positions[p].var)}
        check = Check(c)
        if kleene[top] and top in reads_last:
            if top == k - 1:
                complete.append(check)
            else:  # checked when the next position closes it
                bind[top + 1].append(check)
            continue
        bind[top].append(check)
        if kleene[top]:
            extend[top].append(check)
    at_bind: list[list[int]] = [[] for _ in range(k)]
    at_end: list[int] = []
    for i, n in enumerate(shape.negations):
        mentions = {var_pos[v] for v in n.mentions}
        g = n.gap
        if 0 < g < k and all(p < g or (p == g and not kleene[g]) for p in mentions):
            at_bind[g].append(i)
        else:
            at_end.append(i)
    return Checks(tuple(map(tuple, extend)), tuple(map(tuple, bind)), tuple(complete),
                  tuple(map(tuple, at_bind)), tuple(at_end))
