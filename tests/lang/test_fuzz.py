"""Fuzzing the query compiler: any text is a query or one positioned QueryError.

Queries are generated from the grammar's constructs (patterns with SEQ, AND, OR, tuples, `;`,
NOT/!/EXISTS/∃, Kleene plus, inner windows and qualifications, nested; conditions with
comparison chains, arithmetic, NOT/AND/OR, equivalence lists, NEXT/FIRST/LAST; windows, slides,
EMIT ON CHANGE; RETURN/AGG items with aliases; GROUP BY; strategies; clauses in any order), then
mutated: tokens deleted, inserted, duplicated, swapped or repeated many times, two queries
spliced, numbers made extreme, odd characters dropped in. For every text:

* ``compile_query`` returns a query or raises ``QueryError`` with a line and column (only an
  empty text has none); any other exception fails the test;
* no text takes longer than ``TIME_BOUND`` seconds (an alarm stops a hang);
* an accepted query prints (what ``cepagg check`` does), its printed form is accepted again,
  means the same (same bound model, node ids aside) and prints the same;
* the same holds again with a schema of attribute kinds (more checks run).

Hypothesis runs derandomised without a database, so every run checks the same texts; each
example checks one generated query and ``MUTANTS`` mutants of it.
"""

from __future__ import annotations

import os
import re
import signal
from collections import Counter
from contextlib import contextmanager

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cepagg.errors import QueryError
from cepagg.lang import ast, compile_query
from cepagg.lang.model import PNode, Query

EXAMPLES = int(os.environ.get("CEPAGG_FUZZ_EXAMPLES", 1100))
MUTANTS = 9  # with the generated query itself: 11,000 texts per run
TIME_BOUND = 5.0  # seconds per text (the longest texts take about 0.3 s)

# ---------------------------------------------------------------------------------------------
# Generation from the grammar's constructs. The pattern is drawn first and records the
# variables it declares, so that most conditions, aggregates and groups refer to real ones and
# many generated queries are valid; a few names are drawn at random to reach the errors.

TYPES = ["A", "B", "C", "D", "Start", "End", "É", "`odd type`", "`b`"]
ATTRS = ["x", "price", "id", "ts", "type", "name"]
NUMBERS = ["0", "1", "2", "10", "1.5", "0.25", "1e3", "1.5e3", "2e-3", "1e400", "1e-400",
           "9223372036854775807", "9223372036854775808", str(2**61), str(2**61 + 1),
           "99999999999999999999", "1e999", "1e1000", "9" * 40]
STRINGS = ["'IBM'", '"x"', '""', "'é'", '"é\\t"', '"a\\\\b"', '"say \\"hi\\""', "'it\\'s'",
           '"\\n\\r"', '"日本 🙂"', "'\\x'", '"\\N"', '"tab\there"']
UNITS = ["", " ms", " s", "s", " sec", " seconds", " min", " minutes", " m", " h", " hours",
         " d", " days", " events", " tuples", " hour"]
STRATEGIES = ["skip-till-any-match", "skip-till-next-match", "contiguous", "any", "next",
              "strict", "skip_till_next_match", "greedy"]
CMP = ["=", "==", "!=", "<>", "<", "<=", ">", ">=", "≤", "≥", "≠"]


class _Names:
    """Variables a generated pattern declares: (name as referred to, negated?, in a Kleene?)."""

    def __init__(self, clean: bool):
        self.declared: list[tuple[str, bool, bool]] = []
        self.n = 0
        self.clean = clean  # avoid the choices that are always errors (Kleene star, 1e999, ...)

    def fresh(self) -> str:
        self.n += 1
        return f"v{self.n}"


def _pattern(draw, names: _Names, depth: int, negated: bool, kleene: bool) -> str:
    kind = draw(st.integers(0, 12 + 4 * depth)) if depth < 3 else 0
    if kind <= 3 or kind > 12:  # an event
        t = draw(st.sampled_from(TYPES))
        style = draw(st.integers(0, 3))
        if style <= 1:
            v = names.fresh()
            names.declared.append((v, negated, kleene))
            text = f"{t} {v}"
        elif style == 2:
            names.declared.append((t, negated, kleene))
            text = t
        else:
            v = "u" + names.fresh()[1:]  # an untyped variable
            names.declared.append((v, negated, kleene))
            text = v
        return text + draw(st.sampled_from([""] * 16 + ["+"] * 6 + ([] if names.clean else ["*", "?"])))

    def sub(neg=negated, kl=kleene):
        return _pattern(draw, names, depth + 1, neg, kl)

    if kind <= 6:  # SEQ(...) or a bare tuple, with negated items and qualifications
        items = [sub() for _ in range(draw(st.integers(1, 3)))]
        for _ in range(draw(st.sampled_from([0, 0, 1, 2]))):
            word = draw(st.sampled_from(["NOT ", "!", "EXISTS ", "∃", "NOT EXIST ", "! "]))
            items.insert(draw(st.integers(0, len(items))), word + sub(neg=True))
        if draw(st.integers(0, 3)) == 0:
            items.append(_condition(draw, names, qualified_only=True))
        op = draw(st.sampled_from(["SEQ", "SEQ", "seq", ""]))
        return f"{op}({', '.join(items)})"
    if kind == 7:
        op = draw(st.sampled_from(["AND", "OR"]))
        return f"{op}({', '.join(sub() for _ in range(draw(st.integers(1, 3))))})"
    if kind == 8:
        sep = draw(st.sampled_from(["; ", " OR ", " AND ", " ∨ ", " ∧ "]))
        return sep.join(sub() for _ in range(draw(st.integers(2, 3))))
    if kind == 9:
        return f"({sub(kl=True)})+"
    if kind == 10:
        return f"({sub()} WITHIN {_duration(draw, names.clean)})"
    if kind == 11:
        return f"({sub()}, {_condition(draw, names, qualified_only=True)})"
    word = draw(st.sampled_from(["NOT ", "!", "EXISTS ", "∃"]))
    return f"SEQ({sub()}, {word}{sub(neg=True)}, {sub()})"


def _variable(draw, names: _Names, positive: bool = False, kleene: bool = False) -> str:
    usable = [v for v, neg, k in names.declared if not (positive and neg) and (k or not kleene)]
    if usable and (names.clean or draw(st.integers(0, 9))):
        return draw(st.sampled_from(usable))
    return draw(st.sampled_from(["a", "b", "A", "Z", "`odd type`"]))


def _value(draw, names: _Names, qualified_only: bool) -> str:
    v = _variable(draw, names)
    a = draw(st.sampled_from(ATTRS[:3] if names.clean else ATTRS))
    kind = draw(st.integers(0, 9))
    if kind <= 1:
        return draw(st.sampled_from(NUMBERS[:9] if names.clean or draw(st.integers(0, 9)) else NUMBERS))
    if names.clean and kind in (2, 3) or kind == 4 and names.clean and not any(k for *_, k in names.declared):
        return f"{v}.{a}"
    if kind == 2:
        return draw(st.sampled_from(STRINGS[:10] if draw(st.integers(0, 9)) else STRINGS))
    if kind == 3 and not qualified_only:
        return a
    if kind == 4:
        if names.clean:
            v = _variable(draw, names, kleene=True)
        ref = draw(st.sampled_from(["NEXT", "FIRST", "LAST", "next"]))
        return draw(st.sampled_from([f"{ref}({v}).{a}", f"{ref}({v}.{a})"]))
    return f"{v}.{a}"


def _arith(draw, names: _Names, qualified_only: bool, depth: int = 0) -> str:
    kind = draw(st.integers(0, 6)) if depth < 2 else 0
    if kind <= 3:
        return _value(draw, names, qualified_only)
    if kind == 4:
        operand = _arith(draw, names, qualified_only, depth + 1)
        return f"-({operand})" if operand.startswith("-") else f"-{operand}"  # `--` starts a comment
    if kind == 5:
        return f"({_arith(draw, names, qualified_only, depth + 1)})"
    op = draw(st.sampled_from(["+", "-", "*", "/"]))
    return f"{_arith(draw, names, qualified_only, depth + 1)} {op} {_arith(draw, names, qualified_only, depth + 1)}"


def _condition(draw, names: _Names, qualified_only: bool = False, depth: int = 0) -> str:
    kind = draw(st.integers(0, 7)) if depth < 2 else 0
    if kind <= 2:
        operands = [_arith(draw, names, qualified_only) for _ in range(draw(st.sampled_from([2, 2, 2, 3])))]
        text = operands[0]
        for o in operands[1:]:
            text += f" {draw(st.sampled_from(CMP))} {o}"
        return text
    if kind == 3 and not qualified_only:
        attrs = [draw(st.sampled_from(ATTRS)) if draw(st.booleans())
                 else f"{_variable(draw, names)}.{draw(st.sampled_from(ATTRS))}"
                 for _ in range(draw(st.integers(1, 3)))]
        return f"[{', '.join(attrs)}]"
    if kind == 4:
        return f"NOT {_condition(draw, names, qualified_only, depth + 1)}"
    if kind == 5:
        return f"({_condition(draw, names, qualified_only, depth + 1)})"
    word = draw(st.sampled_from(["AND", "OR", "and", "∧", "∨"]))
    return (f"{_condition(draw, names, qualified_only, depth + 1)} {word} "
            f"{_condition(draw, names, qualified_only, depth + 1)}")


def _duration(draw, clean: bool = False) -> str:
    if clean:
        return draw(st.sampled_from(["1", "2", "10", "1.5e3", "250"])) + draw(st.sampled_from(UNITS[:13]))
    number = draw(st.sampled_from(NUMBERS[:9])) if draw(st.integers(0, 9)) else draw(st.sampled_from(NUMBERS))
    return number + draw(st.sampled_from(UNITS))


def _return_item(draw, names: _Names, aggregate_only: bool) -> str:
    kind = draw(st.integers(0, 3 if aggregate_only else 6))
    v = _variable(draw, names, positive=True)
    a = draw(st.sampled_from(ATTRS[:3] if names.clean else ATTRS))
    if kind <= 1:
        counts = ["COUNT(*)", "count(*)", f"COUNT({v})", "COUNT"] + ([] if names.clean else ["SUM(*)"])
        item = draw(st.sampled_from(counts))
    elif kind <= 3:
        funcs = ["SUM", "AVG", "MIN", "MAX", "sum"] + ([] if names.clean else ["COUNT"])
        item = f"{draw(st.sampled_from(funcs))}({v}.{a})"
    elif kind == 4:
        return v
    elif kind == 5:
        return draw(st.sampled_from([a, f"{v}.{a}"]))
    else:
        item = "COUNT(*)"
    return item + draw(st.sampled_from(["", "", " AS n", " AS total", " AS ts", " as m"]))


@st.composite
def queries(draw):
    names = _Names(clean=draw(st.booleans()))
    clauses = ["PATTERN " + _pattern(draw, names, 0, False, False)]
    if draw(st.booleans()):
        clauses.append("WHERE " + _condition(draw, names))
    aggregate = draw(st.integers(0, 3))
    if aggregate and draw(st.integers(0, 2)) == 0:
        groups = [draw(st.sampled_from(ATTRS)) if draw(st.booleans())
                  else f"{_variable(draw, names, positive=True)}.{draw(st.sampled_from(ATTRS))}"
                  for _ in range(draw(st.integers(1, 2)))]
        clauses.append(f"{draw(st.sampled_from(['GROUP BY', 'GROUP-BY', 'group by']))} {', '.join(groups)}")
    if aggregate:
        keyword = draw(st.sampled_from(["RETURN", "RETURN", "AGG"]))
        items = [_return_item(draw, names, keyword == "AGG") for _ in range(draw(st.integers(1, 3)))]
        clauses.append(f"{keyword} {', '.join(items)}")
    elif draw(st.booleans()):
        clauses.append("RETURN " + ", ".join(_variable(draw, names, positive=True)
                                             for _ in range(draw(st.integers(1, 2)))))
    if draw(st.integers(0, 3)):
        clauses.append("WITHIN " + _duration(draw, names.clean))
        if draw(st.integers(0, 3)) == 0:
            clauses.append("SLIDE " + _duration(draw, names.clean))
        elif draw(st.integers(0, 4)) == 0:
            clauses.append("EMIT ON CHANGE")
    if draw(st.integers(0, 4)) == 0:
        clauses.append(f"{draw(st.sampled_from(['STRATEGY', 'USING']))} {draw(st.sampled_from(STRATEGIES))}")
    order = draw(st.permutations(range(len(clauses)))) if draw(st.integers(0, 3)) == 0 else range(len(clauses))
    sep = draw(st.sampled_from([" ", "\n", "\n  ", " -- note\n", "\t", " # note\n"]))
    return sep.join(clauses[i] for i in order)


# ---------------------------------------------------------------------------------------------
# Mutation

_TOKEN = re.compile(r"\s+|\w+|[^\w\s]")
VOCABULARY = ["SEQ(", "AND", "OR", "NOT", "!", "EXISTS", "∃", "(", ")", ",", ";", "+", "*", "?", ".",
              "[", "]", "WITHIN", "SLIDE", "EMIT ON CHANGE", "RETURN", "AGG", "PATTERN", "WHERE",
              "GROUP BY", "STRATEGY", "AS", "NEXT(", "=", "<", "-", "/", "'", '"', "`", "\\", "#",
              "--", "\n", "\r", "\t", "\x00", "é", "∨", "≤", "\u202e", "🙂", "\udcff", "1e400",
              "-0", "0.0", "1e-400", "9" * 5000, "99999999999999999999", "A", "a", "a.x", "ts"]


@st.composite
def mutants(draw, base: str):
    rnd = draw(st.randoms(use_true_random=False))
    out = []
    for _ in range(MUTANTS):
        tokens = _TOKEN.findall(base) or [""]
        for _ in range(rnd.choice([1, 1, 1, 2, 3])):
            i = rnd.randrange(len(tokens))
            op = rnd.randrange(9)
            if op == 0 and len(tokens) > 1:
                del tokens[i]
            elif op == 1:
                tokens.insert(i, rnd.choice(VOCABULARY))
            elif op == 2:
                j = min(len(tokens), i + rnd.randint(1, 6))
                tokens[i:i] = tokens[i:j]
            elif op == 3:
                j = rnd.randrange(len(tokens))
                tokens[i], tokens[j] = tokens[j], tokens[i]
            elif op == 4:  # a span repeated far beyond every nesting limit
                j = min(len(tokens), i + rnd.randint(1, 3))
                tokens[i:i] = tokens[i:j] * rnd.choice([50, 101, 300])
            elif op == 5:
                numbers_at = [k for k, t in enumerate(tokens) if t[:1].isdigit()]
                k = rnd.choice(numbers_at) if numbers_at else i
                tokens[k] = rnd.choice(NUMBERS + ["9" * 5000, "1e99999", "0", "00"])
            elif op == 6:  # splice with the token stream of the previous mutant
                other = _TOKEN.findall(out[-1]) if out else tokens
                tokens = tokens[:i] + other[rnd.randrange(len(other) + 1):]
            elif op == 7:
                tokens[i] = tokens[i].swapcase() if rnd.random() < 0.5 else tokens[i][: len(tokens[i]) // 2]
            else:
                text = "".join(tokens)
                k = rnd.randrange(len(text) + 1)
                tokens = [text[:k], rnd.choice(VOCABULARY), text[k:]]
            tokens = tokens or [""]
        out.append("".join(tokens))
    return out


# ---------------------------------------------------------------------------------------------
# The properties


class Hang(BaseException):
    """A text took longer than TIME_BOUND (a BaseException, so no `except Exception` hides it)."""


@contextmanager
def time_bound(seconds: float, text: str):
    def on_alarm(signum, frame):
        raise Hang(f"more than {seconds} s on {text!r:.300}")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def shape(q: Query):
    """The bound model as plain data, node ids replaced by their place in the pattern."""
    place = {n.id: i for i, n in enumerate(q.pattern.walk())}

    def name(v):
        if v is None or "@" not in v:
            return v
        base, scope = v.rsplit("@", 1)
        return f"{base}@{place.get(int(scope), '?')}"

    def pattern(n: PNode):
        fields = {k: v for k, v in vars(n).items() if k not in ("id", "pos")}
        out = [type(n).__name__]
        for k, v in sorted(fields.items()):
            if isinstance(v, tuple):
                out.append(tuple(pattern(c) for c in v))
            elif isinstance(v, PNode):
                out.append(pattern(v))
            elif k == "var":
                out.append(name(v))
            else:
                out.append(v)
        return tuple(out)

    def expr(e: ast.Node):
        if isinstance(e, (ast.Attr, ast.Ref)):
            return (type(e).__name__, getattr(e, "kind", None), name(e.var), e.name)
        if isinstance(e, ast.Literal):
            return ("Literal", type(e.value).__name__, e.value)
        parts = [type(e).__name__]
        for k, v in sorted(vars(e).items()):
            if k == "pos":
                continue
            if isinstance(v, tuple):
                parts.append(tuple(expr(c) if isinstance(c, ast.Node) else c for c in v))
            else:
                parts.append(expr(v) if isinstance(v, ast.Node) else v)
        return tuple(parts)

    return (
        pattern(q.pattern),
        sorted((name(v.name), v.type, place.get(v.scope), place.get(v.kleene), v.nested_kleene,
                v.optional, len(v.atoms)) for v in q.variables.values()),
        sorted(repr((expr(c.expr), sorted(map(name, c.vars)), name(c.next_var), place.get(c.scope), c.kind))
               for c in q.conditions),
        sorted(repr(expr(f.expr)) for f in q.stream_filters),
        sorted(q.partition_by),
        sorted((name(v), a) for v, a in q.equivalences),
        [(g.column, name(g.var), g.attr) for g in q.group_by],
        [(a.func, tuple(map(name, a.vars)), a.attr, a.column) for a in q.aggregates],
        [name(v) for v in q.return_vars],
        q.within, q.within_events, q.slide, q.emit_on_change, q.strategy, q.time_unit,
    )


SCHEMA = {"x": "int", "price": "float", "id": "int", "name": "str"}


def _positioned(err: QueryError, text: str) -> None:
    if not text.strip():
        return  # an empty query has no place to point at
    assert err.line is not None and err.column is not None, (text, err.message)
    line = text.split("\n")[err.line - 1] if 1 <= err.line <= text.count("\n") + 1 else None
    assert line is not None and 1 <= err.column <= len(line) + 1, (text, str(err))


def _round_trip(q: Query, text: str, schema) -> None:
    printed = str(q)  # `cepagg check`
    try:
        again = compile_query(printed, schema=schema)
    except QueryError as err:
        raise AssertionError(f"the printed form of {text!r} is refused:\n{printed}\n{err}") from None
    assert shape(again) == shape(q), (text, printed)
    assert str(again) == printed, (text, printed, str(again))


def check_text(text: str, counts: Counter | None = None) -> None:
    """The properties, for one text: without a schema, and (when accepted) with one."""
    counts = Counter() if counts is None else counts
    counts["texts"] += 1
    with time_bound(TIME_BOUND, text):
        try:
            q = compile_query(text)
        except QueryError as err:
            _positioned(err, text)
            counts["refused"] += 1
            return
        counts["accepted"] += 1
        _round_trip(q, text, None)
        try:  # attribute names and kinds known: more checks, same promise
            q = compile_query(text, schema=SCHEMA)
        except QueryError as err:
            _positioned(err, text)
            return
        counts["accepted with a schema"] += 1
        _round_trip(q, text, SCHEMA)


COUNTS: Counter = Counter()


@settings(max_examples=EXAMPLES, derandomize=True, database=None, deadline=None,
          suppress_health_check=list(HealthCheck), print_blob=False)
@given(st.data())
def _fuzz(data):
    base = data.draw(queries(), label="query")
    check_text(base, COUNTS)
    for text in data.draw(mutants(base), label="mutants"):
        check_text(text, COUNTS)


def test_any_text_is_a_query_or_a_positioned_error():
    COUNTS.clear()
    _fuzz()
    assert COUNTS["texts"] >= min(10_000, EXAMPLES * (MUTANTS + 1)), COUNTS
    assert COUNTS["accepted"] >= COUNTS["texts"] // 20, COUNTS  # the round trip is exercised


# ---------------------------------------------------------------------------------------------
# What the fuzzer found, each as its smallest case: valid queries that were refused, or whose
# printed form was refused or meant something else

FOUND = [
    "PATTERN OR(A) GROUP BY A.x RETURN COUNT(*)",  # A was taken as optional, as in OR(A, B)
    "PATTERN OR(A)",
    "PATTERN SEQ(`odd type`)",  # RETURN printed the variable without backticks
    "PATTERN SEQ(`odd type`, B) WHERE `odd type`.x > 1 RETURN SUM(`odd type`.x)",
    "PATTERN b+ RETURN count(b)",  # the column `count(b)` was printed as an alias
    "PATTERN SEQ(A a, A b) RETURN COUNT(A) AS n",  # printed as COUNT(a, b)
    "PATTERN SEQ(A a) WHERE a.x > - -1",  # printed as --1, a comment
    "PATTERN SEQ(A v1, NOT v1, A v3)",  # the untyped v1 printed with its scope, v1@2
    "PATTERN A v1 WHERE [v1.x] GROUP BY v1.x RETURN COUNT(*)",  # [v1.x] was dropped
    "PATTERN `99`",  # type names that are not names, or read as keywords, printed bare
    "PATTERN SEQ(`Not`, `SEQ`) WHERE `Not`.x > 1",
    "PATTERN SEQ(A, `Count`) RETURN `Count`",
    "PATTERN SEQ(A, `First`) WHERE `First`.x > 1",
    "PATTERN SEQ(A a, `odd type`) GROUP BY a.x, `odd type`.x RETURN COUNT(*)",  # column `odd type_x`
    "PATTERN SEQ(A, NOT A A, C)",  # the negated alias A was merged into the positive A
    "PATTERN SEQ(A, !SEQ(B, A A), C)",
    "PATTERN SEQ(A v1, NOT A A, A v2)",  # printed as NOT A, a variable of another name
]


@pytest.mark.parametrize("text", FOUND)
def test_found_case(text):
    compile_query(text)  # each is a valid query
    check_text(text)


#: attributes whose names are no plain name, in backticks wherever an attribute may stand
ODD_ATTRIBUTES = [
    "PATTERN SEQ(A a, B b) WHERE a.`trip id` = b.`trip id` AND b.`price ($)` > 1",
    "PATTERN SEQ(A a, B b) WHERE [`trip id`] GROUP BY `trip id` RETURN `trip id`, SUM(b.`price ($)`) AS s",
    "PATTERN SEQ(A a, (B b)+) WHERE b.`x y` < NEXT(b).`x y` AND a.`x y` < FIRST(b.`x y`) GROUP BY a.`g h`",
    "PATTERN SEQ(A a, B b) WHERE `x y` > 1 RETURN MAX(a.`x y`)",
]


@pytest.mark.parametrize("text", ODD_ATTRIBUTES)
def test_attributes_in_backticks(text):
    """An attribute such as `trip id` (a CSV column with a space) could not be written at all:
    "Unexpected '`trip id`'; expected a name". Now it reads, and prints back in backticks."""
    q = compile_query(text)
    check_text(text)
    assert "`" in str(q)
