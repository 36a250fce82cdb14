"""The engine protocol: options that split an evaluation, state snapshots.

Every engine runs these (parametrised over ENGINES), and so does the A-Seq workload, which
implements the same protocol (:class:`cepagg.engines.base.Evaluator`) for several queries at
once; the reference defines the expected values.
"""

from __future__ import annotations

import random

import pytest

from cepagg.engines import ENGINES, Evaluator
from cepagg.engines.aggregates import combine_rows, drop_unchanged
from cepagg.engines.aseq.workload import Workload
from cepagg.errors import UnsupportedQuery
from cepagg.events import EventBatch
from cepagg.lang import compile_query
from generators import random_stream, seeded

QUERIES = [
    "RETURN COUNT(*), SUM(B.x), AVG(A.x), MAX(C.x) PATTERN SEQ(A, B, !D, C) WITHIN 6",
    "RETURN COUNT(*), MIN(A.x) PATTERN SEQ(A+, B) WITHIN 5 SLIDE 2",
    "RETURN g, COUNT(*) PATTERN SEQ(A, C) WHERE [g] GROUP BY g WITHIN 4 SLIDE 3",
    "RETURN COUNT(*), SUM(A.x) PATTERN SEQ(A, B) WITHIN 5 EMIT ON CHANGE",
    "RETURN COUNT(*) PATTERN SEQ(NOT D, A, B, NOT C) WITHIN 5",
    # a condition between variables: rcep and tree
    "RETURN COUNT(*), MAX(b.x) PATTERN SEQ(A a, B b, !D, C c) WHERE a.x < c.x WITHIN 6 SLIDE 2",
    "RETURN COUNT(*), SUM(b.x), MAX(c.x) PATTERN SEQ(A a, OR(B b, C c), D d) WITHIN 6",
    "RETURN g, COUNT(*), AVG(a.x) PATTERN SEQ(A a, AND(B b, C c), D d) WHERE [g] GROUP BY g WITHIN 5 SLIDE 2",
    "RETURN COUNT(*) PATTERN SEQ(A a, AND(B b, C c), D d) WITHIN 5",
]


def _engines(query):
    for name, cls in ENGINES.items():
        if cls.refusal(query) is None:
            yield name, cls


def _slices(rows, width):
    top = max(r["ts"] for r in rows) + 1
    return [(a, min(a + width, top + width)) for a in range(-20, top + width, width)]


@pytest.mark.parametrize("text", QUERIES)
def test_time_slices_merge_to_the_whole(text):
    rng = seeded(text)
    q = compile_query(text)
    for _ in range(15):
        rows = random_stream(rng, "ABCD", n=14, attrs={"x": (0, 9), "g": ["u", "v"]})
        batch = EventBatch.from_rows(rows)
        for name, cls in _engines(q):
            whole = cls(q).run(batch)
            parts = []
            ordered = batch.sorted()
            ts = ordered.table.column("ts").to_pylist()
            for a, b in _slices(rows, 4):
                # fed as Spark's batch driver feeds a slice: chunks in time order, each followed
                # by an advance to just below its last event
                eng = cls(q, partial=q.mode != "emit", start_range=(a, b))
                state = eng.new_state()
                cuts = sorted(rng.sample(range(1, len(ts)), rng.randint(0, 3))) + [len(ts)]
                prev = 0
                for c in cuts:
                    parts += eng.process(state, ordered.slice(prev, c - prev))
                    parts += eng.advance(state, ts[c - 1] - 1)
                    prev = c
                parts += eng.finish(state)
            merged = drop_unchanged(q, parts) if q.mode == "emit" else combine_rows(q, parts)
            got = type(whole)(whole.columns, merged, whole.kinds).sorted()
            assert not whole.diff(got), (name, text, rows, whole.diff(got))


@pytest.mark.parametrize("text", QUERIES)
def test_state_survives_a_snapshot_between_batches(text):
    rng = random.Random(7)
    q = compile_query(text)
    for _ in range(5):
        rows = random_stream(rng, "ABCD", n=14, attrs={"x": (0, 9), "g": ["u", "v"]})
        batch = EventBatch.from_rows(rows).sorted()
        for name, cls in _engines(q):
            whole = cls(q).run(batch)
            eng = cls(q)
            state = eng.new_state()
            out = eng.process(state, batch.slice(0, 7))
            state = eng.restore(eng.snapshot(state))
            out += eng.process(state, batch.slice(7))
            out += eng.finish(state)
            got = type(whole)(whole.columns, out, whole.kinds).sorted()
            assert not whole.diff(got), (name, text)


def test_named_engine_refuses_with_reason():
    q = compile_query("PATTERN SEQ(A, B)")
    with pytest.raises(UnsupportedQuery):
        ENGINES["reference"](q, partial=True)  # matches have no partial form


LAGGING = QUERIES + [
    "RETURN g, COUNT(*), MAX(A.x) PATTERN SEQ(!D, A, B) WHERE [g] GROUP BY g WITHIN 5 EMIT ON CHANGE",
    "RETURN g, COUNT(*) PATTERN SEQ(A, B+, !C) WHERE [g] GROUP BY g WITHIN 6 SLIDE 3",
]


@pytest.mark.parametrize("text", LAGGING)
def test_advance_may_lag_behind_the_last_event(text):
    """The ordering layer processes an event, then advances to just below it (a watermark may
    trail the events already given). Nothing may be lost: found by the K-slack/aggressive
    property tests, where GRETA dropped an EMIT row held back in a partition that had only
    received a negative event since."""
    rng = random.Random(11)
    q = compile_query(text)
    for _ in range(20):
        rows = random_stream(rng, "ABCD", n=15, attrs={"x": (0, 9), "g": ["u", "v"]})
        batch = EventBatch.from_rows(rows).sorted()
        ts = batch.table.column("ts").to_pylist()
        for name, cls in _engines(q):
            whole = cls(q).run(batch)
            eng = cls(q)
            state = eng.new_state()
            out = []
            for i in range(len(batch)):
                out += eng.process(state, batch.slice(i, 1))
                out += eng.advance(state, ts[i] - 1)
            out += eng.finish(state)
            got = type(whole)(whole.columns, out, whole.kinds).sorted()
            assert not whole.diff(got), (name, text, rows, whole.diff(got))


ORDER_PER_KEY = [
    "RETURN g, COUNT(*) PATTERN SEQ(A, B) WHERE [g] GROUP BY g WITHIN 10",
    "RETURN g, COUNT(*) PATTERN SEQ(A+, B) WHERE [g] GROUP BY g WITHIN 10",
    "RETURN g, COUNT(*) PATTERN SEQ(A, B) WHERE [g] GROUP BY g WITHIN 10 SLIDE 5",
    "RETURN g, COUNT(*) PATTERN SEQ(A, !C, B) WHERE [g] GROUP BY g WITHIN 10",
    "RETURN COUNT(*) PATTERN SEQ(A, B) WHERE [g] WITHIN 10 SLIDE 5",
    "RETURN g, COUNT(*) PATTERN SEQ(A, B) WHERE [g] GROUP BY g WITHIN 10 EMIT ON CHANGE",
    "RETURN COUNT(*) PATTERN SEQ(A+, B) WHERE [g] WITHIN 10 EMIT ON CHANGE",
]


@pytest.mark.parametrize("text", ORDER_PER_KEY)
def test_batches_in_order_per_partition_key_only(text):
    """Events come in stream order per partition key, not across keys: a batch may hold key v
    at time 5 and the next one key u at time 1 (each key in order). An engine that took the
    batch's last time as settled for every key counted u's later matches wrongly (GRETA, found
    in review)."""
    rows = [{"type": "A", "ts": 1, "g": "u"}, {"type": "A", "ts": 5, "g": "v"},
            {"type": "A", "ts": 1, "g": "u"}, {"type": "B", "ts": 1, "g": "u"},
            {"type": "C", "ts": 2, "g": "u"}, {"type": "B", "ts": 6, "g": "u"},
            {"type": "B", "ts": 6, "g": "v"}]
    for name, problems in _fed_in_batches(compile_query(text), [rows[:2], rows[2:]]):
        assert not problems, (name, text, problems)


def _fed_in_batches(q, batches: list[list[dict]]):
    """(engine, differences from the reference over the whole stream) for every engine that
    accepts ``q``, fed ``batches`` one after the other (ids in the order given) and finished."""
    whole = [r for b in batches for r in b]
    expected = ENGINES["reference"](q).run(EventBatch.from_rows(whole))
    for name, cls in _engines(q):
        eng = cls(q)
        state = eng.new_state()
        out, first = [], 0
        for b in batches:
            out += eng.process(state, EventBatch.from_rows(b, ids=range(first, first + len(b))))
            first += len(b)
        out += eng.finish(state)
        yield name, expected.diff(type(expected)(expected.columns, out, expected.kinds).sorted())


def _per_key_batches(rng: random.Random) -> list[list[dict]]:
    """Batches holding each key's events in its stream order, the keys' progress independent:
    a later batch often brings one key's events from before another key's last."""
    per_key = {}
    for g in "uvw":
        t, evs = 0, []
        for _ in range(rng.randint(1, 7)):
            t += rng.randint(0, 3)
            evs.append({"type": rng.choice("ABC"), "ts": t, "g": g, "h": rng.choice("xy"), "x": rng.randint(0, 4)})
        per_key[g] = evs
    batches: list[list[dict]] = []
    while any(per_key.values()):
        batch = []
        for evs in per_key.values():
            take = rng.randint(0, 3)
            batch += evs[:take]
            del evs[:take]
        if batch:
            batches.append(batch)
    return batches


ORDER_PER_KEY_RANDOM = ORDER_PER_KEY + [
    "RETURN h, COUNT(*), MAX(A.x) PATTERN SEQ(A, B) WHERE [g] GROUP BY h WITHIN 6 SLIDE 3",
    "RETURN COUNT(*), SUM(B.x) PATTERN SEQ(A, B+) WHERE [g] WITHIN 6 SLIDE 3",
    "RETURN COUNT(*) PATTERN SEQ(A, B) WHERE [g] WITHIN 6 EMIT ON CHANGE",
]


@pytest.mark.parametrize("text", ORDER_PER_KEY_RANDOM)
def test_batches_in_order_per_partition_key_only_random(text):
    """The same on random streams: aseq released windows merged over partitions (and EMIT ON
    CHANGE values over them) at each batch's last time, as if every key had reached it."""
    q = compile_query(text)
    rng = seeded(text)
    for _ in range(60):
        batches = _per_key_batches(rng)
        for name, problems in _fed_in_batches(q, batches):
            assert not problems, (name, text, batches, problems)


def test_greta_refuses_a_partition_going_back_in_time():
    """A caller that breaks the order per key gets an error naming the partition, not counts."""
    from cepagg.errors import InputError

    q = compile_query("RETURN g, COUNT(*) PATTERN SEQ(A, B) WHERE [g] GROUP BY g WITHIN 10")
    eng = ENGINES["greta"](q)
    state = eng.new_state()
    eng.process(state, EventBatch.from_rows([{"type": "A", "ts": 5, "g": "u"}]))
    eng.process(state, EventBatch.from_rows([{"type": "B", "ts": 5, "g": "u"}], ids=[1]))  # a tie: in order
    with pytest.raises(InputError, match=r"\('u',\) out of time order: time 4 after 5"):
        eng.process(state, EventBatch.from_rows([{"type": "B", "ts": 4, "g": "u"}], ids=[2]))


def _untagged(tagged: list, k: int, n: int) -> list[tuple]:
    """The rows of a workload's query ``k`` (of ``n``), without their tags."""
    assert all(isinstance(qi, int) and 0 <= qi < n for qi, _ in tagged)
    return [r for qi, r in tagged if qi == k]


WORKLOAD = [
    "RETURN COUNT(*), SUM(B.x) PATTERN SEQ(A, B, C) WITHIN 6",  # shares its prefix with QUERIES[0]
    "RETURN g, COUNT(*) PATTERN SEQ(A, C) WHERE [g] GROUP BY g WITHIN 4 SLIDE 3",
]


def _evaluators():
    """One engine of every kind and a workload, each built as a driver builds it."""
    q = compile_query(QUERIES[0])
    out = [cls(q) for _, cls in _engines(q)]
    out.append(Workload([compile_query(t) for t in [QUERIES[0]] + WORKLOAD]))
    out.append(Workload([compile_query(t) for t in WORKLOAD], partial=True, start_range=(0, 4)))
    return out


def test_engines_and_workloads_are_evaluators():
    evaluators = _evaluators()
    assert {type(e).__name__ for e in evaluators} >= {"Reference", "Aseq", "Greta", "Workload"}
    for ev in evaluators:
        assert isinstance(ev, Evaluator), type(ev).__name__
        assert isinstance(ev.cheap_advance, bool)


def test_an_object_without_snapshots_is_no_evaluator():
    class NoSnapshot:
        cheap_advance, partial, start_range = True, False, None

        def new_state(self): ...
        def process(self, state, batch): ...
        def advance(self, state, watermark): ...
        def finish(self, state): ...
        def run(self, batch): ...

    assert not isinstance(NoSnapshot(), Evaluator)


def test_workload_state_survives_a_snapshot_between_batches():
    """The workload through the protocol as a driver uses it (process, snapshot, restore,
    process, advance, finish) gives every query the rows its engine gives alone."""
    rng = random.Random(5)
    queries = [compile_query(t) for t in [QUERIES[0]] + WORKLOAD]
    wl = Workload(queries)
    for _ in range(5):
        rows = random_stream(rng, "ABCD", n=16, attrs={"x": (0, 9), "g": ["u", "v"]})
        batch = EventBatch.from_rows(rows).sorted()
        ts = batch.table.column("ts").to_pylist()
        state = wl.new_state()
        tagged = wl.process(state, batch.slice(0, 8))
        tagged += wl.advance(state, ts[7] - 1)
        state = wl.restore(wl.snapshot(state))
        tagged += wl.process(state, batch.slice(8))
        tagged += wl.finish(state)
        for k, q in enumerate(queries):
            whole = ENGINES["reference"](q).run(batch)
            got = type(whole)(whole.columns, _untagged(tagged, k, len(queries)), whole.kinds).sorted()
            assert not whole.diff(got), (k, rows, whole.diff(got))


def test_workload_time_slices_merge_to_the_whole():
    """``partial`` and ``start_range`` mean for a workload what they mean for an engine."""
    rng = random.Random(8)
    queries = [compile_query(t) for t in [QUERIES[0]] + WORKLOAD]
    for _ in range(5):
        rows = random_stream(rng, "ABCD", n=14, attrs={"x": (0, 9), "g": ["u", "v"]})
        batch = EventBatch.from_rows(rows).sorted()
        tagged = []
        for a, b in _slices(rows, 4):
            wl = Workload(queries, partial=True, start_range=(a, b))
            state = wl.new_state()
            tagged += wl.process(state, batch) + wl.finish(state)
        for k, q in enumerate(queries):
            whole = ENGINES["reference"](q).run(batch)
            merged = combine_rows(q, [r for qi, r in tagged if qi == k])
            got = type(whole)(whole.columns, merged, whole.kinds).sorted()
            assert not whole.diff(got), (k, rows, whole.diff(got))


def test_a_workload_snapshot_is_not_an_engine_snapshot():
    """Snapshots are versioned and named: a workload refuses an engine's state and back."""
    q = compile_query(QUERIES[0])
    eng, wl = ENGINES["aseq"](q), Workload([q])
    with pytest.raises(ValueError):
        wl.restore(eng.snapshot(eng.new_state()))
    with pytest.raises(ValueError):
        eng.restore(wl.snapshot(wl.new_state()))
