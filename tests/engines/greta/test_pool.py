"""Stacked graphs (:mod:`cepagg.engines.greta.pool`): partitions run by one kernel call per
batch return what the reference returns and what every partition run alone returns, over many
keys, several batches, watermarks, snapshots in between, and partitions that outgrow the stack
(their graphs leave it and go on alone)."""

from __future__ import annotations

import math
import random

import pytest
from patterns import ATTRS, keyed, random_query

from cepagg.engines import ENGINES, kernels
from cepagg.engines.greta import Greta
from cepagg.engines.greta.engine import POOLED_CAPACITY
from cepagg.engines.keys import IntIndex
from cepagg.events import EventBatch
from cepagg.lang import compile_query
from cepagg.result import Result
from generators import cases, random_stream
from helpers import run_in_pieces


def _stream(rng: random.Random, types: str, keys: int, n: int, hot: float) -> list[dict]:
    """``n`` events over ``keys`` keys; a share ``hot`` of them on key 0 (a partition that
    outgrows the stack's capacities)."""
    rows = random_stream(rng, types, n=n, max_gap=rng.choice([0, 1, 2]), attrs=ATTRS)
    for r in rows:
        r["k"] = 0 if rng.random() < hot else rng.randrange(keys)
    return rows


def _pieces(q, batch, seed: int, **kw) -> tuple[list, list[tuple], "object"]:
    eng = Greta(q, **kw)
    cuts, out = run_in_pieces(eng, batch, random.Random(seed))
    return cuts, out


def _result(expected: Result, out: list[tuple]) -> Result:
    return Result(expected.columns, out, expected.kinds).sorted()


def _close(a: tuple, b: tuple) -> bool:
    """Rows equal, their floats within 1e-9 relative (sums added in another order)."""
    return len(a) == len(b) and all(math.isclose(x, y, rel_tol=1e-9) if isinstance(x, float) and isinstance(y, float)
                                    else x == y for x, y in zip(a, b))


def _stacked(q, batch) -> bool:
    """Whether graphs of ``batch``'s partitions are stacked at its end."""
    eng = Greta(q)
    st = eng.new_state()
    eng.process(st, batch)
    return st.pool is not None and len(st.pool) > 0


@pytest.mark.parametrize("block", range(3))
def test_pooled_equals_reference_and_alone(block):
    # WITHIN alone over 20-80 keys with few events each, in batches with watermarks and
    # snapshots; pooled, alone, and pooled in the pure-Python twin all equal the reference
    pooled = 0
    for j in range(cases(40, 500)):
        seed = 2_100_000 + 10_000 * block + j
        rng = random.Random(seed)
        text, types = random_query(rng, depth=2, modes=("within", "within", "slide", "total"))
        text = keyed(text)
        keys = rng.choice([20, 40, 80])
        rows = _stream(rng, types, keys, rng.randint(keys, 3 * keys), hot=0.0)
        q = compile_query(text)
        batch = EventBatch.from_rows(rows).sorted()
        expected = ENGINES["reference"](q).run(batch)
        for kw in ({"pool": True}, {"pool": False}, {"pool": True, "pure": True}):
            cuts, out = _pieces(q, batch, seed * 7, **kw)
            got = _result(expected, out)
            assert not expected.diff(got), (text, kw, cuts, rows, expected.diff(got))
        pooled += _stacked(q, batch)
    assert pooled > cases(40, 500) // 8  # the pooled path (no negation, no index) is drawn


@pytest.mark.parametrize("numbers", ["exact", "float"])
def test_pooled_equals_alone_with_partitions_that_grow(numbers):
    # a hot key with hundreds of events beside many small ones: its graph leaves the stack
    # (vertices, start buckets and limbs outgrow it) and goes on alone; the rest stay stacked
    left = 0
    for j in range(cases(25, 300)):
        seed = 2_500_000 + j
        rng = random.Random(seed)
        text, types = random_query(rng, depth=1, modes=("within", "slide"), groups=False)
        text = keyed(text)
        rows = _stream(rng, types, 60, rng.randint(300, 600), hot=0.5)
        q = compile_query(text)
        batch = EventBatch.from_rows(rows).sorted()
        _, alone = _pieces(q, batch, seed, pool=False, numbers=numbers)
        _, pooled = _pieces(q, batch, seed, pool=True, numbers=numbers)
        if numbers == "exact":
            assert sorted(pooled) == sorted(alone), text
        else:
            assert len(pooled) == len(alone) and all(map(_close, sorted(pooled, key=repr), sorted(alone, key=repr))), \
                (text, pooled, alone)
        eng = Greta(q, numbers=numbers)
        st = eng.new_state()
        eng.process(st, batch)
        left += (0,) in st.partitions and _stacked(q, batch)
    assert left > 5  # the hot key left the stack while others stayed in it


def test_hot_key_leaves_the_stack_and_others_stay():
    q = compile_query("RETURN k, COUNT(*) PATTERN SEQ(A, B+, C) WHERE [k] GROUP BY k WITHIN 50")
    rows = [{"type": "ABC"[t % 3], "ts": t, "k": 0} for t in range(4 * POOLED_CAPACITY["vcap"])]
    rows += [{"type": "ABC"[t % 3], "ts": t, "k": 1 + t % 7} for t in range(21)]
    batch = EventBatch.from_rows(rows).sorted()
    eng = Greta(q)
    st = eng.new_state()
    eng.process(st, batch)
    assert list(st.partitions) == [(0,)]
    assert sorted(st.pool.slot_of) == [(k,) for k in range(1, 8)]
    got = sorted(eng.finish(st))
    assert got == sorted(Greta(q, pool=False).run(batch).rows) == sorted(ENGINES["reference"](q).run(batch).rows)


def test_snapshot_keeps_live_slots_only_and_restores_exactly():
    q = compile_query("RETURN COUNT(*) PATTERN SEQ(A, B+, C) WHERE [k] WITHIN 100")
    rows = [{"type": "ABC"[t % 3], "ts": t, "k": t % 20 if t < 400 else 20 + t % 10} for t in range(600)]
    batch = EventBatch.from_rows(rows)
    eng = Greta(q)
    st = eng.new_state()
    eng.process(st, batch.slice(0, 500))
    assert len(st.pool) == 30
    eng.advance(st, 499)  # keys 0-19 have left the window: their slots are freed
    assert sorted(st.pool.slot_of) == [(k,) for k in range(20, 30)]
    back = eng.restore(eng.snapshot(st))
    assert back.pool.slots == 10 and sorted(back.pool.slot_of) == sorted(st.pool.slot_of)
    for s in (st, back):
        eng.process(s, batch.slice(500, 100))
    want = Greta(q, pool=False).run(batch).rows
    assert want[0][0] > 0
    assert eng.finish(back) == eng.finish(st) == want


def test_out_of_order_partition_is_refused():
    from cepagg.errors import InputError

    q = compile_query("RETURN COUNT(*) PATTERN SEQ(A, B) WHERE [k] WITHIN 10")
    eng = Greta(q)
    st = eng.new_state()
    eng.process(st, EventBatch.from_rows([{"type": "A", "ts": 5, "k": 1}, {"type": "A", "ts": 6, "k": 2}]))
    with pytest.raises(InputError, match=r"partition \(2,\) out of time order: time 3 after 6"):
        eng.process(st, EventBatch.from_rows([{"type": "B", "ts": 7, "k": 1}, {"type": "B", "ts": 3, "k": 2}]))


@pytest.mark.parametrize("pure", [False, True])
def test_slide_windows_close_in_the_stack_when_outputs_overflow(pure):
    # each key's two events lie in 50 windows of one slide: closing them emits more records than
    # a stacked graph's outputs hold; they are read and the call goes on (no graph leaves)
    q = compile_query("RETURN k, COUNT(*) PATTERN SEQ(A, B) WHERE [k] GROUP BY k WITHIN 100 SLIDE 1")
    rows = [{"type": "A", "ts": k, "k": k} for k in range(10)] + \
           [{"type": "B", "ts": 50 + k, "k": k} for k in range(10)]
    batch = EventBatch.from_rows(rows).sorted()
    eng = Greta(q, pure=pure)
    st = eng.new_state()
    eng.process(st, batch)
    assert len(st.pool) == 10 and not st.partitions
    out = eng.advance(st, 500)
    assert not st.partitions and len(out) == 10 * 50
    out += eng.finish(st)
    want = sorted(ENGINES["reference"](q).run(batch).rows)
    assert sorted(out) == want == sorted(Greta(q, pool=False).run(batch).rows)


def test_a_state_without_the_stack_restores_and_goes_on():
    # a state pickled before graphs were stacked has no `pool`: its partitions go on alone,
    # new keys are stacked
    import pickle

    q = compile_query("RETURN k, COUNT(*) PATTERN SEQ(A, B+, C) WHERE [k] GROUP BY k WITHIN 30")
    rows = [{"type": "ABC"[t % 3], "ts": t, "k": t % 5 if t < 150 else t % 9} for t in range(300)]
    batch = EventBatch.from_rows(rows)
    alone = Greta(q, pool=False)
    st = alone.new_state()
    alone.process(st, batch.slice(0, 150))
    rebuild, (fields, *rest) = st.__reduce__()
    old = pickle.loads(pickle.dumps(rebuild({k: v for k, v in fields.items() if k != "pool"}, *rest)))
    assert old.pool is None and sorted(old.partitions) == [(k,) for k in range(5)]
    eng = Greta(q)
    eng.process(old, batch.slice(150))
    assert sorted(old.pool.slot_of) == [(k,) for k in range(5, 9)]
    assert sorted(eng.finish(old)) == sorted(alone.run(batch).rows)


@pytest.mark.parametrize("later", ["null", "float"])
def test_integer_keys_then_other_keys_keep_every_partition(later):
    # keys of one integer are held as sorted integers; a batch with keys of another kind (or a
    # null) turns them into a dictionary of tuples, and every partition goes on where it was
    q = compile_query("RETURN k, COUNT(*) PATTERN SEQ(A, B+, C) WHERE [k] GROUP BY k WITHIN 40 SLIDE 10")
    first = [{"type": "ABC"[t % 3], "ts": t, "k": t % 5} for t in range(30)]
    other = {"null": lambda t: None if t % 4 == 0 else t % 5,
             "float": lambda t: t % 5 + (0.5 if t % 4 == 0 else 0.0)}[later]  # (3.0 is key 3)
    second = [{"type": "ABC"[t % 3], "ts": t, "k": other(t)} for t in range(30, 60)]
    eng = Greta(q)
    st = eng.new_state()
    out = eng.process(st, EventBatch.from_rows(first))
    assert isinstance(st.pool.index, IntIndex) and sorted(st.pool.slot_of) == [(k,) for k in range(5)]
    st = eng.restore(eng.snapshot(st))
    assert isinstance(st.pool.index, IntIndex) and st.pool.slot((7,)) == -1 and st.pool.slot((3,)) >= 0
    out += eng.process(st, EventBatch.from_rows(second))
    assert not isinstance(st.pool.index, IntIndex)
    out += eng.finish(st)
    batch = EventBatch.from_rows(first + second)
    want = sorted(ENGINES["reference"](q).run(batch).rows, key=repr)
    assert sorted(out, key=repr) == want == sorted(Greta(q, pool=False).run(batch).rows, key=repr)
    assert sum(r[0] == 3 for r in want) > 1


@pytest.mark.parametrize("block", range(2))
def test_batches_stacked_or_alone_by_the_threshold_give_the_same_rows(block, monkeypatch):
    # the threshold (kernels.STACK_MIN_PARTITIONS) decides per batch whether its partitions run
    # stacked or alone: every batch stacked, none, or some (a first batch over few keys alone,
    # a later one over many stacked beside them) give the same rows, and the reference's
    seen = set()
    for j in range(cases(25, 300)):
        seed = 2_700_000 + 10_000 * block + j
        rng = random.Random(seed)
        text, types = random_query(rng, depth=1, modes=("within", "slide", "total"))
        text = keyed(text)
        keys = rng.choice([4, 20, 60])
        rows = _stream(rng, types, keys, rng.randint(keys, 4 * keys), hot=rng.choice([0.0, 0.3]))
        q = compile_query(text)
        batch = EventBatch.from_rows(rows).sorted()
        expected = ENGINES["reference"](q).run(batch)
        outs = []
        for threshold in (1, rng.randint(2, keys), 10**9):
            monkeypatch.setattr(kernels, "STACK_MIN_PARTITIONS", threshold)
            cuts, out = _pieces(q, batch, seed, numbers="exact")
            outs.append(sorted(out))
            seen.add((threshold == 1, _stacked(q, batch)))
        assert outs[0] == outs[1] == outs[2], (text, cuts, rows)
        assert not expected.diff(_result(expected, outs[0])), (text, rows)
    assert (True, True) in seen and (False, False) in seen  # both paths drawn


def test_a_stacked_integer_key_met_again_as_a_float_is_the_same_partition():
    """A partition of integer key 1, stacked, met again as key 1.0 in a batch with an aggregated
    integer beyond 2**31: the stack did not find it by the float, so it was not taken out of the
    stack and ran twice, alone and stacked, and rows were lost."""
    q = compile_query("RETURN COUNT(*), SUM(S.v) PATTERN Stock S+ WHERE [k] WITHIN 1000 seconds")
    first = [{"type": "Stock", "ts": 1000 * i, "k": i % 100, "v": 1} for i in range(200)]
    second = [{"type": "Stock", "ts": 1000 * (200 + i), "k": float(i % 100), "v": 2**40 if i == 0 else 1}
              for i in range(200)]
    eng = Greta(q)
    st = eng.new_state()
    out = eng.process(st, EventBatch.from_rows(first)) + eng.process(st, EventBatch.from_rows(second))
    out += eng.finish(st)
    want = ENGINES["reference"](q).run(EventBatch.from_rows(first + second)).rows
    assert sorted(out) == sorted(want)


@pytest.mark.parametrize("numbers", ["exact", "float"])
def test_the_end_of_the_input_closes_every_stacked_window_and_empties_the_stack(numbers):
    # at the end of the input the stacked SLIDE graphs still hold window records and start
    # buckets of recent panes: the windows close in the stack, and every slot is freed
    q = compile_query("RETURN k, COUNT(*) PATTERN SEQ(A, B+, C) WHERE [k] GROUP BY k WITHIN 10 SLIDE 3")
    rows = [{"type": "ABC"[t % 3], "ts": t // 20, "k": t % 70} for t in range(2000)]
    batch = EventBatch.from_rows(rows).sorted()
    eng = Greta(q, numbers=numbers)
    st = eng.new_state()
    eng.process(st, batch)
    assert len(st.pool) == 70 and not st.partitions
    assert st.pool.closing(st.pool.live(), 2**62, 10, 3).any()
    out = sorted(eng.finish(st))
    assert len(st.pool) == 0 and not st.partitions
    want = sorted(ENGINES["reference"](q).run(batch).rows)
    assert out == want == sorted(Greta(q, pool=False, numbers=numbers).run(batch).rows)
