"""SubgraphRAG models side by side, answered as `kgqa ask --method subgraphrag` does: what each change bought.

    python bench/subgraphrag_ablation.py --models sp22,sp33,ch33,chm33,pc1000 [--n 200] [--hops 1,2,3]
        [--rank-by chain,walk]

Held-out MetaQA dev questions (the part of the scorer's split that no model trained or stopped early on;
every model here uses the same split seed), the same questions for every model, in one run. Per model and
hop (and answer rule, ``--rank-by``: the walks grouped by relation chain, or each end's best walk): Hits@1
and Macro-F1 of the extractive answerer; evidence answer recall (the share of gold answers among the entities
of the k = 100 evidence triplets); "in evidence, missed" (a gold answer is in the evidence but not first);
and the retrieval p50 / p95. The model's own meta.json says what it was trained with: weak labels, DDE rounds,
question mask, path-code steps and training questions.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

from kgqa.core.text import normalize_answer
from kgqa.evaluation.metrics import score_answers
from kgqa.graph.connection import open_driver
from kgqa.qa.answering import QuestionAnswerer
from kgqa.retrieve.subgraphrag import SubgraphRagRetriever
from kgqa.training.subgraphrag import TrainConfig, dev_splits, model_dir
from rich.console import Console
from rich.progress import track

STDERR = Console(stderr=True)


def described(name: str) -> str:
    meta = json.loads((model_dir(name) / "meta.json").read_text())
    question_relation = "on" if meta.get("question_relation") else "off"
    return (
        f"labels {meta.get('labels', 'shortest')}, DDE {meta.get('dde_rounds_forward')}+"
        f"{meta.get('dde_rounds_reverse')}, mask {meta.get('question_mask') or 'none'}, path steps "
        f"{meta.get('path_steps', 0)}, question-relation feature {question_relation},"
        f" {meta['split']['train']} training questions over the three hops"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", required=True, help="comma-separated installed SubgraphRAG models")
    parser.add_argument("--n", type=int, default=200, help="held-out questions per hop")
    parser.add_argument("--hops", default="1,2,3")
    parser.add_argument("--rank-by", default="chain", help="comma-separated: chain, walk")
    args = parser.parse_args(argv)
    rankings = [r for r in args.rank_by.split(",") if r]
    models = [m for m in args.models.split(",") if m]
    hops_wanted = [int(h) for h in args.hops.split(",")]
    seeds = {json.loads((model_dir(m) / "meta.json").read_text())["seed"] for m in models}
    if len(seeds) != 1:
        parser.error(f"the models were split with different seeds {sorted(seeds)}: held-out parts differ")
    _train, _val, held_out = dev_splits(TrainConfig(seed=seeds.pop()))
    print(
        f"`python bench/subgraphrag_ablation.py --models {args.models} --n {args.n} --hops {args.hops}"
        f" --rank-by {args.rank_by}`\n"
    )
    print("MetaQA dev, held out (never trained on), the same questions for every model; k = 100.\n")
    for m in models:
        print(f"- `{m}`: {described(m)}")
    print(
        "\n| model | answers by | hops | n | Hits@1 | Macro-F1 | evidence answer recall | in evidence, missed"
        " | retrieval p50 / p95 ms |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    with open_driver() as driver:
        for m, rank_by in [(m, r) for m in models for r in rankings]:
            answerer = QuestionAnswerer(
                driver,
                "subgraphrag",
                "metaqa",
                retriever=SubgraphRagRetriever(driver, model=m, rank_by=rank_by),
            )
            for hops in hops_wanted:
                questions = [q for q in held_out if q.hops == hops][: args.n]
                hits, missed_in_evidence = 0, 0
                recall: list[float] = []
                f1: list[float] = []
                latency: list[float] = []
                for q in track(questions, description=f"{m} {hops}-hop", console=STDERR, transient=True):
                    began = time.perf_counter()
                    result = answerer.ask(q.question)
                    latency.append(result.latency_ms.get("retrieval", (time.perf_counter() - began) * 1000))
                    gold = {normalize_answer(a) for a in q.answers}
                    f1.append(score_answers(result.answers, q.answers).f1)
                    found = gold & {normalize_answer(n) for n in result.evidence.entities()}
                    recall.append(len(found) / max(1, len(gold)))
                    if result.answers and normalize_answer(result.answers[0]) in gold:
                        hits += 1
                    elif found:
                        missed_in_evidence += 1
                n = max(1, len(questions))
                print(
                    f"| {m} | {rank_by} | {hops} | {len(questions)} | {100 * hits / n:.1f} | "
                    f"{100 * statistics.fmean(f1):.1f} | {statistics.fmean(recall):.3f} | "
                    f"{missed_in_evidence} | {statistics.median(latency):.1f} / "
                    f"{statistics.quantiles(latency, n=20)[-1]:.1f} |",
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
