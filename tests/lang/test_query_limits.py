"""The longest window the language accepts (2^61 of the stream's time unit) runs correctly.

The analyser refuses longer windows and slides because engines compute times such as
``ts - w`` and ``k * slide + w`` in 64-bit integers. At the limit itself, every in-process engine
that accepts the query must return what the reference evaluator returns, and that must be the
hand-counted result.
"""

from __future__ import annotations

import pytest

from cepagg.engines import ENGINES as ENGINE_CLASSES
from cepagg.events import EventBatch
from cepagg.lang import compile_query
from cepagg.plan import plan

W = 2**61
ENGINES = ["reference", "aseq", "greta", "stack", "twostep"]

# A B C A B C at 1..6: SEQ(A, B) has the matches (1,2), (1,5), (4,5)
EVENTS = [{"type": t, "ts": ts, "x": 1} for t, ts in zip("ABCABC", range(1, 7))]

CASES = [
    (f"RETURN COUNT(*) PATTERN SEQ(A a, B b) WITHIN {W}", [(3,)]),
    (f"RETURN COUNT(*) PATTERN SEQ(A a, B b) WITHIN {W} SLIDE {W}", [(0, W, 3)]),
    (f"RETURN COUNT(*) PATTERN SEQ(A a, B b) WITHIN {W} SLIDE {W // 2}",
     [(-W // 2, W // 2, 3), (0, W, 3)]),
    (f"RETURN COUNT(*) PATTERN SEQ(A a, NOT C, B b) WITHIN {W} SLIDE {W // 2}",
     [(-W // 2, W // 2, 2), (0, W, 2)]),
    (f"RETURN COUNT(*) PATTERN SEQ(A a, B b) WITHIN {W} EMIT ON CHANGE", [(2, 1), (5, 3)]),
]


#: every (query, engine) pair the engine accepts; the reference accepts them all
ACCEPTED = [pytest.param(text, expected, engine, id=f"{name}-{engine}")
            for name, (text, expected) in zip(["total", "slide", "half-slide", "negation", "emit"], CASES)
            for engine in ENGINES if ENGINE_CLASSES[engine].refusal(compile_query(text)) is None]


@pytest.mark.parametrize("text, expected, engine", ACCEPTED)
def test_engines_at_the_window_limit(text, expected, engine):
    built = plan(compile_query(text), engine).build()
    rows = built.run(EventBatch.from_rows(EVENTS).sorted()).rows
    assert sorted(rows) == expected


def test_windows_per_event_are_bounded():
    """WITHIN w SLIDE s puts each event in w/s windows, each a value the engines keep and a row
    they report: beyond MAX_WINDOWS_PER_EVENT the query is refused where SLIDE is written
    (without the limit an engine runs out of memory at WITHIN 2^61 SLIDE 1000)."""
    from cepagg.errors import QueryError
    from cepagg.lang.analyze import MAX_WINDOWS_PER_EVENT

    ok = f"RETURN COUNT(*) PATTERN SEQ(A a, B b) WITHIN {MAX_WINDOWS_PER_EVENT} SLIDE 1"
    assert compile_query(ok).slide == 1
    text = f"RETURN COUNT(*) PATTERN SEQ(A a, B b) WITHIN {W} SLIDE 1000"
    with pytest.raises(QueryError, match="windows") as e:
        compile_query(text)
    assert (e.value.line, e.value.column) == (1, text.index("SLIDE 1000") + len("SLIDE ") + 1)
