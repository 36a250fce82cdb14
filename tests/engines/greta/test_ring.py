"""The ring of start buckets doubles when full, mid-stream: every path stays exact.

Found by `cepagg bench peers` (Q1 down-trends, 100 events per window: greta 151,701, the
reference and Flink CEP 140,452): an ordered-index node still held an expired bucket's value in
the slot a live bucket moved to when the ring grew. A ring of 2 buckets makes it grow often.
"""

from __future__ import annotations

import random

import pytest

from cepagg.engines import ENGINES
from cepagg.engines.greta import _kernels as K
from cepagg.engines.greta import index as greta_index
from cepagg.engines.greta import state as greta_state
from cepagg.events import EventBatch
from cepagg.lang import compile_query
from cepagg.result import Result
from generators import cases, random_stream, seeded

QUERIES = [
    "RETURN COUNT(*), MAX(A.x) PATTERN A+ WHERE A.x > NEXT(A).x WITHIN {w}",
    "RETURN COUNT(*), SUM(B.x) PATTERN SEQ(A, B+) WHERE B.x <= NEXT(B).x WITHIN {w}",
    "RETURN g, COUNT(*) PATTERN A+ WHERE [g] AND A.x = NEXT(A).x GROUP BY g WITHIN {w}",
    "RETURN COUNT(*) PATTERN SEQ(A+, B) WHERE A.x < NEXT(A).x WITHIN {w} EMIT ON CHANGE",
    "RETURN COUNT(*) PATTERN A+ WITHIN {w}",
]


@pytest.mark.parametrize("template", QUERIES)
def test_a_growing_ring_keeps_every_path_exact(monkeypatch, template):
    monkeypatch.setattr(greta_state, "RING0", 2)
    rng = seeded(template)
    for _ in range(cases(60, 600)):
        q = compile_query(template.format(w=rng.randint(3, 14)))
        rows = random_stream(rng, "AB", n=rng.randint(5, 45), max_gap=2, attrs={"x": (0, 6), "g": ["u", "v"]})
        batch = EventBatch.from_rows(rows)
        expected = ENGINES["reference"](q).run(batch)
        for scan in (False, True):
            got = ENGINES["greta"](q, paths="scan" if scan else "index").run(batch)
            assert not expected.diff(got), (q.text, "scan" if scan else "index", rows, expected.diff(got))


@pytest.mark.parametrize("bulk", [0, 10**6])
def test_index_keys_one_run_at_a_time_or_all_at_once(monkeypatch, bulk):
    # a batch's keys enter an ordered index run by run (packed-memory re-spreads of windows of
    # slots, BULK = 0) or all at once (one merge re-spread, BULK huge): the same answers,
    # over many small batches, with watermarks between them and the ring growing
    monkeypatch.setattr(greta_state, "BULK", bulk)
    monkeypatch.setattr(greta_state, "RING0", 2)
    rng = random.Random(31 + bulk)
    for _ in range(cases(40, 400)):
        q = compile_query(rng.choice(QUERIES[:4]).format(w=rng.randint(3, 20)))
        rows = random_stream(rng, "AB", n=rng.randint(20, 70), max_gap=2, attrs={"x": (0, 40), "g": ["u", "v"]})
        batch = EventBatch.from_rows(rows).sorted()
        expected = ENGINES["reference"](q).run(batch)
        eng = ENGINES["greta"](q, paths="index")
        state, out, i = eng.new_state(), [], 0
        ts = batch.table.column("ts").to_pylist()
        while i < len(batch):
            j = min(len(batch), i + rng.randint(1, 8))
            out += eng.process(state, batch.slice(i, j - i))
            if j < len(batch):
                out += eng.advance(state, ts[j] - 1)
            i = j
        out += eng.finish(state)
        got = Result(expected.columns, out, expected.kinds).sorted()
        assert not expected.diff(got), (q.text, bulk, rows, expected.diff(got))


def test_emit_values_stay_exact_when_the_output_buffer_fills_midway():
    # a call logging more EMIT values than the output buffer holds: the kernel asks for room
    # before moving time, since a retry after a full buffer midway logged the value before the
    # move from buckets already expired (count 26 for 28 at 255 s, 300 events in one batch)
    q = compile_query("RETURN COUNT(*) PATTERN Stock S+ WHERE S.price > NEXT(S).price WITHIN 10 s EMIT ON CHANGE")
    batch = EventBatch.from_rows([{"ts": i * 1000, "type": "Stock", "price": float(i % 7)} for i in range(300)])
    expected = ENGINES["reference"](q).run(batch)
    assert len(expected.rows) > 256
    assert not expected.diff(ENGINES["greta"](q).run(batch))


@pytest.mark.parametrize("numbers", ["exact", "float"])
def test_clustered_keys_of_a_batch_share_one_respread_and_stay_exact(monkeypatch, numbers):
    # keys that walk (a price: each batch's new keys fall among the last ones) make the
    # packed-memory index re-spread windows that take several runs of a batch's keys at once;
    # the index path must give the scan path's answers, over batches of many sizes
    monkeypatch.setattr(greta_state, "BULK", 0)
    rng = random.Random(7 if numbers == "exact" else 8)
    for _ in range(cases(6, 60)):
        q = compile_query(rng.choice(QUERIES[:2]).format(w=rng.randint(30, 120)))
        x, rows, ts = 1000, [], 0
        for _ in range(rng.randint(150, 400)):
            ts += rng.randint(0, 1)
            x += rng.choice((-3, -2, -1, 1, 2, 3))
            rows.append({"type": rng.choice("AB"), "ts": ts, "x": x})
        batch = EventBatch.from_rows(rows)
        expected = ENGINES["greta"](q, paths="scan", numbers=numbers).run(batch)
        eng = ENGINES["greta"](q, paths="index", numbers=numbers)
        state, out, i = eng.new_state(), [], 0
        while i < len(batch):
            j = min(len(batch), i + rng.randint(1, 60))
            out += eng.process(state, batch.slice(i, j - i))
            if j < len(batch):
                out += eng.advance(state, rows[j]["ts"] - 1)
            i = j
        out += eng.finish(state)
        got = Result(expected.columns, out, expected.kinds).sorted()
        if numbers == "exact":
            assert not expected.diff(got), (q.text, rows, expected.diff(got))
        else:
            assert len(got.rows) == len(expected.rows), q.text
            for g, e in zip(got.rows, expected.rows):
                for a, b in zip(g, e):
                    assert a == b or abs(a - b) <= 1e-9 * abs(b), (q.text, g, e)


def _leaves_at_their_slots(st) -> bool:
    """Put graph ``st``'s leaves back in the layout where each sat at its slot's row (tags of two
    columns), as a snapshot of that layout holds them; whether any leaf had left its slot's row."""
    a, R = st.a, st.R
    LT = a["LT"]
    moved = False
    out = {k: a[k].copy() for k in ("LI", "LF", "LM")}
    tags = LT[:, :2].copy()
    for ix in range(len(a["IDX"])):
        lo, C = int(a["IDX"][ix, K.IX_LOFF]), int(a["IDX"][ix, K.IX_N])
        for i in range(C):
            leaf = lo + int(LT[lo + i, greta_index.LEAF])
            moved |= leaf != lo + i
            for k in out:
                out[k][(lo + i) * R:(lo + i + 1) * R] = a[k][leaf * R:(leaf + 1) * R]
            tags[lo + i] = LT[leaf, :2]
    for k, v in out.items():
        a[k] = v
    a["LT"] = tags
    return moved


@pytest.mark.parametrize("numbers", ["exact", "float"])
def test_a_snapshot_with_leaves_at_their_slots_is_restored(monkeypatch, numbers):
    # leaves are numbered apart from slots (a key that moves takes its leaf's number); a
    # snapshot of the layout where leaf and slot were one row restores into the numbered one
    monkeypatch.setattr(greta_state, "BULK", 0)
    rng = random.Random(11)
    q = compile_query(QUERIES[0].format(w=90))
    x, rows, ts = 1000, [], 0
    for _ in range(400):
        ts += rng.randint(0, 1)
        x += rng.choice((-3, -2, -1, 1, 2, 3))
        rows.append({"type": "A", "ts": ts, "x": x})
    batch = EventBatch.from_rows(rows)
    expected = ENGINES["greta"](q, paths="scan", numbers=numbers).run(batch)
    eng = ENGINES["greta"](q, paths="index", numbers=numbers)
    state, out, moved = eng.new_state(), [], False
    for i in range(0, len(batch), 40):
        out += eng.process(state, batch.slice(i, 40))
        if i + 40 < len(batch):
            out += eng.advance(state, rows[i + 40]["ts"] - 1)
        for part in state.partitions.values():
            for sub in part.subs.values():
                moved |= _leaves_at_their_slots(sub.state)
        state = eng.restore(eng.snapshot(state))
    out += eng.finish(state)
    assert moved  # (keys moved between slots: the conversion had leaves to put back)
    got = Result(expected.columns, out, expected.kinds).sorted()
    assert len(got.rows) == len(expected.rows)
    for g, e in zip(got.rows, expected.rows):
        for a, b in zip(g, e):
            assert a == b or abs(a - b) <= 1e-9 * abs(b), (g, e)
