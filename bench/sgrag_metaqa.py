"""SG-RAG on MetaQA: Hits@1 per hop ("answers = answer_candidates"), classifier accuracy, retrieval latency.

Topic entities come from the [brackets] by exact name lookup (linking is measured by bench/linking_metaqa.py);
the latency is the retriever's own (classify + template + MOT), without that lookup. Hits@1 is correct when
the first answer candidate is among the gold answers. Reads ../shared/data/metaqa (or
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
from typing import Any, TypeVar

import numpy as np
from kgqa.answer.extractive import answer_extractive
from kgqa.graph.connection import open_driver
from kgqa.retrieve.sgrag import (
    SgragRetriever,
    bracket_names,
    bracket_topic_entities,
    entity_ids_by_name,
    run_template,
    sgrag_qtypes,
)
from kgqa.training.metaqa_data import MetaqaQuestion, read_questions
from kgqa.training.question_classifiers import hop_range
from server_retry import with_retry  # bench/ is on sys.path when a script runs

T = TypeVar("T")


def _sample(questions: list[MetaqaQuestion], limit: int | None, seed: int) -> list[MetaqaQuestion]:
    if limit is None or limit >= len(questions):
        return questions
    keep = set(random.Random(seed).sample(range(len(questions)), limit))  # the files are grouped by type
    return [q for i, q in enumerate(questions) if i in keep]


def _percentile(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else float("nan")


def run_hop(
    retriever: SgragRetriever,
    questions: list[MetaqaQuestion],
    kg: str,
    k: int,
    show_errors: int,
    free_text: bool = False,
) -> dict[str, Any]:
    driver = retriever.driver
    counts: Counter[str] = Counter()
    latencies: list[float] = []
    errors: list[dict[str, Any]] = []
    known = (
        {}
        if free_text
        else with_retry(
            lambda: entity_ids_by_name(driver, kg, [n for q in questions for n in bracket_names(q.question)])
        )
    )
    linking: list[float] = []
    for number, q in enumerate(questions, 1):
        if free_text:  # brackets removed: the real linker finds the entity, the classifier masks its span
            text = q.question.replace("[", "").replace("]", "")
            evidence = with_retry(partial(retriever.retrieve, text, kg, k=k))
            linking.append(evidence.latency_ms["linking"])
            counts["topic_ok"] += [e.name for e in evidence.topic_entities][:1] == [q.topic]
        else:
            topics = bracket_topic_entities(driver, q.question, kg, known)
            counts["topic_ok"] += [e.name for e in topics] == [q.topic]
            evidence = with_retry(partial(retriever.retrieve, q.question, kg, k=k, topic_entities=topics))
        if number % 2000 == 0:
            print(f"  ... {number}/{len(questions)}", file=sys.stderr, flush=True)
        latencies.append(evidence.latency_ms["retrieval"])
        meta = evidence.metadata
        tried = meta.get("qtypes_tried") or [meta["qtype"]]
        gold = set(q.answers)
        candidates = [str(a) for a in meta.get("answer_candidates", [])]
        counts["qtype_first_ok"] += meta.get("qtype_classified", tried[0]) == q.qtype
        counts["qtype_final_ok"] += meta["qtype"] == q.qtype
        counts["hop_range_ok"] += meta["hop_range"] == hop_range(q.hops)
        counts["hits1"] += bool(candidates) and candidates[0] in gold
        counts["recall_all"] += gold <= set(candidates)
        counts["exact_set"] += gold == set(candidates)
        extractive = answer_extractive(evidence)
        counts["hits1_extractive"] += bool(extractive.answers) and extractive.answers[0] in gold
        counts["over_k"] += bool(meta.get("k_exceeded_to_keep_answers"))
        if not (candidates and candidates[0] in gold) and len(errors) < show_errors:
            errors.append(
                {
                    "question": q.question,
                    "qtype": q.qtype,
                    "predicted": meta["qtype"],
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
        "qtype_accuracy_classifier": counts["qtype_first_ok"] / n,
        "qtype_accuracy_after_fallback": counts["qtype_final_ok"] / n,
        "hop_range_accuracy": counts["hop_range_ok"] / n,
        "topic_entity_correct": counts["topic_ok"] / n,
        "evidence_over_k_to_keep_answers": counts["over_k"],
        "retrieval_ms_p50": _percentile(latencies, 50),
        "retrieval_ms_p95": _percentile(latencies, 95),
        "linking_ms_p50": _percentile(linking, 50) if linking else None,
        "linking_ms_p95": _percentile(linking, 95) if linking else None,
        "errors": errors,
    }


def warm_up(retriever: SgragRetriever, kg: str) -> None:
    """Plans every template once, and loads the classifiers, so the first questions are not timed cold."""
    retriever.classify("warm up")
    for qtype in sorted(sgrag_qtypes()):
        run_template(retriever.driver, qtype, kg, ["__none__"], 1)


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
        help="remove the brackets and link entities with kgqa.retrieve.linking (end to end)",
    )
    args = parser.parse_args(argv)

    if args.split == "test":
        print("NOTE: MetaQA test split, a final measurement: tune nothing after it.", file=sys.stderr)
    driver = open_driver()
    retriever = SgragRetriever(driver)
    warm_up(retriever, args.kg)
    report: dict[str, Any] = {
        "split": args.split,
        "k": args.k,
        "limit": args.limit,
        "seed": args.seed,
        "free_text": args.free_text,
        "classifier": {
            key: retriever.classifiers.metadata.get(key)
            for key in ("seed", "created", "holdout", "data_files")
        },
        "hops": {},
    }
    began = time.perf_counter()
    for hops in [int(h) for h in args.hops.split(",")]:
        questions = _sample(
            read_questions(args.split, hops, allow_test=args.split == "test"), args.limit, args.seed
        )
        result = run_hop(retriever, questions, args.kg, args.k, args.show_errors, args.free_text)
        report["hops"][str(hops)] = result
        print(
            f"{hops}-hop {args.split}: n={result['questions']}  Hits@1={100 * result['hits@1']:.2f}%  "
            f"(extractive answerer {100 * result['hits@1_extractive_answerer']:.2f}%)  "
            f"all gold in candidates={100 * result['all_gold_in_candidates']:.2f}%  "
            f"qtype acc={100 * result['qtype_accuracy_classifier']:.2f}% "
            f"(after fallback {100 * result['qtype_accuracy_after_fallback']:.2f}%)  "
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
