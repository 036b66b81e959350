"""How good are the pattern graphs an LLM writes for SimGRAG? Measured on MetaQA dev questions.

    kgqa llm serve      # or OPENAI_BASE_URL=... KGQA_PATTERN_LLM=<model>
    python -m bench.accuracy.simgrag_llm_patterns --n 100

For each question (seeded sample, equal share per hop; dev only): whether the reply parses as a pattern
(edges [head, relation, tail] with an UNKNOWN node to answer), whether a known node names one of the linked
topic entities, whether the pattern has as many edges as the question has hops, and whether the matched
answer is gold (Hits@1). The same questions through the offline builder are the baseline, in the same run.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import Counter
from pathlib import Path

from kgqa.core.config import shared_data_dir
from kgqa.core.errors import KgqaError
from kgqa.core.text import normalize_answer
from kgqa.evaluation.metaqa import read_questions
from kgqa.graph.connection import open_driver
from kgqa.qa.answering import QuestionAnswerer
from kgqa.qa.simgrag_llm import LlmSimGragRetriever
from kgqa.retrieve.simgrag import SimGragRetriever, SimGragTrace
from rich.console import Console
from rich.progress import track

STDERR = Console(stderr=True)  # progress on stderr, so that stdout is the report alone


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--kg", default="metaqa")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    questions = []
    for hop in (1, 2, 3):
        pool = read_questions("dev", hop, root=shared_data_dir() / "metaqa")
        questions += [(hop, q) for q in rng.sample(pool, args.n // 3 + (1 if hop <= args.n % 3 else 0))]
    counts: Counter[str] = Counter()
    rows = []
    with open_driver() as driver:
        llm = QuestionAnswerer(driver, kg=args.kg, retriever=LlmSimGragRetriever(driver))
        offline = QuestionAnswerer(driver, kg=args.kg, retriever=SimGragRetriever(driver))
        for hop, q in track(questions, description="LLM patterns", console=STDERR):
            gold = {normalize_answer(a) for a in q.answers}
            row: dict[str, object] = {"hop": hop, "question": q.question}
            started = time.perf_counter()
            try:
                result = llm.ask(q.question)
                trace = result.evidence.trace
                assert isinstance(trace, SimGragTrace) or trace is None
                pattern = trace.pattern if trace else []
                row.update(valid=True, pattern=pattern, answers=result.answers[:3])
                counts["valid"] += 1
                topics = {e.name.casefold() for e in result.evidence.topic_entities}
                if any(n.casefold() in topics for edge in pattern for n in (edge[0], edge[2])):
                    counts["names a topic entity"] += 1
                if len(pattern) == hop:
                    counts["edges == hops"] += 1
                if result.answers and normalize_answer(result.answers[0]) in gold:
                    counts["Hits@1"] += 1
            except KgqaError as exc:
                row.update(valid=False, error=str(exc))
            row["ms"] = (time.perf_counter() - started) * 1000
            base = offline.ask(q.question)
            if base.answers and normalize_answer(base.answers[0]) in gold:
                counts["offline Hits@1"] += 1
            rows.append(row)
    n = len(questions)
    print(
        "`python -m bench.accuracy.simgrag_llm_patterns "
        + " ".join(sys.argv[1:] if argv is None else argv)
        + "`"
    )
    per_hop = ", ".join(f"{h}-hop {sum(1 for x, _ in questions if x == h)}" for h in (1, 2, 3))
    print(f"\n{n} MetaQA dev questions ({per_hop})\n")
    print("| measure | count | % |\n|---|---:|---:|")
    for key in ("valid", "names a topic entity", "edges == hops", "Hits@1", "offline Hits@1"):
        print(f"| {key} | {counts[key]} | {100 * counts[key] / n:.1f} |")
    times = sorted(float(r["ms"]) for r in rows)  # type: ignore[arg-type]
    print(f"\nLLM pattern + match, ms per question: p50 {times[n // 2]:.0f}, p95 {times[int(n * 0.95)]:.0f}")
    if args.out:
        args.out.write_text(json.dumps(rows, indent=1, ensure_ascii=False), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
