"""What a rewrite rule returns, and the helper its docstring examples use.

A rule looks at one node of a pattern and returns :class:`Applied` (the node to put in its
place, and the rule's name as the chapter numbers it), :class:`Blocked` (the node has the rule's
shape but a condition of the rule fails under cepagg's semantics: the reason says which), or
None (not the rule's shape).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Union

from ... import ast
from ...parser import parse
from ..terms import is_boolean
from ..text import pattern_text


@dataclass(frozen=True)
class Applied:
    rule: str
    node: ast.Pattern


@dataclass(frozen=True)
class Blocked:
    rule: str
    reason: str


Outcome = Union[Applied, Blocked, None]


class Context:
    """What a rule may need beyond the node: the variable names in use (to make fresh ones) and
    which nodes have a scope that can be longer than the query window.

    Why the scope matters: a NOT/EXISTS over a composite pattern only sees matches shorter than
    the window (docs/semantics.md §4), so splitting it into independent checks of its parts
    (NPDR1, NPDR3/4, FR7) is sound only where no two events of the scope can be a window or
    more apart. Every item of a SEQ is bounded on one side by an event of the match, so its
    scope is shorter than the window; the top-level scope under ``WITHIN w`` alone is
    ``(last - w, first + w)``, up to twice the window, and an AND (or a SEQ's only positive
    item) shares its parent's scope. ``top_wide`` says whether the top-level scope is wide:
    true for ``WITHIN w`` alone and ``WITHIN n EVENTS``, false under SLIDE, EMIT ON CHANGE
    (whose scopes are one window) and without a window (no span limit).
    """

    def __init__(self, root: ast.Pattern, taken: set, top_wide: bool):
        self.taken = taken
        self._wide: set[int] = set()
        self._mark(root, top_wide)

    def is_wide(self, node: ast.Pattern) -> bool:
        return id(node) in self._wide

    def _mark(self, node: ast.Pattern, wide: bool) -> None:
        if wide:
            self._wide.add(id(node))
        if isinstance(node, ast.Seq):
            n_pos = sum(1 for x in node.items if not is_boolean(x))
            for x in node.items:
                self._mark(x, wide and not is_boolean(x) and n_pos == 1)
        elif isinstance(node, (ast.AndPattern, ast.OrPattern, ast.Not, ast.Exists)):
            for c in node.children():
                if isinstance(c, ast.Pattern):
                    self._mark(c, wide)


Rewrite = Callable[[ast.Pattern, Context], Outcome]


def too_wide(rule: str, node: ast.Pattern) -> Blocked:
    """The refusal of a rule that splits a check into parts where the scope is wide."""
    return Blocked(rule, f"the scope of {pattern_text(node)} can be longer than the window (top level "
                         "under WITHIN alone): its parts could be a window apart")


def pattern(text: str) -> ast.Pattern:
    """The syntax tree of a pattern written as in a query."""
    return parse(f"PATTERN {text}").pattern


def replace_node(root: ast.Pattern, old: ast.Pattern, new: ast.Pattern) -> ast.Pattern:
    """``root`` with the node ``old`` (by identity) replaced by ``new``."""
    if root is old:
        return new
    from dataclasses import fields, replace
    changes = {}
    for f in fields(root):
        v = getattr(root, f.name)
        if isinstance(v, ast.Pattern):
            nv = replace_node(v, old, new)
            if nv is not v:
                changes[f.name] = nv
        elif isinstance(v, tuple) and any(isinstance(x, ast.Pattern) for x in v):
            nt = tuple(replace_node(x, old, new) if isinstance(x, ast.Pattern) else x for x in v)
            if any(a is not b for a, b in zip(nt, v)):
                changes[f.name] = nt
    return replace(root, **changes) if changes else root


def rewritable_nodes(root: ast.Pattern):
    """Nodes a rule may rewrite, outermost first; nothing under a Kleene, a sub-window or a
    qualified primitive is rewritten (their meaning is not a match-set identity of the parts)."""
    yield root
    if isinstance(root, (ast.Kleene, ast.Windowed, ast.Unsupported, ast.Qualified, ast.EventPattern)):
        return
    for c in root.children():
        if isinstance(c, ast.Pattern):
            yield from rewritable_nodes(c)


def example(rewrite: Rewrite, text: str, top_wide: bool = False) -> str:
    """Apply ``rewrite`` once, at the outermost node where it applies; ``rule: after`` (or
    ``blocked by rule: reason``, or ``no match``). Used by the rules' docstring examples."""
    root = pattern(text)
    ctx = Context(root, {n.var or n.type for n in root.walk() if isinstance(n, ast.EventPattern)}, top_wide)
    blocked = None
    for node in rewritable_nodes(root):
        out = rewrite(node, ctx)
        if isinstance(out, Applied):
            return f"{out.rule}: {pattern_text(replace_node(root, node, out.node))}"
        if isinstance(out, Blocked) and blocked is None:
            blocked = f"blocked by {out.rule}: {out.reason}"
    return blocked or "no match"
