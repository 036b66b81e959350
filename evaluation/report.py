"""From per-question records to the report: aggregates, breakdowns, latency, Markdown, environment."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from kgqa.evaluation.metrics import aggregate, latency_summary
from kgqa.graph.versions import server_versions
from kgqa.qa.answering import STAGES

PACKAGES = (
    "neo4j",
    "neo4j-rust-ext",
    "graphdatascience",
    "numpy",
    "onnxruntime",
    "tokenizers",
    "sentence-transformers",
    "torch",
    "scikit-learn",
    "openai",
    "click",
    "jinja2",
    "rich",
    "tqdm",
    "matplotlib",
    "llama-cpp-python",
)


def _group(records: Iterable[Mapping[str, Any]], key: str) -> dict[str, list[Mapping[str, Any]]]:
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for rec in records:
        value = rec.get(key)
        if value is not None and value != "":
            groups.setdefault(str(value), []).append(rec)
    return groups


def _rows(records: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [rec["metrics"] for rec in records]


def _hop_sort(key: str) -> tuple[int, str]:
    return (int(key), "") if key.isdigit() else (10**6, key)


def summarize(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Overall metrics, per-hop and per-question-type breakdowns, latency per stage, error counts."""
    by_hops = _group(records, "hops")
    by_qtype = _group(records, "qtype")
    errors: dict[str, int] = {}
    for rec in records:
        if rec.get("error"):
            errors[str(rec["error"])[:200]] = errors.get(str(rec["error"])[:200], 0) + 1
    latency: dict[str, Any] = {}
    ok = [rec for rec in records if not rec.get("error")]
    extra = sorted({key for rec in ok for key in rec.get("latency_ms", {}) if key not in STAGES})
    for stage in (*STAGES, *extra):  # the method's own sub-stages (say classify, template) after the four
        values = [
            float(rec["latency_ms"][stage])
            for rec in ok
            if isinstance(rec.get("latency_ms", {}).get(stage), int | float)
        ]
        latency[stage] = latency_summary(values)
    loads = [float(rec["load1"]) for rec in records if isinstance(rec.get("load1"), int | float)]
    return {
        "metrics": aggregate(_rows(records)),
        "by_hops": {k: aggregate(_rows(by_hops[k])) for k in sorted(by_hops, key=_hop_sort)},
        "by_qtype": {
            k: {"hops": by_qtype[k][0].get("hops"), **aggregate(_rows(by_qtype[k]))}
            for k in sorted(by_qtype, key=lambda q: (by_qtype[q][0].get("hops") or 0, q))
        },
        "latency_ms": latency,
        # the machine's 1-minute load average as each question finished (latency is only as clean as this)
        "load_avg_1min": latency_summary(loads),
        "n_errors": sum(errors.values()),
        "errors": dict(sorted(errors.items(), key=lambda kv: -kv[1])[:20]),
    }


# --- Markdown -----------------------------------------------------------------------------------------------

METRIC_COLUMNS = (
    ("Hits@1", "hits1"),
    ("Hit", "hit"),
    ("Macro-F1", "macro_f1"),
    ("Micro-F1", "micro_f1"),
    ("Precision", "precision"),
    ("Recall", "recall"),
    ("AMR", "match_rate"),
    ("Ev. answer recall", "evidence_answer_recall"),
    ("Ev. triple recall", "evidence_triple_recall"),
)


def pct(value: Any, digits: int = 1) -> str:
    return "–" if value is None else f"{100 * float(value):.{digits}f}"


def ms(value: Any) -> str:
    return "–" if value is None else f"{float(value):.1f}"


def metrics_table(rows: Sequence[tuple[str, Mapping[str, Any]]], first: str = "") -> list[str]:
    head = [first, "n", *(title for title, _ in METRIC_COLUMNS)]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(["---"] + ["---:"] * (len(head) - 1)) + "|"]
    for label, m in rows:
        cells = [label, str(m.get("n", 0)), *(pct(m.get(key)) for _, key in METRIC_COLUMNS)]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def latency_table(latency: Mapping[str, Mapping[str, Any]]) -> list[str]:
    lines = ["| stage | n | p50 ms | p95 ms | max ms | mean ms |", "|---|---:|---:|---:|---:|---:|"]
    for stage in (*STAGES, *(key for key in latency if key not in STAGES)):
        s = latency.get(stage) or {}
        label = stage if stage in STAGES else f"↳ {stage}"
        lines.append(
            f"| {label} | {s.get('n', 0)} | {ms(s.get('p50'))} | {ms(s.get('p95'))} | "
            f"{ms(s.get('max'))} | {ms(s.get('mean'))} |"
        )
    return lines


def render_markdown(report: Mapping[str, Any]) -> str:
    cfg = report["config"]
    lines = [
        f"# kgqa eval: {cfg['dataset']} {cfg['split']}, method {cfg['method']}, llm {cfg['llm']}",
        "",
        f"`{report['command']}`",
        "",
        f"{report['n_questions']} questions, {report['n_done']} answered, {report['n_errors']} errors; "
        f"KG `{cfg['kg']}`, k={cfg['k']}. All metrics in %.",
        "",
    ]
    rows: list[tuple[str, Mapping[str, Any]]] = [
        (f"{h}-hop" if h.isdigit() else h, m) for h, m in report["by_hops"].items()
    ]
    rows.append(("all", report["metrics"]))
    lines += metrics_table(rows, "hops") + [""]
    if report.get("by_qtype"):
        lines += ["## Per question type", ""]
        lines += metrics_table([(q, m) for q, m in report["by_qtype"].items()], "question type") + [""]
    lines += ["## Latency", ""] + latency_table(report["latency_ms"]) + [""]
    if cfg.get("warmup"):
        warm = f"Timed after {cfg['warmup']} questions of another split were asked, untimed (`--warmup`)."
        lines += [warm, ""]
    load = report.get("load_avg_1min") or {}
    if load.get("n"):
        lines += [
            f"Machine load (1-min average, {os.cpu_count()} cores) while answering: p50 "
            f"{load['p50']:.1f}, p95 {load['p95']:.1f}, max {load['max']:.1f}.",
            "",
        ]
    if report.get("errors"):
        lines += ["## Errors", ""]
        lines += [f"- {count} × {message}" for message, count in report["errors"].items()] + [""]
    if report.get("notes"):
        lines += ["## Notes", ""] + [f"- {note}" for note in report["notes"]] + [""]
    lines += [
        "AMR = SG-RAG's answer matching rate |gold ∩ predicted| / |gold|. Ev. = the retrieved evidence.",
        "",
    ]
    return "\n".join(lines)


# --- environment --------------------------------------------------------------------------------------------


def package_versions(names: Iterable[str] = PACKAGES) -> dict[str, str | None]:
    found: dict[str, str | None] = {}
    for name in names:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = None
    return found


def git_revision() -> str | None:
    from kgqa.core.config import repo_root

    try:
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=repo_root(), capture_output=True, text=True, timeout=5
        )
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=repo_root(),
            capture_output=True,
            text=True,
            timeout=5,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if head.returncode != 0:
        return None
    return head.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")


def machine_info() -> dict[str, Any]:
    info: dict[str, Any] = {
        "nproc": os.cpu_count(),
        "platform": platform.platform(),
        "python": sys.version.split()[0],
    }
    try:  # latency depends on what else runs: record how busy the machine was
        info["load_avg_1_5_15"] = [round(x, 2) for x in os.getloadavg()]
    except OSError:  # pragma: no cover - not on every platform
        pass
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                info["mem_total_gib"] = round(int(line.split()[1]) / 1024 / 1024, 1)
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                info["cpu"] = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return info


def versions(driver: Any | None) -> dict[str, Any]:
    try:
        kgqa_version: str | None = metadata.version("kgqa")
    except metadata.PackageNotFoundError:
        kgqa_version = None
    return {
        "kgqa": kgqa_version,
        "git": git_revision(),
        "python": sys.version.split()[0],
        "server": server_versions(driver) if driver is not None else {},
        "packages": package_versions(),
    }
