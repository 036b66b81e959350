"""Answer a hand-written question set with one or more methods and print Hits@1 / Hit per kind and part.

    python -m bench.accuracy.questions_answers --set bench/questions/metaqa_two_entity.jsonl \\
        --methods simgrag,frag
    python -m bench.accuracy.questions_answers --set bench/questions/metaqa_freeform.jsonl --part heldout

The sets (see bench/questions/README.md) carry ``question``, ``answers``, ``kind`` and ``part`` (``tune`` or
``heldout``); report the held-out part, tune on nothing else. Topic entities are linked from the question
text by the system itself, as a user would get them. Hits@1: the first answer is gold; Hit: any answer is.
"""

from __future__ import annotations

import argparse
import inspect
import json
import sys
import time
from collections import defaultdict
from dataclasses import replace
from pathlib import Path
from typing import Any

from kgqa.graph.connection import open_driver
from kgqa.models.frag_ranker import load_ranker
from kgqa.qa.answering import QuestionAnswerer
from kgqa.retrieve.base import Retriever
from kgqa.retrieve.frag import FragConfig, FragRetriever
from kgqa.retrieve.sgrag import SgragRetriever
from kgqa.retrieve.subgraphrag import SubgraphRagRetriever
from neo4j import Driver
from rich.console import Console
from rich.progress import track

from bench.common import CONFIDENCE_BINS, score

STDERR = Console(stderr=True)  # progress on stderr, so that stdout is the report alone


# Ablations: a method's variant as "method:variant" in --methods (the method alone is as shipped).
VARIANTS: dict[str, Any] = {
    "frag:no-hop-preference": lambda d: FragRetriever(d, config=FragConfig(hop_count_ranges=())),
    "frag:every-hop-count": lambda d: FragRetriever(d, config=FragConfig(sure_hop_margin=None)),
    # the kind feature from the encoder alone, as on a KG without labelled questions (same weights)
    "frag:encoded-kinds": lambda d, kg: FragRetriever(d, ranker=replace(load_ranker(kg), asked_steps={})),
    "subgraphrag:every-hop-count": lambda d: SubgraphRagRetriever(d, sure_hop_margin=None),
    "subgraphrag:top-k": lambda d: SubgraphRagRetriever(d, select_walks=False),
    "subgraphrag:walk": lambda d: SubgraphRagRetriever(d, rank_by="walk"),
    "sgrag:no-path-scorer": lambda d: SgragRetriever(d, use_path_scorer=False),
    "sgrag:no-alternatives": lambda d: SgragRetriever(d, try_alternatives=False),
    "sgrag:no-kind-fit": lambda d: SgragRetriever(d, fit_asked_kind=False),
}


def answerer_for(driver: Driver, method: str, kg: str) -> QuestionAnswerer:
    if method not in VARIANTS:
        return QuestionAnswerer(driver, method, kg)
    make = VARIANTS[method]
    takes_kg = len(inspect.signature(make).parameters) == 2
    retriever: Retriever = make(driver, kg) if takes_kg else make(driver)
    return QuestionAnswerer(driver, method.split(":")[0], kg, retriever=retriever)


def run(rows: list[dict[str, Any]], method: str, kg: str) -> list[dict[str, Any]]:
    out = []
    with open_driver() as driver:
        answerer = answerer_for(driver, method, kg)
        for row in track(rows, description=method, transient=True, console=STDERR):
            started = time.perf_counter()
            try:
                result = answerer.ask(row["question"])
                answers, error = list(result.answers), ""
                topics = [e.name for e in result.evidence.topic_entities]
                confidence = result.evidence.confidence
                answered_by = result.evidence.method
            except Exception as exc:  # a failed question is a miss, and is counted
                answers, error, topics, confidence = [], f"{type(exc).__name__}: {exc}", [], None
                answered_by = ""
            hits1, hit = score(answers, row["answers"])
            out.append(
                {
                    "id": row["id"],
                    "kind": row["kind"],
                    "part": row["part"],
                    "hits1": hits1,
                    "hit": hit,
                    "answers": answers[:5],
                    "topics": topics,
                    "confidence": confidence,
                    "method": answered_by,
                    "error": error,
                    "ms": (time.perf_counter() - started) * 1000,
                }
            )
    return out


def table(results: dict[str, list[dict[str, Any]]]) -> str:
    methods = list(results)
    groups: dict[tuple[str, str], dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for method, rows in results.items():
        for r in rows:
            for key in ((r["kind"], r["part"]), (r["kind"], "all"), ("all", r["part"]), ("all", "all")):
                groups[key][method].append(r)
    head = "| kind | part | n | " + " | ".join(f"{m} Hits@1 / Hit" for m in methods) + " |"
    lines = [head, "|---|---|---:|" + "---:|" * len(methods)]
    for (kind, part), by_method in sorted(groups.items(), key=lambda kv: (kv[0][0] == "all", kv[0])):
        n = len(next(iter(by_method.values())))
        cells = []
        for m in methods:
            rows = by_method[m]
            hits1 = 100 * sum(r["hits1"] for r in rows) / len(rows)
            hit = 100 * sum(r["hit"] for r in rows) / len(rows)
            cells.append(f"{hits1:.1f} / {hit:.1f}")
        lines.append(f"| {kind} | {part} | {n} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def reliability(results: dict[str, list[dict[str, Any]]]) -> str:
    """Per method that says how sure it is: how often its first answer is right, by its confidence."""
    lines = []
    for method, rows in results.items():
        scored = [r for r in rows if r.get("confidence") is not None and r["answers"]]
        if not scored:
            continue
        lines += [
            f"\n{method}: first answer right, by confidence\n",
            "| confidence | n | right |",
            "|---|---:|---:|",
        ]
        for low, high in zip(CONFIDENCE_BINS, CONFIDENCE_BINS[1:], strict=False):
            chosen = [r for r in scored if low <= r["confidence"] < high]
            if chosen:
                right = 100 * sum(r["hits1"] for r in chosen) / len(chosen)
                lines.append(f"| {low:.1f}-{min(high, 1.0):.1f} | {len(chosen)} | {right:.1f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", type=Path, required=True, help="a JSONL question set")
    parser.add_argument("--methods", default="simgrag")
    parser.add_argument("--kg", default="metaqa")
    parser.add_argument("--part", choices=("tune", "heldout", "all"), default="all")
    parser.add_argument("--out", type=Path, help="write every answer here (JSON)")
    args = parser.parse_args(argv)
    rows = []
    for number, line in enumerate(args.set.read_text(encoding="utf-8").splitlines(), start=1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except ValueError as exc:
                print(f"{args.set}:{number}: not JSON ({exc})", file=sys.stderr)
                return 1
    if args.part != "all":
        rows = [r for r in rows if r["part"] == args.part]
    results = {m: run(rows, m, args.kg) for m in args.methods.split(",")}
    command = f"python -m bench.accuracy.questions_answers --set {args.set} --methods {args.methods}"
    command += f" --kg {args.kg} --part {args.part}" if args.kg else f" --part {args.part}"
    print(f"`{command}`\n")
    print(table(results))
    print(reliability(results))
    for method, answered in results.items():
        errors = [r for r in answered if r["error"]]
        if errors:
            print(f"\n{method}: {len(errors)} errors, first: {errors[0]['error']}")
    if args.out:
        saved: dict[str, Any] = {"_command": command, **results}
        args.out.write_text(json.dumps(saved, indent=1, ensure_ascii=False), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
