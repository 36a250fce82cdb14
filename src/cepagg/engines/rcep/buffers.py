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
    ids: list[int] = field(default_factory=list)  # (the compiled join reads ts and ids as arrays)
    head: int = 0  # events[:head] have expired

    def __setstate__(self, d: dict) -> None:
        if "ids" not in d:  # (a state snapshot written before buffers kept ids)
            d = dict(d, ids=[e.id for e in d["events"]])
        self.__dict__.update(d)

    def append(self, e: Event) -> None:
        self.events.append(e)
        self.ts.append(e.ts)
        self.ids.append(e.id)

    def add(self, id_: int, ts: int, item) -> None:
        """Append an event given by its id and time, ``item`` standing for it in :attr:`events`
        (the compiled join keeps the event's type there, not the event)."""
        self.events.append(item)
        self.ts.append(ts)
        self.ids.append(id_)

    def drop_before(self, t: int) -> None:
        """Forget the events with ``ts < t``."""
        self.head = bisect.bisect_left(self.ts, t, self.head)
        if self.head >= _COMPACT and 2 * self.head >= len(self.ts):
            del self.events[:self.head]
            del self.ts[:self.head]
            del self.ids[:self.head]
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
