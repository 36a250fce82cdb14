"""rcep returns exactly what the reference returns, on random streams and random queries:
typed and untyped variables, Kleene with NEXT/FIRST/LAST, negation (leading, between, trailing,
with conditions), keyed and keyless, WITHIN and SLIDE, matches and aggregates -- whatever the
batching, the watermarks, the snapshots in between and the time slices a caller splits the
input into. Matches are compared as sets (match numbers follow the order of discovery).

``CEPAGG_NIGHTLY=1`` runs many more cases (tests/generators.py:cases).
"""

from __future__ import annotations

import random

import pytest
from queries import differences, random_case, sliced_rows

from cepagg.engines import ENGINES
from cepagg.events import EventBatch
from cepagg.lang import compile_query
from generators import cases
from helpers import run_in_pieces


def _case(seed: int) -> tuple[str, list[dict]]:
    return random_case("rcep", seed)


_same = differences


@pytest.mark.parametrize("block", range(4))
def test_random_queries_equal_the_reference(block):
    for k in range(cases(150, 3000)):
        text, rows = _case(100_000 * block + k)
        q = compile_query(text)
        batch = EventBatch.from_rows(rows)
        expected = ENGINES["reference"](q).run(batch)
        got = ENGINES["rcep"](q).run(batch)
        problems = _same(q, expected, got.rows)
        assert not problems, "\n".join([text, str(rows)] + problems)


@pytest.mark.parametrize("block", range(2))
def test_batches_watermarks_and_snapshots(block):
    for k in range(cases(150, 3000)):
        seed = 500_000 + 100_000 * block + k
        text, rows = _case(seed)
        rng = random.Random(seed * 7)
        q = compile_query(text)
        batch = EventBatch.from_rows(rows).sorted()
        expected = ENGINES["reference"](q).run(batch)
        eng = ENGINES["rcep"](q)
        cuts, out = run_in_pieces(eng, batch, rng)
        problems = _same(q, expected, out)
        assert not problems, "\n".join([text, str(cuts), str(rows)] + problems)


def test_time_slices_merge_to_the_whole():
    """``start_range`` slices (as Spark's batch driver uses them) add up to the whole result:
    each match in exactly one slice."""
    for k in range(cases(150, 3000)):
        seed = 900_000 + k
        text, rows = _case(seed)
        q = compile_query(text)
        batch = EventBatch.from_rows(rows).sorted()
        expected = ENGINES["reference"](q).run(batch)
        top = max(r["ts"] for r in rows) + 1
        width = random.Random(seed).randint(1, 5)
        out = sliced_rows(lambda **o: ENGINES["rcep"](q, **o), q, top, width, batch)
        problems = _same(q, expected, out)
        assert not problems, "\n".join([text, str(rows)] + problems)


QUERY1_VARIANTS = [
    "PATTERN SEQ(a, b+, c) WHERE [g] AND a.x < b.x AND b.x < NEXT(b.x) AND c.x < FIRST(b.x) WITHIN 8",
    "PATTERN SEQ(a, b+, c) WHERE [g] AND a.x < b.x AND b.x < NEXT(b.x) AND c.x < FIRST(b.x) WITHIN 8 SLIDE 3",
    "RETURN g, COUNT(*), SUM(b.x), MAX(c.x) PATTERN SEQ(a, b+, c) WHERE [g] AND a.x < b.x "
    "AND b.x <= NEXT(b.x) AND c.x < LAST(b.x) GROUP BY g WITHIN 7",
    "RETURN COUNT(*), AVG(b.x) PATTERN SEQ(a, b+, NOT (d, d.x > LAST(b).x), c) "
    "WHERE a.x > 1 AND b.x >= NEXT(b.x) AND c.x > FIRST(b).x WITHIN 6 SLIDE 2",
    "PATTERN SEQ(a, b+) WHERE a.x < 2 AND b.x > 3 AND b.x != NEXT(b.x) WITHIN 6",
    "PATTERN SEQ(a, EXISTS (e, e.x > a.x), b+, c) WHERE [g] AND b.x < NEXT(b.x) AND c.x < b.x WITHIN 7",
    "RETURN COUNT(*), MIN(a.x) PATTERN SEQ(EXISTS e, a, b+, EXISTS (f, f.x < FIRST(b).x)) "
    "WHERE [g] AND b.x > NEXT(b.x) WITHIN 7 SLIDE 3",
]


@pytest.mark.parametrize("text", QUERY1_VARIANTS)
def test_query1_variants_on_price_walks(text):
    """The RCEP paper's Query 1 and variants over untyped price walks (many matches)."""
    q = compile_query(text)
    assert ENGINES["rcep"].refusal(q) is None
    for k in range(cases(40, 800)):
        rng = random.Random(k)
        rows, ts, price = [], 0, {"u": 3, "v": 3}
        for _ in range(rng.randint(6, 14)):
            ts += rng.randint(0, 2)
            g = rng.choice("uv")
            price[g] = max(0, min(6, price[g] + rng.choice((-2, -1, 0, 1, 2))))
            rows.append({"type": "T", "ts": ts, "g": g, "x": price[g]})
        batch = EventBatch.from_rows(rows)
        expected = ENGINES["reference"](q).run(batch)
        problems = _same(q, expected, ENGINES["rcep"](q).run(batch).rows)
        assert not problems, "\n".join([text, str(rows)] + problems)


def test_every_join_order_gives_the_same_matches(monkeypatch):
    """The order chosen from buffer sizes is a matter of speed only: any order that binds the
    trigger first finds the same matches (conditions and negations move to other steps)."""
    import cepagg.engines.rcep.engine as rcep_engine

    rng = random.Random(3)

    def shuffled(shape, sizes):
        rest = list(range(len(shape.positions) - 1))
        rng.shuffle(rest)
        return (len(shape.positions) - 1, *rest)

    monkeypatch.setattr(rcep_engine, "choose_order", shuffled)
    for k in range(cases(300, 5000)):
        text, rows = _case(1_300_000 + k)
        q = compile_query(text)
        batch = EventBatch.from_rows(rows)
        expected = ENGINES["reference"](q).run(batch)
        problems = _same(q, expected, ENGINES["rcep"](q).run(batch).rows)
        assert not problems, "\n".join([text, str(rows)] + problems)
