"""Pattern split for negation (Algorithm 3): one positive sub-pattern and one per NOT.

GRETA evaluates ``SEQ(Pi, NOT N, Pj)`` with two graphs: the positive pattern with the NOT
removed, and the negative sub-pattern ``N``. A finished match of ``N`` invalidates the events
of the *previous* type (``end(Pi)``) for the events of the *following* type
(``start(Pj)``) that come after it (Definition 5). Nested negation recurses: in
``(SEQ(A+, NOT SEQ(C, NOT E, D), B))+`` the positive pattern is ``(SEQ(A+, B))+``, the
negative ones ``SEQ(C, D)`` (previous A, following B) and ``E`` (previous C, following D,
inside ``SEQ(C, D)``).

Here "previous/following" is generalised to the transitions of the parent template that
cross the NOT (:mod:`.template`), plus the window edges for leading and trailing negation.

>>> from cepagg.lang import compile_query
>>> q = compile_query("RETURN COUNT(*) PATTERN (SEQ(A+, NOT SEQ(C, NOT E, D), B))+")
>>> [(s.name, s.previous, s.following) for s in split(q.pattern)]
[('(SEQ(A+, B))+', None, None), ('SEQ(C, D)', 'A', 'B'), ('E', 'C', 'D')]
"""

from __future__ import annotations

from dataclasses import dataclass

from ...lang.model import Atom, KleeneP, NotP, PNode, SeqP
from .template import Template, build


@dataclass(frozen=True)
class SubPattern:
    """One graph of the split: the positive pattern (``not_id`` None) or a NOT's body.

    Attributes:
        not_id: the NotP node this sub-pattern is the body of (None: the positive pattern).
        parent: the not_id of the sub-pattern whose transitions it constrains.
        node: the pattern node (NOT items inside it are other sub-patterns).
        template: its GRETA template.
        previous / following: type names around it in the parent ("<window>" at an edge).
    """

    not_id: int | None
    parent: int | None
    node: PNode
    template: Template
    previous: str | None
    following: str | None
    name: str


def _text(node: PNode) -> str:
    if isinstance(node, Atom):
        return node.type or node.var
    if isinstance(node, KleeneP):
        body = _text(node.body)
        return f"{body}+" if isinstance(node.body, Atom) else f"({body})+"
    if isinstance(node, SeqP):
        return "SEQ(" + ", ".join(_text(i) for i in node.items if not isinstance(i, NotP)) + ")"
    return type(node).__name__


def _around(parent: Template, not_id: int) -> tuple[str | None, str | None]:
    prev: set[str] = set()
    follow: set[str] = set()
    for t in parent.transitions:
        if any(not_id in d.crossed for d in t.derivations):
            prev.add(parent.states[t.src].type)
            follow.add(parent.states[t.dst].type)
    if any(not_id in n for n in parent.start.values()):
        prev.add("<window start>")
        follow.update(parent.states[s].type for s, n in parent.start.items() if not_id in n)
    if any(not_id in n for n in parent.end.values()):
        follow.add("<window end>")
        prev.update(parent.states[s].type for s, n in parent.end.items() if not_id in n)
    return ("|".join(sorted(prev)) or None, "|".join(sorted(follow)) or None)


def split(pattern: PNode) -> list[SubPattern]:
    """Algorithm 3: the positive sub-pattern first, then every NOT body, parents first."""
    top = build(pattern)
    out = [SubPattern(None, None, pattern, top, None, None, _text(pattern))]

    def visit(node: PNode, owner: int | None, owner_template: Template) -> None:
        for child in node.children():
            if isinstance(child, NotP):
                t = build(child.body)
                prev, follow = _around(owner_template, child.id)
                out.append(SubPattern(child.id, owner, child.body, t, prev, follow, _text(child.body)))
                visit(child.body, child.id, t)
            else:
                visit(child, owner, owner_template)

    visit(pattern, None, top)
    return out


# Reference: GRETA (PVLDB 2017), Section 5.1 "Static GRETA Template for
# Negation", Algorithm 3 (pattern split), Definitions 4 (dependent graph) and 5 (invalid event).
