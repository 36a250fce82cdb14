"""The reference evaluator: enumerate every match by the written semantics, then aggregate.

It is the oracle every other engine is tested against and the "two-step" baseline the seeds
compare with. It accepts every valid query. It keeps all events until the end of the input
and re-evaluates them when time advances, so it is meant for tests and small inputs, not for
streams.

>>> from cepagg.lang import compile_query
>>> from cepagg.events import EventBatch
>>> q = compile_query("RETURN COUNT(*) PATTERN SEQ(A, B, C)")
>>> stream = [("A", 1), ("B", 2), ("C", 3), ("A", 4), ("B", 5), ("C", 6)]
>>> Reference(q).run(EventBatch.from_rows({"type": t, "ts": ts} for t, ts in stream)).rows
[(4,)]
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...events import Event, EventBatch
from ..base import Engine
from .evaluate import Evaluation


@dataclass
class State:
    events: list[Event] = field(default_factory=list)
    emitted: set = field(default_factory=set)  # keys of rows already returned by advance()


class Reference(Engine):
    name = "reference"

    def new_state(self) -> State:
        return State()

    def process(self, state: State, batch: EventBatch) -> list[tuple]:
        state.events.extend(batch.events())
        return []

    def _rows(self, state: State) -> list[tuple]:
        events = sorted(state.events, key=lambda e: (e.ts, e.id))
        return Evaluation(self.query, events, partial=self.partial, start_range=self.start_range).rows()

    def _key(self, row: tuple) -> tuple:
        q = self.query
        width = len(q.group_by) + (2 if q.mode == "slide" else 1 if q.mode == "emit" else 0)
        return tuple(row[:width])

    def advance(self, state: State, watermark: int) -> list[tuple]:
        """Rows final once no event at or before ``watermark`` can come: closed SLIDE windows
        and EMIT instants up to the watermark. (WITHIN-alone totals come at ``finish``.)"""
        q = self.query
        if q.mode == "total" or q.returns_matches:
            return []
        groups = len(q.group_by)
        out = []
        for row in self._rows(state):
            final = row[groups + 1] - 1 <= watermark if q.mode == "slide" else row[groups] <= watermark
            key = self._key(row)
            if final and key not in state.emitted:
                state.emitted.add(key)
                out.append(row)
        return out

    def finish(self, state: State) -> list[tuple]:
        if self.query.mode == "total" or self.query.returns_matches:
            return self._rows(state)
        rows = [r for r in self._rows(state) if self._key(r) not in state.emitted]
        state.emitted.update(self._key(r) for r in rows)
        return rows


__all__ = ["Reference"]
