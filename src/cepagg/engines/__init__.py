"""Engines: the reference evaluator and the incremental engines, behind one protocol."""

from __future__ import annotations

from .base import Engine
from .greta import Greta
from .reference import Reference
from .twostep import TwoStep

ENGINES: dict[str, type[Engine]] = {"reference": Reference, "greta": Greta, "twostep": TwoStep}

__all__ = ["Engine", "ENGINES", "Reference", "Greta", "TwoStep"]
