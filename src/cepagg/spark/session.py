"""A SparkSession configured for cepagg, with the pitfalls measured on these machines avoided.

Python workers must run the interpreter cepagg is installed in (``PYSPARK_PYTHON``);
``spark.sql.shuffle.partitions`` must be small (200 made a stateful micro-batch 30x slower);
transformWithState needs the RocksDB state store; the console progress bar garbles output;
times are UTC.

The RocksDB state store writes a changelog at each micro-batch's commit (only the state that
changed) instead of zipping and uploading a snapshot of the whole store; snapshots are made in the
background. The commit of a 100-event micro-batch of a stateful query takes 145-209 ms with it
against 546 ms without (docs/benchmarks.md, Spark pipeline). Recovery replays the changelog onto
the last snapshot: exactly once as before, and a checkpoint written without it is resumed with
it (Spark does not pin the setting in the checkpoint).

The JVM keeps its optimising compiler: ``-XX:TieredStopAtLevel=1`` starts a session 2-5 s
sooner but made the shuffle and sort of 10^7 events twice as slow (13.3 s against 6.9-8.2 s,
docs/benchmarks.md); the test suite, made of many tiny jobs, sets it for itself.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Mapping

from ..errors import CepaggError, UsageError

DEFAULTS = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.sql.streaming.stateStore.providerClass":
        "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider",
    "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled": "true",
    "spark.driver.extraJavaOptions": "-XX:+UseSerialGC",
    "spark.python.worker.reuse": "true",
}

#: the stack of the driver's threads. A streaming query stopped during a micro-batch (Ctrl-C)
#: ends its Python worker; Spark then matches a regular expression against the worker's error
#: message to tell a stop from a failure, a recursion as deep as the message is long: with
#: Java's default stack the query's thread died of a StackOverflowError, printing a thousand
#: lines of Java stack trace, in 2 of 3 stops (0 of 5 with this stack). The memory is reserved,
#: only the pages a thread uses are taken.
THREAD_STACK = "-Xss64m"


#: the master URLs Spark starts with: yarn, spark:// and k8s:// URLs, local[N], local[*], local[N,F]
#: and local-cluster[N,C,M]. Spark refuses any other with a JVM stack trace and a Python one.
_MASTER = re.compile(r"yarn|(spark|k8s)://\S+|local(\[(\*|[1-9]\d*)(,\s*[1-9]\d*)?\])?"
                     r"|local-cluster\[\s*[1-9]\d*\s*,\s*[1-9]\d*\s*,\s*[1-9]\d*\s*\]")


class SparkStartError(CepaggError):
    """Spark did not start (a setting it refuses, no Java): its own message is on stderr above."""


def check_master(master: str | None) -> None:
    """Refuse, before a JVM starts, a master URL Spark would not start with (UsageError).

    >>> check_master("local[2]"), check_master("spark://h:7077"), check_master(None)
    (None, None, None)
    >>> check_master("local[0]")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    cepagg.errors.UsageError: master 'local[0]': expected local, local[N], ...
    """
    if master is not None and not _MASTER.fullmatch(master):
        raise UsageError(f"master {master!r}: expected local, local[N], local[*], local[N,F], spark://HOST:PORT, "
                         "k8s://URL or yarn")


def prepare_environment() -> None:
    """Environment variables that must be set before the JVM starts."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("TZ", "UTC")
    # Spark's Python workers import cepagg: make sure they find this copy of it.
    src = str(Path(__file__).resolve().parents[2])
    paths = os.environ.get("PYTHONPATH", "").split(os.pathsep)
    if src not in paths:
        os.environ["PYTHONPATH"] = os.pathsep.join([src] + [p for p in paths if p])


def running_session():
    """The SparkSession this process already runs: the thread's active one, else the one the
    process started (pyspark's active session is per thread: a thread of its own has none,
    and a builder there would set cepagg's defaults over the running session's settings).
    None when no session runs."""
    from pyspark.errors import PySparkRuntimeError
    from pyspark.sql import SparkSession

    try:
        return SparkSession.active()
    except PySparkRuntimeError:  # (NO_ACTIVE_OR_DEFAULT_SESSION)
        return None


def get_session(master: str | None = None, config: Mapping[str, str] | None = None,
                app_name: str = "cepagg", log_level: str = "ERROR"):
    """The running SparkSession (:func:`running_session`), or a new one (local[2] unless
    ``master`` says otherwise).

    Args:
        master: e.g. ``local[2]``, ``local[*]``, ``spark://host:7077``, ``yarn``.
        config: extra Spark settings; they override cepagg's defaults.
    """
    check_master(master)
    prepare_environment()
    from pyspark.errors import PySparkRuntimeError
    from pyspark.sql import SparkSession

    active = running_session()
    if active is not None and master is None and not config:
        return active
    builder = SparkSession.builder.appName(app_name).master(master or "local[2]")
    for key, value in session_settings(config, os.cpu_count() or 2).items():
        builder = builder.config(key, value)
    try:
        spark = builder.getOrCreate()
    except PySparkRuntimeError as e:  # the JVM exited before the session existed; it said why on stderr
        raise SparkStartError(f"Spark did not start (master {master or 'local[2]'}, {e.getErrorClass()}); "
                              "Spark's reason is printed above") from None
    spark.sparkContext.setLogLevel(log_level)
    return spark


def session_settings(config: Mapping[str, str] | None, cores: int) -> dict[str, str]:
    """cepagg's defaults, ``config`` over them. The driver's Java options (cepagg's, or the
    user's, which replace them) always start with :data:`THREAD_STACK`: a user's own ``-Xss``,
    later on the line, wins.

    >>> session_settings({"spark.driver.extraJavaOptions": "-Dx=1"}, 2)["spark.driver.extraJavaOptions"]
    '-Xss64m -Dx=1'
    """
    settings = dict(DEFAULTS)
    settings["spark.sql.shuffle.partitions"] = str(max(2, cores))
    settings["spark.default.parallelism"] = str(max(2, cores))
    settings.update(config or {})
    key = "spark.driver.extraJavaOptions"
    settings[key] = f"{THREAD_STACK} {settings[key]}".strip()
    return settings


def read_config_file(path: str | Path) -> dict[str, str]:
    """``key = value`` or ``key value`` lines (spark-defaults.conf style); # comments."""
    out: dict[str, str] = {}
    for raw in Path(path).read_text(encoding="utf-8-sig").splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if "=" in line:
            key, value = (s.strip() for s in line.split("=", 1))
        else:
            key, _, value = line.partition(" ")
            value = value.strip()
        out[key] = value
    return out
