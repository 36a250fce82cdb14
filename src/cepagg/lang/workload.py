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
from typing import Any, Mapping, Sequence

from ..errors import Position, QueryError
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
    return [(name, body) for name, body, _ in workload_blocks(text)]


def workload_blocks(text: str) -> list[tuple[str, str, int]]:
    """(name, query text, line of the file where the text begins) per block, as
    :func:`split_workload`. A block's name line is blank in its text, so that line N of the text
    is line ``first + N - 1`` of the file (an error's position is given in the file)."""
    text, declared = extract_concepts(text, "the workload")
    blocks: list[tuple[int, list[str]]] = [(1, [])]
    for number, line in enumerate(text.split("\n"), 1):
        line = line.removesuffix("\r")
        if _SEPARATOR.match(line):
            blocks.append((number + 1, []))
        else:
            blocks[-1][1].append(line)
    out = []
    for first, lines in blocks:
        name = None
        body = []
        for line in lines:
            m = _NAME.match(line)
            if m and name is not None:
                raise QueryError(f"The workload names one query twice: '{name}' and '{m.group(1)}'.")
            if m:
                name = m.group(1)
                line = ""
            body.append(line)
        query = "\n".join(body)
        if not any(s.strip() and not s.strip().startswith(("--", "#")) for s in body):
            if name is not None:
                raise QueryError(f"The workload names a query '{name}' but its block holds no query.")
            continue
        out.append((name or f"q{len(out)}", with_hierarchy(query, declared), first))
    for n, _, _ in out:
        if not _FILE_NAME.fullmatch(n) or ".." in n:
            raise QueryError(f"The workload's query name '{n}' cannot name a file: use letters, digits and "
                             "'_', '-', '.' (not first, no '..').")
    same = case_clash(n for n, _, _ in out)
    if same:
        raise QueryError(f"The workload names two queries {same} (names differing only in case "
                         "would share one output file on macOS and Windows).")
    return out


def case_clash(names) -> str | None:
    """The first of ``names`` equal to an earlier one ignoring case, quoted with it ("'a'", or
    "'A' and 'a'"); None where all differ.

    >>> case_clash(["pairs", "Pairs"]), case_clash(["a", "b"])
    ("'pairs' and 'Pairs'", None)
    """
    seen: dict[str, str] = {}
    for n in names:
        k = n.casefold()
        if k in seen:
            return f"'{n}'" if seen[k] == n else f"'{seen[k]}' and '{n}'"
        seen[k] = n
    return None


def in_workload(exc: QueryError, name: str, text: str, first: int) -> QueryError:
    """``exc``, raised by the query ``name`` whose text begins on line ``first`` of the workload
    ``text``, as an error naming the query, its position given in the file."""
    lines = [s.removesuffix("\r") for s in text.split("\n")]
    if exc.pos is None or exc.text is None or first + exc.pos.line - 1 > len(lines) \
            or exc.pos.line > len(exc.text.split("\n")):
        return QueryError(f"In query '{name}': {exc}")
    line = first + exc.pos.line - 1
    start = sum(len(s) + 1 for s in lines[:line - 1]) + exc.pos.column - 1
    pos = Position(start, start + exc.pos.end - exc.pos.start, line, exc.pos.column)
    return QueryError(f"In query '{name}': {exc.message}", "\n".join(lines), pos)


def is_workload(text: str) -> bool:
    """Does the text hold more than one query (or a separator)?"""
    return any(_SEPARATOR.match(line) for line in text.splitlines())


def compile_workload(text: str, *, time_unit: str = "ms", schema: Mapping[str, str] | None = None,
                     hierarchy: Hierarchy | None = None) -> list[tuple[str, Query]]:
    """Parse and check every query of a workload; errors name the query. ``hierarchy`` is merged
    with the file's CONCEPT lines for every query."""
    from . import compile_query

    out = []
    for name, body, first in workload_blocks(text):
        try:
            out.append((name, compile_query(body, time_unit=time_unit, schema=schema, hierarchy=hierarchy)))
        except QueryError as exc:
            raise in_workload(exc, name, text, first) from None
    if not out:
        raise QueryError("The workload holds no query.")
    return out


def named_queries(workload: Any, names: Sequence[str] | None = None) -> list[tuple[str, Any]]:
    """(name, query) for a workload given to the Python API as queries rather than a text: a
    ``{name: query}`` mapping, or a sequence of queries named by ``names`` (default ``q0``,
    ``q1``, ...).

    >>> named_queries({"pairs": "PATTERN SEQ(A, B)"})
    [('pairs', 'PATTERN SEQ(A, B)')]

    Raises:
        TypeError: not a workload text, a mapping or a sequence (or a mapping with ``names``).
        ValueError: ``names`` and the queries differ in number (one would be dropped), or two
            names are the same ignoring case (the results are returned by name, and a file
            workload refuses them too: one result would be lost).
    """
    if isinstance(workload, Mapping):
        if names is not None:
            raise TypeError("workload: a {name: query} mapping names its queries; give no names=")
        return _distinct([(str(n), q) for n, q in workload.items()])
    if isinstance(workload, (str, bytes)) or not hasattr(workload, "__iter__"):
        raise TypeError(f"workload: a workload text, a sequence of queries or a {{name: query}} mapping, "
                        f"not {type(workload).__name__}")
    queries = list(workload)
    names = [f"q{i}" for i in range(len(queries))] if names is None else list(names)  # (once: an iterator)
    if len(names) != len(queries):
        raise ValueError(f"names: {len(names)} names for {len(queries)} queries")
    return _distinct(list(zip((str(n) for n in names), queries)))


def _distinct(named: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """``named``, refused if two of its names are the same ignoring case, as a workload file's
    are (:func:`workload_blocks`)."""
    same = case_clash(n for n, _ in named)
    if same:
        raise ValueError(f"names: two queries are named {same}; give each query its own name (ignoring case)")
    return named
