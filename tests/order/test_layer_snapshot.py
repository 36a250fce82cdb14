"""The layer's state as a state store keeps it (:meth:`Layer.snapshot`, :meth:`Layer.restore`):
engine states stored through the engine's versioned snapshot, every strategy resuming where it
stopped, as Spark's ordering operator does between micro-batches."""

from __future__ import annotations

import pickle

import pytest
from helpers_order import arrival

from cepagg.lang import compile_query
from cepagg.order import OrderConfig, run_ordered
from cepagg.order.layer import stored_state
from cepagg.order.stream import Punctuation

QUERY = "RETURN COUNT(*), SUM(A.x) PATTERN SEQ(A, B, !C, D) WITHIN 10 SLIDE 5"
ARRIVAL = "a3 c5 b6 d10 |C10 a12 d17 b14 d8 |*12 a20 b21 d25 |*30"
CONFIGS = [OrderConfig("kslack", slack=9), OrderConfig("conservative"),
           OrderConfig("aggressive", lateness=20), OrderConfig("aggressive")]


def _resumed(q, arr, config):
    """The layer's outputs with its state stored and restored after every item."""
    layer = config.build(q, arr.events.table.schema, "auto")
    data = layer.snapshot(layer.new_state())
    rows = arr.rows()
    outputs = []
    for pos, item in enumerate(arr.items):
        st = layer.restore(data)
        if isinstance(item, Punctuation):
            layer.punctuate(st, item, pos)
        else:
            layer.admit(st, [rows[item.row]], pos)
        outputs += layer.tick(st, pos)
        data = layer.snapshot(st)
    outputs += layer.finish(layer.restore(data), len(arr.items))
    return outputs


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"{c.strategy}-{c.slack}-{c.lateness}")
def test_a_restored_layer_goes_on_as_if_never_stored(config):
    q = compile_query(QUERY)
    arr = arrival(ARRIVAL, x=list(range(11)))
    whole = run_ordered(q, arr, config).outputs
    assert [o.as_tuple() for o in _resumed(q, arr, config)] == [o.as_tuple() for o in whole]


def test_engine_states_are_stored_as_engine_snapshots():
    q = compile_query(QUERY)
    arr = arrival(ARRIVAL, x=list(range(11)))
    layer = OrderConfig("aggressive").build(q, arr.events.table.schema, "auto")
    st = layer.new_state()
    rows = arr.rows()
    layer.admit(st, [rows[i] for i in range(4)], 3)
    layer.tick(st, 3)
    stored = stored_state(layer.snapshot(st))
    assert stored.lanes
    for lane in stored.lanes.values():
        assert isinstance(lane.safe, bytes) and layer.engine.restore(lane.safe) is not None
        assert lane.spec is None or isinstance(lane.spec, bytes)
    with pytest.raises(ValueError, match="format"):
        stored_state(pickle.dumps((99, stored)))
