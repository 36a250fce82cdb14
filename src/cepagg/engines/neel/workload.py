"""Flat queries and nested queries' terms in one shared aseq workload, rows tagged by query.

A nested aggregate query on ``neel`` is a signed sum of flat terms (:mod:`.terms`). Given which
of its terms join a workload's shared aseq plan (the planner decides:
:mod:`cepagg.plan.nested_terms`), this evaluator runs the flat queries and those terms in one
:class:`~cepagg.engines.aseq.workload.Workload` -- PreTree prefixes and Chop-Connect across
queries and terms alike -- and each nested query's other terms in its own :class:`.engine.Neel`,
which receives the shared terms' rows and combines all of them as it does alone.

The shared workload holds partial rows (terms are combined from partial cells). Without
``partial`` a flat query's rows are held and finalised the way neel holds a nested query's
(:func:`hold`): SLIDE windows once ``advance`` passes their end, WITHIN-alone totals at
``finish``. It follows the engine protocol of a workload: rows are ``(query index, row)``.
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass
from typing import Sequence

from ...events import EventBatch
from ...lang.model import Query
from ...result import Result, output_kinds
from ..aggregates import combine_rows, funcs_of, key_width, merge
from ..aseq.workload import Workload
from .engine import Neel

STATE_FORMAT = 1


def hold(query: Query, held: dict[tuple, tuple], rows: list[tuple], watermark: int | None) -> list[tuple]:
    """Merge ``query``'s partial ``rows`` into ``held`` (key -> cells); return the final rows of
    the windows ``watermark`` closes (see the module docstring)."""
    w = key_width(query)
    funcs = funcs_of(query)
    for row in rows:
        key, cells = row[:w], row[w:]
        held[key] = merge(funcs, held[key], cells) if key in held else cells
    if watermark is None or query.mode != "slide":
        return []
    groups = len(query.group_by)
    ready = [k for k in held if k[groups + 1] - 1 <= watermark]
    return combine_rows(query, [k + held.pop(k) for k in ready])


def release(query: Query, held: dict[tuple, tuple]) -> list[tuple]:
    """Every held row, final (at ``finish``)."""
    out = combine_rows(query, [k + c for k, c in held.items()])
    held.clear()
    return out


@dataclass
class SharedState:
    aseq: object
    nested: dict[int, object]
    held: dict[int, dict[tuple, tuple]]  # per flat query without ``partial``: key -> merged cells


class SharedWorkload:
    """See the module docstring. ``terms``: per nested query (index into ``queries``), the
    indices of its terms (``decompose(query).terms``) that join the shared plan; every other
    query is flat and accepted by aseq."""

    cheap_advance = True

    def __init__(self, queries: Sequence[Query], terms: dict[int, Sequence[int]], *, partial: bool = False,
                 start_range: tuple[int, int] | None = None):
        self.queries = list(queries)
        self.partial = partial
        self.nested = {j: Neel(self.queries[j], partial=partial, start_range=start_range,
                               external=frozenset(ks)) for j, ks in terms.items()}
        self.members: list[tuple[int, int | None]] = [(j, None) for j in range(len(self.queries))
                                                      if j not in terms]
        self.members += [(j, k) for j, ks in terms.items() for k in ks]
        self.aseq = Workload([self._query(m) for m in self.members], partial=True, start_range=start_range)

    def _query(self, member: tuple[int, int | None]) -> Query:
        j, k = member
        return self.queries[j] if k is None else self.nested[j].plan.terms[k].query

    def new_state(self) -> SharedState:
        flat = {j for j, k in self.members if k is None}
        return SharedState(self.aseq.new_state(), {j: e.new_state() for j, e in self.nested.items()},
                           {} if self.partial else {j: {} for j in flat})

    def _routed(self, state: SharedState, tagged: list[tuple[int, tuple]], watermark: int | None):
        """The shared workload's rows: a flat query's out (held without ``partial``), a term's
        to its nested query's engine."""
        out: list[tuple[int, tuple]] = []
        flat: dict[int, list] = {}
        for m, row in tagged:
            j, k = self.members[m]
            if k is None:
                flat.setdefault(j, []).append(row)
            else:
                out += [(j, r) for r in self.nested[j].take(state.nested[j], k, [row])]
        for j, rows in flat.items():
            out += [(j, r) for r in (rows if self.partial else hold(self.queries[j], state.held[j], rows, watermark))]
        if watermark is not None and not self.partial:
            out += [(j, r) for j, h in state.held.items() if j not in flat
                    for r in hold(self.queries[j], h, [], watermark)]
        return out

    def process(self, state: SharedState, batch: EventBatch) -> list[tuple[int, tuple]]:
        out = self._routed(state, self.aseq.process(state.aseq, batch), None)
        for j, e in self.nested.items():
            out += [(j, r) for r in e.process(state.nested[j], batch)]
        return out

    def advance(self, state: SharedState, watermark: int) -> list[tuple[int, tuple]]:
        out = self._routed(state, self.aseq.advance(state.aseq, watermark), watermark)
        for j, e in self.nested.items():
            out += [(j, r) for r in e.advance(state.nested[j], watermark)]
        return out

    def finish(self, state: SharedState) -> list[tuple[int, tuple]]:
        out = self._routed(state, self.aseq.finish(state.aseq), None)
        for j, h in state.held.items():
            out += [(j, r) for r in release(self.queries[j], h)]
        for j, e in self.nested.items():
            out += [(j, r) for r in e.finish(state.nested[j])]
        return out

    def snapshot(self, state: SharedState) -> bytes:
        return pickle.dumps((STATE_FORMAT, "neel-shared-workload", state), protocol=5)

    def restore(self, data: bytes) -> SharedState:
        version, name, state = pickle.loads(data)
        if version != STATE_FORMAT or name != "neel-shared-workload":
            raise ValueError(f"state of {name} format {version} cannot be restored")
        return state

    def run(self, batch: EventBatch) -> list[Result]:
        """Evaluate over a whole batch; one sorted result per query."""
        state = self.new_state()
        batch = batch.sorted()
        per: list[list[tuple]] = [[] for _ in self.queries]
        for j, row in self.process(state, batch) + self.finish(state):
            per[j].append(row)
        kinds = batch.attribute_kinds()
        return [Result(q.output_columns, combine_rows(q, rows) if self.partial else rows,
                       output_kinds(q, kinds)).sorted() for q, rows in zip(self.queries, per)]

    def explain(self) -> str:
        """The shared aseq plan; member ``m`` is named ``q<m>`` (flat queries first, in
        :attr:`members` order)."""
        return self.aseq.explain()
