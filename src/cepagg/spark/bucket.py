"""One hash bucket of a streaming query between micro-batches: its buffered events, its engine
state and its bookkeeping, and the steps the stateful operator takes on it.

The operator (:mod:`cepagg.spark.streaming`) speaks to Spark: it reads the bucket from the
state store, hands it the events and the watermark of a call, registers the timers the bucket
asks for and writes the rows out. What happens in between is here, without Spark:

* :func:`admit` buffers a call's events; those at or before the time the engine was already
  told is closed are late (counted with samples, or the run fails: :class:`LateEvent`);
* :func:`release` gives the engine, in time order, the buffered events the watermark has
  passed (K-slack with K = the watermark's delay), then tells it how far time has advanced,
  and returns the rows of the windows that closed;
* :func:`wake_times` are the watermarks at which the bucket has work again (its oldest
  buffered event, the end of its last open window);
* :func:`revise` numbers the revisions of WITHIN-alone totals per group.

The engine is any :class:`cepagg.engines.base.Engine`; the bucket knows it only through
``new_state``, ``process``, ``advance``, ``finish``, ``snapshot`` and ``restore``.
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass, field, replace
from typing import Any

import pyarrow as pa
import pyarrow.compute  # noqa: F401  (pa.compute)

from ..events import EventBatch
from ..lang.model import TIME_UNITS_MS, Query
from .sources import END_TS_MS, END_TYPE

END_WATERMARK_MS = END_TS_MS - 10**12  # a watermark beyond this means the input has ended
#: late events kept as samples per bucket (the count has them all)
LATE_SAMPLES = 10


class LateEvent(RuntimeError):
    """An event arrived after its time was closed, and the run was told to fail on that."""


@dataclass
class BucketState:
    engine_state: Any
    pending: list[pa.Table] = field(default_factory=list)
    released_to: int | None = None  # events up to this time have gone to the engine
    close_by: int | None = None  # time (stream unit) by which every open window has closed
    revisions: dict = field(default_factory=dict)
    ended: bool = False
    advanced_to: int | None = None  # the engine was told no event at or before this time comes
    late: int = 0  # events that came after their time had been closed
    late_samples: list = field(default_factory=list)


#: version of the stored bucket layout (the engine's state has its own, in its snapshot)
BUCKET_FORMAT = 1


def pack_bucket(engine, st: BucketState) -> bytes:
    """A bucket as the state store keeps it: the driver's bookkeeping pickled, the engine's
    state as the engine's own versioned snapshot (never the engine's objects pickled here)."""
    return pickle.dumps((BUCKET_FORMAT, replace(st, engine_state=None), engine.snapshot(st.engine_state)),
                        protocol=5)


def unpack_bucket(data: bytes, engine=None) -> BucketState:
    """The bucket of :func:`pack_bucket`; its engine state restored by ``engine`` (left as the
    snapshot's bytes without one, for readers of the bookkeeping such as the count of late
    events)."""
    version, st, snapshot = pickle.loads(data)
    if version != BUCKET_FORMAT:
        raise ValueError(f"stream state of bucket format {version} cannot be read by format {BUCKET_FORMAT}: "
                         "start the query with a new checkpoint")
    st.engine_state = engine.restore(snapshot) if engine is not None else snapshot
    return st


def admit(st: BucketState, table: pa.Table, on_late: str = "count") -> None:
    """Buffer new events (columns ``ts``, ``type``, ...); those whose time the engine has
    already closed are late: counted with up to :data:`LATE_SAMPLES` samples (``on_late``
    "count") or refused (``"fail"``, :class:`LateEvent`)."""
    if st.advanced_to is not None:
        late_mask = pa.compute.less_equal(table.column("ts"), st.advanced_to)
        late = table.filter(late_mask)
        if late.num_rows:
            if on_late == "fail":
                raise LateEvent(f"{late.num_rows} event(s) arrived after time {st.advanced_to} "
                                f"was closed, e.g. {late.slice(0, 1).to_pylist()[0]}")
            st.late += late.num_rows
            room = LATE_SAMPLES - len(st.late_samples)
            st.late_samples += late.slice(0, max(0, room)).to_pylist()
            table = table.filter(pa.compute.invert(late_mask))
    if table.num_rows:
        st.pending.append(table)


def release(st: BucketState, engine, query: Query, time_unit: str, watermark_ms: int,
            check=None) -> list[tuple]:
    """The rows the engine gives once the watermark is ``watermark_ms``: the buffered events
    before it are processed in time order, then the engine advances to it (or, past
    :data:`END_WATERMARK_MS`, finishes: the input has ended). ``check(batch)``, when given,
    sees each batch before the engine does (e.g. refusing events typed by a concept)."""
    if st.ended:
        return []
    unit = TIME_UNITS_MS[time_unit]
    ended = watermark_ms > END_WATERMARK_MS
    rows: list[tuple] = []
    ready = _take_ready(st, None if ended else (watermark_ms - 1) // unit)
    if ready is not None and ready.num_rows:
        batch = EventBatch(ready, time_unit).sorted()
        if check is not None:
            check(batch)
        rows += engine.process(st.engine_state, batch)
        top = int(pa.compute.max(ready.column("ts")).as_py())
        st.released_to = top if st.released_to is None else max(st.released_to, top)
        st.close_by = st.released_to + (query.within or 0) + (query.slide or 0) + 1
    if ended:
        rows += engine.finish(st.engine_state)
        st.ended = True
        st.engine_state = engine.new_state()
    elif watermark_ms > 0:
        st.advanced_to = (watermark_ms - 1) // unit
        rows += engine.advance(st.engine_state, st.advanced_to)
    return rows


def _take_ready(st: BucketState, limit: int | None) -> pa.Table | None:
    """The buffered events at or before ``limit`` (all of them for None), taken out of the
    buffer; the end-of-stream marker is dropped (it only moved the watermark)."""
    if not st.pending:
        return None
    table = pa.concat_tables(st.pending, promote_options="default")
    table = table.filter(pa.compute.not_equal(table.column("type"), END_TYPE))
    if limit is None:
        st.pending = []
        return table
    ready_mask = pa.compute.less_equal(table.column("ts"), limit)
    rest = table.filter(pa.compute.invert(ready_mask))
    st.pending = [rest] if rest.num_rows else []
    return table.filter(ready_mask)


def wake_times(st: BucketState, time_unit: str) -> list[int]:
    """The watermarks (ms) at which the bucket has work again, also when no event comes for
    it: when its oldest buffered event can be released, and when its last open window closes."""
    if st.ended:
        return []
    unit = TIME_UNITS_MS[time_unit]
    times = []
    if st.pending:
        oldest = min(int(pa.compute.min(t.column("ts")).as_py()) for t in st.pending)
        times.append((oldest + 1) * unit)
    if st.close_by is not None:
        times.append(st.close_by * unit)
    return times


def revise(st: BucketState, rows: list[tuple], width: int) -> list[tuple]:
    """``rows`` of a total that is revised as events come, each with its revision number, one
    more than the last of its group (the first ``width`` columns): the sink keeps the highest."""
    tagged = []
    for r in rows:
        g = tuple(r[:width])
        st.revisions[g] = st.revisions.get(g, -1) + 1
        tagged.append(r + (st.revisions[g],))
    return tagged
