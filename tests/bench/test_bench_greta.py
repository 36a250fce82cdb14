"""The GRETA benchmark's measuring code on a tiny input (the benchmark itself is not a test).

``_measure`` runs in this process (the benchmark forks it with a time budget; a cold numba
cache can take longer to compile than any budget a test should set)."""

from __future__ import annotations

from cepagg.bench.greta import Q1, _measure, _print_ratios, relative_error

QUERY = Q1.format(pred="S.price > NEXT(S).price", w="10 minutes", s="10 seconds")


class _Out(list):
    put = list.append


def _measured(engine: str, **kw) -> dict:
    out = _Out()
    _measure(engine, QUERY, "stock", 300, 100, 100, {}, out, **kw)
    (result,) = out
    return result


def test_a_measurement_reports_rate_memory_and_limbs():
    greta, two = _measured("greta"), _measured("twostep")
    assert greta["rows"] == two["rows"] > 0  # same windows emitted by both
    assert greta["events_per_s"] > 0 and greta["peak_mb"] >= 0 and greta["limbs"] >= 1
    assert "limbs" not in two


def test_ratios_are_printed_where_both_finished(capsys):
    base = dict(variant="", groups=None, per_window=100, events=300)
    _print_ratios([dict(base, engine="greta", cpu_s=0.01), dict(base, engine="twostep", cpu_s=2.0),
                   dict(base, engine="twostep", per_window=200, timeout=60)])
    out = capsys.readouterr().out
    assert "greta vs twostep at 100 events/window: 200x" in out and "200 events" not in out


def test_float_runs_report_their_error_against_exact():
    exact = _measured("greta", keep_rows=True)["result_rows"]
    approx = _measured("greta", numbers="float", keep_rows=True)["result_rows"]
    assert len(exact) == len(approx) > 0
    assert all(type(r[-1]) is int for r in exact) and all(type(r[-1]) is float for r in approx)
    assert relative_error(QUERY, exact, approx) <= 1e-9
    off = [r[:-1] + (r[-1] * (1 + 1e-6),) for r in approx]
    assert 0.9e-6 < relative_error(QUERY, exact, off) < 1.1e-6
    assert relative_error(QUERY, exact, approx[1:]) == float("inf")  # a row missing


def test_keys_section_reports_rates_and_the_micro_batch(monkeypatch, capsys):
    import argparse

    from cepagg.bench import greta

    monkeypatch.setattr(greta, "KEYS_EVENTS", 3_000)
    monkeypatch.setattr(greta, "KEYS_MICRO", (1_000, 100))
    greta.keys_section(argparse.Namespace(keys=[10, 1_000], repeat=1), "float")
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("keys (float): RETURN COUNT(*)") and "3,000 events" in out[0]
    assert out[2].split()[0] == "10" and out[2].split()[-1] == "1.00x"
    assert out[3].split()[0] == "1,000" and float(out[3].split()[1].replace(",", "")) > 0
    assert "micro-batch of 1,000 events over 100 keys" in out[4] and out[4].endswith("s CPU")
    assert out[5].startswith("keys (float): RETURN COUNT(*)") and "SLIDE 1 s, 3,000 events" in out[5]
    assert len(out) == 10 and out[9].endswith("s CPU")


def test_only_keys_is_accepted(monkeypatch, capsys):
    # `--only keys` names the keys section beside the experiments
    from cepagg.bench import greta
    from cepagg.cli import main

    ran = []
    monkeypatch.setattr(greta, "keys_section", lambda args, mode: ran.append(mode))
    assert main(["bench", "greta", "--only", "keys", "--numbers", "exact,float"]) == 0
    assert ran == ["exact", "float"]


def test_the_sections_outside_the_experiments_table_are_accepted_by_only(monkeypatch):
    import argparse

    from cepagg.bench import greta, greta_density

    ran = []
    monkeypatch.setattr(greta, "keys_section", lambda args, mode: ran.append(("keys", mode)))
    monkeypatch.setattr(greta_density, "density_section", lambda args: ran.append(("density_change",)))
    for only in ("keys", "density_change"):
        args = argparse.Namespace(only=only, engines=None, sizes=None, numbers="exact", budget=None,
                                  full=False, json=None, plots="/nonexistent", batch=1000)
        assert greta.main(args) == 0
    assert ran == [("keys", "exact"), ("density_change",)]


def test_density_change_times_each_phase_and_reports_the_path(monkeypatch):
    from cepagg.bench import greta_density as gd

    monkeypatch.setattr(gd, "PHASE_EVENTS", {gd.SPARSE: 2_000, gd.DENSE: 2_000})
    monkeypatch.setattr(gd, "WARM", 200)
    out = _Out()
    gd._run("auto", [gd.SPARSE, gd.DENSE], 500, out)
    (r,) = out
    assert r["batches"] == [4, 4] and all(c > 0 for c in r["cpu"])
    assert r["index_batches"] == [0, 4]  # the scan while sparse, the index from the first dense batch
    assert r["switches"] == {"index": 1, "scan": 0}
    out = _Out()
    gd._run("index", [gd.SPARSE, gd.DENSE], 500, out)
    assert out[0]["index_batches"] == [4, 4] and out[0]["switches"] is None
