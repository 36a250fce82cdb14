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


def test_phase_medians_leave_out_the_first_batch_and_batches_without_input():
    from cepagg.bench.spark import phase_medians

    def report(batch, rows, planning, add, commits):
        return {"batchId": batch, "numInputRows": rows,
                "durationMs": {"latestOffset": 1, "queryPlanning": planning, "walCommit": 10, "addBatch": add,
                               "commitOffsets": 20, "triggerExecution": 1 + planning + 10 + add + 20 + 5},
                "stateOperators": [{"commitTimeMs": c} for c in commits]}

    progress = [report(0, 100, 5000, 20000, [900, 900]), report(1, 100, 100, 500, [60, 40]),
                report(2, 100, 300, 700, [80, 70]), report(3, 100, 200, 600, [50, 50]), report(4, 0, 1, 1, [1])]
    got = phase_medians(progress)
    assert got["queryPlanning"] == 200 and got["addBatch"] == 600 and got["walCommit"] == 10
    assert got["state commit (in addBatch, tasks summed)"] == 100
    assert got["other"] == 5 and got["triggerExecution"] == 1 + 200 + 10 + 600 + 20 + 5


def test_stream_conf_pairs_are_parsed_and_a_pair_without_a_value_is_refused():
    import pytest

    from cepagg.bench.spark import _settings

    assert _settings(["a.b=1", "c= -x -y"]) == {"a.b": "1", "c": " -x -y"}
    with pytest.raises(SystemExit, match="expected KEY=VALUE"):
        _settings(["a.b"])
