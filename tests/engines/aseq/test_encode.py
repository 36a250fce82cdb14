"""A batch's events grouped by partition: the order :func:`stable_order` gives is numpy's stable
sort of the partition codes, for codes of 16 bits (one radix pass) and wider (two)."""

from __future__ import annotations

import numpy as np
import pytest

from cepagg.engines.aseq.encode import stable_order
from cepagg.engines.aseq.engine import Aseq
from cepagg.events import EventBatch
from cepagg.lang import compile_query


@pytest.mark.parametrize("k", [1, 2, 10, 1 << 16, (1 << 16) + 1, 3 << 16, 1 << 20])
def test_stable_order_is_the_stable_sort_of_the_codes(k):
    rng = np.random.default_rng(k)
    for n in (0, 1, 50, 20_000):
        codes = rng.integers(0, k, n).astype(np.int64)
        codes[: n // 2] = np.sort(codes[: n // 2])  # runs of equal codes, whose order must be kept
        assert stable_order(codes, k).tolist() == np.argsort(codes, kind="stable").tolist()


def test_partitions_past_16_bits_of_codes_keep_their_events_in_time_order():
    """70,000 keys in one batch (codes past 16 bits): each key's two events, A then B, meet."""
    q = compile_query("RETURN COUNT(*) PATTERN SEQ(A a, B b) WHERE [g] WITHIN 1000000")
    n = 70_000
    rows = [{"type": "A", "ts": i, "g": (i * 7919) % n} for i in range(n)]
    rows += [{"type": "B", "ts": n + i, "g": (i * 7919) % n} for i in range(n)]
    assert Aseq(q).run(EventBatch.from_rows(rows)).rows == [(n,)]

