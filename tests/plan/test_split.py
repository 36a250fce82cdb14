"""The plan's split and bucket decisions, which every Spark driver carries out (no Spark here)."""

from __future__ import annotations

from cepagg.lang import compile_query
from cepagg.plan import plan, plan_workload
from cepagg.plan.split import bucket_keys, split_of, time_slices


def _split(text):
    return split_of(compile_query(text))


def test_a_partition_key_splits_by_key_and_merges_where_partitions_feed_a_group():
    s = _split("RETURN g, COUNT(*) PATTERN SEQ(A, B) WHERE [g] GROUP BY g WITHIN 5")
    assert (s.kind, s.keys, s.partial) == ("key", ("g",), False)
    s = _split("RETURN h, COUNT(*) PATTERN SEQ(A, B) WHERE [g, h] GROUP BY h WITHIN 5")
    assert (s.kind, s.keys, s.partial) == ("key", ("g", "h"), True)
    assert "merged" in s.why


def test_no_key_splits_by_time_or_runs_as_one_task():
    assert _split("RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 5")[:3] == ("time", (), True)
    assert _split("PATTERN SEQ(A, B) WITHIN 5")[:3] == ("time", (), False)  # matches: nothing to merge
    assert _split("RETURN COUNT(*) PATTERN SEQ(A, B)").kind == "single"
    assert _split("RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 5 EVENTS").kind == "single"


def test_emit_on_change_splits_by_its_groups():
    s = _split("RETURN g, COUNT(*) PATTERN SEQ(A, B) WHERE [g, h] GROUP BY g WITHIN 5 EMIT ON CHANGE")
    assert (s.kind, s.keys, s.partial) == ("key", ("g",), False)


def test_time_slices_are_never_narrower_than_the_window():
    assert time_slices(0, 999, 10, 2) == (0, 125)
    assert time_slices(100, 120, 50, 4) == (100, 50)


def test_bucket_keys_never_split_a_group():
    def keys(text):
        return bucket_keys(compile_query(text))

    assert keys("RETURN g, COUNT(*) PATTERN SEQ(A, B) WHERE [g] GROUP BY g WITHIN 5") == ("g",)
    assert keys("RETURN h, COUNT(*) PATTERN SEQ(A, B) WHERE [g, h] GROUP BY h WITHIN 5") == ("h",)
    assert keys("RETURN COUNT(*) PATTERN SEQ(A, B) WHERE [g] WITHIN 5") == ()
    assert keys("RETURN COUNT(*) PATTERN SEQ(A a, B b) GROUP BY a.g WITHIN 5") == ()


def test_the_plan_carries_split_and_buckets_and_explains_them():
    p = plan(compile_query("RETURN h, COUNT(*) PATTERN SEQ(A, B) WHERE [g, h] GROUP BY h WITHIN 5"))
    assert p.split == split_of(p.query) and p.bucket_keys == ("h",)
    assert f"on Spark: {p.split.why}" in p.explain()
    assert "streaming: state in buckets hashed on h, each the aseq engine's versioned snapshot" in p.explain()


def test_shared_queries_form_one_job_per_split():
    texts = ["RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 5",
             "RETURN g, COUNT(*) PATTERN SEQ(A, B) WHERE [g] GROUP BY g WITHIN 5",
             "RETURN COUNT(*) PATTERN SEQ(A, B, C) WITHIN 8",
             "RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 5",  # Kleene: GRETA, not shared
             "RETURN g, COUNT(*), SUM(A.x) PATTERN SEQ(A, C) WHERE [g] GROUP BY g WITHIN 3"]
    wp = plan_workload([compile_query(t) for t in texts], ["t1", "k1", "t2", "kleene", "k2"])
    jobs = wp.shared_jobs()
    assert [(s.kind, s.keys, members) for s, members in jobs] == [("time", (), [0, 2]), ("key", ("g",), [1, 4])]
    text = wp.explain()
    assert "on Spark, one job for t1, t2: no partition key" in text
    assert "on Spark, one job for k1, k2: partitioned by g" in text


def test_explain_says_why_an_emit_query_with_a_partition_key_is_split_by_time(capsys):
    """It said "partition by: k" and "on Spark: no partition key: time slices ..., merged":
    a contradiction, and nothing is merged for EMIT ON CHANGE."""
    from cepagg.cli import main

    assert main(["explain", "-q", "PATTERN SEQ(A a, B b) WHERE [k] WITHIN 10 ms EMIT ON CHANGE RETURN COUNT(*)"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("on Spark:"))
    assert line.startswith("on Spark: split by time slices, not by k: EMIT ON CHANGE"), line
    assert "no partition key" not in line and "merged" not in line


def test_explain_says_a_stream_runs_each_query_of_a_workload_apart():
    """explain showed the shared plan of a workload, which ``cepagg stream`` does not use."""
    texts = ["RETURN COUNT(*) PATTERN SEQ(A a, B b) WITHIN 10", "RETURN COUNT(*) PATTERN SEQ(A a, B b, C c) WITHIN 10"]
    lines = plan_workload([compile_query(t) for t in texts], ["a", "b"]).explain().splitlines()
    assert lines[-1].startswith("streaming (cepagg stream): one streaming query per query")
