"""Every method's latency at a million entities beside MetaQA, in one run: p50 / p95 per question, total and
per stage, with Hits@1, and the private server's memory at that size.

    python -m bench.load.bulk_synthetic --entities 1000000 --triples 10000000 --kg synthetic-1m \\
        --home /tmp/kgqa-bench-scale --port 7704 --embeddings fast --models-from /root/.kgqa-test \\
        --keep-server
    KGQA_HOME=/tmp/kgqa-bench-scale KGQA_BOLT_PORT=7704 kgqa train all --kg synthetic-1m   # its own models
    KGQA_HOME=/root/.kgqa-test KGQA_BOLT_PORT=7697 python -m bench.latency.at_scale --n 100 \\
        --home /tmp/kgqa-bench-scale --port 7704 --kg synthetic-1m [--methods sgrag,frag,...] [--keep-server]

Every question goes through :class:`~kgqa.qa.answering.QuestionAnswerer`, the path `kgqa ask --llm none`
takes, on (a) the KG ``metaqa`` of the server that ``KGQA_HOME`` / ``KGQA_BOLT_PORT`` name (MetaQA dev
questions, never test) and (b) the synthetic Freebase-shaped KG of ``bench/load/synthetic_kg.py`` in a private
server (``--home``, ``--port``), loaded beforehand by ``bench.load.bulk_synthetic`` as above. Its questions
come from the generator's own paths, regenerated from the same seed with more per chain when the dump's file
has too few. Methods run one after the other and, for each method, MetaQA then the synthetic KG, so both
sides share the machine's load. Both KGs are asked with the topic entity in brackets, as MetaQA's files have
it; the linker on free text (no brackets) is timed apart. A method that refuses a KG (one without its own
models, which ``kgqa train all --kg KG`` makes) is reported with its one-line reason. Nothing is written
inside the repository; ``--out`` (under /tmp) keeps every answer's latencies as JSON.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import random
import re
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kgqa.core.config import shared_data_dir
from kgqa.core.errors import KgqaError
from kgqa.evaluation.metaqa import read_questions
from kgqa.evaluation.metrics import percentile, score_answers
from kgqa.graph.connection import open_driver
from kgqa.qa.answering import STAGES, QuestionAnswerer
from kgqa.retrieve.linking import link_entities
from neo4j import Driver, RoutingControl
from neo4j.exceptions import Neo4jError
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from bench.load import synthetic_kg

# a query that names a relation type the KG lacks makes the server warn on every call
logging.getLogger("neo4j.notifications").setLevel(logging.ERROR)
STDERR = Console(stderr=True)  # progress on stderr, so that stdout is the report alone
METHODS = ("sgrag", "frag", "subgraphrag", "simgrag", "gsr", "cosine", "auto")
WARM_UP = 3  # questions per method and KG asked before timing: the encoder, the plugin's caches, the JIT
PER_CHAIN = 100  # synthetic questions made per relation chain when the dump's own file is too small


@dataclass(frozen=True)
class Question:
    text: str
    answers: tuple[str, ...]
    hops: int
    free_text: str  # without brackets, for the linker on its own


@dataclass
class Outcome:
    latencies: list[dict[str, float]] = field(default_factory=list)
    hits1: list[float] = field(default_factory=list)
    answered: int = 0
    refused: Counter[str] = field(default_factory=Counter)  # one-line reasons of KgqaErrors
    unanswered: Counter[str] = field(default_factory=Counter)  # why an answer came back empty


def metaqa_questions(n: int, seed: int) -> list[Question]:
    rng = random.Random(seed)
    out = []
    for hops in (1, 2, 3):
        pool = read_questions("dev", hops, root=shared_data_dir() / "metaqa")
        for q in rng.sample(pool, n):
            out.append(Question(q.question, q.answers, hops, q.question.replace("[", "").replace("]", "")))
    return out


def synthetic_questions(directory: Path, entities: int, triples: int, n: int, seed: int) -> list[Question]:
    """``n`` per hop count, the topic bracketed; regenerated (same seed, same graph) when too few."""
    path = directory / "questions.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    if min(Counter(r["hops"] for r in rows).get(h, 0) for h in (1, 2, 3)) < n:
        path = directory / f"questions-{PER_CHAIN}-per-chain.jsonl"
        if not path.exists():
            STDERR.print(f"regenerating the synthetic graph in memory for {path.name}")
            kg = synthetic_kg.generate(entities, triples)
            chains = len(synthetic_kg.PHRASINGS)
            made = synthetic_kg.questions(kg, PER_CHAIN * chains, seed=7)
            partial = path.with_suffix(".partial")
            partial.write_text("".join(json.dumps(q) + "\n" for q in made))
            partial.rename(path)
        rows = [json.loads(line) for line in path.read_text().splitlines()]
    rng = random.Random(seed)
    out = []
    for hops in (1, 2, 3):
        pool = [r for r in rows if r["hops"] == hops]
        for r in rng.sample(pool, min(n, len(pool))):
            topic = r["topic"]
            text = re.sub(re.escape(topic), f"[{topic}]", r["question"], count=1)
            out.append(Question(text, tuple(r["answers"]), hops, r["question"]))
    return out


def one_line(exc: Exception) -> str:
    text = (exc.message if isinstance(exc, Neo4jError) else None) or str(exc)
    return text.splitlines()[0][:240] if text else type(exc).__name__


# A procedure that refuses a KG (a scorer trained on another encoder's vectors) fails its call: a refusal too.
REFUSALS = (KgqaError, Neo4jError)


def run_method(
    method: str, driver: Driver, kg: str, questions: list[Question], progress: Progress, task: Any
) -> Outcome:
    outcome = Outcome()
    try:
        qa = QuestionAnswerer(driver, method=method, kg=kg, llm="none")
    except REFUSALS as exc:
        outcome.refused[one_line(exc)] = len(questions)
        progress.advance(task, len(questions) + WARM_UP)
        return outcome
    for q in questions[:WARM_UP]:
        try:
            qa.ask(q.text)
        except REFUSALS:
            pass  # counted below, when timed
        progress.advance(task)
    for q in questions:
        try:
            result = qa.ask(q.text)
        except REFUSALS as exc:
            outcome.refused[one_line(exc)] += 1
        else:
            outcome.latencies.append(result.latency_ms)
            outcome.answered += bool(result.answers)
            if not result.answers:
                why = result.answer.reason or result.evidence.reason or "no answer"
                outcome.unanswered[re.sub(r"\[.*\]|'[^']*'", "…", why)[:160]] += 1
            outcome.hits1.append(score_answers(result.answers, q.answers).hits1)
        progress.advance(task)
    return outcome


def time_linking(driver: Driver, kg: str, questions: list[Question]) -> list[float]:
    times = []
    for q in questions:
        began = time.perf_counter()
        link_entities(driver, q.free_text, kg)
        times.append((time.perf_counter() - began) * 1000)
    return times


def p(values: list[float], q: float) -> str:
    return f"{percentile(values, q):,.1f}" if values else "–"


def stage_order(outcomes: list[Outcome]) -> list[str]:
    seen: dict[str, None] = dict.fromkeys(STAGES)
    for o in outcomes:
        for lat in o.latencies:
            seen.update(dict.fromkeys(lat))
    return [s for s in seen if s != "total"] + ["total"]


def report_method(method: str, small: Outcome, large: Outcome, n_small: int, n_large: int) -> list[str]:
    lines = [f"\n#### {method}\n"]
    for name, o, n in (("MetaQA", small, n_small), ("1M", large, n_large)):
        if o.refused:
            reasons = "; ".join(f"{count}× {why}" for why, count in o.refused.most_common(3))
            lines.append(f"- {name}: refused {sum(o.refused.values())} of {n}: {reasons}")
        if o.unanswered:
            reasons = "; ".join(f"{count}× {why}" for why, count in o.unanswered.most_common(3))
            lines.append(f"- {name}: no answer to {sum(o.unanswered.values())} of {n}: {reasons}")
    if not small.latencies and not large.latencies:
        return lines
    lines.append("")
    lines += [
        "| stage | n MetaQA / 1M | MetaQA p50 ms | MetaQA p95 ms | 1M p50 ms | 1M p95 ms | p95 ratio |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for stage in stage_order([small, large]):
        a = [lat[stage] for lat in small.latencies if stage in lat]
        b = [lat[stage] for lat in large.latencies if stage in lat]
        ratio = f"{percentile(b, 95) / percentile(a, 95):.1f}×" if a and b and percentile(a, 95) > 0 else "–"
        lines.append(
            f"| {stage} | {len(a)} / {len(b)} | {p(a, 50)} | {p(a, 95)} | {p(b, 50)} | {p(b, 95)} | {ratio} |"
        )
    return lines


def summary_row(method: str, small: Outcome, large: Outcome, n_small: int, n_large: int) -> str:
    a = [lat["total"] for lat in small.latencies]
    b = [lat["total"] for lat in large.latencies]
    ratio = f"{percentile(b, 95) / percentile(a, 95):.1f}×" if a and b else "–"

    def hits(o: Outcome, n: int) -> str:
        return f"{100 * sum(o.hits1) / n:.1f}" if o.latencies else "refused"

    def answered(o: Outcome, n: int) -> str:
        return f"{o.answered}/{n}"

    return (
        f"| {method} | {p(a, 50)} | {p(a, 95)} | {p(b, 50)} | {p(b, 95)} | {ratio} | {hits(small, n_small)}"
        f" | {hits(large, n_large)} | {answered(small, n_small)} | {answered(large, n_large)} |"
    )


# ----------------------------------------------------------------------------- the private server's memory
def jmx_memory(driver: Driver) -> dict[str, int]:
    """Bytes: heap in use now, and the peak of G1's old generation (what stays alive across collections)."""
    heap = driver.execute_query(
        "CALL dbms.queryJmx('java.lang:type=Memory') YIELD attributes "
        "RETURN attributes.HeapMemoryUsage.value.properties.used AS used",
        routing_=RoutingControl.READ,
    ).records
    old = driver.execute_query(
        "CALL dbms.queryJmx('java.lang:type=MemoryPool,*') YIELD name, attributes "
        "WHERE name CONTAINS 'Old Gen' "
        "RETURN attributes.PeakUsage.value.properties.used AS peak,"
        " attributes.CollectionUsage.value.properties.used AS after_gc",
        routing_=RoutingControl.READ,
    ).records
    out = {"heap_used": int(heap[0]["used"])} if heap else {}
    if old:
        out["old_gen_peak"] = int(old[0]["peak"])
        out["old_gen_after_gc"] = int(old[0]["after_gc"] or 0)
    return out


def store_sizes(home: Path) -> dict[str, int]:
    """Bytes on disk of the server's database, by what holds them: the page cache maps the record stores and
    the range/lookup indexes; the full-text and vector indexes are Lucene files the OS caches instead."""
    root = home / "neo4j" / "data" / "databases" / "neo4j"
    sizes: Counter[str] = Counter()
    for path in root.rglob("*"):
        if not path.is_file():
            continue
        parts = path.relative_to(root).parts
        if parts[0] == "schema" and len(parts) > 2 and parts[2].startswith(("fulltext", "vector")):
            sizes["lucene (full-text, vector)"] += path.stat().st_size
        elif parts[0] == "schema":
            sizes["native indexes (range, lookup)"] += path.stat().st_size
        elif "property" in parts[-1] or "array" in parts[-1] or "string" in parts[-1]:
            sizes["property stores"] += path.stat().st_size
        else:
            sizes["node, relationship and other stores"] += path.stat().st_size
    tx = home / "neo4j" / "data" / "transactions" / "neo4j"
    sizes["transaction logs"] = sum(f.stat().st_size for f in tx.rglob("*") if f.is_file())
    return dict(sizes)


def conf_memory(home: Path) -> dict[str, str]:
    conf = (home / "neo4j" / "conf" / "neo4j.conf").read_text()
    return dict(re.findall(r"^(server\.memory\.[\w.]+)=(\S+)", conf, re.M))


def kgqa_cli(*args: str, env: dict[str, str]) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "kgqa.cli", *args], capture_output=True, text=True, env={**os.environ, **env}
    )
    if proc.returncode != 0:
        sys.exit(f"kgqa {' '.join(args)} failed: {proc.stderr.strip()[-2000:]}")


# ----------------------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100, help="questions per hop count and KG")
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--metaqa-kg", default="metaqa")
    ap.add_argument("--kg", default="synthetic-1m", help="the synthetic KG in the private server")
    ap.add_argument("--entities", type=int, default=1_000_000)
    ap.add_argument("--triples", type=int, default=10_000_000)
    ap.add_argument("--dir", type=Path, help="default /tmp/kgqa-synthetic-<entities>-<triples>")
    ap.add_argument("--home", type=Path, default=Path("/tmp/kgqa-bench-scale"))
    ap.add_argument("--port", type=int, default=7704)
    ap.add_argument("--seed", type=int, default=17)
    ap.add_argument("--keep-server", action="store_true")
    ap.add_argument(
        "--no-warm-up",
        action="store_true",
        help="skip loading the private server's store into its page cache first (apoc.warmup.run)",
    )
    ap.add_argument("--out", type=Path, default=Path("/tmp/kgqa-latency-at-scale.json"))
    args = ap.parse_args(argv)
    directory = args.dir or Path(f"/tmp/kgqa-synthetic-{args.entities}-{args.triples}")
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    small_qs = metaqa_questions(args.n, args.seed)
    large_qs = synthetic_questions(directory, args.entities, args.triples, args.n, args.seed)

    env = {"KGQA_HOME": str(args.home), "KGQA_BOLT_PORT": str(args.port), "NEO4J_URI": ""}
    kgqa_cli("server", "start", env=env)
    password = (args.home / "neo4j-password").read_text().strip()
    small_db = open_driver()  # the MetaQA server, as KGQA_HOME / KGQA_BOLT_PORT / NEO4J_* say
    large_db = open_driver(f"bolt://127.0.0.1:{args.port}", "neo4j", password)
    try:
        counts = large_db.execute_query(
            "MATCH (k:KG {name: $kg}) RETURN k.status AS status, k.embedding_model AS model",
            kg=args.kg,
            routing_=RoutingControl.READ,
        ).records
        if not counts or counts[0]["status"] != "complete":
            sys.exit(
                f"KG {args.kg!r} is not loaded at port {args.port}: "
                "run python -m bench.load.bulk_synthetic first"
            )
        entities = large_db.execute_query(
            "MATCH (e:Entity {kg: $kg}) RETURN count(e) AS n", kg=args.kg, routing_=RoutingControl.READ
        ).records[0]["n"]
        warmed = ""
        if not args.no_warm_up:
            # A server that has answered for a while holds its hot pages; one just started holds none, and
            # whichever method ran first paid for reading them (sgrag's p95 doubled in a cold run).
            began = time.monotonic()
            row = large_db.execute_query("CALL apoc.warmup.run(true, true, true)").records[0].data()
            pages = sum(v for key, v in row.items() if key.endswith("Pages") and isinstance(v, int))
            size = pages * int(row.get("pageSize") or 8192)
            warmed = f", store warmed into the page cache first ({size / 2**20:,.0f} MiB of pages read"
            warmed += f" in {time.monotonic() - began:.0f} s, apoc.warmup.run)"
        memory_before = jmx_memory(large_db)
        results: dict[str, tuple[Outcome, Outcome]] = {}
        total = len(methods) * (len(small_qs) + len(large_qs) + 2 * WARM_UP) + len(small_qs) + len(large_qs)
        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        began = time.monotonic()
        with Progress(*columns, console=STDERR) as progress:
            task = progress.add_task("asking", total=total)
            for method in methods:
                progress.update(task, description=f"{method} MetaQA")
                small = run_method(method, small_db, args.metaqa_kg, small_qs, progress, task)
                progress.update(task, description=f"{method} 1M")
                large = run_method(method, large_db, args.kg, large_qs, progress, task)
                results[method] = (small, large)
            progress.update(task, description="linking free text")
            link_small = time_linking(small_db, args.metaqa_kg, small_qs)
            link_large = time_linking(large_db, args.kg, large_qs)
            progress.advance(task, len(small_qs) + len(large_qs))
        wall = time.monotonic() - began
        memory_after = jmx_memory(large_db)
    finally:
        small_db.close()
        large_db.close()
        if not args.keep_server:
            kgqa_cli("server", "stop", env=env)

    print(
        f"`python -m bench.latency.at_scale --n {args.n} --kg {args.kg} --home {args.home}"
        f" --port {args.port}`:"
        f" MetaQA `{args.metaqa_kg}` (dev, {len(small_qs)} questions) vs `{args.kg}` ({entities:,} entities,"
        f" {len(large_qs)} questions from the generator's paths), extractive answers, {wall / 60:.1f} min,"
        f" cpus {os.cpu_count()}, load average at the end {os.getloadavg()[0]:.1f}{warmed}\n"
    )
    print(
        "| method | MetaQA p50 ms | MetaQA p95 ms | 1M p50 ms | 1M p95 ms | p95 ratio | MetaQA Hits@1"
        " | 1M Hits@1 | MetaQA answered | 1M answered |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for method, (small, large) in results.items():
        print(summary_row(method, small, large, len(small_qs), len(large_qs)))
    print("\nLinking alone, on free text (no brackets):\n")
    print("| KG | p50 ms | p95 ms |\n|---|---:|---:|")
    print(f"| MetaQA | {p(link_small, 50)} | {p(link_small, 95)} |")
    print(f"| 1M | {p(link_large, 50)} | {p(link_large, 95)} |")
    print("\nPer stage (ms; sub-stages as each retriever records them, inside `retrieval`):")
    for method, (small, large) in results.items():
        print("\n".join(report_method(method, small, large, len(small_qs), len(large_qs))))
    print("\nThe private server at this size:\n")
    for key, value in conf_memory(args.home).items():
        print(f"- `{key}={value}`")
    for name, size in store_sizes(args.home).items():
        print(f"- {name}: {size / 2**20:,.0f} MiB")
    for when, mem in (("before the questions", memory_before), ("after them", memory_after)):
        print(
            f"- heap {when}: {mem.get('heap_used', 0) / 2**20:,.0f} MiB in use,"
            f" G1 old generation peak {mem.get('old_gen_peak', 0) / 2**20:,.0f} MiB,"
            f" after its last collection {mem.get('old_gen_after_gc', 0) / 2**20:,.0f} MiB"
        )
    raw = {
        m: {
            side: {"latency_ms": o.latencies, "hits1": o.hits1, "refused": dict(o.refused)}
            for side, o in (("metaqa", s), ("synthetic", b))
        }
        for m, (s, b) in results.items()
    }
    args.out.write_text(
        json.dumps({"results": raw, "linking": {"metaqa": link_small, "synthetic": link_large}})
    )
    print(f"\n(every latency: {args.out})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
