"""Matches per second of rcep and of the reference on one workload (not a test; run by hand).

``python tests/engines/rcep/speed_check.py WORKLOAD EVENTS WINDOW [rcep] [reference]``, the
data from ``cepagg.bench.peers.workloads`` (10 keys, mean gap 10 ms):

* ``kleene``: the "types" data (uniform random types A..E and N, seed 42) and
  ``PATTERN SEQ(A a, B b+, C c) WHERE [key] WITHIN WINDOW RETURN a, b, c``;
* ``query1``: the "stock" data (a price walk per key, seed 7) and the RCEP paper's Query 1,
  ``PATTERN SEQ(a, b+, c) WHERE [key] AND a.price < b.price AND b.price < NEXT(b.price) AND
  c.price < FIRST(b.price) WITHIN WINDOW``.
 rcep is fed batches of 1,000 events through the engine protocol and its rows
are counted and dropped as they come (a sink would write them); the reference evaluates the
whole input at once, as it always does. With both engines the match sets are compared.
"""

from __future__ import annotations

import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from cepagg.bench.peers.workloads import TYPES, DataSpec, write_data
from cepagg.engines import ENGINES
from cepagg.io import read_events
from cepagg.lang import compile_query


def _sets(columns, rows, into: dict) -> None:
    i_m, i_v, i_e = columns.index("match"), columns.index("var"), columns.index("event_id")
    for r in rows:
        into.setdefault(r[i_m], set()).add((r[i_v], r[i_e]))


WORKLOADS = {
    "kleene": (DataSpec("types", "types", 0, 10, TYPES, mean_gap_ms=10, seed=42),
               "PATTERN SEQ(A a, B b+, C c) WHERE [key] WITHIN {window} RETURN a, b, c"),
    "query1": (DataSpec("stock", "stock", 0, 10, ("Stock",), mean_gap_ms=10, seed=7),
               "PATTERN SEQ(a, b+, c) WHERE [key] AND a.price < b.price AND b.price < NEXT(b.price) "
               "AND c.price < FIRST(b.price) WITHIN {window}"),
}


def main(workload: str, n: int, window: str, engines: list[str]) -> None:
    spec, text = WORKLOADS[workload]
    with tempfile.TemporaryDirectory() as tmp:
        path = write_data(replace(spec, n_events=n), Path(tmp))
        batch = read_events(path).batch
    q = compile_query(text.format(window=window))
    cols = q.output_columns
    compare = len(engines) == 2
    found = {}
    for name in engines:
        sets: dict = {}
        t0 = time.perf_counter()
        if name == "reference":
            rows = ENGINES[name](q).run(batch).rows
            n_rows, matches = len(rows), len({r[cols.index("match")] for r in rows})
            if compare:
                _sets(cols, rows, sets)
        else:
            eng = ENGINES[name](q)
            state = eng.new_state()
            n_rows = 0
            for i in range(0, len(batch), 1000):
                rows = eng.process(state, batch.slice(i, 1000))
                n_rows += len(rows)
                if compare:
                    _sets(cols, rows, sets)
            rows = eng.finish(state)
            n_rows += len(rows)
            matches = state.next_match - 1
        dt = time.perf_counter() - t0
        found[name] = {frozenset(s) for s in sets.values()}
        print(f"{name:10s} {matches:>10,d} matches {n_rows:>11,d} rows {dt:8.2f} s "
              f"{matches / dt:>12,.0f} matches/s")
    if compare:
        a, b = found.values()
        print("same match sets:", a == b)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:] or ["rcep", "reference"])
