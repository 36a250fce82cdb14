"""Cubes for the tests: the chapter's RFID hierarchy, and random hierarchies and workloads."""

from __future__ import annotations

import random

from cepagg.lang import Hierarchy

RFID = Hierarchy.from_mapping({"TX": ["D", "A", "G"], "D": ["DBusStation", "DHospital", "DShelter"],
                               "OK": ["T", "O"]})

LEAVES = [f"L{i}" for i in range(6)]


def random_hierarchy(rng: random.Random) -> Hierarchy:
    pairs, level, k = [], list(LEAVES), 0
    rng.shuffle(level)
    for _ in range(2):
        nxt, i = [], 0
        while i < len(level):
            group = level[i:i + rng.randint(1, 3)]
            i += len(group)
            if len(group) > 1:
                k += 1
                pairs += [(g, f"K{k}") for g in group]
                nxt.append(f"K{k}")
            else:
                nxt += group
        level = nxt
    return Hierarchy.of_pairs(pairs)


def random_workload(rng: random.Random, h: Hierarchy) -> list[str]:
    """A base pattern and variants of it one operation away (so that reuse edges exist)."""
    names = sorted(h.names)
    base = [(rng.choice(names), False) for _ in range(rng.randint(2, 3))]
    pats = [base]
    for _ in range(rng.randint(2, 4)):
        p = list(rng.choice(pats))
        op = rng.random()
        if op < 0.3:  # pattern drill-down
            p.insert(rng.randint(0, len(p)), (rng.choice(names), rng.random() < 0.3 and 0 < len(p)))
        elif op < 0.45 and len(p) > 2:
            del p[rng.randrange(len(p))]
        else:  # concept up or down at a positive position
            k = rng.randrange(len(p))
            t, neg = p[k]
            up = h.parent_of(t)
            down = h.children(t)
            if down and (rng.random() < 0.5 or not up):
                p[k] = (rng.choice(down), neg)
            elif up:
                p[k] = (up, neg)
        if p[0][1] or p[-1][1] or not any(not n for _, n in p):
            continue
        pats.append(p)
    return ["SEQ(" + ", ".join(("!" if n else "") + f"{t} v{i}" for i, (t, n) in enumerate(p)) + ")" for p in pats]
