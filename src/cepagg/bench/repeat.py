"""The median of repeated short runs, for benchmarks that compare them with long ones.

A run of a few milliseconds varies 2x from run to run on a shared VM, and a ratio against a
peer or baseline that runs for seconds or minutes once is only as good as that number. So a
short run is repeated until the runs have taken ``SHORT_S`` seconds in all (then on to an odd
count, so that the median is a run) or ``MOST`` runs were made, and the median run is kept.
"""

from __future__ import annotations

from typing import Callable, TypeVar

T = TypeVar("T")

SHORT_S, MOST = 1.0, 5


def median_run(run: Callable[[], T], seconds: Callable[[T], float]) -> tuple[T, list[T]]:
    """(the median run, all runs) of calling ``run()``; ``seconds(r)`` is the time a run took."""
    runs = [run()]
    while len(runs) < MOST and (sum(map(seconds, runs)) < SHORT_S or len(runs) % 2 == 0):
        runs.append(run())
    return sorted(runs, key=seconds)[len(runs) // 2], runs
