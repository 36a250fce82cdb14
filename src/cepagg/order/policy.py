"""What happens to an event that comes later than a strategy's lateness assumption allows.

* K-slack: the event's time has already been released to the engine (``ts <= clock - K - 1``);
* aggressive: its time is older than the kept history (``ts <= clock - L - 1``), so no
  revision can include it;
* conservative: a punctuation said no such event would come (``ts <=`` the punctuation of its
  type or of all types).

The user picks the policy; a late event is never lost silently:

* ``drop``: counted (with a few samples) in the run's statistics and reported by the CLI;
* ``output``: sent to the late-events output (``--late-out PATH`` in the CLI, a ``late`` table
  next to the results in Spark), with the reason;
* ``fail``: the run stops with :class:`LateEventError`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..errors import CepaggError

POLICIES = ("drop", "output", "fail")
SAMPLES = 10


class LateEventError(CepaggError):
    """An event broke the lateness assumption and the policy is ``fail``."""


@dataclass
class LateLog:
    """Late events seen so far (picklable, part of a strategy's state)."""

    count: int = 0
    samples: list = field(default_factory=list)
    pending: list = field(default_factory=list)  # for "output": drained by the caller

    def record(self, policy: str, event: dict[str, Any], reason: str, at: int) -> None:
        if policy == "fail":
            raise LateEventError(f"event {event} arrived at position {at} later than allowed: {reason}")
        self.count += 1
        entry = dict(event, _reason=reason, _arrived_at=at)
        if len(self.samples) < SAMPLES:
            self.samples.append(entry)
        if policy == "output":
            self.pending.append(entry)

    def drain(self) -> list[dict]:
        out, self.pending = self.pending, []
        return out


def check_policy(policy: str) -> str:
    if policy not in POLICIES:
        raise ValueError(f"late-event policy {policy!r}: expected one of {', '.join(POLICIES)}")
    return policy
