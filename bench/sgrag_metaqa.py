"""SG-RAG on MetaQA: Hits@1 per hop ("answers = answer_candidates"), the chain classifier's hop count,
retrieval latency.

Questions go through the question-answering layer (``kgqa.qa``), as `kgqa ask` does; topic entities come
from the [brackets] (linked by exact name; free-text linking is measured by bench/linking_metaqa.py, or here
with --free-text). The latency is the retrieval stage (classify + template + MOT). Hits@1 is correct when the
first answer candidate is among the gold answers. The classifier's chain is checked by its length only (it
has the question's hop count; MetaQA labels question types, not chains), and the share of questions answered
by a next-best chain (the best one matched nothing) is counted. Reads ../shared/data/metaqa (or
$KGQA_SHARED_DATA/metaqa) and the KG `metaqa` on the configured server (for the test server set
KGQA_HOME=~/.kgqa-test KGQA_BOLT_PORT=7697).

    python bench/sgrag_metaqa.py --split dev [--hops 1,2,3] [--limit N] [--k 100] [--out FILE]
    python bench/sgrag_metaqa.py --split test     # once, for the record; tune nothing after it
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import Counter
from functools import partial
from typing import Any

import numpy as np
from kgqa.core.chains import parse_chain_key
from kgqa.core.text import without_brackets
from kgqa.evaluation.metaqa import MetaqaQuestion, read_questions
from kgqa.graph.connection import open_driver
from kgqa.models.question_classifiers import hop_range
from kgqa.qa.answering import QuestionAnswerer
from kgqa.retrieve.sgrag import SgragRetriever, SgragTrace, run_template
from server_retry import with_retry  # bench/ is on sys.path when a script runs


def _sample(questions: list[MetaqaQuestion], limit: int | None, seed: int) -> list[MetaqaQuestion]:
    if limit is None or limit >= len(questions):
        return questions
    keep = set(random.Random(seed).sample(range(len(questions)), limit))  # the files are grouped by type
    return [q for i, q in enumerate(questions) if i in keep]


def _percentile(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else float("nan")


def run_hop(
    answerer: QuestionAnswerer,
    questions: list[MetaqaQuestion],
    show_errors: int,
    free_text: bool = False,
) -> dict[str, Any]:
    counts: Counter[str] = Counter()
    latencies: list[float] = []
    errors: list[dict[str, Any]] = []
    linking: list[float] = []
    for number, q in enumerate(questions, 1):
        # free text: brackets removed, so the real linker finds the entity and the classifier masks its span
        text = without_brackets(q.question) if free_text else q.question
        result = with_retry(partial(answerer.ask, text))
        evidence = result.evidence
        linking.append(result.latency_ms["linking"])
        counts["topic_ok"] += [e.name for e in evidence.topic_entities][:1] == [q.topic]
        if number % 2000 == 0:
            print(f"  ... {number}/{len(questions)}", file=sys.stderr, flush=True)
        latencies.append(result.latency_ms["retrieval"])
        trace = evidence.trace
        assert isinstance(trace, SgragTrace)
        gold = set(q.answers)
        candidates = evidence.answer_candidates
        counts["chain_hops_ok"] += len(parse_chain_key(trace.chain_classified)) == q.hops
        counts["next_best_chain"] += trace.chain != trace.chain_classified
        counts["hop_range_ok"] += trace.hop_range == hop_range(q.hops)
        counts["hits1"] += bool(candidates) and candidates[0] in gold
        counts["recall_all"] += gold <= set(candidates)
        counts["exact_set"] += gold == set(candidates)
        counts["hits1_extractive"] += bool(result.answers) and result.answers[0] in gold
        counts["over_k"] += trace.k_exceeded_to_keep_answers
        if not (candidates and candidates[0] in gold) and len(errors) < show_errors:
            errors.append(
                {
                    "question": q.question,
                    "qtype": q.qtype,
                    "chain": trace.chain,
                    "gold": sorted(gold)[:5],
                    "candidates": candidates[:5],
                }
            )
    n = max(1, len(questions))
    return {
        "questions": len(questions),
        "hits@1": counts["hits1"] / n,
        "hits@1_extractive_answerer": counts["hits1_extractive"] / n,
        "all_gold_in_candidates": counts["recall_all"] / n,
        "candidates_equal_gold": counts["exact_set"] / n,
        "chain_hops_accuracy_classifier": counts["chain_hops_ok"] / n,
        "next_best_chain_used": counts["next_best_chain"] / n,
        "hop_range_accuracy": counts["hop_range_ok"] / n,
        "topic_entity_correct": counts["topic_ok"] / n,
        "evidence_over_k_to_keep_answers": counts["over_k"],
        "retrieval_ms_p50": _percentile(latencies, 50),
        "retrieval_ms_p95": _percentile(latencies, 95),
        "linking_ms_p50": _percentile(linking, 50),
        "linking_ms_p95": _percentile(linking, 95),
        "errors": errors,
    }


def warm_up(retriever: SgragRetriever, kg: str) -> None:
    """Plans every template's path once (the chains the KG's classifier knows), so the first questions are not
    timed cold."""
    for chain in retriever.classifiers(kg).chains:
        run_template(retriever.driver, chain, kg, ["__none__"], 1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--split", choices=("dev", "test"), default="dev")
    parser.add_argument("--hops", default="1,2,3")
    parser.add_argument("--limit", type=int, default=None, help="questions per hop (random sample, seeded)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--k", type=int, default=100, help="max triplets per question")
    parser.add_argument("--kg", default="metaqa")
    parser.add_argument("--show-errors", type=int, default=5)
    parser.add_argument("--out", default=None, help="write the full report as JSON")
    parser.add_argument(
        "--free-text",
        action="store_true",
        help="remove the brackets, so that the linker finds the entities in free text",
    )
    args = parser.parse_args(argv)

    if args.split == "test":
        print("NOTE: MetaQA test split, a final measurement: tune nothing after it.", file=sys.stderr)
    driver = open_driver()
    retriever = SgragRetriever(driver)
    answerer = QuestionAnswerer(driver, kg=args.kg, k=args.k, retriever=retriever)
    warm_up(retriever, args.kg)
    report: dict[str, Any] = {
        "split": args.split,
        "k": args.k,
        "limit": args.limit,
        "seed": args.seed,
        "free_text": args.free_text,
        "classifier": {
            key: retriever.classifiers(args.kg).metadata.get(key)
            for key in ("seed", "created", "questions", "chains")
        },
        "hops": {},
    }
    began = time.perf_counter()
    for hops in [int(h) for h in args.hops.split(",")]:
        questions = _sample(
            read_questions(args.split, hops, allow_test=args.split == "test"), args.limit, args.seed
        )
        result = run_hop(answerer, questions, args.show_errors, args.free_text)
        report["hops"][str(hops)] = result
        print(
            f"{hops}-hop {args.split}: n={result['questions']}  Hits@1={100 * result['hits@1']:.2f}%  "
            f"(extractive answerer {100 * result['hits@1_extractive_answerer']:.2f}%)  "
            f"all gold in candidates={100 * result['all_gold_in_candidates']:.2f}%  "
            f"chain hop count acc={100 * result['chain_hops_accuracy_classifier']:.2f}% "
            f"(next-best chain used {100 * result['next_best_chain_used']:.2f}%)  "
            f"hop-range acc={100 * result['hop_range_accuracy']:.2f}%  "
            f"topic ok={100 * result['topic_entity_correct']:.2f}%  "
            f"retrieval p50={result['retrieval_ms_p50']:.1f} ms p95={result['retrieval_ms_p95']:.1f} ms",
            flush=True,
        )
        for error in result["errors"]:
            print(f"    miss: {json.dumps(error, ensure_ascii=False)}")
    report["seconds"] = time.perf_counter() - began
    driver.close()
    if args.out:
        with open(args.out, "w", encoding="utf-8") as handle:
            json.dump(report, handle, indent=2, ensure_ascii=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
