"""``cepagg run --master spark://...`` on a real Spark standalone cluster (a master and two
workers started here from the installed pyspark, bound to 127.0.0.1), with and without a
worker killed in the middle of the job: the rows are exactly those of ``cepagg run --no-spark``.

The cluster is started once for the module (``cluster`` fixture) and always torn down: every
process it started, and every process those started (executors, Python workers), is killed
and waited for, and the teardown fails if one is left.
"""

from __future__ import annotations

import csv
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from generators import random_stream

pytestmark = [pytest.mark.spark, pytest.mark.cluster]

SRC = Path(__file__).resolve().parents[2] / "src"
QUERY = "RETURN g, COUNT(*), SUM(B.x), MAX(A.x) PATTERN SEQ(A, !C, B) WHERE [g] GROUP BY g WITHIN 40"
CLI = "import sys; from cepagg.cli import main; sys.exit(main())"


# ----------------------------------------------------------------------------------------------
# Processes: started in their own session, found again through /proc, killed with SIGKILL


def _stat(pid: int) -> tuple[int, int] | None:
    """(parent pid, start time) of a live process, or None (also for a zombie: it has ended,
    only its exit status waits to be collected)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()
    return None if fields[0] == "Z" else (int(fields[1]), int(fields[19]))


def _descendants(root: int) -> set[tuple[int, int]]:
    """(pid, start time) of ``root`` and every process below it. The start time tells a
    recycled pid from the process that was recorded."""
    children: dict[int, list[int]] = {}
    starts: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (st := _stat(int(entry))) is not None:
            children.setdefault(st[0], []).append(int(entry))
            starts[int(entry)] = st[1]
    found, todo = set(), [root]
    while todo:
        pid = todo.pop()
        if pid in starts:
            found.add((pid, starts[pid]))
            todo += children.get(pid, [])
    return found


def _alive(procs: set[tuple[int, int]]) -> set[tuple[int, int]]:
    return {(pid, start) for pid, start in procs if (st := _stat(pid)) is not None and st[1] == start}


def _kill_all(procs: set[tuple[int, int]], timeout: float = 20.0) -> set[tuple[int, int]]:
    """SIGKILL each recorded process still alive; the ones still there after ``timeout``."""
    deadline = time.monotonic() + timeout
    while (left := _alive(procs)) and time.monotonic() < deadline:
        for pid, _ in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.1)
    return _alive(procs)


class Cluster:
    """A Spark standalone master and workers, logs and work directories under ``root``."""

    def __init__(self, root: Path):
        import pyspark

        self.root = root
        self.spark_home = Path(pyspark.__file__).parent
        self.procs: dict[str, subprocess.Popen] = {}
        self.known: set[tuple[int, int]] = set()  # every process seen below those we started
        (root / "conf").mkdir()  # an empty SPARK_CONF_DIR: no settings from elsewhere
        self.env = dict(os.environ, SPARK_HOME=str(self.spark_home), SPARK_CONF_DIR=str(root / "conf"),
                        SPARK_LOCAL_IP="127.0.0.1", SPARK_LOG_DIR=str(root), PYSPARK_PYTHON=sys.executable,
                        PYTHONPATH=os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
                        SPARK_DAEMON_MEMORY="256m",
                        SPARK_DAEMON_JAVA_OPTS="-XX:+UseSerialGC -XX:TieredStopAtLevel=1",
                        SPARK_MASTER_OPTS="-Dspark.master.rest.enabled=false")

    def _spawn(self, name: str, *args: str) -> subprocess.Popen:
        log = open(self.root / f"{name}.log", "wb")
        p = subprocess.Popen([str(self.spark_home / "bin" / "spark-class"), *args], env=self.env,
                             stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                             start_new_session=True)
        log.close()
        self.procs[name] = p
        return p

    def _wait_log(self, name: str, pattern: str, timeout: float = 300.0) -> re.Match:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = re.search(pattern, (self.root / f"{name}.log").read_text(errors="replace"))
            if found:
                return found
            if self.procs[name].poll() is not None:
                break
            time.sleep(0.2)
        raise RuntimeError(f"{name} did not log {pattern!r}:\n" + (self.root / f"{name}.log").read_text()[-3000:])

    def start(self, workers: int = 2) -> None:
        self._spawn("master", "org.apache.spark.deploy.master.Master",
                    "--host", "127.0.0.1", "--port", "0", "--webui-port", "0")
        self.url = self._wait_log("master", r"Starting Spark master at (spark://\S+)").group(1)
        self.ui = "http://127.0.0.1:" + self._wait_log("master", r"'MasterUI' on port (\d+)").group(1)
        for i in range(1, workers + 1):
            (self.root / f"work{i}").mkdir()
            self._spawn(f"worker{i}", "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1",
                        "--port", "0", "--webui-port", "0", "--cores", "1", "--memory", "768m",
                        "--work-dir", str(self.root / f"work{i}"), self.url)
        deadline = time.monotonic() + 300
        while self.state().get("aliveworkers", 0) < workers:
            assert time.monotonic() < deadline, f"workers did not register: {self.state()}"
            time.sleep(0.3)

    def state(self) -> dict:
        """The master's status page as JSON (workers, applications)."""
        try:
            with urllib.request.urlopen(self.ui + "/json/", timeout=5) as r:
                return json.load(r)
        except OSError:
            return {}

    def track(self) -> None:
        """Remember every process now below the ones started here (so that orphans, e.g. an
        executor whose worker was killed, are still found at the end)."""
        for p in self.procs.values():
            self.known |= _descendants(p.pid)

    def spawn_driver(self, *args: str, out: Path) -> subprocess.Popen:
        p = subprocess.Popen([sys.executable, "-c", CLI, *args], env=self.env, stdout=subprocess.DEVNULL,
                             stderr=open(out, "wb"), stdin=subprocess.DEVNULL, start_new_session=True)
        self.procs[f"driver{len(self.procs)}"] = p
        return p

    def kill_worker(self, name: str) -> None:
        """SIGKILL a worker with everything it started (its executor JVM and Python workers), as
        when its machine fails."""
        self.track()
        _kill_all(_descendants(self.procs[name].pid), timeout=10)
        self.procs[name].wait()

    def stop(self) -> set[tuple[int, int]]:
        """Kill everything; the processes that could not be killed."""
        self.track()
        for p in self.procs.values():
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        left = _kill_all(self.known)
        for p in self.procs.values():
            p.wait()
        return left


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    if not Path("/proc/self/stat").exists():
        pytest.skip("the cluster test finds Spark's processes through /proc (Linux)")
    c = Cluster(tmp_path_factory.mktemp("cluster"))
    try:
        c.start()
        yield c
    finally:
        left = c.stop()
        assert not left, f"processes left behind: {left}"


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    """An events file, the local result, and Spark settings sized for the cluster's workers."""
    d = tmp_path_factory.mktemp("job")
    rows = random_stream(random.Random(7), "ABC", n=200_000, max_gap=3,
                         attrs={"x": (0, 9), "g": [f"k{i}" for i in range(40)]})
    events = d / "events.csv"
    with open(events, "w", newline="") as f:
        w = csv.DictWriter(f, ["type", "ts", "x", "g"])
        w.writeheader()
        w.writerows(rows)
    local = d / "local.csv"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]))
    subprocess.run([sys.executable, "-c", CLI, "run", "-q", QUERY, "--events", str(events), "--no-spark",
                    "--out", str(local)], env=env, check=True, capture_output=True, timeout=600)
    (d / "eventlog").mkdir()
    conf = d / "cluster.conf"
    conf.write_text("\n".join([
        "spark.executor.memory 512m",
        "spark.executor.cores 1",
        "spark.executor.extraJavaOptions -XX:+UseSerialGC -XX:TieredStopAtLevel=1",
        "spark.driver.extraJavaOptions -XX:+UseSerialGC -XX:TieredStopAtLevel=1",
        "spark.sql.shuffle.partitions 4",
        "spark.default.parallelism 4",
        # the driver records every task's end, so the test can see that a task was lost
        "spark.eventLog.enabled true",
        "spark.eventLog.compress false",
        f"spark.eventLog.dir {d / 'eventlog'}",
    ]) + "\n")
    return {"dir": d, "events": events, "local": local, "conf": conf}


def _rows(path: Path) -> list[list[str]]:
    with open(path, newline="") as f:
        return sorted(csv.reader(f))


def _submit(cluster: Cluster, job: dict, name: str) -> tuple[subprocess.Popen, Path, Path]:
    out, err = job["dir"] / f"{name}.csv", job["dir"] / f"{name}.stderr"
    driver = cluster.spawn_driver("run", "-q", QUERY, "--events", str(job["events"]), "--master", cluster.url,
                                  "--spark-config", str(job["conf"]), "--out", str(out), out=err)
    return driver, out, err


def _running_task(cluster: Cluster, worker: str) -> str | None:
    """A task the worker's executor is running in a Python worker right now, or None: the
    running application's executor on that worker (the master's JSON names the application,
    the worker keeps its executor's log in WORK_DIR/<application>/<executor>/stderr) logged
    "Running task ... (TID n)" without "Finished task ... (TID n)", and a Python worker
    process (pyspark.daemon) runs below the worker with the venv's interpreter and this tree's
    sources on its path."""
    apps = [a["id"] for a in cluster.state().get("activeapps", [])]
    if len(apps) != 1:
        return None
    logs = list((cluster.root / f"work{worker[-1]}").glob(f"{apps[0]}/*/stderr"))
    if not logs:
        return None
    text = "".join(p.read_text(errors="replace") for p in logs)
    running = set(re.findall(r"Running task (\S+ in stage \S+ \(TID \d+\))", text))
    running -= set(re.findall(r"Finished task (\S+ in stage \S+ \(TID \d+\))", text))
    if not running:
        return None
    for pid, _ in _descendants(cluster.procs[worker].pid):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            env = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"pyspark.daemon" in argv:
            assert argv[0].decode() == sys.executable, f"Python workers run {argv[0]!r}"
            path = next((e[len(b"PYTHONPATH="):].decode() for e in env if e.startswith(b"PYTHONPATH=")), "")
            assert str(SRC) in path.split(os.pathsep), f"Python workers' path {path!r} lacks {SRC}"
            return sorted(running)[0]
    return None


def _lost_tasks(logs: set[Path]) -> list[dict]:
    """Tasks whose end the event logs (files, or directories of rolled files) give as lost
    with their executor."""
    lost = []
    files = [f for log in logs for f in ([log] if log.is_file() else sorted(log.rglob("events_*")))]
    for log in files:
        for line in log.read_text().splitlines():
            e = json.loads(line)
            if e.get("Event") == "SparkListenerTaskEnd" and \
                    e.get("Task End Reason", {}).get("Reason") == "ExecutorLostFailure":
                lost.append(e)
    return lost


def test_a_cluster_gives_the_local_rows(cluster, job):
    """Submitted from the command line to the two workers: the local rows, exactly."""
    driver, out, err = _submit(cluster, job, "clean")
    try:
        rc = driver.wait(timeout=600)
    finally:
        cluster.track()
    assert rc == 0, err.read_text()[-3000:]
    assert cluster.url in err.read_text()  # it ran on the cluster, not in local mode
    assert _rows(out) == _rows(job["local"])


def test_a_worker_killed_mid_job_still_gives_the_local_rows(cluster, job):
    """A worker is killed (SIGKILL, with its executor and Python workers, as when its machine
    fails) while its executor runs a task of the job; Spark runs the lost work again on the
    other worker and the rows are exactly the local ones.

    Mid-job is ensured by watching, not by timing: the test polls the worker's work directory
    until the executor's log says a task is running and has not finished, and a Python worker
    (pyspark.daemon) runs below that worker — i.e. the task is inside the engine's stage, which
    starts a Python worker, imports cepagg and streams a quarter of the 2 x 10^5 events through
    A-Seq: seconds, against a poll every 50 ms. The driver's event log then shows that a task ended with
    ExecutorLostFailure: the kill did land mid-task, so the test cannot pass without a failure
    to recover from.
    """
    earlier = set((job["dir"] / "eventlog").iterdir())  # only this application's events count
    alive = [w for w in cluster.procs if w.startswith("worker") and cluster.procs[w].poll() is None]
    assert len(alive) == 2, "the cluster lost a worker before the test"
    driver, out, err = _submit(cluster, job, "killed")
    try:
        victim, task, deadline = None, None, time.monotonic() + 300
        while victim is None and driver.poll() is None and time.monotonic() < deadline:
            for w in alive:
                if (task := _running_task(cluster, w)) is not None:
                    victim = w
                    break
            else:
                time.sleep(0.05)
        assert victim is not None, f"no task seen running on a worker before the job ended:\n{err.read_text()[-2000:]}"
        cluster.kill_worker(victim)
        rc = driver.wait(timeout=600)
    finally:
        cluster.track()
    assert rc == 0, err.read_text()[-3000:]
    lost = _lost_tasks(set((job["dir"] / "eventlog").iterdir()) - earlier)
    assert lost, f"no task was lost: the kill of {victim} during {task} came too late"
    assert _rows(out) == _rows(job["local"])
