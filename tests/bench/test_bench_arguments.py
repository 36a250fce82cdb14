"""`cepagg bench` refuses option values that would run nothing, run nonsense or fail deep inside
(numpy's "negative dimensions", a KeyError, a ZeroDivisionError) with one line, before any work."""

from __future__ import annotations

import pytest

from cepagg.cli import main


@pytest.mark.parametrize("argv, message", [
    (["aseq", "--events=-5"], "argument --events: '-5': give a number above 0"),
    (["aseq", "--types", "0"], "argument --types: '0': give a number above 0"),
    (["aseq", "--keys", "10", "0"], "argument --keys: '0': give a number above 0"),
    (["ecube", "--rate", "0"], "argument --rate: '0': give a number above 0"),
    (["spark", "--events=-1"], "argument --events: '-1': give a number above 0"),
    (["neel", "--events", "0"], "argument --events: '0': give a number above 0"),
    (["greta", "--only", "nosuch"], "--only 'nosuch': expected one of q1_events_per_window"),
    (["greta", "--engines", "nosuch"], "--engines 'nosuch': expected one of greta"),
    (["greta", "--sizes=-5"], "--sizes '-5': expected whole numbers of at least 0"),
    (["disorder", "--fractions", "2"], "--fractions '2': expected fractions from 0 to 1"),
    (["disorder", "--delays", "nosuch"], "--delays 'nosuch': expected one of uniform, exp, pareto"),
    (["disorder", "--queries", "nosuch"], "--queries 'nosuch': expected one of slide, match"),
    (["tree", "--only", "nosuch"], "--only 'nosuch': expected one of query2, query3, versus"),
    (["tree", "--windows=-1"], "--windows '-1': expected whole numbers of at least 1"),
    (["neel", "--parts", "9"], "--parts '9': expected one of 1, 1w, 1b, 2"),
])
def test_a_bad_bench_option_is_one_line(capsys, argv, message):
    assert main(["bench", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"cepagg: {message}") and err.count("\n") == 1, err
