"""Small builders shared by the tests: streams written as in the papers, one-call evaluation."""

from __future__ import annotations

import re
from typing import Any, Iterable, Sequence

from cepagg.engines import ENGINES
from cepagg.events import EventBatch
from cepagg.lang import compile_query
from cepagg.result import Result

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
