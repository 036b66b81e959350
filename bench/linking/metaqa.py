"""Entity-linking accuracy on MetaQA questions with the brackets removed, and on the free-form question set.

MetaQA: top-1 is correct when the best linked entity is the bracketed one; ``--typos`` deletes one letter of
the entity's longest word, ``--lower`` lower-cases the question. Free-form (``--freeform``, the hand-written
``bench/questions/metaqa_freeform.jsonl``): top-1 is correct when the best linked entity is one of the
question's topics, all-found when every topic is among the linked entities; reported per part (``tune`` and
``heldout``; the held-out part is never tuned on) and per kind of question. ``--set`` adds other hand-written
sets in the same format (``metaqa_two_entity.jsonl``, ``metaqa_freeform_b.jsonl``). Everywhere, *extra* is the
share of questions that also link a name that is none of the question's topics (a spurious entity pins a
wrong node in a pattern); an entity of the same name as a topic (the tag "tom hanks") is not extra.

Links through ``kgqa.retrieve.linking.link_entities`` (the in-database ``kgqa.link.entities``) against KG
``metaqa`` on the configured server (NEO4J_* or the managed one; for the test server set
KGQA_HOME=~/.kgqa-test KGQA_BOLT_PORT=7697).

    python -m bench.linking.metaqa --split dev --n 1000 [--typos] [--lower] [--show-errors 20]
    python -m bench.linking.metaqa --freeform [--set bench/questions/metaqa_two_entity.jsonl] [--out F.md] \
        [--show-errors 20]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections import defaultdict
from functools import partial
from pathlib import Path

from kgqa.core.config import shared_data_dir
from kgqa.core.text import normalize_answer, without_brackets
from kgqa.core.types import LinkedEntity
from kgqa.evaluation.metaqa import read_questions
from kgqa.graph.connection import open_driver
from kgqa.retrieve.linking import link_entities
from neo4j import Driver

from bench.common import REPO, add_sample_options, with_retry

FREEFORM = REPO / "bench" / "questions" / "metaqa_freeform.jsonl"


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


def _link(driver: Driver, question: str, kg: str) -> tuple[list[LinkedEntity], float]:
    began = time.perf_counter()
    linked = with_retry(partial(link_entities, driver, question, kg))
    return linked, (time.perf_counter() - began) * 1000


def _extra(linked: list[LinkedEntity], topics: set[str]) -> bool:
    gold = {normalize_answer(t) for t in topics}
    return any(normalize_answer(e.name) not in gold for e in linked)


def _latency(latencies: list[float]) -> str:
    ordered = sorted(latencies)
    return f"p50 {statistics.median(ordered):.1f} ms  p95 {ordered[int(0.95 * (len(ordered) - 1))]:.1f} ms"


def run_metaqa(driver: Driver, args: argparse.Namespace) -> None:
    rng = random.Random(args.seed)
    for hop in [int(h) for h in args.hops.split(",")]:
        questions = read_questions(args.split, hop, allow_test=True)  # linking is measured, nothing is tuned
        if args.limit and len(questions) > args.limit:
            questions = rng.sample(questions, args.limit)
        correct = any_correct = empty = extra = 0
        latencies: list[float] = []
        errors: list[str] = []
        for q in questions:
            gold = q.topic
            entity = add_typo(gold, rng) if args.typos else gold
            free = without_brackets(q.question.replace(f"[{gold}]", entity))
            if args.lower:
                free = free.lower()
            linked, ms = _link(driver, free, args.kg)
            latencies.append(ms)
            empty += not linked
            extra += _extra(linked, {gold})
            if linked and linked[0].name == gold:
                correct += 1
            elif len(errors) < args.show_errors:
                errors.append(f"  {free!r}: gold={gold!r} got={[(e.name, e.how, e.score) for e in linked]}")
            any_correct += any(e.name == gold for e in linked)
        n = len(questions)
        print(
            f"{args.split} {hop}-hop n={n}: top-1 {correct / n:.2%}  in top-3 {any_correct / n:.2%}  "
            f"empty {empty / n:.2%}  extra {extra / n:.2%}  latency {_latency(latencies)}"
        )
        for line in errors:
            print(line)


def run_freeform(driver: Driver, args: argparse.Namespace) -> dict[str, dict[str, float]]:
    rows = []
    for path in [*([] if args.only_sets else [FREEFORM]), *(Path(p) for p in args.set)]:
        prefix = "" if path == FREEFORM else path.stem.removeprefix("metaqa_") + " "
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                rows.append({**row, "part": prefix + row["part"]})
    tally: dict[str, list[tuple[bool, bool, bool, bool]]] = defaultdict(list)
    latencies: list[float] = []
    errors: list[str] = []
    for row in rows:
        linked, ms = _link(driver, row["question"], args.kg)
        latencies.append(ms)
        names = [e.name for e in linked]
        gold = set(row["topics"])
        top1 = bool(names) and names[0] in gold
        every = gold <= set(names)
        for group in (row["part"], f"{row['part']}/{row['kind']}"):
            tally[group].append((top1, every, not names, _extra(linked, gold)))
        # held-out: numbers only
        if not every and len(errors) < args.show_errors and row["part"].endswith("tune"):
            errors.append(
                f"  {row['question']!r}: gold={sorted(gold)} got={[(e.name, e.how) for e in linked]}"
            )
    summary = {}
    for group in sorted(tally, key=lambda g: (g.count("/"), g)):
        results = tally[group]
        n = len(results)
        summary[group] = {
            "n": n,
            "top1": sum(r[0] for r in results) / n,
            "all_topics": sum(r[1] for r in results) / n,
            "empty": sum(r[2] for r in results) / n,
            "extra": sum(r[3] for r in results) / n,
        }
        s = summary[group]
        print(
            f"freeform {group:32} n={n:3}  top-1 {s['top1']:.2%}  all topics {s['all_topics']:.2%}  "
            f"empty {s['empty']:.2%}  extra {s['extra']:.2%}"
        )
    print(f"freeform latency {_latency(latencies)}")
    for line in errors:
        print(line)
    if args.out:
        write_freeform_table(args, summary)
    return summary


def write_freeform_table(args: argparse.Namespace, summary: dict[str, dict[str, float]]) -> None:
    """The parts of every set (not their kinds) as a Markdown table, under the command that made it."""
    command = "python -m bench.linking.metaqa " + " ".join(sys.argv[1:])
    lines = [
        f"`{command}`",
        "",
        f"Entity linking on KG `{args.kg}`: the first linked entity is a topic of the question, every topic "
        "is linked, nothing is linked, a name that is no topic is linked too (percent of questions).",
        "",
        "| set, part | questions | topic first | every topic | nothing linked | extra |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for group, s in summary.items():
        if "/" not in group:
            lines.append(
                f"| {group} | {s['n']:.0f} | {100 * s['top1']:.1f} | {100 * s['all_topics']:.1f} "
                f"| {100 * s['empty']:.1f} | {100 * s['extra']:.1f} |"
            )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_sample_options(ap, n=1000, help="questions per hop (seeded sample)", dest="limit", alias="--limit")
    ap.add_argument("--kg", default="metaqa")
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--typos", action="store_true", help="delete one letter of the entity's longest word")
    ap.add_argument("--lower", action="store_true", help="lower-case the whole question")
    ap.add_argument("--freeform", action="store_true", help="the hand-written free-form set instead")
    ap.add_argument("--set", action="append", default=[], help="with --freeform: another set in its format")
    ap.add_argument("--show-errors", type=int, default=0)
    ap.add_argument("--only-sets", action="store_true", help="with --set: no default set")
    ap.add_argument("--out", type=Path, help="with --freeform: also write the parts' table here (Markdown)")
    args = ap.parse_args()
    if not (shared_data_dir() / "metaqa").is_dir() and not args.freeform:
        print(f"MetaQA not found under {shared_data_dir()} (set KGQA_SHARED_DATA)", file=sys.stderr)
        return 2
    driver = open_driver()
    try:
        link_entities(driver, "warm up [The Matrix]", args.kg)
        if args.freeform:
            run_freeform(driver, args)
        else:
            run_metaqa(driver, args)
    finally:
        driver.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
