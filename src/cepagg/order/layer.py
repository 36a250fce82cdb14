"""The ordering layer: out-of-order arrival in front of any in-order engine.

Engines consume events in time order per partition (:mod:`cepagg.engines.base`). The layer
takes an *arrival sequence* (:mod:`.stream`) and drives an engine through the protocol only
(``process``, ``advance``, ``finish``, ``snapshot``/``restore``), with one of three strategies
(ch. 3, §3.5-3.6 of Mo Liu, "Extending Event Sequence Processing: New Models and Optimization
Techniques", PhD dissertation, WPI, 2012; their correctness levels are in docs/semantics.md §12):

``kslack`` (delayed correctness)
    Events wait in a buffer until the clock (largest time arrived: per lane, or over the
    whole stream) has passed them by K: an event with ``ts <= clock - K - 1`` is released, in
    (ts, id) order, and the engine is told no event at or before ``clock - K - 1`` will come.
    Rows the engine then returns are final and emitted once. An event with lateness <= K is in
    time; a later one goes to the late-event policy.

``conservative`` (delayed unsorted correctness)
    Events are released once punctuations cover them for every type the query mentions (the
    *frontier*), and the engine's state is advanced, and so purged, on punctuations only. A
    match whose events have all arrived is emitted as soon as the punctuations of the types
    that could still invalidate it (negated types, up to the end of their gap) have passed:
    the layer evaluates the buffered events on a copy of the engine state and emits only
    such certain matches. Nothing emitted is ever revised.

``aggressive`` (convergent unsorted correctness)
    Every event is evaluated at once on a *speculative* engine state (the safe state plus
    every buffered event, in order, advanced to ``clock - 1``), and whatever an in-order
    engine would have reported by then is emitted. A late event makes the layer restore the
    safe state (a snapshot) and replay the buffered events with it; the new view is diffed
    with what was emitted: new rows, revisions and retractions for aggregates, insertions and
    deletions of matches. The safe state is a K-slack state with K = the lateness bound L:
    history older than ``clock - L`` is folded into it and never revised again.

Each lane (:mod:`.shape`) has its own engine state, buffer and emitted view. All strategies
share the unit bookkeeping: the view of a lane is a set of units; units whose every input
is complete (their *seal time* is at or before the frontier) are emitted one last time and
forgotten, which bounds the layer's memory.
"""

from __future__ import annotations

import bisect
import copy
import pickle
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any

import pyarrow as pa

from ..events import ID, Event, EventBatch
from ..lang.model import Query
from .output import Output
from .policy import LateLog, check_policy
from .purge import negated_types, purgeable, sequence_of
from .shape import ALL, INF, NEG, Shape
from .stream import Punctuation

STRATEGIES = ("kslack", "conservative", "aggressive")
#: version of the stored layer state (each engine state inside has its own, in its snapshot)
LAYER_FORMAT = 1
CLOCKS = ("key", "global")


@dataclass
class Lane:
    safe: Any  # engine state: every event with ts <= safe_to, in order, advanced to safe_to
    safe_to: int = NEG
    buffer: list = field(default_factory=list)  # [(ts, id, values)] sorted, all ts > safe_to
    clock: int = NEG  # largest ts arrived in this lane
    top: int = NEG  # largest ts of any event the lane holds
    journal: Any = None  # units returned by the safe state's process/advance, not yet sealed
    spec: Any = None  # speculative state: safe + buffer[: through spec_upto], advanced to spec_w
    spec_journal: Any = None
    spec_upto: tuple = (NEG, NEG)
    spec_w: int = NEG
    spec_stale: bool = False
    published: Any = None  # emitted units not yet sealed: {key: row} or Counter of matches
    revisions: dict = field(default_factory=dict)  # aggregate key -> last revision number
    numbers: dict = field(default_factory=dict)  # match identity -> numbers of its live copies
    sealed_to: int = NEG  # units with seal time <= this are final and forgotten
    view_to: int = NEG  # frontier at the last evaluation of this lane's matches
    recent: list = field(default_factory=list)  # (ts, type) released within a window (for purging)
    purged_at: int = -1  # punctuation version of the last purge


@dataclass
class LayerState:
    lanes: dict = field(default_factory=dict)
    punct: dict = field(default_factory=dict)  # type or None -> t
    clock: int = NEG  # largest ts arrived, over every lane
    global_safe: int = NEG  # with a global clock: the frontier of every lane
    last_punct_frontier: int = NEG
    last_clock: int = NEG
    punct_changed: bool = False
    punct_version: int = 0
    next_match: int = 1
    match_step: int = 1  # match numbers go next_match, next_match + step, ... (unique across buckets)
    dirty: dict = field(default_factory=dict)  # lanes with news since the last tick (ordered set)
    open: dict = field(default_factory=dict)  # lanes that may still emit when time moves on
    late: LateLog = field(default_factory=LateLog)
    ignored: int = 0  # events of no lane (irrelevant type, null key attribute)
    stats: Counter = field(default_factory=Counter)
    ended: bool = False


class Layer:
    """One query, one strategy, one engine: see the module docstring.

    Args:
        query: the bound query.
        strategy: "kslack", "conservative" or "aggressive".
        schema: the Arrow schema of the events (columns ``_id``, ``ts``, ``type``, attributes).
        engine: engine name ("auto": the fastest that accepts the query).
        slack: K for kslack.
        lateness: L for aggressive (None: unbounded, history is never folded).
        clock: "key" (a clock per lane, as the chapter's K-slack) or "global".
        on_late: "drop", "output" or "fail" (:mod:`.policy`).
        purge: conservative only: drop buffered events that punctuations prove can never match
            (Algorithm 2, :mod:`.purge`).
    """

    def __init__(self, query: Query, strategy: str, schema: pa.Schema, *, engine: str = "auto",
                 slack: int | None = None, lateness: int | None = None, clock: str = "key",
                 on_late: str = "drop", purge: bool = True, numbers: str = "exact"):
        from ..plan import plan

        if strategy not in STRATEGIES:
            raise ValueError(f"ordering strategy {strategy!r}: expected one of {', '.join(STRATEGIES)}")
        if clock not in CLOCKS:
            raise ValueError(f"clock {clock!r}: expected 'key' or 'global'")
        if strategy == "kslack" and (slack is None or slack < 0):
            raise ValueError("kslack needs a slack K >= 0")
        if lateness is not None and lateness < 0:
            raise ValueError("the lateness bound must be >= 0")
        self.q = query
        self.strategy = strategy
        self.slack = slack
        self.lateness = lateness
        self.clock_mode = clock
        self.on_late = check_policy(on_late)
        self.plan = plan(query, engine, numbers)
        self.engine = self.plan.build()
        self.shape = Shape(query)
        self.schema = schema
        self.names = schema.names
        self.i_ts, self.i_id, self.i_type = (self.names.index(n) for n in ("ts", ID, "type"))
        self.attrs = [(i, n) for i, n in enumerate(self.names) if n not in ("ts", ID, "type")]
        self.purge_seq = sequence_of(query) if strategy == "conservative" and purge else None
        if self.purge_seq is not None:
            self.purge_types = set(self.purge_seq) - negated_types(query)

    # -- state --------------------------------------------------------------------------------

    def new_state(self) -> LayerState:
        return LayerState()

    def snapshot(self, st: LayerState) -> bytes:
        """The layer's state as bytes, every lane's engine states (safe and speculative) as the
        engine's own versioned snapshots: what a state store keeps (:mod:`cepagg.spark.order`)."""
        snap = self.engine.snapshot
        lanes = {key: replace(lane, safe=snap(lane.safe), spec=None if lane.spec is None else snap(lane.spec))
                 for key, lane in st.lanes.items()}
        return pickle.dumps((LAYER_FORMAT, replace(st, lanes=lanes)), protocol=5)

    def restore(self, data: bytes) -> LayerState:
        """The state :meth:`snapshot` stored, its engine states restored by the engine."""
        st = stored_state(data)
        for lane in st.lanes.values():
            lane.safe = self.engine.restore(lane.safe)
            if lane.spec is not None:
                lane.spec = self.engine.restore(lane.spec)
        return st

    def _new_lane(self) -> Lane:
        empty = self.shape.empty_units
        return Lane(safe=self.engine.new_state(), journal=empty(), spec_journal=empty(), published=empty())

    # -- input --------------------------------------------------------------------------------

    def admit(self, st: LayerState, rows: list[tuple], at: int) -> None:
        """Events (tuples in schema order) arriving at position ``at``, in arrival order."""
        shape = self.shape
        for values in rows:
            ts, eid, typ = values[self.i_ts], values[self.i_id], values[self.i_type]
            st.clock = max(st.clock, ts)
            ev = Event(eid, ts, typ, {n: values[i] for i, n in self.attrs})
            key = shape.lane_of(ev)
            if key is None:
                st.ignored += 1
                continue
            lane = st.lanes.get(key)
            if lane is None:
                lane = st.lanes[key] = self._new_lane()
            reason = self._late(st, lane, ts, typ)
            if reason:
                st.late.record(self.on_late, dict(zip(self.names, values)), reason, at)
                continue
            bisect.insort(lane.buffer, (ts, eid, values), key=_order)
            lane.clock = max(lane.clock, ts)
            lane.top = max(lane.top, ts)
            if lane.spec is not None and ((ts, eid) <= lane.spec_upto or ts <= lane.spec_w):
                lane.spec_stale = True
            st.dirty[key] = None

    def punctuate(self, st: LayerState, p: Punctuation, at: int) -> None:
        old = st.punct.get(p.type)
        if old is None or p.t > old:
            st.punct[p.type] = p.t
            st.punct_changed = True
            st.punct_version += 1

    def _late(self, st: LayerState, lane: Lane, ts: int, typ: str) -> str | None:
        if self.strategy == "conservative":
            bound = self._closed(st, typ)
            return f"a punctuation closed {typ} up to {bound}" if ts <= bound else None
        bound = lane.safe_to
        if self.clock_mode == "global":
            bound = max(bound, st.global_safe)
        if ts > bound:
            return None
        if self.strategy == "kslack":
            return f"time up to {bound} was already released (slack {self.slack})"
        return f"history up to {bound} was already folded (lateness bound {self.lateness})"

    def _closed(self, st: LayerState, typ: Any) -> int:
        """Punctuation of one type (ALL: every relevant type: the frontier)."""
        if typ == ALL:
            return self._punct_frontier(st)
        return max(st.punct.get(typ, NEG), st.punct.get(None, NEG))

    def _punct_frontier(self, st: LayerState) -> int:
        every = st.punct.get(None, NEG)
        rel = self.shape.relevant
        if rel is None:
            return every
        return min(max(st.punct.get(t, NEG), every) for t in rel)

    def _clock(self, st: LayerState, lane: Lane) -> int:
        return st.clock if self.clock_mode == "global" else lane.clock

    def _frontier(self, st: LayerState, lane: Lane | None) -> int:
        """Events up to this time go to the safe state, and it is final up to it."""
        f = self._punct_frontier(st)
        c = st.clock if lane is None else self._clock(st, lane)
        if c <= NEG:
            return f
        if self.strategy == "kslack":
            return max(f, c - self.slack - 1)
        if self.strategy == "aggressive" and self.lateness is not None:
            return max(f, c - self.lateness - 1)
        return f

    # -- emission -------------------------------------------------------------------------------

    def tick(self, st: LayerState, at: int) -> list[Output]:
        """Emit what the strategy allows after the input so far (call after each arrival, or
        after each micro-batch)."""
        if st.ended:
            return []
        fp = self._punct_frontier(st)
        todo = dict(st.dirty)
        moved = fp > st.last_punct_frontier or (self.clock_mode == "global" and st.clock > st.last_clock)
        if moved or (st.punct_changed and self.strategy == "conservative"):
            todo.update(st.open)
        st.punct_changed = False
        if self.clock_mode == "global":
            st.global_safe = self._frontier(st, None)
        st.last_punct_frontier, st.last_clock = fp, st.clock
        out: list[Output] = []
        for key in todo:
            out += self._work(st, key, st.lanes[key], at, final=False)
        st.dirty.clear()
        return out

    def finish(self, st: LayerState, at: int) -> list[Output]:
        """The end of the input: every remaining result, final."""
        if st.ended:
            return []
        shape = self.shape
        if not shape.matches and shape.mode == "total" and not self.q.group_by and () not in st.lanes:
            st.lanes[()] = self._new_lane()  # an ungrouped total has its row even without events
        out: list[Output] = []
        for key, lane in st.lanes.items():
            out += self._work(st, key, lane, at, final=True)
        st.ended = True
        st.open.clear()
        return out

    def _work(self, st: LayerState, key: tuple, lane: Lane, at: int, final: bool) -> list[Output]:
        f = INF if final else self._frontier(st, lane)
        released = self._release(st, lane, f, final)
        if self.purge_seq is not None and not final and lane.purged_at < st.punct_version and lane.buffer:
            self._purge(st, lane)
        view, full = self._view(st, lane, f, final, released)
        out = self._diff(st, lane, view, full, at)
        self._seal(lane, f)
        if lane.buffer or lane.safe_to < lane.top + self.shape.span or \
                (self.strategy == "aggressive" and lane.spec_w < lane.top + self.shape.span):
            st.open[key] = None
        else:
            st.open.pop(key, None)
        return out

    def _release(self, st: LayerState, lane: Lane, f: int, final: bool) -> bool:
        """Move buffered events up to the frontier into the safe state (in order)."""
        if not final and f <= lane.safe_to:
            return False
        eng = self.engine
        if lane.spec is not None and not lane.spec_stale and not final:
            self._ensure_spec(st, lane)  # the speculative state must see these events before they leave the buffer
        k = bisect.bisect_right(lane.buffer, (f, INF), key=_order)
        ready, lane.buffer = lane.buffer[:k], lane.buffer[k:]
        rows: list[tuple] = []
        if ready:
            rows += eng.process(lane.safe, self._batch(ready))
            st.stats["released"] += len(ready)
        if final:
            rows += eng.finish(lane.safe)
            lane.spec = None
        elif ready or lane.safe_to < lane.top + self.shape.span:
            rows += eng.advance(lane.safe, f)
        lane.safe_to = f
        self._add(lane.journal, rows)
        if self.purge_seq is not None:
            keep = f - self.q.within + 2
            lane.recent = [x for x in lane.recent if x[0] >= keep] + \
                [(e[0], e[2][self.i_type]) for e in ready if e[0] >= keep]
        if self.strategy == "conservative" and not lane.buffer:
            lane.spec, lane.spec_journal = None, self.shape.empty_units()  # the look-ahead is the safe state
        return bool(ready)

    def _purge(self, st: LayerState, lane: Lane) -> None:
        """Drop buffered events that can never be part of a match (Algorithm 2)."""
        lane.purged_at = st.punct_version
        present: dict = {}
        for ts, typ in lane.recent:
            present.setdefault(typ, []).append(ts)
        for e in lane.buffer:
            present.setdefault(e[2][self.i_type], []).append(e[0])
        for v in present.values():
            v.sort()
        closed = {t: self._closed(st, t) for t in set(self.purge_seq)}
        w = self.q.within
        keep = [e for e in lane.buffer if e[2][self.i_type] not in self.purge_types
                or not purgeable(self.purge_seq, e[2][self.i_type], e[0], closed, present, w)]
        if len(keep) < len(lane.buffer):
            st.stats["purged"] += len(lane.buffer) - len(keep)
            lane.buffer = keep
            if lane.spec is not None:
                lane.spec_stale = True

    def _view(self, st: LayerState, lane: Lane, f: int, final: bool, released: bool):
        """The lane's current set of units the strategy may show, and whether it is complete
        (so that an emitted unit missing from it has really vanished)."""
        shape = self.shape
        if final:
            return lane.journal, True
        if self.strategy == "aggressive":
            return self._speculative_view(st, lane, f), True
        if not shape.matches:
            return lane.journal, False  # rows the safe state returned: final at f
        if self.strategy == "kslack":
            if not released and f <= lane.view_to:
                return lane.journal, False
            lane.view_to = f
            units = lane.journal + shape.units(self._peek(st, lane.safe))
            return Counter({u: n for u, n in units.items() if shape.seal_time(u) <= f}), False
        # conservative: matches are certain once the types that can invalidate them are closed
        look = self._ensure_spec(st, lane) if lane.buffer or lane.spec is not None else lane.safe
        journal = lane.spec_journal if look is lane.spec else lane.journal
        units = journal + shape.units(self._peek(st, look))
        certain = Counter({u: n for u, n in units.items()
                           if all(self._closed(st, t) >= need for t, need in shape.requirement(u).items())})
        return certain, True

    def _speculative_view(self, st: LayerState, lane: Lane, f: int):
        shape, eng = self.shape, self.engine
        spec = self._ensure_spec(st, lane)
        w = max(self._clock(st, lane) - 1, f)
        if w > lane.spec_w:
            self._add(lane.spec_journal, eng.advance(spec, w))
            lane.spec_w = w
        if not shape.matches:
            if shape.mode != "total":
                return lane.spec_journal
            return shape.units(self._peek(st, spec))  # running totals
        units = lane.spec_journal + shape.units(self._peek(st, spec))
        return Counter({u: n for u, n in units.items()
                        if max(shape.requirement(u).values(), default=NEG) <= w})

    def _ensure_spec(self, st: LayerState, lane: Lane):
        """The safe state plus every buffered event: continued when the new events come after
        the ones it has, else rebuilt from a snapshot of the safe state (a rollback)."""
        eng = self.engine
        if lane.spec is None or lane.spec_stale:
            if lane.spec is not None:
                st.stats["rollbacks"] += 1
                st.stats["replayed"] += len(lane.buffer)
            lane.spec = eng.restore(eng.snapshot(lane.safe))
            lane.spec_journal = copy.copy(lane.journal)
            lane.spec_upto, lane.spec_w, lane.spec_stale = (NEG, NEG), lane.safe_to, False
            todo = lane.buffer
        else:
            todo = lane.buffer[bisect.bisect_right(lane.buffer, lane.spec_upto, key=_order):]
        if todo:
            self._add(lane.spec_journal, eng.process(lane.spec, self._batch(todo)))
            lane.spec_upto = _order(todo[-1])
            st.stats["speculated"] += len(todo)
        return lane.spec

    def _peek(self, st: LayerState, state: Any) -> list[tuple]:
        """Everything the engine would return if the input ended now (on a copy)."""
        st.stats["peeks"] += 1
        eng = self.engine
        return eng.finish(eng.restore(eng.snapshot(state)))

    def _add(self, units, rows: list[tuple]) -> None:
        """Add engine rows to a journal (a Counter adds match counts, a dict replaces rows)."""
        if rows:
            units.update(self.shape.units(rows))

    def _diff(self, st: LayerState, lane: Lane, view, full: bool, at: int) -> list[Output]:
        """Outputs that turn what was emitted into ``view``. Only aggressive revises; for the
        other strategies a change of an emitted unit would be a bug, and is raised as one."""
        shape = self.shape
        revise = self.strategy == "aggressive"
        sealed = lane.sealed_to
        out: list[Output] = []
        clock = st.clock
        pub = lane.published
        if not shape.matches:
            for key, row in view.items():
                if shape.seal_time(key) <= sealed:
                    continue
                old = pub.get(key)
                if old == row:
                    continue
                if old is not None and not revise:
                    raise RuntimeError(f"{self.strategy} would revise {old} to {row}")
                rev = lane.revisions.get(key, -1) + 1
                out.append(Output("row" if rev == 0 else "revision", row, rev, at, clock))
                pub[key], lane.revisions[key] = row, rev
            if full:
                for key in [k for k in pub if k not in view]:
                    if not revise:
                        raise RuntimeError(f"{self.strategy} would retract {pub[key]}")
                    rev = lane.revisions[key] + 1
                    out.append(Output("retract", shape.retract_row(key), rev, at, clock))
                    lane.revisions[key] = rev
                    del pub[key]
            st.stats["outputs"] += len(out)
            return out
        for ident, n in view.items():
            if shape.seal_time(ident) <= sealed:
                continue
            have = pub.get(ident, 0)
            for _ in range(n - have):
                number = st.next_match
                st.next_match += st.match_step
                lane.numbers.setdefault(ident, []).append(number)
                out += [Output("insert", r, 0, at, clock) for r in shape.match_rows(ident, number)]
            if n < have:
                out += self._delete(lane, ident, have - n, at, clock)
            pub[ident] = n
        if full:
            for ident in [u for u in pub if u not in view]:
                out += self._delete(lane, ident, pub[ident], at, clock)
                del pub[ident]
        st.stats["outputs"] += len(out)
        return out

    def _delete(self, lane: Lane, ident, k: int, at: int, clock: int) -> list[Output]:
        if self.strategy != "aggressive":
            raise RuntimeError(f"{self.strategy} would delete the match {ident}")
        out = []
        for _ in range(k):
            number = lane.numbers[ident].pop()
            out += [Output("delete", r, 1, at, clock) for r in self.shape.match_rows(ident, number)]
        return out

    def _seal(self, lane: Lane, f: int) -> None:
        """Forget units that can no longer change (the layer's state stays bounded)."""
        if f <= lane.sealed_to:
            return
        seal = self.shape.seal_time
        for units in (lane.journal, lane.spec_journal, lane.published):
            for u in [u for u in units if seal(u) <= f]:
                del units[u]
        for d in (lane.revisions, lane.numbers):
            for u in [u for u in d if seal(u) <= f]:
                del d[u]
        lane.sealed_to = f

    # -- helpers --------------------------------------------------------------------------------

    def _batch(self, events: list) -> EventBatch:
        cols = list(zip(*(e[2] for e in events)))
        arrays = [pa.array(list(c), type=f.type) for c, f in zip(cols, self.schema)]
        return EventBatch(pa.Table.from_arrays(arrays, schema=self.schema), self.q.time_unit)

    def buffered(self, st: LayerState) -> int:
        return sum(len(l.buffer) for l in st.lanes.values())

    def tracked(self, st: LayerState) -> int:
        return sum(len(l.published) + len(l.journal) + len(l.spec_journal or ()) for l in st.lanes.values())


def _order(e: tuple) -> tuple:
    return (e[0], e[1])


def stored_state(data: bytes) -> LayerState:
    """The layer state of :meth:`Layer.snapshot` with its engine states left as snapshots: enough
    for readers of the bookkeeping (late events, statistics)."""
    version, st = pickle.loads(data)
    if version != LAYER_FORMAT:
        raise ValueError(f"ordering-layer state of format {version} cannot be read by format {LAYER_FORMAT}: "
                         "start the query with a new checkpoint")
    return st
