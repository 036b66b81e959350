"""When should FRAG trust its chain reranker? Hits@1 for floors on the reranker's best chain log-probability.

    python bench/frag_rerank_floor.py --set bench/questions/metaqa_freeform.jsonl \
        --set bench/questions/metaqa_two_entity.jsonl

Every question is answered twice, by FRAG with the GSR chain reranker and no floor, and by FRAG with the
similarity ranking alone; the floor rule ("rerank unless the best chain's log-probability is below the
floor") is then applied for each floor: the deciles of the best log-probability on the tune parts, and
round probabilities. Report the held-out parts; choose on the tune parts.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

from kgqa.core.text import normalize_answer
from kgqa.graph.connection import open_driver
from kgqa.qa.answering import QuestionAnswerer
from kgqa.retrieve.frag import FragConfig, FragRetriever, FragTrace
from rich.console import Console
from rich.progress import track

STDERR = Console(stderr=True)


def first_is_gold(answers: list[str], gold: list[str]) -> bool:
    return bool(answers) and normalize_answer(answers[0]) in {normalize_answer(g) for g in gold}


def answer_all(rows: list[dict[str, Any]], kg: str) -> list[dict[str, Any]]:
    out = []
    with open_driver() as driver:
        reranked = QuestionAnswerer(
            driver, "frag", kg, retriever=FragRetriever(driver, config=FragConfig(rerank_floor=None))
        )
        similarity = QuestionAnswerer(driver, "frag", kg, retriever=FragRetriever(driver, chain_model=False))
        for row in track(rows, description="frag twice", console=STDERR, transient=True):
            r = reranked.ask(row["question"])
            trace = r.evidence.trace
            best = trace.best_chain_log_probability if isinstance(trace, FragTrace) else None
            out.append(
                {
                    "part": row["part"],
                    "best": best,
                    "reranked": first_is_gold(list(r.answers), row["answers"]),
                    "similarity": first_is_gold(
                        list(similarity.ask(row["question"]).answers), row["answers"]
                    ),
                }
            )
    return out


def hits(rows: list[dict[str, Any]], floor: float | None) -> float:
    good = 0
    for r in rows:
        trusted = r["best"] is not None and (floor is None or r["best"] >= floor)
        good += r["reranked"] if trusted else r["similarity"]
    return 100 * good / max(1, len(rows))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", type=Path, action="append", required=True, help="repeatable")
    parser.add_argument("--kg", default="metaqa")
    args = parser.parse_args(argv)
    parts: dict[str, list[dict[str, Any]]] = {}
    for path in args.set:
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        answered = answer_all(rows, args.kg)
        for part in ("tune", "heldout"):
            parts[f"{path.stem} {part}"] = [r for r in answered if r["part"] == part]
    tune = [r for name, rows in parts.items() if name.endswith("tune") for r in rows]
    best = sorted(r["best"] for r in tune if r["best"] is not None)
    deciles = sorted({round(best[int(q / 10 * (len(best) - 1))], 3) for q in range(1, 10)})
    probabilities = [round(math.log(p), 3) for p in (0.001, 0.01, 0.05, 0.1)]
    sets = " ".join(f"--set {p}" for p in args.set)
    print(f"`python bench/frag_rerank_floor.py {sets}`\n")
    print("Hits@1 %; n: " + ", ".join(f"{name} {len(rows)}" for name, rows in parts.items()) + ".\n")
    print("| rule | " + " | ".join(parts) + " | tune, all sets |\n|---|" + "---:|" * (len(parts) + 1))
    rules: list[tuple[str, float | None]] = [("similarity only", float("inf")), ("reranked, no floor", None)]
    rules += [(f"reranked unless best log-p < {f} (tune decile)", f) for f in deciles]
    rules += [(f"reranked unless best log-p < {f} (p = {math.exp(f):.3g})", f) for f in probabilities]
    for label, floor in rules:
        cells = [f"{hits(rows, floor):.1f}" for rows in parts.values()] + [f"{hits(tune, floor):.1f}"]
        print(f"| {label} | " + " | ".join(cells) + " |")
    shipped = FragConfig().rerank_floor
    print(
        f"\nShipped (FragConfig.rerank_floor): {shipped}.",
        f"Best log-probability on tune: {best[0]} .. {best[-1]}.",
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
