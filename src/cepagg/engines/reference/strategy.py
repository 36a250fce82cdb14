"""Selection strategies other than skip-till-any-match, as filters on matches.

Both are defined on adjacent events of a match (consecutive in time), using the positions of
the pattern (its atoms) and which position may follow which (Glushkov's follow sets):

* contiguous: the later event is the very next event of the partition's stream;
* skip-till-next-match: no event strictly between them could have followed the earlier one,
  i.e. none matches a position that may follow the earlier event's position, passes that
  position's local conditions and, for two events of one Kleene variable, its NEXT conditions
  and equivalence attributes.
"""

from __future__ import annotations

from ...events import Event
from ...lang import ast
from ...lang.expr import holds
from ...lang.model import Atom, KleeneP, OrP, PNode, Query, SeqP, WindowP, is_positive_item
from .matches import M, Matcher, atoms_of


def _glushkov(node: PNode, follow: dict[int, set[int]]) -> tuple[set[int], set[int]]:
    """(first, last) atom ids of ``node``; fills ``follow``."""
    if isinstance(node, Atom):
        follow.setdefault(node.id, set())
        return {node.id}, {node.id}
    if isinstance(node, SeqP):
        items = [i for i in node.items if is_positive_item(i)]
        fl = [_glushkov(i, follow) for i in items]
        for (_, last), (first, _) in zip(fl, fl[1:]):
            for x in last:
                follow[x] |= first
        return fl[0][0], fl[-1][1]
    if isinstance(node, KleeneP):
        first, last = _glushkov(node.body, follow)
        for x in last:
            follow[x] |= first
        return first, last
    if isinstance(node, OrP):
        firsts: set[int] = set()
        lasts: set[int] = set()
        for a in node.alts:
            f, l = _glushkov(a, follow)
            firsts |= f
            lasts |= l
        return firsts, lasts
    if isinstance(node, WindowP):
        return _glushkov(node.body, follow)
    raise AssertionError(f"no order defined for {type(node).__name__}")


class Adjacency:
    def __init__(self, query: Query):
        self.q = query
        self.follow: dict[int, set[int]] = {}
        _glushkov(query.pattern, self.follow)
        self.atoms = {n.id: n for n in query.pattern.walk() if isinstance(n, Atom)}
        self.edge = {}
        for c in query.conditions:
            if c.kind == "edge":
                self.edge.setdefault(c.next_var, []).append(c)
        self.equiv = {}
        for v, a in query.equivalences:
            self.equiv.setdefault(v, []).append(a)

    def allowed(self, mt: Matcher, m: M) -> bool:
        pairs = atoms_of(m)
        for (x, p), (_, e) in zip(pairs, pairs[1:]):
            if self.q.strategy == "contiguous":
                if mt.position[e.id] != mt.position[p.id] + 1:
                    return False
            elif self._skipped_candidate(mt, x, p, e):
                return False
        return True

    def _skipped_candidate(self, mt: Matcher, x: int, p: Event, e: Event) -> bool:
        var_x = self.atoms[x].var
        for y in self.follow[x]:
            atom = self.atoms[y]
            candidates, ts = mt._candidates[atom.var]
            for c in candidates:
                if not p.ts < c.ts < e.ts:
                    continue
                if atom.var == var_x and not self._same_run_ok(var_x, p, c):
                    continue
                return True
        return False

    def _same_run_ok(self, var: str, p: Event, c: Event) -> bool:
        for cond in self.edge.get(var, ()):
            def lookup(node, p=p, c=c):
                return (c if isinstance(node, ast.Ref) else p).get(node.name)
            if not holds(cond.expr, lookup):
                return False
        return all(p.get(a) == c.get(a) for a in self.equiv.get(var, ()))
