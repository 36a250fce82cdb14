"""The output of the ordering layer: result rows tagged with what they do to the result.

Every output row has the query's output columns plus:

* ``kind``: for aggregates ``row`` (first value of a group/window/instant), ``revision`` (a
  corrected value for the same key) or ``retract`` (the key has no row any more: its aggregate
  cells are null); for matches ``insert`` or ``delete`` (the chapter's ``<+, t>`` and
  ``<-, t>``, Algorithms 3 and 4). The rows of one match share its ``match`` number, which is
  unique in the run: a deleted match is deleted under the number it was inserted with;
* ``revision``: 0, 1, 2, ... per aggregate key; 0 for an insertion, 1 for a deletion;
* ``at``: the arrival position after which it was emitted (``len(arrival)`` at the end);
* ``clock``: the largest event time that had arrived when it was emitted.

:func:`net` folds such a stream into the final result: the latest revision per key (dropping
retracted keys), insertions minus deletions of matches. The tests compare it with the
reference evaluator on the events sorted by time (:func:`same_result`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Iterable, Sequence

from ..lang.model import Query
from ..result import Result, sort_key
from .shape import Shape

AGG_KINDS = ("row", "revision", "retract")
MATCH_KINDS = ("insert", "delete")
EXTRA_COLUMNS = ("kind", "revision", "at", "clock")


@dataclass(frozen=True)
class Output:
    kind: str
    row: tuple
    revision: int
    at: int
    clock: int | None = None

    def as_tuple(self) -> tuple:
        return self.row + (self.kind, self.revision, self.at, self.clock)


def output_columns(query: Query) -> tuple[str, ...]:
    return tuple(query.output_columns) + EXTRA_COLUMNS


def to_result(query: Query, outputs: Sequence[Output], kinds: tuple = ()) -> Result:
    """The output stream itself as a table (output columns + kind, revision, at, clock)."""
    k = tuple(kinds) + ("str", "int", "int", "int") if kinds else ()
    return Result(output_columns(query), [o.as_tuple() for o in outputs], k)


def net(query: Query, outputs: Iterable[Output], kinds: tuple = ()) -> Result:
    """The final result a consumer holds after applying every output in order."""
    shape = Shape(query)
    if not query.returns_matches:
        latest: dict[tuple, Output] = {}
        for o in outputs:
            key = tuple(o.row[:shape.width])
            if key not in latest or o.revision >= latest[key].revision:
                latest[key] = o
        rows = [o.row for o in latest.values() if o.kind != "retract"]
        return Result(query.output_columns, rows, kinds).sorted()
    live: dict[int, list[tuple]] = {}
    state: dict[int, tuple[int, str]] = {}
    for o in outputs:
        number = o.row[shape.width]
        last = state.get(number)
        if last is not None and last[0] > o.revision:
            continue
        if last is None or last[0] < o.revision:
            state[number] = (o.revision, o.kind)
            live[number] = []
        if o.kind == "insert":
            live[number].append(o.row)
    present = {n: rows for n, rows in live.items() if state[n][1] == "insert"}
    return _renumber(query, shape, present.values(), kinds)


def _renumber(query: Query, shape: Shape, matches: Iterable[list[tuple]], kinds: tuple) -> Result:
    """Match rows numbered 1.. in the reference's order (group, last time, first time, ids)."""
    w = shape.width

    def order(rows: list[tuple]):
        times = [r[w + 5] for r in rows]
        ids = sorted((r[w + 5], r[w + 3]) for r in rows)
        return (tuple(sort_key(v) for v in rows[0][:w]), max(times), min(times), tuple(i for _, i in ids))

    out: list[tuple] = []
    for number, rows in enumerate(sorted(matches, key=order), start=1):
        for r in rows:
            out.append(r[:w] + (number,) + r[w + 1:])
    return Result(query.output_columns, out, kinds)


def match_multiset(query: Query, result: Result) -> Counter:
    """Matches of a RETURN-of-events result as a multiset of (group/window cells, events)."""
    return Shape(query).units(result.rows)


def same_result(query: Query, expected: Result, got: Result) -> list[str]:
    """Differences between two results of ``query`` (empty when equal); matches are compared
    as multisets of returned events, since match numbers depend on the order of discovery."""
    if query.returns_matches:
        a, b = match_multiset(query, expected), match_multiset(query, got)
        if a == b:
            return []
        return [f"missing matches: {sorted((a - b).items(), key=repr)[:5]}",
                f"extra matches: {sorted((b - a).items(), key=repr)[:5]}"]
    return expected.sorted().diff(got.sorted())
