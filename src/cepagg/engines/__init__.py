"""Engines: the reference evaluator and the incremental engines, behind one protocol."""

from __future__ import annotations

from .base import Engine
from .greta import Greta
from .reference import Reference

ENGINES: dict[str, type[Engine]] = {"reference": Reference, "greta": Greta}

__all__ = ["Engine", "ENGINES", "Reference", "Greta"]
