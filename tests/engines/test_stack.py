"""The stack-based two-step baseline (SASE, A-Seq §2.2) agrees with the reference."""

from __future__ import annotations

import pytest

from cepagg.engines import ENGINES
from cepagg.lang import compile_query
from generators import cases, compare, random_stream, seeded
from helpers import events, run


def test_example1():
    q = "PATTERN SEQ(TypeUsername a, TypePassword b, ClickSubmit c) WITHIN 5s EMIT ON CHANGE RETURN COUNT(*)"
    rows = events([("TypeUsername", 1), ("TypePassword", 2), ("ClickSubmit", 3), ("ClickSubmit", 4),
                   ("TypePassword", 6)])
    assert run(q, rows, "stack", "s").rows == [(3, 1), (4, 2), (6, 0)]


@pytest.mark.parametrize("query", [
    "PATTERN SEQ(A, B, C) RETURN COUNT(*), SUM(B.x), MAX(C.x), AVG(A.x) WITHIN 6",
    "PATTERN SEQ(A, B, !D, C) RETURN COUNT(*), MIN(B.x) WITHIN 5",
    "PATTERN SEQ(A, A, B) WHERE A.x > 1 RETURN COUNT(A) WITHIN 4",
    "PATTERN SEQ(A, B) WHERE [g] GROUP BY g RETURN g, COUNT(*) WITHIN 4",
    "PATTERN SEQ(A, !C, B) RETURN COUNT(*), SUM(A.x) WITHIN 5 EMIT ON CHANGE",
    "PATTERN SEQ(A, B) WHERE [g] GROUP BY g RETURN g, COUNT(*) WITHIN 4 EMIT ON CHANGE",
    "PATTERN SEQ(A, B, C) RETURN COUNT(*)",
])
def test_random_streams(query):
    rng = seeded(query)
    for _ in range(cases(40, 400)):
        rows = random_stream(rng, "ABCD", n=rng.randint(0, 14), attrs={"x": (0, 5, 0.2), "g": ["u", "v"]})
        problems = compare(query, rows, "stack")
        assert not problems, "\n".join(problems)


def test_refuses_what_it_does_not_do():
    for text in ("PATTERN SEQ(!N, A, B) RETURN COUNT(*) WITHIN 5",
                 "PATTERN SEQ(A, B) RETURN COUNT(*) WITHIN 5 SLIDE 2",
                 "PATTERN SEQ(A+, B) RETURN COUNT(*)", "PATTERN SEQ(A, B) WHERE A.x = B.x RETURN COUNT(*)",
                 # one value per partition: a group over several partitions would need their sum
                 "PATTERN SEQ(A, B) WHERE [g] RETURN COUNT(*) WITHIN 5 EMIT ON CHANGE"):
        assert ENGINES["stack"].refusal(compile_query(text)) is not None
    # a Kleene item is named as such, not as a negation at an end
    assert "fixed-length SEQ" in ENGINES["stack"].refusal(compile_query("RETURN COUNT(*) PATTERN A+ WITHIN 10"))
