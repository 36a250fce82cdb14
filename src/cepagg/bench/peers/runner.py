"""Run cepagg and each peer as a subprocess with a time limit; measure wall time and peak
memory; parse the one ``PEER-RESULT {json}`` line each prints.

Peak memory is measured by a tiny wrapper process around each run: the larger of the child's
``ru_maxrss`` and the peak of its whole process tree's RSS polled from /proc, so that the JVMs
PyFlink and Spark start count too. Wall time is
measured here, around the child; each engine also reports its own ``elapsed_ms``, the time of
its work without the start of the interpreter or JVM (see :data:`ENGINE_TIME`), and the ratios
use that.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .environments import JAVA_OPENS, Environments
from .workloads import Inexpressible, Workload, write_data

HERE = Path(__file__).resolve().parent
MARK = "PEER-RESULT "

#: Engines in table order. "cepagg-spark" runs only once cepagg.spark exists.
ENGINES = ("cepagg", "cepagg-spark", "flink-cep", "flink-sql", "core")

#: What each engine's ``elapsed_ms`` covers (printed under the tables).
ENGINE_TIME = {
    "cepagg": "read the CSV + evaluate, in one process on one core, after a warm-up run "
              "on the file's first 1,000 rows (imports, the query grammar, numba's compiled "
              "kernels loaded from its cache: as a JVM's start is excluded for the peers) and "
              "with the query compiled and planned (as the peers' patterns are, before their "
              "clocks start); runs are repeated until 1 s in all (at most 5, an odd count) and the "
              "median kept, where each peer runs once",
    "cepagg-spark": "read the CSV into a DataFrame + cepagg.spark.run + collect, on local[2], "
                    "after the session's start and a warm-up run on the file's first 1,000 rows",
    "flink-cep": "the job's net run time: read and parse the CSV, CEP, count every match "
                 "(parallelism 1; the MiniCluster's start is excluded)",
    "flink-sql": "from submitting the MATCH_RECOGNIZE statement to its last result row",
    "core": "send_events + get_output + counting the lines (building the Python events excluded)",
}


#: Seconds a run may take on top of the time limit to start (JVM, PyFlink, Spark session): the
#: limit applies to the engine's own time, the process is killed at limit + allowance.
STARTUP_ALLOWANCE = {"cepagg": 15.0, "cepagg-spark": 120.0, "flink-cep": 45.0, "flink-sql": 90.0,
                     "core": 15.0}


class ParseError(ValueError):
    pass


def parse_result(stdout: str) -> dict:
    """The JSON object of the last ``PEER-RESULT`` line of a peer's output.

    >>> parse_result('noise\\nPEER-RESULT {"count": 3, "elapsed_ms": 1.5}\\n')['count']
    3
    """
    found = None
    for line in stdout.splitlines():
        i = line.find(MARK)
        if i >= 0:
            found = line[i + len(MARK):]
    if found is None:
        raise ParseError("no PEER-RESULT line in the output")
    try:
        obj = json.loads(found)
    except json.JSONDecodeError as e:
        raise ParseError(f"bad PEER-RESULT JSON: {e}: {found[:200]}") from e
    if not isinstance(obj, dict):
        raise ParseError("PEER-RESULT is not an object")
    if "unavailable" not in obj:
        if not isinstance(obj.get("count"), int) or obj["count"] < 0:
            raise ParseError(f"PEER-RESULT without a count: {found[:200]}")
    return obj


def engine_ms(parsed: dict) -> float | None:
    """The engine's own time: Flink's net job run time when present, else ``elapsed_ms``."""
    for k in ("net_runtime_ms", "elapsed_ms"):
        v = parsed.get(k)
        if isinstance(v, (int, float)):
            return float(v)
    return None


@dataclass
class Outcome:
    """One run of one engine on one (workload, strategy, keyed, window)."""

    engine: str
    workload: str
    strategy: str
    keyed: bool
    window_ms: int
    status: str                  # ok | timeout | error | inexpressible | unavailable | skipped
    count: int | None = None
    wall_s: float | None = None
    engine_s: float | None = None
    peak_rss_mb: float | None = None
    events: int | None = None
    detail: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def events_per_s(self) -> float | None:
        if self.status != "ok" or not self.engine_s or not self.events:
            return None
        return self.events / self.engine_s

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @staticmethod
    def from_dict(d: dict) -> "Outcome":
        return Outcome(**d)


def run_limited(cmd: list[str], timeout_s: float, env: dict | None = None,
                cwd: str | None = None) -> tuple[str, int | None, float, float | None, str]:
    """Run ``cmd``; return (stdout, returncode or None on timeout, wall s, peak RSS MB, stderr tail)."""
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd,
                            text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout_s)
        rc: int | None = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)   # the child's own process group only
        out, err = proc.communicate()
        rc = None
    wall = time.monotonic() - t0
    peak = _peak_from_marker(err)
    tail = "\n".join((err or "").strip().splitlines()[-5:])
    return out or "", rc, wall, peak, tail


RSS_MARK = "PEER-MAXRSS-KB "


def _peak_from_marker(stderr: str | None) -> float | None:
    for line in (stderr or "").splitlines()[::-1]:
        if line.startswith(RSS_MARK):
            return int(line[len(RSS_MARK):]) / 1024
    return None


#: The wrapper that runs a command and reports its peak memory: the larger of the child's
#: ``ru_maxrss`` (from ``wait4``; it covers the child and the descendants it waited for) and the
#: largest sum of RSS over the child's whole process tree, polled every 0.2 s from /proc (it
#: covers descendants that are not waited for, such as PyFlink's and Spark's JVMs).
_RSS_WRAPPER = """
import os, sys, subprocess, time
PAGE = os.sysconf("SC_PAGE_SIZE")
def tree_kb(root):
    kids = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open("/proc/%s/stat" % d) as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                kids.setdefault(ppid, []).append(int(d))
            except (OSError, ValueError, IndexError):
                pass
    total, stack = 0, [root]
    while stack:
        pid = stack.pop()
        try:
            with open("/proc/%d/statm" % pid) as f:
                total += int(f.read().split()[1]) * PAGE // 1024
        except (OSError, ValueError, IndexError):
            pass
        stack += kids.get(pid, [])
    return total
p = subprocess.Popen(sys.argv[1:])
peak = 0
while True:
    pid, st, ru = os.wait4(p.pid, os.WNOHANG)
    if pid:
        break
    peak = max(peak, tree_kb(p.pid))
    time.sleep(0.2)
print("%s%d" % (MARK, max(peak, ru.ru_maxrss)), file=sys.stderr, flush=True)
sys.exit(os.waitstatus_to_exitcode(st) if os.WIFEXITED(st) else 1)
"""


def with_rss(cmd: list[str]) -> list[str]:
    """Wrap ``cmd`` so that its peak memory (KB) is printed on stderr when it ends."""
    return [sys.executable, "-c", f"MARK = {RSS_MARK!r}\n" + _RSS_WRAPPER, *cmd]


class Runner:
    """Builds each engine's command for a workload and runs it."""

    def __init__(self, envs: Environments | None, data_dir: Path, timeout_s: float,
                 flink_parallelism: int = 1, java_heap: str = "4g"):
        self.envs = envs
        self.data_dir = Path(data_dir)
        self.timeout_s = timeout_s
        self.flink_parallelism = flink_parallelism
        self.java_heap = java_heap

    # ---------------------------------------------------------------- commands
    def command(self, engine: str, wl: Workload, strategy: str, keyed: bool, window: int,
                csv: Path) -> list[str] | Inexpressible | str:
        """The command to run, an Inexpressible, or a string saying why it is unavailable."""
        envs = self.envs
        if engine in ("cepagg", "cepagg-spark"):
            cmd = [sys.executable, "-m", "cepagg.bench.peers.cepagg_run", "--csv", str(csv),
                   "--query", wl.cepagg_query(window, strategy, keyed)]
            return cmd + (["--spark"] if engine == "cepagg-spark" else [])
        if envs is None:
            return "peers not set up"
        if engine in envs.missing:
            return envs.missing[engine]
        if engine == "flink-cep":
            t = wl.flink_cep_spec(strategy)
            if isinstance(t, Inexpressible):
                return t
            spec, contiguity = t
            if envs.cep_classes is None or envs.flink_lib is None or envs.java is None:
                return "Flink CEP not set up"
            cmd = [envs.java, f"-Xmx{self.java_heap}", *JAVA_OPENS, "-cp",
                   f"{envs.flink_lib}/*:{envs.cep_classes}", "CepCount", "--csv", str(csv),
                   "--pattern", spec, "--strategy", contiguity, "--within", str(window),
                   "--parallelism", str(self.flink_parallelism)]
            return cmd + (["--key"] if keyed else [])
        if engine == "flink-sql":
            sql = wl.flink_sql(window, strategy, keyed)
            if isinstance(sql, Inexpressible):
                return sql
            if envs.flink_python is None:
                return "Flink not set up"
            return [str(envs.flink_python), str(HERE / "flink_sql.py"), "--csv", str(csv), "--sql", sql]
        if engine == "core":
            q = wl.ceql(window, strategy, keyed)
            if isinstance(q, Inexpressible):
                return q
            if envs.core_python is None:
                return "CORE not set up"
            return [str(envs.core_python), str(HERE / "core.py"), "--csv", str(csv),
                    "--declaration", wl.ceql_declaration(), "--query", q]
        raise ValueError(engine)

    # ---------------------------------------------------------------- one run
    def run(self, engine: str, wl: Workload, strategy: str, keyed: bool, window: int) -> Outcome:
        csv = write_data(wl.data, self.data_dir).resolve()
        base = dict(engine=engine, workload=wl.name, strategy=strategy, keyed=keyed, window_ms=window)
        cmd = self.command(engine, wl, strategy, keyed, window, csv)
        if isinstance(cmd, Inexpressible):
            return Outcome(**base, status="inexpressible", detail=cmd.reason)
        if isinstance(cmd, str):
            return Outcome(**base, status="unavailable", detail=cmd)
        env = dict(os.environ)
        if engine.startswith("cepagg"):
            src = str(Path(__file__).resolve().parents[3])
            env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        hard = self.timeout_s + STARTUP_ALLOWANCE.get(engine, 30.0)
        out, rc, wall, peak, tail = run_limited(with_rss(cmd), hard, env=env)
        if rc is None:
            return Outcome(**base, status="timeout", wall_s=wall,
                           detail=f"no answer within {self.timeout_s:.0f} s (+{hard - self.timeout_s:.0f} s "
                                  "to start)")
        try:
            parsed = parse_result(out)
        except ParseError as e:
            return Outcome(**base, status="error", wall_s=wall, peak_rss_mb=peak,
                           detail=f"exit {rc}: {e}; {tail}")
        if "unavailable" in parsed:
            return Outcome(**base, status="unavailable", detail=parsed["unavailable"])
        ms = engine_ms(parsed)
        extra = {k: v for k, v in parsed.items() if k not in ("count", "peer", "events")}
        late = ms is not None and ms / 1000 > self.timeout_s
        return Outcome(**base, status="timeout" if late else "ok", count=parsed["count"], wall_s=wall,
                       engine_s=None if ms is None else ms / 1000, peak_rss_mb=peak,
                       events=wl.data.n_events, extra=extra,
                       detail=(f"answered after the {self.timeout_s:.0f} s limit" if late
                               else str(parsed.get("engine", ""))))
