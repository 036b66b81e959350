"""FRAG's latency with the chain vectors a KG's training stored, against embedding each chain when a question
first needs it (what every question that met a new chain waited for before).

    python -m bench.latency.frag_chain_vectors [--kg KG] [--set bench/questions/fb15k_freeform.jsonl]

Runs against the running server, with the KG's models from ``kgqa train all``. Questions: our own question
set about the KG (every part: only time is measured, and whether both ways give the same answers), their topic
entities given. Each question is asked both ways in turn, in alternating order, so that the machine's noise
hits both alike; each way keeps its own process cache across questions, as a server does (``embedded``
starts empty and learns the chains it meets; ``stored`` starts from the KG's stored vectors). The first 5
questions warm up the database and are not counted. Times in ms, FRAG's retrieval (no linking, no answerer).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from kgqa.core.types import LinkedEntity
from kgqa.evaluation.metrics import percentile
from kgqa.graph.connection import open_driver
from kgqa.retrieve import frag_ranking
from kgqa.retrieve.frag import FragConfig, FragRetriever
from rich.console import Console
from rich.progress import track

STDERR = Console(stderr=True)
WARM_UP = 5
WAYS = ("embedded", "stored")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kg", default="fb15k-webqsp")
    parser.add_argument(
        "--set", default="bench/questions/fb15k_freeform.jsonl", help="a question set (JSONL)"
    )
    args = parser.parse_args(argv)
    rows = [
        json.loads(line) for line in Path(args.set).read_text(encoding="utf-8").splitlines() if line.strip()
    ]
    caches = {way: frag_ranking._ChainCache() for way in WAYS}
    times: dict[str, dict[str, list[float]]] = {w: {"frag_rank": [], "retrieval": []} for w in WAYS}
    same = compared = 0
    with open_driver() as driver:
        retrievers = {
            way: FragRetriever(driver, config=FragConfig(stored_chain_vectors=way == "stored"))
            for way in WAYS
        }
        for i, row in enumerate(track(rows, description="FRAG, chain vectors", console=STDERR)):
            topics = [
                LinkedEntity(mid, name, 1.0, "given", name)
                for mid, name in zip(row["topic_ids"], row["topics"], strict=True)
            ]
            answers = {}
            for way in WAYS if i % 2 == 0 else WAYS[::-1]:
                frag_ranking._CHAINS = caches[way]
                evidence = retrievers[way].retrieve(row["question"], args.kg, 100, topics)
                answers[way] = evidence.answer_candidates[:1]
                if i >= WARM_UP:
                    times[way]["frag_rank"].append(evidence.latency_ms.get("frag_rank", 0.0))
                    times[way]["retrieval"].append(sum(evidence.latency_ms.values()))
            if i >= WARM_UP:
                compared += 1
                same += answers["embedded"] == answers["stored"]
    print(f"`python -m bench.latency.frag_chain_vectors --kg {args.kg} --set {args.set}`\n")
    print(
        f"{compared} questions of `{args.set}` (after {WARM_UP} to warm up), topics given, each asked both"
        " ways in alternating order.\n"
    )
    print(
        "| stage | way | p50 ms | p95 ms | max ms | p95 against `embedded` |\n|---|---|---:|---:|---:|---:|"
    )
    for stage in ("frag_rank", "retrieval"):
        base = percentile(times["embedded"][stage], 95)
        for way in WAYS:
            values = times[way][stage]
            p95 = percentile(values, 95)
            print(
                f"| {stage} | {way} | {percentile(values, 50):.1f} | {p95:.1f} | {max(values):.1f} |"
                f" {p95 / base if base else 0:.2f} |"
            )
    print(f"\nThe first answer is the same both ways for {same} of {compared} questions.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
