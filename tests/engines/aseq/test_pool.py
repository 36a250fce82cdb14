"""Partitions stacked column-wise (:class:`cepagg.engines.aseq.counters.PartPool`): one kernel
call per batch for every partition must give the rows of one call per partition, whatever the
keys per batch, the batch cuts and snapshots, and when counts leave int64."""

from __future__ import annotations

import random

import pytest
from querygen import random_query
from test_exact import TYPES

from cepagg.engines import ENGINES, kernels
from cepagg.engines.aseq import runtime
from cepagg.events import EventBatch
from cepagg.lang import compile_query
from generators import cases, random_stream


def _rows(q, batch, cuts, numbers="exact"):
    eng = ENGINES["aseq"](q, numbers=numbers)
    st = eng.new_state()
    out = []
    for a, b in zip(cuts, cuts[1:]):
        out += eng.process(st, batch.slice(a, b - a))
        if b < len(batch):
            out += eng.advance(st, batch.table.column("ts")[b - 1].as_py() - 1)
        st = eng.restore(eng.snapshot(st))
    return sorted(out + eng.finish(st), key=repr)


def _alone(monkeypatch):
    monkeypatch.setattr(runtime.UnitRun, "pooled", lambda self, fam: False)


def _keyed_queries(rng):
    neg = rng.choice(["", ", NOT C", ", NOT D"])
    agg = rng.choice(["COUNT(*)", "COUNT(*), SUM(b.x), MAX(a.x)", "AVG(a.x), MIN(b.x), COUNT(b)"])
    if rng.random() < 0.4:
        return f"RETURN g, {agg} PATTERN SEQ(A a{neg}, B b, C c) WHERE [g] GROUP BY g WITHIN {rng.randint(1, 9)}"
    return f"RETURN {agg} PATTERN SEQ(A a{neg}, B b, C c) WHERE [g] WITHIN {rng.randint(1, 9)}"


@pytest.mark.parametrize("chunk", range(4))
def test_stacked_partitions_give_the_rows_of_single_ones(chunk, monkeypatch):
    rng = random.Random(7100 + chunk)
    for _ in range(cases(40, 400)):
        text = _keyed_queries(rng) if rng.random() < 0.6 else random_query(rng, modes=("total",))
        q = compile_query(text)
        rows = random_stream(rng, "ABCD", n=rng.randint(0, 40), max_gap=rng.choice([1, 2]),
                             attrs={"x": (0, 5, 0.2), "g": list(range(rng.randint(1, 12)))})
        batch = EventBatch.from_rows(rows).sorted()
        n = len(batch)
        cuts = sorted({0, n, *(rng.randint(0, n) for _ in range(rng.randint(0, 4)))})
        stacked = _rows(q, batch, cuts)
        with monkeypatch.context() as m:
            _alone(m)
            alone = _rows(q, batch, cuts)
        assert stacked == alone, (text, rows)


def test_stacked_partition_past_int64_goes_on_exactly(monkeypatch):
    """Key 1's STARTs reach 500**7 > 2**62 matches each (an overflow inside the window: that
    partition leaves the stack for the exact twin); key 2's counts stay small; the total (over
    both) is past 2**63 too."""
    n, L = 500, 8
    rows = [{"type": t, "ts": i * n + k, "g": 1} for i, t in enumerate(TYPES[:L]) for k in range(n)]
    rows += [{"type": t, "ts": i * 3 + k, "g": 2} for i, t in enumerate(TYPES[:L]) for k in range(3)]
    q = compile_query(f"PATTERN SEQ({', '.join(TYPES[:L])}) WHERE [g] RETURN COUNT(*), COUNT(A) WITHIN 100000")
    batch = EventBatch.from_rows(rows).sorted()
    assert n ** (L - 1) > 2**62
    expected = [(n**L + 3**L, n**L + 3**L)]
    assert ENGINES["aseq"](q).run(batch).rows == expected
    _alone(monkeypatch)
    assert ENGINES["aseq"](q).run(batch).rows == expected


def test_a_partition_past_int64_sums_leaves_the_stacked_ones_their_window_sums():
    """Key 0's SUM outgrows int64 inside the stacked run: that partition drops its window sums
    and goes on alone; the 99 keys stacked after it still keep theirs (the plan's ``sums`` is set
    again for them), and their windows of one START, still open at the end, count."""
    q = compile_query("RETURN COUNT(*), SUM(b.x) PATTERN SEQ(A a, B b) WHERE [g] WITHIN 100")
    rows = [{"type": "A", "ts": 0, "g": 0, "x": 1}]
    rows += [{"type": "B", "ts": 1 + k, "g": 0, "x": 2**61} for k in range(8)]
    for g in range(1, 100):
        rows += [{"type": "A", "ts": 2, "g": g, "x": 1}, {"type": "B", "ts": 3, "g": g, "x": 5}]
    batch = EventBatch.from_rows(rows).sorted()
    expected = [(8 + 99, 8 * 2**61 + 99 * 5)]
    assert ENGINES["reference"](q).run(batch).rows == expected
    assert ENGINES["aseq"](q).run(batch).rows == expected


def test_a_partition_past_128_bits_leaves_the_stacked_ones_checked():
    """Key 0's SUM passes 2**125 (600**7 matches of its START, each ``h.x`` 2**62): it goes on in
    Python integers,
    unchecked; the 99 keys stacked after it are checked again (the plan's ``checked`` is set
    again for them), so their SUM of 3 * 2**62 each widens instead of wrapping."""
    types, n = "ABCDEFGH", 600
    rows = [{"type": "A", "ts": 0, "g": 0, "x": 1}]
    rows += [{"type": t, "ts": i * n + k, "g": 0, "x": 2**62 if t == "H" else 1}
             for i, t in enumerate(types[1:], start=1) for k in range(n)]
    for g in range(1, 100):
        rows += [{"type": t, "ts": 5000 + i, "g": g, "x": 2**62 if t == "H" else 1} for i, t in enumerate(types)]
        rows += [{"type": "H", "ts": 5008 + k, "g": g, "x": 2**62} for k in range(2)]
    q = compile_query(f"RETURN COUNT(*), SUM(h.x) PATTERN SEQ({', '.join(f'{t} {t.lower()}' for t in types)}) "
                      "WHERE [g] WITHIN 100000")
    batch = EventBatch.from_rows(rows).sorted()
    assert n**7 * 2**62 > 2**125
    expected = [(99 * 3 + n**7, 99 * 3 * 2**62 + n**7 * 2**62)]
    assert ENGINES["aseq"](q).run(batch).rows == expected


def test_stacked_float_mode_matches_alone(monkeypatch):
    rng = random.Random(3)
    q = compile_query("RETURN COUNT(*), SUM(b.x), AVG(a.x) PATTERN SEQ(A a, B b, C c) WHERE [g] WITHIN 6")
    rows = random_stream(rng, "ABC", n=300, attrs={"x": (0, 5, 0.0), "g": list(range(30))})
    batch = EventBatch.from_rows(rows).sorted()
    stacked = _rows(q, batch, [0, 100, 300], "float")
    _alone(monkeypatch)
    assert stacked == _rows(q, batch, [0, 100, 300], "float")
    assert stacked and all(isinstance(v, float) for r in stacked for v in r)


@pytest.mark.parametrize("text", ["RETURN COUNT(*) PATTERN SEQ(A a, B b) WHERE [g] WITHIN 6",
                                  "RETURN g, COUNT(*) PATTERN SEQ(A a, B b) WHERE [g] GROUP BY g WITHIN 6"])
def test_keyed_window_query_is_stacked(text):
    q = compile_query(text)
    eng = ENGINES["aseq"](q)
    st = eng.new_state()
    eng.process(st, EventBatch.from_rows([{"type": "A", "ts": 1, "g": 1}, {"type": "A", "ts": 2, "g": 2}]))
    unit = st.parts[0]
    assert not unit.parts and set(unit.pool.slot_of) == {(1,), (2,)}


def test_query_without_partition_attributes_runs_alone():
    """One partition only: the stack would serve it no better, and its first run would compile
    both kernels."""
    q = compile_query("RETURN COUNT(*) PATTERN SEQ(A a, B b) WITHIN 6")
    eng = ENGINES["aseq"](q)
    st = eng.new_state()
    eng.process(st, EventBatch.from_rows([{"type": "A", "ts": 1}, {"type": "B", "ts": 2}]))
    unit = st.parts[0]
    assert unit.pool is None and list(unit.parts) == [()]
    assert eng.finish(st) == [(1,)]


def _stacking_the_one_partition(monkeypatch):
    """Engines that stack every partition of a windowed total query, also the one partition of a
    query without partition attributes (snapshots of such engines are still restored)."""
    def pooled(self, fam):
        return (self.kmode == runtime.K.TOTAL and self.windowed and not self.unit.lead
                and not fam.python_values and not runtime.KERNELS_ARE_TWINS)
    monkeypatch.setattr(runtime.UnitRun, "pooled", pooled)


@pytest.mark.parametrize("text", ["RETURN COUNT(*) PATTERN SEQ(A a, B b) WITHIN 10",
                                  "RETURN COUNT(*), SUM(b.x), MAX(a.x) PATTERN SEQ(A a, B b, C c) WITHIN 10"])
def test_a_restored_stack_of_the_one_partition_goes_on_alone(text, monkeypatch):
    """A snapshot holding the one partition of a query without partition attributes in the
    stack, restored by an engine that runs that partition alone: the matches begun before the
    snapshot meet the events after it (the totals are the reference's)."""
    q = compile_query(text)
    rows = [{"type": t, "ts": ts, "x": ts} for t, ts in
            [("A", 1), ("A", 2), ("B", 3), ("C", 4), ("A", 5), ("B", 6), ("B", 7), ("C", 8), ("C", 9), ("B", 11)]]
    batch = EventBatch.from_rows(rows).sorted()
    with monkeypatch.context() as m:
        _stacking_the_one_partition(m)
        old = ENGINES["aseq"](q)
        st = old.new_state()
        old.process(st, batch.slice(0, 3))
        assert set(st.parts[0].pool.slot_of) == {()}
        snap = old.snapshot(st)
    eng = ENGINES["aseq"](q)
    st = eng.restore(snap)
    out = eng.process(st, batch.slice(3, len(batch) - 3))
    out += eng.finish(st)
    assert out == ENGINES["reference"](q).run(batch).rows


@pytest.mark.parametrize("chunk", range(2))
def test_many_and_composite_keys_give_the_reference_rows_whatever_the_batches(chunk):
    """Hundreds of keys (slots reused, the stack grown mid-batch), composite keys of an integer
    and a string with nulls (an event with a null key belongs to no partition), with and without
    GROUP BY: the rows equal the reference's, and are the same whatever the number of keys per
    batch."""
    rng = random.Random(7300 + chunk)
    for _ in range(cases(8, 80)):
        agg = rng.choice(["COUNT(*)", "COUNT(*), SUM(b.x), MAX(a.x)", "AVG(a.x), MIN(c.x), COUNT(b)"])
        where = rng.choice(["[g]", "[g, h]", "[h, g]"])
        group = rng.choice(["", "g", "h", where[1:-1]])  # (h only where it is a partition attribute)
        if group and group not in where:
            group = "g"
        head = f"{group}, {agg}" if group else agg
        text = (f"RETURN {head} PATTERN SEQ(A a, B b, C c) WHERE {where} "
                f"{f'GROUP BY {group} ' if group else ''}WITHIN {rng.randint(2, 30)}")
        q = compile_query(text)
        n = rng.randint(200, 600)
        rows = random_stream(rng, "ABC", n=n, max_gap=1,
                             attrs={"x": (0, 5, 0.2), "g": (0, rng.choice([3, 50, 400]), 0.05),
                                    "h": ["p", "q", None, "rr"]})
        batch = EventBatch.from_rows(rows).sorted()
        expected = sorted(ENGINES["reference"](q).run(batch).rows, key=repr)
        assert sorted(ENGINES["aseq"](q).run(batch).rows, key=repr) == expected, text
        for pieces in (2, 7, 40):
            cuts = sorted({0, n, *(rng.randint(0, n) for _ in range(pieces))})
            assert _rows(q, batch, cuts) == expected, (text, pieces)


@pytest.mark.parametrize("text, expected", [
    # key 1's A is its partition's only (pending) group when the watermark passes: its START
    # is still in the window and extends later events
    ("RETURN COUNT(*) PATTERN SEQ(A a, B b, C c) WHERE [g] WITHIN 4", [(1,)]),
    # a pattern of one event reads the START itself: each A is a match (key 4's only A is
    # pending when the input ends)
    ("RETURN COUNT(*), SUM(a.x) PATTERN SEQ(A a) WHERE [g] WITHIN 4", [(4, 14)]),
])
def test_a_partition_with_only_pending_events_across_a_watermark(text, expected):
    q = compile_query(text)
    rows = [{"type": "A", "ts": 1, "g": 1, "x": 5}, {"type": "A", "ts": 1, "g": 2, "x": 3},
            {"type": "B", "ts": 2, "g": 3}, {"type": "B", "ts": 3, "g": 1}, {"type": "C", "ts": 4, "g": 1},
            {"type": "A", "ts": 8, "g": 4, "x": 2}, {"type": "A", "ts": 9, "g": 2, "x": 4}]
    batch = EventBatch.from_rows(rows).sorted()
    assert ENGINES["reference"](q).run(batch).rows == expected
    for cuts in ([0, 3, 7], [0, 3, 4, 7], [0, 1, 3, 5, 7]):  # each batch: a watermark at its last time - 1
        assert _rows(q, batch, cuts) == expected, cuts


def _batches_rows(q, batches):
    eng = ENGINES["aseq"](q)
    st = eng.new_state()
    out = []
    for b in batches:
        out += eng.process(st, b)
        st = eng.restore(eng.snapshot(st))
    return sorted(out + eng.finish(st), key=repr), st


@pytest.mark.parametrize("text", ["RETURN COUNT(*), SUM(b.x) PATTERN SEQ(A a, B b, C c) WHERE [g] WITHIN 20",
                                  "RETURN g, COUNT(*) PATTERN SEQ(A a, B b, C c) WHERE [g] GROUP BY g WITHIN 20"])
def test_integer_keys_then_float_keys_of_equal_values_are_one_partition(text, monkeypatch):
    """Integer keys are found by their values (``IntIndex``); a batch whose keys are floats
    switches the stack to a dictionary, where 1.0 is the key 1 (as for partitions alone)."""
    rng = random.Random(11)
    q = compile_query(text)
    rows = random_stream(rng, "ABC", n=240, attrs={"x": (0, 5, 0.0), "g": list(range(40))})
    parts = [rows[:80], [{**r, "g": float(r["g"])} for r in rows[80:160]], rows[160:]]
    batches = [EventBatch.from_rows(p).sorted() for p in parts]
    stacked, st = _batches_rows(q, batches)
    with monkeypatch.context() as m:
        _alone(m)
        alone, _ = _batches_rows(q, batches)
    assert stacked == alone
    whole = EventBatch.from_rows(rows).sorted()
    assert stacked == sorted(ENGINES["aseq"](q).run(whole).rows, key=repr)


def test_slots_widen_when_many_partitions_outgrow_them(monkeypatch):
    """200 keys with 3 STARTs each in a window: more than a few outgrow a slot of two, and the
    stack widens its slots instead of sending them all on alone; rows as alone."""
    q = compile_query("RETURN g, COUNT(*) PATTERN SEQ(A a, B b) WHERE [g] GROUP BY g WITHIN 100")
    rows = [{"type": t, "ts": ts, "g": g} for g in range(200) for ts, t in
            [(1, "A"), (2, "A"), (3, "A"), (4, "B"), (5, "A"), (6, "B")]]
    batch = EventBatch.from_rows(rows).sorted()
    eng = ENGINES["aseq"](q)
    st = eng.new_state()
    out = eng.process(st, batch)
    unit = st.parts[0]
    assert unit.pool.cap == 4 and len(unit.parts) < 20 and len(unit.pool) + len(unit.parts) == 200
    out = sorted(out + eng.finish(st))
    assert out == [(g, 7) for g in range(200)]
    _alone(monkeypatch)
    assert sorted(ENGINES["aseq"](q).run(batch).rows) == out


def test_a_partition_gone_alone_comes_back_to_the_stack():
    """A key whose window outgrows its slot runs alone; once its STARTs have left the window it
    is stacked again (and the others never left)."""
    q = compile_query("RETURN COUNT(*) PATTERN SEQ(A a, B b) WHERE [g] WITHIN 10")
    first = [{"type": "A", "ts": ts, "g": 1} for ts in range(1, 6)] + [{"type": "A", "ts": 1, "g": 2}]
    later = [{"type": "B", "ts": 30, "g": 1}, {"type": "B", "ts": 31, "g": 1}, {"type": "B", "ts": 3, "g": 2}]
    eng = ENGINES["aseq"](q)
    st = eng.new_state()
    eng.process(st, EventBatch.from_rows(first).sorted())
    unit = st.parts[0]
    assert list(unit.parts) == [(1,)] and set(unit.pool.slot_of) == {(2,)}
    eng.process(st, EventBatch.from_rows(later).sorted())
    assert not unit.parts and set(unit.pool.slot_of) == {(1,), (2,)}
    assert eng.finish(st) == [(1,)]


def test_a_stack_saved_with_a_dictionary_of_keys_restores():
    """A stack in the layout of snapshots that kept its keys in a dictionary (``slot_of``,
    ``key_of``, a list of free slots, every slot filled) goes on as the reference."""

    from cepagg.engines.aseq.counters import TEMPLATE_FIELDS, PartPool

    rng = random.Random(5)
    q = compile_query("RETURN COUNT(*), SUM(b.x) PATTERN SEQ(A a, B b, C c) WHERE [g] WITHIN 20")
    rows = random_stream(rng, "ABC", n=200, attrs={"x": (0, 5, 0.0), "g": list(range(30))})
    batch = EventBatch.from_rows(rows).sorted()
    eng = ENGINES["aseq"](q)
    st = eng.new_state()
    out = eng.process(st, batch.slice(0, 100))
    unit = st.parts[0]
    pool = unit.pool
    for n in TEMPLATE_FIELDS:
        pool.fields[n][pool.ready:] = getattr(pool.fresh, n)
    old = {k: v for k, v in vars(pool).items() if k not in ("index", "ready", "overflows")}
    key_of = [None] * pool.slots
    for key, s in pool.items():
        key_of[s] = key
    old.update(slot_of=dict(pool.items()), key_of=key_of, free=pool.free.tolist())
    unit.pool = PartPool.__new__(PartPool)
    unit.pool.__setstate__(old)
    st = eng.restore(eng.snapshot(st))
    out += eng.process(st, batch.slice(100, 100)) + eng.finish(st)
    assert out == ENGINES["aseq"](q).run(batch).rows


def test_a_snapshot_leaves_out_the_slots_never_taken():
    q = compile_query("RETURN g, COUNT(*) PATTERN SEQ(A a, B b) WHERE [g] GROUP BY g WITHIN 50")
    first = [{"type": "A", "ts": 1, "g": g} for g in range(70)]
    later = [{"type": "B", "ts": 2, "g": g} for g in range(0, 140, 2)]
    eng = ENGINES["aseq"](q)
    st = eng.new_state()
    eng.process(st, EventBatch.from_rows(first))
    assert st.parts[0].pool.slots == 256
    st = eng.restore(eng.snapshot(st))
    assert st.parts[0].pool.slots == 70
    eng.process(st, EventBatch.from_rows(later))
    assert sorted(eng.finish(st)) == [(g, 1) for g in range(0, 70, 2)]


@pytest.mark.parametrize("chunk", range(2))
def test_batches_stacked_or_alone_by_the_threshold_give_the_same_rows(chunk, monkeypatch):
    """The threshold (``kernels.STACK_MIN_PARTITIONS``) decides per batch whether its partitions
    run stacked or alone: every batch stacked, none, or some (a first batch over few keys alone,
    a later one over many stacked beside them) give the same rows, and the reference's."""
    rng = random.Random(7400 + chunk)
    seen = set()
    for _ in range(cases(30, 300)):
        text = _keyed_queries(rng)
        q = compile_query(text)
        keys = rng.choice([3, 12, 40])
        n = rng.randint(20, 200)
        rows = random_stream(rng, "ABCD", n=n, max_gap=rng.choice([1, 2]),
                             attrs={"x": (0, 5, 0.2), "g": list(range(keys))})
        batch = EventBatch.from_rows(rows).sorted()
        n = len(batch)
        cuts = sorted({0, n, *(rng.randint(0, n) for _ in range(rng.randint(0, 5)))})
        expected = sorted(ENGINES["reference"](q).run(batch).rows, key=repr)
        outs = []
        for threshold in (1, rng.randint(2, keys), 10**9):
            monkeypatch.setattr(kernels, "STACK_MIN_PARTITIONS", threshold)
            outs.append(_rows(q, batch, cuts))
            eng = ENGINES["aseq"](q)
            st = eng.new_state()
            eng.process(st, batch)
            seen.add((threshold, st.parts[0].pool is not None))
        assert outs[0] == outs[1] == outs[2] == expected, (text, cuts, rows)
    assert (1, True) in seen and (10**9, True) not in seen  # both paths drawn


@pytest.mark.parametrize("twin", [False, True])
def test_windows_of_one_start_as_a_watermark_or_the_end_passes(twin, monkeypatch):
    """Many keys, each with a START and a later pending group when a watermark or the end of the
    input passes: the START leaves before the group or after it (then the group extends it, or a
    negation resets it), alone in its window (:func:`cepagg.engines.aseq._expiry.expire_to`
    reads its vector from its own item); rows as the reference's, compiled or twin."""
    from cepagg.engines.aseq import counters

    if twin:
        monkeypatch.setattr(runtime, "KERNELS", counters.TWIN)
    rng = random.Random(41)
    for _ in range(cases(20, 200)):
        w = rng.randint(2, 12)
        agg = rng.choice(["COUNT(*)", "COUNT(*), SUM(b.x), MAX(a.x)", "AVG(a.x), MIN(b.x), COUNT(b)"])
        neg = rng.choice(["", ", NOT C"])
        group = rng.random() < 0.4
        text = (f"RETURN {'g, ' if group else ''}{agg} PATTERN SEQ(A a{neg}, B b) WHERE [g]"
                f"{' GROUP BY g' if group else ''} WITHIN {w}")
        q = compile_query(text)
        rows = []
        for g in range(rng.randint(1, 30)):
            t = rng.randint(0, 5)
            rows.append({"type": "A", "ts": t, "g": g, "x": rng.randint(0, 5)})
            for _ in range(rng.randint(0, 3)):
                t += rng.randint(1, w + 2)
                rows.append({"type": rng.choice("ABBC"), "ts": t, "g": g, "x": rng.choice([None, 1, 4])})
        batch = EventBatch.from_rows(rows).sorted()
        n = len(batch)
        expected = sorted(ENGINES["reference"](q).run(batch).rows, key=repr)
        for cuts in ([0, n], sorted({0, n, rng.randint(0, n), rng.randint(0, n)})):
            assert _rows(q, batch, cuts) == expected, (text, rows, cuts)
