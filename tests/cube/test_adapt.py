"""Plan adaptation: a cube run batch by batch re-plans when the type rates drift, and returns
exactly what ``independent`` returns in one pass (random hierarchies, workloads and streams)."""

from __future__ import annotations

import random

import pytest
from cubes import LEAVES, RFID, random_hierarchy, random_workload

from cepagg.cli import main
from cepagg.cube import STRATEGIES, Cube
from cepagg.cube.adapt import Adaptation, batch_bounds
from cepagg.errors import UnsupportedQuery
from cepagg.events import EventBatch
from cepagg.lang import Hierarchy
from generators import cases, seeded


def drifting(rng: random.Random, n: int, ties: bool = True) -> EventBatch:
    """``n`` events whose types come from one half of the leaf types, then from the other."""
    first = rng.sample(LEAVES, 3)
    second = [t for t in LEAVES if t not in first]
    rows = [{"type": rng.choice(first if i < n // 2 else second), "ts": i // 2 if ties else i,
             "x": rng.randint(0, 5), "g": rng.choice("uv")} for i in range(n)]
    return EventBatch.from_rows(rows)


@pytest.mark.parametrize("k", range(cases(8, 40)))
def test_adaptive_cube_equals_independent_and_replans_on_drift(k):
    rng = seeded(f"cube-adapt-{k}")
    h = random_hierarchy(rng)
    patterns = list(dict.fromkeys(random_workload(rng, h)))
    agg = ["COUNT(*)", "COUNT(*), SUM(v0.x)", "SUM(v0.x), COUNT(*)"][k % 3]
    within = rng.randint(3, 8)
    slide = f" SLIDE {rng.randint(2, 4)}" if k % 4 == 3 else ""
    group = " WHERE [g] GROUP BY g" if k % 5 == 2 else ""
    text = "\n---\n".join(f"RETURN {agg} PATTERN {p}{group} WITHIN {within}{slide}" for p in patterns)
    events = drifting(rng, 160)
    expected = Cube.from_text(text, h).evaluate(events, "independent")
    for strategy in STRATEGIES:
        cube = Cube.from_text(text, h)
        got = cube.evaluate(events, strategy, adapt=Adaptation(rng.randint(7, 30), 0.5, 0.0, min_count=3))
        assert got == expected, (strategy, text, h.as_mapping(), [r.text() for r in cube.replans])
        assert cube.replans, "the types changed mid-way: the cube must re-plan"


@pytest.mark.parametrize("k", range(cases(6, 30)))
def test_adaptive_cube_equals_independent_on_matches(k):
    rng = seeded(f"cube-adapt-matches-{k}")
    h = random_hierarchy(rng)
    patterns = list(dict.fromkeys(random_workload(rng, h)))
    text = "\n---\n".join(f"PATTERN {p} WITHIN {rng.randint(3, 6)}" for p in patterns)
    events = drifting(rng, 90)
    expected = Cube.from_text(text, h).evaluate(events, "independent")
    for strategy in STRATEGIES[1:]:
        cube = Cube.from_text(text, h)
        got = cube.evaluate(events, strategy, adapt=Adaptation(rng.randint(5, 20), 0.5, 0.0, min_count=3))
        assert got == expected, (strategy, text, h.as_mapping(), [r.text() for r in cube.replans])
        assert cube.replans


def _rfid_drift() -> tuple[str, EventBatch]:
    """SEQ(G, A, T) and SEQ(G, A, D, T) returning matches: D absent for a while, then frequent."""
    rng = random.Random(3)
    rows = []
    for i in range(600):
        pool = ["G", "A", "T", "O"] if i < 300 else ["G", "A", "T", "DHospital", "DShelter", "DBusStation"]
        rows.append({"type": rng.choice(pool), "ts": i})
    text = "PATTERN SEQ(G g, A a, T t) WITHIN 24\n---\nPATTERN SEQ(G g, A a, D d, T t) WITHIN 24"
    return text, EventBatch.from_rows(rows)


def test_a_new_plan_is_installed_when_the_drift_makes_it_cheaper():
    text, events = _rfid_drift()
    expected = Cube.from_text(text, RFID).evaluate(events, "independent")
    cube = Cube.from_text(text, RFID)
    assert cube.evaluate(events, "chase", adapt=Adaptation(batch=100)) == expected
    installed = [r for r in cube.replans if r.installed]
    assert installed and installed[0].ts == 300 and "D" in installed[0].reason
    assert len(cube.plans) >= 2 and cube.plans[0][1].chosen != cube.plans[-1][1].chosen
    assert installed[0].new_cost < installed[0].old_cost
    # a threshold no drift reaches: one plan throughout, the same results
    fixed = Cube.from_text(text, RFID)
    assert fixed.evaluate(events, "chase", adapt=Adaptation(batch=100, drift=1e9)) == expected
    assert not fixed.replans and len(fixed.plans) == 1


def test_batches_never_split_a_timestamp():
    import numpy as np

    ts = np.array([0, 0, 1, 1, 1, 2, 3, 3, 4])
    assert batch_bounds(ts, 2) == [(0, 2), (2, 5), (5, 8), (8, 9)]
    assert batch_bounds(ts, 100) == [(0, 9)]


def test_adaptation_refuses_what_batches_cannot_combine():
    events = EventBatch.from_rows([{"type": t, "ts": i, "f": 0.5} for i, t in enumerate("GATOT")])
    for text, why in [("RETURN MAX(a.ts) PATTERN SEQ(G g, A a) WITHIN 5", "COUNT and SUM only"),
                      ("RETURN COUNT(*), SUM(a.f) PATTERN SEQ(G g, A a) WITHIN 5", "non-integer"),
                      ("RETURN COUNT(*) PATTERN SEQ(G g, A a, !T) WITHIN 5", "negation"),
                      ("RETURN SUM(a.ts) PATTERN SEQ(G g, A a) WITHIN 5", "needs a COUNT")]:
        with pytest.raises(UnsupportedQuery, match=why):
            Cube.from_text(text, RFID).evaluate(events, adapt=Adaptation(batch=2))


def test_cube_command_prints_when_and_why_it_replanned(tmp_path, capsys):
    import json

    text, events = _rfid_drift()
    (tmp_path / "h.json").write_text(json.dumps(RFID.as_mapping()))
    (tmp_path / "w.cep").write_text(text)
    rows = events.table.to_pylist()
    (tmp_path / "e.csv").write_text("type,ts\n" + "".join(f"{r['type']},{r['ts']}\n" for r in rows))
    args = ["cube", str(tmp_path / "w.cep"), "--hierarchy", str(tmp_path / "h.json"), "--events",
            str(tmp_path / "e.csv"), "--out", str(tmp_path / "out")]
    assert main(args + ["--adapt", "100"]) == 0
    out = capsys.readouterr().out
    assert "plan adaptation: batches of about 100 events" in out
    assert "before batch 3 (ts 300): the rate of " in out and "installed the new plan" in out
    assert "from batch 3:" in out and "statistics: events per second:" in out
    for option in (["--drift", "0.2"], ["--drift", "0.5"], ["--gain", "0.1"]):  # (the default values too)
        assert main(args + option) == 2
        assert "add --adapt N" in capsys.readouterr().err


def test_explain_cube_shows_the_statistics_it_used(tmp_path, capsys):
    import json

    (tmp_path / "h.json").write_text(json.dumps(RFID.as_mapping()))
    (tmp_path / "w.cep").write_text("RETURN COUNT(*) PATTERN SEQ(TX, OK) WITHIN 9\n---\n"
                                    "RETURN COUNT(*) PATTERN SEQ(D, T) WITHIN 9")
    assert main(["explain", str(tmp_path / "w.cep"), "--hierarchy", str(tmp_path / "h.json"), "--cube"]) == 0
    assert "statistics: none measured (every type counts one event" in capsys.readouterr().out
    cube = Cube.from_text((tmp_path / "w.cep").read_text(), RFID)
    cube.evaluate(EventBatch.from_rows([{"type": t, "ts": i * 500} for i, t in enumerate(["DHospital", "T", "A"])]))
    assert "statistics: events per second: A 1.0/s, DHospital 1.0/s, T 1.0/s" in cube.last_plan.explain()


def test_a_cube_evaluated_again_forgets_the_results_of_other_events():
    cube = Cube.from_text("RETURN COUNT(*) PATTERN SEQ(D, T) WITHIN 9", Hierarchy.from_mapping(RFID.as_mapping()))
    one = EventBatch.from_rows([{"type": t, "ts": i} for i, t in enumerate(["DHospital", "T"])])
    two = EventBatch.from_rows([{"type": t, "ts": i} for i, t in enumerate(["DHospital", "T", "T"])])
    assert cube.evaluate(one)["q0"].rows == [(1,)]
    assert cube.evaluate(two)["q0"].rows == [(2,)]
