"""Builders for the ordering-layer tests: arrivals written as in the chapter (``a3 c5 !C10``)."""

from __future__ import annotations

import re

from cepagg.engines import ENGINES
from cepagg.lang import compile_query
from cepagg.order import Arrival, OrderConfig, net, run_ordered, same_result
from cepagg.order.stream import Punctuation

_EVENT = re.compile(r"^([A-Za-z]+?)(\d+)$")
_PUNCT = re.compile(r"^\|([A-Za-z*]+)(-?\d+)$")


def arrival(text: str, **attrs) -> Arrival:
    """``"a3 c5 |C10 d8"``: events (type letter, time) in arrival order, ``|T10`` a punctuation
    closing type T up to 10 (``|*10`` all types). ``_id`` is the event's rank in time order, so
    the in-order stream is the same for every arrival of the same events."""
    events, puncts = [], []
    for tok in text.split():
        m = _PUNCT.match(tok)
        if m:
            t = m.group(1).upper()
            puncts.append((len(events), Punctuation(None if t == "*" else t, int(m.group(2)))))
            continue
        m = _EVENT.match(tok)
        assert m, tok
        events.append({"type": m.group(1).upper(), "ts": int(m.group(2))})
    for name, values in attrs.items():
        for e, v in zip(events, values):
            e[name] = v
    rank = sorted(range(len(events)), key=lambda i: events[i]["ts"])
    ids = [0] * len(events)
    for k, i in enumerate(rank):
        ids[i] = k
    from cepagg.events import EventBatch

    return Arrival.from_batch(EventBatch.from_rows(events, ids=ids), puncts)


def run(query: str, arr: Arrival, strategy: str, **params):
    q = compile_query(query)
    engine = params.pop("engine", "auto")
    tick = params.pop("tick", 1)
    return run_ordered(q, arr, OrderConfig(strategy, **params), engine=engine, tick=tick)


def expected(query: str, arr: Arrival, engine: str = "reference"):
    q = compile_query(query)
    return ENGINES[engine](q).run(arr.in_order())


def check_net(query: str, arr: Arrival, r) -> None:
    q = compile_query(query)
    problems = same_result(q, expected(query, arr), net(q, r.outputs))
    assert not problems, "\n".join([query, str([str(i) for i in arr.items]), str(r.config), *problems])


def labels(r, kinds=("insert",)) -> list:
    """Matches emitted with the given kinds, as sorted label tuples (``("a3", "b6", "d10")``)."""
    q = r.query
    from cepagg.order.shape import Shape

    w = Shape(q).width
    found: dict = {}
    for o in r.outputs:
        if o.kind in kinds:
            found.setdefault((o.kind, o.row[w]), []).append(f"{o.row[w + 4].lower()}{o.row[w + 5]}")
    return [(k[0], tuple(sorted(v, key=lambda s: int(s[1:])))) for k, v in found.items()]
