"""A workload of several queries on Spark, as one job: ``run_workload(df, text) -> {name: DataFrame}``.

The queries aseq accepts, and the nested queries whose terms the plan joins to them, run in one
shared aseq plan (PreTree, Chop-Connect; see :mod:`cepagg.engines.aseq.workload` and
:func:`cepagg.plan.workload_evaluator`): one pass of ``mapInArrow`` over the events evaluates
all of them, and its output -- every query's rows side by side, tagged ``__q`` -- is persisted,
so each query's DataFrame is a filter of that one evaluation. The plan
(:meth:`cepagg.plan.WorkloadPlan.shared_jobs`) says which queries share: those that agree on
the split, since queries partitioned by different keys cannot see the same partitions. A
time split cuts slices wide enough, and overlapping enough, for the longest window of its
queries; each query still counts only the matches that start in a slice (``start_range``).
The other queries (Kleene patterns for GRETA, nested queries with no term in the shared plan,
anything for the reference) run as separate jobs with :func:`~cepagg.spark.batch.run`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Iterator, Sequence

import pyarrow as pa

from ..engines.base import Evaluator
from ..events import ID
from ..lang import Hierarchy
from ..lang.concepts import with_hierarchy
from ..lang.model import Query
from ..lang.workload import compile_workload, named_queries
from ..plan import plan_workload, workload_evaluator
from . import schema as S
from .batch import arrange, check_types_on_spark, narrow, prepare_events, run
from .merge import in_order, merge_results
from .tasks import Spec, compiled, drive, emit_rows, out_columns, slice_range, unit_label


@dataclass(frozen=True)
class WorkloadSpec:
    """What a task needs to rebuild a shared aseq workload (pickled to the workers)."""

    specs: tuple[Spec, ...]  # one per query, all with the same split, keys, partial, slices

    def workload(self, start_range=None) -> Evaluator:
        first = self.specs[0]
        return _workload(tuple(s.text for s in self.specs), first.time_unit, first.kinds, first.partial,
                         start_range, first.numbers)


@lru_cache(maxsize=64)
def _workload(texts: tuple[str, ...], time_unit: str, kinds: tuple, partial: bool, start_range,
              numbers: str = "exact") -> Evaluator:
    """One shared evaluator per worker process and slice range (building the sharing plan is
    not free)."""
    return workload_evaluator([compiled(t, time_unit, kinds) for t in texts], numbers, partial=partial,
                              start_range=start_range)


def _columns(wspec: WorkloadSpec) -> list[tuple[str, str]]:
    """``__q`` and every query's output columns, renamed ``__<k>:<column>``."""
    cols = [("__q", "bigint")]
    for k, spec in enumerate(wspec.specs):
        cols += [(f"__{k}:{name}", ddl) for name, ddl in out_columns(spec)]
    return cols


def _batch(wspec: WorkloadSpec, tagged: list[tuple[int, tuple]]) -> pa.RecordBatch:
    """Rows of several queries in one batch; the columns of the other queries are null."""
    schema = S.arrow_schema(_columns(wspec))
    parts = [schema.empty_table()]
    for k, spec in enumerate(wspec.specs):
        rows = [r for qi, r in tagged if qi == k]
        if not rows:
            continue
        own = emit_rows(spec, rows)
        arrays = {f"__{k}:{name}": own.column(i) for i, name in enumerate(own.schema.names)}
        n = own.num_rows
        cols = [pa.array([k] * n, pa.int64())]
        for f in list(schema)[1:]:
            cols.append(arrays[f.name] if f.name in arrays else pa.nulls(n, f.type))
        parts.append(pa.Table.from_arrays(cols, schema=schema))
    table = pa.concat_tables(parts).combine_chunks()
    return pa.RecordBatch.from_arrays([table.column(i).combine_chunks() for i in range(table.num_columns)],
                                      schema=schema)


def run_shared(wspec: WorkloadSpec, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """mapInArrow body: one workload state per key or time slice, every query at once."""
    first = wspec.specs[0]
    return drive(batches, unit_label(first), lambda unit: wspec.workload(
        slice_range(first, unit) if first.split != "key" else None),
        lambda out: _batch(wspec, [r for r, _ in out]))


def run_workload(df, workload: str | Sequence[Query | str], *, names: Sequence[str] | None = None,
                 engine: str = "auto", type_column: str = "type", time_column: str = "ts",
                 time_unit: str = "ms", input_time_unit: str | None = None, on_bad_row: str = "error",
                 reject_path: str | None = None, parallelism: int | None = None,
                 prepared: bool = False, hierarchy: Hierarchy | None = None, numbers: str = "exact") -> dict:
    """Evaluate several queries over the events DataFrame ``df``; one DataFrame per query.

    Args:
        workload: a workload text (queries separated by lines of ``---`` or ``;;``, optional
            ``-- name:`` lines), a sequence of queries (texts or compiled) or a ``{name: query}``
            mapping.
        names: names for a sequence of queries, one each (default ``q0, q1, ...``).
        engine: "auto" shares what aseq accepts; any other name runs every query alone with it.
        hierarchy: a concept hierarchy for every query (merged with the file's CONCEPT lines).
        numbers: "exact" or "float", for every query (see :func:`cepagg.spark.run`).
        The other options are those of :func:`cepagg.spark.run`.

    Returns:
        ``{name: DataFrame}`` in the workload's order, each as :func:`cepagg.spark.run` gives it.
    """
    from pyspark import StorageLevel
    from pyspark.sql import functions as F

    events = df if prepared else prepare_events(
        df, type_column=type_column, time_column=time_column, time_unit=time_unit,
        input_time_unit=input_time_unit, on_bad_row=on_bad_row, reject_path=reject_path)
    kinds = {f.name: S.spark_kind(f.dataType) for f in events.schema.fields if f.name not in (ID, "ts", "type")}
    if isinstance(workload, str):
        named = compile_workload(workload, time_unit=time_unit, schema=kinds, hierarchy=hierarchy)
    else:
        named = [(n, compiled(with_hierarchy(q.text if isinstance(q, Query) else q, hierarchy), time_unit,
                              tuple(sorted(kinds.items()))))
                 for n, q in named_queries(workload, names)]
    check_types_on_spark(events, [q for _, q in named])
    wp = plan_workload([q for _, q in named], [n for n, _ in named], engine, numbers)
    n_parts = parallelism or events.sparkSession.sparkContext.defaultParallelism
    results: dict = {}
    for (split, keys, partial, _why), members in wp.shared_jobs():
        within = max(named[i][1].within or 0 for i in members)
        ordered, split, t0, width = arrange(narrow(events, [named[i][1] for i in members]), split, keys,
                                            n_parts, within)
        kt = tuple(sorted(kinds.items()))
        specs = tuple(Spec(named[i][1].text, time_unit, kt, wp.plans[i].engine, split, keys,
                           partial and split != "single",
                           t0=t0, width=width, numbers=numbers) for i in members)
        wspec = WorkloadSpec(specs)
        raw = S.map_in_arrow(ordered, lambda it, w=wspec: run_shared(w, it), S.ddl_string(_columns(wspec)))
        raw = raw.persist(StorageLevel.MEMORY_AND_DISK)
        for k, (i, spec) in enumerate(zip(members, specs)):
            mine = raw.filter(F.col("__q") == k).select(
                *[F.col(S.quoted(f"__{k}:{c}")).alias(c) for c, _ in out_columns(spec)])
            out = merge_results(mine, named[i][1], spec, kinds)
            results[i] = in_order(out)
    for i, p in enumerate(wp.plans):
        if i not in results:
            results[i] = run(events, p.query, engine=p.engine, time_unit=time_unit, parallelism=parallelism,
                             prepared=True, numbers=numbers)
    return {named[i][0]: results[i] for i in range(len(named))}
