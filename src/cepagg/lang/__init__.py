"""The query language: grammar, syntax tree, semantic checks, bound model, printer."""

from __future__ import annotations

from typing import Mapping

from .analyze import analyze
from .model import Query
from .parser import parse
from .printer import to_text

__all__ = ["compile_query", "parse", "analyze", "to_text", "Query"]


def compile_query(text: str, *, time_unit: str = "ms", schema: Mapping[str, str] | None = None) -> Query:
    """Parse and check a query.

    Args:
        text: the query.
        time_unit: unit of the stream's integer timestamps; durations are converted to it.
        schema: attribute name -> kind of the events, when known (attribute names are checked).

    Raises:
        QueryError: with line, column and a caret-marked excerpt.

    >>> q = compile_query("RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 10 s")
    >>> q.within, q.mode
    (10000, 'total')
    """
    return analyze(parse(text), text, time_unit=time_unit, schema=schema)
