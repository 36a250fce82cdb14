"""The two-step baseline (trends built, then aggregated) agrees with the reference."""

from __future__ import annotations

import inspect
import random
import sys

from cepagg.engines import ENGINES
from cepagg.events import EventBatch
from cepagg.lang import compile_query
from generators import cases, random_stream

QUERIES = [
    "RETURN COUNT(*), SUM(A.x), MAX(B.x) PATTERN SEQ(A+, B) WHERE A.x < NEXT(A).x WITHIN 6",
    "RETURN g, COUNT(*), AVG(A.x) PATTERN (SEQ(A+, B))+ WHERE [g] GROUP BY g WITHIN 5 SLIDE 2",
    "RETURN COUNT(*), MIN(C.x) PATTERN SEQ(A, B+, C) WHERE B.x >= NEXT(B).x",
]


def test_twostep_matches_reference():
    rng = random.Random(4)
    for text in QUERIES:
        q = compile_query(text)
        assert ENGINES["twostep"].refusal(q) is None
        for _ in range(cases(25, 300)):
            rows = random_stream(rng, "ABC", n=rng.randint(5, 11), attrs={"x": (0, 5), "g": ["u", "v"]})
            b = EventBatch.from_rows(rows)
            assert not ENGINES["reference"](q).run(b).diff(ENGINES["twostep"](q).run(b)), (text, rows)


def test_twostep_refuses_negation():
    assert "positive" in ENGINES["twostep"].refusal(compile_query("RETURN COUNT(*) PATTERN SEQ(A, NOT C, B)"))


def test_trends_longer_than_the_recursion_limit():
    # each event follows only its predecessor: 300 trends, the longest 300 events deep
    q = compile_query("RETURN COUNT(*), MAX(S.price) PATTERN S+ WHERE S.price + 1 = NEXT(S).price")
    b = EventBatch.from_rows([{"type": "S", "ts": i, "price": i} for i in range(300)])
    engine = ENGINES["twostep"](q)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(len(inspect.stack()) + 100)
    try:
        rows = engine.run(b).rows
    finally:
        sys.setrecursionlimit(limit)
    assert limit < 10_000  # building the engine did not raise the process's limit
    assert rows == [(300 * 301 // 2, 299)]
