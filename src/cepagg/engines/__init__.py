"""Engines: the reference evaluator and the incremental engines, behind one protocol."""

from __future__ import annotations

from .base import Engine
from .reference import Reference

ENGINES: dict[str, type[Engine]] = {"reference": Reference}

from .aseq.engine import Aseq  # noqa: E402

ENGINES["aseq"] = Aseq

from .stack import Stack  # noqa: E402

ENGINES["stack"] = Stack

__all__ = ["Engine", "ENGINES", "Reference"]
