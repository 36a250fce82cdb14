"""Tables, ratios, agreement, the speed-ups at the ends of each series and plots from the outcomes of one run.

Everything here works on :class:`~cepagg.bench.peers.runner.Outcome` records (also read back
from ``results.jsonl``), so a report can be rebuilt without running anything
(``cepagg bench peers --report-only``).
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from .runner import ENGINE_TIME, ENGINES, Outcome
from .workloads import STRATEGY_SHORT, Workload

PEERS = tuple(e for e in ENGINES if e != "cepagg")
START, END = "<!-- peers:results:start -->", "<!-- peers:results:end -->"


def load(path: Path) -> list[Outcome]:
    lines = Path(path).read_text().splitlines()
    return [Outcome.from_dict(json.loads(line)) for line in lines if line.strip()]


def key(o: Outcome) -> tuple:
    return (o.workload, o.strategy, o.keyed, o.window_ms)


def index(outcomes: list[Outcome]) -> dict[tuple, dict[str, Outcome]]:
    idx: dict[tuple, dict[str, Outcome]] = defaultdict(dict)
    for o in outcomes:
        idx[key(o)][o.engine] = o
    return idx


@dataclass
class Comparison:
    workload: str
    strategy: str
    keyed: bool
    window_ms: int
    peer: str
    cepagg_count: int
    peer_count: int
    cepagg_s: float
    peer_s: float

    @property
    def agree(self) -> bool:
        return self.cepagg_count == self.peer_count

    @property
    def speedup(self) -> float:
        """How many times faster cepagg is than the peer (peer time / cepagg time)."""
        return self.peer_s / self.cepagg_s if self.cepagg_s > 0 else float("inf")


def comparisons(outcomes: list[Outcome]) -> list[Comparison]:
    out = []
    for k, row in sorted(index(outcomes).items()):
        c = row.get("cepagg")
        if c is None or c.status != "ok":
            continue
        for peer in PEERS:
            p = row.get(peer)
            if p is None or p.status != "ok" or p.engine_s is None or c.engine_s is None:
                continue
            out.append(Comparison(*k, peer, c.count, p.count, c.engine_s, p.engine_s))
    return out


def disagreements(outcomes: list[Outcome]) -> list[Comparison]:
    return [c for c in comparisons(outcomes) if not c.agree]


# ------------------------------------------------------------------------ formatting

def fmt_s(x: float | None) -> str:
    if x is None:
        return "–"
    if x >= 100:
        return f"{x:.0f} s"
    if x >= 1:
        return f"{x:.2f} s"
    return f"{x * 1000:.1f} ms"


def fmt_n(x: float | None) -> str:
    if x is None:
        return "–"
    if x >= 1e6:
        return f"{x / 1e6:.2f}M"
    if x >= 1e3:
        return f"{x / 1e3:.1f}k"
    return f"{x:.0f}"


def fmt_x(x: float | None) -> str:
    if x is None:
        return "–"
    return f"{x:,.0f}×" if x >= 10 else f"{x:.2f}×"


def cell(o: Outcome | None) -> str:
    if o is None:
        return ""
    if o.status == "ok":
        return f"{fmt_s(o.engine_s)}"
    return {"timeout": "timeout", "error": "error", "inexpressible": "n/a",
            "unavailable": "unavail.", "skipped": "(skipped)"}.get(o.status, o.status)


def _resources_table(outcomes: list[Outcome], workloads: dict[str, Workload], engines: list[str]) -> list[str]:
    """The lines of the table of peak memory, throughput and wall time per workload and engine,
    at the largest window each engine finished (keyless, skip-till-any-match)."""
    lines: list[str] = []
    lines.append("Peak memory (max RSS), throughput (events per second of engine time) and wall "
                 "time of the whole process (start-up included) at the largest window each "
                 "engine finished, keyless, skip-till-any-match:")
    lines.append("")
    lines.append("| workload | " + " | ".join(engines) + " |")
    lines.append("|---|" + "---|" * len(engines))
    for wl_name in [w for w in workloads if any(o.workload == w for o in outcomes)]:
        cells = [wl_name]
        for e in engines:
            oks = [o for o in outcomes if o.workload == wl_name and o.engine == e and o.status == "ok"
                   and not o.keyed and o.strategy == "skip-till-any-match"]
            if not oks:
                cells.append("–")
                continue
            o = max(oks, key=lambda o: o.window_ms)
            cells.append(f"{o.window_ms} ms: {fmt_n(o.peak_rss_mb)} MB, {fmt_n(o.events_per_s)} ev/s, "
                         f"wall {fmt_s(o.wall_s)}")
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    return lines


def markdown(outcomes: list[Outcome], workloads: dict[str, Workload], meta: dict | None = None) -> str:
    """The results section of docs/peers.md."""
    idx = index(outcomes)
    comps = {(c.workload, c.strategy, c.keyed, c.window_ms, c.peer): c for c in comparisons(outcomes)}
    engines = [e for e in ENGINES if any(o.engine == e and o.status != "unavailable" for o in outcomes)]
    lines: list[str] = []
    for e in ENGINES:
        if e not in engines:
            why = next((o.detail for o in outcomes if o.engine == e), None)
            if why:
                lines.append(f"* **{e}** did not run: {why}")
                lines.append("")
    if meta:
        lines.append("Run: " + ", ".join(f"{k} `{v}`" if k == "command" else f"{k} {v}"
                                          for k, v in meta.items()))
        lines.append("")
    lines.append("Engine time (each engine's own work, start-up excluded; see below), the count "
                 "of matches, and cepagg's speed-up over each peer (peer time / cepagg time) at "
                 "the same window. `n/a`: the peer cannot express the query; `timeout`: no answer "
                 "within the time limit; `(skipped)`: it already timed out at a smaller window. A window "
                 "between the scale's steps (such as 140 ms between 100 and 200) narrows down where "
                 "Flink CEP stops finishing (`--refine`): only cepagg and Flink CEP run there.")
    lines.append("")
    groups = sorted({(o.workload, o.strategy, o.keyed) for o in outcomes},
                    key=lambda g: (list(workloads).index(g[0]) if g[0] in workloads else 99,
                                   list(STRATEGY_SHORT).index(g[1]), g[2]))
    for wl_name, strategy, keyed in groups:
        wl = workloads.get(wl_name)
        title = wl.title if wl else wl_name
        lines.append(f"#### {wl_name}: {title} — {strategy}, {'per key' if keyed else 'keyless'}")
        lines.append("")
        windows = sorted({o.window_ms for o in outcomes
                          if (o.workload, o.strategy, o.keyed) == (wl_name, strategy, keyed)})
        head = ["window", "matches"] + engines + [f"vs {p}" for p in engines if p != "cepagg"]
        lines.append("| " + " | ".join(head) + " |")
        lines.append("|" + "---|" * len(head))
        for w in windows:
            row = idx[(wl_name, strategy, keyed, w)]
            counts = {o.count for o in row.values() if o.status == "ok"}
            ref = row.get("cepagg")
            count = ref.count if ref and ref.status == "ok" else (max(counts) if counts else None)
            cells = [f"{w} ms", f"{count:,}" if count is not None else "–"]
            for e in engines:
                o = row.get(e)
                text = cell(o)
                if e == "cepagg" and o is not None and o.status == "ok" and o.detail:
                    text += f" ({o.detail})"
                if o is not None and o.status == "ok" and ref is not None and ref.status == "ok" \
                        and e != "cepagg" and o.count != ref.count:
                    text += f" **≠ {o.count:,}**"
                cells.append(text)
            for e in engines:
                if e == "cepagg":
                    continue
                c = comps.get((wl_name, strategy, keyed, w, e))
                cells.append(fmt_x(c.speedup) if c else "")
            lines.append("| " + " | ".join(cells) + " |")
        reasons = {o.engine: o.detail for o in outcomes if (o.workload, o.strategy, o.keyed) ==
                   (wl_name, strategy, keyed) and o.status in ("inexpressible", "unavailable")
                   and o.engine in engines}
        for e, why in reasons.items():
            lines.append(f"\n* {e}: {why}")
        lines.append("")
    lines += _resources_table(outcomes, workloads, engines)
    lines.append("What each engine's time covers:")
    lines.append("")
    for e in engines:
        lines.append(f"* **{e}**: {ENGINE_TIME.get(e, '')}")
    lines.append("")
    return "\n".join(lines)


# ------------------------------------------------------------------------ the ends of each series

def end_ratios(outcomes: list[Outcome]) -> list[tuple[str, str]]:
    """cepagg's speed-up at the two ends of each series against Flink CEP, and its lowest
    against CORE where CORE enumerates more than 10^6 matches: (what, measured).

    The ends: the smallest window (both sides' fixed costs) and the largest window Flink CEP
    finishes (the most enumeration it does). Only the default strategy, skip-till-any-match,
    where the number of matches grows fastest; the other strategies are there for the answers."""
    res = []
    comps = comparisons(outcomes)
    by_group: dict[tuple, list[Comparison]] = defaultdict(list)
    for c in comps:
        by_group[(c.workload, c.strategy, c.keyed, c.peer)].append(c)
    flink_groups = sorted({(o.workload, o.strategy, o.keyed) for o in outcomes if o.engine == "flink-cep"
                           and o.status == "ok" and o.strategy == "skip-till-any-match"})
    for wl, st, keyed in flink_groups:
        name = f"{wl}/{STRATEGY_SHORT[st]}/{'key' if keyed else 'nokey'}"
        cs = {c.window_ms: c for c in by_group.get((wl, st, keyed, "flink-cep"), [])}
        fl_ok = [o.window_ms for o in outcomes if o.engine == "flink-cep" and o.status == "ok"
                 and (o.workload, o.strategy, o.keyed) == (wl, st, keyed)]
        smallest = min(o.window_ms for o in outcomes if (o.workload, o.strategy, o.keyed) == (wl, st, keyed))
        for where, window in (("the smallest window", smallest), ("the largest window Flink CEP finishes", max(fl_ok))):
            c = cs.get(window)
            res.append((f"{name}: vs Flink CEP at {where} ({window} ms)",
                        "cepagg did not finish there" if c is None else fmt_x(c.speedup)))
    big = [c for c in comps if c.peer == "core" and c.peer_count > 1_000_000]
    if big:
        worst = min(big, key=lambda c: c.speedup)
        res.append((f"lowest vs CORE where it enumerates >10⁶ matches ({len(big)} points)",
                    f"{fmt_x(worst.speedup)} at {worst.workload}/{STRATEGY_SHORT[worst.strategy]}/"
                    f"{'key' if worst.keyed else 'nokey'}/{worst.window_ms} ms"))
    else:
        res.append(("lowest vs CORE where it enumerates >10⁶ matches", "no point where both finished with "
                    "more than 10⁶ matches"))
    return res


def end_ratios_markdown(outcomes: list[Outcome]) -> str:
    lines = ["| speed-up | measured |", "|---|---|"]
    lines += [f"| {what} | {measured} |" for what, measured in end_ratios(outcomes)]
    return "\n".join(lines)


def agreement_markdown(outcomes: list[Outcome]) -> str:
    comps = comparisons(outcomes)
    per_peer: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for c in comps:
        per_peer[c.peer][0 if c.agree else 1] += 1
    lines = ["| peer | counts equal | counts differ |", "|---|---|---|"]
    for p in PEERS:
        if p in per_peer:
            a, d = per_peer[p]
            lines.append(f"| {p} | {a} | {d} |")
    diffs = [c for c in comps if not c.agree]
    if diffs:
        lines.append("")
        lines.append("Differences (explained below):")
        lines.append("")
        lines.append("| workload | strategy | keyed | window | peer | cepagg | peer's count |")
        lines.append("|---|---|---|---|---|---|---|")
        for c in diffs:
            lines.append(f"| {c.workload} | {c.strategy} | {'yes' if c.keyed else 'no'} | {c.window_ms} ms "
                         f"| {c.peer} | {c.cepagg_count:,} | {c.peer_count:,} |")
    return "\n".join(lines)


# ------------------------------------------------------------------------ plots

def plot(outcomes: list[Outcome], workloads: dict[str, Workload], out_dir: Path,
         timeout_s: float | None = None) -> list[Path]:
    """One PNG per workload: engine time against window, one panel per selection strategy."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    colors = {"cepagg": "tab:green", "cepagg-spark": "tab:olive", "flink-cep": "tab:blue",
              "flink-sql": "tab:purple", "core": "tab:red"}
    paths = []
    for wl_name in [w for w in workloads if any(o.workload == w for o in outcomes)]:
        strategies = [s for s in STRATEGY_SHORT if any(o.workload == wl_name and o.strategy == s
                                                        for o in outcomes)]
        fig, axes = plt.subplots(1, len(strategies), figsize=(5.2 * len(strategies), 4.2), squeeze=False)
        for ax, st in zip(axes[0], strategies):
            for e in ENGINES:
                for keyed, style in ((False, "-"), (True, "--")):
                    pts = sorted((o.window_ms, o.engine_s) for o in outcomes
                                 if (o.workload, o.strategy, o.keyed, o.engine) == (wl_name, st, keyed, e)
                                 and o.status == "ok" and o.engine_s)
                    tos = [o.window_ms for o in outcomes if (o.workload, o.strategy, o.keyed, o.engine)
                           == (wl_name, st, keyed, e) and o.status == "timeout"]
                    if not pts and not tos:
                        continue
                    label = f"{e} ({'per key' if keyed else 'keyless'})"
                    if pts:
                        ax.plot([p[0] for p in pts], [max(p[1], 1e-4) for p in pts], style, marker="o",
                                ms=3, color=colors.get(e), label=label)
                    if tos and timeout_s:
                        ax.plot(tos, [timeout_s] * len(tos), "x", color=colors.get(e), ms=8,
                                label=None if pts else label)
            if timeout_s:
                ax.axhline(timeout_s, color="grey", lw=0.6, ls=":")
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("window (ms)")
            ax.set_ylabel("engine time (s)")
            ax.set_title(f"{wl_name}: {STRATEGY_SHORT[st]}")
            ax.grid(True, which="both", lw=0.3)
            ax.legend(fontsize=6.5)
        title = workloads[wl_name].title if wl_name in workloads else wl_name
        fig.suptitle(f"{wl_name}: {title}  (× = time limit reached)", fontsize=10)
        fig.tight_layout()
        p = out_dir / f"peers-{wl_name}.png"
        fig.savefig(p, dpi=110)
        plt.close(fig)
        paths.append(p)
    return paths


def update_docs(doc: Path, body: str, start: str = START, end: str = END) -> None:
    """Replace the text between two markers of docs/peers.md with ``body``."""
    text = doc.read_text()
    if start not in text or end not in text:
        raise ValueError(f"{doc} has no {start} ... {end} markers")
    head, rest = text.split(start, 1)
    _, tail = rest.split(end, 1)
    doc.write_text(f"{head}{start}\n{body.rstrip()}\n{end}{tail}")
