"""The reference evaluator: enumerate every match by the written semantics, then aggregate.

It is the oracle every other engine is tested against and the "two-step" baseline the papers
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

from ..base import Recomputing
from .evaluate import Evaluation


class Reference(Recomputing):
    name = "reference"

    def evaluate(self, events: list) -> list[tuple]:
        return Evaluation(self.query, events, partial=self.partial, start_range=self.start_range).rows()


__all__ = ["Reference"]
