"""Malformed or meaningless queries: each raises a QueryError at an exact place.

Every case gives the query, the 1-based line and column the error must point at, and a fragment
of the message. ``str(err)`` must carry the offending line with a caret under that column.

The last table lists queries that parse and bind but cannot mean anything (an alias hiding a
window column, a sum of strings, a string compared with a number): they are refused too.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from cepagg.errors import QueryError
from cepagg.lang import compile_query, parse


@dataclass(frozen=True)
class Bad:
    id: str
    text: str
    line: int
    column: int
    message: str  # fragment of err.message
    schema: dict[str, str] | None = field(default=None, hash=False)


SYNTAX = [
    Bad("missing-close-paren", "PATTERN SEQ(A, B WITHIN 10 s", 1, 18,
        "Unexpected 'WITHIN'; expected ')'."),
    Bad("missing-close-paren-at-end", "PATTERN SEQ(A, B", 1, 17, "Unexpected end of query"),
    Bad("extra-close-paren", "PATTERN SEQ(A a, B b)) WITHIN 5 s", 1, 22, "Unexpected ')'"),
    Bad("trailing-comparison", "PATTERN SEQ(A, B) WHERE A.x >", 1, 30,
        "Unexpected end of query; expected one of"),
    Bad("trailing-or", "PATTERN A OR", 1, 13, "Unexpected end of query"),
    Bad("trailing-and-in-where", "PATTERN SEQ(A a, B b) WHERE a.x < 1 AND", 1, 40,
        "Unexpected end of query"),
    Bad("bad-character", "PATTERN SEQ(A, B) WHERE A.x > 3 @ 4", 1, 33, "Unexpected character '@'."),
    Bad("missing-pattern-keyword", "SEQ(A, B) WITHIN 10 s", 1, 1, "Unexpected 'SEQ'; expected one of"),
    Bad("missing-pattern-clause", "RETURN COUNT(*) WITHIN 10 s", 1, 1, "A query needs a PATTERN clause."),
    Bad("duplicate-within", "PATTERN SEQ(A, B) WITHIN 10 s WITHIN 5 s", 1, 31,
        "Duplicate WITHIN clause."),
    Bad("duplicate-where", "PATTERN SEQ(A a, B b) WHERE a.x < 1 WHERE b.x > 2", 1, 37,
        "Duplicate WHERE clause."),
    Bad("unterminated-single-quote", "PATTERN SEQ(A a) WHERE a.name = 'IBM", 1, 33,
        "Unexpected character \"'\"."),
    Bad("unterminated-double-quote", 'PATTERN SEQ(A a, B b) WHERE a.x < "abc', 1, 35,
        "Unexpected character '\"'."),
    Bad("condition-without-comparison", "PATTERN SEQ(A a) WHERE a.x", 1, 27,
        "Unexpected end of query; expected a comparison."),
    Bad("unknown-time-unit", "PATTERN SEQ(A, B) WITHIN 10 parsecs", 1, 29, "Unexpected 'parsecs'"),
    Bad("strategy-not-a-name", "PATTERN SEQ(A, B) STRATEGY 42", 1, 28,
        "Unexpected '42'; expected a selection strategy."),
    Bad("syntax-error-on-line-2", "PATTERN SEQ(A, B)\nWHERE A.x >> 3", 2, 12, "Unexpected '>'"),
    Bad("unclosed-inner-paren-line-3", "RETURN COUNT(*)\nPATTERN SEQ(A a,\n  (SEQ(B b, C c) WITHIN 5 s",
        3, 28, "Unexpected end of query; expected ')'."),
]

NAMES = [
    Bad("unknown-variable-in-where", "PATTERN SEQ(A a, B b) WHERE c.x > 1", 1, 29,
        "Unknown variable 'c'; the pattern declares a, b."),
    Bad("unknown-variable-in-aggregate", "RETURN SUM(C.x) PATTERN SEQ(A, B)", 1, 8,
        "Unknown variable 'C'; the pattern declares A, B."),
    Bad("unknown-variable-in-group-by", "RETURN COUNT(*) PATTERN SEQ(A, B) GROUP BY C.id", 1, 44,
        "Unknown variable 'C'"),
    Bad("unknown-variable-in-equivalence", "PATTERN SEQ(A a, B b) WHERE [a.id, c.id]", 1, 36,
        "Unknown variable 'c'"),
    Bad("unknown-variable-on-line-3", "PATTERN SEQ(A a, B b)\nWHERE a.price > 10\n  AND z.price < 5",
        3, 7, "Unknown variable 'z'"),
    Bad("variable-declared-twice", "PATTERN SEQ(A x, B x)", 1, 18, "Variable 'x' is declared twice."),
    Bad("alias-equals-unaliased-type", "PATTERN SEQ(A B, B)", 1, 18, "Variable 'B' is declared twice."),
    Bad("variable-with-two-types", "PATTERN OR(SEQ(A x, B), SEQ(C x, D))", 1, 29,
        "Variable 'x' is declared with two different types."),
    Bad("unknown-attribute-with-schema", "PATTERN SEQ(A a, B b) WHERE a.volume > 10", 1, 29,
        "Unknown attribute 'volume'; the events have ts, type, price.", {"price": "float"}),
    Bad("unknown-attribute-in-aggregate-with-schema", "RETURN AVG(b.volume) PATTERN SEQ(A a, B b)",
        1, 8, "Unknown attribute 'volume'", {"price": "float"}),
    Bad("unknown-attribute-in-group-by-with-schema",
        "RETURN COUNT(*)\nPATTERN SEQ(A a, B b)\nGROUP BY sector", 3, 10,
        "Unknown attribute 'sector'", {"price": "float", "company": "str"}),
    # a list, struct or bytes column (Parquet): refused where the query names it, not left to fail in the engine
    Bad("list-attribute-in-condition", "RETURN SUM(b.x) PATTERN SEQ(A a, B b) WHERE a.tags < b.tags", 1, 45,
        "Attribute 'tags' holds list<item: int64> values, which a query cannot compare",
        {"x": "int", "tags": "list<item: int64>"}),
    Bad("struct-attribute-in-equivalence", "PATTERN SEQ(A a, B b) WHERE [pos]", 1, 30,
        "Attribute 'pos' holds struct<x: int64> values", {"pos": "struct<x: int64>"}),
    Bad("bytes-attribute-in-group-by", "RETURN COUNT(*) PATTERN SEQ(A a, B b) GROUP BY raw", 1, 48,
        "Attribute 'raw' holds binary values", {"raw": "binary"}),
    # two output columns of one name: the window's and the group attribute's
    Bad("group-by-a-window-column", "RETURN COUNT(*) PATTERN SEQ(A, B) GROUP BY window_start WITHIN 10 SLIDE 5",
        1, 44, "GROUP BY window_start: the output already has a column named 'window_start'"),
    Bad("group-by-ts-under-emit", "RETURN COUNT(*) PATTERN SEQ(A, B) GROUP BY A.ts WITHIN 10 EMIT ON CHANGE",
        1, 44, "GROUP BY ts: the output already has a column named 'ts'"),
    Bad("bytes-attribute-in-aggregate", "RETURN MAX(a.raw) PATTERN SEQ(A a, B b)", 1, 8,
        "Attribute 'raw' holds binary values", {"raw": "binary"}),
]

AGGREGATES = [
    Bad("sum-of-variable", "RETURN SUM(A) PATTERN SEQ(A, B)", 1, 8,
        "SUM needs an attribute: SUM(A.attr)."),
    Bad("sum-star", "RETURN SUM(*) PATTERN SEQ(A, B)", 1, 8, "SUM needs an attribute: SUM(X.attr)."),
    Bad("avg-star", "RETURN AVG(*) PATTERN SEQ(A, B)", 1, 8, "AVG needs an attribute"),
    Bad("count-of-attribute", "RETURN COUNT(A.x) PATTERN SEQ(A, B)", 1, 8,
        "COUNT takes * or a variable, e.g. COUNT(*) or COUNT(E)."),
    Bad("sum-of-event-type", "RETURN SUM(A.type) PATTERN SEQ(A, B)", 1, 8,
        "SUM over the event type is meaningless."),
    Bad("aggregate-of-negated-variable", "RETURN SUM(b.x) PATTERN SEQ(A a, !B b, C c)", 1, 8,
        "a negated variable binds no event."),
    Bad("duplicate-output-alias", "RETURN COUNT(*) AS n, SUM(a.x) AS n PATTERN SEQ(A a, B b)", 1, 23,
        "Two output columns are named 'n'"),
    Bad("same-aggregate-twice", "RETURN COUNT(*), COUNT(*) PATTERN SEQ(A a)", 1, 18,
        "Two output columns are named 'COUNT(*)'"),
    # a variable or group attribute returned twice was accepted and returned once
    Bad("same-variable-twice", "RETURN a, a PATTERN SEQ(A a, B b)", 1, 11, "RETURN lists 'a' twice."),
    Bad("variable-twice-by-type", "RETURN a, A PATTERN SEQ(A a, B b)", 1, 11,
        "RETURN lists 'A' twice (it names variable 'a', returned already)."),
    Bad("same-group-attribute-twice", "RETURN g, g, COUNT(*) PATTERN SEQ(A a, B b) WHERE [g] GROUP BY g", 1, 11,
        "RETURN lists 'g' twice."),
    Bad("return-non-grouped-attribute", "RETURN a.price, COUNT(*) PATTERN SEQ(A a, B b) GROUP BY a.id",
        1, 8, "RETURN a.price: not a GROUP BY attribute"),
    Bad("return-unknown-bare-name", "RETURN price PATTERN SEQ(A a)", 1, 8,
        "RETURN price: not a GROUP BY attribute, a variable or an aggregate."),
    Bad("return-mixes-aggregates-and-variables", "RETURN a, COUNT(*) PATTERN SEQ(A a, B b)", 1, 8,
        "RETURN mixes aggregates with matched events"),
    Bad("return-mix-on-line-3", "PATTERN SEQ(A a, B b)\nWHERE a.x < 10\nRETURN COUNT(*), a", 3, 18,
        "RETURN mixes aggregates with matched events"),
    Bad("return-negated-variable", "PATTERN SEQ(A a, !B b, C c) RETURN b", 1, 36,
        "RETURN b: a negated variable binds no event."),
    Bad("group-by-negated-variable", "RETURN COUNT(*) PATTERN SEQ(A a, !B b, C c) GROUP BY b.id", 1, 54,
        "b is negated and binds no event"),
    Bad("group-by-optional-variable", "RETURN COUNT(*) PATTERN SEQ(A a, OR(B b, C c)) GROUP BY b.id",
        1, 57, "b is inside OR and is not bound in every match"),
    Bad("group-by-twice", "RETURN COUNT(*) PATTERN SEQ(A,B) GROUP BY id, id", 1, 47,
        "GROUP BY lists 'id' twice."),
    Bad("group-by-same-variable-attribute-twice", "RETURN COUNT(*) PATTERN SEQ(A a, B) GROUP BY a.id, a.id",
        1, 52, "GROUP BY lists 'id' twice."),
]

PATTERNS = [
    Bad("next-on-non-kleene", "PATTERN SEQ(A a, B b) WHERE a.x < NEXT(a).x", 1, 35,
        "NEXT(a) is only meaningful for a variable inside a Kleene pattern (a+)."),
    Bad("first-on-non-kleene", "PATTERN SEQ(A a, B b) WHERE FIRST(b).x > 1", 1, 29,
        "FIRST(b) is only meaningful for a variable inside a Kleene pattern"),
    Bad("first-under-nested-kleene", "PATTERN (SEQ(A+, B))+ WHERE FIRST(A).x > 1", 1, 29,
        "FIRST(A) is ambiguous: A repeats inside an outer Kleene pattern."),
    Bad("next-of-two-variables", "PATTERN SEQ(A+, B+) WHERE NEXT(A).x < NEXT(B).x", 1, 39,
        "A condition may use NEXT of only one variable."),
    Bad("pattern-only-negation", "PATTERN NOT A", 1, 9, "Negation with nothing around it"),
    Bad("seq-only-negation", "PATTERN SEQ(NOT A)", 1, 9,
        "SEQ needs at least one positive item (negation with nothing around it)."),
    Bad("and-only-negations", "PATTERN AND(!A, !B)", 1, 9,
        "A conjunction of negated items needs a SEQ around it (negation with nothing around it)."),
    Bad("or-mixes-negated-and-positive", "PATTERN SEQ(A, OR(!B, C), D)", 1, 16,
        "OR mixes negated (!/NOT, EXISTS) and positive alternatives"),
    Bad("not-of-disjunction-of-negations", "PATTERN SEQ(A, NOT (!B ∨ !C), D)", 1, 16,
        "Negating a disjunction of negations is not supported"),
    Bad("kleene-star", "PATTERN SEQ(A*, B)", 1, 13, "Kleene star '*' is not supported"),
    Bad("optional", "PATTERN SEQ(A?, B)", 1, 13, "optional '?' is not supported"),
    Bad("condition-across-two-negations", "PATTERN SEQ(A, !B b, C, !D d, E) WHERE b.x = d.x", 1, 40,
        "relates variables of two different negated or EXISTS sub-patterns"),
    Bad("qualification-across-two-negations",
        "PATTERN SEQ(A a, ! (B b, b.x > a.x), C c, ! (D d, d.y = b.y))", 1, 51,
        "relates variables of two different negated or EXISTS sub-patterns"),
    Bad("unknown-strategy", "PATTERN SEQ(A, B) STRATEGY skip-till-some-match", 1, 28,
        "Unknown selection strategy 'skip-till-some-match'"),
    Bad("window-around-only-a-negation", "PATTERN (!A a WITHIN 1)", 1, 9,
        "A sub-pattern with its own window needs a positive event"),
    Bad("inner-window-around-a-negation", "PATTERN SEQ(A, (NOT B WITHIN 5 s), C)", 1, 16,
        "A sub-pattern with its own window needs a positive event"),
    Bad("contiguity-with-and", "PATTERN AND(A, B) STRATEGY contiguous", 1, 28,
        "contiguous needs an order between events; AND has none."),
]

CONDITIONS = [
    Bad("condition-without-attribute", "PATTERN SEQ(A, B) WHERE 1 < 2", 1, 25,
        "This condition names no event attribute."),
    Bad("qualified-and-unqualified", "PATTERN SEQ(A a, B b) WHERE a.price < price", 1, 29,
        "mixes unqualified attributes (meaning: every event) with qualified ones"),
    Bad("equivalence-under-or", "PATTERN SEQ(A, B) WHERE [id] OR A.x > 1", 1, 25,
        "An equivalence list [..] cannot be combined with OR or NOT"),
]

WINDOWS = [
    Bad("slide-without-within", "RETURN COUNT(*) PATTERN SEQ(A, B) SLIDE 1 s", 1, 41,
        "SLIDE needs a WITHIN window."),
    Bad("slide-with-emit-on-change",
        "RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 10 s SLIDE 1 s EMIT ON CHANGE", 1, 53,
        "Use either SLIDE (one row per window) or EMIT ON CHANGE, not both."),
    Bad("slide-with-emit-multiline",
        "RETURN COUNT(*)\nPATTERN SEQ(A a, B b)\nGROUP BY a.id\nWITHIN 10 s SLIDE 2 s\nEMIT ON CHANGE",
        4, 19, "Use either SLIDE"),
    Bad("zero-window", "PATTERN SEQ(A, B) WITHIN 0 s", 1, 26, "WITHIN must be positive."),
    Bad("zero-window-on-line-3", "RETURN COUNT(*)\nPATTERN SEQ(A, B)\nWITHIN 0 s", 3, 8,
        "WITHIN must be positive."),
    Bad("zero-slide", "RETURN COUNT(*) PATTERN SEQ(A,B) WITHIN 10 s SLIDE 0 s", 1, 52,
        "SLIDE must be positive."),
    Bad("fractional-window", "PATTERN SEQ(A, B) WITHIN 1.5 ms", 1, 26,
        "WITHIN 1.5 ms is not a whole number of ms, the stream's time unit."),
    Bad("fractional-tuple-window", "RETURN COUNT(*) PATTERN SEQ(A,B) WITHIN 1.5 events", 1, 41,
        "A tuple-count window must be a positive whole number."),
    Bad("slide-on-tuple-window", "RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 100 events SLIDE 10 events",
        1, 59, "SLIDE is only defined for time windows, not tuple-count windows."),
    Bad("inner-tuple-window", "PATTERN SEQ(A, EXISTS (SEQ(B, C) WITHIN 5 events), D)", 1, 41,
        "A tuple-count window is only allowed in the query's WITHIN."),
    Bad("emit-on-change-on-match-query", "PATTERN SEQ(A, B) WITHIN 10 s EMIT ON CHANGE", 1, 31,
        "EMIT ON CHANGE reports aggregates; the query returns matches."),
    Bad("emit-on-change-with-tuple-window",
        "RETURN COUNT(*) PATTERN SEQ(A,B) WITHIN 100 events EMIT ON CHANGE", 1, 41,
        "EMIT ON CHANGE is only defined for time windows."),
]


def _col(text: str, fragment: str, nth: int = 1) -> int:
    """1-based column of the nth occurrence of fragment (the tables below are one line each)."""
    at = -1
    for _ in range(nth):
        at = text.index(fragment, at + 1)
    return at + 1


def _bad(id_: str, text: str, fragment: str, message: str, nth: int = 1) -> Bad:
    return Bad(id_, text, 1, _col(text, fragment, nth), message)


_DEEP = "Nested too deeply: a query may nest at most 100 operators inside one another."
_BANGS = "PATTERN SEQ(A, " + "!" * 480 + "B, C)"
_SEQ_101 = "PATTERN " + "SEQ(A, " * 101 + "B" + ")" * 101
_SUM_101 = "PATTERN SEQ(A a) WHERE a.x > 1" + " + 1" * 100
_NOT_101 = "PATTERN SEQ(A a) WHERE " + "NOT " * 101 + "a.x > 1"
_DIGITS = "9" * 4301

# Input that once escaped as another exception (RecursionError, OverflowError, ValueError, a
# codec error) or passed `check` and failed at run time: refused by parse() at the right place.
LIMITS_SYNTAX = [
    _bad("480-bangs", _BANGS, "!", _DEEP, nth=100),
    _bad("101-nested-seqs", _SEQ_101, "SEQ(", _DEEP, nth=101),
    _bad("101-nested-sums", _SUM_101, "1", _DEEP),  # a + chain nests to the left
    _bad("101-nested-nots-in-where", _NOT_101, "NOT", _DEEP, nth=101),
    _bad("integer-of-4301-digits", f"PATTERN SEQ(A a) WHERE a.x > {_DIGITS}", "9",
         "The number 99999999999999999999...9999999999 (4301 characters) is out of range."),
    _bad("integer-beyond-int64", "PATTERN SEQ(A a) WHERE a.x > 9223372036854775808", "9",
         "The integer 9223372036854775808 is out of range: integers are 64-bit"),
    _bad("float-overflow", "PATTERN SEQ(A a) WHERE a.x > 1e400", "1e400",
         "The number 1e400 is out of the range of a 64-bit float."),
    _bad("float-underflow", "PATTERN SEQ(A a) WHERE a.x > 1e-400", "1e-400",
         "The number 1e-400 is out of the range of a 64-bit float."),
    _bad("exponent-of-5-digits", "PATTERN SEQ(A, B) WITHIN 1e99999 s", "1e99999",
         "The number 1e99999 is out of range."),
    _bad("escape-x", r"PATTERN SEQ(A a) WHERE a.x = '\x'", "\\",
         r"Unknown escape '\x' in a string; the escapes are \\, \", \', \n, \t, \r."),
    _bad("escape-N", r"PATTERN SEQ(A a) WHERE a.x = '\N'", "\\", r"Unknown escape '\N' in a string"),
    _bad("escape-after-valid-ones", r'PATTERN SEQ(A a) WHERE a.x = "é\t\"\q"', "\\q",
         r"Unknown escape '\q'"),
]

_MAX_SPAN = 2**61
LIMITS_SEMANTIC = [
    _bad("within-1e400-s", "PATTERN SEQ(A, B) WITHIN 1e400 s", "1e400",
         f"WITHIN 1e400 s is too long: a window or slide is at most 2^61 = {_MAX_SPAN} ms"),
    _bad("within-1e400-events", "RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 1e400 EVENTS", "1e400",
         f"A tuple-count window is at most 2^61 = {_MAX_SPAN} events."),
    _bad("within-20-digits-ms", "PATTERN SEQ(A, B) WITHIN 99999999999999999999 ms", "9",
         "WITHIN 99999999999999999999 ms is too long"),
    _bad("within-one-beyond-the-limit", f"PATTERN SEQ(A, B) WITHIN {_MAX_SPAN + 1}", "23",
         f"WITHIN {_MAX_SPAN + 1} is too long"),
    _bad("within-in-days-beyond-the-limit", "PATTERN SEQ(A, B) WITHIN 30000000000 d", "3",
         "WITHIN 30000000000 d is too long"),
    _bad("slide-beyond-the-limit", "RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 1 s SLIDE 1e19 ms", "1e19",
         "SLIDE 1e19 ms is too long"),
    _bad("inner-window-beyond-the-limit", "PATTERN SEQ(A, EXISTS (SEQ(B, C) WITHIN 1e30 ms), D)", "1e30",
         "WITHIN 1e30 ms is too long"),
    _bad("fractional-window-without-unit", "PATTERN SEQ(A, B) WITHIN 2.5", "2.5",
         "WITHIN 2.5 is not a whole number of ms, the stream's time unit."),
]

CASES = SYNTAX + LIMITS_SYNTAX + NAMES + AGGREGATES + PATTERNS + CONDITIONS + WINDOWS + LIMITS_SEMANTIC


def _error(case: Bad) -> QueryError:
    with pytest.raises(QueryError) as info:
        compile_query(case.text, schema=case.schema)
    return info.value


def _check_excerpt(err: QueryError, text: str) -> None:
    rendered = str(err).split("\n")
    source_line, caret_line = rendered[-2], rendered[-1]
    assert source_line == "  " + text.split("\n")[err.line - 1]
    assert caret_line.strip() and set(caret_line.strip()) == {"^"}
    assert caret_line.index("^") == 2 + err.column - 1
    assert f"Line {err.line}, Col {err.column}." in rendered[0]


def test_table_is_well_formed():
    assert len(CASES) >= 30
    assert len({c.id for c in CASES}) == len(CASES)
    assert any(c.line >= 2 for c in SYNTAX) and sum(c.line >= 2 for c in CASES) >= 5


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_query_error(case):
    err = _error(case)
    assert (err.line, err.column) == (case.line, case.column), err.message
    assert case.message in err.message
    assert err.text == case.text
    _check_excerpt(err, case.text)
    if case in SYNTAX + LIMITS_SYNTAX:  # reported by parse() already, at the same place
        with pytest.raises(QueryError) as info:
            parse(case.text)
        assert (info.value.line, info.value.column) == (case.line, case.column)
    else:  # a semantic error: the text parses
        assert parse(case.text).pattern is not None


def test_caret_spans_the_offending_token():
    err = _error(Bad("", "PATTERN SEQ(A a, B b) WHERE c.x > 1", 1, 29, ""))
    assert str(err).endswith("\n  PATTERN SEQ(A a, B b) WHERE c.x > 1\n" + " " * 30 + "^^^")


def test_schema_knows_builtin_attributes():
    q = compile_query("PATTERN SEQ(A a, B b) WHERE a.ts < b.ts AND a.price > 1",
                      schema={"price": "float"})
    assert len(q.conditions) == 2


@pytest.mark.parametrize("text", ["", "   \n\t  "])
def test_empty_query(text):
    with pytest.raises(QueryError) as info:
        compile_query(text)
    err = info.value
    assert err.message == "Empty query: expected a PATTERN clause."
    assert err.line is None and err.column is None


def test_unknown_time_unit_of_the_stream():
    with pytest.raises(QueryError) as info:
        compile_query("PATTERN SEQ(A, B) WITHIN 10 s", time_unit="fortnight")
    assert "Unknown time unit 'fortnight'" in info.value.message


def test_window_finer_than_the_stream_time_unit():
    with pytest.raises(QueryError) as info:
        compile_query("PATTERN SEQ(A, B) WITHIN 500 ms", time_unit="s")
    err = info.value
    assert (err.line, err.column) == (1, 26)
    assert "is not a whole number of s" in err.message


# ---------------------------------------------------------------------------------------------
# Clearly meaningless queries that are refused although they parse and bind.
# Not listed: a condition relating variables of two exclusive OR alternatives,
# `PATTERN OR(A a, B b) WHERE a.x = b.x`, which docs/semantics.md §5 defines as holding vacuously.

MEANINGLESS = [
    pytest.param(
        "RETURN COUNT(*) AS ts PATTERN SEQ(A, B) WITHIN 10 s EMIT ON CHANGE", None,
        id="alias-collides-with-emit-ts-column"),
    pytest.param(
        "RETURN COUNT(*) AS window_start PATTERN SEQ(A, B) WITHIN 10 s SLIDE 1 s", None,
        id="alias-collides-with-window-column"),
    pytest.param(
        "PATTERN SEQ(A a, B b) WHERE a.price > 'IBM'", {"price": "float"},
        id="float-attribute-compared-with-string"),
    pytest.param(
        "RETURN SUM(a.name) PATTERN SEQ(A a)", {"name": "str"},
        id="sum-of-string-attribute"),
    pytest.param(
        "PATTERN SEQ(A a, B b) WHERE a.x = 'abc' + 2", None,
        id="arithmetic-on-string-literal"),
    pytest.param(
        "RETURN COUNT(*) PATTERN SEQ(A, B) GROUP BY type", None,
        id="group-by-type-over-two-types"),
]


@pytest.mark.parametrize("text, schema", MEANINGLESS)
def test_meaningless_query_is_refused(text, schema):
    with pytest.raises(QueryError) as info:
        compile_query(text, schema=schema)
    assert info.value.line is not None


# ---------------------------------------------------------------------------------------------
# Deep and long input that works: the parser uses no recursion, the limit is on nesting only.


def test_98_nested_seqs_work():
    q = compile_query("PATTERN " + "SEQ(A, " * 98 + "B" + ")" * 98)
    assert len(q.pattern.items) == 99


def test_100_nested_seqs_are_the_limit():
    q = compile_query("PATTERN " + "SEQ(A, " * 100 + "B" + ")" * 100)
    assert len(q.pattern.items) == 101


def test_100_nested_sums_work():
    q = compile_query("PATTERN SEQ(A a) WHERE a.x > 1" + " + 1" * 99)
    assert q.conditions[0].expr.operands[1].op == "+"


@pytest.mark.parametrize("n", [482, 5000])
def test_long_flat_seq(n):
    q = compile_query("PATTERN SEQ(" + ", ".join(f"A{i}" for i in range(n)) + ")")
    assert [a.type for a in q.pattern.items] == [f"A{i}" for i in range(n)]
    assert str(q).startswith("PATTERN SEQ(A0, A1, A2, ")


def test_long_semicolon_sequence():
    q = compile_query("PATTERN " + "; ".join(f"A{i}" for i in range(3000)))
    assert len(q.pattern.items) == 3000


@pytest.mark.parametrize("n", [162, 10_000])
def test_deep_grouping_parentheses_in_where(n):
    q = compile_query("PATTERN SEQ(A a) WHERE " + "(" * n + "a.x > 1" + ")" * n)
    assert q.conditions[0].text == "a.x > 1"


def test_window_at_the_limit():
    q = compile_query(f"RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN {2**61} SLIDE {2**61}")
    assert q.within == q.slide == 2**61
    assert compile_query(f"RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN {2**61} EVENTS").within_events == 2**61


def test_window_exact_beyond_float_precision():
    q = compile_query("PATTERN SEQ(A, B) WITHIN 9007199254740993 ms")
    assert q.within == 9007199254740993  # 2^53 + 1: not rounded through a float


def test_window_in_the_stream_unit():
    assert compile_query("PATTERN SEQ(A, B) WITHIN 1.5e3 ms").within == 1500
    assert compile_query("PATTERN SEQ(A, B) WITHIN 0.01 d", time_unit="s").within == 864


def test_window_beyond_the_limit_in_a_coarser_stream_unit():
    # 2^61 s is fine as a number of seconds, and refused as soon as it exceeds 2^61 of them
    assert compile_query(f"PATTERN SEQ(A, B) WITHIN {2**61} s", time_unit="s").within == 2**61
    with pytest.raises(QueryError) as info:
        compile_query(f"PATTERN SEQ(A, B) WITHIN {2**61} s")  # in ms: 1000 times more
    assert info.value.column == 26


# ---------------------------------------------------------------------------------------------
# String literals: the value is exactly what was written, escapes replaced.

STRINGS = [
    ('"é\\t"', "é\t"),
    ("'é'", "é"),
    ('"日本語 ✓ 🙂"', "日本語 ✓ 🙂"),
    ('"a\\\\b"', "a\\b"),
    ('"say \\"hi\\""', 'say "hi"'),
    ("'it\\'s'", "it's"),
    ('"\\n\\r\\t"', "\n\r\t"),
    ("'\\\"'", '"'),
    ('"tab\there"', "tab\there"),  # a real tab character, kept
]


@pytest.mark.parametrize("literal, value", STRINGS, ids=[f"s{i}" for i in range(len(STRINGS))])
def test_string_literal_value(literal, value):
    q = compile_query(f"PATTERN SEQ(A a) WHERE a.name = {literal}")
    assert q.conditions[0].expr.operands[1].value == value
    again = compile_query(str(q))  # the printed form re-parses to the same value
    assert again.conditions[0].expr.operands[1].value == value
