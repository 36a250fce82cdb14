"""A workload file on Spark: one shared aseq job per split, the same rows as in-process."""

from __future__ import annotations

import random
from decimal import Decimal

import pytest

from cepagg.events import EventBatch
from cepagg.lang.workload import compile_workload
from cepagg.plan import plan_workload
from cepagg.result import Result
from cepagg.spark import run_workload
from generators import random_stream

pytestmark = pytest.mark.spark

WORKLOAD = """
-- name: abc
RETURN COUNT(*), SUM(B.x), MAX(C.x) PATTERN SEQ(A, B, C) WITHIN 6
---
-- name: ab_not_d
RETURN COUNT(*), AVG(A.x) PATTERN SEQ(A, B, !D, C) WITHIN 4
---
-- name: ab_slide
RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 5 SLIDE 2
---
-- name: per_g
RETURN g, COUNT(*), MIN(B.x) PATTERN SEQ(A, B, C) WHERE [g] GROUP BY g WITHIN 6
---
-- name: per_g_emit
RETURN g, COUNT(*) PATTERN SEQ(A, B) WHERE [g] GROUP BY g WITHIN 4 EMIT ON CHANGE
---
-- name: trend
RETURN COUNT(*) PATTERN SEQ(A, B+, C) WITHIN 6
"""


def test_workload_equals_in_process(spark):
    rng = random.Random(3)
    for _ in range(2):
        rows = random_stream(rng, "ABCD", n=60, max_gap=2, attrs={"x": (0, 9), "g": ["u", "v", "w"]})
        batch = EventBatch.from_rows(rows)
        named = compile_workload(WORKLOAD, schema=batch.attribute_kinds())
        wp = plan_workload([q for _, q in named], [n for n, _ in named])
        assert len(wp.shared) == 5  # everything but the Kleene query shares the aseq plan
        expected = dict(zip([n for n, _ in named], wp.run(batch)))
        df = spark.createDataFrame([(r["type"], r["ts"], r["x"], r["g"]) for r in rows],
                                   "type string, ts long, x long, g string")
        got = run_workload(df, WORKLOAD, parallelism=3)
        assert list(got) == [n for n, _ in named]
        for name, frame in got.items():
            rows_got = [tuple(int(v) if isinstance(v, Decimal) else v for v in r) for r in frame.collect()]
            diff = expected[name].diff(Result(expected[name].columns, rows_got))
            assert not diff, (name, diff)
