"""Random A-Seq queries for property tests: every clause aseq accepts, in small sizes."""

from __future__ import annotations

import random

AGGS = ["COUNT(*)", "COUNT({v})", "SUM({v}.x)", "AVG({v}.x)", "MIN({v}.x)", "MAX({v}.x)"]


def random_query(rng: random.Random, types: str = "ABCD", max_len: int = 4, modes=("total", "slide", "emit"),
                 negation: float = 0.5, groups: bool = True, predicates: bool = True,
                 aggregates: list[str] | None = None, windows: bool = True) -> str:
    n = rng.randint(1, max_len)
    pos_types = [rng.choice(types) for _ in range(n)]
    names = [f"p{i}" for i in range(n)]
    items: list[str] = []
    for gap in range(n + 1):
        if rng.random() < negation / (1 + gap % 2):
            for _ in range(rng.choice([1, 1, 2])):
                items.append(f"NOT {rng.choice(types)}")
        if gap < n:
            items.append(f"{pos_types[gap]} {names[gap]}")
    conds = []
    if predicates and rng.random() < 0.3:
        v = rng.choice(names)
        conds.append(f"{v}.x {rng.choice(['>', '<', '>=', '!='])} {rng.randint(0, 5)}")
    if predicates and rng.random() < 0.1:
        conds.append(f"x {rng.choice(['>', '<'])} {rng.randint(0, 5)}")
    group = ""
    ret = []
    r = rng.random()
    if groups and r < 0.2:
        group = "GROUP BY g"
        ret.append("g")
    elif groups and r < 0.3:
        conds.append("[g]")
    elif groups and r < 0.4 and n >= 2 and not any(i.startswith("NOT") for i in items):
        conds.append(" = ".join(f"{v}.g" for v in names))
    elif groups and r < 0.45 and n >= 2 and not any(i.startswith("NOT") for i in items):
        conds.append(" = ".join(f"{v}.g" for v in names))
        group = f"GROUP BY {names[0]}.g"
        ret.append("g")
    k = rng.randint(1, 3)
    aggs = []
    for _ in range(k):
        a = rng.choice(AGGS).format(v=rng.choice(names))
        if a not in aggs:
            aggs.append(a)
    if aggregates is not None:
        aggs = [a.format(v=names[0]) for a in aggregates]
    mode = rng.choice(modes)
    w = rng.randint(1, 8)
    if mode == "total":
        window = rng.choice(["", f"WITHIN {w}"]) if windows else f"WITHIN {w}"
    elif mode == "slide":
        window = f"WITHIN {w} SLIDE {rng.randint(1, w + 1)}"
    else:
        window = rng.choice([f"WITHIN {w}", f"WITHIN {w}", ""] if windows else [f"WITHIN {w}"]) + " EMIT ON CHANGE"
    text = f"PATTERN SEQ({', '.join(items)})"
    if conds:
        text += " WHERE " + " AND ".join(conds)
    if group:
        text += " " + group
    text += f" RETURN {', '.join(ret + aggs)} {window}"
    return text
