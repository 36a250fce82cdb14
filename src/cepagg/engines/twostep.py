"""A SASE-like two-step baseline: build every trend, then aggregate (GRETA §10's baseline).

The two-step systems the papers compare with store each event with pointers to its possible predecessors
(SASE's stacks), and when a window closes enumerate every trend by a depth-first search over
the pointers, then aggregate the trends. Their cost grows with the number of trends -- 2**n
in the worst case -- which is what GRETA removes. This engine is that approach, written
plainly, for the benchmark (``cepagg bench greta``); the reference evaluator is the
semantic oracle and a second, slower two-step evaluator.

Scope: positive patterns that GRETA accepts (Kleene, SEQ, adjacent-event conditions), under
skip-till-any-match, WITHIN alone or SLIDE; everything else is refused.

>>> from cepagg.lang import compile_query
>>> from cepagg.events import EventBatch
>>> q = compile_query("RETURN COUNT(*) PATTERN (SEQ(A+, B))+")
>>> rows = [{"type": t[0].upper(), "ts": int(t[1:])} for t in "a1 b2 c2 a3 e3 a4 c5 d6 b7 a8 b9".split()]
>>> TwoStep(q).run(EventBatch.from_rows(rows)).rows
[(43,)]
"""

from __future__ import annotations

from collections import defaultdict

from ..events import Event
from ..lang import ast
from ..lang.expr import holds
from ..lang.model import Query
from . import aggregates as agg
from .base import Recomputing
from .greta.plan import compile_plan
from .greta.plan import refusal as greta_refusal


class TwoStep(Recomputing):
    name = "twostep"

    @classmethod
    def refusal(cls, query: Query) -> str | None:
        reason = greta_refusal(query)
        if reason:
            return reason
        plan = compile_plan(query)
        if len(plan.graphs) > 1:
            return "the two-step baseline covers positive patterns only"
        if query.mode == "emit":
            return "the two-step baseline covers WITHIN alone and SLIDE"
        if query.strategy != "skip-till-any-match":
            return "the two-step baseline covers skip-till-any-match only"
        return None

    def __init__(self, query: Query, **kw):
        super().__init__(query, **kw)
        self.plan = compile_plan(query)
        self.funcs = agg.funcs_of(query)
        g = self.plan.graphs[0]
        t = g.template
        self.state_of = {m: s.index for s in t.states for m in query.members(s.type)}
        self.var_of = {s.index: s.var for s in t.states}
        (self.start,) = t.start
        (self.end,) = t.end
        self.local = g.local
        self.into: dict[int, list[tuple[int, list]]] = defaultdict(list)
        for tp in g.transitions:
            self.into[tp.dst].append((tp.src, tp.derivations))

    # -- step 1: SASE stacks with predecessor pointers -----------------------------------------

    def _admitted(self, e: Event) -> int | None:
        s = self.state_of.get(e.type)
        if s is None:
            return None
        for f in self.query.stream_filters:
            if not holds(f.expr, lambda n, e=e: e.get(n.name)):
                return None
        for c in self.local.get(s, ()):
            if not holds(c, lambda n, e=e: e.get(n.name)):
                return None
        return s

    def _edge_ok(self, derivations, p: Event, e: Event) -> bool:
        for _crossed, conds in derivations:
            if all(holds(c, lambda n, p=p, e=e: (e if isinstance(n, ast.Ref) else p).get(n.name))
                   for c in conds):
                return True
        return False

    def _stacks(self, events: list[Event]):
        """(events with their state, predecessor lists) for one partition."""
        q = self.query
        w = q.within
        nodes, preds = [], []
        for e in events:
            s = self._admitted(e)
            if s is None:
                continue
            ps = []
            for j in range(len(nodes) - 1, -1, -1):
                p, ps_state = nodes[j]
                if w is not None and e.ts - p.ts >= w:
                    break
                if p.ts >= e.ts:
                    continue
                for src, ders in self.into.get(s, ()):
                    if ps_state == src and self._edge_ok(ders, p, e):
                        ps.append(j)
                        break
            nodes.append((e, s))
            preds.append(ps)
        return nodes, preds

    # -- step 2: DFS enumeration of trends, then aggregation -----------------------------------

    def _trends(self, nodes, preds, end: int, lo: int):
        """Every trend ending at node ``end`` whose events have ts >= lo (reversed paths).

        Depth-first with an explicit stack: a trend can be as long as the window, deeper than
        Python's recursion limit."""
        path = [end]
        if nodes[end][1] == self.start:
            yield [end]
        todo = [iter(preds[end])]
        while todo:
            j = next(todo[-1], None)
            if j is None:
                todo.pop()
                path.pop()
                continue
            if nodes[j][0].ts >= lo:
                path.append(j)
                if nodes[j][1] == self.start:
                    yield list(reversed(path))
                todo.append(iter(preds[j]))

    def _cells(self, trend: list, nodes) -> tuple:
        cells = []
        for a in self.query.aggregates:
            if a.is_count_star:
                cells.append(1)
                continue
            evs = [nodes[i][0] for i in trend if self.var_of[nodes[i][1]] in a.vars]
            if a.func == "COUNT":
                cells.append(len(evs))
                continue
            vals = [v for v in (e.get(a.attr) for e in evs) if v is not None]
            if a.func in ("SUM", "AVG"):
                cells.append((sum(vals), len(vals)))
            elif not vals:
                cells.append(None)
            else:
                cells.append(min(vals) if a.func == "MIN" else max(vals))
        return tuple(cells)

    def evaluate(self, events: list) -> list[tuple]:
        q = self.query
        parts: dict[tuple, list[Event]] = defaultdict(list)
        keys = tuple(q.partition_by) + self.plan.sub_partition
        for e in events:
            k = tuple(e.get(a) for a in keys)
            if all(v is not None for v in k):
                parts[k].append(e)
        out: dict[tuple, tuple] = {}
        for k, evs in parts.items():
            group = tuple(k[keys.index(g.attr)] for g in q.group_by)
            nodes, preds = self._stacks(evs)
            ends = [i for i, (_, s) in enumerate(nodes) if s == self.end]
            if q.mode == "slide":
                s, w = q.slide, q.within
                for i in ends:
                    t = nodes[i][0].ts
                    for kk in range((t - w) // s + 1, t // s + 1):
                        lo = kk * s
                        if self.start_range and not self.start_range[0] <= lo < self.start_range[1]:
                            continue
                        for trend in self._trends(nodes, preds, i, lo):
                            key = group + (lo, lo + w)
                            c = self._cells(trend, nodes)
                            out[key] = c if key not in out else agg.merge(self.funcs, out[key], c)
            else:
                for i in ends:
                    lo = nodes[i][0].ts - q.within + 1 if q.within is not None else -(2**62)
                    for trend in self._trends(nodes, preds, i, lo):
                        if self.start_range and not (self.start_range[0] <= nodes[trend[0]][0].ts
                                                     < self.start_range[1]):
                            continue
                        c = self._cells(trend, nodes)
                        out[group] = c if group not in out else agg.merge(self.funcs, out[group], c)
        if self.partial:
            return [key + cells for key, cells in out.items()]
        rows = [key + agg.finalize(self.funcs, cells) for key, cells in out.items()]
        if q.mode == "total" and not q.group_by and not rows:
            rows.append(agg.finalize(self.funcs, agg.empty(self.funcs)))
        return rows


__all__ = ["TwoStep"]

# Reference: Poppe et al., "GRETA: Graph-based Real-time Event Trend Aggregation", PVLDB 11(1),
# 2017, Section 10 "Methodology": SASE pushes each
# event on a stack with pointers to its predecessors and builds all trends by DFS per window.
