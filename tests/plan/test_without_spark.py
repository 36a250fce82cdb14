"""Planning, explaining and running in process need no pyspark: the core install
(``pip install cepagg``, without the spark extra) must explain and run every query."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

SRC = str(Path(__file__).resolve().parents[2] / "src")

SCRIPT = textwrap.dedent("""
    import sys
    sys.modules["pyspark"] = None  # any import of pyspark now fails, as when it is not installed
    import cepagg.plan, cepagg.runner, cepagg.lang, cepagg.engines
    from cepagg.cli import main
    from cepagg.events import EventBatch

    query = "RETURN g, COUNT(*) PATTERN SEQ(A, B) WHERE [g] GROUP BY g WITHIN 5"
    assert main(["explain", "-q", query]) == 0
    assert main(["explain", "-q", "RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 5"]) == 0
    assert main(["explain", "-q", "RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 5", "--numbers", "float"]) == 0
    rows = [{"type": t, "ts": i, "g": "u"} for i, t in enumerate("ABAB")]
    print("rows:", cepagg.runner.run(query, EventBatch.from_rows(rows)).rows)
    print("float rows:", cepagg.runner.run(query, EventBatch.from_rows(rows), numbers="float").rows)
    print("spark modules:", sorted(m for m in sys.modules if m.startswith(("cepagg.spark", "pyspark"))
                                   and sys.modules[m] is not None))
""")


def test_explain_and_run_without_pyspark():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([SRC, os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "on Spark: partitioned by g" in out
    assert "on Spark: no partition key: time slices" in out
    assert "rows: [('u', 3)]" in out
    assert "float rows: [('u', 3.0)]" in out
    assert "numbers: float64, approximate values for COUNT(*)" in out
    assert "spark modules: []" in out
