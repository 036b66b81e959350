"""Entity-linking accuracy on MetaQA questions with the brackets removed.

Top-1 is correct when the best linked entity is the bracketed one. Reads ../shared/data/metaqa (or
$KGQA_SHARED_DATA/metaqa) and the KG `metaqa` on the configured server (NEO4J_* or the managed one; for the
test server set KGQA_HOME=~/.kgqa-test KGQA_BOLT_PORT=7697).

    python bench/linking_metaqa.py --split dev --limit 1000 [--typos] [--lower] [--show-errors 20]
"""

from __future__ import annotations

import argparse
import os
import random
import re
import statistics
import sys
import time
from functools import partial
from pathlib import Path
from typing import TypeVar

from kgqa.graph.connection import open_driver
from kgqa.retrieve.linking import link_entities
from server_retry import with_retry  # bench/ is on sys.path when a script runs

DATA = Path(os.environ.get("KGQA_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
T = TypeVar("T")
BRACKET = re.compile(r"\[([^\[\]]+)\]")


def load_questions(split: str, hop: int) -> list[tuple[str, str]]:
    path = DATA / "metaqa" / f"{hop}-hop" / "vanilla" / f"qa_{split}.txt"
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        question = line.split("\t", 1)[0]
        match = BRACKET.search(question)
        if match:
            out.append((question, match.group(1)))
    return out


def add_typo(text: str, rng: random.Random) -> str:
    """One deleted letter inside the longest word of the entity (a realistic single typo)."""
    words = text.split(" ")
    k = max(range(len(words)), key=lambda i: len(words[i]))
    w = words[k]
    if len(w) < 5:
        return text
    pos = rng.randrange(1, len(w) - 1)
    words[k] = w[:pos] + w[pos + 1 :]
    return " ".join(words)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--split", default="dev", choices=["dev", "test"])
    ap.add_argument("--hops", default="1,2,3")
    ap.add_argument("--limit", type=int, default=1000, help="questions per hop (random sample, fixed seed)")
    ap.add_argument("--kg", default="metaqa")
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--typos", action="store_true", help="delete one letter of the entity's longest word")
    ap.add_argument("--lower", action="store_true", help="lower-case the whole question")
    ap.add_argument("--show-errors", type=int, default=0)
    args = ap.parse_args()
    if not (DATA / "metaqa").is_dir():
        print(f"MetaQA not found under {DATA} (set KGQA_SHARED_DATA)", file=sys.stderr)
        return 2
    rng = random.Random(args.seed)
    driver = open_driver()
    try:
        link_entities(driver, "warm up [The Matrix]", args.kg)
        for hop in [int(h) for h in args.hops.split(",")]:
            questions = load_questions(args.split, hop)
            if args.limit and len(questions) > args.limit:
                questions = rng.sample(questions, args.limit)
            correct = any_correct = empty = 0
            latencies: list[float] = []
            errors: list[str] = []
            for question, gold in questions:
                entity = add_typo(gold, rng) if args.typos else gold
                free = question.replace(f"[{gold}]", entity)
                if args.lower:
                    free = free.lower()
                began = time.perf_counter()
                linked = with_retry(partial(link_entities, driver, free, args.kg))
                latencies.append((time.perf_counter() - began) * 1000)
                if not linked:
                    empty += 1
                if linked and linked[0].name == gold:
                    correct += 1
                elif len(errors) < args.show_errors:
                    got = [(e.name, e.how, e.score) for e in linked]
                    errors.append(f"  {free!r}: gold={gold!r} got={got}")
                any_correct += any(e.name == gold for e in linked)
            n = len(questions)
            lat = sorted(latencies)
            print(
                f"{args.split} {hop}-hop n={n}: top-1 {correct / n:.2%}  in top-3 {any_correct / n:.2%}  "
                f"empty {empty / n:.2%}  latency p50 {statistics.median(lat):.1f} ms  "
                f"p95 {lat[int(0.95 * (n - 1))]:.1f} ms"
            )
            for line in errors:
                print(line)
    finally:
        driver.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
