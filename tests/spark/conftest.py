"""One SparkSession for the whole Spark suite (starting one costs ~10 s)."""

import pytest


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    from cepagg.spark.session import get_session

    s = get_session("local[2]", {"spark.sql.shuffle.partitions": "2",
                                 "spark.default.parallelism": "2",
                                 # many tiny jobs: a fast-starting JVM beats an optimising one
                                 "spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
                                 "spark.sql.warehouse.dir": str(tmp_path_factory.mktemp("wh"))})
    yield s
    s.stop()
