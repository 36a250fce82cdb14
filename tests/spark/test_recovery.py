"""A streaming run killed (SIGKILL, no clean shutdown) and restarted from its checkpoint produces
exactly the rows of an uninterrupted run: nothing lost, nothing twice.

One job (tests/spark/stream_job.py) runs three queries as a workload (each its own streaming
query, sink and checkpoint): an aggregate with SLIDE windows and a match-returning query
(``RETURN a, b``), both Append mode into Spark's file sink, and an aggregate of WITHIN-alone
totals, Update mode through cepagg's ``foreachBatch`` writer. The job is killed three times,
restarted from the same checkpoints each time, and a fourth run finishes. The kill points are
hooks in the job, so they are hit exactly, not by timing: each query stops at its point and
the job kills itself once all have stopped.

* **early** — while batch 0 reads its events: offsets/0 is logged, nothing is committed;
* **mid-batch** — while batch 4 reads its events: batches 0-3 are committed, batch 4 is not;
* **while committing** — batch 7's state store versions and output are committed, its
  commit-log entry (commits/7) is not. The Update-mode query stops right after its writer
  returns for batch 7. Spark's file sink commits its output (``_spark_metadata/7``) and the
  commit log in one driver call with no code of ours between, so for the Append-mode queries
  the test makes that state on disk exactly: they stop when batch 8 starts reading (batch 7
  fully committed, offsets/8 logged) and the test removes offsets/8 and commits/7 — what a
  kill between the sink's commit and the commit-log write leaves. On restart Spark runs
  batch 7 again: the file sink must find it in its log and not write it twice, the
  ``foreachBatch`` writer must replace its own output of batch 7.

The rows are compared as multisets with the in-process result of the whole stream, which is
what an uninterrupted run must give; matches as the multiset of their event lists (match
numbers need not agree with the in-process ones). Update-mode output keeps every revision:
the test checks that each (group, revision) appears once, so a batch written twice would show.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
from collections import Counter
from decimal import Decimal
from pathlib import Path

import pytest

from cepagg.events import EventBatch
from cepagg.lang import compile_query
from cepagg.runner import run as run_local
from generators import random_stream

pytestmark = pytest.mark.spark

JOB = Path(__file__).with_name("stream_job.py")
SRC = Path(__file__).resolve().parents[2] / "src"
PER_BATCH = 25
CASES = {
    # SLIDE windows: final rows, Append mode, Spark's file sink
    "aggregate-slide": "RETURN g, COUNT(*), SUM(B.x) PATTERN SEQ(A, !C, B) WHERE [g] GROUP BY g WITHIN 8 SLIDE 4",
    # WITHIN alone: revised totals, Update mode, cepagg's foreachBatch writer
    "aggregate-total": "RETURN g, COUNT(*), SUM(B.x) PATTERN SEQ(A, !C, B) WHERE [g] GROUP BY g WITHIN 8",
    # RETURN a, b: one row per matched event, Append mode, Spark's file sink
    "matches": "PATTERN SEQ(A a, !C, B b) WHERE [g] WITHIN 8 RETURN a, b",
}


def _entries(checkpoint: Path, log: str) -> list[int]:
    d = checkpoint / log
    return sorted(int(f) for f in os.listdir(d) if f.isdigit()) if d.exists() else []


def _remove_entry(checkpoint: Path, log: str, batch: int) -> None:
    for name in (str(batch), f".{batch}.crc"):
        if (checkpoint / log / name).exists():
            (checkpoint / log / name).unlink()


def _run(events, out, chk, workload: Path, kill: str | None) -> None:
    """Run the job to the end of the stream, or to its kill points (it then kills itself)."""
    env = dict(os.environ, PYTHONUNBUFFERED="1",
               PYTHONPATH=os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]))
    env.pop("CEPAGG_TEST_KILL", None)
    if kill:
        env["CEPAGG_TEST_KILL"] = kill
    log = chk.parent / f"job-{kill or 'end'}.stderr"
    with open(log, "wb") as err:
        p = subprocess.Popen([sys.executable, str(JOB), str(events), str(PER_BATCH), str(out), str(chk),
                              str(workload)], stdout=subprocess.PIPE, stderr=err, env=env, start_new_session=True)
        try:
            output, _ = p.communicate(timeout=400)
        finally:
            try:
                os.killpg(p.pid, signal.SIGKILL)  # whatever is left of its group
            except ProcessLookupError:
                pass
    errors = [line for line in log.read_text(errors="replace").splitlines()
              if ("Error" in line or "Exception" in line) and not line.lstrip().startswith("at ")]
    if kill:
        assert p.returncode == -signal.SIGKILL, f"the job was to be killed at {kill} ({log}): {errors[:5]}"
    else:
        assert b"cepagg-stream-job: done" in output, f"the job failed ({log}): {errors[:5]}"


def _plain(row) -> tuple:
    return tuple(int(v) if isinstance(v, Decimal) else v for v in row)


def _matches(columns, rows) -> Counter:
    """Each match as the sorted list of its (var, pos, event_id, type, ts) rows, with its key;
    a multiset, so a match reported twice counts twice."""
    width = columns.index("match")
    per_match: dict = {}
    for r in rows:
        per_match.setdefault((r[:width], r[width]), []).append(r[width + 1:])
    return Counter((key, tuple(sorted(found))) for (key, _), found in per_match.items())


def _result(spark, name: str, query: str, out: Path) -> Counter:
    """The streamed result as a multiset, in the shape of the in-process result."""
    from cepagg.spark.streaming import read_latest

    if name == "aggregate-total":
        raw = spark.read.parquet(str(out))
        revisions = Counter((r["g"], r["revision"]) for r in raw.select("g", "revision").collect())
        assert max(revisions.values()) == 1, f"a revision was written twice: {revisions.most_common(3)}"
        return Counter(_plain(r) for r in read_latest(spark, str(out), query).collect())
    df = spark.read.parquet(str(out))
    rows = [_plain(r) for r in df.select(*[f"`{c}`" for c in compile_query(query).output_columns]).collect()]
    return _matches(compile_query(query).output_columns, rows) if name == "matches" else Counter(rows)


def _expected(name: str, query: str, rows: list[dict]) -> Counter:
    local = run_local(query, EventBatch.from_rows(rows))
    if name == "matches":
        return _matches(list(local.columns), local.rows)
    return Counter(local.rows)


def test_killed_three_times_and_restarted_gives_exactly_the_uninterrupted_rows(spark, tmp_path):
    rows = random_stream(random.Random(11), "ABC", n=10 * PER_BATCH, max_gap=3,
                         attrs={"x": (0, 9), "g": ["u", "v"]})
    events = tmp_path / "events.jsonl"
    events.write_text("".join(json.dumps(r) + "\n" for r in rows))
    workload = tmp_path / "workload.cep"
    workload.write_text("\n---\n".join(f"-- name: {name}\n{text}" for name, text in CASES.items()))
    out, chk = tmp_path / "out", tmp_path / "chk"

    # early: killed in batch 0, before anything is committed
    _run(events, out, chk, workload, "read:0")
    for name in CASES:
        assert _entries(chk / name, "offsets") == [0] and _entries(chk / name, "commits") == [], name

    # mid-batch: killed in batch 4, after batches 0-3 are committed
    _run(events, out, chk, workload, "read:4")
    for name in CASES:
        assert _entries(chk / name, "offsets") == [0, 1, 2, 3, 4], name
        assert _entries(chk / name, "commits") == [0, 1, 2, 3], name

    # while committing: batch 7's state and output committed, its commit-log entry not
    _run(events, out, chk, workload, "written:7,read:8")
    for name in CASES:
        if name == "aggregate-total":  # stopped after its writer ran for batch 7: WITHIN-alone totals
            # come at the end of the stream, so batches 1-7 had no rows and wrote nothing
            assert sorted(p.name for p in (out / name).iterdir()) == ["batch=0"]
        else:  # stopped when batch 8 began: batch 7 was committed, the sink's entry included
            assert _entries(chk / name, "commits")[-1] == 7 and _entries(chk / name, "offsets")[-1] == 8, name
            _remove_entry(chk / name, "offsets", 8)
            _remove_entry(chk / name, "commits", 7)
            assert 7 in _entries(out / name, "_spark_metadata"), name
        assert _entries(chk / name, "offsets")[-1] == 7 and _entries(chk / name, "commits")[-1] == 6, name

    _run(events, out, chk, workload, None)
    for name, query in CASES.items():
        assert _entries(chk / name, "commits")[-1] > 7, name
        got, expected = _result(spark, name, query, out / name), _expected(name, query, rows)
        assert sum(expected.values()) > 0, name
        assert got == expected, f"{name}: missing {expected - got}, extra {got - expected}"
