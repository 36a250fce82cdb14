"""Matches per second of rcep and of the reference on one workload (not a test; run by hand).

``python tests/engines/rcep/speed_check.py EVENTS WINDOW [rcep] [reference]``: the peers'
"types" data (uniform random types A..E and N, 10 keys, mean gap 10 ms, seed 42;
``cepagg.bench.peers.workloads``) and ``PATTERN SEQ(A a, B b+, C c) WHERE [key] WITHIN WINDOW
RETURN a, b, c``. rcep is fed batches of 1,000 events through the engine protocol and its rows
are counted and dropped as they come (a sink would write them); the reference evaluates the
whole input at once, as it always does. With both engines the match sets are compared.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from cepagg.bench.peers.workloads import TYPES, DataSpec, write_data
from cepagg.engines import ENGINES
from cepagg.io import read_events
from cepagg.lang import compile_query


def _sets(columns, rows, into: dict) -> None:
    i_m, i_v, i_e = columns.index("match"), columns.index("var"), columns.index("event_id")
    for r in rows:
        into.setdefault(r[i_m], set()).add((r[i_v], r[i_e]))


def main(n: int, window: str, engines: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = write_data(DataSpec("types", "types", n, 10, TYPES, mean_gap_ms=10, seed=42), Path(tmp))
        batch = read_events(path).batch
    q = compile_query(f"PATTERN SEQ(A a, B b+, C c) WHERE [key] WITHIN {window} RETURN a, b, c")
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
            n_rows, last = 0, 0
            for i in range(0, len(batch), 1000):
                rows = eng.process(state, batch.slice(i, 1000))
                n_rows += len(rows)
                if rows:
                    last = rows[-1][cols.index("match")]
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
    main(int(sys.argv[1]), sys.argv[2], sys.argv[3:] or ["rcep", "reference"])
