"""cepagg on Spark: batch (``run``) and Structured Streaming (``stream``).

This package is the only place that imports pyspark; the engines know nothing about Spark
and the adapter defines no pattern semantics of its own.
"""

from .batch import prepare_events, run
from .session import get_session
from .streaming import start, start_workload, stream
from .workload import run_workload

__all__ = ["run", "run_workload", "stream", "start", "start_workload", "prepare_events", "get_session"]
