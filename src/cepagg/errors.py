"""One error hierarchy for the whole package.

Every error cepagg raises on purpose derives from :class:`CepaggError`, so callers (the CLI,
the Spark adapter) can tell a reported problem from a bug. Errors about query text carry the
position and a caret-marked excerpt, as sqlglot's do; errors about input data name the file
and the row.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


class CepaggError(Exception):
    """Root of every error cepagg reports deliberately."""


@dataclass(frozen=True)
class Position:
    """A place in query text: 0-based offsets, 1-based line and column."""

    start: int
    end: int
    line: int
    column: int

    @staticmethod
    def of(text: str, start: int, end: int | None = None) -> "Position":
        """Compute line and column of offset ``start`` in ``text``."""
        start = max(0, min(start, len(text)))
        end = start if end is None else max(start, min(end, len(text)))
        line = text.count("\n", 0, start) + 1
        column = start - (text.rfind("\n", 0, start) + 1) + 1
        return Position(start, end, line, column)


def excerpt(text: str, pos: Position) -> str:
    """The line of ``text`` holding ``pos`` with a caret line under the offending span."""
    lines = text.split("\n")
    line = lines[pos.line - 1] if 0 < pos.line <= len(lines) else ""
    line_end_offset = pos.start - (pos.column - 1) + len(line)
    width = max(1, min(pos.end, line_end_offset) - pos.start)
    caret = " " * (pos.column - 1) + "^" * width
    return f"  {line}\n  {caret}"


class QueryError(CepaggError):
    """A malformed or meaningless query, with where it is wrong.

    Attributes:
        message: what is wrong, without position.
        line, column: 1-based position of the problem (None when the query as a whole is wrong).
        text: the query text, used for the excerpt.
    """

    def __init__(self, message: str, text: str | None = None, pos: Position | None = None):
        self.message = message
        self.text = text
        self.pos = pos
        self.line = pos.line if pos else None
        self.column = pos.column if pos else None
        super().__init__(self._render())

    def _render(self) -> str:
        if self.pos is None or self.text is None:
            return self.message
        return f"{self.message} Line {self.pos.line}, Col {self.pos.column}.\n{excerpt(self.text, self.pos)}"


class UnsupportedQuery(CepaggError):
    """An engine cannot evaluate a valid query; raised at plan time with the reason."""

    def __init__(self, engine: str, reason: str):
        self.engine = engine
        self.reason = reason
        super().__init__(f"engine '{engine}' cannot evaluate this query: {reason}")


class InputError(CepaggError):
    """Bad input data: names the source and, where known, the row."""

    def __init__(self, message: str, source: str | None = None, row: int | None = None):
        self.source = source
        self.row = row
        where = ""
        if source is not None:
            where = f"{source}"
            if row is not None:
                where += f", row {row}"
            where += ": "
        super().__init__(where + message)


class OverflowResult(CepaggError):
    """A result value does not fit the declared output type (never wrapped silently)."""


class UsageError(CepaggError):
    """A bad command line (an option's value, an output path): the command exits with status 2."""


#: the last line of a Python traceback that ends in one of cepagg's errors: ``cepagg.errors.InputError: ...``
_RAISED = re.compile(r"^(?:[\w.]+\.)?cepagg\.[\w.]+\.(\w+): (.+)$", re.MULTILINE)


def raised_in_spark(exc: BaseException) -> tuple[str, str] | None:
    """(class name, message) of the cepagg error inside ``exc``, a Spark exception (pyspark or
    py4j) that wraps the traceback of a Python worker or data source that raised it; None for
    any other exception. Spark shows such an error as pages of Java and Python stack traces; the
    command line reports its message as one line.

    >>> class AnalysisException(Exception): __module__ = "pyspark.errors.exceptions.captured"
    >>> raised_in_spark(AnalysisException("Traceback ...\\ncepagg.errors.InputError: e.csv, row 3: bad\\n SQLSTATE"))
    ('InputError', 'e.csv, row 3: bad')
    >>> raised_in_spark(ValueError("cepagg.errors.InputError: not from Spark")) is None
    True
    """
    if not type(exc).__module__.startswith(("pyspark", "py4j")):
        return None
    found = _RAISED.findall(str(exc))
    return (found[-1][0], found[-1][1].strip()) if found else None
