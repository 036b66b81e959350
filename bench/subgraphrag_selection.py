"""Does SubgraphRAG lose 3-hop answers in its scorer or in how evidence is picked from the scores?

    python bench/subgraphrag_selection.py --model default --n 300 [--hops 3]

For questions of the held-out part of MetaQA dev (never trained on), every candidate triple is scored in the
database (``kgqa.subgraphrag.retrieve`` with k = 20000) and K = 100 triples are picked from the same scores in
three ways; the answer recall of each is printed beside the ceiling any 100 triples could reach:

* ``top-K``: the K best triples (what the procedure returns today);
* ``connected``: best-first growth from the topic entities (a triple joins once one of its ends is reached);
* ``paths at the hop count``: every entity exactly ``hops`` steps out (BFS layers over the candidates) gets
  its best path (a path scores its weakest triple), and whole paths are taken best first while they fit.

The hop count is the question's gold one here (the product predicts it with the hop classifier).
"""

from __future__ import annotations

import argparse
import heapq
import sys
from collections.abc import Sequence

import numpy as np
from kgqa.core.text import normalize_answer
from kgqa.core.types import Triplet
from kgqa.graph.connection import open_driver
from kgqa.retrieve.subgraphrag import dedup_scored
from kgqa.training.subgraphrag import TrainConfig, dev_splits
from kgqa.training.subgraphrag_data import load_kg_index, load_local_graph, question_ids
from rich.console import Console
from rich.progress import track
from subgraphrag_common import Gold, answer_ceiling, embed_questions, gold_for, run_model

STDERR = Console(stderr=True)


def incidence(triplets: Sequence[Triplet]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for i, (head, _rel, tail) in enumerate(triplets):
        out.setdefault(head, []).append(i)
        out.setdefault(tail, []).append(i)
    return out


def connected(
    triplets: Sequence[Triplet], scores: Sequence[float], topics: Sequence[str], k: int
) -> list[Triplet]:
    touching = incidence(triplets)
    reached, used, out = set(topics), set(), []
    heap = [(-scores[i], i) for n in topics for i in touching.get(n, ())]
    heapq.heapify(heap)
    while heap and len(out) < k:
        _s, i = heapq.heappop(heap)
        if i in used:
            continue
        used.add(i)
        out.append(triplets[i])
        for node in triplets[i][::2]:
            if node not in reached:
                reached.add(node)
                for j in touching.get(node, ()):
                    if j not in used:
                        heapq.heappush(heap, (-scores[j], j))
    return out


def paths_at_depth(
    triplets: Sequence[Triplet], scores: Sequence[float], topics: Sequence[str], k: int, depth: int
) -> list[Triplet]:
    touching = incidence(triplets)
    best: dict[str, tuple[float, tuple[str, int] | None]] = {n: (float("inf"), None) for n in topics}
    layer, seen = set(topics), set(topics)
    for _ in range(depth):
        following: dict[str, tuple[float, tuple[str, int]]] = {}
        for node in layer:
            for i in touching.get(node, ()):
                head, _rel, tail = triplets[i]
                other = tail if head == node else head
                if other in seen:
                    continue
                score = min(best[node][0], scores[i])
                if other not in following or score > following[other][0]:
                    following[other] = (score, (node, i))
        best.update(following)
        seen |= set(following)
        layer = set(following)
    taken: list[Triplet] = []
    used: set[int] = set()
    for node in sorted(layer, key=lambda n: -best[n][0]):
        chain, at = [], node
        while (step := best[at][1]) is not None:
            at, i = step
            if i not in used:
                chain.append(i)
        if len(taken) + len(chain) <= k:
            used.update(chain)
            taken += [triplets[i] for i in chain]
    return taken


def answer_recall(triplets: Sequence[Triplet], gold: Gold) -> float:
    entities = {normalize_answer(n) for h, _r, t in triplets for n in (h, t)}
    return len(gold.answers & entities) / len(gold.answers)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="default")
    parser.add_argument("--n", type=int, default=300, help="questions per hop")
    parser.add_argument("--hops", default="3")
    parser.add_argument("--k", type=int, default=100)
    args = parser.parse_args(argv)
    _train, _val, held_out = dev_splits(TrainConfig(seed=13))
    print(f"`python bench/subgraphrag_selection.py --model {args.model} --n {args.n} --hops {args.hops}`\n")
    print(f"| hops | n | top-K | connected | paths at the hop count | ceiling of any {args.k} triples |")
    print("|---:|---:|---:|---:|---:|---:|")
    with open_driver() as driver:
        index = load_kg_index(driver, "metaqa")
        graph = load_local_graph(driver, index)
        for hops in [int(h) for h in args.hops.split(",")]:
            questions = [q for q in held_out if q.hops == hops][: args.n]
            vectors = embed_questions([q.question for q in questions])
            rows: dict[str, list[float]] = {"top": [], "connected": [], "paths": [], "ceiling": []}
            for i, q in enumerate(
                track(questions, description=f"{hops}-hop", console=STDERR, transient=True)
            ):
                topic_ids = [index.entity_ids[t] for t in question_ids(index, q.topics)]
                if not topic_ids:
                    continue
                gold = gold_for(graph, index, topic_ids, question_ids(index, q.answers), q.answers, hops)
                if not gold.answers:
                    continue
                scored, _ms = run_model(
                    driver, "metaqa", args.model, q.question, topic_ids, vectors[i], 20000, hops, 20000
                )
                triplets, scores = dedup_scored(scored)
                topics = list(q.topics)
                rows["top"].append(answer_recall(triplets[: args.k], gold))
                rows["connected"].append(answer_recall(connected(triplets, scores, topics, args.k), gold))
                rows["paths"].append(
                    answer_recall(paths_at_depth(triplets, scores, topics, args.k, hops), gold)
                )
                rows["ceiling"].append(answer_ceiling(gold, topics, args.k) or 0.0)
            means = {key: float(np.mean(v)) for key, v in rows.items()}
            print(
                f"| {hops} | {len(rows['top'])} | {means['top']:.3f} | {means['connected']:.3f} |"
                f" {means['paths']:.3f} | {means['ceiling']:.3f} |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
