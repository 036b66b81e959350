"""How much choosing among the methods could gain on a question set, and what choosing by the answer scorer
gains: the figure that says whether ``auto`` is limited by its choice or by every method's answers.

    python -m bench.accuracy.method_choice --set bench/questions/fb15k_freeform.jsonl --kg fb15k --part tune

Every method answers each question once (topics linked from the text, as a user gets them). Per kind of
question, Hits@1 (%) of:

* each method alone, and ``auto`` as shipped (its route: the first planned method that is sure enough);
* *any method*: a method's first answer is right (what a perfect choice among them would reach);
* *best scored*: the first answer of the method whose first answer the KG's answer scorer gives the highest
  probability (:mod:`kgqa.qa.answer_scoring`, fitted by ``kgqa train all`` on the answers of the method its
  route chose), among the methods whose evidence passes the route's fit check.

Read the held-out part; tune on the tune part only.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from kgqa.core.errors import CannotRunHere
from kgqa.graph.connection import open_driver
from kgqa.qa.answer_scoring import MethodRun, answer_rows
from kgqa.qa.answering import QuestionAnswerer
from kgqa.qa.methods import AUTO_CANDIDATES
from kgqa.qa.routing import answer_scorer_for, answered, asked_kind, scorer_of
from kgqa.retrieve.linking import link_entities
from rich.progress import track

from bench.common import score

ANY = "any method"
BEST_SCORED = "best scored"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", type=Path, required=True)
    parser.add_argument("--kg", required=True)
    parser.add_argument("--part", default="tune", choices=["tune", "heldout", "all"])
    parser.add_argument("--methods", default=",".join(AUTO_CANDIDATES))
    args = parser.parse_args(argv)
    rows = [json.loads(line) for line in args.set.read_text().splitlines() if line.strip()]
    rows = [r for r in rows if args.part == "all" or r["part"] == args.part]
    methods = [m for m in args.methods.split(",") if m]
    scorer = answer_scorer_for(args.kg)
    if scorer is None:
        raise SystemExit(f"KG {args.kg!r} has no answer scorer: kgqa train all --kg {args.kg}")
    path_scorer = scorer_of(args.kg)
    hits: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    with open_driver() as driver:
        answerers = {m: QuestionAnswerer(driver, m, args.kg) for m in ["auto", *methods]}
        for row in track(rows, description="asking every method", transient=True):
            question, kind = row["question"], row["kind"]
            topics = link_entities(driver, question, args.kg)
            right: dict[str, float] = {}
            probability: dict[str, float] = {}
            for method, answerer in answerers.items():
                try:
                    result = answerer.ask(question, topics) if topics else None
                except CannotRunHere:
                    result = None
                right[method] = score(result.answers, row["answers"])[0] if result is not None else 0.0
                if method == "auto" or result is None or not result.answers:
                    continue
                if answered(result.evidence, asked_kind(question)):
                    continue
                run = MethodRun(method, result.evidence, result.answer)
                first = answer_rows(question, topics, run, path_scorer, limit=1)
                if first:
                    probability[method] = float(scorer.probabilities(first)[0])
            for method, hit in right.items():
                hits[method][kind].append(hit)
            hits[ANY][kind].append(max((right[m] for m in methods), default=0.0))
            best = max(probability, key=lambda m: probability[m]) if probability else None
            hits[BEST_SCORED][kind].append(right[best] if best is not None else 0.0)
    print(report(hits, args, argv))
    return 0


def report(hits: dict[str, dict[str, list[float]]], args: argparse.Namespace, argv: list[str] | None) -> str:
    command = "python -m bench.accuracy.method_choice " + " ".join(argv if argv is not None else sys.argv[1:])
    kinds = sorted({k for by_kind in hits.values() for k in by_kind})
    lines = [
        f"`{command}`",
        "",
        f"Hits@1 (%) on the {args.part} part of `{args.set.name}`, KG `{args.kg}`.",
        "",
        "| choice | " + " | ".join(f"{k} ({len(next(iter(hits.values()))[k])})" for k in kinds) + " | all |",
        "|---|" + "---:|" * (len(kinds) + 1),
    ]
    for choice, by_kind in hits.items():
        every: list[float] = [h for k in kinds for h in by_kind[k]]
        cells = [_percent(by_kind[k]) for k in kinds] + [_percent(every)]
        lines.append(f"| {choice} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _percent(values: list[Any]) -> str:
    return f"{100 * sum(values) / len(values):.1f}" if values else "–"


if __name__ == "__main__":
    raise SystemExit(main())
