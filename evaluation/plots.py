"""The PNG chart: Hits@1 per hop per run (left) and latency per stage per run (right)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgqa.evaluation.report import STAGES


@dataclass(frozen=True)
class Series:
    """One bar group member: a run (method, split) with its Hits@1 per hop and latency per stage."""

    label: str
    hits1: dict[str, float]  # "1-hop" / "2-hop" / ... / "all" -> fraction
    latency_p50: dict[str, float]
    latency_p95: dict[str, float]
    published: bool = False  # a paper's figure: hatched grey bars, no latency


def series_from_report(report: Mapping[str, Any], label: str | None = None) -> Series:
    cfg = report["config"]
    hits = {
        (f"{h}-hop" if str(h).isdigit() else str(h)): float(m["hits1"])
        for h, m in report["by_hops"].items()
        if m.get("hits1") is not None
    }
    if report["metrics"].get("hits1") is not None:
        hits["all"] = float(report["metrics"]["hits1"])
    lat = report["latency_ms"]
    p50 = {s: float(lat[s]["p50"]) for s in STAGES if lat.get(s, {}).get("p50") is not None}
    p95 = {s: float(lat[s]["p95"]) for s in STAGES if lat.get(s, {}).get("p95") is not None}
    llm = "" if cfg.get("llm") in (None, "none") else f" +{cfg['llm']}"
    default = f"{cfg['method']} ({cfg['split']}){llm}"
    return Series(label or default, hits, p50, p95)


def render_chart(series: Sequence[Series], path: Path, title: str = "") -> Path:
    """Write the two-panel PNG to ``path`` and return it."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path.parent.mkdir(parents=True, exist_ok=True)
    groups = sorted({g for s in series for g in s.hits1}, key=lambda g: (g == "all", g))
    stages = [st for st in STAGES if any(st in s.latency_p50 for s in series)]
    n = max(1, len(series))
    width = 0.8 / n
    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 5.6), gridspec_kw={"width_ratios": [1.25, 1]})
    palette = plt.get_cmap("tab10").colors  # type: ignore[attr-defined]
    greys = ("#c8c8c8", "#a0a0a0", "#787878", "#505050")
    own = [s for s in series if not s.published]
    colors = {id(s): palette[i % len(palette)] for i, s in enumerate(own)}
    colors.update({id(s): greys[i % len(greys)] for i, s in enumerate(x for x in series if x.published)})

    for i, s in enumerate(series):
        xs = [g_index + (i - (n - 1) / 2) * width for g_index, g in enumerate(groups) if g in s.hits1]
        ys = [100 * s.hits1[g] for g in groups if g in s.hits1]
        bars = left.bar(
            xs,
            ys,
            width * 0.95,
            label=s.label,
            color=colors[id(s)],
            hatch="//" if s.published else None,
            edgecolor="white" if s.published else None,
        )
        if n <= 6:
            left.bar_label(bars, fmt="%.1f", fontsize=7, padding=1, rotation=90 if n > 3 else 0)
    left.set_xticks(range(len(groups)), groups)
    left.set_ylim(0, 116 if 3 < n <= 6 else 105)  # room for the rotated value labels
    left.set_ylabel("Hits@1 (%)")
    left.set_title("Accuracy per hop")
    left.grid(axis="y", alpha=0.3)

    m = max(1, len(own))
    lat_width = 0.8 / m
    for i, s in enumerate(own):
        xs = [j + (i - (m - 1) / 2) * lat_width for j, st in enumerate(stages) if st in s.latency_p50]
        p50 = [s.latency_p50[st] for st in stages if st in s.latency_p50]
        p95 = [s.latency_p95.get(st, s.latency_p50[st]) for st in stages if st in s.latency_p50]
        right.bar(xs, p50, lat_width * 0.95, color=colors[id(s)])
        right.scatter(xs, p95, marker="_", s=200, color="black", zorder=3, label="p95" if i == 0 else None)
    values = [v for s in series for v in (*s.latency_p50.values(), *s.latency_p95.values()) if v > 0]
    if values and max(values) / max(min(values), 1e-3) > 30:
        right.set_yscale("log")
    right.set_xticks(range(len(stages)), stages)
    right.set_ylabel("latency per question (ms)")
    right.set_title("Latency per stage (bar p50, tick p95)")
    right.grid(axis="y", alpha=0.3, which="both")
    right.legend(fontsize=8, loc="upper left")
    handles, labels = left.get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 4) or 1, fontsize=8, frameon=False)
    if title:
        fig.suptitle(title)
    rows = (len(labels) + 3) // 4
    fig.tight_layout(rect=(0, 0.045 * rows + 0.01, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
