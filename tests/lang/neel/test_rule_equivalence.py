"""Every NEEL rewrite rule keeps the meaning of the queries it rewrites: the reference
evaluator returns the same matches before and after one application of the rule, on random
histories of 6-12 events (ties on purpose, attribute ``x`` for conditions).

Each rule is checked on the patterns below, ``CASES`` histories each (``CEPAGG_NIGHTLY=1``
raises it so that every rule sees at least 10^4 histories). A rule's refusals are checked too:
where a rule is blocked, applying it anyway would change the answer on a named history.
"""

from __future__ import annotations

import pytest

from cepagg.engines import ENGINES
from cepagg.events import EventBatch
from cepagg.lang import compile_query
from cepagg.lang.neel.rules import (
    distribute_boolean_or,
    distribute_exists_or,
    distribute_or,
    expose_witness,
    flatten_and,
    flatten_or,
    flatten_seq,
    negate_and,
    negate_or,
    split_exists_and,
    unroll_negated_seq,
    unroll_negated_seq_from_first,
    unwrap,
)
from cepagg.lang.neel.rules.base import Applied, Blocked, Context, pattern, replace_node, rewritable_nodes
from cepagg.lang.neel.terms import declared_vars
from cepagg.lang.neel.text import pattern_text
from generators import cases, random_stream, seeded

# (rule module, the rule name it must report, pattern) -- each pattern is rewritten once.
RULE_CASES = [
    (unwrap, "UNWRAP", "SEQ(A a, NOT SEQ(B b), C c)"),
    (unwrap, "UNWRAP", "OR(SEQ(A a, B b, a.x < b.x))"),
    (flatten_seq, "FR1", "SEQ(A a, SEQ(B b, C c, b.x < c.x), D d)"),
    (flatten_seq, "FR1", "SEQ(SEQ(A a, B b), NOT E, C c)"),
    (flatten_seq, "FR2", "SEQ(A a, SEQ(B b, C c, NOT E), D d)"),
    (flatten_seq, "FR2", "SEQ(A a, NOT C, SEQ(NOT E, B b), NOT C, D d)"),
    (flatten_seq, "FR2", "SEQ(SEQ(NOT E, A a), B b, SEQ(C c, NOT D))"),
    (flatten_and, "FR3", "AND(AND(A a, B b), C c)"),
    (flatten_and, "FR3", "AND(AND(A a, B b), A c)"),
    (flatten_and, "FR4", "AND(AND(A a, NOT E), C c)"),
    (flatten_and, "FR4", "SEQ(D d, AND(AND(A a, NOT E), B b))"),
    (flatten_or, "FR5", "OR(OR(A a, B b), SEQ(C c, D d))"),
    (flatten_or, "FR5", "SEQ(A a, NOT B ∨ (NOT C ∨ EXISTS E), D d)"),
    (expose_witness, "FR6", "SEQ(A a, EXISTS SEQ(EXISTS SEQ(NOT E, B b, NOT B), C c, NOT C), D d)"),
    (expose_witness, "FR6", "SEQ(A a, EXISTS SEQ(B b, EXISTS C, E e), D d)"),
    (expose_witness, "FR7", "SEQ(A a, EXISTS AND(B b, EXISTS C), D d)"),
    (expose_witness, "NPDR6", "SEQ(A a, NOT SEQ(B b, EXISTS E, C c), D d)"),
    (expose_witness, "NPDR6", "SEQ(A a, NOT SEQ(EXISTS SEQ(E e, B b), C c), D d)"),
    (expose_witness, "NPDR7", "SEQ(A a, NOT AND(B b, EXISTS E), D d)"),
    (split_exists_and, "FR7", "SEQ(A a, EXISTS AND(B b, (C c, c.x > 1)), D d)"),
    (split_exists_and, "FR7", "AND(A a, EXISTS AND(B, C))"),
    (distribute_or, "DR1", "SEQ(A a, OR(B b, SEQ(C c, NOT E)), D d)"),
    (distribute_or, "DR1", "SEQ(A a, NOT E, OR(B b, C c), D d, a.x < d.x)"),
    (distribute_or, "DR1", "SEQ(OR(A a, B b), C c)"),
    (distribute_or, "DR1", "SEQ(a, OR(B b+, C c), d)"),
    (distribute_or, "DR2", "AND(A a, OR(B b, C c))"),
    (distribute_or, "DR2", "AND(A a, OR(A b, SEQ(B c, C d)), NOT E)"),
    (distribute_boolean_or, "DR3", "SEQ(A a, NOT B ∨ EXISTS SEQ(C c, NOT E), D d)"),
    (distribute_boolean_or, "DR3", "SEQ(A a, NOT B, NOT C ∨ EXISTS E, D d)"),
    (distribute_boolean_or, "DR4", "AND(A a, NOT B ∨ NOT C)"),
    (distribute_boolean_or, "DR4", "AND(A a, B b, EXISTS C ∨ NOT E)"),
    (distribute_exists_or, "DR5", "SEQ(A a, EXISTS OR(B b, SEQ(C c, E e)), D d)"),
    (distribute_exists_or, "DR6", "AND(A a, EXISTS OR(B, C))"),
    (negate_or, "NPDR5", "SEQ(A a, NOT OR(B b, SEQ(C c, E e)), D d)"),
    (negate_or, "NPDR5", "AND(A a, NOT OR(B, C))"),
    (negate_or, "NPDR5", "SEQ(NOT OR(B, C), A a)"),
    (negate_and, "NPDR3", "SEQ(A a, NOT AND(B b, C c), D d)"),
    (negate_and, "NPDR3", "AND(A a, NOT AND(B, C))"),
    (negate_and, "NPDR3", "SEQ(A a, D d, NOT AND(B, C))"),
    (negate_and, "NPDR4", "SEQ(A a, NOT AND(B b, NOT C, EXISTS E), D d)"),
    (unroll_negated_seq, "NPDR1", "SEQ(A a, NOT SEQ(B b, C c), D d)"),
    (unroll_negated_seq, "NPDR1", "SEQ(A a, NOT SEQ(B b, C c, c.x > 2, b.x = 1), D d)"),
    (unroll_negated_seq, "NPDR1", "SEQ(NOT SEQ(B b, C c), D d)"),
    (unroll_negated_seq, "NPDR1", "SEQ(A a, D d, NOT SEQ(B b, C c))"),
    (unroll_negated_seq, "NPDR1", "AND(A a, NOT SEQ(B b, C c))"),
    (unroll_negated_seq, "NPDR1", "SEQ(A a, NOT SEQ(EXISTS E, B b, C c), D d)"),
    (unroll_negated_seq, "NPDR1", "SEQ(A a, NOT SEQ(B b, (C c, c.x > a.x)), D d)"),
    (unroll_negated_seq, "NPDR1", "SEQ(A a, NOT SEQ(B b, C c, B e), D d)"),
    (unroll_negated_seq_from_first, "NPDR2", "SEQ(A a, NOT SEQ(B b, C c, E e), D d)"),
    (unroll_negated_seq_from_first, "NPDR2", "SEQ(A a, NOT SEQ((B b, b.x > 2), C c, c.x = 1), D d)"),
    (unroll_negated_seq_from_first, "NPDR2", "SEQ(NOT SEQ(B b, SEQ(C c, E), C), D d)"),
    (unroll_negated_seq_from_first, "NPDR2", "AND(A a, NOT SEQ(B b, C c))"),
    (unroll_negated_seq_from_first, "NPDR2", "SEQ(A a, NOT SEQ(B b, C c, EXISTS E, B e), D d)"),
]

# (clauses, whether the top-level scope is wider than the window)
WINDOWS = [("WITHIN 6", True), ("WITHIN 4 SLIDE 2", False),
           ("RETURN COUNT(*) WITHIN 5 EMIT ON CHANGE", False)]


def _cases_per_rule() -> dict[str, int]:
    """Histories per (pattern, window): 30 in the suite; nightly, enough for 10^4 per rule."""
    combos: dict[str, int] = {}
    for _, rule, _ in RULE_CASES:
        combos[rule] = combos.get(rule, 0) + len(WINDOWS)
    # 12,000 / k: a few (pattern, window) pairs are refused under WITHIN alone and do not count
    return {rule: cases(30, -(-12_000 // k)) for rule, k in combos.items()}


CASES = _cases_per_rule()


def rewrite_once(module, text: str, top_wide: bool = False):
    """``(rule name, text after)`` of the rule's first application, or the Blocked outcome."""
    root = pattern(text)
    ctx = Context(root, declared_vars(root), top_wide)
    for node in rewritable_nodes(root):
        out = module.rewrite(node, ctx)
        if isinstance(out, Applied):
            return out.rule, pattern_text(replace_node(root, node, out.node))
        if isinstance(out, Blocked):
            return out
    raise AssertionError(f"{module.__name__} does not apply to {text}")


def answers(text: str, window: str, rows: list[dict]):
    q = compile_query(f"PATTERN {text} {window}")
    return ENGINES["reference"](q).run(EventBatch.from_rows(rows))


def same_answers(before: str, after: str, window: str, n: int, name: str, differences) -> None:
    q1 = compile_query(f"PATTERN {before} {window}")
    q2 = compile_query(f"PATTERN {after} {window}")
    e1, e2 = ENGINES["reference"](q1), ENGINES["reference"](q2)
    rng = seeded(name)
    for _ in range(n):
        rows = random_stream(rng, "ABCDE", n=rng.randint(6, 12), max_gap=2)
        batch = EventBatch.from_rows(rows)
        problems = differences(e1.run(batch), e2.run(batch))
        assert not problems, "\n".join([f"before: {before}", f"after: {after}", window, f"stream: {rows}",
                                        *problems])


@pytest.mark.parametrize("module,rule,text", RULE_CASES, ids=[f"{r}:{t}" for _, r, t in RULE_CASES])
@pytest.mark.parametrize("window,top_wide", WINDOWS, ids=[w for w, _ in WINDOWS])
def test_rule_keeps_the_answer(module, rule, text, window, top_wide, same_answer):
    out = rewrite_once(module, text, top_wide)
    if isinstance(out, Blocked):  # only where the top-level scope is wide; see test_refusals
        assert top_wide and "longer than the window" in out.reason, out
        return
    name, after = out
    assert name == rule
    same_answers(text, after, window, CASES[rule], f"{rule}|{text}|{window}", same_answer)


# (rule, pattern, clauses, the rewrite the rule refuses there, a history where it would differ)
REFUSALS = [
    (negate_and, "AND(A a, NOT AND(B, C))", "WITHIN 6", "AND(A a, NOT B ∨ NOT C)", "c0 a5 b9"),
    (unroll_negated_seq, "AND(A a, NOT SEQ(B b, C c))", "WITHIN 6",
     "AND(A a, NOT C c ∨ EXISTS SEQ(NOT B b, C c, NOT C c2))", "b0 a5 c9"),
    (split_exists_and, "AND(A a, EXISTS AND(B, C))", "WITHIN 6", "AND(A a, EXISTS B, EXISTS C)", "b0 a5 c9"),
    # the chapter's Example 21 (Q4): a NOT inside the negated SEQ
    (unroll_negated_seq, "SEQ(R r, NOT SEQ(S s, NOT D, C c), O o)", "WITHIN 10",
     "SEQ(R r, NOT C ∨ EXISTS SEQ(NOT SEQ(S s, NOT D), C c, NOT C), O o)", "r0 s1 c2 s3 d4 c5 o6"),
    (negate_and, "SEQ(A a, NOT AND(B b, B c), D d)", "WITHIN 10", "SEQ(A a, NOT B b ∨ NOT B c, D d)",
     "a0 b1 d2"),
    (expose_witness, "SEQ(X x, NOT SEQ(A, EXISTS B, NOT N, C), Y y)", "WITHIN 10",
     "SEQ(X x, NOT SEQ(A, B, NOT N, C), Y y)", "x0 a1 n2 b3 c4 y5"),
    (expose_witness, "SEQ(X x, NOT AND(A a, EXISTS A), Y y)", "WITHIN 10",
     "SEQ(X x, NOT AND(A a, A), Y y)", "x0 a1 y5"),
]


def _history(text: str) -> list[dict]:
    return [{"type": tok[0].upper(), "ts": int(tok[1:]), "x": 0} for tok in text.split()]


@pytest.mark.parametrize("module,before,window,forced,history", REFUSALS, ids=[r[1] for r in REFUSALS])
def test_refusals(module, before, window, forced, history, same_answer):
    """The rule refuses, and rightly: the rewrite it refuses changes the answer."""
    out = rewrite_once(module, before, top_wide=window == "WITHIN 6" and "SLIDE" not in window)
    assert isinstance(out, Blocked), out
    rows = _history(history)
    assert same_answer(answers(before, window, rows), answers(forced, window, rows))


def test_every_rule_is_checked():
    modules = {m for m, _, _ in RULE_CASES}
    from cepagg.lang.neel import RULES
    assert modules == set(RULES) | {unroll_negated_seq_from_first}
    names = {r for _, r, _ in RULE_CASES}
    assert names >= {"FR1", "FR2", "FR3", "FR4", "FR5", "FR6", "FR7",
                     "DR1", "DR2", "DR3", "DR4", "DR5", "DR6",
                     "NPDR1", "NPDR2", "NPDR3", "NPDR4", "NPDR5", "NPDR6", "NPDR7"}
