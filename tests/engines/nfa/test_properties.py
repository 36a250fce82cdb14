"""nfa returns exactly what the reference returns on the random queries of rcep's language
(tests/engines/rcep/queries.py: typed and untyped variables, Kleene with NEXT/FIRST/LAST,
negation leading, between and trailing, keyed and keyless, WITHIN and SLIDE, matches and
aggregates), whatever the batching, watermarks, snapshots and time slices. Matches are
compared as sets (numbers follow the order of discovery).

``CEPAGG_NIGHTLY=1`` runs many more cases (tests/generators.py:cases).
"""

from __future__ import annotations

import random

import pytest
from queries import differences, random_case, sliced_rows

from cepagg.engines import ENGINES
from cepagg.events import EventBatch
from cepagg.lang import compile_query
from cepagg.plan.planner import PREFERENCE
from generators import cases
from helpers import run_in_pieces


def _case(seed: int) -> tuple[str, list[dict]]:
    return random_case("nfa", seed)


_same = differences


@pytest.mark.parametrize("block", range(4))
def test_random_queries_equal_the_reference(block):
    for k in range(cases(500, 5000)):
        text, rows = _case(2_000_000 + 100_000 * block + k)
        q = compile_query(text)
        batch = EventBatch.from_rows(rows)
        expected = ENGINES["reference"](q).run(batch)
        problems = _same(q, expected, ENGINES["nfa"](q).run(batch).rows)
        assert not problems, "\n".join([text, str(rows)] + problems)


def test_batches_watermarks_and_snapshots():
    for k in range(cases(300, 3000)):
        seed = 3_000_000 + k
        text, rows = _case(seed)
        q = compile_query(text)
        batch = EventBatch.from_rows(rows).sorted()
        expected = ENGINES["reference"](q).run(batch)
        cuts, out = run_in_pieces(ENGINES["nfa"](q), batch, random.Random(seed * 7))
        problems = _same(q, expected, out)
        assert not problems, "\n".join([text, str(cuts), str(rows)] + problems)


def test_time_slices_merge_to_the_whole():
    """``start_range`` slices add up to the whole result: each match in exactly one slice."""
    for k in range(cases(300, 3000)):
        seed = 4_000_000 + k
        text, rows = _case(seed)
        q = compile_query(text)
        batch = EventBatch.from_rows(rows).sorted()
        expected = ENGINES["reference"](q).run(batch)
        top = max(r["ts"] for r in rows) + 1
        width = random.Random(seed).randint(1, 5)
        out = sliced_rows(lambda **o: ENGINES["nfa"](q, **o), q, top, width, batch)
        problems = _same(q, expected, out)
        assert not problems, "\n".join([text, str(rows)] + problems)


def test_price_walks_with_many_matches_equal_rcep():
    """The RCEP paper's Query 1 over longer untyped price walks (hundreds of matches a case,
    beyond what the reference enumerates quickly): nfa and rcep agree."""
    text = "PATTERN SEQ(a, b+, c) WHERE [g] AND a.x < b.x AND b.x < NEXT(b.x) AND c.x < FIRST(b.x) WITHIN 12"
    q = compile_query(text)
    for k in range(cases(20, 200)):
        rng = random.Random(k)
        rows, ts, price = [], 0, {"u": 3, "v": 3}
        for _ in range(60):
            ts += rng.randint(0, 2)
            g = rng.choice("uv")
            price[g] = max(0, min(9, price[g] + rng.choice((-2, -1, 0, 1, 2))))
            rows.append({"type": "T", "ts": ts, "g": g, "x": price[g]})
        batch = EventBatch.from_rows(rows)
        expected = ENGINES["rcep"](q).run(batch)
        assert not _same(q, expected, ENGINES["nfa"](q).run(batch).rows), rows


def test_nfa_is_a_baseline_the_planner_never_picks():
    assert "nfa" not in PREFERENCE


def test_refusals_are_rceps():
    for text, reason in [("RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 5 STRATEGY skip-till-next-match", "strategy"),
                         ("PATTERN SEQ(A a, B b) RETURN a", "window"),
                         ("RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 5 EMIT ON CHANGE", "EMIT")]:
        assert reason in ENGINES["nfa"].refusal(compile_query(text))
