"""The query language: grammar, syntax tree, semantic checks, bound model, printer."""

from __future__ import annotations

from dataclasses import replace
from typing import Mapping

from .analyze import analyze
from .concepts import Hierarchy, HierarchyError, as_hierarchy, extract_concepts, with_hierarchy
from .model import Query
from .parser import parse
from .printer import to_text

__all__ = ["compile_query", "parse", "analyze", "to_text", "Query", "Hierarchy", "HierarchyError"]


def compile_query(text: str, *, time_unit: str = "ms", schema: Mapping[str, str] | None = None,
                  hierarchy: Hierarchy | None = None) -> Query:
    """Parse and check a query.

    Args:
        text: the query.
        time_unit: unit of the stream's integer timestamps; durations are converted to it.
        schema: attribute name -> kind of the events, when known (attribute names are checked).
        hierarchy: a concept hierarchy (:mod:`.concepts`; or its mapping ``{concept: [child, ...]}``),
            merged with the text's CONCEPT lines.
            The query's ``text`` then ends with the merged hierarchy's CONCEPT lines, so that
            recompiling the text (as Spark workers do) gives the same query.

    Raises:
        QueryError: with line, column and a caret-marked excerpt.

    >>> q = compile_query("RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 10 s")
    >>> q.within, q.mode
    (10000, 'total')
    """
    if not isinstance(text, str):
        raise TypeError(f"the query: text (a str), not {type(text).__name__}")
    body, declared = extract_concepts(text)
    merged = declared.merged(as_hierarchy(hierarchy))
    query = analyze(parse(body), body, time_unit=time_unit, schema=schema)
    if not merged:
        return query
    return replace(query, text=with_hierarchy(body, merged), hierarchy=merged)
