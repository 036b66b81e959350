"""FRAG on MetaQA (vanilla) per hop: Hits@1, answer recall of the evidence, retrieval latency.

Questions go through the question-answering layer (``kgqa.qa``), as `kgqa ask` does. Hits@1 takes the
answer as the evidence's first answer candidate (the end entity of the best-ranked path). Answer recall is
the share of gold answers that appear among the entities of the evidence triplets. Topic entities come from
the question's [brackets] (linked by exact name, as in the FRAG paper where the topic entity is given).
Latency is linking + retrieval, p50/p95. ``--stages`` also says, per question, where the gold answers were
lost (the retriever records what each stage kept): the first path's end is gold (a hit); a gold answer ends
another kept path; lies on a kept path but not at its end; ends a candidate path that ranking did not keep;
is in the kept subgraph but no candidate path over the kept relations reaches it; or is not in the subgraph
after PPR pruning at all.

    KGQA_HOME=~/.kgqa-test KGQA_BOLT_PORT=7697 python -m bench.accuracy.frag_metaqa --n 300 [--hops 1,2,3]
        [--split dev] [--hop-range auto|simple|complex|oracle] [--hop-count-in simple,complex]
        [--show-errors 5]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
from collections import Counter
from dataclasses import replace
from functools import partial
from pathlib import Path

from kgqa.core.config import shared_data_dir
from kgqa.evaluation.metaqa import read_questions
from kgqa.graph.connection import open_driver
from kgqa.qa.answering import QuestionAnswerer
from kgqa.retrieve.frag import FragConfig, FragRetriever, FragTrace

from bench.common import add_sample_options, with_retry

DATA = shared_data_dir()


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


STAGES = (
    "hit: first path ends at gold",
    "another kept path ends at gold",
    "gold on a kept path, not at its end",
    "ranking: a candidate path ends at gold, not kept",
    "paths: gold in the subgraph, no candidate path ends there",
    "subgraph: gold not in the neighbourhood after PPR",
)


def lost_at(stages: dict[str, list[str]], top: str | None, gold: set[str]) -> str:
    """The first stage, from the answer backwards, that still holds a gold answer."""
    if top in gold:
        return STAGES[0]
    for stage, name in zip(("kept_ends", "kept", "path_ends", "subgraph"), STAGES[1:], strict=False):
        if gold & set(stages[stage]):
            return name
    return STAGES[-1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_sample_options(ap, n=300, help="questions per hop (seeded sample)", dest="limit", alias="--limit")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--kg", default="metaqa")
    ap.add_argument("--hop-range", default="auto", choices=["auto", "simple", "complex", "oracle"])
    ap.add_argument(
        "--hop-count-in",
        default="simple,complex",
        help="hop ranges where paths of the predicted hop count rank first ('' = never)",
    )
    ap.add_argument("--show-errors", type=int, default=0)
    ap.add_argument("--stages", action="store_true", help="also count where the gold answers were lost")
    ap.add_argument(
        "--out", "--json", dest="json_out", metavar="FILE", help="also write the summary as JSON here"
    )
    args = ap.parse_args()
    if not (DATA / "metaqa").is_dir():
        print(f"MetaQA not found under {DATA} (set KGQA_SHARED_DATA)", file=sys.stderr)
        return 2
    config = FragConfig()
    config = replace(config, hop_count_ranges=tuple(r for r in args.hop_count_in.split(",") if r))
    rng = random.Random(args.seed)
    summary = {}
    driver = open_driver()
    try:
        warm = QuestionAnswerer(driver, kg=args.kg, retriever=FragRetriever(driver, config))
        warm.ask("what movies did [Lee Pace] act in")  # loads the encoder and the classifier
        for hop in [int(h) for h in args.hops.split(",")]:
            read = read_questions(args.split, hop, root=DATA / "metaqa", allow_test=True)  # reports only
            questions = [(q.question, list(q.answers)) for q in read]
            if args.limit and len(questions) > args.limit:
                questions = rng.sample(questions, args.limit)
            forced = None if args.hop_range == "auto" else args.hop_range
            if forced == "oracle":
                forced = "simple" if hop <= 2 else "complex"
            retriever = FragRetriever(
                driver,
                config,
                hop_range=forced,  # type: ignore[arg-type]
                trace_stages=args.stages,
            )
            lost: Counter[str] = Counter()
            answerer = QuestionAnswerer(driver, kg=args.kg, retriever=retriever)
            hits = 0
            recall: list[float] = []
            candidate_recall: list[float] = []
            latency: list[float] = []
            stages: dict[str, list[float]] = {}
            ranges: Counter[str] = Counter()
            pruned = 0
            errors: list[str] = []
            for question, gold in questions:
                result = with_retry(partial(answerer.ask, question))
                evidence = result.evidence
                latency.append(result.latency_ms["linking"] + result.latency_ms["retrieval"])
                for stage, ms in evidence.latency_ms.items():
                    stages.setdefault(stage, []).append(ms)
                trace = evidence.trace
                assert isinstance(trace, FragTrace)
                gold_set = set(gold)
                candidates = evidence.answer_candidates
                top = candidates[0] if candidates else None
                hits += top in gold_set
                found = set(evidence.entities())
                recall.append(len(gold_set & found) / len(gold_set))
                candidate_recall.append(len(gold_set & set(candidates)) / len(gold_set))
                ranges[trace.hop_range] += 1
                if trace.stages is not None:
                    lost[lost_at(trace.stages, top, gold_set)] += 1
                pruned += trace.ppr_pruned
                if top not in gold_set and len(errors) < args.show_errors:
                    errors.append(
                        f"  {question!r} gold={gold[:3]} top={top!r} "
                        f"range={trace.hop_range} "
                        f"path={evidence.paths[0] if evidence.paths else None}"
                    )
            n = len(questions)
            row = {
                "n": n,
                "hits@1": hits / n,
                "evidence_answer_recall": statistics.mean(recall),
                "candidate_answer_recall": statistics.mean(candidate_recall),
                "latency_ms_p50": statistics.median(latency),
                "latency_ms_p95": percentile(latency, 0.95),
                "hop_range": dict(ranges),
                "ppr_pruned": pruned / n,
                "stage_ms_p50": {k: round(statistics.median(v), 1) for k, v in stages.items()},
                "lost_at": {stage: lost[stage] / n for stage in STAGES if lost},
            }
            summary[f"{hop}-hop"] = row
            print(
                f"{args.split} {hop}-hop n={n}: Hits@1 {row['hits@1']:.2%}  evidence answer recall "
                f"{row['evidence_answer_recall']:.2%}  (candidates {row['candidate_answer_recall']:.2%})  "
                f"latency p50 {row['latency_ms_p50']:.0f} ms p95 {row['latency_ms_p95']:.0f} ms  "
                f"hop range {dict(ranges)}  PPR-pruned {row['ppr_pruned']:.0%}"
            )
            print(f"    stage p50 ms: {row['stage_ms_p50']}")
            if lost:
                print(
                    "    where the gold answers are: "
                    + ", ".join(f"{k} {v:.1%}" for k, v in row["lost_at"].items())
                )
            for line in errors:
                print(line)
    finally:
        driver.close()
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(summary, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
