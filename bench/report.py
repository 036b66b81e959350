"""Write BENCHMARKS.md from the result files that bench/report.toml lists.

    python -m bench.report            # rewrite BENCHMARKS.md (reads result files only)
    python -m bench.report --check    # exit 1 when BENCHMARKS.md is not what the files give
    python -m bench.report --run      # first run the MetaQA evals report.toml lists whose
                                      # report is missing or incomplete (hours on 2 cores)
    python -m bench.report --run --methods sgrag --splits test [--rerun]

BENCHMARKS.md holds the headline tables (MetaQA, FB15k-237, WebQSP on FB15k-237, latency, load throughput,
scale), each with the command that produced it and a link to the result file that holds the detail, then an
index of every file under bench/results/ with one line on what it holds. A file report.toml names that is not
there yet is shown as "not measured yet". Numbers are never typed into the report: they are read from the
files (the kgqa eval reports, the bench scripts' JSON) or copied with their table from the bench scripts'
Markdown. A new result file gets its line under [details] in report.toml.

--run invokes each MetaQA run's literal `kgqa eval metaqa ...` command (shown in BENCHMARKS.md) against the
server kgqa is configured for (KGQA_HOME and KGQA_BOLT_PORT, or NEO4J_URI); a run resumes from its JSONL.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shlex
import subprocess
import sys
import time
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from kgqa.evaluation.report import STAGES, ms, pct

from bench.common import CONFIDENCE_BINS, KINDS, REPO, hits

RESULTS = REPO / "bench" / "results"
CONFIG = REPO / "bench" / "report.toml"
OUTPUT = REPO / "BENCHMARKS.md"
CHART = RESULTS / "benchmarks.png"
INDEX = RESULTS / "README.md"  # the index of result files, generated beside BENCHMARKS.md
SPLITS = ("dev", "test")
NOT_MEASURED = "not measured yet"
EVAL_SIBLINGS = (".md", ".png", ".jsonl")  # written by kgqa eval next to its .json report


# ------------------------------------------------------------------------------------------------ reading


def rel(path: Path) -> str:
    try:
        return path.resolve().relative_to(REPO).as_posix()
    except ValueError:
        return str(path)


def link(path: Path, text: str | None = None) -> str:
    return f"[`{text or rel(path)}`]({rel(path)})"


def read_json(path: Path) -> Any | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def is_eval_report(data: Any) -> bool:
    return isinstance(data, dict) and "kgqa_eval_report" in data


def report_link(path: Path, text: str) -> str:
    """A kgqa eval report's Markdown (its .json when there is none)."""
    md = path.with_suffix(".md")
    return f"[{text}]({rel(md if md.is_file() else path)})"


def md_table(path: Path, heading: str = "") -> list[str] | None:
    """The first Markdown table under ``## heading`` in ``path`` (the file's first table for ""), verbatim."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    start = 0
    if heading:
        found = [
            i for i, line in enumerate(lines) if line.startswith("#") and line.lstrip("#").strip() == heading
        ]
        if not found:
            return None
        start = found[0] + 1
    table: list[str] = []
    for line in lines[start:]:
        if line.startswith("|"):
            table.append(line)
        elif table:
            break
        elif heading and line.startswith("#"):
            return None  # the next section began before any table
    return table or None


def table_cells(table: Sequence[str]) -> tuple[list[str], list[list[str]]]:
    """(header cells, body rows' cells) of a Markdown table."""

    def cells(line: str) -> list[str]:
        return [c.strip() for c in line.strip().strip("|").split("|")]

    return cells(table[0]), [cells(line) for line in table[2:]]


def first_command(path: Path) -> str | None:
    """The command a bench script's Markdown names on a line of its own, in backticks."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    for line in lines:
        text = line.strip()
        if text.startswith("`") and text.count("`") >= 2:
            command = text[1 : text.index("`", 1)]
            if command.split()[0] in ("python", "kgqa") or "=" in command.split()[0]:
                return command
    return None


def date(report: Mapping[str, Any]) -> str:
    return str(report.get("created") or "")[:10]


def sample(report: Mapping[str, Any]) -> str:
    n = f"{report['n_questions']:,}"
    return f"{n} (sample)" if report["config"].get("limit") is not None else n


def heldout_hits(rows: list[dict[str, Any]], kind: str | None = None) -> tuple[float, int]:
    return hits(rows, "heldout", kind)


def with_flags(command: str, flags: Mapping[str, str]) -> str:
    """A recorded command with the flags its script left out of the record (the values the file was made
    with, e.g. ``--out`` the file itself)."""
    for flag, value in flags.items():
        if flag not in command.split():
            command += f" {flag} {value}"
    return command


# ----------------------------------------------------------------------------------------------- sections


def report_path(split: str, method: str, limit: int | None) -> Path:
    return RESULTS / f"metaqa-{split}-{method}{f'-limit{limit}' if limit is not None else ''}.json"


def eval_args(split: str, method: str, limit: int | None) -> list[str]:
    args = ["eval", "metaqa", "--split", split, "--method", method]
    if limit is not None:
        args += ["--limit", str(limit)]
    return [*args, "--out", rel(report_path(split, method, limit)), "--retry-errors"]


def metaqa_runs(cfg: Mapping[str, Any]) -> list[tuple[dict[str, Any], Path, dict[str, Any] | None]]:
    runs = []
    for run in cfg["metaqa"]["runs"]:
        path = report_path(run["split"], run["method"], run.get("limit"))
        data = read_json(path)
        runs.append((run, path, data if is_eval_report(data) else None))
    return runs


def freeform_columns(cfg: Mapping[str, Any]) -> list[tuple[str, int | None, dict[str, str]]]:
    """Per hand-written set: its name, held-out count, and the Hits@1 cell of each method."""
    meta = cfg["metaqa"]
    earlier = meta.get("freeform_earlier") or {}
    earlier_path = REPO / earlier["file"] if earlier else None
    table = md_table(earlier_path, earlier.get("heading", "")) if earlier_path else None
    head, body = table_cells(table) if table else ([], [])
    columns = []
    for item in meta.get("freeform", []):
        data = read_json(REPO / item["file"]) or {}
        cells: dict[str, str] = {}
        n: int | None = None
        for method, rows in data.items():
            if method.startswith("_") or not isinstance(rows, list):
                continue
            value, n = heldout_hits(rows)
            cells[method] = f"{value:.1f}"
        if item.get("earlier") in head:
            col = head.index(item["earlier"])
            for row in body:
                method = "auto" if row[0] == earlier.get("auto_row") else row[0]
                if method not in cells and method in meta.get("given", {}):
                    cells[method] = f"{row[col]} †"
        columns.append((item["name"], n, cells))
    return columns


def metaqa_section(cfg: Mapping[str, Any]) -> list[str]:
    meta = cfg["metaqa"]
    test = [(run, path, data) for run, path, data in metaqa_runs(cfg) if run["split"] == "test"]
    freeform = freeform_columns(cfg)
    head = ["method", "1-hop", "2-hop", "3-hop", "all"]
    head += [f"{name} ({n})" if n else name for name, n, _ in freeform]
    head += ["ms p50 / p95", "questions", "run"]
    lines = [
        "## MetaQA",
        "",
        "Test split, Hits@1 per hop; beside it, Hits@1 on the held-out parts of our hand-written question "
        "sets (`bench/questions/`: free English with typos, never tuned on; question counts in the header). "
        "The method links to its `kgqa eval` report.",
        "",
        "| " + " | ".join(head) + " |",
        "|---|" + "---:|" * (len(head) - 2) + "---|",
    ]
    for run, path, data in test:
        method = run["method"]
        ff = [cells.get(method, "–") for _, _, cells in freeform]
        if data is None:
            lines.append(f"| {method} | {NOT_MEASURED} | | | | " + " | ".join(ff) + f" | | | `{rel(path)}` |")
            continue
        hops = data["by_hops"]
        lat = data["latency_ms"]["total"]
        cells = [pct(hops.get(h, {}).get("hits1")) for h in ("1", "2", "3")] + [pct(data["metrics"]["hits1"])]
        cells += ff + [f"{ms(lat.get('p50'))} / {ms(lat.get('p95'))}", sample(data), date(data)]
        lines.append(f"| {report_link(path, '**' + method + '**')} | " + " | ".join(cells) + " |")
    for pub in meta.get("published", []):
        blanks = " | ".join("" for _ in freeform)
        hops = " | ".join(f"{v:.1f}" for v in pub["hits1"])
        lines.append(f"| {pub['method']} (published) | {hops} | | {blanks} | | | |")
    # the earlier run is cited only while some cell still comes from it
    daggers = any(cell.endswith("†") for _, _, cells in freeform for cell in cells.values())
    earlier = (meta.get("freeform_earlier") or {}) if daggers else {}
    lines += [
        "",
        f"![Hits@1 per hop and latency per stage, MetaQA test]({rel(CHART)})" if CHART.is_file() else "",
        "",
        "- Extractive answers (`--llm none`); topic entities linked by kgqa from the question (MetaQA's "
        "`[brackets]` are honoured), where the published systems are given the topic entity. *sample*: a "
        "seeded sample spread evenly over the hops.",
    ]
    if earlier:
        lines.append(
            f"- † from {link(REPO / earlier['file'])}, the last run that asked every method, "
            f"{earlier['when']}; the other free-form cells from the answers files below."
        )
    lines += [
        "- Trained parts see MetaQA dev, never test (`kgqa train all --kg metaqa --questions "
        "../shared/data/metaqa`); dev runs are in the detail files.",
        "- What each method was given:",
        *(f"  - **{m}**: {text}" for m, text in meta.get("given", {}).items()),
        "",
        "```bash",
    ]
    lines += [
        data["command"] if data else "kgqa " + shlex.join(eval_args(r["split"], r["method"], r.get("limit")))
        for r, _, data in test
    ]
    for item in meta.get("freeform", []):
        data = read_json(REPO / item["file"]) or {}
        if data.get("_command"):
            lines.append(with_flags(data["_command"], {"--out": item["file"]}))
    if earlier and (command := first_command(REPO / earlier["file"])):
        lines.append(command + "   # the † cells")
    lines += ["```", ""]
    published = meta.get("published", [])
    if published:
        lines += ["Published: " + "; ".join(f"{p['method']}: {p['source']}" for p in published) + ".", ""]
    return lines


def reliability_table(present: Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]]) -> list[str]:
    """How often a first answer is right, by the confidence its method gave it (methods that give one)."""
    bins = list(zip(CONFIDENCE_BINS, CONFIDENCE_BINS[1:], strict=False))
    head = ["method", "KG trained", "part", *(f"{low:.1f}-{min(high, 1.0):.1f}" for low, high in bins)]
    lines = [
        "",
        "The confidence is calibrated when answers given it are right about that often: each cell is the "
        "share of first answers right, and how many answers had a confidence in that range. auto's is the "
        "probability its answer scorer gives the first answer (learned with the route); the same on WebQSP's "
        "test and dev questions: [calibration.md](bench/results/webqsp-fb15k/calibration.md).",
        "",
        "| " + " | ".join(head) + " |",
        "|---|---|---|" + "---:|" * len(bins),
    ]
    for entry, data in present:
        for method, rows in data.items():
            if method.startswith("_") or method not in entry.get("methods", [method]):
                continue
            scored = [r for r in rows if r.get("confidence") is not None and r["answers"]]
            if not scored:
                continue
            for part in ("heldout", "all"):
                chosen = [r for r in scored if part == "all" or r["part"] == part]
                cells = []
                for low, high in bins:
                    in_bin = [r for r in chosen if low <= r["confidence"] < high]
                    right = 100 * sum(r["hits1"] for r in in_bin) / len(in_bin) if in_bin else None
                    cells.append(f"{right:.0f} % ({len(in_bin)})" if right is not None else "-")
                label = link(REPO / entry["file"], entry["label"]).replace("[`", "[").replace("`]", "]")
                lines.append(f"| **{method}** | {label} | {part} | " + " | ".join(cells) + " |")
    return lines if len(lines) > 5 else []


def fb15k_section(cfg: Mapping[str, Any]) -> list[str]:
    entries = cfg.get("fb15k", [])
    loaded = [(e, read_json(REPO / e["file"])) for e in entries]
    present = [(e, d) for e, d in loaded if isinstance(d, dict)]
    lines = [
        "## FB15k-237",
        "",
        "Our hand-written questions about FB15k-237's entities (`bench/questions/fb15k_freeform.jsonl`), "
        "each method on the KG's own models from `kgqa train all`: learned from the KG alone, or with "
        "WebQSP's train questions too. Hits@1 on the held-out part (question counts in the header); *tune "
        "all* is the part the code's defaults were chosen on.",
        "",
    ]
    lines += [f"- {e['label']} (`{e['file']}`): {NOT_MEASURED}" for e, d in loaded if not isinstance(d, dict)]
    if present:
        rows0 = next(rows for m, rows in present[0][1].items() if not m.startswith("_"))
        n_all = heldout_hits(rows0)[1]
        kinds = [f"{k} ({heldout_hits(rows0, k)[1]})" for k in KINDS]
        head = [
            "method",
            "KG trained",
            f"held-out all ({n_all})",
            *kinds,
            f"tune all ({hits(rows0, 'tune')[1]})",
        ]
        lines += ["| " + " | ".join(head) + " |", "|---|---|" + "---:|" * (len(head) - 2)]
        methods = list(dict.fromkeys(m for _, d in present for m in d if not m.startswith("_")))
        for method in methods:
            for entry, data in present:
                rows = data.get(method)
                if not rows or method not in entry.get("methods", [method]):
                    continue
                cells = [f"{heldout_hits(rows)[0]:.1f}"] + [f"{heldout_hits(rows, k)[0]:.1f}" for k in KINDS]
                cells.append(f"{hits(rows, 'tune')[0]:.1f}")
                label = link(REPO / entry["file"], entry["label"]).replace("[`", "[").replace("`]", "]")
                lines.append(f"| **{method}** | {label} | " + " | ".join(cells) + " |")
        lines += ["", "```bash"]
        for entry, data in present:
            lines.append(entry["train"])
            command = data.get("_command", "")
            lines.append(with_flags(command, {"--kg": entry["kg"], "--out": entry["file"]}))
        lines.append("```")
        lines += reliability_table(present)
    lines += [
        "",
        "What each training part took: `python -m bench.accuracy.fb15k_report` writes "
        f"{link(RESULTS / 'fb15k' / 'fb15k.md')}.",
        "",
    ]
    return lines


def webqsp_section(cfg: Mapping[str, Any]) -> list[str]:
    wq = cfg.get("webqsp") or {}
    paths = sorted(Path(p) for p in glob.glob(str(REPO / wq.get("reports", "")))) if wq else []
    reports = [(p, d) for p in paths if is_eval_report(d := read_json(p))]
    lines = ["## WebQSP on FB15k-237", ""]
    if not reports:
        return lines + [f"WebQSP on FB15k-237: {NOT_MEASURED} (`{wq.get('reports', '')}`).", ""]

    def order(item: tuple[Path, dict[str, Any]]) -> tuple[Any, ...]:
        c = item[1]["config"]
        return (
            c["method"] != "auto",
            c["method"],
            c["limit"] is not None,
            c["split"],
            bool(c["given_topic"]),
        )

    reports.sort(key=order)
    first = reports[0][1]
    kg = first["config"]["kg"]
    info = first.get("kg_info") or {}
    train = next((e["train"] for e in cfg.get("fb15k", []) if e["kg"] == kg), None)
    kg_text = f"KG `{kg}`"
    if info.get("entities"):
        kg_text += (
            f" (FB15k-237: {info['entities']:,} entities, {info.get('relations')} relations, "
            f"{info.get('relationships', 0):,} triples)"
        )
    lines += [
        f"`kgqa eval webqsp` on {kg_text}, its models from `{train or 'kgqa train all'}`. *linked*: topic "
        "entities linked from the question, as a user gets them; *given*: the dataset's topic entity, as the "
        "published systems have it. Questions are the ones the KG can answer (below). *ms*: per question on "
        "2 cores, timed after the run's `--warmup` questions of another split (a server just started "
        "compiles its query plans on its first questions).",
        "",
        "| questions | topic | method | n | Hits@1 | Hit | evidence answer recall | ms p50 / p95 | run |",
        "|---|---|---|---:|---:|---:|---:|---:|---|",
    ]
    for path, r in reports:
        c, m, lat = r["config"], r["metrics"], r["latency_ms"]["total"]
        topic = "given" if c.get("given_topic") else "linked"
        lines.append(
            f"| {c['split']} | {topic} | {report_link(path, '**' + c['method'] + '**')} | {sample(r)} | "
            f"{pct(m.get('hits1'))} | {pct(m.get('hit'))} | {pct(m.get('evidence_answer_recall'))} | "
            f"{ms(lat.get('p50'))} / {ms(lat.get('p95'))} | {date(r)} |"
        )
    lines.append("")
    seen: set[str] = set()
    for split in SPLITS:
        r = next((d for _, d in reports if d["config"]["split"] == split), None)
        if r is None:
            continue
        skipped = ", ".join(f"{why} {n:,}" for why, n in (r["dataset"].get("skipped") or {}).items())
        notes = [n for n in r.get("notes", []) if n not in seen]
        seen.update(notes)
        lines.append(f"- {split}: " + "; ".join(notes) + (f"; skipped: {skipped}" if skipped else "") + ".")
    published = wq.get("published", [])
    if published:
        lines += [
            "",
            f"Published WebQSP numbers. {wq.get('setting', '')} As quoted in issue 29 (RoG and GNN-RAG: "
            "true Hits@1); see each paper for its exact setting.",
            "",
            "| system | Hits@1 | Hit | answers with |",
            "|---|---:|---:|---|",
        ]
        lines += [f"| {p['method']} | {p['hits1']} | {p['hit']} | {p['uses']} |" for p in published]
    lines += ["", "```bash", *(r["command"] for _, r in reports), "```", ""]
    return lines


def latency_section(cfg: Mapping[str, Any]) -> list[str]:
    test = [(run, path, data) for run, path, data in metaqa_runs(cfg) if run["split"] == "test" and data]
    lines = [
        "## Latency",
        "",
        "Per question on MetaQA test, ms p50 / p95 per stage, from the MetaQA runs above (same commands). "
        "*load*: the machine's 1-minute load average while the run answered (2 cores); *workers*: questions "
        "answered at once. Runs that shared the machine report slower stages than a quiet one gives.",
        "",
        "| method | " + " | ".join(STAGES) + " | load | workers | report |",
        "|---|" + "---:|" * (len(STAGES) + 2) + "---|",
    ]
    for run, path, data in test:
        lat = data["latency_ms"]
        cells = [f"{ms(lat.get(s, {}).get('p50'))} / {ms(lat.get(s, {}).get('p95'))}" for s in STAGES]
        load = (data.get("load_avg_1min") or {}).get("p50")
        cells += [
            f"{load:.1f}" if isinstance(load, int | float) else "–",
            str(data["config"].get("workers") or 1),
        ]
        lines.append(f"| {run['method']} | " + " | ".join(cells) + f" | {report_link(path, 'md')} |")
    lines += [
        "",
        "In-database stages on their own: "
        + ", ".join(
            link(RESULTS / p)
            for p in ("gsr/latency.md", "simgrag/latency-metaqa.md", "auto/first-question.md")
            if (RESULTS / p).is_file()
        )
        + " (the last: the first question after a server start). At a million entities: [Scale](#scale).",
        "",
    ]
    lines += excerpts(cfg, "latency")
    return lines


def load_section(cfg: Mapping[str, Any]) -> list[str]:
    path = RESULTS / "load_metaqa.json"
    rows = read_json(path)
    lines = ["## Load throughput", ""]
    if isinstance(rows, list) and rows:
        lines += [
            f"### MetaQA (all of it, full MiniLM embeddings), both write paths ({link(path)})",
            "",
            "| write path | entities | triples | total s | write s | triples/s | embedding s | indexes s |",
            "|---|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for r in rows:
            cells = [r.get(k) for k in ("entities", "relationships", "load_s", "write_s", "triples_per_s")]
            cells += [r.get("embedding_s"), r.get("indexes_s")]
            lines.append(
                f"| {r.get('path')} | "
                + " | ".join(f"{c:,}" if isinstance(c, int) else str(c) for c in cells)
                + " |"
            )
        lines += ["", f"`python -m bench.load.metaqa --out {rel(path)}`", ""]
    else:
        lines += [f"MetaQA load: {NOT_MEASURED} (`python -m bench.load.metaqa --out {rel(path)}`).", ""]
    return lines + excerpts(cfg, "load")


def scale_section(cfg: Mapping[str, Any]) -> list[str]:
    return ["## Scale", "", *excerpts(cfg, "scale")]


def excerpts(cfg: Mapping[str, Any], section: str) -> list[str]:
    lines: list[str] = []
    for item in cfg.get("excerpt", []):
        if item.get("section") != section:
            continue
        path = REPO / item["file"]
        table = md_table(path, item.get("heading", ""))
        lines += [f"### {item['title']}", ""]
        if table is None:
            lines += [f"{NOT_MEASURED} (`{item['file']}`).", ""]
            continue
        command = item.get("command") or first_command(path)
        detail = ", ".join(link(REPO / d) for d in item.get("detail") or [] if d != item["file"])
        lines += [*table, ""]
        source = f"copied from {link(path)}" + (f" ({item['heading']})" if item.get("heading") else "")
        source += f"; detail: {detail}." if detail else "."
        lines += [f"`{command}`, {source}" if command else source[0].upper() + source[1:], ""]
    return lines


def describe_eval(path: Path, r: Mapping[str, Any]) -> str:
    c = r["config"]
    given = ", topic given" if c.get("given_topic") else ""
    n = f"{r['n_questions']:,} questions" + (" (sample)" if c.get("limit") is not None else "")
    return (
        f"kgqa eval: {c['dataset']} {c['split']}, {c['method']}, {n}{given}, Hits@1 "
        f"{pct(r['metrics'].get('hits1'))}, run {date(r)}"
    )


def result_index(cfg: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """bench/results/README.md: every result file with what it holds (links relative to bench/results/), and
    the files it has no description for."""
    described: Mapping[str, str] = cfg.get("details", {})
    files = sorted(
        p
        for p in RESULTS.rglob("*")
        if p.is_file() and p.suffix != ".jsonl" and "__pycache__" not in p.parts and p != INDEX
    )
    evals = {p for p in files if p.suffix == ".json" and is_eval_report(read_json(p))}
    siblings = {p.with_suffix(s) for p in evals for s in EVAL_SIBLINGS}
    entries: dict[str, list[str]] = {}
    missing: list[str] = []
    for path in files:
        if path in siblings:
            continue
        key = path.relative_to(RESULTS).as_posix()
        folder = key.rsplit("/", 1)[0] if "/" in key else "."
        text = described.get(key, "")
        if path in evals:
            data = read_json(path)
            text = describe_eval(path, data) + (f"; {text}" if text else "")
            shown = path.with_suffix(".md") if path.with_suffix(".md").is_file() else path
            others = [s for s in (".json", ".png") if s != shown.suffix and path.with_suffix(s).is_file()]
            shown_key = shown.relative_to(RESULTS).as_posix()
            name = f"[`{shown_key}`]({shown_key})"
            name += f" ({', '.join(f'`{x}`' for x in others)})" if others else ""
        else:
            name = f"[`{key}`]({key})"
            if not text:
                missing.append(key)
                text = "(no line in bench/report.toml yet)"
        entries.setdefault(folder, []).append(f"- {name}: {text}")
    for key in described:
        if not (RESULTS / key).exists():
            folder = key.rsplit("/", 1)[0] if "/" in key else "."
            entries.setdefault(folder, []).append(
                f"- `bench/results/{key}`: {described[key]} — {NOT_MEASURED}"
            )
    lines = [
        "# Result files",
        "",
        "Generated by `python -m bench.report` with [BENCHMARKS.md](../../BENCHMARKS.md); do not "
        "edit by hand. Every file under `bench/results/` (the per-question `.jsonl` files are not "
        "committed), with what it holds. Files marked *script since removed* keep their command as a "
        "record; their scripts are gone.",
        "",
    ]
    for folder in sorted(entries, key=lambda f: (f != ".", f)):
        lines += [f"## {'bench/results/' if folder == '.' else 'bench/results/' + folder + '/'}", ""]
        lines += entries[folder] + [""]
    return lines, missing


def details_section(count: int) -> list[str]:
    return [
        "## Detail files",
        "",
        f"[`bench/results/README.md`]({rel(INDEX)}) lists the {count} result files under `bench/results/`, "
        "each with what it holds.",
        "",
    ]


def machine_section(reports: Iterable[Mapping[str, Any]]) -> list[str]:
    machines = [r.get("machine") or {} for r in reports]
    cpus = sorted({str(m.get("cpu")) for m in machines if m.get("cpu")})
    cores = sorted({str(m.get("nproc")) for m in machines if m.get("nproc")})
    mem = sorted({str(m.get("mem_total_gib")) for m in machines if m.get("mem_total_gib")})
    latest = max(reports, key=lambda r: str(r.get("created")), default=None)
    lines = [
        "## Metrics and machine",
        "",
        "Per question, over normalised answer strings (lowercase; accents, punctuation and the articles "
        "a/an/the removed): **Hits@1** the first answer is gold; **Hit** any answer is; **evidence answer "
        "recall** the share of gold answers among the entities of the retrieved triples; Macro-F1 the mean "
        "F1 over the answer sets. A question whose method raised an error scores 0. Latency is per answered "
        "question; `total` is measured around the whole call. The eval reports also hold precision, recall, "
        "micro-F1, SG-RAG's answer matching rate and evidence triple recall per hop.",
        "",
        f"Machine: {'/'.join(cores) or '?'} cores, {'/'.join(mem) or '?'} GiB RAM "
        f"({', '.join(cpus) or '?'}), shared with other work; each report records its machine, load, "
        "versions and git commit.",
    ]
    if latest is not None:
        v = latest.get("versions") or {}
        s = v.get("server") or {}
        lines[-1] += (
            f" The latest ({date(latest)}): Neo4j {s.get('neo4j')} ({s.get('edition')}), GDS {s.get('gds')}, "
            f"APOC {s.get('apoc')}, Python {v.get('python')}."
        )
    return lines + [""]


def tidy(lines: list[str]) -> str:
    text = "\n".join(lines)
    while "\n\n\n" in text:
        text = text.replace("\n\n\n", "\n\n")
    return text.rstrip("\n") + "\n"


def render(cfg: Mapping[str, Any]) -> tuple[str, str, list[str]]:
    """BENCHMARKS.md, bench/results/README.md, and the result files report.toml describes nowhere."""
    index, missing = result_index(cfg)
    all_reports = [d for p in RESULTS.rglob("*.json") if is_eval_report(d := read_json(p))]
    lines = [
        "# Benchmarks",
        "",
        "Generated by `python -m bench.report` from the result files that `bench/report.toml` "
        "lists; do not edit by hand. Every number is read from a file under `bench/results/`, linked beside "
        "its table with the command that produced it.",
        "",
        "Answers are extractive (`--llm none`); metrics in %: **Hits@1** the first answer is gold, **Hit** "
        "any answer is. The machine has 2 cores and was shared with other work: latencies are what each run "
        "measured.",
        "",
        "[MetaQA](#metaqa) · [FB15k-237](#fb15k-237) · [WebQSP on FB15k-237](#webqsp-on-fb15k-237) · "
        "[Entity linking](#entity-linking) · [Latency](#latency) · [Load throughput](#load-throughput) · "
        "[Scale](#scale) · [Detail files](#detail-files) · [Metrics and machine](#metrics-and-machine)",
        "",
    ]
    lines += metaqa_section(cfg)
    lines += fb15k_section(cfg)
    lines += webqsp_section(cfg)
    lines += excerpts(cfg, "webqsp")
    lines += ["## Entity linking", "", *excerpts(cfg, "linking")]
    lines += latency_section(cfg)
    lines += load_section(cfg)
    lines += scale_section(cfg)
    lines += details_section(sum(line.startswith("- ") for line in index))
    lines += machine_section(all_reports)
    return tidy(lines), tidy(index), missing


# ------------------------------------------------------------------------------------------------ running


def run_one(args: list[str]) -> tuple[bool, str]:
    """Run `kgqa <args>`, its progress bar passed through to this terminal; (ok, its last message line)."""
    command = [sys.executable, "-m", "kgqa.cli", *args]
    print(f"\n$ kgqa {shlex.join(args)}", file=sys.stderr, flush=True)
    began = time.perf_counter()
    proc = subprocess.Popen(command, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert proc.stderr is not None
    tail = b""
    while chunk := os.read(proc.stderr.fileno(), 4096):
        sys.stderr.buffer.write(chunk)
        sys.stderr.flush()
        tail = (tail + chunk)[-4000:]
    code = proc.wait()
    print(f"  exit {code} after {time.perf_counter() - began:.0f}s", file=sys.stderr, flush=True)
    lines = [line.strip() for line in tail.decode("utf-8", "replace").replace("\r", "\n").splitlines()]
    lines = [line for line in lines if line and "Received notification" not in line]
    return code == 0, lines[-1] if lines else f"exit code {code}"


def run_metaqa(
    cfg: Mapping[str, Any], methods: set[str] | None, splits: set[str], rerun: bool
) -> dict[str, str]:
    """Run the configured MetaQA evals that are missing or incomplete; {run: why it failed}."""
    failures: dict[str, str] = {}
    for run, path, data in metaqa_runs(cfg):
        if (methods and run["method"] not in methods) or run["split"] not in splits:
            continue
        complete = (
            data is not None and data.get("complete") and data["config"].get("limit") == run.get("limit")
        )
        if complete and not rerun:
            print(f"{rel(path)} is complete; not rerun (use --rerun)", file=sys.stderr)
            continue
        ok, last = run_one(eval_args(run["split"], run["method"], run.get("limit")))
        if not ok:
            failures[f"{run['method']} {run['split']}"] = last
    return failures


def render_chart(cfg: Mapping[str, Any]) -> None:
    from kgqa.evaluation.plots import Series, series_from_report
    from kgqa.evaluation.plots import render_chart as draw

    test = [(run, data) for run, _, data in metaqa_runs(cfg) if run["split"] == "test" and data]
    if not test:
        return
    series = [series_from_report(data, run["method"]) for run, data in test]
    series += [
        Series(
            f"{p['method']} (published)",
            {f"{h}-hop": v / 100 for h, v in zip((1, 2, 3), p["hits1"], strict=True)},
            {},
            {},
            published=True,
        )
        for p in cfg["metaqa"].get("published", [])
    ]
    draw(series, CHART, "MetaQA test — kgqa methods (extractive answers) vs published Hits@1")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--config", type=Path, default=CONFIG, help="what the report is made of")
    parser.add_argument(
        "--out", type=Path, default=OUTPUT, help="the report to write (default BENCHMARKS.md)"
    )
    parser.add_argument("--check", action="store_true", help="only compare --out with what the files give")
    parser.add_argument("--run", action="store_true", help="first run the MetaQA evals that are not complete")
    parser.add_argument(
        "--methods", help="with --run: comma-separated methods (default: every configured run)"
    )
    parser.add_argument("--splits", default="dev,test", help="with --run: comma-separated splits")
    parser.add_argument("--rerun", action="store_true", help="with --run: also runs whose report is complete")
    args = parser.parse_args(argv)
    cfg = tomllib.loads(args.config.read_text(encoding="utf-8"))

    failures: dict[str, str] = {}
    if args.run:
        splits = {s.strip() for s in args.splits.split(",") if s.strip()}
        if not splits <= set(SPLITS):
            parser.error(f"--splits must be among {', '.join(SPLITS)}")
        methods = {m.strip() for m in args.methods.split(",")} if args.methods else None
        failures = run_metaqa(cfg, methods, splits, args.rerun)

    text, index, missing = render(cfg)
    if missing:
        print("no line in bench/report.toml [details] for: " + ", ".join(missing), file=sys.stderr)
    outputs = {args.out: text, INDEX: index}
    if args.check:
        stale = [
            rel(path)
            for path, wanted in outputs.items()
            if (path.read_text(encoding="utf-8") if path.is_file() else "") != wanted
        ]
        if stale:
            print(f"{', '.join(stale)} out of date: run python -m bench.report", file=sys.stderr)
            return 1
        print(f"{', '.join(rel(p) for p in outputs)} up to date", file=sys.stderr)
        return 0
    render_chart(cfg)
    for path, wanted in outputs.items():
        path.write_text(wanted, encoding="utf-8")
    print(
        f"wrote {rel(args.out)} ({text.count(chr(10))} lines), {rel(INDEX)} and {rel(CHART)}", file=sys.stderr
    )
    for run, why in failures.items():
        print(f"failed: {run}: {why}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
