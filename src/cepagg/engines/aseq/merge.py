"""Rows of groups that span several partitions: SLIDE windows and EMIT ON CHANGE instants.

With hashed partitions (paper §3.4) a group may gather several partitions — ``[company]`` with
GROUP BY sector, ``A.id = B.id`` without GROUP BY id. Its SLIDE window is the merge of its
partitions' windows; its EMIT ON CHANGE value at an instant is the merge of its partitions'
values *at that instant*, and a partition's value changes without an event of its own when a
START expires. Partitions therefore *record* their value at every change (their own events and
expiries), and the records are replayed here against the group's instants (the times of the
events of the pattern's types in the group, docs/semantics.md §7). Both are done once every
partition has been brought to the same time (the runtime's *horizon*): the group's events must
reach the engine in time order (with Spark, partition by the group key).

Reference: Qi, Cao, Ray, Rundensteiner, "Complex Event Analytics: Online Aggregation of Stream
Sequence Patterns", SIGMOD 2014, §3.4 (HPC: "the query result is the sum over partitions"), §3.2
(output when the result changes).
"""

from __future__ import annotations

import bisect
from typing import TYPE_CHECKING

import numpy as np

from ...events import EventBatch
from .. import aggregates as aggmod
from .encode import column, partition_codes

if TYPE_CHECKING:  # pragma: no cover
    from .runtime import UnitRun


class SlideMerge:
    """Window cells per (output, group, window start), released once final."""

    def __init__(self) -> None:
        self.buf: dict[tuple, tuple[int, tuple]] = {}

    def add(self, o: int, g: tuple, ws: int, count: int, cells: tuple, funcs) -> None:
        key = (o, g, ws)
        prev = self.buf.get(key)
        self.buf[key] = (count, cells) if prev is None else (prev[0] + count, aggmod.merge(funcs, prev[1], cells))

    def pop_final(self, last_start: int) -> list[tuple]:
        """Windows starting at or before ``last_start`` (every partition is past their end)."""
        out = []
        for key in sorted((k for k in self.buf if k[2] <= last_start), key=repr):
            count, cells = self.buf.pop(key)
            out.append((key[0], key[1], key[2], cells))
        return out


class EmitMerge:
    """Per output and instant group: pending instants, pending records, current values."""

    def __init__(self) -> None:
        self.instants: dict[tuple, list[int]] = {}  # (o, ug) -> sorted times
        self.records: dict[tuple, list[tuple]] = {}  # (o, ug) -> [(t, pkey, count, cells)]
        self.current: dict[tuple, dict] = {}  # (o, g) -> {pkey: (count, cells)} (non-empty only)
        self.last: dict[tuple, tuple] = {}  # (o, g) -> last emitted values (non-empty only)
        self.members: dict[tuple, set] = {}  # (o, ug) -> groups with a value or a last row
        self.dirty: dict[tuple, set] = {}  # (o, ug) -> groups changed since the last instant

    # -- input ------------------------------------------------------------------------------------

    def add_instants(self, run: "UnitRun", batch: EventBatch) -> None:
        table = batch.table
        if table.num_rows == 0:
            return
        ts = column(table, "ts").to_numpy(zero_copy_only=False).astype(np.int64)
        types = column(table, "type").to_numpy(zero_copy_only=False)
        for o, out in enumerate(run.unit.outputs):
            q = out.plan.query
            ok = np.ones(len(ts), bool)
            for a in q.partition_by:
                ok &= column(table, a).is_valid().to_numpy(zero_copy_only=False)
            if q.event_types is not None:
                ok &= np.isin(types, list(q.event_types))
            ok &= (ts >= run.lo) & (ts < run.hi)
            ug_attrs = tuple(g.attr for g in q.group_by if g.var is None)
            codes, keys = partition_codes(table, ug_attrs)
            sel = np.nonzero(ok & (codes >= 0))[0]
            if not len(sel):
                continue
            pairs = np.unique(np.stack([codes[sel], ts[sel]], axis=1), axis=0)
            for code, t in pairs:
                lst = self.instants.setdefault((o, keys[code]), [])
                t = int(t)
                i = bisect.bisect_left(lst, t)
                if i == len(lst) or lst[i] != t:
                    lst.insert(i, t)

    def add_record(self, run: "UnitRun", o: int, pkey: tuple, t: int, count: int, cells: tuple) -> None:
        self.records.setdefault((o, _ug(run, o, pkey)), []).append((t, pkey, count, cells))

    def last_instant(self) -> int | None:
        ends = [v[-1] for v in self.instants.values() if v]
        return max(ends) if ends else None

    # -- replay -------------------------------------------------------------------------------------

    def merge(self, run: "UnitRun", horizon: int) -> list[tuple[int, tuple]]:
        """Rows for the instants before ``horizon``; records before it are applied."""
        rows: list[tuple[int, tuple]] = []
        for key in sorted(set(self.instants) | set(self.records), key=repr):
            o, ug = key
            times = self.instants.get(key, [])
            cut = bisect.bisect_left(times, horizon)
            now, later = times[:cut], times[cut:]
            recs = sorted(self.records.get(key, []), key=lambda r: r[0])
            i = 0
            dirty: set = self.dirty.pop(key, set())
            for t in now:
                while i < len(recs) and recs[i][0] <= t:
                    dirty.add(self._apply(run, o, recs[i]))
                    i += 1
                groups = self.members.get(key, set()) if run.every else dirty
                if run.every:
                    groups = set(groups) | {ug}
                for g in sorted(groups, key=repr):
                    value = self._value(run, o, g)
                    empty = run.final(o, aggmod.empty(run.funcs[o]))
                    if run.every or value != self.last.get((o, g), empty):
                        rows.append((run.unit.outputs[o].index, g + (t,) + value))
                        if value == empty:
                            self.last.pop((o, g), None)
                        else:
                            self.last[(o, g)] = value
                dirty = set()
            while i < len(recs) and recs[i][0] < horizon:
                dirty.add(self._apply(run, o, recs[i]))
                i += 1
            if dirty:
                self.dirty[key] = dirty
            rest = recs[i:]
            if later:
                self.instants[key] = later
            else:
                self.instants.pop(key, None)
            if rest:
                self.records[key] = rest
            else:
                self.records.pop(key, None)
            self._tidy(run, key)
        return rows

    def _apply(self, run: "UnitRun", o: int, rec: tuple) -> tuple:
        t, pkey, count, cells = rec
        g = run.group(o, pkey)
        cur = self.current.setdefault((o, g), {})
        if count == 0:
            cur.pop(pkey, None)
        else:
            cur[pkey] = (count, cells)
        self.members.setdefault((o, _ug(run, o, pkey)), set()).add(g)
        return g

    def _value(self, run: "UnitRun", o: int, g: tuple) -> tuple:
        parts = self.current.get((o, g), {})
        funcs = run.funcs[o]
        total = aggmod.empty(funcs)
        for _, cells in parts.values():
            total = aggmod.merge(funcs, total, cells)
        return aggmod.finalize(funcs, total)

    def _tidy(self, run: "UnitRun", key: tuple) -> None:
        """Forget groups with no value and no last row (state does not outlive windows)."""
        o, _ = key
        keep = set()
        for g in self.members.get(key, ()):
            if self.current.get((o, g)):
                keep.add(g)
            elif (o, g) in self.last:
                keep.add(g)
            else:
                self.current.pop((o, g), None)
        if keep:
            self.members[key] = keep
        else:
            self.members.pop(key, None)


def _ug(run: "UnitRun", o: int, pkey: tuple) -> tuple:
    plan = run.unit.outputs[o].plan
    return tuple(pkey[plan.partition_attrs.index(g.attr)] for g in plan.query.group_by if g.var is None)


# Reference: A-Seq (SIGMOD 2014) §3.4 (HPC); docs/semantics.md §6-7 (groups gather
# partitions; EMIT ON CHANGE instants).
