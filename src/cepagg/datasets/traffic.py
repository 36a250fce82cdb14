"""Position reports with accidents for GRETA's Q3, in the spirit of the Linear Road benchmark.

Linear Road's simulator (3 hours of position reports, up to 4,000 events per second) is not
available; this generator keeps what Q3 reads: each vehicle reports ``Position`` (vehicle,
segment, speed) every ``report_ms``, its speed a random walk (so it decelerates now and then),
moving to the next segment from time to time; ``Accident`` events happen on a segment at a
low rate.

>>> b = generate(n_events=100, vehicles=5, seed=2)
>>> set(b.attribute_names) >= {"vehicle", "segment", "speed"}
True
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ..events import ID, EventBatch


def generate(n_events: int = 10_000, vehicles: int = 200, segments: int = 10,
             rate_per_s: float = 4000.0, accident_rate: float = 0.001, seed: int = 7) -> EventBatch:
    """``n_events`` events at ``rate_per_s``; a fraction ``accident_rate`` are accidents."""
    rng = np.random.default_rng(seed)
    gaps = rng.exponential(1000.0 / rate_per_s, n_events)
    ts = np.floor(np.cumsum(gaps)).astype(np.int64)
    accident = rng.random(n_events) < accident_rate
    vehicle = rng.integers(0, vehicles, n_events)
    segment_of = rng.integers(0, segments, vehicles)
    speed_of = rng.uniform(40, 100, vehicles)
    steps = rng.normal(0, 3, n_events)
    moves = rng.random(n_events) < 0.01
    seg = np.empty(n_events, dtype=np.int64)
    speed = np.empty(n_events, dtype=np.int64)
    for i in range(n_events):  # generation only
        v = vehicle[i]
        if moves[i]:
            segment_of[v] = (segment_of[v] + 1) % segments
        speed_of[v] = min(120.0, max(0.0, speed_of[v] + steps[i]))
        seg[i] = segment_of[v] if not accident[i] else rng.integers(0, segments)
        speed[i] = int(speed_of[v])
    types = np.where(accident, "Accident", "Position")
    table = pa.table({
        ID: pa.array(np.arange(n_events, dtype=np.int64)),
        "ts": pa.array(ts),
        "type": pa.array(types.tolist(), pa.string()),
        "vehicle": pa.array(np.where(accident, -1, vehicle)),
        "segment": pa.array(seg),
        "speed": pa.array(np.where(accident, 0, speed)),
    })
    return EventBatch(table)


Q3 = ("RETURN segment, COUNT(*), AVG(P.speed) PATTERN SEQ(NOT Accident A, Position P+) "
      "WHERE [P.vehicle, segment] AND P.speed > NEXT(P).speed GROUP-BY segment "
      "WITHIN 5 minutes SLIDE 1 minute")
"""GRETA's Q3 as written in the paper."""
