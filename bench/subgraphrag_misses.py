"""Where does SubgraphRAG lose Hits@1 when the answer is already in its evidence?

    python bench/subgraphrag_misses.py --model default --n 200 [--hops 1,2,3] [--show 5]

For held-out MetaQA dev questions (never trained on), the question is answered as `kgqa ask --method
subgraphrag` answers it (k = 100, the hop count from the classifier, walks of that length, the extractive
answerer). Each miss whose gold answer is in the evidence is put in one bucket:

* ``wrong relation first``: the best-scored triple at the topic entity has a relation no gold path starts
  with (the scorer ranked, say, ``directed_by`` above ``starred_actors`` for "who acted in ...");
* ``wrong hop count``: the classifier's hop count differs from the question's;
* ``ranking at the right relation``: neither (the answerer ranked another end of a right walk first).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter

from kgqa.core.text import normalize_answer
from kgqa.graph.connection import open_driver
from kgqa.graph.cypher import render
from kgqa.qa.answering import QuestionAnswerer
from kgqa.retrieve.subgraphrag import SubgraphRagRetriever, SubgraphRagTrace
from kgqa.training.subgraphrag import TrainConfig, dev_splits
from neo4j import Driver
from rich.console import Console
from rich.progress import track

STDERR = Console(stderr=True)


def first_relations(driver: Driver, topic: str, answers: set[str], hops: int) -> set[str]:
    """The relations at the topic entity that start some walk of ``hops`` steps to a gold answer."""
    records, _, _ = driver.execute_query(
        render("bench/gold_first_relations", hops=hops), kg="metaqa", topic=topic, answers=sorted(answers)
    )
    return {str(r["relation"]) for r in records}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="default")
    parser.add_argument("--n", type=int, default=200, help="questions per hop")
    parser.add_argument("--hops", default="1,2,3")
    parser.add_argument("--show", type=int, default=3, help="examples per bucket")
    args = parser.parse_args(argv)
    _train, _val, held_out = dev_splits(TrainConfig(seed=13))
    print(f"`python bench/subgraphrag_misses.py --model {args.model} --n {args.n} --hops {args.hops}`\n")
    print("| hops | n | Hits@1 | gold in evidence, missed | wrong relation first | wrong hop count | other |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    examples: list[str] = []
    with open_driver() as driver:
        answerer = QuestionAnswerer(
            driver, "subgraphrag", "metaqa", retriever=SubgraphRagRetriever(driver, model=args.model)
        )
        for hops in [int(h) for h in args.hops.split(",")]:
            questions = [q for q in held_out if q.hops == hops][: args.n]
            buckets: Counter[str] = Counter()
            hits = 0
            for q in track(questions, description=f"{hops}-hop", console=STDERR, transient=True):
                result = answerer.ask(q.question)
                gold = {normalize_answer(a) for a in q.answers}
                if result.answers and normalize_answer(result.answers[0]) in gold:
                    hits += 1
                    continue
                evidence = result.evidence
                if not gold & {normalize_answer(n) for n in evidence.entities()}:
                    continue
                trace = evidence.trace
                topics = [e.name for e in evidence.topic_entities]
                if not topics:
                    continue
                at_topic = [
                    (score, t)
                    for t, score in zip(evidence.triplets, evidence.scores, strict=False)
                    if t[0] in topics or t[2] in topics
                ]
                best = max(at_topic)[1] if at_topic else None
                right = first_relations(driver, topics[0], set(q.answers), hops)
                if isinstance(trace, SubgraphRagTrace) and trace.hops_predicted not in (None, hops):
                    bucket = "wrong hop count"
                elif best is not None and best[1] not in right:
                    bucket = "wrong relation first"
                else:
                    bucket = "other"
                buckets[bucket] += 1
                if sum(1 for e in examples if e.startswith(bucket)) < args.show:
                    examples.append(
                        f"{bucket}: {q.question} | best at topic {best} | gold starts {sorted(right)}"
                    )
            missed = sum(buckets.values())
            print(
                f"| {hops} | {len(questions)} | {100 * hits / max(1, len(questions)):.1f} | {missed} |"
                f" {buckets['wrong relation first']} | {buckets['wrong hop count']} | {buckets['other']} |"
            )
    print("\nExamples:\n")
    for line in examples:
        print(f"- {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
