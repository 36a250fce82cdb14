"""A streaming job run as its own process by the recovery test (so it can be killed for real).

usage: stream_job.py EVENTS OUT CHECKPOINT QUERY EVENTS_PER_BATCH
"""

import sys

from cepagg.spark.session import get_session
from cepagg.spark.sources import register
from cepagg.spark.streaming import run_to_end


def main() -> None:
    events, out, checkpoint, query, per_batch = sys.argv[1:6]
    spark = get_session("local[2]", {"spark.sql.shuffle.partitions": "2"})
    register(spark)
    df = (spark.readStream.format("cepagg").option("path", events)
          .option("maxEventsPerBatch", per_batch).option("finite", "true").load())
    run_to_end(df, query, out=out, checkpoint=checkpoint, delay="10 milliseconds", timeout=600)
    print("cepagg-stream-job: done", flush=True)


if __name__ == "__main__":
    main()
