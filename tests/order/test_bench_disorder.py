"""``cepagg bench disorder`` runs (a tiny smoke run: the benchmark is a program, not a test)."""

from __future__ import annotations

from cepagg.cli import main


def test_bench_disorder_smoke(capsys):
    assert main(["bench", "disorder", "--events", "60", "--keys", "2", "--fractions", "0.3", "--delays", "",
                 "--rates", "0.5", "--queries", "slide,match", "--plots", ""]) == 0
    table = capsys.readouterr().out
    rows = [line for line in table.splitlines() if line.startswith("| slide") or line.startswith("| match")]
    assert len(rows) == 2 * 6  # in-order, 3 K-slack, 1 conservative, aggressive
    for line in rows:
        cells = [c.strip() for c in line.split("|")]
        if "kslack K=" in line and "(max)" in line or "conservative" in line or "aggressive" in line:
            assert cells[14] == "yes", line  # converged
        if "conservative" in line:
            assert cells[11] == "0", line  # never revised
