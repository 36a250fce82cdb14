"""Test vectors from the worked examples of GRETA (PVLDB 2017) (Figures 4 and 6,
Example 4) and derived from them, on the GRETA engine.

The reference evaluator reproduces the same vectors in tests/engines/test_reference_vectors.py;
here they must come out of the graph, without a trend being built.
"""

from __future__ import annotations

import pytest

from helpers import events, run, stream

FIG4 = "a1 b2 c2 a3 e3 a4 c5 d6 b7 a8 b9"  # GRETA Figure 4
FIG4_X = dict(x=[5, 10, None, 2, None, 7, None, None, 1, 4, 3])  # synthetic values on Figure 4
PRICES = [10, 2, 9, 8, 7, 1, 6, 5, 4, 3]


def greta(query: str, rows: list[dict], **kw):
    return run(query, rows, engine="greta", **kw)


@pytest.mark.parametrize("pattern, expected", [
    ("A+", 15),                                   # §5.1 (a): 2**4 - 1
    ("SEQ(A+, B)", 23),                           # §5.1 (b)
    ("(SEQ(A+, B))+", 43),                        # §5.1 (c), the paper's 43
    ("(SEQ(A+, NOT SEQ(C, NOT E, D), B))+", 13),  # §5.2 nested negation (Example 2)
])
def test_figure4_counts(pattern, expected):
    assert greta(f"RETURN COUNT(*) PATTERN {pattern}", stream(FIG4)).rows == [(expected,)]


def test_sliding_windows_figure6():
    # §5.3 with docs/semantics.md's windows [k*3, k*3+10): 43 at 0, 13 at 3, 1 at 6, none at 9
    res = greta("RETURN COUNT(*) PATTERN (SEQ(A+, B))+ WITHIN 10 SLIDE 3", stream(FIG4))
    by_start = {r[0]: r[2] for r in res.rows}
    assert (by_start[0], by_start[3], by_start[6]) == (43, 13, 1)
    assert 9 not in by_start  # window [9, 19) has no trend: no row
    assert by_start == {r[0]: r[2] for r in run("RETURN COUNT(*) PATTERN (SEQ(A+, B))+ WITHIN 10 SLIDE 3",
                                                 stream(FIG4)).rows}  # [-6, 4) and [-3, 7) too
    assert all(r[1] - r[0] == 10 for r in res.rows)


def test_sliding_windows_other_convention():
    # §5.3's (lo, lo+10] convention gives 5 for W2 = a4..b9: the same trends as our window
    # [4, 14), which the slide 1 query reports.
    res = greta("RETURN COUNT(*) PATTERN (SEQ(A+, B))+ WITHIN 10 SLIDE 1", stream(FIG4))
    assert {r[0]: r[2] for r in res.rows}[4] == 5


def test_aggregates_table():
    # §5.4: attribute x on the Figure 4 stream
    q = ("RETURN COUNT(*), COUNT(A), SUM(A.x), AVG(A.x), MIN(A.x), MAX(A.x), "
         "COUNT(B), SUM(B.x), MIN(B.x), MAX(B.x) PATTERN (SEQ(A+, B))+")
    (row,) = greta(q, stream(FIG4, **FIG4_X)).rows
    assert row == pytest.approx((43, 100, 454, 4.54, 2, 7, 66, 256, 1, 10))


@pytest.mark.parametrize("pattern, expected", [
    ("A+", (15, 32, 144, 2, 7, 4.5)),
    ("SEQ(A+, B)", (23, 45, 205, 2, 7, 205 / 45)),
])
def test_aggregates_other_patterns(pattern, expected):
    q = f"RETURN COUNT(*), COUNT(A), SUM(A.x), MIN(A.x), MAX(A.x), AVG(A.x) PATTERN {pattern}"
    (row,) = greta(q, stream(FIG4, **FIG4_X)).rows
    assert row == pytest.approx(expected)


def test_price_stream_275():
    # §5.5: down-trends under skip-till-any-match (the index path: S.price > NEXT(S).price)
    rows = events([("Stock", i + 1, p) for i, p in enumerate(PRICES)], ["price"])
    q = ("RETURN COUNT(*), COUNT(S), SUM(S.price), AVG(S.price), MIN(S.price), MAX(S.price) "
         "PATTERN Stock S+ WHERE S.price > NEXT(S).price")
    (row,) = greta(q, rows).rows
    assert row == pytest.approx((275, 1080, 6974, 6.457407407, 1, 10))


def test_price_stream_next_match_25():
    # docs/semantics.md §9: skip-till-next-match gives 25 on the same stream
    rows = events([("Stock", i + 1, p) for i, p in enumerate(PRICES)], ["price"])
    q = ("RETURN COUNT(*) PATTERN Stock S+ WHERE S.price > NEXT(S).price "
         "STRATEGY skip-till-next-match")
    assert greta(q, rows).rows == [(25,)]


def test_blowup_1023():
    rows = events([("Stock", i + 1, p) for i, p in enumerate(PRICES)], ["price"])
    assert greta("RETURN COUNT(*) PATTERN Stock S+", rows).rows == [(1023,)]


def test_q2_like_11_70():
    # §5.7
    rows = events([("Start", 1, None, None), ("Measurement", 2, 10, 5), ("Measurement", 3, 20, 3),
                   ("Measurement", 4, 15, 4), ("Measurement", 5, 30, 2), ("End", 6, None, None)],
                  ["load", "cpu"])
    q = ("RETURN COUNT(*), COUNT(M), SUM(M.cpu), MIN(M.cpu), MAX(M.cpu) "
         "PATTERN SEQ(Start S, Measurement M+, End E) WHERE M.load < NEXT(M).load")
    assert greta(q, rows).rows == [(11, 20, 70, 2, 5)]


def test_grouping_5():
    # §5.6: partitions (company, sector), output per sector
    rows = events([("Stock", 1, "X", "T", 10), ("Stock", 2, "Y", "T", 5), ("Stock", 3, "X", "T", 9),
                   ("Stock", 4, "Y", "T", 6)], ["company", "sector", "price"])
    q = ("RETURN sector, COUNT(*) PATTERN Stock S+ WHERE [company, sector] AND S.price > NEXT(S).price "
         "GROUP-BY sector")
    assert greta(q, rows).rows == [("T", 5)]
    wrong = "RETURN sector, COUNT(*) PATTERN Stock S+ WHERE S.price > NEXT(S).price GROUP-BY sector"
    assert greta(wrong, rows).rows == [("T", 9)]


def test_q3_leading_negation():
    # GRETA Q3's shape: no accident in the window before the trend starts
    rows = events([("Position", 1, "s", 1, 50), ("Position", 2, "s", 1, 40), ("Accident", 3, "s", None, None),
                   ("Position", 4, "s", 1, 30), ("Position", 5, "s", 2, 60), ("Position", 6, "s", 2, 55)],
                  ["segment", "vehicle", "speed"])
    q = ("RETURN segment, COUNT(*), AVG(P.speed) PATTERN SEQ(NOT Accident A, Position P+) "
         "WHERE [P.vehicle, segment] AND P.speed > NEXT(P).speed GROUP-BY segment WITHIN 10 SLIDE 10")
    # window [0, 10): vehicle 1 trends must start before the accident (at 1 or 2), vehicle 2
    # trends start after it -> invalid; (50) (40) (50,40) (50,30) (40,30) (50,40,30)
    (row,) = greta(q, rows).rows
    assert row[:4] == ("s", 0, 10, 6)
