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


def test_a_query_reads_every_spelling_slack_reads():
    """WITHIN 5000 us was a syntax error while --slack 5000us was 5 ms."""
    from cepagg.lang import compile_query

    for word, unit in UNIT_NAMES.items():
        n = UNIT_NS["d"] // UNIT_NS[unit] if UNIT_NS[unit] < UNIT_NS["ms"] else 2
        q = compile_query(f"RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN {n} {word}", time_unit="ms")
        assert q.within == parse_span(f"{n}{word}", "ms"), word
    assert compile_query("RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 5000us").within == 5


def test_the_time_unit_options_read_every_spelling():
    """--time-unit minutes and --input-time-unit sec were refused: only the canonical names were."""
    from cepagg.cli import build_parser

    args = build_parser().parse_args(["run", "-q", "PATTERN A", "--events", "e.csv", "--time-unit", "minutes",
                                      "--input-time-unit", "sec"])
    assert (args.time_unit, args.input_time_unit) == ("min", "s")


def test_a_span_longer_than_a_window_may_be_is_refused():
    """--slack 99999999999999999999999d was taken (K = 8.6e30 ms, beyond 64-bit times)."""
    import pytest

    from cepagg.errors import UsageError

    assert parse_span(f"{2**61}", "ms") == 2**61
    with pytest.raises(UsageError, match="--slack '99999999999999999999999d' is too long: at most 2"):
        parse_span("99999999999999999999999d", "ms", "--slack")
