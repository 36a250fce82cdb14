"""What runs inside a Spark task: rebuild the plan's engine, feed it one unit at a time, and
turn its rows into Arrow batches.

A *unit* is what one engine state serves: a partition key, or a time slice (the plan's
split, :mod:`cepagg.plan.split`). The batch driver (:mod:`.batch`) and the workload driver
(:mod:`.workload`) hand these functions to ``mapInArrow``; nothing here knows about
patterns.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..events import EventBatch
from ..lang import compile_query
from ..lang.model import Query
from ..plan import plan
from . import schema as S


@dataclass(frozen=True)
class Spec:
    """What a Spark task needs to rebuild the query and engine (pickled to the workers)."""

    text: str
    time_unit: str
    kinds: tuple[tuple[str, str], ...]
    engine: str
    split: str  # "key" | "time" | "single"
    keys: tuple[str, ...]
    partial: bool
    t0: int = 0
    width: int = 0
    numbers: str = "exact"  # "exact" | "float" (cepagg.engines.floats)

    def query(self) -> Query:
        return compiled(self.text, self.time_unit, self.kinds)


@lru_cache(maxsize=32)
def compiled(text: str, time_unit: str, kinds: tuple) -> Query:
    """A query compiled once per worker process (tasks get its text, not the bound object)."""
    return compile_query(text, time_unit=time_unit, schema=dict(kinds))


def build_engine(spec: Spec, **options):
    """The engine the plan chose, built in the task with the split's options."""
    return plan(spec.query(), spec.engine, spec.numbers).build_with(**options)


def out_columns(spec: Spec) -> list[tuple[str, str]]:
    """The columns of the rows a task returns: partial aggregates where the split merges them,
    the result columns otherwise (a match also carries its unit, ``__part``)."""
    q = spec.query()
    kinds = dict(spec.kinds)
    if spec.partial:
        return S.partial_ddl(q, kinds, spec.numbers)
    cols = S.result_ddl(q, kinds, spec.numbers)
    if q.returns_matches:
        cols = cols + [("__part", "string")]
    return cols


def emit_rows(spec: Spec, rows: list[tuple]) -> pa.RecordBatch:
    """Engine rows as an Arrow batch of :func:`out_columns` (partial cells flattened)."""
    if spec.partial:
        rows = [S.flatten_partial(spec.query(), r) for r in rows]
    return S.to_arrow(rows, out_columns(spec))


def units(batches: Iterator[pa.RecordBatch], label) -> Iterator[tuple[object, pa.Table, bool]]:
    """Runs of consecutive rows with the same unit (a key, or a time slice) in sorted batches,
    and whether the run ends its batch (the unit may go on in the next one).

    ``label(table)`` gives the columns that make the unit and the table without helper
    columns; a unit is the tuple of those columns' values.
    """
    for rb in batches:
        if rb.num_rows == 0:
            continue
        columns, table = label(pa.Table.from_batches([rb]))
        starts = run_starts(columns, rb.num_rows)
        units = list(zip(*(c.take(pa.array(starts)).to_pylist() for c in columns))) if columns \
            else [()] * len(starts)
        ends = list(starts[1:]) + [rb.num_rows]
        for unit, start, end in zip(units, starts, ends):
            yield unit, table.slice(start, end - start), end == rb.num_rows


def run_starts(columns: list, n: int) -> np.ndarray:
    """Where a new run of equal values (nulls equal to nulls) begins, in rows 0..n-1."""
    change = np.zeros(n, dtype=bool)
    change[0] = True
    for col in columns:
        a = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
        differs = pc.not_equal(a.slice(1), a.slice(0, n - 1)).fill_null(False).to_numpy(zero_copy_only=False)
        valid = a.is_valid().to_numpy(zero_copy_only=False)
        change[1:] |= differs | (valid[1:] != valid[:-1])
    return np.flatnonzero(change)


def drive(batches, label, make_engine, emit) -> Iterator[pa.RecordBatch]:
    """One engine state per unit, in unit order; ``emit`` turns ``(row, unit)`` pairs into an
    Arrow batch (every 4,096 rows and at the end)."""
    current = engine = state = None
    out: list[tuple] = []
    for unit, table, goes_on in units(batches, label):
        if unit != current:
            if state is not None:
                out += [(r, current) for r in engine.finish(state)]
            current = unit
            engine = make_engine(unit)
            state = engine.new_state()
        out += [(r, current) for r in engine.process(state, EventBatch(table))]
        # a unit's events come in time order: everything before this batch's last time has
        # been seen, so what waits on that (windows and EMIT ON CHANGE values merged over
        # several partitions) is released now instead of piling up until the unit ends -- once
        # per batch, where the unit may go on in the next (otherwise `finish` follows)
        if goes_on and engine.cheap_advance and table.num_rows:
            out += [(r, current) for r in engine.advance(state, pc.max(table.column("ts")).as_py() - 1)]
        if len(out) >= 4096:
            yield emit(out)
            out = []
    if state is not None:
        out += [(r, current) for r in engine.finish(state)]
    if out:
        yield emit(out)


def unit_label(spec: Spec):
    """``label(table) -> (unit columns, table)`` for the split: the key columns, or the time
    slice's number."""
    if spec.split == "key":
        def by_key(table: pa.Table):
            return [table.column(k) for k in spec.keys], table
        return by_key

    def by_slice(table: pa.Table):
        return [table.column("__slice")], table.drop(["__slice"])
    return by_slice


def slice_range(spec: Spec, unit: tuple[int]) -> tuple[int, int] | None:
    """The start range of the time slice ``unit`` (None when one task sees the whole stream)."""
    a = spec.t0 + unit[0] * spec.width
    return (a, a + spec.width) if spec.split == "time" else None


def run_keys(spec: Spec, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """mapInArrow body: events sorted by (key, ts, _id); one engine state per key."""
    engine = build_engine(spec, partial=spec.partial)  # the same engine serves every key
    return drive(batches, unit_label(spec), lambda key: engine, lambda out: rows_batch(spec, out))


def run_slices(spec: Spec, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """mapInArrow body: events sorted by (slice, ts, _id); one engine per slice (its range)."""
    return drive(batches, unit_label(spec),
                 lambda unit: build_engine(spec, partial=spec.partial, start_range=slice_range(spec, unit)),
                 lambda out: rows_batch(spec, out))


def rows_batch(spec: Spec, tagged: list[tuple[tuple, object]]) -> pa.RecordBatch:
    """Result rows; a match also carries its unit, so that matches are numbered per unit."""
    q = spec.query()
    if q.returns_matches:
        return S.to_arrow([r + (repr(u),) for r, u in tagged], out_columns(spec))
    return emit_rows(spec, [r for r, _ in tagged])
