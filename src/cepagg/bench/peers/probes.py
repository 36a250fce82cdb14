"""Semantic probes: tiny hand-made streams on which the engines' definitions can differ.

``cepagg bench peers --probes`` runs each probe with every engine that can express it and
prints a table; docs/peers.md quotes it. Each probe isolates one question:

* ``window-edge``: is a match whose span equals the window admitted? (last − first < w)
* ``stnm-kleene``: skip-till-next-match with B+ followed by C: may the run skip a B?
* ``ties``: may two simultaneous events be in sequence?
* ``greta-fig``: GRETA's price stream with down-trends, under the three strategies.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .runner import Runner, parse_result, run_limited, with_rss
from .workloads import DataSpec, Inexpressible, Item, Workload


@dataclass(frozen=True)
class Probe:
    name: str
    question: str
    rows: tuple[tuple[int, str, str, float], ...]   # ts, type, key, price
    workload: Workload
    strategy: str
    window_ms: int
    expected: str   # what cepagg returns, and why (for the table)


def _wl(name: str, items: tuple[Item, ...], types: tuple[str, ...]) -> Workload:
    return Workload(name, name, items, DataSpec(name, "types", 0, 1, types), (0,))


ABC = (Item("A"), Item("B", kleene=True), Item("C"))
SEQ3 = (Item("A"), Item("B"), Item("C"))
TREND = (Item("Stock", kleene=True, var="S", decreasing="price"),)
EDGE_ROWS = ((0, "A", "k", 1.0), (1, "B", "k", 1.0), (2, "B", "k", 1.0), (3, "B", "k", 1.0),
             (10, "C", "k", 1.0))
GRETA = tuple((i + 1, "Stock", "k", float(p)) for i, p in enumerate((10, 2, 9, 8, 7, 1, 6, 5, 4, 3)))

PROBES = [
    Probe("window-edge", "A@0 B@1..3 C@10, SEQ(A, B+, C) WITHIN 10 ms: is a span of exactly 10 in?",
          EDGE_ROWS, _wl("edge", ABC, ("A", "B", "C")), "skip-till-any-match", 10, "0 (span 10 is not < 10)"),
    Probe("window-edge+1", "the same WITHIN 11 ms", EDGE_ROWS, _wl("edge", ABC, ("A", "B", "C")),
          "skip-till-any-match", 11, "7 (every non-empty subset of the three B)"),
    Probe("window-edge-contiguous", "the same, contiguous, WITHIN 10 ms", EDGE_ROWS,
          _wl("edge", ABC, ("A", "B", "C")), "contiguous", 10, "0"),
    Probe("window-edge-contiguous+1", "the same, contiguous, WITHIN 11 ms", EDGE_ROWS,
          _wl("edge", ABC, ("A", "B", "C")), "contiguous", 11, "1 (A B B B C, span 10 < 11)"),
    Probe("stnm-kleene", "a1 b2 b3 c4, SEQ(A, B+, C) skip-till-next-match: may {a1 b2 c4} skip b3?",
          ((1, "A", "k", 1.0), (2, "B", "k", 1.0), (3, "B", "k", 1.0), (4, "C", "k", 1.0)),
          _wl("stnm", ABC, ("A", "B", "C")), "skip-till-next-match", 100,
          "1: only {a1 b2 b3 c4}; b3 could follow b2, so it cannot be skipped"),
    Probe("ties", "A@1 B@1 C@2, SEQ(A, B, C): may simultaneous A and B be in sequence?",
          ((1, "A", "k", 1.0), (1, "B", "k", 1.0), (2, "C", "k", 1.0)),
          _wl("ties", SEQ3, ("A", "B", "C")), "skip-till-any-match", 100, "0: order is strict"),
    Probe("greta-any", "GRETA's prices 10 2 9 8 7 1 6 5 4 3, S+ with S.price > NEXT(S).price",
          GRETA, _wl("greta", TREND, ("Stock",)), "skip-till-any-match", 100, "275"),
    Probe("greta-next", "the same, skip-till-next-match", GRETA, _wl("greta", TREND, ("Stock",)),
          "skip-till-next-match", 100, "25 (every prefix of every deterministic run)"),
    Probe("greta-contiguous", "the same, contiguous", GRETA, _wl("greta", TREND, ("Stock",)),
          "contiguous", 100, "23 (every contiguous decreasing run)"),
]


def run_probes(runner: Runner, folder: Path, engines: list[str]) -> list[tuple[Probe, dict[str, str]]]:
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for p in PROBES:
        csv = folder / f"probe-{p.name}.csv"
        with open(csv, "w") as f:
            f.write("ts,type,key,price\n")
            for ts, t, k, price in p.rows:
                f.write(f"{ts},{t},{k},{price:.2f}\n")
        cells: dict[str, str] = {}
        for e in engines:
            cmd = runner.command(e, p.workload, p.strategy, False, p.window_ms, csv)
            if isinstance(cmd, Inexpressible):
                cells[e] = "n/a"
                continue
            if isinstance(cmd, str):
                cells[e] = "unavailable"
                continue
            env = dict(os.environ)
            if e.startswith("cepagg"):
                src = str(Path(__file__).resolve().parents[3])
                env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
            stdout, rc, _, _, tail = run_limited(with_rss(cmd), runner.timeout_s, env=env)
            try:
                r = parse_result(stdout)
                cells[e] = r.get("unavailable") and "unavailable" or str(r["count"])
            except Exception:  # noqa: BLE001
                cells[e] = "timeout" if rc is None else "error"
            print(f"[peers] probe {p.name}: {e} -> {cells[e]}", flush=True)
        out.append((p, cells))
    return out


def probes_markdown(results: list[tuple[Probe, dict[str, str]]], engines: list[str]) -> str:
    lines = ["| probe | question | cepagg's answer | " + " | ".join(engines) + " |",
             "|---|---|---|" + "---|" * len(engines)]
    for p, cells in results:
        lines.append(f"| {p.name} | {p.question} | {p.expected} | "
                     + " | ".join(cells.get(e, "") for e in engines) + " |")
    return "\n".join(lines)
