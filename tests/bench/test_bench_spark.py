"""The Spark benchmark gives local[n] n cores (the benchmark itself is not a test)."""

from __future__ import annotations

import os

import pytest

from cepagg.bench.spark import _cores


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="no CPU affinity on this system")
def test_local_n_is_pinned_to_n_cores():
    available = sorted(os.sched_getaffinity(0))
    if len(available) >= 2:
        assert _cores("local[1]", True) == available[:1]
    assert _cores(f"local[{len(available)}]", True) is None  # the whole machine: nothing to pin
    assert _cores("local[1]", False) is None
    assert _cores("local[*]", True) is None and _cores("spark://host:7077", True) is None
