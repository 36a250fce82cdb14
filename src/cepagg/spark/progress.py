"""Progress of long Spark runs on stderr: active stages and their task counts, every few seconds.

Spark's own console progress bar is off (it garbles captured output); this prints plain lines
only while a job runs longer than ``after`` seconds.
"""

from __future__ import annotations

import sys
import threading
import time


class Progress:
    def __init__(self, spark, every: float = 3.0, after: float = 3.0, stream=sys.stderr):
        self.tracker = spark.sparkContext.statusTracker()
        self.every, self.after, self.stream = every, after, stream
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> "Progress":
        self.started = time.monotonic()
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(timeout=1)

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            if time.monotonic() - self.started < self.after:
                continue
            parts = []
            for sid in self.tracker.getActiveStageIds():
                info = self.tracker.getStageInfo(sid)
                if info:
                    parts.append(f"stage {sid}: {info.numCompletedTasks}/{info.numTasks} tasks")
            if parts:
                elapsed = time.monotonic() - self.started
                print(f"cepagg: {elapsed:5.0f} s  " + ", ".join(parts), file=self.stream, flush=True)
