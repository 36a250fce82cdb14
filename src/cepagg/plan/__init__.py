"""Planning: which engine runs a query, how its evaluation splits, and why."""

from .planner import Plan, WorkloadPlan, plan, plan_workload, shared_evaluator, workload_evaluator
from .split import Split, bucket_keys, split_of

__all__ = ["Plan", "Split", "WorkloadPlan", "bucket_keys", "plan", "plan_workload", "shared_evaluator", "split_of",
           "workload_evaluator"]
