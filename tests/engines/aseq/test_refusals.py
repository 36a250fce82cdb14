"""aseq refuses, at plan time and with a reason, what it cannot answer; the planner prefers it
for what it can."""

from __future__ import annotations

import pytest

from cepagg.engines import ENGINES
from cepagg.errors import UnsupportedQuery
from cepagg.lang import compile_query
from cepagg.plan import plan


@pytest.mark.parametrize("text, reason", [
    ("PATTERN SEQ(A+, B) AGG COUNT", "Kleene"),
    ("PATTERN AND(A, B) AGG COUNT", "AND"),
    ("PATTERN OR(A, B) AGG COUNT", "OR"),
    ("PATTERN SEQ(A, NOT SEQ(B, C), D) AGG COUNT", "NOT around a sequence"),
    ("PATTERN SEQ(A, EXISTS B, C) AGG COUNT", "EXISTS"),
    ("PATTERN SEQ(A, B) WHERE A.x < B.x AGG COUNT", "not an equality chain"),
    ("PATTERN SEQ(A, B, C) WHERE A.id = B.id AGG COUNT", "do not tie every event"),
    ("PATTERN SEQ(A, !N, B) WHERE A.id = B.id AGG COUNT", "negated event N is not tied"),
    ("PATTERN SEQ(A, B) AGG COUNT STRATEGY skip-till-next-match", "skip-till-next-match"),
    ("PATTERN SEQ(A, B) AGG COUNT WITHIN 5 EVENTS", "tuple-count"),
    ("PATTERN SEQ(A, B)", "returns matches"),
    ("PATTERN SEQ(A a, B b) GROUP BY a.x RETURN x, COUNT(*)", "not a partition key"),
    ("PATTERN SEQ(A, A, B) WHERE [A.id] AGG COUNT", "repeated type"),
    ("PATTERN SEQ(A a, NOT (B b, a.x > 3), C) AGG COUNT", "written inside a negation"),
])
def test_refused_with_reason(text, reason):
    q = compile_query(text)
    why = ENGINES["aseq"].refusal(q)
    assert why is not None and reason in why, why
    with pytest.raises(UnsupportedQuery, match=reason):
        ENGINES["aseq"](q)
    p = plan(q)
    assert p.engine != "aseq" and reason in p.refusals["aseq"]


@pytest.mark.parametrize("text", [
    "PATTERN SEQ(A, B, !C, D) WITHIN 10 s AGG COUNT",
    "PATTERN SEQ(!N, A, B, !N) WITHIN 5 EMIT ON CHANGE AGG COUNT",
    "PATTERN SEQ(Kindle, KindleCase, Stylus) WHERE Kindle.userId = KindleCase.userId = Stylus.userId "
    "AGG COUNT WITHIN 1 hour",
    "PATTERN SEQ(A a, B b) WHERE a.x > 3 AND [g] GROUP BY g RETURN g, SUM(b.x), MIN(a.x) WITHIN 4 SLIDE 2",
    "PATTERN A RETURN COUNT(*) WITHIN 3 EMIT ON CHANGE",
])
def test_planner_prefers_aseq(text):
    assert plan(compile_query(text)).engine == "aseq"
