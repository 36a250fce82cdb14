"""The Python API (`cepagg.runner`) refuses arguments of the wrong kind with an exception that
says what to give, instead of an AttributeError from deep inside."""

from __future__ import annotations

import pytest

from cepagg.events import EventBatch
from cepagg.lang import compile_query
from cepagg.runner import run, run_workload, write_matches

EVENTS = EventBatch.from_rows([{"type": "Bus", "ts": 1, "x": 1}, {"type": "Taxi", "ts": 2, "x": 2}])
QUERY = "RETURN COUNT(*) PATTERN SEQ(Vehicle a, Vehicle b) WITHIN 10"


@pytest.mark.parametrize("events", [None, "events.csv", [1, 2], EVENTS.table])
def test_events_that_are_not_an_event_batch_are_refused(events):
    for call in (lambda: run("PATTERN SEQ(A a, B b)", events), lambda: run_workload("PATTERN SEQ(A a, B b)", events),
                 lambda: write_matches("PATTERN SEQ(A a, B b)", events, "-")):
        with pytest.raises(TypeError, match=f"events: an EventBatch .*not {type(events).__name__}"):
            call()


@pytest.mark.parametrize("query", [None, 5, b"PATTERN A"])
def test_a_query_that_is_not_text_is_refused(query):
    with pytest.raises(TypeError, match=f"the query: text \\(a str\\), not {type(query).__name__}"):
        compile_query(query)


def test_a_hierarchy_given_as_a_mapping_is_the_hierarchy_of_a_file():
    """The docs give a hierarchy as JSON {concept: [child, ...]}; from Python the same dict raised
    AttributeError ('dict' object has no attribute 'edges')."""
    assert run(QUERY, EVENTS, hierarchy={"Vehicle": ["Bus", "Taxi"]}).rows == [(1,)]
    assert run_workload(QUERY, EVENTS, hierarchy={"Vehicle": ["Bus", "Taxi"]})["q0"].rows == [(1,)]


def test_a_hierarchy_of_the_wrong_shape_names_the_argument():
    from cepagg.lang import HierarchyError

    with pytest.raises(HierarchyError, match="hierarchy=: concept 'Vehicle' needs a non-empty list"):
        run(QUERY, EVENTS, hierarchy={"Vehicle": "Bus"})


def test_max_matches_that_is_not_an_int_is_refused():
    with pytest.raises(TypeError, match="max_matches='3': give an int"):
        run("PATTERN SEQ(Bus a, Taxi b)", EVENTS, max_matches="3")


@pytest.mark.parametrize("rows, message", [
    ([{"type": "A", "x": 1}], "row 0: no 'ts'"),  # (was KeyError: 'ts')
    ([{"type": "A", "ts": 1}, {"ts": 2}], "row 1: no 'type'"),  # (was KeyError: 'type')
    ([{"type": None, "ts": 1}], "row 0: no 'type'"),  # (was: an event of type 'None')
    ([{"type": "A", "ts": 1.5}], "row 0: 'ts' 1.5 is not an integer time"),  # (was: time 1, silently)
    ([{"type": "A", "ts": "x"}], "row 0: 'ts' 'x' is not an integer time"),  # (was: int() of 'x')
    ([{"type": "A", "ts": 1, "k": 1}, {"type": "B", "ts": 2, "k": "x"}], "attribute 'k': values one column"),
])
def test_event_rows_that_cannot_be_events_are_refused_naming_the_row_or_attribute(rows, message):
    with pytest.raises(ValueError, match=message):
        EventBatch.from_rows(rows)


def test_event_rows_with_integral_times_of_other_types_are_read():
    import numpy as np

    batch = EventBatch.from_rows([{"type": "A", "ts": np.int64(3)}, {"type": "B", "ts": 4.0}])
    assert batch.table.column("ts").to_pylist() == [3, 4]


def test_a_workload_given_as_a_mapping_is_named_by_its_keys():
    """A dict {name: query} was iterated as its keys, each parsed as a query ("Unexpected 'pairs'")."""
    assert run_workload({"pairs": QUERY}, EVENTS, hierarchy={"Vehicle": ["Bus", "Taxi"]})["pairs"].rows == [(1,)]


@pytest.mark.parametrize("workload, names, error, message", [
    (5, None, TypeError, "workload: a workload text, a sequence of queries or a {name: query} mapping, not int"),
    ({"a": QUERY}, ["b"], TypeError, "a {name: query} mapping names its queries"),
    ([QUERY, QUERY], ["only"], ValueError, "names: 1 names for 2 queries"),  # (zip dropped the second query)
    ([QUERY, QUERY], iter(["only"]), ValueError, "names: 1 names for 2 queries"),  # (said "0 names": consumed)
    ([QUERY, QUERY], ["same", "same"], ValueError, "names: two queries are named 'same'"),  # (one result lost)
    ([QUERY, QUERY], ["Pairs", "pairs"], ValueError, "names: two queries are named 'Pairs' and 'pairs'"),
    ({"Pairs": QUERY, "pairs": QUERY}, None, ValueError, "names: two queries are named 'Pairs' and 'pairs'"),
])
def test_workload_arguments_of_the_wrong_shape_are_refused(workload, names, error, message):
    from cepagg.lang.workload import named_queries

    with pytest.raises(error, match=message):
        named_queries(workload, names)
    if names is None:
        with pytest.raises(error, match=message):
            run_workload(workload, EVENTS)


def test_names_given_as_a_generator_name_the_queries():
    """A generator of names was consumed by counting it: "0 names for 2 queries"."""
    from cepagg.lang.workload import named_queries

    assert named_queries([QUERY, QUERY], (n for n in ["a", "b"])) == [("a", QUERY), ("b", QUERY)]
