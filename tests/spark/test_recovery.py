"""A streaming run killed mid-way (SIGKILL, no clean shutdown) and restarted from its checkpoint
produces exactly the rows of an uninterrupted run: nothing lost, nothing twice."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from decimal import Decimal
from pathlib import Path

import pytest
from generators import random_stream

from cepagg.events import EventBatch
from cepagg.runner import run as run_local

pytestmark = pytest.mark.spark

JOB = Path(__file__).with_name("stream_job.py")
QUERY = "RETURN g, COUNT(*), SUM(B.x) PATTERN SEQ(A, !C, B) WHERE [g] GROUP BY g WITHIN 8 SLIDE 4"


def _commits(checkpoint: Path) -> int:
    d = checkpoint / "commits"
    return len([f for f in os.listdir(d) if f.isdigit()]) if d.exists() else 0


def _job(events, out, chk, per_batch="25"):
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    return subprocess.Popen([sys.executable, str(JOB), str(events), str(out), str(chk), QUERY, per_batch],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
                            start_new_session=True)


def test_kill_and_restart_gives_exactly_the_uninterrupted_rows(spark, tmp_path):
    rows = random_stream(random.Random(11), "ABC", n=250, max_gap=3, attrs={"x": (0, 9), "g": ["u", "v"]})
    events = tmp_path / "events.jsonl"
    events.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out, chk = tmp_path / "out", tmp_path / "chk"

    first = _job(events, out, chk)
    deadline = time.monotonic() + 240
    while _commits(chk) < 3 and first.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert first.poll() is None, "the job ended before it could be killed"
    os.killpg(first.pid, signal.SIGKILL)  # the driver and its JVM, mid-batch
    first.wait()
    killed_at = _commits(chk)
    assert 3 <= killed_at < 11

    second = _job(events, out, chk)
    output, _ = second.communicate(timeout=400)
    assert b"cepagg-stream-job: done" in output
    assert _commits(chk) > killed_at

    expected = sorted(run_local(QUERY, EventBatch.from_rows(rows)).rows)
    got = sorted(tuple(int(v) if isinstance(v, Decimal) else v for v in r)
                 for r in spark.read.parquet(str(out)).collect())
    assert got == expected
