"""Per-variable event buffers: the only state recomputation keeps.

One buffer per pattern variable and partition holds, in stream order, the events that may bind
the variable (right type, local conditions true) and are still inside the window of some future
or pending match. Old events are dropped from the front as time passes, so a buffer never holds
more than the events of about one window (two with trailing negation, whose matches wait for
their scope to close), whatever the number of matches.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from ...events import Event

_COMPACT = 512  # dropped events are removed from the lists in chunks (amortised O(1))


@dataclass
class Buffer:
    events: list[Event] = field(default_factory=list)
    ts: list[int] = field(default_factory=list)
    head: int = 0  # events[:head] have expired

    def append(self, e: Event) -> None:
        self.events.append(e)
        self.ts.append(e.ts)

    def drop_before(self, t: int) -> None:
        """Forget the events with ``ts < t``."""
        self.head = bisect.bisect_left(self.ts, t, self.head)
        if self.head >= _COMPACT and 2 * self.head >= len(self.ts):
            del self.events[:self.head]
            del self.ts[:self.head]
            self.head = 0

    def span(self, lo: int, hi: int) -> tuple[int, int]:
        """Index range of the events with ``lo <= ts < hi``."""
        i = bisect.bisect_left(self.ts, lo, self.head)
        return i, bisect.bisect_left(self.ts, hi, i)

    def count(self, lo: int, hi: int) -> int:
        i, j = self.span(lo, hi)
        return j - i

    def __len__(self) -> int:
        return len(self.ts) - self.head
