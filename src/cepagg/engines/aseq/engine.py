"""The ``aseq`` engine: one query evaluated by A-Seq, behind the common engine protocol.

A single query is a workload of one (:class:`~cepagg.engines.aseq.workload.Workload`), so the
engine is a thin wrapper: it refuses at plan time what A-Seq cannot answer
(:func:`~cepagg.engines.aseq.plan.refusal`) and strips the query index from the rows.

>>> from cepagg.lang import compile_query
>>> from cepagg.events import EventBatch
>>> q = compile_query("RETURN COUNT(*) PATTERN SEQ(A, B, C)")
>>> rows = [{"type": t, "ts": i} for i, t in enumerate("ABCABC")]
>>> Aseq(q).run(EventBatch.from_rows(rows)).rows
[(4,)]

Reference: Qi, Cao, Ray, Rundensteiner, "Complex Event Analytics: Online Aggregation of Stream
Sequence Patterns", SIGMOD 2014.
"""

from __future__ import annotations

import pickle
from typing import Any

from ...events import EventBatch
from ...lang.model import Query
from ..base import Engine
from .plan import refusal as _refusal
from .workload import READABLE_FORMATS, STATE_FORMAT, Workload, WorkloadState


class Aseq(Engine):
    """A-Seq: aggregates of fixed-length SEQ patterns without constructing matches."""

    name = "aseq"
    float_native = True

    def __init__(self, query: Query, *, partial: bool = False, start_range: tuple[int, int] | None = None,
                 numbers: str = "exact"):
        super().__init__(query, partial=partial, start_range=start_range, numbers=numbers)
        self.workload = Workload([query], partial=partial, start_range=start_range, share=False, numbers=numbers)

    @classmethod
    def refusal(cls, query: Query) -> str | None:
        return _refusal(query)

    def new_state(self) -> WorkloadState:
        return self.workload.new_state()

    def process(self, state: Any, batch: EventBatch) -> list[tuple]:
        return [row for _, row in self.workload.process(state, batch)]

    def advance(self, state: Any, watermark: int) -> list[tuple]:
        return [row for _, row in self.workload.advance(state, watermark)]

    def finish(self, state: Any) -> list[tuple]:
        return [row for _, row in self.workload.finish(state)]

    def snapshot(self, state: Any) -> bytes:
        """The state pickled with the workload's format version (:data:`.workload.STATE_FORMAT`)."""
        return pickle.dumps((STATE_FORMAT, self.name, state), protocol=5)

    def restore(self, data: bytes) -> Any:
        version, name, state = pickle.loads(data)
        if version not in READABLE_FORMATS or name != self.name:
            raise ValueError(f"state of {name} format {version} cannot be restored by "
                             f"{self.name} format {STATE_FORMAT}")
        return state


# Reference: A-Seq (SIGMOD 2014) §3 (single-query A-Seq).
