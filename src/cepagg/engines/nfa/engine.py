"""The nfa engine: a partial-match automaton, the incremental baseline RCEP is compared with.

SASE++ (Zhang, Diao, Immerman, SIGMOD 2014) and Flink CEP evaluate a pattern incrementally: a
*run* is a partial match -- the events bound so far to the first positions of the SEQ -- and
every arriving event is offered to every run of its partition. Under skip-till-any-match the
run both ignores the event and, where the event fits, branches: a Kleene position takes one
more event, or the next position takes its first. A run that binds the last position is a match.
Memory therefore grows with the number of partial matches in a window (exponentially with
Kleene variables), which is what recomputation avoids (Kammoun et al., "All that Incremental is
not Efficient: Towards Recomputation Based Complex Event Processing for Expensive Queries",
EDBT 2018); this engine exists to measure that difference (``cepagg bench matches``), and the
planner never picks it.

It accepts what rcep accepts (:func:`cepagg.engines.rcep.shape.refusal`) and returns the same
results: it shares rcep's reading of the query (:mod:`cepagg.engines.rcep.shape`), its window
and negation scopes, the matches waiting for a trailing negation, the output rows and the
aggregate folds; only the way matches are found differs (runs here, joins of buffers there).
Conditions are checked on the transition that can make them false (:mod:`.checks`), so a run
that fails one is never extended. Negated events are kept in per-partition buffers for the
negation checks, as in rcep.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field

from ..rcep import output
from ..rcep.buffers import Buffer
from ..rcep.engine import NEG_INF, Rcep, RcepState, first_value
from ..reference.evaluate import partition_key
from . import checks as placement


@dataclass
class NfaPartition:
    negs: list  # per negation: Buffer
    runs: list = field(default_factory=list)  # (position reached, events per position)
    last_ts: int = NEG_INF
    pending: list = field(default_factory=list)  # heap (deadline, seq, match, window start)


class Nfa(Rcep):
    name = "nfa"
    compiles = False  # (its own enumeration, not rcep's compiled join)

    def __init__(self, query, **kw):
        super().__init__(query, **kw)
        self.checks = placement.place(self.shape)
        self.vars = [p.var for p in self.shape.positions]
        self.kleene = [p.kleene for p in self.shape.positions]
        self.same = [self.shape.same.get(p.var, ()) if p.kleene else () for p in self.shape.positions]

    def new_state(self) -> RcepState:
        return RcepState()

    def _expire(self, part: NfaPartition, horizon: int) -> None:
        """Drop negation events before ``horizon`` (runs expire as they are extended)."""
        for b in part.negs:
            b.drop_before(horizon)

    def process(self, state: RcepState, batch) -> list[tuple]:
        out: list[tuple] = []
        q = self.query
        for e in batch.events():
            key = partition_key(q, e)
            if key is None:
                continue
            part = state.partitions.get(key)
            if part is None:
                part = state.partitions[key] = NfaPartition([Buffer() for _ in self.shape.negations])
            if not self._admit(state, key, part, e, out):
                continue
            self._offer(state, key, part, e, out)
        return out

    # -- runs ---------------------------------------------------------------------------------

    def _offer(self, state: RcepState, key: tuple, part: NfaPartition, e, out: list) -> None:
        """Offer ``e`` to every run of the partition: keep each run (skip), branch where it fits."""
        k, w, kleene = len(self.vars), self.w, self.kleene
        fits = [f(e) for f in self._fits_pos]
        if not any(fits):
            part.runs = [r for r in part.runs if e.ts - r[1][0][0].ts < w]
            return
        kept, grown = [], []
        for run in part.runs:
            j, binds = run
            if e.ts - binds[0][0].ts >= w:
                continue  # expired: no later event can complete it inside the window
            kept.append(run)
            if e.ts <= binds[j][-1].ts:
                continue  # events of a match are in strictly increasing time
            if kleene[j] and fits[j] and self._same(j, binds[j][0], e):
                nb = binds[:j] + (binds[j] + (e,),)
                if self._holds(self.checks.extend[j], nb):
                    grown.append((j, nb))
            if j + 1 < k and fits[j + 1]:
                nb = binds + ((e,),)
                if self._holds(self.checks.bind[j + 1], nb) and \
                        self._negations(part, self.checks.negations_at_bind[j + 1], nb):
                    grown.append((j + 1, nb))
        if fits[0] and (self.slide is not None or self.lo <= e.ts < self.hi) and e.ts >= self.lo:
            nb = ((e,),)
            if self._holds(self.checks.bind[0], nb):
                grown.append((0, nb))
        for j, nb in grown:
            if j == k - 1:
                self._complete(state, key, part, e, nb, out)
            if j < k - 1 or kleene[j]:
                kept.append((j, nb))
        part.runs = kept

    def _same(self, j: int, first, e) -> bool:
        """Equivalences ``[X.a]`` on a Kleene variable: every event of its run has one value."""
        return all(e.get(a) == first.get(a) for a in self.same[j])

    def _env(self, binds: tuple) -> dict:
        return {v: [list(b)] for v, b in zip(self.vars, binds)}

    def _holds(self, checks, binds: tuple) -> bool:
        if not checks:
            return True
        env = self._env(binds)
        return all(c.holds(env) for c in checks)

    def _negations(self, part: NfaPartition, which, binds: tuple, scope=(None, None)) -> bool:
        """NOT: no event of the negated variable in its gap (its conditions true); EXISTS: some."""
        if not which:
            return True
        k = len(self.vars)
        env = None
        for i in which:
            n = self.shape.negations[i]
            lo = binds[n.gap - 1][-1].ts + 1 if n.gap > 0 else scope[0]
            if n.gap < k:
                hi = binds[n.gap][0].ts
            else:
                hi = scope[1] if scope[1] is not None else binds[0][0].ts + self.w
            buf = part.negs[i]
            a, b = buf.span(lo, hi)
            checks = self.join.negation_checks[i]
            found = a < b and not checks
            if a < b and checks:
                env = env or self._env(binds)
                for x in buf.events[a:b]:
                    env[n.var] = [[x]]
                    if all(c.holds(env) for c in checks):
                        found = True
                        break
                env.pop(n.var, None)
            if found != n.exists:
                return False
        return True

    def _complete(self, state: RcepState, key: tuple, part: NfaPartition, e, binds: tuple, out: list) -> None:
        """A run bound the last position with ``e``: a match once the complete-match conditions
        and the remaining negations hold (after the trailing negation's scope, if any)."""
        if not self._holds(self.checks.complete, binds):
            return
        first = binds[0][0].ts
        for wlo in self._windows_of(e.ts):
            if wlo is not None and wlo > first:
                continue  # the window does not hold the match's first event
            if self.trailing:
                deadline = (first if wlo is None else wlo) + self.w - 1
                heapq.heappush(part.pending, (deadline, state.seq, binds, wlo))
                state.seq += 1
            else:
                self._emit(state, key, part, binds, wlo, out)

    def _due(self, state: RcepState, key: tuple, part, upto: int, out: list) -> None:
        """Emit the matches waiting for a trailing negation whose scope has passed ``upto``."""
        while part.pending and part.pending[0][0] <= upto:
            _, _, binds, wlo = heapq.heappop(part.pending)
            self._emit(state, key, part, binds, wlo, out)

    def _emit(self, state: RcepState, key: tuple, part: NfaPartition, binds: tuple, wlo, out: list) -> None:
        last = binds[-1][-1].ts
        scope = (last - self.w + 1, None) if wlo is None else (wlo, wlo + self.w)
        if not self._negations(part, self.checks.negations_at_end, binds, scope):
            return
        env = self._env(binds)
        window = () if wlo is None else (wlo, wlo + self.w)
        cells = tuple(key[i] if i is not None else first_value(env, var, attr)
                      for i, var, attr in self._groups) + window
        if self.query.returns_matches:
            self._rows.add(out, cells, state.next_match, env)
            state.next_match += 1
            if self.spill is not None and len(out) >= self.spill_rows:  # (the driver writes them now)
                self.spill(out[:])
                out.clear()
        else:
            output.fold(state.totals if wlo is None else state.windows, self.query, cells, env)

