"""Joining a node's stored left composites with new right composites; the root's matches.

For every new right composite ``r`` (its events all later than any stored left composite that
can precede it), the left candidates are those ending before ``r`` starts and starting at or
after ``lo`` (the window: ``lo`` is the newest event's time minus the window plus one, or the
start of the window being evaluated). The node's conditions are evaluated once per candidate
pair on a plain store, once per (group, ``r``) on a condensed one; negations of the node, which
depend on the members' times, are checked per composite.

:meth:`TreeJoin.materialise` runs when an event binds a position other than the last: the
composites of the nodes above it are formed up to the first stored one, which keeps them.
:meth:`TreeJoin.run` is called per trigger and window, with the signature of rcep's join so that
rcep's trigger handling (windows, deferred trailing negation, grouping, output) drives it; its
matches go to ``emit`` as a binding (variable -> list of runs), the reference's form.
"""

from __future__ import annotations

import bisect
from typing import Callable

from ...events import Event
from ..rcep.buffers import Buffer
from ..rcep.shape import Shape
from ..reference.conditions import Check
from .plan import Node, TreePlan
from .stores import Store


class TreeJoin:
    def __init__(self, shape: Shape, plan: TreePlan, within: int):
        self.shape = shape
        self.plan = plan
        self.within = within
        self.k = len(shape.positions)
        self.vars = [p.var for p in shape.positions]
        self.negation_checks = [tuple(Check(c) for c in n.conditions) for n in shape.negations]
        self.evaluations = 0  # condition evaluations on candidate pairs (or group pairs)

    # -- one node --------------------------------------------------------------------------

    def _negation_holds(self, i: int, comp: tuple, first: int, lo: int, hi: int, negs: list) -> bool:
        """NOT: no event of the negated variable in ``[lo, hi)`` (its conditions true);
        EXISTS: some. ``comp`` binds the positions from ``first`` on."""
        n = self.shape.negations[i]
        buf: Buffer = negs[i]
        a, b = buf.span(lo, hi)
        found = False
        if a < b:
            checks = self.negation_checks[i]
            if not checks:
                found = True
            else:
                env = {self.vars[first + j]: [[e]] for j, e in enumerate(comp)}
                for x in buf.events[a:b]:
                    env[n.var] = [[x]]
                    if all(c.holds(env) for c in checks):
                        found = True
                        break
        return found if n.exists else not found

    def _negations_hold(self, node: Node, comp: tuple, negs: list) -> bool:
        for i in node.negations:
            g = self.shape.negations[i].gap
            if not self._negation_holds(i, comp, node.lo, comp[g - 1 - node.lo].ts + 1,
                                        comp[g - node.lo].ts, negs):
                return False
        return True

    def join(self, node: Node, store: Store, news: list, lo: int, negs: list) -> list:
        """The composites of ``node`` made of a stored left composite and one of ``news``."""
        out: list = []
        checks = node.checks
        negations = node.negations
        store.probes += len(news)
        if store.condensed:
            for r in news:
                s = r[0].ts
                for g in store.groups.values():
                    ends = g.ends
                    if ends[-1] < lo:
                        continue
                    a = bisect.bisect_left(ends, lo)
                    b = bisect.bisect_left(ends, s, a)
                    if a == b:
                        continue
                    unchecked = bool(checks)
                    for left in g.items[a:b]:
                        if left[0].ts < lo:
                            continue
                        c = left + r
                        if unchecked:  # once per group, on its first member in the window
                            self.evaluations += 1
                            if not all(ch.holds(c) for ch in checks):
                                break
                            unchecked = False
                        if negations and not self._negations_hold(node, c, negs):
                            continue
                        out.append(c)
        else:
            for r in news:
                cands = store.span(lo, r[0].ts)
                store.scanned += len(cands)
                for left in cands:
                    if left[0].ts < lo:
                        continue
                    c = left + r
                    if checks:
                        self.evaluations += 1
                        if not all(ch.holds(c) for ch in checks):
                            continue
                    if negations and not self._negations_hold(node, c, negs):
                        continue
                    out.append(c)
        return out

    # -- events and triggers ---------------------------------------------------------------

    def chain(self, stores: list, negs: list, e: Event, pos: int, lo: int) -> list:
        """The composites formed up ``pos``'s chain by the new event ``e``."""
        news = [(e,)]
        for node in self.plan.chains[pos]:
            news = self.join(node, stores[node.left.id], news, lo, negs)
            if not news:
                break
        return news

    def materialise(self, stores: list, negs: list, e: Event, pos: int, lo: int) -> Store | None:
        """Store the composites the event ``e`` of position ``pos`` (not the last) completes;
        returns the store that received some."""
        news = self.chain(stores, negs, e, pos, lo)
        if not news:
            return None
        store = stores[self.plan.top(pos).id]
        for c in news:
            store.insert(c)
        return store

    def run(self, stores: list, negs: list, trigger: Event, _unused,
            scope: tuple[int, int | None], cand_lo: int, first_hi: int,
            emit: Callable[[dict], None]) -> None:
        """Call ``emit`` for every match whose last event is ``trigger`` (rcep's join
        signature: ``scope`` is the top-level scope ``[lo, hi)`` of leading and trailing
        negation, hi None meaning the match's first event + the window; positive events are
        taken from ``ts >= cand_lo``; the first event must have ``ts < first_hi``)."""
        if trigger.ts < cand_lo:
            return
        scope_lo, scope_hi = scope
        edge = self.plan.edge_negations
        k, names, within = self.k, self.vars, self.within
        for c in self.chain(stores, negs, trigger, k - 1, cand_lo):
            start = c[0].ts
            if start >= first_hi:
                continue
            ok = True
            for i in edge:
                if self.shape.negations[i].gap == 0:
                    lo, hi = scope_lo, start
                else:
                    lo, hi = c[-1].ts + 1, scope_hi if scope_hi is not None else start + within
                if not self._negation_holds(i, c, 0, lo, hi, negs):
                    ok = False
                    break
            if ok:
                emit({names[j]: [[c[j]]] for j in range(k)})
