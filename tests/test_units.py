"""One table of time units (cepagg.units): the query language, --slack and the event readers agree."""

from __future__ import annotations

from cepagg.lang.model import TIME_UNITS_MS
from cepagg.lang.parser import _UNITS
from cepagg.order.cli import parse_span
from cepagg.units import UNIT_NAMES, UNIT_NS


def test_the_query_language_spells_units_as_the_table_does():
    time_words = {w: u for w, u in _UNITS.items() if u != "events"}
    assert all(UNIT_NAMES[w] == u for w, u in time_words.items())
    assert all(UNIT_NS[u] == ms * UNIT_NS["ms"] for u, ms in TIME_UNITS_MS.items())


def test_slack_reads_every_spelling_a_query_reads():
    for word, unit in UNIT_NAMES.items():
        assert parse_span(f"2{word}", "ns") == 2 * UNIT_NS[unit]
    assert parse_span("3 m", "s") == 180
