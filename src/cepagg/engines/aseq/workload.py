"""A workload: several queries evaluated as one plan, rows tagged by query index.

The workload compiles every query (:mod:`.plan`), lets the sharing optimizer
(:mod:`.sharing`) group them into PreTree units and Chop-Connect plans, and runs each piece
over the same batches. It follows the engine protocol (``new_state``, ``process``,
``advance``, ``finish``, ``snapshot``, ``restore``: :class:`cepagg.engines.base.Evaluator`)
except that rows are ``(query index, row)`` pairs; :meth:`run` returns one
:class:`~cepagg.result.Result` per query.

>>> from cepagg.lang import compile_query
>>> from cepagg.events import EventBatch
>>> qs = [compile_query(t) for t in ("RETURN COUNT(*) PATTERN SEQ(A, B)",
...                                  "RETURN COUNT(*) PATTERN SEQ(A, B, C)")]
>>> rows = [{"type": t, "ts": i} for i, t in enumerate("ABCABC")]
>>> [r.rows for r in Workload(qs).run(EventBatch.from_rows(rows))]
[[(3,)], [(4,)]]

Reference: Qi, Cao, Ray, Rundensteiner, "Complex Event Analytics: Online Aggregation of Stream
Sequence Patterns", SIGMOD 2014, §4 (multi-query A-Seq).
"""

from __future__ import annotations

import pickle
from typing import Any, Sequence

from ...errors import UnsupportedQuery
from ...events import EventBatch
from ...lang.model import Query
from ...result import Result, output_kinds
from ..aggregates import combine_rows, key_width
from ..floats import FLOAT_FUNCS, to_float
from .plan import compile_plan

#: the version of pickled states (a partition's integers are int64, 128-bit limbs --
#: :attr:`.counters.PartState.wide` -- or Python ints)
STATE_FORMAT = 2
#: the formats a state may be restored from: format 1 predates wide partitions, and its
#: partitions are int64 or Python ints, which format 2 reads as they are
READABLE_FORMATS = (1, 2)


def _float_cells(q: Query) -> list[tuple[int, bool]]:
    """Positions of ``q``'s COUNT, SUM and AVG cells in a row, and whether the cell is a
    ``(sum, n)`` pair when partial."""
    if q.returns_matches:
        return []
    width = key_width(q)
    return [(width + i, a.func != "COUNT") for i, a in enumerate(q.aggregates) if a.func in FLOAT_FUNCS]


class WorkloadState:
    """Per piece of the sharing plan, its state (picklable)."""

    def __init__(self, parts: list[Any]):
        self.parts = parts


class Workload:
    """Queries evaluated together; see the module docstring.

    Args:
        queries: bound queries (each must be accepted by aseq).
        partial, start_range: as for engines (:mod:`cepagg.engines.base`).
        numbers: "exact" (Python integers where int64 overflows) or "float" (COUNT, SUM and AVG
            in float64; their cells are Python floats; MIN and MAX exact).
        share: False evaluates each query alone; True lets the optimizer share.
        stats: event statistics for the optimizer (:class:`.sharing.Stats`); default: uniform.
        chops: a sharing plan given by hand: query index -> chop positions (Chop-Connect).
    """

    #: as aseq's (:class:`cepagg.engines.base.Evaluator`): a driver may call ``advance`` per batch
    cheap_advance = True

    def __init__(self, queries: Sequence[Query], *, partial: bool = False,
                 start_range: tuple[int, int] | None = None, share: bool = True, stats=None,
                 chops: dict[int, Sequence[int]] | None = None, numbers: str = "exact"):
        from ..base import check_numbers
        from .sharing import plan_workload

        self.queries = list(queries)
        plans = []
        for i, q in enumerate(self.queries):
            try:
                plans.append(compile_plan(q))
            except UnsupportedQuery as exc:
                raise UnsupportedQuery("aseq", f"query {i}: {exc.reason}") from None
            if partial and (q.mode == "emit" or q.returns_matches):
                raise UnsupportedQuery("aseq", "partial rows exist for aggregates under WITHIN alone or SLIDE only")
        self.partial = partial
        self.start_range = start_range
        self.numbers = check_numbers(numbers)
        self.sharing = plan_workload(plans, share=share, stats=stats, chops=chops)
        self.pieces = self.sharing.runners(partial=partial, start_range=start_range, numbers=self.numbers)
        self._float_cells = [_float_cells(q) for q in self.queries] if self.numbers == "float" else None

    def new_state(self) -> WorkloadState:
        return WorkloadState([p.new_state() for p in self.pieces])

    def process(self, state: WorkloadState, batch: EventBatch) -> list[tuple[int, tuple]]:
        rows: list[tuple[int, tuple]] = []
        for piece, st in zip(self.pieces, state.parts):
            rows += piece.process(st, batch)
        return self._numbers(rows)

    def advance(self, state: WorkloadState, watermark: int) -> list[tuple[int, tuple]]:
        rows: list[tuple[int, tuple]] = []
        for piece, st in zip(self.pieces, state.parts):
            rows += piece.advance(st, watermark)
        return self._numbers(rows)

    def finish(self, state: WorkloadState) -> list[tuple[int, tuple]]:
        rows: list[tuple[int, tuple]] = []
        for piece, st in zip(self.pieces, state.parts):
            rows += piece.finish(st)
        return self._numbers(rows)

    def _numbers(self, rows: list[tuple[int, tuple]]) -> list[tuple[int, tuple]]:
        """Float mode: COUNT, SUM and AVG cells as Python floats. The units compute them in
        float64 already; what is converted here are cells of empty aggregates and of
        Chop-Connect pieces (Python, exact counts rounded once)."""
        if self._float_cells is None:
            return rows
        out = []
        for qi, row in rows:
            cells = list(row)
            for k, pair in self._float_cells[qi]:
                x = cells[k]
                if pair and self.partial:
                    cells[k] = (to_float(x[0]), to_float(x[1]))
                else:
                    cells[k] = to_float(x)
            out.append((qi, tuple(cells)))
        return out

    def snapshot(self, state: WorkloadState) -> bytes:
        return pickle.dumps((STATE_FORMAT, "aseq-workload", state), protocol=5)

    def restore(self, data: bytes) -> WorkloadState:
        version, name, state = pickle.loads(data)
        if version not in READABLE_FORMATS or name != "aseq-workload":
            raise ValueError(f"state of {name} format {version} cannot be restored")
        return state

    def run(self, batch: EventBatch) -> list[Result]:
        """Evaluate over a whole batch; one sorted result per query."""
        state = self.new_state()
        batch = batch.sorted()
        tagged = self.process(state, batch) + self.finish(state)
        out = []
        kinds = batch.attribute_kinds()
        for i, q in enumerate(self.queries):
            rows = [r for qi, r in tagged if qi == i]
            if self.partial:
                rows = combine_rows(q, rows)
            out.append(Result(q.output_columns, rows, output_kinds(q, kinds)).sorted())
        return out

    def explain(self) -> str:
        return self.sharing.explain(self.queries)


# PreTree and Chop-Connect: §4.1-4.2 of the A-Seq paper (SIGMOD 2014).
