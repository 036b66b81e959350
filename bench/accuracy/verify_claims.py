"""`kgqa verify` on the claim set built from the KB: accuracy, per label and part, and the confusion matrix.

    python -m bench.accuracy.verify_claims [--set bench/questions/metaqa_claims.jsonl] [--part heldout]

Report the held-out part; the tune part is the only one to look at while changing the verifier.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from kgqa.graph.connection import open_driver
from kgqa.qa.verification import NOT_ENOUGH, REFUTED, SUPPORTED, verify_claim
from rich.console import Console
from rich.progress import track

from bench.common import REPO

STDERR = Console(stderr=True)  # progress on stderr, so that stdout is the report alone

LABELS = (SUPPORTED, REFUTED, NOT_ENOUGH)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", type=Path, default=REPO / "bench" / "questions" / "metaqa_claims.jsonl")
    parser.add_argument("--part", choices=("tune", "heldout", "all"), default="all")
    parser.add_argument("--kg", default="metaqa")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    rows = [json.loads(line) for line in args.set.read_text(encoding="utf-8").splitlines() if line.strip()]
    if args.part != "all":
        rows = [r for r in rows if r["part"] == args.part]
    confusion: Counter[tuple[str, str]] = Counter()
    results = []
    with open_driver() as driver:
        for row in track(rows, description="claims", transient=True, console=STDERR):
            verdict = verify_claim(driver, row["claim"], args.kg)
            confusion[(row["label"], verdict.label)] += 1
            results.append(
                {**row, "predicted": verdict.label, "question": verdict.question, "kg_says": verdict.kg_says}
            )
    n = len(rows)
    right = sum(v for (gold, got), v in confusion.items() if gold == got)
    print(
        "`python -m bench.accuracy.verify_claims " + " ".join(sys.argv[1:] if argv is None else argv) + "`\n"
    )
    print(f"{n} claims ({args.part}): accuracy {100 * right / n:.1f}%\n")
    print("| gold \\ predicted | " + " | ".join(LABELS) + " | n | recall |")
    print("|---|" + "---:|" * (len(LABELS) + 2))
    for gold in LABELS:
        total = sum(confusion[(gold, p)] for p in LABELS)
        cells = " | ".join(str(confusion[(gold, p)]) for p in LABELS)
        recall = 100 * confusion[(gold, gold)] / total if total else 0.0
        print(f"| {gold} | {cells} | {total} | {recall:.1f} |")
    if args.out:
        args.out.write_text(json.dumps(results, indent=1, ensure_ascii=False), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
