"""Aggregated integers of any int64 size stay exact: an attribute beyond 2**31 switches its
partition's graph to Python integers, and every value those records take in -- the batch's
attribute columns included -- is a Python integer, so sums of values near 2**62 over trends
whose counts grow like 2**n come out exact, and every integer cell is a Python ``int``.
Checked against the reference on random patterns (keyed and keyless, every result mode,
negation, index and scan, batches with watermarks, snapshots and restores between)."""

from __future__ import annotations

import random
import re

import pytest
from patterns import ATTRS, _positive_types, keyed, random_query

from cepagg.engines import ENGINES
from cepagg.engines.greta.layout import DataKindError
from cepagg.errors import InputError
from cepagg.events import EventBatch
from cepagg.lang import compile_query
from cepagg.result import Result
from generators import cases, random_stream
from helpers import run_in_pieces

#: integers around the edges an int64 record or a float has: 2**31 (the limbs' multiplier),
#: 2**53 (floats), 2**62 and 2**63 (int64)
EDGES = [0, 1, -1, 7, 2**31 - 1, 2**31, -(2**31), 2**31 + 1, 3 * 10**9, 2**53, 2**53 + 1, -(2**53 + 1),
         2**62, 2**62 + 12345, -(2**62), 2**63 - 2, -(2**63) + 1]
# (2**63 - 1 and -2**63 themselves are the empty MIN / MAX codes: tested apart below)


def _wide(rng: random.Random) -> int:
    r = rng.random()
    if r < 0.6:
        return rng.choice(EDGES)
    if r < 0.8:
        return rng.randint(0, 5)  # small values beside big ones in the same graph
    return rng.randint(-(2**63) + 1, 2**63 - 2)


def _big_aggregates(text: str) -> str:
    """``text`` with its aggregates over ``v`` (the wide attribute) instead of ``x`` (which the
    conditions keep comparing), and a SUM over ``v`` of a positive type if it had none."""
    text = re.sub(r"\b(SUM|AVG|MIN|MAX)\((\w)\.x\)", r"\1(\2.v)", text)
    if "SUM(" not in text:
        pattern = re.split(r" WHERE | GROUP BY| WITHIN| EMIT| STRATEGY", text.split(" PATTERN ", 1)[1])[0]
        text = text.replace("COUNT(*)", f"COUNT(*), SUM({_positive_types(pattern)[0]}.v)", 1)
    return text


def _stream(rng: random.Random, types: str, n: int, attrs: dict) -> list[dict]:
    rows = random_stream(rng, types, n=n, max_gap=rng.choice([0, 1, 2]), attrs=attrs)
    for row in rows:
        if rng.random() < 0.9:
            row["v"] = _wide(rng)
    if rows and rng.random() < 0.5:  # one graph at least has a value beyond 2**31
        rows[rng.randrange(len(rows))]["v"] = rng.choice([2**62, 2**63 - 2, -(2**63) + 1, 3 * 10**9])
    return rows


def _check_cells(rows: list[tuple], text: str) -> None:
    for row in rows:
        for cell in row:
            assert not hasattr(cell, "dtype"), (text, row)  # numpy scalars, not Python numbers


@pytest.mark.parametrize("block", range(3))
def test_wide_integers_agree_with_reference(block):
    # random patterns, keyless and keyed (a batch over several keys: stacked graphs beside
    # graphs that left the stack), cut into batches with watermarks and snapshots between
    n_big = 0
    for j in range(cases(40, 600)):
        seed = 4_100_000 + 10_000 * block + j
        rng = random.Random(seed)
        text, types = random_query(rng, depth=2, modes=("total", "within", "within", "slide", "emit"))
        text = _big_aggregates(text)
        attrs = dict(ATTRS)
        if rng.random() < 0.6:
            text = keyed(text)
            keys = rng.choice([2, 4, 10])
            attrs["k"] = list(range(keys))
            n = rng.randint(keys, min(40, 5 * keys))
        else:
            n = rng.randint(6, 13)  # the oracle enumerates the trends
        rows = _stream(rng, types, n, attrs)
        q = compile_query(text)
        batch = EventBatch.from_rows(rows).sorted()
        expected = ENGINES["reference"](q).run(batch)
        eng = ENGINES["greta"](q, paths=rng.choice(["auto", "scan", "index"]))
        cuts, out = run_in_pieces(eng, batch, rng) if len(batch) > 1 else ([], eng.run(batch).rows)
        got = Result(expected.columns, out, expected.kinds).sorted()
        assert not expected.diff(got), (text, cuts, rows, expected.diff(got))
        _check_cells(out, text)
        n_big += any(abs(c) >= 2**64 for r in expected.rows for c in r if type(c) is int)
    assert n_big > cases(40, 600) // 10  # sums beyond 2**64 are drawn


@pytest.mark.parametrize("keys", [1, 3])
@pytest.mark.parametrize("text,at", [
    ("RETURN COUNT(*), SUM(B.x), MIN(B.x), MAX(B.x), AVG(B.x) PATTERN B+ WITHIN 1000", 0),
    ("RETURN COUNT(*), SUM(B.x) PATTERN B+ WITHIN 1000 SLIDE 500", 2),  # after the window's bounds
    ("RETURN COUNT(*), SUM(B.x) PATTERN B+ WITHIN 1000 EMIT ON CHANGE", 1),  # after the time
])
def test_kleene_over_70_events_beyond_2_to_the_31(text, at, keys):
    # 2**70 - 1 trends per key, each event in 2**69 of them; key 0's events hold 3e9, the
    # others' 2 (their graphs stay stacked), in batches with snapshots and restores between
    N, x = 70, 3 * 10**9
    rows = [{"ts": t, "type": "B", "k": k, "x": x if k == 0 else 2} for t in range(1, N + 1) for k in range(keys)]
    text = keyed(text) if keys > 1 else text
    eng = ENGINES["greta"](compile_query(text))
    cuts, out = run_in_pieces(eng, EventBatch.from_rows(rows).sorted(), random.Random(keys))
    _check_cells(out, text)
    last = max(out)  # the whole stream's (latest) row
    assert last[at:at + 2] == (keys * (2**N - 1), N * 2**(N - 1) * (x + 2 * (keys - 1))), (text, cuts, last)


@pytest.mark.parametrize("v", [2**63 - 1, -(2**63)])
def test_sums_of_int64_extremes(v):
    # -2**63 is beyond 2**31 too (its absolute value is no int64)
    rows = [{"ts": t, "type": "B", "k": t % 2, "x": v if t != 5 else 1} for t in range(1, 11)]
    for text in ("RETURN COUNT(*), SUM(B.x), AVG(B.x) PATTERN B+ WITHIN 6",
                 "RETURN k, COUNT(*), SUM(B.x) PATTERN B+ WHERE [k] GROUP BY k WITHIN 6 SLIDE 3"):
        q = compile_query(text)
        batch = EventBatch.from_rows(rows).sorted()
        expected = ENGINES["reference"](q).run(batch)
        got = ENGINES["greta"](q).run(batch)
        assert not expected.diff(got), (text, expected.diff(got))
        _check_cells(got.rows, text)


@pytest.mark.parametrize("text,v", [("RETURN MIN(B.x) PATTERN B+", 2**63 - 1),
                                    ("RETURN MAX(B.x) PATTERN B+", -(2**63))])
def test_min_max_at_int64_extremes_are_refused(text, v):
    # the order code of an empty MIN (MAX) record is 2**63 - 1 (-2**63): that value is refused,
    # never read back as no value; one short of it is answered
    rows = [{"ts": t, "type": "B", "x": v} for t in range(1, 4)]
    with pytest.raises(DataKindError, match="beyond what GRETA's M[IA][NX] can hold"):
        ENGINES["greta"](compile_query(text)).run(EventBatch.from_rows(rows))
    near = v - 1 if v > 0 else v + 1
    rows = [{"ts": t, "type": "B", "x": near} for t in range(1, 4)]
    assert ENGINES["greta"](compile_query(text)).run(EventBatch.from_rows(rows)).rows == [(near,)]


@pytest.mark.parametrize("v", [2**63, 2**64 - 1, 2**70, -(2**63) - 1])
def test_integers_beyond_int64_are_refused(v):
    # events hold 64-bit integers: a wider one is refused, naming the row, never rounded or wrapped
    rows = [{"ts": 1, "type": "B", "x": 1}, {"ts": 2, "type": "B", "x": v}]
    with pytest.raises(InputError, match=r"row 1: attribute 'x': -?\d+ is not a 64-bit integer"):
        EventBatch.from_rows(rows)
