"""A measurement in a forked child: its result, a timeout, a failure."""

from __future__ import annotations

import time

from cepagg.bench.child import in_child


def test_the_childs_result_comes_back():
    big = list(range(200_000))  # more than a pipe holds: read before the child is joined
    ended = in_child(lambda out: out.put({"rows": big}), budget=30)
    assert ended.ok and ended.result == {"rows": big} and ended.exitcode == 0


def test_a_child_past_its_budget_is_killed():
    t0 = time.monotonic()
    ended = in_child(lambda out: time.sleep(30), budget=0.5)
    assert ended.timed_out and not ended.ok and ended.result is None
    assert time.monotonic() - t0 < 10


def test_a_failing_child_is_not_ok():
    def fail(out):
        raise SystemExit(3)

    ended = in_child(fail, budget=30)
    assert not ended.timed_out and not ended.ok and ended.exitcode == 3
