"""Collection settings for the whole suite: ``testpaths`` holds ``tests`` and ``src``, so the
docstring examples of every module under src/ run with the tests (``--doctest-modules``)."""

collect_ignore = []
try:
    import pyspark  # noqa: F401
except ImportError:
    # cepagg.spark is the Spark driver: its modules need pyspark (the "spark" extra), which a
    # core install (pip install cepagg) does not have.
    collect_ignore.append("src/cepagg/spark")
