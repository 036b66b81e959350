"""Entity linking on WebQSP's questions, as people typed them: is the dataset's topic entity the first entity
kgqa links, among those it links, or is nothing linked at all; and how long linking takes.

*Among them or their alternatives*: the topic is linked, or is one of the other entities the linked words
name (``LinkedEntity.alternatives``), which sgrag walks when its chain leads nowhere from the linked one.

Only the questions whose topic entity is in the KG count (FB15k-237 holds a part of Freebase). ``--split
train`` (WebQSP's train questions) is the part to look at and tune on; ``--split test`` is for reporting only.
``--split dev`` is the train questions the KG's training held out (a KG trained with ``--questions
webqsp_train_beamqa.csv``), less the linker's tune sample (``--split train --limit 1000``, seed 0): train
questions nothing was tuned on.

    python -m bench.linking.webqsp --kg fb15k --split train --limit 1000 --show-errors 30
    python -m bench.linking.webqsp --kg fb15k-webqsp --split dev
    python -m bench.linking.webqsp --kg fb15k --split test --out bench/results/linking/webqsp-test-fb15k.md

Links through ``kgqa.retrieve.linking.link_entities`` (the in-database ``kgqa.link.entities``) on the
configured server (for the test server: KGQA_HOME=~/.kgqa-test KGQA_BOLT_PORT=7697).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from kgqa.core.config import shared_data_dir
from kgqa.evaluation.datasets import EvalQuestion, read_webqsp, read_webqsp_train
from kgqa.evaluation.reachable import held_out_questions
from kgqa.graph.connection import open_driver
from kgqa.models.kg_models import read_held_out
from kgqa.retrieve.linking import link_entities
from neo4j import Driver


def in_kg(driver: Driver, kg: str, ids: list[str]) -> set[str]:
    records = driver.execute_query(
        "MATCH (e:Entity {kg: $kg}) WHERE e.id IN $ids RETURN e.id AS id", {"kg": kg, "ids": ids}
    ).records
    return {str(r["id"]) for r in records}


TUNE_SAMPLE = 1000  # the linker's settings were chosen on this seeded sample of train (seed 0)


def questions(split: str, limit: int | None, seed: int, kg: str) -> list[EvalQuestion]:
    root = shared_data_dir() / "webqsp"
    if split == "test":
        return read_webqsp(root, limit, seed).questions
    if split == "dev":
        tuned = {q.id for q in read_webqsp_train(root, "train", TUNE_SAMPLE, 0).questions}
        held = held_out_questions(read_webqsp_train(root, "dev"), sorted(read_held_out(kg))).questions
        return [q for q in held if q.id not in tuned][:limit]
    return read_webqsp_train(root, split, limit, seed).questions


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else 0.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--kg", default="fb15k")
    parser.add_argument("--split", choices=("train", "dev", "test"), default="train")
    parser.add_argument("--limit", type=int, help="a seeded sample of this many questions")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--show-errors", type=int, default=0, help="print this many misses")
    parser.add_argument("--out", type=Path, help="also write the table here (Markdown)")
    args = parser.parse_args(argv)

    asked = questions(args.split, args.limit, args.seed, args.kg)
    with open_driver() as driver:
        known = in_kg(driver, args.kg, sorted({i for q in asked for i, _name in q.topic_entities}))
        scoped = [q for q in asked if any(i in known for i, _name in q.topic_entities)]
        for q in scoped[:5]:  # warm: the first questions load the procedure's indexes
            link_entities(driver, q.question, args.kg)
        first = among = reachable = nothing = 0
        latencies: list[float] = []
        misses: list[str] = []
        for q in scoped:
            gold = {i for i, _name in q.topic_entities if i in known}
            began = time.perf_counter()
            linked = link_entities(driver, q.question, args.kg)
            latencies.append((time.perf_counter() - began) * 1000)
            ids = [e.id for e in linked]
            first += bool(ids) and ids[0] in gold
            among += bool(gold & set(ids))
            # what a method may still walk from: the linked entities and the others their words name
            reachable += bool(gold & (set(ids) | {a.id for e in linked for a in e.alternatives}))
            nothing += not ids
            if not (ids and ids[0] in gold):
                names = ", ".join(f"{e.name} ({e.how} {e.score:.2f} '{e.span}')" for e in linked) or "nothing"
                misses.append(f"- {q.question} | gold {sorted(gold)} | linked {names}")
    n = max(len(scoped), 1)
    command = "python -m bench.linking.webqsp " + " ".join(argv if argv is not None else sys.argv[1:])
    lines = [
        f"`{command}`",
        "",
        f"WebQSP {args.split} on KG `{args.kg}`: {len(scoped)} of {len(asked)} questions have their topic "
        "entity in the KG.",
        "",
        "| questions | topic linked first | topic among the linked | among them or their alternatives "
        "| nothing linked | p50 ms | p95 ms |",
        "|---:|---:|---:|---:|---:|---:|---:|",
        f"| {len(scoped)} | {100 * first / n:.1f} | {100 * among / n:.1f} | {100 * reachable / n:.1f} "
        f"| {100 * nothing / n:.1f} "
        f"| {statistics.median(latencies) if latencies else 0:.1f} | {percentile(latencies, 0.95):.1f} |",
    ]
    print("\n".join(lines))
    if args.show_errors:
        print("\n" + "\n".join(misses[: args.show_errors]))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
