"""Counts past 64 bits in the compiled kernels: 128-bit integers (two int64 limbs).

A partition that outgrows int64 goes on in the wide kernels (:mod:`cepagg.engines.aseq.wide`),
past 128 bits in the exact twin. The expected values are Python integers: closed forms
(``n**L`` matches of ``SEQ(T1..TL)`` over ``n`` events of each type, type after type) or a
dynamic program over the events of each window; random queries run wide from their first event
against the reference.
"""

from __future__ import annotations

import pickle
import random
import subprocess
import sys

import numpy as np
import pytest
from test_exact import TYPES, blocks
from test_properties import _check

from cepagg.engines import ENGINES
from cepagg.engines.aseq import counters, runtime, wide
from cepagg.events import EventBatch
from cepagg.lang import compile_query
from generators import cases
from helpers import run


@pytest.fixture
def compiled_only(monkeypatch):
    """Fail if a partition leaves the compiled kernels (for the twin); count those that go wide."""
    if counters.KERNELS_ARE_TWINS:
        pytest.skip("CEPAGG_TWINS=1 runs every partition on the twin")
    went = []

    def refuse(self):
        raise AssertionError("a partition left the compiled kernels")

    original = counters.PartState.to_wide

    def to_wide(self):
        went.append(self)
        original(self)

    monkeypatch.setattr(counters.PartState, "to_exact", refuse)
    monkeypatch.setattr(counters.PartState, "to_wide", to_wide)
    return went


def _subsequences(types: list[str], pattern: str) -> int:
    c = [1] + [0] * len(pattern)
    for t in types:
        for j in range(len(pattern), 0, -1):
            if pattern[j - 1] == t:
                c[j] += c[j - 1]
    return c[-1]


def _alternating(n: int) -> list[dict]:
    return [{"type": "AB"[i % 2], "ts": i, "x": 1} for i in range(n)]


@pytest.mark.parametrize("batches", [1, 7])
def test_slide_windows_past_int64(compiled_only, batches):
    """``SEQ(A, B, ...)`` of 12 over alternating A, B: windows of 700 events hold 73-bit counts."""
    n, L, w, s = 1000, 12, 700, 100
    pattern = ("AB" * L)[:L]
    q = compile_query(f"RETURN COUNT(*) PATTERN SEQ({', '.join(pattern)}) WITHIN {w} SLIDE {s}")
    rows = _alternating(n)
    types = [r["type"] for r in rows]
    expected = []
    for k in range(-(w // s) + 1, n // s):
        count = _subsequences(types[max(k * s, 0):k * s + w], pattern)
        if count:
            expected.append((k * s, k * s + w, count))
    assert max(r[-1] for r in expected) > 2**72
    eng = ENGINES["aseq"](q)
    st = eng.new_state()
    batch = EventBatch.from_rows(rows)
    got = []
    size = -(-n // batches)
    for a in range(0, n, size):
        got += eng.process(st, batch.slice(a, size))
        st = eng.restore(eng.snapshot(st))  # a wide partition's state round trip
    got += eng.finish(st)
    assert got == expected
    assert compiled_only


def test_emit_past_int64(compiled_only):
    n, L = 250, 8
    q = f"PATTERN SEQ({', '.join(TYPES)}) RETURN COUNT(*) WITHIN 100000 EMIT ON CHANGE"
    rows = run(q, blocks(n, L), "aseq").rows
    assert rows[-1] == ((L - 1) * n + n - 1, n**L)
    assert [r[1] for r in rows] == [n ** (L - 1) * k for k in range(1, n + 1)]
    assert compiled_only


@pytest.mark.parametrize("mode", ["", "WITHIN 100000", "WITHIN 100000 SLIDE 100000", "WITHIN 100000 EMIT ON CHANGE"])
def test_sums_and_extremes_past_int64(compiled_only, mode):
    n, L, v = 250, 8, 10**17
    rows = blocks(n, L, v)
    rows[3]["x"] = -5  # an A: MIN(A.x) is negative, SUM(A.x) loses v + 5 per match of it
    q = (f"PATTERN SEQ({', '.join(TYPES)}) RETURN COUNT(*), COUNT(B), SUM(A.x), AVG(H.x), MAX(B.x), MIN(A.x) "
         f"{mode}")
    got = run(q, rows, "aseq").rows
    per_a = n ** (L - 1)
    total = (n**L, n**L, n**L * v - per_a * (v + 5), v, v, -5)
    assert got[-1][-len(total):] == total
    assert compiled_only


def test_past_128_bits_the_twin_goes_on():
    """SUM of 9e18 over 250**8 matches: 126 bits, past the wide kernels' limit (2**125)."""
    n, L, v = 250, 8, 9 * 10**18
    q = f"PATTERN SEQ({', '.join(TYPES)}) RETURN COUNT(*), SUM(A.x) WITHIN 100000 SLIDE 100000"
    assert (n**L * v).bit_length() > 125
    assert run(q, blocks(n, L, v), "aseq").rows == [(0, 100000, n**L, n**L * v)]


def test_a_wide_partition_narrows_again(compiled_only):
    """Windows forget: once its counts are small again a partition is back on int64."""
    n, L = 250, 8
    q = compile_query(f"PATTERN SEQ({', '.join(TYPES)}) RETURN COUNT(*) WITHIN {L * n} SLIDE {L * n}")
    rows = blocks(n, L) + [{"type": t, "ts": 10 * L * n + i, "x": 1} for i, t in enumerate(TYPES)]
    eng = ENGINES["aseq"](q)
    st = eng.new_state()
    got = eng.process(st, EventBatch.from_rows(rows))
    parts = list(st.parts[0].parts.values())
    got += eng.finish(st)
    assert got == [(0, L * n, n**L), (10 * L * n, 11 * L * n, 1)]
    assert compiled_only and parts and not any(p.wide for p in parts)


def test_limbs_round_trip():
    rng = random.Random(3)
    values = [0, 1, -1, 2**63 - 1, -(2**63), 2**64, -(2**64) - 3, 2**126, -(2**127)]
    values += [rng.randint(-(2**127), 2**127 - 1) for _ in range(50)]
    a = np.array(values, object)
    limbs = wide.limbs_of(a)
    assert wide.to_object(limbs).tolist() == values
    small = np.array([5, -7, 2**62, -(2**63)], np.int64)
    assert wide.to_object(wide.limbs_of(small)).tolist() == small.tolist()
    assert wide.fits_int64(wide.limbs_of(np.array([5, -(2**63), 2**63 - 1], np.int64)))
    assert not wide.fits_int64(wide.limbs_of(np.array([2**62], np.int64)))
    assert not wide.fits_int64(wide.limbs_of(np.array([2**64], object)))


def test_snapshot_of_a_wide_partition(monkeypatch):
    """Partitions made wide mid-stream, snapshot and restore, then the rest: the rows of one run."""
    monkeypatch.setattr(runtime.UnitRun, "pooled", lambda self, fam: False)
    monkeypatch.setattr(counters, "fits_int64", lambda w, bound=0: False)  # they stay wide
    q = compile_query("RETURN g, COUNT(*), SUM(B.x), MAX(A.x) PATTERN SEQ(A, B, C) WHERE [g] GROUP BY g "
                      "WITHIN 50 SLIDE 10")
    rng = random.Random(5)
    rows = [{"type": "ABC"[rng.randrange(3)], "ts": i, "x": rng.randrange(9), "g": f"k{i % 3}"} for i in range(200)]
    batch = EventBatch.from_rows(rows)
    eng = ENGINES["aseq"](q)
    whole = eng.run(batch).rows
    st = eng.new_state()
    got = eng.process(st, batch.slice(0, 100))
    for p in st.parts[0].parts.values():
        p.to_wide()
    st = eng.restore(eng.snapshot(st))
    assert all(p.wide for p in st.parts[0].parts.values())
    got += eng.process(st, batch.slice(100, 100)) + eng.finish(st)
    assert sorted(got) == whole


def test_counts_that_fit_never_load_the_wide_kernels():
    """The wide kernels are loaded (and compiled, once per install) on a first overflow only."""
    code = ("import sys\n"
            "from cepagg.engines.aseq.engine import Aseq\n"
            "from cepagg.events import EventBatch\n"
            "from cepagg.lang import compile_query\n"
            "q = compile_query('RETURN COUNT(*), SUM(B.x) PATTERN SEQ(A, B, C) WITHIN 50 SLIDE 10')\n"
            "rows = [{'type': 'ABC'[i % 3], 'ts': i, 'x': i} for i in range(300)]\n"
            "assert Aseq(q).run(EventBatch.from_rows(rows)).rows\n"
            "print(sorted(m for m in sys.modules if m.endswith('__wide')))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip().splitlines()[-1] == "[]"


# ---------------------------------------------------------------------------------------------
# every partition wide from its first event, against the reference


@pytest.fixture
def wide_from_the_start(monkeypatch):
    """New partitions start wide and stay so; none is stacked (the stack holds int64)."""
    fresh = runtime.UnitRun._new_part

    def new_part(self, state):
        p = fresh(self, state)
        if not self.floats and not self._cache[state.kinds][0].python_values:
            p.to_wide()
        return p

    monkeypatch.setattr(runtime.UnitRun, "_new_part", new_part)
    monkeypatch.setattr(runtime.UnitRun, "pooled", lambda self, fam: False)
    monkeypatch.setattr(counters, "fits_int64", lambda w, bound=0: False)


@pytest.mark.parametrize("chunk", range(3))
def test_wide_kernels_match_reference(wide_from_the_start, chunk):
    _check(4000 + chunk, cases(60, 600))


def test_a_state_of_the_format_before_wide_partitions_goes_on_and_a_later_one_is_refused():
    q = compile_query("RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 5")
    eng = ENGINES["aseq"](q)
    first = EventBatch.from_rows([{"type": "A", "ts": 1}, {"type": "A", "ts": 2}], time_unit="s")
    second = EventBatch.from_rows([{"type": "B", "ts": 3}, {"type": "B", "ts": 4}], time_unit="s")
    st = eng.new_state()
    eng.process(st, first)
    old = pickle.dumps((1, "aseq", st), protocol=5)  # format 1: the same objects, no wide flag
    restored = eng.restore(old)
    eng.process(restored, second)
    assert eng.finish(restored) == [(4,)]
    with pytest.raises(ValueError, match="format 3 cannot be restored"):
        eng.restore(pickle.dumps((3, "aseq", eng.new_state()), protocol=5))
