"""Workloads: one pattern, written for cepagg and translated for each peer (or not, with why).

A workload is a pattern (a list of items: an event type, Kleene plus, negation, a
"decreasing price" condition along a Kleene run), a data set and a list of growing windows. For
each (selection strategy, keyed or keyless, window) it yields:

* the cepagg query text (``cepagg_query``), evaluated with :func:`cepagg.runner.run`;
* Flink CEP's arguments (``flink_cep_spec``) for ``flink_cep/CepCount.java``;
* a Flink SQL ``MATCH_RECOGNIZE`` statement (``flink_sql``);
* a CORE CEQL query (``ceql``),

or an :class:`Inexpressible` with the reason. The translations are plain text, so the CI test
checks them against expected strings without any peer installed.

Data: CSV files ``ts,type,key,price`` generated with a fixed seed. Timestamps are integer
milliseconds and **strictly increasing** over the whole file, so no two events are simultaneous:
the peers differ on ties (see docs/peers.md), and distinct timestamps keep that out of the
comparison.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

STRATEGIES = ("skip-till-any-match", "skip-till-next-match", "contiguous")
#: Short names used in tables and file names.
STRATEGY_SHORT = {"skip-till-any-match": "any", "skip-till-next-match": "next", "contiguous": "contiguous"}


@dataclass(frozen=True)
class Compare:
    """A condition on each event an item binds: its ``attr`` ``op`` (``<`` or ``>``) the same
    attribute of ``ref``. ``ref`` is ``"prev"`` (the previous event of this item's Kleene run:
    no condition on the run's first event), another item's variable (its event, which must come
    earlier in the pattern and not be Kleene), or ``"first(v)"`` (the first event of the earlier
    Kleene item ``v``)."""

    op: str
    ref: str
    attr: str = "price"


@dataclass(frozen=True)
class Item:
    """One item of a SEQ: ``type`` (``+`` when ``kleene``; ``!`` when ``negated``; ``"*"``: any
    event, an untyped variable)."""

    type: str
    kleene: bool = False
    negated: bool = False
    var: str | None = None          # cepagg variable name (needed for conditions)
    decreasing: str | None = None   # attribute that must decrease between adjacent run events
    where: tuple[Compare, ...] = ()  # conditions on each event of this item


@dataclass(frozen=True)
class Inexpressible:
    """A peer cannot state this workload; ``reason`` says why (shown in the tables)."""

    reason: str

    def __bool__(self) -> bool:  # so "if translation:" reads naturally
        return False


@dataclass(frozen=True)
class DataSpec:
    """A generated data set. ``kind``: "types" (uniform random types) or "stock" (price walks)."""

    name: str
    kind: str
    n_events: int
    keys: int
    types: tuple[str, ...] = ()
    mean_gap_ms: int = 10
    seed: int = 42

    def path(self, folder: Path) -> Path:
        return Path(folder) / f"{self.name}-{self.n_events}.csv"


@dataclass(frozen=True)
class Workload:
    name: str
    title: str
    items: tuple[Item, ...]
    data: DataSpec
    windows: tuple[int, ...]   # ms, ascending: the growing windows of skip-till-any-match
    check_windows: tuple[int, ...] = ()  # ms: windows of the other strategies (answers only)
    notes: str = ""
    strategies: tuple[str, ...] = field(default=STRATEGIES)

    # ---------------------------------------------------------------- cepagg
    def windows_for(self, strategy: str) -> tuple[int, ...]:
        """skip-till-any-match grows its window until a peer gives up; the other strategies
        have linear match counts (every engine finishes), so a few windows check the answers."""
        if strategy == "skip-till-any-match" or not self.check_windows:
            return self.windows
        return self.check_windows

    def cepagg_query(self, window_ms: int, strategy: str, keyed: bool) -> str:
        conds = []
        if keyed:
            conds.append("[key]")
        parts = []
        flip = {"<": ">", ">": "<"}
        for it in self.items:
            text = it.var if it.type == "*" else it.type if it.var is None else f"{it.type} {it.var}"
            if it.kleene:
                text += "+"
            if it.negated:
                text = "!" + text
            parts.append(text)
            v = it.var or it.type
            if it.decreasing:
                conds.append(f"{v}.{it.decreasing} > NEXT({v}).{it.decreasing}")
            for c in it.where:
                if c.ref == "prev":  # this event OP the previous one: the previous flip(OP) NEXT
                    conds.append(f"{v}.{c.attr} {flip[c.op]} NEXT({v}).{c.attr}")
                elif c.ref.startswith("first("):
                    conds.append(f"{v}.{c.attr} {c.op} FIRST({c.ref[6:-1]}).{c.attr}")
                else:
                    conds.append(f"{v}.{c.attr} {c.op} {c.ref}.{c.attr}")
        pattern = parts[0] if len(parts) == 1 else f"SEQ({', '.join(parts)})"
        q = f"RETURN COUNT(*) PATTERN {pattern}"
        if conds:
            q += " WHERE " + " AND ".join(conds)
        q += f" WITHIN {window_ms} ms"
        if strategy != "skip-till-any-match":
            q += f" STRATEGY {strategy}"
        return q

    # ---------------------------------------------------------------- Flink CEP
    def flink_cep_spec(self, strategy: str) -> tuple[str, str] | Inexpressible:
        """(pattern spec, contiguity) for CepCount.java."""
        contiguity = {"skip-till-any-match": "any", "skip-till-next-match": "next",
                      "contiguous": "strict"}[strategy]
        if self.items[0].negated:
            return Inexpressible("Flink CEP cannot begin a pattern with notFollowedBy/notNext")
        if self.items[-1].negated:
            return Inexpressible("a trailing notFollowedBy needs within() semantics we do not compare")
        names = {it.var: f"v{i}" for i, it in enumerate(self.items) if it.var}
        spec = []
        for it in self.items:
            s = ("!" if it.negated else "") + it.type + ("+" if it.kleene else "")
            if it.decreasing:
                s += "<" + it.decreasing
            if it.where:
                refs = []
                for c in it.where:
                    if c.ref == "prev":
                        refs.append(f"{c.attr}{c.op}prev.{c.attr}")
                    elif c.ref.startswith("first("):
                        refs.append(f"{c.attr}{c.op}first({names[c.ref[6:-1]]}).{c.attr}")
                    else:
                        refs.append(f"{c.attr}{c.op}{names[c.ref]}.{c.attr}")
                s += "@" + ",".join(refs)
            spec.append(s)
        return ";".join(spec), contiguity

    # ---------------------------------------------------------------- Flink SQL
    def flink_sql(self, window_ms: int, strategy: str, keyed: bool) -> str | Inexpressible:
        """A MATCH_RECOGNIZE statement counting the matches, or why there is none."""
        if any(it.where for it in self.items) and strategy == "skip-till-any-match":
            return Inexpressible("MATCH_RECOGNIZE has no skip-till-any-match: a row is either "
                                 "in a match's variable or consumed by the pattern")
        if any(it.where or it.type == "*" for it in self.items):
            return Inexpressible("not translated: conditions between variables are compared on "
                                 "skip-till-any-match only")
        if any(it.decreasing for it in self.items):
            return Inexpressible("MATCH_RECOGNIZE reports one match per start row (greedy or "
                                 "reluctant S+), not every run of a trend")
        if strategy == "skip-till-any-match":
            return Inexpressible("MATCH_RECOGNIZE has no skip-till-any-match: a row is either "
                                 "in a match's variable or consumed by the pattern")
        positives = [it for it in self.items if not it.negated]
        names = [f"V{i}" for i in range(len(positives))]
        if strategy == "skip-till-next-match":
            if any(it.kleene for it in positives):
                return Inexpressible("skip-till-next-match over B+ needs a group (B Z*?)+, which "
                                     "Flink's MATCH_RECOGNIZE does not support")
            # V0 Z0*? V1 Z1*? V2: Zi is any row that could not have taken the next position,
            # nor is a negated type of that gap.
            pattern, defines = [], []
            gap_negated: list[list[str]] = [[] for _ in positives]
            k = 0
            for it in self.items:
                if it.negated:
                    gap_negated[k - 1].append(it.type)
                else:
                    k += 1
            for i, it in enumerate(positives):
                pattern.append(names[i])
                defines.append(f"{names[i]} AS {names[i]}.`type` = '{it.type}'")
                if i + 1 < len(positives):
                    banned = [positives[i + 1].type] + gap_negated[i]
                    z = f"Z{i}"
                    pattern.append(f"{z}*?")
                    defines.append(f"{z} AS {z}.`type` NOT IN ({', '.join(repr(t) for t in banned)})")
        else:  # contiguous: negation between adjacent rows is vacuous (no row between them)
            pattern, defines = [], []
            for i, it in enumerate(positives):
                pattern.append(names[i] + ("+" if it.kleene else ""))
                defines.append(f"{names[i]} AS {names[i]}.`type` = '{it.type}'")
        partition = "PARTITION BY `key` " if keyed else ""
        return (
            "SELECT COUNT(*) AS n FROM events MATCH_RECOGNIZE ("
            f"{partition}ORDER BY rt "
            f"MEASURES FIRST({names[0]}.ts) AS t0 "
            "ONE ROW PER MATCH AFTER MATCH SKIP TO NEXT ROW "
            f"PATTERN ({' '.join(pattern)}) WITHIN INTERVAL '{window_ms / 1000:.3f}' SECOND "
            f"DEFINE {', '.join(defines)}) AS m"
        )

    # ---------------------------------------------------------------- CORE
    def ceql(self, window_ms: int, strategy: str, keyed: bool) -> str | Inexpressible:
        if any(it.where for it in self.items):
            return Inexpressible("CEQL filters are unary: FILTER b[...] tests each event of b on "
                                 "its own attributes and constants; another variable's attribute "
                                 "(b[price > a.price]) is a syntax error")
        if any(it.decreasing for it in self.items):
            return Inexpressible("CEQL filters are unary (one event's attributes); they cannot "
                                 "compare adjacent events of a run (price > NEXT price)")
        if any(it.negated for it in self.items) and strategy != "contiguous":
            return Inexpressible("CEQL (pycer 0.1.6) has no absence of an event between two "
                                 "others; NOT(E) is an atomic event that is not of type E")
        if strategy == "skip-till-next-match":
            return Inexpressible("CEQL's selection strategies (ALL, ANY, NEXT, LAST, MAX, STRICT) "
                                 "order complex events; none is SASE's skip-till-next-match")
        seq, it_op = (" ; ", "+") if strategy == "skip-till-any-match" else (" : ", ":+")
        # Under contiguous, a negation between adjacent events is vacuous: nothing lies between.
        body = seq.join(it.type + (it_op if it.kleene else "") for it in self.items if not it.negated)
        part = " PARTITION BY [key]" if keyed else ""
        # CEQL's WITHIN n [attr] admits last.attr - first.attr < n (measured, docs/peers.md),
        # as cepagg's WITHIN does.
        return f"SELECT ALL * FROM S WHERE ({body}){part} WITHIN {window_ms} [ts] CONSUME BY NONE"

    def ceql_declaration(self) -> str:
        types = self.data.types or ("Stock",)
        events = ", ".join(f"EVENT {t} {{ key:string, ts:int, price:double }}" for t in types)
        return f"CREATE STREAM S {{ {events} }}"


# ------------------------------------------------------------------------ data

def write_data(spec: DataSpec, folder: Path) -> Path:
    """Generate ``spec``'s CSV into ``folder`` (once; the same seed gives the same file)."""
    path = spec.path(folder)
    if path.exists():
        return path
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(spec.seed)
    n = spec.n_events
    gaps = np.maximum(1, np.rint(rng.exponential(spec.mean_gap_ms, n))).astype(np.int64)
    ts = np.cumsum(gaps)  # strictly increasing: no simultaneous events
    keys = rng.integers(0, spec.keys, n)
    if spec.kind == "types":
        types = np.array(spec.types, dtype=object)[rng.integers(0, len(spec.types), n)]
        price = np.round(rng.uniform(1, 100, n), 2)
    elif spec.kind == "stock":
        types = np.full(n, spec.types[0] if spec.types else "Stock", dtype=object)
        last = 100.0 + 10.0 * rng.standard_normal(spec.keys)
        steps = rng.normal(0.0, 1.0, n)
        price = np.empty(n)
        for i in range(n):
            last[keys[i]] = max(1.0, last[keys[i]] + steps[i])
            price[i] = round(last[keys[i]], 2)
    else:
        raise ValueError(spec.kind)
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["ts", "type", "key", "price"])
        for i in range(n):
            w.writerow([int(ts[i]), types[i], f"k{keys[i]}", f"{price[i]:.2f}"])
    tmp.rename(path)
    return path


# ------------------------------------------------------------------------ the set

TYPES = ("A", "B", "C", "D", "E", "N")
SCALES = {
    # name: (events, keys, windows of skip-till-any-match, windows of the other strategies), ms
    "tiny": (400, 4, (20, 50, 100, 200), (20, 200)),
    # windows grow to the whole file: a series ends where a peer no longer finishes in time
    "quick": (5_000, 10, (20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000), (20, 2000)),
    "full": (50_000, 10, (20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000),
             (20, 1000, 50000)),
}


def workloads(scale: str = "quick") -> list[Workload]:
    n, keys, windows, check = SCALES[scale]
    abc = DataSpec("types", "types", n, keys, TYPES, mean_gap_ms=10, seed=42)
    stock = DataSpec("stock", "stock", n, keys, ("Stock",), mean_gap_ms=10, seed=7)
    seq = lambda *ts: tuple(Item(t) for t in ts)  # noqa: E731
    return [
        Workload("seq3", "SEQ(A, B, C)", seq("A", "B", "C"), abc, windows, check),
        Workload("seq4", "SEQ(A, B, C, D)", seq("A", "B", "C", "D"), abc, windows, check),
        Workload("seq5", "SEQ(A, B, C, D, E)", seq("A", "B", "C", "D", "E"), abc, windows, check),
        Workload("neg", "SEQ(A, !N, B, C)", (Item("A"), Item("N", negated=True), Item("B"), Item("C")),
                 abc, windows, check),
        Workload("kleene", "SEQ(A, B+, C)", (Item("A"), Item("B", kleene=True), Item("C")),
                 abc, windows, check),
        Workload("downtrend", "GRETA Q1: Stock S+ WHERE S.price > NEXT(S).price",
                 (Item("Stock", kleene=True, var="S", decreasing="price"),), stock, windows, check,
                 notes="GRETA's Q1 down-trends (count only; per company when keyed)"),
    ]


def by_name(scale: str = "quick") -> dict[str, Workload]:
    return {w.name: w for w in workloads(scale)}


def query1(data: DataSpec, windows: tuple[int, ...], uptrend: bool = True) -> Workload:
    """The RCEP paper's Query 1 (Kammoun et al., EDBT 2018) over price walks: ``SEQ(a, b+, c)``
    of untyped variables with ``a.price < b.price``, ``b.price < NEXT(b).price`` (each b above the
    one before it; left out when ``uptrend`` is false: every subset of the b's above a) and
    ``c.price < FIRST(b).price``. Not among :func:`workloads`: ``cepagg bench matches`` runs it
    (skip-till-any-match, per key), where CORE cannot state it (``ceql`` says why)."""
    b_where = (Compare(">", "a"),) + ((Compare(">", "prev"),) if uptrend else ())
    items = (Item("*", var="a"), Item("*", kleene=True, var="b", where=b_where),
             Item("*", var="c", where=(Compare("<", "first(b)"),)))
    name, title = ("query1", "RCEP Query 1") if uptrend else ("query1-any", "RCEP Query 1 without NEXT")
    return Workload(name, title, items, data, windows, strategies=("skip-till-any-match",))
