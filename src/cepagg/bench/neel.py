"""Nested patterns: the ``neel`` engine against the reference, the iterative nested executor and flat aseq.

Part 1, OR and AND inside a SEQ, on one generated file (``--events`` events, default 50,000, of
``--keys`` keys, default 10; types A-D uniform; one event every 0-79 ms, so equal timestamps
occur; a 10 s window holds about 25 events per key):

* ``SEQ(A a, OR(B b, C c), D d)`` and ``SEQ(A a, AND(B b, C c), D d)``, ``COUNT(*)`` per key
  ``WITHIN 10 seconds``, on ``neel`` and on the reference (which enumerates every match);
* the flat ``SEQ(A a, B b, D d)`` on aseq, the yardstick for what a nested query should cost.

Every engine's result is checked against the reference's (the run stops on a difference).
Times are CPU seconds of this process (the machine is shared), best of ``--repeat`` for the
fast engines, one run for the reference.

Part 1b, the same file with queries that return matches (``PATTERN P WHERE [key] WITHIN 10
seconds``, every positive variable): the OR and AND queries, ``SEQ(A a, NOT SEQ(B b, C c),
D d)`` (whose normal form has two contradictory disjuncts with the same events) and
``SEQ(A a, NOT AND(B, C), D d)`` (two overlapping ones), each written to a Parquet
file in a temporary directory by ``cepagg.runner.write_matches`` on ``neel`` (the union of its
disjuncts on the match engines) and on the reference, and the flat ``SEQ(A a, B b, D d)`` on
rcep as the yardstick. CPU seconds of one run each, writing included; the match sets of
``neel`` and the reference are compared on the first ``--check-events`` events (default 5,000),
the match counts on the whole file. For a query whose disjuncts Plan-Finder groups, every plan
it priced runs too (``plan`` lines: its estimate at the density measured on the file, events of
each type per window of a key, and the CPU seconds of writing the matches with it), and the
longer ``SEQ(A a, NOT AND(B, C), D d, B b, C c)``, whose matches the reference is too slow to
enumerate on the whole file, is compared with it on the first events only.

Part 1w, part 1's three queries (the flat one and the OR and AND queries, ``COUNT(*)`` per key)
as one workload (:func:`cepagg.plan.plan_workload`: the nested queries' terms that fit join the
flat query's shared aseq plan) against each query run alone on its own plan; CPU seconds of
the evaluation, best of ``--repeat``, every query's rows compared between the two.
``--write`` also writes the workload file beside the events (``.cep``), for ``cepagg run
--no-spark`` and ``cepagg explain``.

Part 2, the workloads of the NEEL chapter's experiments (Mo Liu, "Extending Event Sequence
Processing: New Models and Optimization Techniques", PhD dissertation, WPI, 2012, §5.5): an
outer SEQ with 1-3 negated children, one child of length 2-4, nesting depth 1-3, on a stream of
ten ticker types (``--chapter-events`` events, one per time unit on average, window 40 as
the chapter's 4,000 events/s in 10 ms), and its complex workload, ``neel``
against the chapter's baseline, the iterative nested executor ``neel-iterative``; the
reference's value is checked too. A query ``neel`` refuses is reported with its reason.
``outer`` is the count of the pattern without its NOT items: the candidates the iterative
executor builds and then tests against the negated children (its cost grows with them, while
``neel``'s grows with the events and the disjuncts).

``--parts`` picks parts (``1,1w,1b,2``), ``--only`` part 2's workloads by name prefix.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections import Counter

import numpy as np
import pyarrow as pa

from ..events import ID, EventBatch
from ..lang import compile_query

GROUPED = "RETURN key, COUNT(*) PATTERN {} WHERE [key] GROUP BY key WITHIN 10 seconds"
MATCHES = "PATTERN {} WHERE [key] WITHIN 10 seconds"
NESTED = {"OR": "SEQ(A a, OR(B b, C c), D d)", "AND": "SEQ(A a, AND(B b, C c), D d)"}
NESTED_MATCHES = [NESTED["OR"], NESTED["AND"], "SEQ(A a, NOT SEQ(B b, C c), D d)", "SEQ(A a, NOT AND(B, C), D d)"]
#: part 1b queries whose plans are timed, compared with the reference on the first events only
PLANS_ONLY = ["SEQ(A a, NOT AND(B, C), D d, B b, C c)"]
FLAT = "SEQ(A a, B b, D d)"

TICKERS = ["MSFT", "ORCL", "IPIX", "INTC", "RIMM", "AMAT", "YHOO", "DELL", "CSCO", "QQQ"]


def chapter_workloads() -> list[tuple[str, str]]:
    """(name, pattern) of the chapter's experiment families, as far as its text gives them (the
    figures with the exact queries are lost): children 1-3, child length 2-4, nesting 1-3."""
    children = [("children 1", "SEQ(MSFT, ORCL, NOT SEQ(RIMM, AMAT), IPIX, INTC)"),
                ("children 2", "SEQ(MSFT, NOT SEQ(RIMM, AMAT), ORCL, NOT SEQ(YHOO, DELL), IPIX, INTC)"),
                ("children 3", "SEQ(MSFT, NOT SEQ(RIMM, AMAT), ORCL, NOT SEQ(YHOO, DELL), IPIX, "
                               "NOT SEQ(CSCO, QQQ), INTC)")]
    length = [("length 2", "SEQ(MSFT, ORCL, NOT SEQ(RIMM, AMAT), INTC)"),
              ("length 3", "SEQ(MSFT, ORCL, NOT SEQ(RIMM, AMAT, YHOO), INTC)"),
              ("length 4", "SEQ(MSFT, ORCL, NOT SEQ(RIMM, AMAT, YHOO, DELL), INTC)")]
    nesting = [("nesting 1", "SEQ(MSFT, ORCL, NOT SEQ(IPIX, QQQ), INTC)"),
               ("nesting 2", "SEQ(MSFT, OR(ORCL, SEQ(RIMM, NOT SEQ(YHOO, DELL), AMAT)), INTC)"),
               ("nesting 3", "SEQ(MSFT, OR(ORCL, SEQ(RIMM, OR(AMAT, SEQ(YHOO, NOT SEQ(IPIX, QQQ), DELL)))), "
                             "INTC)")]
    # the complex workload's normalised expression (E1..E7) is printed in the chapter; this is
    # a query with that normal form (E1-E3 from the NOT AND, E4-E5 from the OR, E6-E7 from
    # the NOT SEQ)
    complex_ = [("complex", "OR(SEQ(MSFT, NOT AND(IPIX, QQQ, RIMM), ORCL, INTC), "
                            "SEQ(OR(RIMM, IPIX), DELL, AMAT, MSFT, ORCL), SEQ(CSCO, NOT SEQ(IPIX, RIMM), YHOO, QQQ))"),
                ("AND in SEQ", "SEQ(MSFT, AND(ORCL, IPIX), INTC)"),
                ("OR in SEQ", "SEQ(MSFT, OR(ORCL, SEQ(IPIX, QQQ)), INTC)")]
    return children + length + nesting + complex_


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--events", type=int, default=50_000, help="events of the OR/AND file (default 50,000)")
    p.add_argument("--keys", type=int, default=10, help="keys of the OR/AND file (default 10)")
    p.add_argument("--chapter-events", type=int, default=20_000,
                   help="events of the chapter's workloads (default 20,000)")
    p.add_argument("--chapter-window", type=int, default=40,
                   help="window of the chapter's workloads in time units, one event per unit on "
                        "average (default 40: the chapter's 4,000 events/s in 10 ms)")
    p.add_argument("--repeat", type=int, default=3, help="runs of the fast engines, best kept (default 3)")
    p.add_argument("--skip-reference", action="store_true",
                   help="part 1 without the reference (results then checked against neel-iterative: no)")
    p.add_argument("--check-events", type=int, default=5_000,
                   help="events on which part 1b compares neel's match set with the reference's (default 5,000)")
    p.add_argument("--parts", default="1,1w,1b,2", help="parts to run, comma-separated (default 1,1w,1b,2)")
    p.add_argument("--only", metavar="NAME", help="part 2: only the workloads whose name starts with NAME "
                   "(children, length, nesting, complex)")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--write", metavar="CSV", help="also write part 1's events to this CSV file and part 1w's "
                   "workload beside it (.cep), to time `cepagg run --no-spark` on them, and stop")


def keyed_stream(n: int, keys: int, seed: int) -> EventBatch:
    rng = np.random.default_rng(seed)
    ts = np.cumsum(rng.integers(0, 80, n)).astype(np.int64)
    types = np.array(list("ABCD"), dtype=object)[rng.integers(0, 4, n)]
    key = np.array([f"k{i}" for i in range(keys)], dtype=object)[rng.integers(0, keys, n)]
    return EventBatch(pa.table({ID: np.arange(n, dtype=np.int64), "ts": ts,
                                "type": pa.array(types.tolist(), pa.string()),
                                "key": pa.array(key.tolist(), pa.string())}))


def ticker_stream(n: int, seed: int) -> EventBatch:
    """One event per time unit on average (gaps 0-2, so equal times occur), tickers uniform."""
    rng = np.random.default_rng(seed)
    ts = np.cumsum(rng.integers(0, 3, n)).astype(np.int64)
    types = np.array(TICKERS, dtype=object)[rng.integers(0, len(TICKERS), n)]
    return EventBatch(pa.table({ID: np.arange(n, dtype=np.int64), "ts": ts,
                                "type": pa.array(types.tolist(), pa.string())}))


def positive_part(text: str) -> str:
    """The pattern without its NOT items: the candidates the iterative executor builds before
    it evaluates a negated child (``outer`` in part 2's lines)."""
    from dataclasses import fields, replace

    from ..lang import ast
    from ..lang.neel.rules.base import pattern
    from ..lang.neel.text import pattern_text

    def strip(p):
        changes = {}
        for f in fields(p):
            v = getattr(p, f.name)
            if isinstance(v, tuple) and v and all(isinstance(x, ast.Pattern) for x in v):
                changes[f.name] = tuple(strip(x) for x in v if not isinstance(x, ast.Not))
            elif isinstance(v, ast.Pattern):
                changes[f.name] = strip(v)
        return replace(p, **changes) if changes else p

    return pattern_text(strip(pattern(text)))


def _run(engine: str, text: str, batch: EventBatch, repeat: int):
    """(best CPU seconds, result) of ``repeat`` runs (engine built inside the timing)."""
    from ..engines import ENGINES

    q = compile_query(text)
    best, result = float("inf"), None
    for _ in range(repeat):
        c = time.process_time()
        result = ENGINES[engine](q).run(batch)
        best = min(best, time.process_time() - c)
    return best, result


def _written(engine: str, text: str, batch: EventBatch, path: str) -> tuple[float, int]:
    """(CPU seconds, matches) of writing the matches of ``text`` to Parquet on ``engine``."""
    from ..runner import write_matches

    c = time.process_time()
    w = write_matches(text, batch, path, engine=engine)
    return time.process_time() - c, w.matches


def match_identities(result) -> Counter:
    """The matches of a RETURN-of-events result as a multiset of (cells, {(var, event id)})."""
    cols = list(result.columns)
    m = cols.index("match")
    found: dict[tuple, set] = {}
    for row in result.rows:
        found.setdefault(row[:m + 1], set()).add((row[m + 1], row[m + 3]))
    return Counter((k[:-1], frozenset(v)) for k, v in found.items())


def matches_part(args, batch: EventBatch) -> int:
    """Part 1b (module docstring); the number of queries whose matches differ."""
    from ..engines import ENGINES

    failed = 0
    print(f"\npart 1b: the matches, written to Parquet, {len(batch):,} events")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "m.parquet")
        _written("rcep", MATCHES.format(FLAT), batch.slice(0, 200), path)  # (imports, grammar)
        flat_s, flat_n = _written("rcep", MATCHES.format(FLAT), batch, path)
        print(f"  {'flat ' + FLAT:40} rcep {flat_s:7.2f} s  {flat_n:>10,} matches  {flat_n / flat_s:>9,.0f}/s")
        for pattern in NESTED_MATCHES + PLANS_ONLY:
            text = MATCHES.format(pattern)
            q = compile_query(text)
            head = batch.slice(0, args.check_events)
            same = match_identities(ENGINES["reference"](q).run(head)) == match_identities(ENGINES["neel"](q).run(head))
            neel_s, n = _written("neel", text, batch, path)
            line = f"  {pattern:40} neel {neel_s:7.2f} s  {n:>10,} matches  {n / neel_s:>9,.0f}/s"
            if not args.skip_reference and pattern not in PLANS_ONLY:
                ref_s, ref_n = _written("reference", text, batch, path)
                line += f"  reference {ref_s:7.2f} s  neel {ref_s / neel_s:,.0f}x faster"
                same = same and ref_n == n
            counts = not args.skip_reference and pattern not in PLANS_ONLY
            line += f"  same matches (first {len(head):,} events{'; counts' if counts else ''})" \
                if same else "  DIFFERENT"
            failed += not same
            print(line)
            failed += _plans(q, batch, path, n)
    return failed


def density_of(q, batch: EventBatch) -> float:
    """Events of each type per window of one partition, measured on ``batch``."""
    table = batch.table
    ts = table.column("ts").to_numpy()
    span = max(1, int(ts.max()) - int(ts.min()) + 1)
    types = len(set(table.column("type").to_pylist()))
    keys = [table.column(k).to_pylist() for k in q.partition_by]
    parts = len(set(zip(*keys))) if keys else 1
    return len(batch) / types / parts * min(1.0, q.within / span)


def _plans(q, batch: EventBatch, path: str, expected: int) -> int:
    """Every plan Plan-Finder priced for ``q`` at the measured density, written as on neel;
    the number of plans whose match count differs."""
    from ..engines import ENGINES
    from ..matches import Layout, write
    from ..runner import match_feed

    density = density_of(q, batch)
    eng = ENGINES["neel"](q, density=density)
    failed = 0
    for finder, _ in eng.plan.finder:
        for groups, cost in finder.candidates:
            rest = [(i,) for i in range(len(eng.plan.terms)) if i not in finder.members]
            c = time.process_time()
            planned = ENGINES["neel"](q, match_groups=list(groups) + rest)
            n = write(match_feed(planned, batch), Layout(q, batch, "long"), path, None, None).matches
            cpu = time.process_time() - c
            text = " ".join("{" + ", ".join(f"d{i}" for i in g) + "}" for g in groups)
            chosen = "  chosen" if groups == finder.chosen else ""
            print(f"    plan {text:24} estimate {cost:10,.1f} µs/window at {density:.1f} events/type/window"
                  f"  {cpu:7.2f} s{chosen}" + ("" if n == expected else f"  DIFFERENT: {n:,} matches"))
            failed += n != expected
    return failed


def nested_part(args, batch: EventBatch) -> int:
    """Part 1 (module docstring); the number of queries whose rows differ."""
    failed = 0
    print(f"part 1: {len(batch):,} events, {args.keys} keys, types A-D, "
          f"{int(batch.table.column('ts')[-1].as_py()) / 1000:.0f} s of stream, COUNT(*) per key WITHIN 10 s")
    _run("aseq", GROUPED.format(FLAT), batch.slice(0, 100), 1)  # compile the kernels outside the timing
    flat_s, _ = _run("aseq", GROUPED.format(FLAT), batch, args.repeat)
    print(f"  {'flat ' + FLAT:46} aseq      {flat_s:8.3f} s")
    for name, pattern in NESTED.items():
        text = GROUPED.format(pattern)
        neel_s, got = _run("neel", text, batch, args.repeat)
        line = f"  {pattern:46} neel      {neel_s:8.3f} s  ({neel_s / flat_s:.1f}x flat aseq)"
        if not args.skip_reference:
            ref_s, expected = _run("reference", text, batch, 1)
            diff = expected.diff(got)
            line += f"   reference {ref_s:8.2f} s  neel {ref_s / neel_s:,.0f}x faster"
            line += "  same rows" if not diff else f"  DIFFERENT: {diff[:3]}"
            failed += bool(diff)
        print(line)
    return failed


def workload_text() -> str:
    """Part 1's three queries as a workload file."""
    named = [("flat", FLAT)] + [(name.lower(), pattern) for name, pattern in NESTED.items()]
    return "---\n".join(f"-- name: {n}\n{GROUPED.format(p)}\n" for n, p in named)


def workload_part(args, batch: EventBatch) -> int:
    """Part 1w (module docstring); the number of queries whose rows differ."""
    from ..lang.workload import compile_workload
    from ..plan import plan, plan_workload

    named = compile_workload(workload_text(), schema=batch.attribute_kinds())
    wp = plan_workload([q for _, q in named], [n for n, _ in named])
    wp.run(batch.slice(0, 100))  # compile the kernels outside the timing

    def best(f):
        out, cpu = None, float("inf")
        for _ in range(args.repeat):
            c = time.process_time()
            out = f()
            cpu = min(cpu, time.process_time() - c)
        return cpu, out

    shared_s, shared = best(lambda: wp.run(batch))
    print(f"part 1w: the three queries of part 1 as one workload ({len(wp.shared_terms)} nested terms "
          f"in the shared aseq plan)")
    failed, alone_s = 0, 0.0
    for (name, q), got in zip(named, shared):
        cpu, own = best(lambda p=plan(q): p.build().run(batch))
        alone_s += cpu
        diff = own.diff(got)
        failed += bool(diff)
        print(f"  {name:6} alone {cpu:8.3f} s" + ("  same rows" if not diff else f"  DIFFERENT: {diff[:3]}"))
    print(f"  alone together {alone_s:8.3f} s, as one workload {shared_s:8.3f} s ({alone_s / shared_s:.2f}x)")
    return failed


def main(args) -> int:
    from . import chosen

    parts = set(chosen("--parts", args.parts, ("1", "1w", "1b", "2")) or ())
    batch = keyed_stream(args.events, args.keys, args.seed).sorted()
    if args.write:
        import pyarrow.csv as pcsv

        pcsv.write_csv(batch.table.select(["type", "ts", "key"]), args.write)
        cep = os.path.splitext(args.write)[0] + ".cep"
        with open(cep, "w") as f:
            f.write(workload_text())
        print(f"wrote {len(batch):,} events to {args.write}, part 1w's workload to {cep}")
        return 0
    failed = 0
    if "1" in parts:
        failed += nested_part(args, batch)
    if "1w" in parts:
        failed += workload_part(args, batch)
    if "1b" in parts:
        failed += matches_part(args, batch)
    if "2" in parts:
        failed += chapter_part(args)
    return 1 if failed else 0


def chapter_part(args) -> int:
    """Part 2 (module docstring); the number of workloads whose results differ."""
    from ..engines import ENGINES
    from ..plan import plan

    failed = 0
    chapter = ticker_stream(args.chapter_events, args.seed)
    print(f"\npart 2: the NEEL chapter's workloads, {len(chapter):,} events of {len(TICKERS)} tickers, "
          f"COUNT(*) WITHIN {args.chapter_window}")
    for name, pattern in chapter_workloads():
        if args.only and not name.startswith(args.only):
            continue
        text = f"RETURN COUNT(*) PATTERN {pattern} WITHIN {args.chapter_window}"
        q = compile_query(text)
        reason = ENGINES["neel"].refusal(q)
        it_s, expected = _run("neel-iterative", text, chapter, 1)
        if reason:
            print(f"  {name:16} neel refuses ({reason[:90]}...); neel-iterative {it_s:.2f} s")
            continue
        neel_s, got = _run("neel", text, chapter, args.repeat)
        ref_rows = ENGINES["reference"](q).run(chapter)
        diff = ref_rows.diff(got) + ref_rows.diff(expected)
        failed += bool(diff)
        outer = plan(compile_query(f"RETURN COUNT(*) PATTERN {positive_part(pattern)} "
                                   f"WITHIN {args.chapter_window}")).build().run(chapter).rows[0][0]
        print(f"  {name:16} neel {neel_s:7.3f} s  neel-iterative {it_s:8.2f} s  "
              f"{it_s / neel_s:7,.0f}x  count {got.rows[0][0]:,}  outer {outer:,}"
              + ("" if not diff else f"  DIFFERENT {diff[:2]}"))
    return 1 if failed else 0
