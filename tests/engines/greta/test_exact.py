"""Counts beyond 2**63 stay exact: int64 limbs widen before anything wraps, and sums of
integers beyond 2**31 switch the partition to Python integers."""

from __future__ import annotations

import pytest

from helpers import events, run

N = 70


def greta(query, rows):
    return run(query, rows, engine="greta")


def test_kleene_plus_over_70_events_is_2_to_the_70_minus_1():
    rows = events([("A", t, t) for t in range(1, N + 1)], ["x"])
    q = "RETURN COUNT(*), COUNT(A), SUM(A.x), MIN(A.x), MAX(A.x), AVG(A.x) PATTERN A+"
    (row,) = greta(q, rows).rows
    # every event is in 2**69 of the 2**70 - 1 trends
    assert row[0] == 2**N - 1
    assert row[1] == N * 2**(N - 1)
    assert row[2] == sum(range(1, N + 1)) * 2**(N - 1)
    assert (row[3], row[4]) == (1, N)
    assert row[5] == pytest.approx(sum(range(1, N + 1)) / N)


def test_index_path_over_70_decreasing_prices():
    rows = events([("Stock", t, 1000 - t) for t in range(1, N + 1)], ["price"])
    q = "RETURN COUNT(*), SUM(S.price) PATTERN Stock S+ WHERE S.price > NEXT(S).price"
    (row,) = greta(q, rows).rows
    assert row == (2**N - 1, sum(1000 - t for t in range(1, N + 1)) * 2**(N - 1))


def test_sliding_windows_beyond_int64():
    rows = events([("A", t, 1) for t in range(1, 2 * N + 1)], ["x"])
    res = greta("RETURN COUNT(*), SUM(A.x) PATTERN A+ WITHIN 80 SLIDE 40", rows)
    by_start = {r[0]: r[2:] for r in res.rows}
    # window [40, 120) holds the 80 events at 40..119
    assert by_start[40] == (2**80 - 1, 80 * 2**79)
    assert by_start[0] == (2**79 - 1, 79 * 2**78)  # [0, 80): the events at 1..79


def test_sums_of_large_integers():
    big = 2**40 + 3
    rows = events([("A", t, big * (1 if t % 2 else -1)) for t in range(1, 11)], ["x"])
    q = "RETURN COUNT(*), SUM(A.x), MIN(A.x), MAX(A.x) PATTERN A+"
    assert greta(q, rows).rows == run(q, rows).rows
