"""Random queries in rcep's language: flat SEQ of typed and untyped, singleton and Kleene
variables, single-event NOT and EXISTS (leading, between, trailing, with conditions), conditions
between variables with NEXT/FIRST/LAST, partitions, equivalences on a variable, groups (by a
partition attribute or a variable's attribute), WITHIN and SLIDE, matches or aggregates."""

from __future__ import annotations

import random

from cepagg.engines import ENGINES
from cepagg.engines.aggregates import combine_rows
from cepagg.lang import compile_query
from cepagg.result import Result
from generators import random_stream
from helpers import match_sets

TYPES = "ABC"
NEG_TYPES = "DE"
ATTRS = {"x": (0, 5, 0.1), "g": ["u", "v"], "h": ["p", "p", "q", None]}


def random_case(engine: str, seed: int, max_events: int = 14) -> tuple[str, list[dict]]:
    """A random query ``engine`` accepts and a random stream of 6 to ``max_events`` events."""
    rng = random.Random(seed)
    while True:
        text = random_query(rng)
        if ENGINES[engine].refusal(compile_query(text)) is None:
            break
    rows = random_stream(rng, 3 * TYPES + NEG_TYPES, n=rng.randint(6, max_events), max_gap=2, attrs=ATTRS)
    return text, rows


def sliced_rows(make, q, top: int, width: int, batch) -> list[tuple]:
    """The rows of engines ``make(partial=..., start_range=(a, a + width))`` over consecutive
    start slices from -10 to past ``top`` (as Spark's batch driver splits time), as one result:
    partial cells combined, match numbers made unique per slice (they restart in each)."""
    partial = not q.returns_matches
    m = 0 if partial else q.output_columns.index("match")
    out = []
    for n, a in enumerate(range(-10, top + width, width)):
        eng = make(partial=partial, start_range=(a, a + width))
        state = eng.new_state()
        got = eng.process(state, batch) + eng.finish(state)
        if not partial:
            got = [r[:m] + ((n, r[m]),) + r[m + 1:] for r in got]
        out += got
    return combine_rows(q, out) if partial else out


def differences(q, expected: Result, rows: list[tuple]) -> list[str]:
    """What ``rows`` miss or add against the reference's ``expected`` (matches as sets: numbers
    follow the order of discovery)."""
    if q.returns_matches:
        a, b = match_sets(expected), match_sets(Result(expected.columns, rows, expected.kinds))
        if a == b:
            return []
        return [f"missing {list((a - b).elements())[:3]}", f"extra {list((b - a).elements())[:3]}"]
    return expected.diff(Result(expected.columns, rows, expected.kinds).sorted())


def random_query(rng: random.Random) -> str:
    k = rng.choice([1, 2, 2, 3, 3, 3, 4])
    pos, kleene = [], []
    for i in range(k):
        var = f"p{i}"
        untyped = rng.random() < 0.35
        head = var if untyped else f"{rng.choice(TYPES)} {var}"
        star = rng.random() < 0.4
        kleene.append(star)
        pos.append(head + ("+" if star else ""))
    items: list[str] = []
    for gap in range(k + 1):
        if rng.random() < (0.15 if gap in (0, k) else 0.25):
            exists = rng.random() < 0.25
            items.append(("EXISTS " if exists else "NOT ") + _negation(rng, gap, k, exists))
        if gap < k:
            items.append(pos[gap])
    if len(items) == 1:
        pattern = items[0]
    else:
        pattern = "SEQ(" + ", ".join(items) + ")"
    conds = []
    for i in range(k):
        if rng.random() < 0.2:
            conds.append(f"p{i}.x {rng.choice(['>', '<=', '!='])} {rng.randint(0, 4)}")
        if kleene[i] and rng.random() < 0.35:
            conds.append(f"p{i}.x {rng.choice(['<', '<=', '>='])} NEXT(p{i}).x")
    for _ in range(rng.choice([0, 0, 1, 1, 2])):
        if k < 2:
            break
        i, j = sorted(rng.sample(range(k), 2))
        left = f"{rng.choice(['FIRST', 'LAST'])}(p{i}).x" if kleene[i] and rng.random() < 0.4 else f"p{i}.x"
        right = f"{rng.choice(['FIRST', 'LAST'])}(p{j}).x" if kleene[j] and rng.random() < 0.4 else f"p{j}.x"
        if rng.random() < 0.2:
            left = f"{left} + 1"
        conds.append(f"{left} {rng.choice(['<', '<=', '>', '>=', '!='])} {right}")
    keyed = rng.random() < 0.5
    if keyed:
        conds.insert(0, "[g]")
    same = [i for i in range(k) if rng.random() < 0.15]  # [p1.h]: one non-null h per run
    if same:
        conds.insert(0, "[" + ", ".join(f"p{i}.h" for i in same) + "]")
    w = rng.randint(3, 9)
    window = f"WITHIN {w}"
    if rng.random() < 0.4:
        window += f" SLIDE {rng.randint(1, w)}"
    if rng.random() < 0.5:
        ret = "RETURN " + ", ".join(f"p{i}" for i in sorted(rng.sample(range(k), rng.randint(1, k))))
        group = ""
    else:
        aggs = ["COUNT(*)"]
        for _ in range(rng.randint(0, 2)):
            v = f"p{rng.randrange(k)}"
            aggs.append(rng.choice([f"SUM({v}.x)", f"MIN({v}.x)", f"MAX({v}.x)", f"AVG({v}.x)",
                                    f"COUNT({v})"]))
        r = rng.random()
        if keyed and r < 0.4:
            group, column = " GROUP BY g", "g, "
        elif r > 0.8:
            v = f"p{rng.randrange(k)}"
            group, column = f" GROUP BY {v}.h", f"{v}.h, "
        else:
            group, column = "", ""
        ret = "RETURN " + column + ", ".join(dict.fromkeys(aggs))
    where = " WHERE " + " AND ".join(conds) if conds else ""
    return f"{ret} PATTERN {pattern}{where}{group} {window}"


def _negation(rng: random.Random, gap: int, k: int, exists: bool) -> str:
    var = f"n{gap}"
    if exists:  # of a frequent type, or untyped, so that it holds now and then
        head = var if rng.random() < 0.3 else f"{rng.choice(TYPES)} {var}"
    else:
        head = var if rng.random() < 0.1 else f"{rng.choice(NEG_TYPES + TYPES)} {var}"
    if rng.random() < 0.4:
        other = rng.choice([i for i in (gap - 1, gap) if 0 <= i < k])
        return f"({head}, {var}.x {rng.choice(['<', '>', '='])} p{other}.x)"
    return head
