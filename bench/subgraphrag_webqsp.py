"""SubgraphRAG on WebQSP (Freebase names as relations): answer and triple recall of the in-DB retriever.

The KG is the one ``kgqa load freebase --path ../shared/data/webqsp/...`` builds from SubgraphRAG's
per-question GPT-labelled triples (KG name ``webqsp`` by default). Those are only the triples judged relevant,
not RoG's full 2-hop subgraphs, so the numbers are not comparable one to one with SubgraphRAG's published
answer recall@100 of 0.944 on WebQSP (printed as the reference point). The cosine baseline runs in the same
pass. ``--models`` names the scorers compared: ``own`` is the KG's own (``kgqa train all --kg webqsp``), any
other name a scorer installed by that name (``kgqa train subgraphrag --kg KG --name NAME``), e.g. one trained
on MetaQA: zero-shot transfer.

    python bench/subgraphrag_webqsp.py --kg webqsp [--models own,NAME] --out /tmp/sgr-webqsp.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
from kgqa.core.text import normalize_answer
from kgqa.evaluation.datasets import load_dataset
from kgqa.graph.connection import open_driver
from kgqa.training.subgraphrag_data import KgIndex, load_kg_index, load_local_graph
from subgraphrag_common import (
    COSINE,
    Tally,
    embed_questions,
    gold_for,
    markdown_table,
    question_metrics,
    run_cosine,
    run_model,
)
from tqdm import tqdm

PUBLISHED_ANSWER_RECALL_AT_100 = 0.944  # SubgraphRAG (Li et al., 2024), WebQSP, K = 100
OWN = "own"  # --models: the KG's own scorer; any other name, one installed by that name


def topic_ids_for(index: KgIndex, topics: tuple[tuple[str, str], ...]) -> list[str]:
    """Entity ids for the dataset's (mid, name) topic pairs: by id first, else every entity of that name."""
    found: list[str] = []
    for mid, name in topics:
        if index.has_entity(mid):
            found.append(mid)
        else:
            found += [index.entity_ids[i] for i in index.entities_named(name)]
    return list(dict.fromkeys(found))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kg", default="webqsp")
    ap.add_argument("--models", default=OWN, help=f"comma-separated; {OWN}: the KG's own scorer")
    ap.add_argument("--no-cosine", action="store_true")
    ap.add_argument("--hops", type=int, default=2)
    ap.add_argument("--ks", default="50,100,200")
    ap.add_argument("--max-candidates", type=int, default=20000)
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--data", type=Path, default=None, help="WebQSP folder (default ../shared/data/webqsp)")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    ks = sorted(int(k) for k in args.ks.split(","))
    models = [m for m in args.models.split(",") if m]

    dataset = load_dataset("webqsp", "test", args.data, limit=args.limit)
    driver = open_driver()
    index = load_kg_index(driver, args.kg)
    graph = load_local_graph(driver, index)
    vectors = embed_questions([q.question for q in dataset.questions])
    tally = Tally()
    unlinked = 0
    ceiling: list[float] = []
    by_name: dict[str, list[int]] = {}
    for i, name in enumerate(index.entity_names):
        by_name.setdefault(normalize_answer(name), []).append(i)
    began = time.perf_counter()
    for i, q in enumerate(tqdm(dataset.questions, desc="questions", unit="q", disable=None)):
        topic_ids = topic_ids_for(index, q.topic_entities)
        if not topic_ids:
            unlinked += 1
            continue
        answer_idx = sorted({j for a in q.answers for j in by_name.get(normalize_answer(a), [])})
        gold = gold_for(graph, index, topic_ids, answer_idx, q.answers, args.hops)
        n_answers = len({normalize_answer(a) for a in q.answers})
        in_candidates = {normalize_answer(index.entity_names[j]) for j in answer_idx}
        ceiling.append(min(1.0, gold.answers_in_candidates and len(in_candidates) / max(1, n_answers)))
        topic_names = [index.entity_names[index.entity(t)] for t in topic_ids]
        for model in models:
            rows, ms = run_model(
                driver,
                args.kg,
                None if model == OWN else model,
                q.question,
                topic_ids,
                vectors[i],
                max(ks),
                args.hops,
                args.max_candidates,
            )
            tally.add("webqsp", model, question_metrics(rows, gold, topic_names, ks, leaf_rule=True), ms)
        if not args.no_cosine:
            rows, ms = run_cosine(
                driver, args.kg, topic_ids, vectors[i], max(ks), args.hops, args.max_candidates
            )
            tally.add("webqsp", COSINE, question_metrics(rows, gold, topic_names, ks, leaf_rule=False), ms)
    driver.close()
    summary = tally.summary()
    print(markdown_table(summary, ks))
    print(
        f"\nquestions: {len(dataset.questions)} with answers, {unlinked} without a topic entity in KG "
        f"{args.kg!r} (skipped); answer ceiling (answers present anywhere in the candidates): "
        f"{np.mean(ceiling) if ceiling else float('nan'):.3f}"
    )
    print(f"reference: SubgraphRAG published answer recall@100 on WebQSP = {PUBLISHED_ANSWER_RECALL_AT_100}")
    print(f"\n{time.perf_counter() - began:.0f}s", file=sys.stderr)
    if args.out:
        payload = {
            "kg": args.kg,
            "ks": ks,
            "summary": summary,
            "unlinked": unlinked,
            "answer_ceiling": float(np.mean(ceiling)) if ceiling else None,
            "published_answer_recall@100": PUBLISHED_ANSWER_RECALL_AT_100,
        }
        args.out.write_text(json.dumps(payload, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
