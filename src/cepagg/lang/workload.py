"""Workload files: several queries run as one plan.

A workload file holds one query per block; blocks are separated by lines holding only ``---``
or ``;;``. A block may name its query with a comment line ``-- name: NAME`` (otherwise the
query is called ``q0``, ``q1``, ... by position). Other comments are ordinary query comments.

>>> text = '''-- name: logins
... PATTERN SEQ(A, B) RETURN COUNT(*) WITHIN 5
... ---
... PATTERN SEQ(A, C) RETURN COUNT(*) WITHIN 5'''
>>> [(name, q.strip()[:15]) for name, q in split_workload(text)]
[('logins', 'PATTERN SEQ(A, '), ('q1', 'PATTERN SEQ(A, ')]
"""

from __future__ import annotations

import re
from typing import Mapping

from ..errors import QueryError
from .concepts import Hierarchy, extract_concepts, with_hierarchy
from .model import Query

_SEPARATOR = re.compile(r"^\s*(---+|;;)\s*$")
_NAME = re.compile(r"^\s*--\s*name\s*:\s*(\S.*?)\s*$", re.IGNORECASE)
#: a query name names its output file (``--out r.csv`` writes ``r.<name>.csv``, ``cepagg cube
#: --out DIR`` writes ``DIR/<name>.csv``, ``cepagg stream`` a folder per query), so it must be one
#: plain file name on every system
_FILE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")


def split_workload(text: str) -> list[tuple[str, str]]:
    """(name, query text) per block; blocks without a query (only comments) are skipped, but
    one with a name line, or with two, is an error (a query lost or misnamed).

    CONCEPT lines (:mod:`.concepts`) anywhere in the file declare one hierarchy for every query:
    each block's text ends with all of them."""
    text, declared = extract_concepts(text, "the workload")
    blocks: list[list[str]] = [[]]
    for line in text.splitlines():
        if _SEPARATOR.match(line):
            blocks.append([])
        else:
            blocks[-1].append(line)
    out = []
    for lines in blocks:
        name = None
        body = []
        for line in lines:
            m = _NAME.match(line)
            if m and name is not None:
                raise QueryError(f"The workload names one query twice: '{name}' and '{m.group(1)}'.")
            if m:
                name = m.group(1)
                continue
            body.append(line)
        query = "\n".join(body)
        if not any(s.strip() and not s.strip().startswith(("--", "#")) for s in body):
            if name is not None:
                raise QueryError(f"The workload names a query '{name}' but its block holds no query.")
            continue
        out.append((name or f"q{len(out)}", with_hierarchy(query, declared)))
    seen: dict[str, str] = {}
    for n, _ in out:
        if not _FILE_NAME.fullmatch(n) or ".." in n:
            raise QueryError(f"The workload's query name '{n}' cannot name a file: use letters, digits and "
                             "'_', '-', '.' (not first, no '..').")
        if n.casefold() in seen:
            same = f"'{n}'" if seen[n.casefold()] == n else f"'{seen[n.casefold()]}' and '{n}'"
            raise QueryError(f"The workload names two queries {same} (names differing only in case "
                             "would share one output file on macOS and Windows).")
        seen[n.casefold()] = n
    return out


def is_workload(text: str) -> bool:
    """Does the text hold more than one query (or a separator)?"""
    return any(_SEPARATOR.match(line) for line in text.splitlines())


def compile_workload(text: str, *, time_unit: str = "ms", schema: Mapping[str, str] | None = None,
                     hierarchy: Hierarchy | None = None) -> list[tuple[str, Query]]:
    """Parse and check every query of a workload; errors name the query. ``hierarchy`` is merged
    with the file's CONCEPT lines for every query."""
    from . import compile_query

    out = []
    for name, body in split_workload(text):
        try:
            out.append((name, compile_query(body, time_unit=time_unit, schema=schema, hierarchy=hierarchy)))
        except QueryError as exc:
            raise QueryError(f"In query '{name}': {exc}") from None
    if not out:
        raise QueryError("The workload holds no query.")
    return out
