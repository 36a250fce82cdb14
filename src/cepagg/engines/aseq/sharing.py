"""Multi-query sharing (placeholder, extended below)."""

from __future__ import annotations

from dataclasses import dataclass, field

from .counters import Unit, build_unit, unit_key
from .plan import SeqPlan
from .runtime import UnitRun


@dataclass
class SharingPlan:
    units: list[Unit] = field(default_factory=list)

    def runners(self, partial=False, start_range=None):
        return [UnitRun(u, partial, start_range) for u in self.units]

    def explain(self, queries) -> str:
        lines = []
        for k, u in enumerate(self.units):
            lines.append(f"unit {k}: " + ", ".join(f"q{o.index}" for o in u.outputs))
            lines += ["  " + l for l in u.describe()]
        return "\n".join(lines)


def plan_workload(plans: list[SeqPlan], share=True, stats=None, chops=None) -> SharingPlan:
    groups: dict = {}
    for i, p in enumerate(plans):
        key = unit_key(p) if share else ("alone", i)
        groups.setdefault(key, []).append(i)
    units = [build_unit([plans[i] for i in idx], idx) for idx in groups.values()]
    return SharingPlan(units)
