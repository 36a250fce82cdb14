"""CORE peer: count the complex events of a CEQL query with pycer (run with the 3.13 venv).

Usage (the runner builds this command; the script imports nothing from cepagg)::

    <core venv>/bin/python core.py --csv FILE --declaration DECL --query CEQL

The CSV is ``ts,type,key,price``; every row becomes a ``PyEvent`` of its type with the attributes
``key:string, ts:int, price:double`` (the declaration names them in that order). CORE enumerates
every complex event into its text output (``get_output``); we count the lines that start a
complex event (``[start,end], (...)``). Prints one line::

    PEER-RESULT {"peer": "core", "count": N, "elapsed_ms": T, "load_ms": L, ...}

``elapsed_ms`` is CORE's own work (``send_events`` + ``get_output`` + counting), the part CORE's
benchmarks time; ``load_ms`` is reading the CSV and building the Python event objects.

Known limits of pycer 0.1.6 found here: ``get_output`` can be called once (sending events after
it crashes the process), so the whole output is held in memory.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time


def count_complex_events(output: str) -> int:
    """Lines of ``get_output`` that start a complex event: ``[start,end], (...)``."""
    n = 0
    for line in output.splitlines():
        if line.startswith("["):
            n += 1
    return n


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--csv", required=True)
    ap.add_argument("--declaration", required=True)
    ap.add_argument("--query", required=True)
    a = ap.parse_args(argv)
    a.csv = os.path.abspath(a.csv)
    # CORE writes a log file (logs/) in the working directory: keep it beside the data.
    os.chdir(os.path.dirname(a.csv))
    import pycer

    t0 = time.perf_counter()
    server = pycer.PyOfflineServer()
    info = server.declare_stream(a.declaration)
    ids = {e.name: e.id for e in info.events_info}
    server.add_query(a.query)
    events = []
    with open(a.csv) as f:
        header = f.readline().strip().split(",")
        assert header == ["ts", "type", "key", "price"], header
        Int, Str, Dbl, Ev = pycer.PyIntValue, pycer.PyStringValue, pycer.PyDoubleValue, pycer.PyEvent
        for line in f:
            ts, typ, key, price = line.rstrip("\n").split(",")
            events.append(Ev(ids[typ], [Str(key), Int(int(ts)), Dbl(float(price))]))
    t1 = time.perf_counter()
    server.send_events(events)
    output = server.get_output()
    count = count_complex_events(output)
    t2 = time.perf_counter()
    print("PEER-RESULT " + json.dumps({
        "peer": "core", "count": count, "events": len(events),
        "elapsed_ms": round((t2 - t1) * 1000, 3), "load_ms": round((t1 - t0) * 1000, 3),
        "output_bytes": len(output)}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
