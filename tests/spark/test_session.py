"""The SparkSession cepagg starts or takes: its settings, and a running session's kept."""

from __future__ import annotations

import argparse
import threading

import pytest

JAVA = "spark.driver.extraJavaOptions"


def test_the_driver_threads_get_a_deep_stack_whatever_java_options_the_user_gives():
    from cepagg.spark.session import THREAD_STACK, session_settings

    assert session_settings(None, 2)[JAVA].split() == [THREAD_STACK, "-XX:+UseSerialGC"]
    own = session_settings({JAVA: "-XX:+UseG1GC -Dapp=1"}, 2)[JAVA].split()
    assert own == [THREAD_STACK, "-XX:+UseG1GC", "-Dapp=1"]  # (the user's replace cepagg's garbage collector)
    assert session_settings({JAVA: "-Xss4m"}, 2)[JAVA].split()[-1] == "-Xss4m"  # (the last -Xss counts)


@pytest.mark.spark
def test_stream_takes_the_running_session_with_its_settings(spark):
    """cepagg.cli.main in an application: the stream's session, started in a thread of its own,
    had cepagg's defaults set over the running session's (its time zone reset to UTC)."""
    import cepagg.cli as cli
    from cepagg.spark.session import get_session

    zone = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", "America/New_York")
    try:
        assert cli._stream_session(argparse.Namespace(master=None, spark_config=None, verbose=False)) is spark
        got = {}
        thread = threading.Thread(target=lambda: got.setdefault("s", get_session()))
        thread.start()
        thread.join()
        assert got["s"] is spark
        assert spark.conf.get("spark.sql.session.timeZone") == "America/New_York"
    finally:
        spark.conf.set("spark.sql.session.timeZone", zone)
