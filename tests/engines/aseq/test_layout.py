"""The kernels' named records: a partition's counters keep their int64 layout (the state format),
and a field written through the view a kernel takes (a record compiled, :class:`Fields` in the
twin) reaches the array."""

from __future__ import annotations

import numpy as np
import pytest

from cepagg.engines import kernels
from cepagg.engines.aseq import _expiry, layout


def test_counters_keep_the_int64_positions_of_the_state_format():
    """Snapshots hold each partition's ``ctr`` as 12 int64: segment sizes, then the scalars."""
    assert layout.COUNTERS.itemsize == 12 * 8
    assert layout.AT == {"items": 0, "pending": 4, "pending_ts": 5, "lead_ts": 6, "next_window": 7, "rows": 8,
                         "pending_lead": 9, "pending_instants": 10, "stage": 11}
    ctr = layout.new_counters()
    assert ctr.dtype == np.int64 and ctr.tolist() == [0] * 6 + [layout.NONE] * 2 + [0] * 4


@pytest.mark.parametrize("twin", [False, True])
def test_a_record_field_written_by_a_kernel_reaches_the_array(twin):
    X = kernels.twin(_expiry.__name__) if twin else _expiry
    ctr = layout.new_counters()
    ctr[layout.AT["rows"]] = 2
    outM = np.zeros((4, 3), np.int64)
    outI, outF = np.zeros((4, 1), np.int64), np.zeros((4, 0))
    vI, vF = np.full((1, 3), 7, np.int64), np.zeros((0, 3))
    X.out_row(outM, outI, outF, layout.counters(ctr, python=twin), 5, 0, X.ROW_EMIT, vI, vF, 1)
    assert ctr[layout.AT["rows"]] == 3
    assert outM[2].tolist() == [5, 0, X.ROW_EMIT] and outI[2, 0] == 7


def test_python_fields_read_and_write_the_array():
    ctr = layout.new_counters()
    c = layout.counters(ctr, python=True)
    c.items[1, 0] += 2
    c.pending_ts = 9
    c.rows += 1
    assert (c.lead_ts, c.pending_ts, c.rows) == (layout.NONE, 9, 1)
    assert ctr[layout.AT["items"] + 2] == 2 and ctr[layout.AT["pending_ts"]] == 9
    prm = layout.new_plan()
    layout.plan(prm, python=True).within = 4
    assert layout.plan(prm).within == 4


@pytest.mark.parametrize("twin", [False, True])
def test_stacked_counters_are_records_of_the_stack(twin):
    """Segment sizes (a nested array field) and a record copied over a slot, as ``run_pool`` does."""
    from cepagg.engines.aseq import windows

    S = kernels.twin(windows.__name__) if twin else windows
    stack = np.stack([layout.new_counters() for _ in range(3)])
    stack[1, layout.AT["items"] + 2:layout.AT["items"] + 4] = (2, 1)  # segment 1: back 2, front 1
    recs = layout.stacked_counters(stack)
    assert S.size(recs[1], 1) == 3 and S.size(recs[1], 0) == 0 and S.size(recs[0], 1) == 0
    recs[1] = layout.counters(layout.new_counters())
    assert stack[1].tolist() == layout.new_counters().tolist()


def test_the_twin_copies_are_written_back():
    """The twin takes the fields copied into attributes; the counters go back to the array."""
    from cepagg.engines.aseq import windows

    S = kernels.twin(windows.__name__)
    prm, ctr = layout.new_plan(), layout.new_counters()
    layout.plan(prm, python=True).within = 7
    plan, c = layout.for_twin(prm, ctr)
    vI, vF = np.zeros((1, 2), object), np.zeros((0, 2))
    bI, bF, bm = np.zeros((2, 1, 2, 3), object), np.zeros((2, 0, 2, 3)), np.zeros((2, 2), np.int64)
    S.push_item(bI, bF, bm, c, 1, vI, vF, 2, 5, layout.NONE, 3, np.zeros(1, np.int64), np.zeros(0, np.int64))
    c.pending_ts = 5
    assert plan.within == 7 and ctr[layout.AT["pending_ts"]] == 0
    c.store()
    assert ctr[layout.AT["pending_ts"]] == 5 and ctr[layout.AT["items"] + 2] == 1  # segment 1's back: 1 item
