"""Small builders shared by the tests: streams written as in the papers, one-call evaluation."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Iterable, Sequence

from cepagg.cli import main
from cepagg.engines import ENGINES
from cepagg.events import EventBatch
from cepagg.lang import compile_query
from cepagg.result import Result

#: the query :func:`cli_run` runs
CLI_QUERY = "RETURN COUNT(*) PATTERN SEQ(A a, B b) WITHIN 10 s"

_TOKEN = re.compile(r"^([A-Za-z]+?)(\d+)$")


def stream(text: str, **attrs: Sequence[Any]) -> list[dict]:
    """``"a1 b2 c2"`` -> events A@1, B@2, C@2 (the letter is the type, the number the time).

    Keyword arguments give an attribute per event, in order (None for absent).
    """
    rows = []
    for i, tok in enumerate(text.split()):
        m = _TOKEN.match(tok)
        assert m, f"bad token {tok!r}"
        row = {"type": m.group(1).upper(), "ts": int(m.group(2))}
        for name, values in attrs.items():
            if values[i] is not None:
                row[name] = values[i]
        rows.append(row)
    return rows


def events(pairs: Iterable[tuple], names: Sequence[str] = ()) -> list[dict]:
    """``[("A", 1, 5), ...]`` -> events with type, ts and the named attributes."""
    return [dict({"type": p[0], "ts": p[1]}, **dict(zip(names, p[2:]))) for p in pairs]


def run(query: str, rows: list[dict], engine: str = "reference", time_unit: str = "ms") -> Result:
    q = compile_query(query, time_unit=time_unit)
    return ENGINES[engine](q).run(EventBatch.from_rows(rows, time_unit=time_unit))


def matches(query: str, rows: list[dict], engine: str = "reference") -> set[frozenset]:
    """The matches of a RETURN-of-events query as sets of ``type+ts`` labels (``{"r1", "w2"}``)."""
    res = run(query, rows, engine)
    cols = res.columns
    i_match, i_type, i_ts = cols.index("match"), cols.index("type"), cols.index("ts")
    found: dict[int, set[str]] = {}
    for r in res.rows:
        found.setdefault(r[i_match], set()).add(f"{r[i_type].lower()}{r[i_ts]}")
    return {frozenset(s) for s in found.values()}


def ms(*labels: str) -> frozenset:
    return frozenset(labels)


def run_in_pieces(eng, batch: EventBatch, rng) -> tuple[list[int], list[tuple]]:
    """Run ``eng`` over the time-sorted ``batch`` cut at 1-4 random places: after a cut, now and
    then a watermark just below the next event and a snapshot and restore of the state.
    Returns the cuts and every row the engine returned."""
    state = eng.new_state()
    n = len(batch)
    cuts = sorted(rng.sample(range(1, n), min(n - 1, rng.randint(1, 4))))
    ts = batch.table.column("ts").to_pylist()
    out, prev = [], 0
    for c in cuts + [n]:
        out += eng.process(state, batch.slice(prev, c - prev))
        if c < n and rng.random() < 0.7:
            out += eng.advance(state, ts[c] - 1)  # every event up to ts[c] - 1 was seen
        if rng.random() < 0.5:
            state = eng.restore(eng.snapshot(state))
        prev = c
    out += eng.finish(state)
    return cuts, out


def match_sets(result: Result) -> Counter:
    """The matches of a RETURN-of-events result as a multiset of (group and window cells,
    {(variable, position, event id)}): the same matches compare equal whatever their numbers."""
    cols = list(result.columns)
    key_cols = cols[:cols.index("match")]
    found: dict[tuple, set] = defaultdict(set)
    for row in result.rows:
        d = dict(zip(cols, row))
        found[tuple(d[c] for c in key_cols) + (d["match"],)].add((d["var"], d["pos"], d["event_id"]))
    return Counter((k[:-1], frozenset(v)) for k, v in found.items())


def write_file(tmp_path: Path, text: str, name: str = "e.csv") -> Path:
    """A file of ``text`` under ``tmp_path``."""
    p = tmp_path / name
    p.write_text(text)
    return p


def cli_run(*args) -> int:
    """``cepagg run`` of :data:`CLI_QUERY` on the reference engine without Spark, more
    arguments after it; the exit status."""
    return main(["run", "-q", CLI_QUERY, "--no-spark", "--engine", "reference", *map(str, args)])
