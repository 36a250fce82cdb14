"""Random streams and the engine-versus-reference check used by property tests.

Streams are small (the reference enumerates every match) and have ties on purpose: equal
timestamps are where engines most often disagree with the semantics.
"""

from __future__ import annotations

import os
import random
import zlib
from typing import Sequence

from cepagg.engines import ENGINES
from cepagg.events import EventBatch
from cepagg.lang import compile_query
from cepagg.result import output_kinds

NIGHTLY = os.environ.get("CEPAGG_NIGHTLY") == "1"
SEED = int(os.environ.get("CEPAGG_SEED", "0"))


def cases(fast: int, nightly: int) -> int:
    """How many random cases a property test runs: ``fast`` in the suite, more when nightly."""
    return nightly if NIGHTLY else fast


def seeded(name: str) -> random.Random:
    """A generator for the cases of a test parametrised by ``name`` (its query text): seeded by
    a checksum of the name, the same in every process (``hash`` of a string is not), mixed
    with ``CEPAGG_SEED`` (default 0), which a sweep sets to draw other cases; a failure
    reproduces with the same value."""
    return random.Random(zlib.crc32(name.encode()) ^ SEED)


def random_stream(rng: random.Random, types: str | Sequence[str] = "ABCD", n: int = 12,
                  max_gap: int = 2, attrs: dict | None = None, start: int = 0) -> list[dict]:
    """``n`` events of the given types; gaps of 0..max_gap (0 makes ties).

    ``attrs`` maps an attribute name to ``(lo, hi)`` (random int), a list (random choice) or
    None-allowing tuples ``(lo, hi, p_null)``.
    """
    attrs = attrs if attrs is not None else {"x": (0, 5)}
    ts = start
    rows = []
    for _ in range(n):
        ts += rng.randint(0, max_gap)
        row = {"type": rng.choice(list(types)), "ts": ts}
        for name, spec in attrs.items():
            if isinstance(spec, list):
                row[name] = rng.choice(spec)
            elif len(spec) == 3 and rng.random() < spec[2]:
                continue
            else:
                row[name] = rng.randint(spec[0], spec[1])
        rows.append(row)
    return rows


def compare(query: str, rows: list[dict], engine: str, time_unit: str = "ms") -> list[str]:
    """Differences between ``engine`` and the reference on one case (empty when they agree)."""
    q = compile_query(query, time_unit=time_unit)
    batch = EventBatch.from_rows(rows, time_unit=time_unit)
    expected = ENGINES["reference"](q).run(batch)
    got = ENGINES[engine](q).run(batch)
    problems = expected.diff(got)
    if problems:
        return [f"query: {query}", f"stream: {rows}", *problems]
    return []


def assert_same(query: str, rows: list[dict], engine: str, time_unit: str = "ms") -> None:
    problems = compare(query, rows, engine, time_unit)
    assert not problems, "\n".join(problems)


def kinds_of(query: str, rows: list[dict]):
    q = compile_query(query)
    return output_kinds(q, EventBatch.from_rows(rows).attribute_kinds())
