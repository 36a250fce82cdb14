"""The input of the ordering layer: an *arrival sequence* of events and punctuations.

An event has its event time ``ts`` (and identity ``_id``, which orders events with equal times)
and an arrival position: its index in the sequence. A **punctuation** ``(type, t)`` says "no
more events of that type with ``ts <= t`` will come" (the POG of Mo Liu's dissertation, WPI
2012, §3.6.1, read with ``<=``: its Algorithms 1 and 2 compare with ``<`` where its formal
definition, later events have ``ts > t``, needs ``<=``); ``type`` None is a punctuation for every type, i.e. a
watermark. Punctuations are assumed truthful; an event that contradicts one is *late* and goes
to the late-event policy (:mod:`cepagg.order.policy`).

In files, a punctuation is a row whose type is ``__punct__``: its time column is ``t`` and its
attribute ``punct_type`` (absent or null: every type) the type it closes.

>>> a = Arrival.from_rows([{"type": "A", "ts": 3}, {"type": "__punct__", "ts": 2}, {"type": "B", "ts": 1}])
>>> [str(i) for i in a.items]
['event#0 A@3', 'punct(*, 2)', 'event#1 B@1']
>>> a.lateness()
[0, 2]
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

import pyarrow as pa
import pyarrow.compute as pc

from ..events import ID, EventBatch

PUNCT_TYPE = "__punct__"
PUNCT_ATTR = "punct_type"


@dataclass(frozen=True)
class Punctuation:
    """No more events of ``type`` (None: of any type) with ``ts <= t``."""

    type: str | None
    t: int

    def __str__(self) -> str:
        return f"punct({self.type or '*'}, {self.t})"


@dataclass(frozen=True)
class EventItem:
    """The ``row``-th event of :attr:`Arrival.events` (arrival order)."""

    row: int
    ts: int
    type: str
    id: int

    def __str__(self) -> str:
        return f"event#{self.row} {self.type}@{self.ts}"


Item = EventItem | Punctuation


@dataclass
class Arrival:
    """Events (an :class:`EventBatch` whose row ``i`` is the ``i``-th event to arrive) and the
    arrival sequence ``items`` interleaving them with punctuations."""

    events: EventBatch
    items: list[Item] = field(default_factory=list)

    @staticmethod
    def from_batch(batch: EventBatch, punctuations: Sequence[tuple[int, Punctuation]] = ()) -> "Arrival":
        """The batch's rows in table order are the arrival order; ``punctuations`` are inserted
        before the event of the given arrival index (``len(batch)``: after the last).

        Rows of type ``__punct__`` in the batch become punctuations where they stand."""
        table = batch.table
        types = table.column("type").to_pylist()
        if PUNCT_TYPE in types:
            mask = pc.equal(table.column("type"), PUNCT_TYPE)
            marks = table.filter(mask)
            names = (marks.column(PUNCT_ATTR).to_pylist() if PUNCT_ATTR in marks.column_names
                     else [None] * marks.num_rows)
            positions = [i for i, t in enumerate(types) if t == PUNCT_TYPE]
            events = table.filter(pc.invert(mask))
            if PUNCT_ATTR in events.column_names and events.column(PUNCT_ATTR).null_count == events.num_rows:
                events = events.drop_columns([PUNCT_ATTR])
            extra = []
            for k, (p, name, t) in enumerate(zip(positions, names, marks.column("ts").to_pylist())):
                extra.append((p - k, Punctuation(name or None, int(t))))
            batch = EventBatch(events, batch.time_unit)
            punctuations = sorted(list(punctuations) + extra, key=lambda x: x[0])
        ts = batch.table.column("ts").to_pylist()
        ty = batch.table.column("type").to_pylist()
        ids = batch.table.column(ID).to_pylist()
        items: list[Item] = []
        k = 0
        for i in range(len(ts)):
            while k < len(punctuations) and punctuations[k][0] <= i:
                items.append(punctuations[k][1])
                k += 1
            items.append(EventItem(i, ts[i], ty[i], ids[i]))
        items += [p for _, p in punctuations[k:]]
        return Arrival(batch, items)

    @staticmethod
    def from_rows(rows: Iterable[Mapping[str, Any]], time_unit: str = "ms",
                  ids: Sequence[int] | None = None) -> "Arrival":
        """Rows in arrival order (``_id`` defaults to the arrival position of each event)."""
        rows = list(rows)
        if ids is None and any(ID in r for r in rows):
            ids = [r[ID] for r in rows]
        clean = [{k: v for k, v in r.items() if k != ID} for r in rows]
        return Arrival.from_batch(EventBatch.from_rows(clean, time_unit, ids=ids))

    def __len__(self) -> int:
        return len(self.items)

    def in_order(self) -> EventBatch:
        """The events sorted by (ts, _id): what an in-order engine would have been given."""
        return self.events.sorted()

    def rows(self) -> list[tuple]:
        """Events as tuples in the column order of ``events.table`` (arrival order)."""
        cols = [self.events.table.column(n).to_pylist() for n in self.events.table.column_names]
        return list(zip(*cols)) if cols else []

    def lateness(self) -> list[int]:
        """Per event (arrival order): how far behind the largest earlier time it arrived (0 when
        in order). An event with lateness <= K is in time for K-slack with slack K."""
        out, clock = [], None
        for it in self.items:
            if isinstance(it, EventItem):
                out.append(0 if clock is None or it.ts >= clock else clock - it.ts)
                clock = it.ts if clock is None else max(clock, it.ts)
        return out

    def punctuations(self) -> list[Punctuation]:
        return [i for i in self.items if isinstance(i, Punctuation)]

    def check_punctuations(self) -> list[str]:
        """Punctuations that some later event contradicts (empty when all are truthful)."""
        problems, closed = [], {}
        for pos, it in enumerate(self.items):
            if isinstance(it, Punctuation):
                closed[it.type] = max(closed.get(it.type, it.t), it.t)
            else:
                bound = max(closed.get(it.type, -2**62), closed.get(None, -2**62))
                if it.ts <= bound:
                    problems.append(f"{it} at position {pos} after a punctuation up to {bound}")
        return problems


def arrow_schema(batch: EventBatch) -> pa.Schema:
    return batch.table.schema
