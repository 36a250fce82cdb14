"""nfa: a partial-match automaton (SASE++ / Flink CEP style), the baseline for rcep."""

from .engine import Nfa

__all__ = ["Nfa"]
