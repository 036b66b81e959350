"""SimGRAG matching latency inside the database: ``kgqa.simgrag.match`` timed per pattern, p50 / p95.

    python -m bench.latency.simgrag metaqa [--n 100]           # the running server's MetaQA KG
    python -m bench.latency.simgrag synthetic [--entities 1000000 --triples 3000000]

``metaqa``: the offline patterns of N MetaQA dev questions per hop (``kgqa.simgrag.pattern``), their known
nodes pinned to the linked entities as ``kgqa ask`` does, matched with pruning on and, as the baseline
measured in the same run, off; the time is the whole procedure call seen from the client (Bolt round trip
included).
Directed and undirected matching are compared on the same questions (Hits@1 through the question-answering
layer).

``synthetic``: a random KG of ``--entities`` entities and ``--triples`` facts over 40 relations
(DBpedia-shaped N-Triples written by :func:`generate` outside the repository, bulk-loaded into a private
server, relation texts embedded; entity names are not, as the patterns pin their known nodes), and random
1-, 2- and 3-hop chains of it as patterns. The scale issue reuses this mode.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time
from pathlib import Path
from typing import Any

from kgqa.core.config import shared_data_dir
from kgqa.core.text import normalize_answer
from kgqa.evaluation.metaqa import read_questions
from kgqa.graph.connection import open_driver
from kgqa.graph.cypher import render
from kgqa.qa.answering import QuestionAnswerer
from kgqa.retrieve.simgrag import SimGragRetriever
from neo4j import Driver, RoutingControl
from rich.console import Console
from rich.progress import track

from bench.common import kgqa

STDERR = Console(stderr=True)  # progress on stderr, so that stdout is the report alone

MATCH = render("simgrag/match")
RELATION_TEXTS = "MATCH (r:Relation {kg: $kg}) RETURN r.name AS name, coalesce(r.text, r.name) AS text"
Patterns = dict[str, list[tuple[list[list[str]], dict[str, list[str]]]]]
PATTERN = "CALL kgqa.simgrag.pattern($question, {kg: $kg}) YIELD edges, entities RETURN edges, entities"
DBR = "http://dbpedia.org/resource/"
DBO = "http://dbpedia.org/ontology/"
LABEL = "http://www.w3.org/2000/01/rdf-schema#label"


def generate(path: Path, triples: int, entities: int, seed: int = 7) -> None:
    """``triples`` distinct random facts between ``entities`` entities over 40 relations, one label each."""
    rng = random.Random(seed)
    relations = [f"{DBO}syntheticRelation{i}" for i in range(40)]
    seen: set[tuple[int, int, int]] = set()
    with open(path, "w", encoding="utf-8") as out:
        for e in range(entities):
            out.write(f'<{DBR}Entity_{e}> <{LABEL}> "Synthetic entity {e}"@en .\n')
        while len(seen) < triples:
            fact = (rng.randrange(entities), rng.randrange(len(relations)), rng.randrange(entities))
            if fact in seen:
                continue
            seen.add(fact)
            h, r, t = fact
            out.write(f"<{DBR}Entity_{h}> <{relations[r]}> <{DBR}Entity_{t}> .\n")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def time_match(driver: Driver, pattern: list[list[str]], config: dict[str, Any]) -> tuple[float, int]:
    began = time.perf_counter()
    records = driver.execute_query(
        MATCH, {"pattern": pattern, "config": config}, routing_=RoutingControl.READ
    ).records
    ms = (time.perf_counter() - began) * 1000
    return ms, int(records[0]["expansions"]) if records else 0


def report(rows: dict[str, dict[str, list[float]]]) -> None:
    print(
        "| patterns | n | pruned p50 ms | p95 ms | unpruned p50 ms | p95 ms | p50 ratio"
        " | expansions pruned / unpruned |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, r in rows.items():
        ratio = percentile(r["plain"], 0.5) / max(percentile(r["pruned"], 0.5), 1e-9)
        print(
            f"| {name} | {len(r['pruned'])} | {percentile(r['pruned'], 0.5):.1f}"
            f" | {percentile(r['pruned'], 0.95):.1f}"
            f" | {percentile(r['plain'], 0.5):.1f} | {percentile(r['plain'], 0.95):.1f} | {ratio:.2f}x"
            f" | {statistics.mean(r['exp_pruned']):.0f} / {statistics.mean(r['exp_plain']):.0f} |"
        )


def run_patterns(
    driver: Driver, kg: str, patterns: dict[str, list[tuple[list[list[str]], dict[str, list[str]]]]]
) -> None:
    rows: dict[str, dict[str, list[float]]] = {}
    for name, items in patterns.items():
        r: dict[str, list[float]] = {"pruned": [], "plain": [], "exp_pruned": [], "exp_plain": []}
        for edges, pins in track(items, description=name, transient=True, console=STDERR):
            for prune, key in ((True, "pruned"), (False, "plain")):
                config = {"kg": kg, "k": 3, "prune": prune, "entities": pins}
                ms, expansions = time_match(driver, edges, config)
                r[key].append(ms)
                r["exp_" + key].append(expansions)
        rows[name] = r
    report(rows)


def metaqa(args: argparse.Namespace) -> None:
    rng = random.Random(args.seed)
    with open_driver() as driver:
        patterns: Patterns = {}
        sampled = {}
        for hop in (1, 2, 3):
            pool = read_questions("dev", hop, root=shared_data_dir() / "metaqa")
            sampled[hop] = rng.sample(pool, args.n)
            items = []
            for q in sampled[hop]:
                rec = driver.execute_query(PATTERN, {"question": q.question, "kg": args.kg}).records[0]
                pins = {node: [entity] for node, entity in rec["entities"].items()}
                items.append((rec["edges"], pins))
            for edges, pins in items[:3]:  # warm-up: the encoder and the page cache
                time_match(driver, edges, {"kg": args.kg, "entities": pins})
            patterns[f"MetaQA {hop}-hop"] = items
        print(
            f"`python -m bench.latency.simgrag metaqa --n {args.n}`, load average {os.getloadavg()[0]:.1f}\n"
        )
        run_patterns(driver, args.kg, patterns)
        print("\nDirection (Hits@1 on the same dev questions, through the question-answering layer):\n")
        print("| hops | undirected (default) | directed |\n|---|---:|---:|")
        for hop, questions in sampled.items():
            cells = []
            for directed in (False, True):
                qa = QuestionAnswerer(
                    driver, kg=args.kg, retriever=SimGragRetriever(driver, directed=directed)
                )
                hits = 0
                for q in questions:
                    answers = qa.ask(q.question).answers
                    hits += bool(answers) and normalize_answer(answers[0]) in {
                        normalize_answer(a) for a in q.answers
                    }
                cells.append(f"{100 * hits / len(questions):.1f}")
            print(f"| {hop} | {cells[0]} | {cells[1]} |")


def synthetic(args: argparse.Namespace) -> None:
    kg = f"synthetic-{args.entities}-{args.triples}"
    from kgqa.loaders.embeddings import default_embedder, embed_relations  # noqa: PLC0415

    if not args.file.exists():
        began = time.monotonic()
        partial = args.file.with_suffix(".partial")  # a run stopped half way leaves no file that looks whole
        generate(partial, args.triples, args.entities)
        partial.rename(args.file)
        print(f"generated {args.file} in {time.monotonic() - began:.0f}s")
    env = {"KGQA_HOME": str(args.home), "KGQA_BOLT_PORT": str(args.port), "NEO4J_URI": ""}
    kgqa("server", "start", env=env)
    try:
        os.environ.update(env)
        os.environ.pop("NEO4J_URI", None)
        with open_driver() as driver:
            loaded = driver.execute_query("MATCH (k:KG {name: $kg}) RETURN k.status AS s", kg=kg).records
            if not loaded or loaded[0]["s"] != "complete":
                began = time.monotonic()
                kgqa(
                    "load",
                    "dbpedia",
                    "--path",
                    str(args.file),
                    "--kg",
                    kg,
                    "--bulk",
                    "--force",
                    "--no-embeddings",
                    env=env,
                )
                print(f"bulk-loaded in {time.monotonic() - began:.0f}s")
            embed_relations(driver, kg, default_embedder(), missing_only=True)
            counts = driver.execute_query(
                "MATCH (e:Entity {kg: $kg}) RETURN count(e) AS n", kg=kg, routing_=RoutingControl.READ
            ).records[0]["n"]
            texts = {
                r["name"]: r["text"]
                for r in driver.execute_query(
                    RELATION_TEXTS,
                    kg=kg,
                    routing_=RoutingControl.READ,
                ).records
            }
            time.sleep(30)  # let the load's after-effects (page cache, GC) settle before timing
            rng = random.Random(args.seed)
            patterns: Patterns = {}
            for hops in (1, 2, 3):
                ids = [f"{DBR}Entity_{rng.randrange(args.entities)}" for _ in range(args.n * 20)]
                chains = driver.execute_query(
                    render("bench/simgrag_chains", hops=hops),
                    {"kg": kg, "ids": ids, "limit": args.n * 200},
                ).records
                by_start: dict[str, list[str]] = {}
                for c in chains:
                    by_start.setdefault(c["id"], c["types"])
                items = []
                for start, types in list(by_start.items())[: args.n]:
                    edges, node = [], "start"
                    for i, t in enumerate(types):
                        nxt = "UNKNOWN answer" if i == len(types) - 1 else f"UNKNOWN {i + 1}"
                        edges.append([node, texts[t], nxt])
                        node = nxt
                    items.append((edges, {"start": [start]}))
                patterns[f"synthetic {hops}-hop"] = items
            print(
                f"`python -m bench.latency.simgrag synthetic --entities {args.entities}"
                f" --triples {args.triples}`: {counts:,} entities, load average {os.getloadavg()[0]:.1f}\n"
            )
            run_patterns(driver, kg, patterns)
    finally:
        kgqa("server", "stop", env=env)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=("metaqa", "synthetic"))
    parser.add_argument("--n", type=int, default=100, help="patterns per hop count")
    parser.add_argument("--kg", default="metaqa")
    parser.add_argument("--seed", type=int, default=11)
    # entities that end up in no fact are not loaded: 1,010,000 drawn leave a little over a million
    parser.add_argument("--entities", type=int, default=1_010_000)
    parser.add_argument("--triples", type=int, default=3_000_000)
    parser.add_argument("--file", type=Path, help="default: /tmp/kgqa-synthetic-<entities>-<triples>.nt")
    parser.add_argument("--home", type=Path, default=Path("/tmp/kgqa-bench-simgrag"))
    parser.add_argument("--port", type=int, default=7703)
    args = parser.parse_args(argv)
    if args.file is None:
        args.file = Path(f"/tmp/kgqa-synthetic-{args.entities}-{args.triples}.nt")
    (metaqa if args.mode == "metaqa" else synthetic)(args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
