"""Recomputing the matches that end at one trigger event, from the buffers alone.

Nothing found by an earlier trigger is kept: each call joins the buffers again (RCEP's Step 2,
Kammoun et al., EDBT 2018, Sec. 2.2-2.3) following the steps of :mod:`.plan`, and expands every
Kleene variable into its subsets (Step 3) by a depth-first search that adds one earlier event at
a time, checking NEXT/FIRST/LAST and the other conditions on the way, so a subset that fails is
never extended (the paper enumerates all 2^m - 1 masks and filters; this visits the same
surviving subsets without the failing ones). The trigger's variable is bound to the trigger only
(for a Kleene last variable: runs whose last event is the trigger), so every match is found by
exactly one trigger.

Matches are handed to a callback as a binding (variable -> list of runs, the reference's form)
that is reused: the callback must copy what it keeps.
"""

from __future__ import annotations

from typing import Callable

from ...events import Event
from ..reference.conditions import Check
from .buffers import Buffer
from .plan import Step
from .shape import Shape

Binding = dict


class Join:
    def __init__(self, shape: Shape, within: int):
        self.shape = shape
        self.k = len(shape.positions)
        self.within = within
        self.negation_checks = [tuple(Check(c) for c in n.conditions) for n in shape.negations]

    def run(self, buffers: list[Buffer], negs: list[Buffer], trigger: Event, steps: tuple[Step, ...],
            scope: tuple[int, int | None], cand_lo: int, first_hi: int,
            emit: Callable[[Binding], None]) -> None:
        """Call ``emit`` for every match whose last event is ``trigger``.

        ``scope`` is the top-level scope ``[lo, hi)`` of leading and trailing negation (hi None:
        the match's first event + the window, WITHIN alone); positive events are taken from
        ``ts >= cand_lo``; the match's first event must have ``ts < first_hi``.
        """
        if trigger.ts < cand_lo:
            return  # its matches start before this slice
        _Search(self, buffers, negs, trigger, steps, scope, cand_lo, first_hi, emit).step(0)


class _Search:
    """One trigger's depth-first search: the steps bind variables in order, each binding kept in
    ``env`` (the reference's form) and its first and last times in ``starts``/``ends``."""

    def __init__(self, join: Join, buffers: list[Buffer], negs: list[Buffer], trigger: Event,
                 steps: tuple[Step, ...], scope: tuple[int, int | None], cand_lo: int,
                 first_hi: int, emit: Callable[[Binding], None]):
        self.shape, self.within, self.negation_checks = join.shape, join.within, join.negation_checks
        self.buffers, self.negs, self.trigger, self.steps = buffers, negs, trigger, steps
        self.scope_lo, self.scope_hi = scope
        self.cand_lo, self.first_hi, self.emit = cand_lo, first_hi, emit
        self.starts: list = [None] * join.k
        self.ends: list = [None] * join.k
        self.env: Binding = {}

    def negation_holds(self, i: int) -> bool:
        """NOT: no event of the negated variable in its gap (its conditions true); EXISTS: some
        event."""
        n = self.shape.negations[i]
        env = self.env
        lo = self.ends[n.gap - 1] + 1 if n.gap > 0 else self.scope_lo
        if n.gap < len(self.starts):
            hi = self.starts[n.gap]
        else:
            hi = self.scope_hi if self.scope_hi is not None else self.starts[0] + self.within
        buf = self.negs[i]
        a, b = buf.span(lo, hi)
        found = False
        checks = self.negation_checks[i]
        if a < b and not checks:
            found = True
        elif a < b:
            try:
                for x in buf.events[a:b]:
                    env[n.var] = [[x]]
                    if all(c.holds(env) for c in checks):
                        found = True
                        break
            finally:
                env.pop(n.var, None)
        return found if n.exists else not found

    def complete(self, st: Step) -> bool:
        """The conditions and negations that the binding of step ``st`` completes all hold."""
        for c in st.on_complete:
            if not c.holds(self.env):
                return False
        for i in st.negations:
            if not self.negation_holds(i):
                return False
        return True

    def fits(self, st: Step, y: Event, f: Event | None) -> bool:
        """Kleene: may ``y`` be added before ``f`` (the run's current first event)?"""
        var, env = st.var, self.env
        if f is not None:
            for a in st.same:
                if y.get(a) != f.get(a):
                    return False
        for c in st.per_event:
            if c.next_var == var:
                if f is None:
                    continue  # no pair yet
                env[var] = [[y, f]]
            else:
                env[var] = [[y]]
            if not c.holds(env):
                return False
        return True

    def step(self, j: int) -> None:
        """Bind step ``j``'s variable to each candidate in turn and go on to step ``j + 1``."""
        starts, ends = self.starts, self.ends
        if j == len(self.steps):
            if starts[0] < self.first_hi:
                self.emit(self.env)
            return
        st = self.steps[j]
        p, var = st.pos, st.var
        lower = ends[st.left] + 1 if st.left is not None else self.cand_lo
        buf = self.buffers[p]
        if st.right is None:
            cands: list = [self.trigger]
        else:
            a, b = buf.span(lower, starts[st.right])
            cands = buf.events[a:b]
        if not st.kleene:
            for x in cands:
                self.env[var] = [[x]]
                starts[p] = ends[p] = x.ts
                if self.complete(st):
                    self.step(j + 1)
        else:
            for x in cands:
                if (st.per_event or st.same) and not self.fits(st, x, None):
                    continue
                ends[p] = x.ts
                self.grow(j, st, buf, lower, [x])
        self.env.pop(var, None)
        starts[p] = ends[p] = None

    def grow(self, j: int, st: Step, buf: Buffer, lower: int, rev: list) -> None:
        """Kleene run ``rev`` (latest event first): report it, then extend it backwards."""
        f = rev[-1]
        self.env[st.var] = [rev[::-1]]
        self.starts[st.pos] = f.ts
        if self.complete(st):
            self.step(j + 1)
        a, b = buf.span(lower, f.ts)
        for y in buf.events[a:b]:
            if (st.per_event or st.same) and not self.fits(st, y, f):
                continue
            rev.append(y)
            self.grow(j, st, buf, lower, rev)
            rev.pop()
