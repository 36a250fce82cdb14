"""What the user's terminal shows of a streaming run, checked without Spark: pyspark's worker
lines filtered out of a child's stderr, and the progress line of a micro-batch."""

from __future__ import annotations

import io
import subprocess
import sys

from cepagg.spark.console import LineFilter, quiet_worker_lines
from cepagg.spark.progress import ROWS_OUT, BatchLines

NOISE = ("Starting Streaming TransformWithStateInPandas Python worker.\n\n"
         "Streaming TransformWithStateInPandas Python worker finish init stage of Python runner. "
         "Received UDF from JVM: <bound method X>, received return type of UDF: StructType([]).\n\n")
KEPT = "26/11/26 19:47:28 WARN NativeCodeLoader: Unable to load native-hadoop library\n\nTraceback: boom\n"


def test_worker_lines_and_their_blank_lines_are_dropped_whatever_the_chunks():
    data = (NOISE + KEPT + NOISE).encode()
    for size in (1, 7, 64, len(data)):
        keep = LineFilter()
        out = b"".join(keep.feed(data[i:i + size]) for i in range(0, len(data), size)) + keep.close()
        assert out.decode() == KEPT, size


def _child_stderr(capfd, active: bool) -> str:
    with quiet_worker_lines(active=active):
        child = subprocess.Popen([sys.executable, "-c", f"import sys; sys.stderr.write({NOISE + KEPT!r})"])
    child.wait()
    import time

    time.sleep(0.3)  # the filter's thread forwards what the child wrote
    return capfd.readouterr().err


def test_a_child_started_in_the_block_writes_through_the_filter(capfd):
    assert _child_stderr(capfd, active=True) == KEPT
    print("after the block", file=sys.stderr)
    assert capfd.readouterr().err == "after the block\n"


def test_verbose_keeps_every_line(capfd):
    assert _child_stderr(capfd, active=False) == NOISE + KEPT


def test_a_progress_line_says_events_rows_watermark_and_state():
    report = {"batchId": 3, "numInputRows": 20, "observedMetrics": {ROWS_OUT: {"rows": 1}},
              "eventTime": {"watermark": "1970-01-01T00:00:00.078Z"},
              "stateOperators": [{"numRowsTotal": 4, "memoryUsedBytes": 12384}]}
    assert BatchLines("ms").line(report) == "batch 3: 20 events in, 1 row out, watermark 78, state 4 rows / 12.1 KB"
    report["eventTime"]["watermark"] = "1970-01-01T00:01:18.000Z"
    assert "watermark 78," in BatchLines("s").line(report)


def test_every_progress_line_has_the_same_fields():
    """A micro-batch with no input (Spark reports no observed count for it) left out "rows out"."""
    report = {"batchId": 2, "numInputRows": 0, "eventTime": {"watermark": "1970-01-01T00:00:00.007Z"},
              "stateOperators": [{"numRowsTotal": 2, "memoryUsedBytes": 2048}]}
    assert BatchLines("ms").line(report) == "batch 2: 0 events in, 0 rows out, watermark 7, state 2 rows / 2.0 KB"
    counted = {**report, "observedMetrics": {ROWS_OUT: {"rows": 3}}}
    fields = [line.split(", ") for line in (BatchLines("ms").line({"batchId": 0}), BatchLines("ms").line(counted))]
    assert [[f.split()[-1] for f in parts] for parts in fields] == [["in", "out", "yet", "KB"],
                                                                    ["in", "out", "7", "KB"]]


def test_the_end_of_stream_marker_is_not_counted_as_an_event():
    """The batch holding the end-of-stream marker said "1 event in" when no event of the input came."""
    report = {"batchId": 4, "numInputRows": 1, "observedMetrics": {ROWS_OUT: {"rows": 0}},
              "eventTime": {"max": "2255-03-14T16:00:00.000Z", "min": "2255-03-14T16:00:00.000Z",
                            "watermark": "1970-01-01T00:00:00.078Z"}}
    assert BatchLines("ms").line(report) == ("batch 4: 0 events in, end of input, 0 rows out, watermark 78, "
                                             "state 0 rows / 0.0 KB")
    report.update(numInputRows=3, eventTime={**report["eventTime"], "min": "1970-01-01T00:00:00.080Z"})
    assert BatchLines("ms").line(report).startswith("batch 4: 2 events in, end of input, 0 rows out")
    report["eventTime"]["max"] = "1970-01-01T00:00:00.090Z"
    assert BatchLines("ms").line(report).startswith("batch 4: 3 events in, 0 rows out")


def test_the_end_of_stream_marker_is_found_by_offset_where_spark_reports_no_event_times():
    """The ordering layer keeps its own clocks: Spark reports no event times, and the batch holding
    the marker said "1 event in"."""
    source = {"startOffset": '{"pos": 3}', "endOffset": '{"pos": 4}', "latestOffset": '{"pos": 4}'}
    report = {"batchId": 1, "numInputRows": 1, "eventTime": {}, "sources": [source]}
    rest = ", 0 rows out, clocks per key, state 0 rows / 0.0 KB"
    assert BatchLines("ms", finite=True, own_clocks=True).line(report) == "batch 1: 0 events in, end of input" + rest
    assert BatchLines("ms", own_clocks=True).line(report) == "batch 1: 1 event in" + rest  # (a source that runs on)
    first = {"batchId": 0, "numInputRows": 3, "sources": [{**source, "startOffset": "null", "endOffset": '{"pos": 3}'}]}
    assert BatchLines("ms", finite=True, own_clocks=True).line(first) == "batch 0: 3 events in" + rest


def test_each_batch_is_reported_once(capsys):
    class Query:
        recentProgress = [{"batchId": 0, "numInputRows": 2}, {"batchId": 1, "numInputRows": 0}]

    lines = BatchLines("ms", "pairs")
    lines(Query())
    lines(Query())
    rest = ", 0 rows out, watermark none yet, state 0 rows / 0.0 KB"
    assert capsys.readouterr().err.splitlines() == ["cepagg: pairs: batch 0: 2 events in" + rest,
                                                    "cepagg: pairs: batch 1: 0 events in" + rest]


class _Running:
    """A query that is active for ``polls`` looks at it, then ends (with ``error``, if given)."""

    def __init__(self, polls: int, error: Exception | None = None):
        self.polls, self.error = polls, error

    @property
    def isActive(self):
        self.polls -= 1
        return self.polls > 0

    def exception(self):
        return self.error


def test_follow_reports_every_running_query_until_all_end():
    import pytest

    from cepagg.spark.streaming import follow

    seen = []
    long, short = _Running(3), _Running(1)
    follow([(long, lambda q: seen.append("long")), (short, lambda q: seen.append("short"))])
    assert seen[:2] == ["long", "short"] and seen.count("long") == 3  # the first query does not hold up the second
    with pytest.raises(RuntimeError, match="boom"):
        follow([(_Running(1, RuntimeError("boom")), None)])


def test_ctrl_c_stops_the_followed_queries_and_the_run_goes_on_to_its_report(capsys):
    """Ctrl-C under --follow ended the run with "interrupted" alone: no word of the late events
    or of where the results are, the queries not stopped."""
    from cepagg.cli import _follow_until_interrupted

    class Query:
        stopped, polls = False, 0
        status = {"isTriggerActive": False}

        @property
        def isActive(self):
            self.polls += 1
            if self.polls == 1:
                raise KeyboardInterrupt
            return True

        def stop(self):
            self.stopped = True

        def exception(self):
            return None

    q, seen = Query(), []
    assert _follow_until_interrupted([(q, lambda query: seen.append(query.stopped))], "chk") is True
    assert q.stopped and seen[-1] is True  # (the batches finished while it stopped are reported)
    assert capsys.readouterr().err.splitlines()[-1] == ("cepagg: stopped (Ctrl-C); the output holds every finished "
                                                        "micro-batch; run the same command again to go on from "
                                                        "the checkpoint")


def test_sigterm_under_follow_stops_the_queries_at_once_and_ends_the_run(monkeypatch, capsys):
    """SIGTERM under --follow was taken for Ctrl-C (its exception is a KeyboardInterrupt): "Ctrl-C
    again to stop at once", a wait of up to 120 s per query for its micro-batch, exit 130."""
    import time

    import pytest

    from cepagg.cli import _follow_until_interrupted, _Terminated

    def no_wait(seconds):
        raise AssertionError("waited for the micro-batch in progress")

    class Query:
        stopped, polls = False, 0
        status = {"isTriggerActive": True}

        @property
        def isActive(self):
            self.polls += 1
            if self.polls == 1:
                raise _Terminated
            return True

        def stop(self):
            self.stopped = True

    monkeypatch.setattr(time, "sleep", no_wait)
    q, other = Query(), Query()
    other.polls = 1
    with pytest.raises(_Terminated):
        _follow_until_interrupted([(q, None), (other, None)], "chk")
    assert q.stopped and other.stopped
    assert capsys.readouterr().err == ""  # (main prints the one line "cepagg: terminated", exit 143)


def test_sigterm_ends_the_run_with_one_line_and_exit_143(monkeypatch, capsys):
    import cepagg.cli as cli

    def terminated(args):
        raise cli._Terminated

    monkeypatch.setattr(cli, "cmd_warmup", terminated)
    assert cli.main(["warmup"]) == 143
    assert capsys.readouterr().err == "cepagg: terminated\n"


def test_rows_spark_dropped_as_late_are_counted_and_said():
    """Rows older than Spark's watermark never reach cepagg: the progress line and the run's
    closing lines (from ``dropped``) say how many, once per micro-batch."""

    class Query:
        recentProgress = [{"batchId": 0, "numInputRows": 5, "stateOperators": [{"numRowsDroppedByWatermark": 0}]},
                          {"batchId": 1, "numInputRows": 4, "stateOperators": [{"numRowsDroppedByWatermark": 2}]}]

    lines = BatchLines("ms", stream=io.StringIO())
    lines(Query())
    lines(Query())
    assert lines.dropped == 2
    assert lines.stream.getvalue().splitlines()[1].endswith(", 2 rows dropped by Spark as late")
    assert "dropped" not in lines.stream.getvalue().splitlines()[0]


class _Failing:
    """A query that finishes one more micro-batch (3 rows dropped by Spark as late) and fails
    between two looks: in the moment after its progress was read and before it was asked
    whether it runs."""

    def __init__(self):
        self.recentProgress = [{"batchId": 0, "numInputRows": 5}]
        self.stopped = False

    @property
    def isActive(self):
        self.recentProgress = self.recentProgress + [
            {"batchId": 1, "numInputRows": 4, "stateOperators": [{"numRowsDroppedByWatermark": 3}]}]
        return False

    def exception(self):
        return RuntimeError("boom")

    def stop(self):
        self.stopped = True


def test_a_failed_query_has_every_micro_batch_it_finished_reported(capsys):
    """The progress was read before the query was asked whether it runs: the batch it finished
    just before it failed was never reported, nor the rows Spark dropped in it."""
    import pytest

    from cepagg.spark.streaming import follow

    lines = BatchLines("ms")
    with pytest.raises(RuntimeError, match="boom"):
        follow([(_Failing(), lines)])
    assert lines.dropped == 3
    assert "batch 1: 4 events in" in capsys.readouterr().err


def test_a_failed_query_stops_the_others_and_each_reports_its_last_batches():
    """The first failure was raised with the workload's other queries left running."""
    import pytest

    from cepagg.cli import _follow_until_interrupted

    failing, other, seen = _Failing(), _Running(100), []
    other.stop = lambda: seen.append("stopped")
    with pytest.raises(RuntimeError, match="boom"):
        _follow_until_interrupted([(other, lambda q: seen.append("report")), (failing, None)], "chk")
    assert seen[-2:] == ["stopped", "report"]


def test_ctrl_c_is_noted_where_spark_may_be_in_a_call_and_acted_on_at_the_next_look(capfd):
    """pyspark's handler (or a KeyboardInterrupt) inside a call to the JVM: py4j's tracebacks, and a
    first Ctrl-C while the stream started could go unanswered."""
    import os
    import signal

    import pytest

    from cepagg.cli import _CtrlC, _follow_until_interrupted

    ctrl_c = _CtrlC()
    before = signal.getsignal(signal.SIGINT)  # (pyspark's, once a session started in the main thread)
    with ctrl_c.answering("noted\n"):
        os.kill(os.getpid(), signal.SIGINT)  # (as if inside a call: nothing is raised there)
        for _ in range(100):  # (delivered at the next bytecodes)
            if ctrl_c:
                break
        assert ctrl_c.pressed == 1
        with pytest.raises(KeyboardInterrupt):
            ctrl_c.check()
        with pytest.raises(KeyboardInterrupt):  # a second press stops at once
            os.kill(os.getpid(), signal.SIGINT)
            for _ in range(100):
                pass
    assert signal.getsignal(signal.SIGINT) is before
    assert capfd.readouterr().err == "noted\n"

    class Query:
        stopped = False
        isActive = True
        status = {"isTriggerActive": False}

        def stop(self):
            self.stopped = True

        def exception(self):
            return None

    q = Query()
    assert _follow_until_interrupted([(q, None)], None, ctrl_c) is True  # (pressed while it started)
    assert q.stopped


class _Query:
    """A running streaming query as :func:`cepagg.cli._follow` sees it."""

    def __init__(self, error=None):
        self.error, self.stopped = error, False
        self.isActive, self.status = error is None, {"isTriggerActive": False}

    def stop(self):
        self.stopped, self.isActive = True, False

    def exception(self):
        return self.error


def test_a_query_that_failed_while_ctrl_c_was_answered_is_reported_as_failed(capsys):
    """It was reported as "stopped (Ctrl-C)", exit 130."""
    import pytest

    from cepagg.cli import _CtrlC, _follow_until_interrupted

    ctrl_c = _CtrlC()
    ctrl_c.pressed = 1
    ok, failed = _Query(), _Query(RuntimeError("boom"))
    with pytest.raises(RuntimeError, match="boom"):
        _follow_until_interrupted([(ok, None), (failed, None)], None, ctrl_c)
    assert ok.stopped and "stopped (Ctrl-C)" not in capsys.readouterr().err


def test_a_ctrl_c_while_a_workload_starts_leaves_the_queries_not_started_out_of_the_report(monkeypatch):
    """The late events of every query of the workload were reported, read from the checkpoints of
    queries that never ran (an earlier run's)."""
    import argparse

    import cepagg.cli as cli

    ctrl_c = cli._CtrlC()

    def start(*a, **k):
        ctrl_c.pressed = 1  # (pressed while the first query started)
        return _Query()

    monkeypatch.setattr("cepagg.spark.streaming.start", start)
    monkeypatch.setattr(cli, "_follow_until_interrupted", lambda running, checkpoint, ctrl_c: True)
    args = argparse.Namespace(out_format="csv", delay="0 seconds", time_unit="ms", engine="auto", numbers="exact",
                              on_late="count", follow=True, trigger=None, checkpoint="chk")
    jobs = [(n, "RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 5", f"out/{n}", f"chk/{n}") for n in ("q1", "q2", "q3")]
    assert cli._run_stream_jobs(args, None, jobs, [None] * 3, ctrl_c) == (True, 1)


def test_the_stream_session_starts_outside_the_main_thread(monkeypatch):
    """pyspark installs its Ctrl-C handler when a session starts in the main thread; that handler
    calls the JVM from inside the call in progress."""
    import argparse
    import signal
    import threading

    import cepagg.cli as cli

    def session(args):
        if threading.current_thread() is threading.main_thread():  # (as pyspark's SparkContext does)
            signal.signal(signal.SIGINT, lambda *_: None)
        return "spark"

    monkeypatch.setattr(cli, "spark_session", session)
    monkeypatch.setattr("cepagg.spark.session.running_session", lambda: None)  # (none runs yet)
    before = signal.getsignal(signal.SIGINT)
    assert cli._stream_session(argparse.Namespace(verbose=True)) == "spark"
    assert signal.getsignal(signal.SIGINT) is before
