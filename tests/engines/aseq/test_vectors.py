"""Test vectors from the worked examples of A-Seq (SIGMOD 2014: Figs. 1-2, 4, 6-11; the same as
test_reference_vectors.py), on aseq,
plus vectors for the corner cases the issue names (negation right after START, consecutive,
leading and trailing negation, repeated types, equal timestamps)."""

from __future__ import annotations

import pytest

from cepagg.engines import ENGINES
from cepagg.lang import compile_query
from helpers import events, run, stream


def both(query: str, rows: list[dict], time_unit: str = "ms") -> list[tuple]:
    """aseq's rows, after checking they equal the reference's."""
    assert ENGINES["aseq"].refusal(compile_query(query, time_unit=time_unit)) is None, query
    got = run(query, rows, "aseq", time_unit)
    want = run(query, rows, "reference", time_unit)
    assert not want.diff(got), (query, want.diff(got))
    return got.rows


def test_example1_emit_on_change():
    # §5.1: 1, 2, then 0 when a1 expires at 6
    q = "PATTERN SEQ(TypeUsername a, TypePassword b, ClickSubmit c) WITHIN 5s EMIT ON CHANGE RETURN COUNT(*)"
    rows = events([("TypeUsername", 1), ("TypePassword", 2), ("ClickSubmit", 3), ("ClickSubmit", 4),
                   ("TypePassword", 6)])
    assert both(q, rows, "s") == [(3, 1), (4, 2), (6, 0)]


def test_figure2_four():
    assert both("PATTERN SEQ(A, B, C) AGG COUNT", stream("a1 b2 c3 a4 b5 c6")) == [(4,)]


def test_example3_sem():
    q = "PATTERN SEQ(A, B, C, D) WITHIN 7 EMIT ON CHANGE RETURN COUNT(*)"
    assert both(q, stream("a1 b2 c3 a4 c5 b6 d7 c8 a9 d10")) == [(7, 2), (8, 0), (10, 1)]


def test_example4_negation():
    q = "PATTERN SEQ(A, B, !C, D) AGG COUNT"
    assert both(q, stream("a1 b2 c3 a4 b5 d6")) == [(2,)]
    assert both(q, stream("a1 a2 b3 c4 b5 d6")) == [(2,)]


def test_sum_max_counterexample():
    # §4.7: the paper's sketch gives 111 and 100; the answer is 12 and 10
    s = stream("a1 b2 c3 d4 c5 d6 c7", weight=[None, None, 1, None, 10, None, 100])
    q = "PATTERN SEQ(A, B, C, D) RETURN COUNT(*), SUM(C.weight), MAX(C.weight), AVG(C.weight)"
    assert both(q, s) == [(3, 12, 10, 4.0)]


def test_hpc_partitions():
    s = stream("a1 a2 b3 b4 b5", id=[1, 2, 1, 2, 1])
    assert both("PATTERN SEQ(A, B) WHERE [id] AGG COUNT", s) == [(3,)]
    assert both("PATTERN SEQ(A, B) GROUP BY id RETURN id, COUNT(*)", s) == [(1, 2), (2, 1)]
    assert both("PATTERN SEQ(A, B) WHERE A.id = B.id AGG COUNT", s) == [(3,)]
    assert both("PATTERN SEQ(A, B) WHERE A.id = B.id GROUP BY A.id RETURN id, COUNT(*)", s) == [(1, 2), (2, 1)]


def test_example8_snapshot():
    q = "PATTERN SEQ(A, B, C, D, E) WITHIN 9 EMIT ON CHANGE RETURN COUNT(*)"
    assert both(q, stream("a1 b2 c3 a4 d5 b6 c7 a8 d9 e10")) == [(10, 1)]


def test_example9_multiconnect_stream():
    q = "PATTERN SEQ(A, B, C, D, E, F, G) WITHIN 20 EMIT ON CHANGE RETURN COUNT(*)"
    s = stream("a1 a2 b3 c4 d5 b6 c7 d8 e9 e10 f12 g13 a14 g22")
    assert both(q, s) == [(13, 16), (22, 0)]


def test_negation_never_increases_count():
    s = events([("DELL", 1), ("IPIX", 2), ("QQQ", 3), ("AMAT", 4), ("IPIX", 5), ("AMAT", 6)])
    q1 = both("PATTERN SEQ(DELL, IPIX, AMAT) AGG COUNT", s)[0][0]
    q2 = both("PATTERN SEQ(DELL, IPIX, !QQQ, AMAT) AGG COUNT", s)[0][0]
    assert (q1, q2) == (3, 1)


# ---------------------------------------------------------------------------------------------
# Corner cases of the issue


def test_negation_right_after_start():
    # (A, !X, B): x3 kills a1 and a2, not a4
    assert both("PATTERN SEQ(A, !X, B) AGG COUNT", stream("a1 a2 x3 a4 b5")) == [(1,)]


def test_consecutive_negations():
    q = "PATTERN SEQ(A, B, !X, !Y, C) AGG COUNT"
    assert both(q, stream("a1 b2 y3 b4 c5")) == [(1,)]
    assert both(q, stream("a1 b2 x3 b4 y5 c6")) == [(0,)]


def test_trailing_negation_within():
    # (A, B, !C) WITHIN 10: c7 kills the match, c11 (after a1 + 10) does not (TV-OOO-6)
    q = "PATTERN SEQ(A, B, !C) WITHIN 10 AGG COUNT"
    assert both(q, stream("a1 b3")) == [(1,)]
    assert both(q, stream("a1 b3 c7")) == [(0,)]
    assert both(q, stream("a1 b3 c11")) == [(1,)]


def test_leading_negation_within():
    # (!N, A, B) WITHIN 5: the scope of n is (b.ts - 5, a.ts)
    q = "PATTERN SEQ(!N, A, B) WITHIN 5 AGG COUNT"
    assert both(q, stream("n1 a2 b3")) == [(0,)]
    assert both(q, stream("n1 a2 b6")) == [(1,)]  # n1 is outside (6 - 5, 2)
    assert both(q, stream("n1 a2 b3 b6")) == [(1,)]


def test_leading_and_trailing_under_slide_and_emit():
    s = stream("n1 a2 b3 n5 a6 b7 n8 b9")
    both("PATTERN SEQ(!N, A, B) WITHIN 4 SLIDE 2 AGG COUNT", s)
    both("PATTERN SEQ(A, B, !N) WITHIN 4 SLIDE 2 AGG COUNT", s)
    both("PATTERN SEQ(!N, A, B, !N) WITHIN 4 EMIT ON CHANGE AGG COUNT", s)


def test_repeated_types():
    assert both("PATTERN SEQ(A, A, B) AGG COUNT", stream("a1 a2 a3 b4")) == [(3,)]
    assert both("PATTERN SEQ(A, B, A) AGG COUNT", stream("a1 b2 a3 b4 a5")) == [(4,)]
    assert both("PATTERN SEQ(A x, B, A y) RETURN COUNT(x), SUM(y.v)",
                stream("a1 b2 a3 b4 a5", v=[1, 2, 3, 4, 5])) == [(4, 18)]


def test_equal_timestamps_never_chain():
    # b2 and c2 are simultaneous: no (b2, c2); a negative event at the same time is not between
    assert both("PATTERN SEQ(A, B, C) AGG COUNT", stream("a1 b2 c2 c3")) == [(1,)]
    assert both("PATTERN SEQ(A, !X, B) AGG COUNT", stream("a1 x1 b2 x2 b2")) == [(2,)]


def test_batches_split_inside_one_timestamp():
    q = compile_query("PATTERN SEQ(A, B) AGG COUNT")
    from cepagg.events import EventBatch

    b = EventBatch.from_rows(stream("a1 a2 b2 b3")).sorted()
    eng = ENGINES["aseq"](q)
    st = eng.new_state()
    rows = eng.process(st, b.slice(0, 2)) + eng.process(st, b.slice(2)) + eng.finish(st)
    assert rows == [(3,)]  # a2 and b2 arrive in two batches and still do not chain


@pytest.mark.parametrize("query", [
    "PATTERN SEQ(A, B) WHERE A.x > 2 AND B.x < 4 AGG COUNT",
    "PATTERN SEQ(A, !C, B) WHERE C.x > 3 AGG COUNT",
    "PATTERN SEQ(A, B) WHERE x >= 1 AGG COUNT",
])
def test_local_predicates_are_arrival_filters(query):
    both(query, stream("a1 c2 b3 a4 c5 b6 a7 b8", x=[3, 4, 1, 0, 2, 5, 4, None]))
