"""Window records merged per (group, window) across drains and partitions."""

from __future__ import annotations

import numpy as np

from cepagg.engines.greta.results import EMPTY_MAX, EMPTY_MIN, WindowResults


def _ints(*rows):
    out = np.empty((len(rows), len(rows[0])), dtype=object)
    for i, r in enumerate(rows):
        out[i] = r
    return out


def test_records_of_one_window_and_group_merge_exactly_and_pop_in_window_order():
    w = WindowResults(FI=2, FF=1, minmax=["MIN", "MAX"])
    big = 2**100
    w.add(("tech",), np.array([3, 4]), _ints([big, 1], [1, 1]), np.array([[0.5], [1.0]]),
          np.array([[7, 2], [EMPTY_MIN, EMPTY_MAX]]))
    w.add(("bank",), np.array([3]), _ints([5, 0]), np.array([[2.0]]), np.array([[1, 1]]))
    w.add(("tech",), np.array([3]), _ints([big, 2]), np.array([[0.25]]), np.array([[4, 9]]))
    assert len(w) == 4
    groups, k, ints, floats, codes = w.pop(3)
    assert groups == [("tech",), ("bank",)] and k.tolist() == [3, 3]
    assert ints.tolist() == [[2 * big, 3], [5, 0]]  # no wrap beyond 64 bits
    assert floats.tolist() == [[0.75], [2.0]] and codes.tolist() == [[4, 9], [1, 1]]
    # window 4 stays until the watermark passes it; a later drain adds to it
    w.add(("tech",), np.array([4]), _ints([3, 3]), np.array([[1.0]]), np.array([[8, 8]]))
    assert w.pop(3)[0] == []
    groups, k, ints, floats, codes = w.pop(10)
    assert groups == [("tech",)] and k.tolist() == [4] and ints.tolist() == [[4, 4]]
    assert floats.tolist() == [[2.0]] and codes.tolist() == [[8, 8]]  # the empties are identities
    assert len(w) == 0
