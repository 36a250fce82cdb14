"""Comparing the answers of a query and its rewriting."""

from __future__ import annotations

from collections import Counter, defaultdict

import pytest


def differences(expected, got) -> list[str]:
    """``expected.diff(got)``, except that matches are compared as sets of (variable, event)
    per window or group: the reference numbers matches by last event, first event and event
    ids, which ties when two matches bind the same events in different roles (``AND(A x, A)``),
    and a rewriting may enumerate such twins in the other order."""
    problems = expected.diff(got)
    if not problems or "match" not in expected.columns:
        return problems
    return [] if _matches(expected) == _matches(got) else problems


def _matches(result) -> Counter:
    cols = list(result.columns)
    key_cols = cols[:cols.index("match")]
    found: dict[tuple, set] = defaultdict(set)
    for row in result.rows:
        d = dict(zip(cols, row))
        found[tuple(d[c] for c in key_cols) + (d["match"],)].add((d["var"], d["pos"], d["event_id"]))
    return Counter((k[:-1], frozenset(v)) for k, v in found.items())


@pytest.fixture
def same_answer():
    return differences
