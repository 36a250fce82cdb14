"""What ``explain`` says of a nested pattern: NEEL's rewriting to normal form, step by step.

A pattern with AND, OR, or a negated or EXISTS sub-pattern is rewritten by the rules of
:mod:`cepagg.lang.neel` into a union of flat sequences; ``explain`` prints each rule applied
and the normal form, or why the pattern has none (such queries run on engines that evaluate
the nesting directly: ``neel-iterative`` and the reference, unless the ``neel`` engine splits
an AND inside a SEQ into its interleavings). A flat pattern prints nothing.
"""

from __future__ import annotations

from ..lang.model import Query
from ..lang.neel import NotNormalisable, normalize, top_scope_is_wide


def explain_lines(query: Query) -> list[str]:
    """Lines for ``explain``: the rewrite steps and the normal form of ``query``'s pattern.

    >>> from cepagg.lang import compile_query
    >>> q = compile_query("RETURN COUNT(*) PATTERN SEQ(A a, OR(B b, C c), D d) WITHIN 10")
    >>> print("\\n".join(explain_lines(q)))
    nested pattern: rewritten to NEEL's normal form in 1 step
      DR1: OR(SEQ(A a, B b, D d), SEQ(A a, C c, D d))
    normal form: OR(SEQ(A a, B b, D d), SEQ(A a, C c, D d))
    >>> explain_lines(compile_query("RETURN COUNT(*) PATTERN SEQ(A a, B b) WITHIN 10"))
    []
    """
    try:  # the syntax tree only: a normal form need not be a query of its own (a negated
        # variable with conditions appears once per disjunct, which one query cannot declare)
        normal, steps = normalize(query.syntax.pattern, top_wide=top_scope_is_wide(query))
    except NotNormalisable as e:
        return [f"nested pattern: no NEEL normal form ({e})"]
    if not steps:
        return []
    lines = [f"nested pattern: rewritten to NEEL's normal form in {len(steps)} "
             f"step{'s' if len(steps) != 1 else ''}"]
    lines += [f"  {s.rule}: {s.after}" for s in steps]
    lines.append(f"normal form: {steps[-1].after}")
    return lines
