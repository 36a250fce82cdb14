"""One measurement in a forked child process, under a time budget.

The GRETA benchmarks run each measurement in a child forked from the driver: the peak
resident size is a process's, so one run's memory does not hide or inflate the next one's,
and a run that outlasts its budget is killed instead of waited for.
"""

from __future__ import annotations

import multiprocessing as mp
import queue
import time
from dataclasses import dataclass
from typing import Any, Callable


@dataclass(frozen=True)
class Outcome:
    """How a child ended: ``result``, what it put on its queue (None: nothing); ``timed_out``,
    killed at the end of its budget; ``exitcode``, the process's (negative: killed by a
    signal)."""

    result: Any
    timed_out: bool
    exitcode: int | None

    @property
    def ok(self) -> bool:
        """The child finished in time, exited cleanly and sent a result."""
        return not self.timed_out and self.exitcode == 0 and self.result is not None


def in_child(measure: Callable[[Any], None], budget: float) -> Outcome:
    """Run ``measure(out)`` in a forked child (a closure will do: nothing is pickled), ``out``
    a queue on which it puts its one result, and wait at most ``budget`` seconds for it."""
    ctx = mp.get_context("fork")
    out = ctx.Queue()
    p = ctx.Process(target=measure, args=(out,))
    p.start()
    # the result is read before joining: a child blocks on a full pipe until it is read
    deadline = time.monotonic() + budget
    got = None
    while got is None and p.is_alive() and time.monotonic() < deadline:
        try:
            got = out.get(timeout=0.2)
        except queue.Empty:
            pass
    p.join(max(0.0, deadline - time.monotonic()) if got is None else None)
    timed_out = p.is_alive()
    if timed_out:
        p.kill()
        p.join()
    elif got is None and not out.empty():  # (sent as the child ended)
        got = out.get()
    return Outcome(got, timed_out, p.exitcode)
