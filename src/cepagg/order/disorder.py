"""Turn an in-order stream into a disordered arrival sequence (tests and ``cepagg bench disorder``).

Each event is delayed with probability ``fraction`` by a random delay (in event-time units)
and arrives at ``ts + delay``; arrival order is by that arrival time (ties keep the stream
order). Delays:

* ``uniform``: 1..``scale``;
* ``exp``: 1 + an exponential with mean ``scale``;
* ``pareto``: a long tail, ``scale * (Pareto(alpha) - 1)`` rounded up, capped at ``cap``.

``bursts``: with this probability per event of a type in ``burst_types`` (usually the negated
types), that event and the next ``burst_len`` events of those types are delayed together by
``burst_delay``: bursts of late negative events, the case that forces revisions.

``punctuate``: after each arrival, with this probability, a truthful punctuation is inserted:
for every type (``punct="types"``: one punctuation per type, each closing what has fully
arrived of that type) or for all types at once (``punct="all"``, a watermark).

Event identities (``_id``) are stream positions, so the events sorted by (ts, _id) are the
original stream and ``Reference(query).run(arrival.in_order())`` is the in-order answer.
"""

from __future__ import annotations

import heapq
import math
import random
from typing import Any, Mapping, Sequence

from ..events import EventBatch
from .stream import Arrival, Punctuation

DELAYS = ("uniform", "exp", "pareto")


def delay_of(rng: random.Random, kind: str, scale: float, alpha: float = 1.5, cap: int | None = None) -> int:
    if kind == "uniform":
        d = rng.randint(1, max(1, int(scale)))
    elif kind == "exp":
        d = 1 + int(rng.expovariate(1.0 / max(scale, 1e-9)))
    elif kind == "pareto":
        d = max(1, math.ceil(scale * (rng.paretovariate(alpha) - 1)))
    else:
        raise ValueError(f"delay distribution {kind!r}: expected one of {', '.join(DELAYS)}")
    return min(d, cap) if cap is not None else d


def disorder(rows: Sequence[Mapping[str, Any]], rng: random.Random, *, fraction: float = 0.2,
             delay: str = "uniform", scale: float = 5, alpha: float = 1.5, cap: int | None = None,
             burst_types: Sequence[str] = (), bursts: float = 0.0, burst_len: int = 3,
             burst_delay: int | None = None, punctuate: float = 0.0, punct: str = "types",
             time_unit: str = "ms") -> Arrival:
    """A disordered arrival of the in-order ``rows`` (sorted by ts here, stably)."""
    order = sorted(range(len(rows)), key=lambda i: rows[i]["ts"])
    stream = [dict(rows[i]) for i in order]
    for r in stream:
        r.pop("_id", None)
    delays = [0] * len(stream)
    for i in range(len(stream)):
        if rng.random() < fraction:
            delays[i] = delay_of(rng, delay, scale, alpha, cap)
    if burst_types and bursts > 0:
        bd = burst_delay if burst_delay is not None else int(3 * scale) + 1
        left = 0
        for i, r in enumerate(stream):
            if r["type"] not in burst_types:
                continue
            if left == 0 and rng.random() < bursts:
                left = burst_len
            if left:
                delays[i] = max(delays[i], bd)
                left -= 1
    arrive = sorted(range(len(stream)), key=lambda i: (stream[i]["ts"] + delays[i], i))
    batch = EventBatch.from_rows([stream[i] for i in arrive], time_unit, ids=arrive)
    punctuations: list[tuple[int, Punctuation]] = []
    if punctuate > 0:
        punctuations = _punctuations(stream, arrive, rng, punctuate, punct)
    return Arrival.from_batch(batch, punctuations)


def _punctuations(stream, arrive, rng, rate: float, punct: str) -> list[tuple[int, Punctuation]]:
    """Truthful punctuations: after arrival k, a type is closed up to (earliest time of its
    events still to come) - 1, or up to the largest time seen when none is left."""
    types = sorted({r["type"] for r in stream})
    pending: dict[str, list] = {t: [] for t in types}
    for i in arrive:
        heapq.heappush(pending[stream[i]["type"]], (stream[i]["ts"], i))
    gone: set[int] = set()
    clock = None
    out: list[tuple[int, Punctuation]] = []
    last: dict = {}
    for k, i in enumerate(arrive):
        gone.add(i)
        clock = stream[i]["ts"] if clock is None else max(clock, stream[i]["ts"])
        for t in types:
            heap = pending[t]
            while heap and heap[0][1] in gone:
                heapq.heappop(heap)
        if rng.random() >= rate:
            continue
        closed = {t: (pending[t][0][0] - 1 if pending[t] else clock) for t in types}
        if punct == "all":
            candidates = [(None, min(closed.values()))]
        else:
            candidates = list(closed.items())
        for t, upto in candidates:
            if upto > last.get(t, -2**62):
                last[t] = upto
                out.append((k + 1, Punctuation(t, upto)))
    return out


def exact_punctuations(arrival: Arrival, rate: float, punct: str = "types",
                       rng: random.Random | None = None) -> Arrival:
    """The same arrival with truthful punctuations added (computed from the whole arrival,
    as a source that knows its own delays would send them)."""
    rng = rng or random.Random(0)
    table = arrival.events.table
    stream = [{"type": t, "ts": ts} for t, ts in zip(table.column("type").to_pylist(), table.column("ts").to_pylist())]
    existing, k = [], 0
    for item in arrival.items:
        if isinstance(item, Punctuation):
            existing.append((k, item))
        else:
            k += 1
    added = _punctuations(stream, list(range(len(stream))), rng, rate, punct)
    return Arrival.from_batch(arrival.events, sorted(existing + added, key=lambda x: x[0]))
