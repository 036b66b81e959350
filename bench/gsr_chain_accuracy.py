"""GSR's chain accuracy on a MetaQA run: is the question type's path the top-1 chain, or among the top 3?

    python bench/gsr_chain_accuracy.py bench/results/metaqa-test-gsr.jsonl

Reads the per-question JSONL of ``kgqa eval metaqa --method gsr`` (each line's trace has the generated chains,
best first) and compares them with the path of the line's question type (``core.metaqa.qtype_steps``).
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from kgqa.core.metaqa import qtype_steps


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("jsonl", type=Path)
    args = parser.parse_args(argv)
    n: Counter[int] = Counter()
    top1: Counter[int] = Counter()
    top3: Counter[int] = Counter()
    for line in args.jsonl.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        chains = (row.get("trace") or {}).get("chains")
        if "question" not in row or chains is None or not row.get("qtype"):
            continue
        gold = [list(step) for step in qtype_steps(row["qtype"])]
        generated = [[list(step) for step in chain] for chain, _score in chains]
        hops = int(row["hops"])
        n[hops] += 1
        top1[hops] += bool(generated) and generated[0] == gold
        top3[hops] += gold in generated[:3]
    print(f"`python bench/gsr_chain_accuracy.py {args.jsonl}`\n")
    print("| hops | n | chain top-1 | chain top-3 |\n|---|---:|---:|---:|")
    for hops in sorted(n):
        print(f"| {hops} | {n[hops]} | {100 * top1[hops] / n[hops]:.1f} | {100 * top3[hops] / n[hops]:.1f} |")
    total = sum(n.values())
    print(
        f"| all | {total} | {100 * sum(top1.values()) / total:.1f} | {100 * sum(top3.values()) / total:.1f} |"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
