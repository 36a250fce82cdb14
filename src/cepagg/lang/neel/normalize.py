"""Rewrite a pattern to NEEL's normal form, recording each step.

:data:`RULES` is the ordered list of rule modules. :func:`normalize` repeatedly takes the
outermost node where some rule applies (rules tried in list order at each node) and rewrites
it, until no rule applies; it asserts that every step lowers :func:`.measure.measure`, which
proves termination. If the result is not in normal form (:mod:`.normal_form`), it raises
:class:`NotNormalisable` with the reason: the refusal of a rule whose condition failed under
cepagg's semantics (docs/semantics.md), or else the part that no rule rewrites (an AND inside a
SEQ, a Kleene over a sub-pattern, a NOT inside a negated SEQ, ...), or the normal form would
be too large (more than :data:`MAX_DISJUNCTS` disjuncts or :data:`MAX_NODES` nodes: distributing
nested ORs and unrolled negations multiplies the pattern). Such a query keeps its nested form;
nothing is rewritten that would change its meaning.

>>> from .rules.base import pattern
>>> normal, steps = normalize(pattern("SEQ(A a, OR(B b, SEQ(C c, E e)), D d)"))
>>> pattern_text(normal)
'OR(SEQ(A a, B b, D d), SEQ(A a, C c, E e, D d))'
>>> [s.rule for s in steps]
['DR1', 'FR1']
>>> normalize(pattern("SEQ(A a, AND(B b, C c), D d)"))  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
cepagg.lang.neel.normalize.NotNormalisable: AND(B b, C c) is nested inside a SEQ: ...
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from .. import ast
from ..analyze import analyze
from ..model import Query
from .measure import TooLarge, measure
from .normal_form import why_not_normal
from .rules import (
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
    unwrap,
)
from .rules.base import Applied, Blocked, Context, replace_node, rewritable_nodes
from .terms import declared_vars
from .text import pattern_text

RULES = (
    unwrap, flatten_seq, flatten_and, flatten_or, expose_witness, split_exists_and,
    distribute_or, distribute_boolean_or, distribute_exists_or,
    negate_or, negate_and, unroll_negated_seq,
)

MAX_STEPS = 10_000
MAX_DISJUNCTS = 256
MAX_NODES = 2_000


class NotNormalisable(Exception):
    """The pattern has no normal form under cepagg's semantics; ``str()`` says why."""


@dataclass(frozen=True)
class Step:
    """One rewrite: the rule (as the chapter names it), the pattern before and after."""

    rule: str
    before: str
    after: str


def normalize(pattern: ast.Pattern, *, top_wide: bool = True) -> tuple[ast.Pattern, list[Step]]:
    """``(normal form, steps)``; raises :class:`NotNormalisable`.

    ``top_wide``: whether the query's top-level scope can be longer than its window -- true
    for ``WITHIN w`` alone and ``WITHIN n EVENTS``, false under SLIDE or EMIT ON CHANGE and
    without a window (see :class:`.rules.base.Context`; :func:`top_scope_is_wide` computes it
    from a bound query). True is always safe: some rules are then refused in more places.
    """
    taken = declared_vars(pattern)
    try:
        current_measure = measure(pattern)
    except TooLarge as e:
        raise NotNormalisable(str(e)) from None
    steps: list[Step] = []
    while True:
        applied = _first_rewrite(pattern, Context(pattern, taken, top_wide))
        if applied is None:
            break
        node, out = applied
        new = replace_node(pattern, node, out.node)
        try:
            new_measure = measure(new)
        except TooLarge as e:
            raise NotNormalisable(str(e)) from None
        assert new_measure < current_measure, f"{out.rule} did not lower the measure: {pattern_text(new)}"
        steps.append(Step(out.rule, pattern_text(pattern), pattern_text(new)))
        pattern, current_measure = new, new_measure
        if len(steps) > MAX_STEPS or _disjuncts(pattern) > MAX_DISJUNCTS:
            raise NotNormalisable(f"the normal form has more than {MAX_DISJUNCTS} disjuncts")
        if sum(1 for _ in pattern.walk()) > MAX_NODES:
            raise NotNormalisable(f"the rewritten pattern grows beyond {MAX_NODES} nodes (distributing "
                                  "nested OR and negation multiplies it)")
    reason = why_not_normal(pattern)
    if reason is not None:
        blocked = _first_blocked(pattern, Context(pattern, set(taken), top_wide))
        raise NotNormalisable(f"{blocked.rule}: {blocked.reason}" if blocked else reason)
    return pattern, steps


def _first_rewrite(root: ast.Pattern, ctx: Context):
    for node in rewritable_nodes(root):
        for rule in RULES:
            out = rule.rewrite(node, ctx)
            if isinstance(out, Applied):
                return node, out
    return None


def normal_query(query: Query) -> tuple[Query, list[Step]]:
    """A bound query in normal form with the same meaning as ``query`` (same clauses, the
    pattern rewritten), and the steps; raises :class:`NotNormalisable`.

    >>> from cepagg.lang import compile_query
    >>> q, steps = normal_query(compile_query(
    ...     "RETURN COUNT(*) PATTERN SEQ(A a, OR(B b, C c), D d) WHERE [key] GROUP BY key WITHIN 10 s"))
    >>> print(q)
    PATTERN OR(SEQ(A a, B b, D d), SEQ(A a, C c, D d))
    GROUP BY key
    WITHIN 10 seconds
    RETURN key, COUNT(*)
    >>> [(s.rule, s.after) for s in steps]
    [('DR1', 'OR(SEQ(A a, B b, D d), SEQ(A a, C c, D d))')]
    """
    normal, steps = normalize(query.syntax.pattern, top_wide=top_scope_is_wide(query))
    syntax = replace(query.syntax, pattern=normal)
    return analyze(syntax, f"PATTERN {pattern_text(normal)}", time_unit=query.time_unit), steps


def top_scope_is_wide(query: Query) -> bool:
    """For a bound :class:`~cepagg.lang.model.Query`: whether its top-level scope can be longer
    than its window (WITHIN alone, or a tuple-count window)."""
    if query.within_events is not None:
        return True
    return query.within is not None and query.slide is None and not query.emit_on_change


def _first_blocked(root: ast.Pattern, ctx: Context) -> Blocked | None:
    for node in rewritable_nodes(root):
        for rule in RULES:
            out = rule.rewrite(node, ctx)
            if isinstance(out, Blocked):
                return out
    return None


def _disjuncts(p: ast.Pattern) -> int:
    return len(p.items) if isinstance(p, ast.OrPattern) else 1
