"""Conditions ready to evaluate on a binding, their variable references resolved once.

The meaning is docs/semantics.md §5: a condition holds for every combination of the events it
mentions, ``NEXT(X)`` pairs consecutive events of X's run, ``FIRST``/``LAST`` are the ends of
the run, and a condition on a variable the match does not bind (inside an OR alternative) holds
vacuously. The reference evaluator builds a :class:`Check` at each call; a recomputing engine
(rcep) evaluates the same condition millions of times and builds it once. The expression itself
is evaluated by :func:`cepagg.lang.expr.holds` (a tree walk, never ``eval``).
"""

from __future__ import annotations

import itertools

from ...lang import ast
from ...lang.expr import holds
from ...lang.model import Condition


class Check:
    __slots__ = ("condition", "expr", "next_var", "plain", "ends")

    def __init__(self, c: Condition):
        self.condition = c
        self.expr = c.expr
        self.next_var = c.next_var
        refs = [n for n in c.expr.walk() if isinstance(n, (ast.Attr, ast.Ref))]
        self.plain = tuple(sorted({n.var for n in refs if isinstance(n, ast.Attr) and n.var is not None}
                                  - ({c.next_var} if c.next_var else set())))
        self.ends = tuple(sorted({(n.kind, n.var) for n in refs
                                  if isinstance(n, ast.Ref) and n.kind in ("FIRST", "LAST")}))

    def holds(self, env: dict) -> bool:
        """True when the condition holds for every combination of the bound events."""
        ends = {}
        for kind, var in self.ends:
            runs = env.get(var)
            if not runs:
                return True  # not bound in this match (inside an OR alternative): vacuous
            ends[(kind, var)] = runs[0][0] if kind == "FIRST" else runs[-1][-1]
        domains = [[e for run in env.get(v, ()) for e in run] for v in self.plain]
        nv = self.next_var
        if nv is not None:
            pairs = [(r[i], r[i + 1]) for r in env.get(nv, ()) for i in range(len(r) - 1)]
        else:
            pairs = [(None, None)]
        plain, expr = self.plain, self.expr
        for cur, nxt in pairs:
            for combo in itertools.product(*domains):
                chosen = dict(zip(plain, combo))

                def lookup(node, chosen=chosen, cur=cur, nxt=nxt):
                    if isinstance(node, ast.Ref):
                        e = nxt if node.kind == "NEXT" else ends[(node.kind, node.var)]
                    else:
                        e = cur if node.var == nv else chosen[node.var]
                    return e.get(node.name)

                if not holds(expr, lookup):
                    return False
        return True
