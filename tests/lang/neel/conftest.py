"""Comparing the answers of a query and its rewriting."""

from __future__ import annotations

import pytest

from helpers import match_sets


def differences(expected, got) -> list[str]:
    """``expected.diff(got)``, except that matches are compared as sets of (variable, event)
    per window or group: the reference numbers matches by last event, first event and event
    ids, which ties when two matches bind the same events in different roles (``AND(A x, A)``),
    and a rewriting may enumerate such twins in the other order."""
    problems = expected.diff(got)
    if not problems or "match" not in expected.columns:
        return problems
    return [] if match_sets(expected) == match_sets(got) else problems


@pytest.fixture
def same_answer():
    return differences
