"""Planning: which engine runs a query, and why."""

from .planner import Plan, plan

__all__ = ["Plan", "plan"]
