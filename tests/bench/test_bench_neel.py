"""``cepagg bench neel`` on a tiny input: every engine's rows equal the reference's (the
benchmark returns 1 on a difference), matches included, and every chapter workload runs on neel."""

from __future__ import annotations

import argparse

from cepagg.bench import neel
from cepagg.engines import ENGINES
from cepagg.lang import compile_query


def test_the_benchmark_checks_its_results(capsys):
    p = argparse.ArgumentParser()
    neel.add_arguments(p)
    args = p.parse_args(["--events", "400", "--keys", "3", "--chapter-events", "120", "--repeat", "1"])
    assert neel.main(args) == 0
    out = capsys.readouterr().out
    assert "DIFFERENT" not in out and "refuses" not in out and out.count("same rows") == 2 + 3  # 1, 1w
    assert "part 1w: the three queries of part 1 as one workload (3 nested terms in the shared" in out
    assert out.count("same matches") == len(neel.NESTED_MATCHES + neel.PLANS_ONLY) == 5
    assert out.count("    plan {") >= 6 and out.count("  chosen") == 3  # every priced plan of 3 queries


def test_the_chapter_workloads_run_on_neel():
    for name, pattern in neel.chapter_workloads():
        q = compile_query(f"RETURN COUNT(*) PATTERN {pattern} WITHIN 40")
        assert ENGINES["neel"].refusal(q) is None, name
