"""Cluster monitoring events for GRETA's Q2: job starts, load measurements, job ends.

The GRETA paper generated this stream itself (Table 2); the distributions are theirs: mapper
and job ids uniform in 0..10, CPU and memory uniform in 0..1000, load Poisson with mean 100
(at most 10,000), about 3,000 events per second. Each (job, mapper) pair runs tasks: a Start,
a run of Measurements, an End.

>>> b = generate(n_events=500, jobs=2, mappers=2, seed=1)
>>> sorted(set(b.table.column("type").to_pylist())) == ["End", "Measurement", "Start"]
True
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ..events import ID, EventBatch


def generate(n_events: int = 10_000, jobs: int = 10, mappers: int = 10, rate_per_s: float = 3000.0,
             task_length: float = 20.0, seed: int = 7) -> EventBatch:
    """``n_events`` events at ``rate_per_s`` (exponential gaps, ms), over ``jobs x mappers``
    pairs; a task lasts ``task_length`` measurements on average (geometric)."""
    rng = np.random.default_rng(seed)
    pairs = jobs * mappers
    pick = rng.integers(0, pairs, n_events)
    gaps = rng.exponential(1000.0 / rate_per_s, n_events)
    ts = np.floor(np.cumsum(gaps)).astype(np.int64)
    remaining = np.full(pairs, -1, dtype=np.int64)  # -1: no task running
    lengths = rng.geometric(1.0 / task_length, n_events)
    kind = np.empty(n_events, dtype=object)
    for i in range(n_events):  # a small state machine per pair; generation only
        p = pick[i]
        if remaining[p] < 0:
            kind[i] = "Start"
            remaining[p] = lengths[i]
        elif remaining[p] == 0:
            kind[i] = "End"
            remaining[p] = -1
        else:
            kind[i] = "Measurement"
            remaining[p] -= 1
    load = np.minimum(rng.poisson(100, n_events), 10_000)
    table = pa.table({
        ID: pa.array(np.arange(n_events, dtype=np.int64)),
        "ts": pa.array(ts),
        "type": pa.array(kind.tolist(), pa.string()),
        "job": pa.array(pick // mappers),
        "mapper": pa.array(pick % mappers),
        "cpu": pa.array(rng.integers(0, 1001, n_events)),
        "memory": pa.array(rng.integers(0, 1001, n_events)),
        "load": pa.array(load),
    })
    return EventBatch(table)


Q2 = ("RETURN mapper, SUM(M.cpu) PATTERN SEQ(Start S, Measurement M+, End E) "
      "WHERE [job, mapper] AND M.load < NEXT(M).load GROUP-BY mapper WITHIN 1 minute SLIDE 30 seconds")
"""GRETA's Q2 as written in the paper."""
