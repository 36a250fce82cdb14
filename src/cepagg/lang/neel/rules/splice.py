"""What the flattening rules FR1-FR5 share: an operator inside one of its own kind is spliced
into it, its items in its place and its conditions joining the outer's."""

from __future__ import annotations

from typing import Callable, Optional

from ... import ast
from .base import Applied, Outcome


def splice_nested(node: ast.Pattern, kind: type, rule_for: Callable[[ast.Pattern], Optional[str]]) -> Outcome:
    """``node`` (a ``kind``) with its first ``kind`` item spliced in, reported under the rule
    ``rule_for(item)`` names; an item for which it names none is left in place."""
    if not isinstance(node, kind):
        return None
    for i, item in enumerate(node.items):
        if isinstance(item, kind):
            rule = rule_for(item)
            if rule is not None:
                items = node.items[:i] + item.items + node.items[i + 1:]
                return Applied(rule, kind(items, node.quals + item.quals))
    return None
