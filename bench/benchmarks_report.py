"""Run every available method over MetaQA dev and test with `kgqa eval`, then regenerate BENCHMARKS.md.

    python bench/benchmarks_report.py                      # full splits (hours on 2 cores); resumes,
                                                           # and skips runs whose report is complete
    python bench/benchmarks_report.py --limit 300          # a quick seeded sample of 300 per split
    python bench/benchmarks_report.py --skip-run           # only rebuild BENCHMARKS.md from the reports
    python bench/benchmarks_report.py --methods sgrag --splits test
    python bench/benchmarks_report.py --method-limit cosine=600   # a sample for a method too slow for all
    python bench/benchmarks_report.py --method-limit frag:dev=300 # ... or for one split of it

Each run is the literal `kgqa eval metaqa --split S --method M --out bench/results/...json` command (printed
into BENCHMARKS.md), so every number there can be reproduced by hand. Runs resume from their JSONL, so an
interrupted benchmark continues where it stopped. Reports, per-question JSONL, Markdown and PNGs go to
bench/results/; the overview chart is bench/results/benchmarks.png. Load throughput is read from
bench/results/load_metaqa.json (or .txt) when bench/load_metaqa.py's output was saved there. Use the test
server with KGQA_HOME=~/.kgqa-test KGQA_BOLT_PORT=7697, or any server kgqa is configured for.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from kgqa.evaluation.plots import Series, render_chart, series_from_report
from kgqa.evaluation.report import STAGES, latency_table, metrics_table, ms, pct
from kgqa.qa.methods import method_status

REPO = Path(__file__).resolve().parent.parent
SPLITS = ("dev", "test")


@dataclass(frozen=True)
class Published:
    method: str
    hits1: tuple[float, float, float]  # MetaQA 1/2/3-hop Hits@1 (%)
    source: str


PUBLISHED = (
    Published(
        "SimGRAG",
        (98.0, 98.4, 97.8),
        "Cai et al. 2024, *SimGRAG: Leveraging Similar Subgraphs for Knowledge Graphs Driven "
        "Retrieval-Augmented Generation* (arXiv:2412.15272)",
    ),
    Published(
        "UniKGQA",
        (97.5, 99.0, 99.1),
        "Jiang et al., ICLR 2023, *UniKGQA: Unified Retrieval and Reasoning for Solving Multi-hop "
        "Question Answering Over Knowledge Graph*",
    ),
    Published(
        "NSM",
        (97.1, 99.9, 98.9),
        "He et al., WSDM 2021, *Improving Multi-hop Knowledge Base Question Answering by Learning "
        "Intermediate Supervision Signals*",
    ),
)
PUBLISHED_OTHER = (
    (
        "SubgraphRAG",
        "answer recall@100 = 0.944 (WebQSP, retrieved top-100 triples)",
        "Li et al., ICLR 2025, *Simple is Effective: The Roles of Graphs and Large Language Models in "
        "Knowledge-Graph-Based Retrieval-Augmented Generation*",
    ),
    (
        "GSR",
        "3-hop Hits = 92.25",
        "Huang et al., Findings of EMNLP 2024, *Less is More: Making Smaller Language Models Competent "
        "Subgraph Retrievers for Multi-hop KGQA*",
    ),
)


def _rel(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(REPO))
    except ValueError:
        return str(path)


def report_path(results: Path, split: str, method: str, limit: int | None) -> Path:
    suffix = f"-limit{limit}" if limit is not None else ""
    return results / f"metaqa-{split}-{method}{suffix}.json"


def eval_args(
    split: str, method: str, out: Path, limit: int | None, k: int, llm: str, resume: bool
) -> list[str]:
    args = ["eval", "metaqa", "--split", split, "--method", method]
    if limit is not None:
        args += ["--limit", str(limit)]
    if k != 100:
        args += ["--k", str(k)]
    if llm != "none":
        args += ["--llm", llm]
    args += ["--out", _rel(out), "--retry-errors"]  # a method fixed since the last run gets its errors redone
    if not resume:
        args.append("--no-resume")
    return args


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
    lines = [
        line.strip()
        for line in tail.decode("utf-8", "replace").replace("\r", "\n").splitlines()
        if line.strip() and "Received notification" not in line
    ]
    return code == 0, lines[-1] if lines else f"exit code {code}"


def _shell(command: str) -> str:
    try:
        return subprocess.run(command, shell=True, capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return "(unavailable)"


def _load_figures(explicit: Path | None) -> tuple[str, str] | None:
    """(source file, Markdown) for bench/load_metaqa.py's saved output, if any."""
    candidates = (
        [explicit]
        if explicit
        else [REPO / "bench" / "results" / f"load_metaqa.{ext}" for ext in ("json", "txt", "log")]
    )
    for path in candidates:
        if path is None or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace").strip()
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            return _rel(path), f"```\n{text[-4000:]}\n```"
        if isinstance(data, list) and all(isinstance(row, dict) and "path" in row for row in data):
            return _rel(path), "\n".join(_load_rows_table(data))
        rows = _flatten(data)
        table = ["| figure | value |", "|---|---:|"] + [f"| {k} | {v} |" for k, v in rows]
        return _rel(path), "\n".join(table)
    return None


def _load_rows_table(rows: list[dict[str, Any]]) -> list[str]:
    """bench/load_metaqa.py --json rows: one line per write path."""
    head = "| write path | entities | triples | total s | write s | triples/s | embedding s | indexes s |"
    lines = [head, "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        cells = [r.get(k) for k in ("entities", "relationships", "load_s", "write_s", "triples_per_s")]
        cells += [r.get("embedding_s"), r.get("indexes_s")]
        lines.append(
            f"| {r['path']} | " + " | ".join(f"{c:,}" if isinstance(c, int) else str(c) for c in cells) + " |"
        )
    return lines


def _flatten(data: Any, prefix: str = "") -> list[tuple[str, str]]:
    if isinstance(data, dict):
        out: list[tuple[str, str]] = []
        for key, value in data.items():
            out += _flatten(value, f"{prefix}{key}." if not isinstance(value, dict) else f"{prefix}{key}.")
        return [(k.rstrip("."), v) for k, v in out]
    if isinstance(data, list):
        return [(prefix.rstrip("."), json.dumps(data)[:200])]
    if isinstance(data, float):
        return [(prefix.rstrip("."), f"{data:,.2f}")]
    return [(prefix.rstrip("."), f"{data:,}" if isinstance(data, int) else str(data))]


def _complete(out: Path, limit: int | None, args: argparse.Namespace) -> bool:
    """A finished report for these settings is already there."""
    try:
        report = json.loads(out.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    cfg = report.get("config", {})
    return (
        bool(report.get("complete"))
        and cfg.get("limit") == limit
        and cfg.get("k") == args.k
        and cfg.get("llm") == args.llm
    )


def _load(report: dict[str, Any]) -> str:
    load = report.get("load_avg_1min") or {}
    if not load.get("n"):
        return "not recorded"
    return f"{load['p50']:.1f} / {load['p95']:.1f} ({load['n']} of {report['n_done']} questions)"


def _hits_row(label: str, report: dict[str, Any]) -> str:
    hops = report["by_hops"]
    cells = [pct(hops.get(h, {}).get("hits1")) for h in ("1", "2", "3")]
    lat = report["latency_ms"]["total"]
    sample = "" if report["config"].get("limit") is None else f" (sample of {report['n_questions']})"
    return (
        f"| {label}{sample} | {' | '.join(cells)} | {pct(report['metrics']['hits1'])} | "
        f"{pct(report['metrics']['macro_f1'])} | {report['n_done']} | {report['n_errors']} | "
        f"{ms(lat.get('p50'))} / {ms(lat.get('p95'))} |"
    )


# What each method was given to reach its MetaQA numbers: the honest reading of the tables above.
GIVEN = {
    "sgrag": "the relation chains of MetaQA's dev questions as its templates (MetaQA's questions come from "
    "49 question types; every masked test phrasing also occurs in dev), chosen by a chain classifier "
    "fitted on dev phrasings; no fallback: nothing when none of its best 3 chains matches",
    "gsr": "a chain generator trained on MetaQA dev questions, KB-synthesised questions and index "
    "pseudo-questions; no templates",
    "frag": "no templates; a hop-range classifier fitted on dev phrasings; chains ranked by the KG's path "
    "ranker, its weights fitted on dev questions",
    "subgraphrag": "no templates; a triple scorer trained on dev questions' weak labels; a hop classifier "
    "fitted on dev phrasings",
    "simgrag": "no templates: a pattern graph built from the question offline, matched by graph semantic "
    "distance; the words for each relation learned from dev questions",
    "cosine": "nothing: the baseline ranks candidate triples by cosine similarity to the question",
    "auto": "routes each question among the methods above (kgqa.qa.routing), by what the question names, "
    "the classifier's confidence and whether a method answered; its policy learned by `kgqa train all` on "
    "held-out dev questions",
}


def freeform_hits(rows: list[dict[str, Any]]) -> tuple[float, int]:
    """Hits@1 (%) and count of the held-out rows of one method on one question set."""
    held = [r for r in rows if r.get("part") == "heldout"]
    return (100 * sum(r["hits1"] for r in held) / len(held) if held else float("nan")), len(held)


def given_table(
    reports: dict[tuple[str, str], dict[str, Any]], freeform: dict[str, dict[str, Any]]
) -> list[str]:
    """Per method: what it was given, MetaQA test Hits@1, and Hits@1 on the held-out parts of our own
    free-form and two-entity sets (``--freeform NAME=FILE``: ``bench/questions_answers.py --out`` files)."""
    methods = sorted(
        {m for s, m in reports if s == "test"}
        | {m for runs in freeform.values() for m in runs if not m.startswith("_")}
    )
    if not methods:
        return []
    names = list(freeform)
    lines = [
        "## What each method was given, and questions it was not built for",
        "",
        "MetaQA's questions come from a few hundred fixed phrasings of 49 question types; our own sets "
        "(`bench/questions/`) are written in free English with typos, and their held-out parts were never "
        "tuned on. Hits@1 %, held-out questions only (count in brackets).",
        "",
        "| method | what it was given | MetaQA test (all) | " + " | ".join(names) + " |",
        "|---|---|---:|" + "---:|" * len(names),
    ]
    for m in methods:
        test = reports.get(("test", m))
        cell = pct(test["metrics"]["hits1"]) if test else "–"
        if test and test["config"].get("limit") is not None:
            cell += f" (sample of {test['n_questions']})"
        cells = []
        for name in names:
            rows = freeform[name].get(m)
            if rows is None:
                cells.append("–")
                continue
            hits, n = freeform_hits(rows)
            cells.append(f"{hits:.1f} ({n})")
        lines.append(f"| {m} | {GIVEN.get(m, '')} | {cell} | " + " | ".join(cells) + " |")
    commands = list(dict.fromkeys(f"`{run['_command']}`" for run in freeform.values() if run.get("_command")))
    lines += ["", *(["Free-form columns: " + "; ".join(commands) + "."] if commands else []), ""]
    return lines


def render(
    reports: dict[tuple[str, str], dict[str, Any]],
    commands: dict[tuple[str, str], str],
    failures: dict[tuple[str, str], str],
    unavailable: dict[str, str],
    chart: Path | None,
    load: tuple[str, str] | None,
    invocation: str,
    freeform: dict[str, dict[str, Any]] | None = None,
) -> str:
    methods = sorted({m for _, m in reports} | {m for _, m in failures})
    any_report = next(iter(reports.values()), None)
    lines = [
        "# Benchmarks",
        "",
        "Generated by `" + invocation + "` — do not edit by hand; rerun the script. "
        f"Last generated {datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}.",
        "",
        "All numbers come from `kgqa eval` (the commands are listed below): answers from the "
        "extractive answerer (`--llm none`) unless stated, topic entities linked from the question by "
        "the system itself (MetaQA `[brackets]` are honoured), metrics in %. Hits@1 = the first answer "
        "is gold.",
        "",
    ]
    for split in ("test", "dev"):
        rows = [(m, reports[(split, m)]) for m in methods if (split, m) in reports]
        lines += [
            f"## MetaQA {split}: Hits@1 per hop",
            "",
            "| method | 1-hop | 2-hop | 3-hop | all | Macro-F1 | answered | errors | total ms p50 / p95 |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        lines += [_hits_row(f"**{m}** (kgqa)", r) for m, r in rows]
        lines += [f"| {m} | failed | | | | | | | |" for m in methods if (split, m) in failures]
        if split == "test":
            lines += [
                f"| {p.method} (published) | {p.hits1[0]:.1f} | {p.hits1[1]:.1f} | {p.hits1[2]:.1f} "
                "| | | | | |"
                for p in PUBLISHED
            ]
        if not rows and not any(s == split for s, _ in failures):
            lines.append("| (no run yet) | | | | | | | | |")
        lines.append("")
        if split == "test" and chart is not None:
            lines += [f"![Hits@1 per hop and latency per stage, MetaQA test]({_rel(chart)})", ""]

    lines += given_table(reports, freeform or {})
    lines += ["## Published numbers", "", "| method | result | source |", "|---|---|---|"]
    lines += [
        f"| {p.method} | MetaQA Hits@1 1-hop {p.hits1[0]:.1f}, 2-hop {p.hits1[1]:.1f}, "
        f"3-hop {p.hits1[2]:.1f} | {p.source} |"
        for p in PUBLISHED
    ]
    lines += [f"| {name} | {result} | {source} |" for name, result, source in PUBLISHED_OTHER]
    lines += [
        "",
        "The published MetaQA systems are given the topic entity; kgqa links it itself. GSR's "
        "figure is quoted as given in the project's evaluation issue; see the paper for its exact "
        "setting.",
        "",
        "Trained parts see MetaQA dev, never test: `kgqa train all --kg metaqa --questions "
        "../shared/data/metaqa` fits the question classifiers (sgrag's chains, the hop count frag and "
        "subgraphrag use), the SubgraphRAG scorer, FRAG's path ranker (`kgqa.models.frag_ranker`: "
        "how much the chain's similarity to the question, the question words naming its relations and the "
        "kind of thing it arrives at each weigh) and GSR's chain generator on dev questions. A dev row can "
        "therefore hold questions a part was trained on; the test rows are clean. gsr and auto (whose route "
        "is measured on held-out dev questions) have no dev row. No method falls back on another: sgrag's "
        "evidence is empty when none of its best chains matches, and only auto's route passes a question on. "
        'A "sample of N" is a seeded sample spread evenly over the hops, used where the full split has '
        "not been run yet.",
        "",
        "Latency is what each run measured, on the machine noted below and under the load shown in the "
        "latency table (1-minute load average while it answered; 2 cores): runs that shared the machine, "
        "or answered with `--workers` > 1, report slower stages than a quiet machine gives. "
        "`bench/retrieval_speed.py` measures the in-database stages on their own. A resumed run (its "
        "JSONL continues where it stopped) can span code changes; the report keeps the versions at its "
        "start and at its end.",
        "",
    ]

    for split in ("test", "dev"):
        for method in methods:
            report = reports.get((split, method))
            if report is None:
                continue
            lines += [f"## {method} on MetaQA {split}: all metrics", ""]
            per_hop = [(f"{h}-hop", m) for h, m in report["by_hops"].items()] + [("all", report["metrics"])]
            lines += metrics_table(per_hop, "hops") + [""]
            lines += latency_table(report["latency_ms"]) + [""]
            if report.get("errors"):
                lines += [f"- errors: {count} × {msg}" for msg, count in list(report["errors"].items())[:5]]
                lines.append("")

    lines += [
        "## Latency per stage (ms, p50 / p95)",
        "",
        "| method | split | " + " | ".join(STAGES) + " | load p50 | workers |",
        "|---|---|" + "---:|" * len(STAGES) + "---:|---:|",
    ]
    for (split, method), report in sorted(reports.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        lat = report["latency_ms"]
        cells = [f"{ms(lat.get(s, {}).get('p50'))} / {ms(lat.get(s, {}).get('p95'))}" for s in STAGES]
        load_p50 = (report.get("load_avg_1min") or {}).get("p50")
        workers = (report.get("config") or {}).get("workers") or 1
        cells += [f"{load_p50:.1f}" if isinstance(load_p50, int | float) else "–", str(workers)]
        lines.append(f"| {method} | {split} | " + " | ".join(cells) + " |")
    lines.append("")

    lines += [
        "## Reproduce",
        "",
        "```",
        "kgqa server start   # or point NEO4J_URI/NEO4J_USER/NEO4J_PASSWORD",
        "kgqa load metaqa --path ../shared/data/metaqa",
        invocation,
        "```",
        "",
        "## Exact commands",
        "",
        "```",
    ]
    lines += [commands[key] for key in sorted(commands, key=lambda kv: (kv[1], kv[0]))]
    lines += [
        "```",
        "",
        "Each writes its report (`.json`), per-question answers/evidence/errors (`.jsonl`), a Markdown "
        "table (`.md`) and a chart (`.png`) next to `--out`. Reruns resume from the `.jsonl`.",
        "",
    ]

    lines += [
        "## Machine and versions",
        "",
        "```",
        "$ nproc",
        _shell("nproc"),
        "$ free -h",
        _shell("free -h"),
        "```",
        "",
    ]
    if any_report is not None:
        machine, versions = any_report["machine"], any_report["versions"]
        server = versions.get("server", {})
        lines += [
            f"- CPU: {machine.get('cpu', '?')}; {machine.get('nproc')} cores; "
            f"{machine.get('mem_total_gib')} GiB RAM; {machine.get('platform')}",
            f"- Neo4j {server.get('neo4j')} ({server.get('edition')}), GDS {server.get('gds')}, "
            f"APOC {server.get('apoc')}, kgqa plugin {server.get('kgqa', server.get('kgqa_plugin'))}",
            f"- kgqa {versions.get('kgqa')} at git {versions.get('git')}; Python {versions.get('python')}",
            "- packages: " + ", ".join(f"{k} {v}" for k, v in versions.get("packages", {}).items() if v),
            f"- seed {any_report['seeds'].get('seed')} (see each report's `seeds`)",
            "- machine load while answering (1-min load average, p50 / p95 over questions): "
            + "; ".join(f"{m} {s}: {_load(r)}" for (s, m), r in sorted(reports.items())),
            "- latencies are wall-clock per question on this machine, with the Neo4j server on the "
            "same cores; other work running at the same time inflates them",
            "",
        ]

    lines += ["## Load throughput", ""]
    if load is None:
        lines += [
            "Not recorded yet: run `python bench/load_metaqa.py` and save its output as "
            "`bench/results/load_metaqa.json` (or `.txt`), then rerun this script.",
            "",
        ]
    else:
        lines += [f"From `{load[0]}` (output of `bench/load_metaqa.py`):", "", load[1], ""]

    lines += ["## Methods not run", ""]
    if unavailable:
        lines += [f"- **{m}**: {reason}" for m, reason in sorted(unavailable.items())]
    else:
        lines.append("- none")
    lines += [
        f"- **{m}** ({s}): the run failed: `{reason}` (rerun the script: it resumes)"
        for (s, m), reason in sorted(failures.items())
    ]
    lines += [
        "",
        "## Metric definitions",
        "",
        "Per question, over normalised answer strings (lowercase; accents, punctuation and the "
        "articles a/an/the removed): **Hits@1** first answer is gold; **Hit** any answer is gold; "
        "**precision / recall / F1** over the answer sets (0 for an empty prediction); **AMR**, SG-"
        "RAG's answer matching rate |gold ∩ predicted| / |gold| (mentions in the text for LLM "
        "answers); **evidence answer recall**, gold answers among the entities of the retrieved "
        "triplets; **evidence triple recall**, the KB triples on the gold relation path (BeamQA's "
        "annotation, followed from the topic entity without passing back through it) found among the "
        "retrieved triplets. Aggregates are means over questions (Macro-F1 = mean F1); Micro-F1 uses "
        "summed counts. A question whose method raised an error scores 0 and is counted under errors."
        " Latency is per question, over answered questions; `total` is measured around the whole "
        "call.",
        "",
    ]
    return "\n".join(lines)


# Methods whose model is trained on these splits: the report neither runs nor lists them there.
TRAINED_ON: dict[str, frozenset[str]] = {"gsr": frozenset({"dev"}), "auto": frozenset({"dev"})}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--methods", help="comma-separated methods (default: every available one)")
    parser.add_argument("--splits", default="dev,test", help="comma-separated splits (default dev,test)")
    parser.add_argument("--limit", type=int, help="a seeded sample of N questions per split (quick runs)")
    parser.add_argument(
        "--method-limit",
        action="append",
        default=[],
        metavar="METHOD[:SPLIT]=N",
        help="a sample of N for one method (or one split of it) too slow for the full split (repeatable)",
    )
    parser.add_argument("--k", type=int, default=100)
    parser.add_argument("--llm", default="none")
    parser.add_argument("--results", type=Path, default=REPO / "bench" / "results", help="results folder")
    parser.add_argument("--output", type=Path, default=REPO / "BENCHMARKS.md")
    parser.add_argument("--load-output", type=Path, help="bench/load_metaqa.py output (json or text)")
    parser.add_argument("--skip-run", action="store_true", help="only rebuild BENCHMARKS.md from reports")
    parser.add_argument(
        "--append",
        type=Path,
        action="append",
        default=[],
        metavar="FILE.md",
        help="a bench script's Markdown output to add at the end, as printed (repeatable)",
    )
    parser.add_argument("--no-resume", action="store_true", help="start every run over")
    parser.add_argument(
        "--freeform",
        action="append",
        default=[],
        metavar="NAME=FILE",
        help="a column of held-out Hits@1 from `bench/questions_answers.py --out FILE` (repeatable)",
    )
    parser.add_argument(
        "--rerun",
        action="store_true",
        help="invoke kgqa eval even where a complete report exists (it resumes its JSONL)",
    )
    args = parser.parse_args(argv)

    splits = [s.strip() for s in args.splits.split(",") if s.strip()]
    if any(s not in SPLITS for s in splits):
        parser.error(f"--splits must be among {', '.join(SPLITS)}")
    status = {**method_status(), "auto": ""}  # auto routes among the others (kgqa.qa.routing)
    wanted = [m.strip() for m in args.methods.split(",")] if args.methods else list(status)
    unavailable = {m: status.get(m) or f"unknown method {m!r}" for m in wanted if status.get(m, "?") != ""}
    methods = [m for m in wanted if m not in unavailable]
    # the registry's other methods are listed too, so the page always says what is not implemented yet
    unavailable.update({m: reason for m, reason in status.items() if reason and m not in unavailable})
    not_requested = [m for m, reason in status.items() if not reason and m not in wanted]
    args.results.mkdir(parents=True, exist_ok=True)
    limits: dict[tuple[str, str | None], int] = {}
    for item in args.method_limit:
        name, _, value = item.partition("=")
        method_name, _, split_name = name.strip().partition(":")
        if not value.isdigit() or int(value) < 1 or (split_name and split_name not in SPLITS):
            parser.error(f"--method-limit takes METHOD=N or METHOD:SPLIT=N, got {item!r}")
        limits[(method_name, split_name or None)] = int(value)

    reports: dict[tuple[str, str], dict[str, Any]] = {}
    commands: dict[tuple[str, str], str] = {}
    failures: dict[tuple[str, str], str] = {}
    for method in methods:
        for split in splits:
            if split in TRAINED_ON.get(method, ()):
                continue  # a row there would score the model on its own training questions
            limit = limits.get((method, split), limits.get((method, None), args.limit))
            out = report_path(args.results, split, method, limit)
            cli_args = eval_args(split, method, out, limit, args.k, args.llm, resume=True)
            commands[(split, method)] = "kgqa " + shlex.join(cli_args)
            if not args.skip_run and not (args.no_resume or args.rerun) and _complete(out, limit, args):
                print(f"\n{_rel(out)} is complete; not rerun (use --rerun)", file=sys.stderr)
            elif not args.skip_run:
                ok, last = run_one(
                    eval_args(split, method, out, limit, args.k, args.llm, resume=not args.no_resume)
                )
                if not ok:
                    failures[(split, method)] = last
                    continue
            if out.is_file():
                reports[(split, method)] = json.loads(out.read_text(encoding="utf-8"))
            elif args.skip_run:
                failures[(split, method)] = f"no report at {_rel(out)} (run without --skip-run)"

    chart: Path | None = None
    test_reports = [(m, r) for (s, m), r in sorted(reports.items()) if s == "test"]
    if test_reports:
        series = [series_from_report(r, m) for m, r in test_reports]
        series += [
            Series(
                f"{p.method} (published)",
                {f"{h}-hop": v / 100 for h, v in zip((1, 2, 3), p.hits1, strict=True)},
                {},
                {},
                published=True,
            )
            for p in PUBLISHED
        ]
        chart = render_chart(
            series,
            args.results / "benchmarks.png",
            "MetaQA test — kgqa methods (extractive answers) vs published Hits@1",
        )
    invocation = "python bench/benchmarks_report.py" + (f" --limit {args.limit}" if args.limit else "")
    if args.methods:
        invocation += f" --methods {args.methods}"
    invocation += "".join(f" --method-limit {item}" for item in args.method_limit)
    load = _load_figures(args.load_output)
    unavailable.update({m: "available, not run by this invocation (see --methods)" for m in not_requested})
    freeform: dict[str, dict[str, Any]] = {}
    for item in args.freeform:
        name, _, file = item.partition("=")
        if not file or not Path(file).is_file():
            parser.error(f"--freeform takes NAME=FILE with an existing FILE, got {item!r}")
        freeform[name] = json.loads(Path(file).read_text(encoding="utf-8"))
        invocation += f" --freeform {shlex.quote(item)}"
    invocation += "".join(f" --append {_rel(path)}" for path in args.append)
    text = render(reports, commands, failures, unavailable, chart, load, invocation, freeform)
    for path in args.append:
        # each is a bench script's own output, whose first line names the command that printed it, or a
        # summary of such outputs titled by its first line
        section = path.read_text(encoding="utf-8").strip()
        title, _, rest = section.partition("\n")
        if title.startswith("# "):  # a summary with a title of its own: "## title", then where it came from
            section = f"(`{_rel(path)}`)\n{rest}"
            text = text.rstrip("\n") + f"\n\n## {title[2:].strip()}\n\n{section.strip()}\n"
        else:
            text = text.rstrip("\n") + f"\n\n## {_rel(path)}\n\n{section}\n"
    args.output.write_text(text, encoding="utf-8")
    print(f"wrote {_rel(args.output)}" + (f" and {_rel(chart)}" if chart else ""), file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
