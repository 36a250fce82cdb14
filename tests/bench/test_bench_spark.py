"""The Spark benchmark gives local[n] n cores (the benchmark itself is not a test)."""

from __future__ import annotations

import os

from cepagg.bench.spark import _cores


def test_local_n_is_pinned_to_n_cores():
    available = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    if len(available) >= 2:
        assert _cores("local[1]", True) == available[:1]
    else:  # one core, or no CPU affinity on this system: nothing to pin
        assert _cores("local[1]", True) is None
    assert _cores(f"local[{max(len(available), 1)}]", True) is None  # the whole machine
    assert _cores("local[1]", False) is None
    assert _cores("local[*]", True) is None and _cores("spark://host:7077", True) is None
