"""Planning: which engine runs a query, and why."""

from .planner import Plan, WorkloadPlan, plan, plan_workload

__all__ = ["Plan", "WorkloadPlan", "plan", "plan_workload"]
