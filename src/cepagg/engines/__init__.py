"""Engines: the reference evaluator and the incremental engines, behind one protocol."""

from __future__ import annotations

from .aseq.engine import Aseq
from .base import Engine, Evaluator
from .greta import Greta
from .neel import Neel
from .neel_iterative import NeelIterative
from .nfa import Nfa
from .rcep import Rcep
from .reference import Reference
from .stack import Stack
from .tree import Tree
from .twostep import TwoStep

ENGINES: dict[str, type[Engine]] = {
    "reference": Reference, "aseq": Aseq, "greta": Greta, "neel": Neel, "rcep": Rcep, "tree": Tree,
    "twostep": TwoStep, "stack": Stack, "neel-iterative": NeelIterative, "nfa": Nfa,
}

__all__ = ["Engine", "ENGINES", "Evaluator", "Reference", "Aseq", "Greta", "Neel", "Rcep", "Tree", "TwoStep",
           "Stack", "NeelIterative", "Nfa"]
