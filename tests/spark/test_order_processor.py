"""The ordering layer's Spark operator, driven as Spark drives it, without a Spark session.

:mod:`cepagg.spark.order`'s processor gets, per micro-batch, one call per bucket with that
bucket's rows (punctuations and the end-of-stream event in every bucket) and keeps the
bucket's layer state stored between calls (:meth:`Layer.snapshot`). Here the calls are made
directly: buckets in a shuffled order, the two keys in separate buckets either way round or in
one bucket, the state copied as bytes as the value state holds it. Hundreds of arrivals run in
seconds, where the streaming test (``test_order_streaming.py``) runs one arrival per case
through Spark; the output is netted by :func:`cepagg.spark.streaming.read_latest`'s rule and
compared with the reference.
"""

from __future__ import annotations

import math
import pickle
from decimal import Decimal

import pandas as pd
import pytest

from arrivals import ORDER_CASES, arrival_rows, expected_of
from cepagg.engines.aggregates import key_width
from cepagg.lang import compile_query
from cepagg.order import OrderConfig, same_result
from cepagg.order.disorder import disorder
from cepagg.order.layer import stored_state
from cepagg.plan import plan
from cepagg.result import Result
from cepagg.spark.order import OrderSpec, _processor_class
from cepagg.spark.sources import END_TS_MS, END_TYPE
from generators import random_stream, seeded

KINDS = {"x": "int", "g": "string", "punct_type": "string"}
# the operator's input columns, as stream_ordered selects them (cepagg.spark.streaming.operator_input)
COLUMNS = ("cepagg_id", "ts", "type", "g", "punct_type", "x")
ROUTES = [{"u": 0, "v": 1}, {"u": 1, "v": 0}, {"u": 0, "v": 0}]


class _Value:
    """A value state of one bucket (what ``handle.getValueState`` returns)."""

    def __init__(self):
        self.value = None

    def exists(self):
        return self.value is not None

    def get(self):
        return self.value

    def update(self, value):
        self.value = (pickle.loads(pickle.dumps(value[0])),)  # stored as bytes between batches


class _Handle:
    def __init__(self, value: _Value):
        self.value = value

    def getValueState(self, name, schema):
        return self.value


def _run(spec: OrderSpec, rows: list[dict], route: dict, pieces: int, rng) -> tuple[list[tuple], list]:
    """Output rows (as the sink writes them) and the buckets' final states."""
    size = -(-len(rows) // pieces)
    batches = [rows[k * size:(k + 1) * size] for k in range(pieces)]
    batches[-1] = batches[-1] + [{"_id": len(rows), "type": END_TYPE, "ts": END_TS_MS}]
    values = {b: _Value() for b in range(spec.buckets)}
    out: list[tuple] = []
    for batch in batches:
        per: dict[int, list] = {}
        for r in batch:
            everywhere = r["type"] in (END_TYPE, "__punct__")
            for b in (range(spec.buckets) if everywhere else [route[r["g"]]]):
                per.setdefault(b, []).append(tuple(r.get(c) for c in ("_id",) + COLUMNS[1:]))
        order = list(per)
        rng.shuffle(order)
        for b in order:
            proc = _processor_class()(spec)
            proc.init(_Handle(values[b]))
            frame = pd.DataFrame(per[b], columns=list(COLUMNS))
            for got in proc.handleInputRows((b,), iter([frame]), None):
                out += [tuple(_plain(v) for v in r) for r in got.itertuples(index=False)]
    states = [stored_state(v.value[0]) for v in values.values() if v.exists()]
    return out, states


def _plain(v):
    if isinstance(v, Decimal):
        return int(v)
    if isinstance(v, float) and math.isnan(v):
        return None
    return v.item() if hasattr(v, "item") else v


def _latest(query, names: list[str], out: list[tuple]) -> Result:
    """read_latest's netting: per group and window (per match number for matches) the rows of
    the highest revision, of kind row, revision or insert."""
    kind, revision = names.index("kind"), names.index("revision")
    keys = [names.index("match")] if query.returns_matches else list(range(key_width(query)))
    top: dict[tuple, int] = {}
    for r in out:
        k = tuple(r[i] for i in keys)
        top[k] = max(top.get(k, -1), r[revision])
    width = len(query.output_columns)
    return Result(query.output_columns, [r[:width] for r in out if r[kind] in ("row", "revision", "insert")
                                         and r[revision] == top[tuple(r[i] for i in keys)]])


@pytest.mark.parametrize("strategy,text", ORDER_CASES)
def test_the_operator_nets_to_the_reference_for_any_routing_and_bucket_order(strategy, text):
    from cepagg.spark.order import output_columns

    rng = seeded(text)
    q = compile_query(text)
    for _ in range(8):
        stream = random_stream(rng, "ABC", n=40, max_gap=3, attrs={"x": (0, 9), "g": ["u", "v"]})
        arr = disorder(stream, rng, fraction=0.4, delay="exp", scale=4, burst_types=("C",), bursts=0.3,
                       punctuate=0.5 if strategy == "conservative" else 0.0, punct="types")
        rows = arrival_rows(arr)
        bound = max(arr.lateness())
        config = {"kslack": OrderConfig("kslack", slack=bound), "conservative": OrderConfig("conservative"),
                  "aggressive": OrderConfig("aggressive", lateness=bound)}[strategy]
        spec = OrderSpec(text, "ms", tuple(sorted(KINDS.items())), plan(q, "auto").engine, COLUMNS, config, 2)
        names = [c for c, _ in output_columns(spec)]
        expected = expected_of(text, rows)
        for route in ROUTES:
            out, states = _run(spec, rows, route, pieces=rng.randint(1, 6), rng=rng)
            problems = same_result(q, expected, _latest(q, names, out))
            assert not problems, (route, problems)
            assert sum(st.late.count for st in states) == 0
            if strategy != "aggressive":
                assert {r[names.index("kind")] for r in out} <= {"row", "insert"}  # never revised
