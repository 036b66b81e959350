"""How well a KG's question-to-path scorer picks the chain of people's questions, against frozen MiniLM.

    python -m bench.accuracy.path_scorer_chains --kg fb15k --set bench/questions/fb15k_freeform.jsonl \\
        --part tune

For each question of the set (its topic given, masked where the linker finds it), every chain of one or two
steps walkable from the topic is ranked: by the KG's fine-tuned scorer, and by the stock all-MiniLM-L6-v2
encoder (the same texts, not fine-tuned). Reports, per kind of question, the share whose first chain is the
set's own chain (*chain@1*) and whose first chain reaches a gold answer (*reaches@1*). Read the held-out
part; tune on the tune part only. ``--show-misses N`` lists N questions whose own chain is not first: where
it ranks among the walkable chains, and the chain that is first (on the tune part, to see what to fix).
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
from kgqa.core.relation_text import chain_text
from kgqa.graph.connection import open_driver
from kgqa.graph.cypher import render
from kgqa.graph.walkable import walkable_chains
from kgqa.models import kg_models
from kgqa.models.encoder import OnnxEncoder
from kgqa.models.path_scorer import PathScorer, scorer_query
from kgqa.retrieve.linking import link_entities
from rich.progress import track


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kg", required=True)
    parser.add_argument("--set", type=Path, required=True)
    parser.add_argument("--part", default="tune", choices=["tune", "heldout", "all"])
    parser.add_argument(
        "--show-misses",
        type=int,
        default=0,
        metavar="N",
        help="list N questions whose own chain the scorer does not rank first: where it ranks, and what does",
    )
    args = parser.parse_args()
    rows = [json.loads(line) for line in args.set.read_text().splitlines() if line.strip()]
    rows = [r for r in rows if args.part == "all" or r["part"] == args.part]
    directory = kg_models.part_dir(args.kg, "path_scorer")
    if not kg_models.part_installed(args.kg, "path_scorer"):
        raise SystemExit(f"KG {args.kg!r} has no path scorer: kgqa train all --kg {args.kg}")
    scorer = PathScorer(directory)
    stock = OnnxEncoder()
    tally: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    misses: list[str] = []
    with open_driver() as driver:
        for row in track(rows, description="ranking chains", transient=True):
            # a set that names its topics and answers (MetaQA's) is read by the KG's ids for those names
            row.setdefault("topic_ids", _ids(driver, args.kg, row["topics"]))
            row.setdefault("answer_ids", _ids(driver, args.kg, row["answers"]))
            walkable = walkable_chains(driver, args.kg, row["topic_ids"], row["answer_ids"])
            if not walkable:
                continue
            chains = [w.chain for w in walkable]
            gold = tuple((r, w) for r, w in row["relation_path"]) if row.get("relation_path") else None
            # the words the linker found the topic in (a typo included), else the set's names for it
            linked = link_entities(driver, row["question"], args.kg)
            spans = [e.span for e in linked if e.id in row["topic_ids"] and e.span] or row.get("topics", [])
            ranked = scorer.rank(row["question"], spans, chains)
            query = stock.embed_one(scorer_query(row["question"], spans))
            frozen = chains[int(np.argmax(stock.embed([chain_text(c) for c in chains]) @ query))]
            reaches = {w.chain for w in walkable if w.hits}
            if gold is not None and ranked[0][0] != gold:
                misses.append(_miss(row["question"], gold, ranked, reaches))
            for kind in (row["kind"], "all"):
                tune: dict[str, Any] = tally[kind]
                tune["chain@1 scorer"].append(float(ranked[0][0] == gold))
                tune["chain@1 frozen"].append(float(frozen == gold))
                tune["reaches@1 scorer"].append(float(ranked[0][0] in reaches))
                tune["reaches@1 frozen"].append(float(frozen in reaches))
    columns = ["chain@1 frozen", "chain@1 scorer", "reaches@1 frozen", "reaches@1 scorer"]
    print(f"# Chain ranking on `{args.set.name}` ({args.part}), KG `{args.kg}`\n")
    print("| kind | questions | " + " | ".join(columns) + " |")
    print("|---|---:|" + "---:|" * len(columns))
    for kind, figures in sorted(tally.items()):
        n = len(figures[columns[0]])
        print(f"| {kind} | {n} | " + " | ".join(f"{np.mean(figures[c]):.3f}" for c in columns) + " |")
    if args.show_misses:
        print(f"\n{len(misses)} questions whose own chain is not first; the first {args.show_misses}:\n")
        print("\n".join(misses[: args.show_misses]))


def _miss(question: str, gold: tuple, ranked: list, reaches: set) -> str:
    """One question whose own chain the scorer does not rank first: where it ranks, and the chain first."""
    place = next((i + 1 for i, (chain, _c, _p) in enumerate(ranked) if chain == gold), None)
    first, cosine, _probability = ranked[0]
    where = f"ranked {place} of {len(ranked)}" if place else f"not walkable among {len(ranked)}"
    reached = "reaches a gold answer" if first in reaches else "reaches none"
    return (
        f"- {question} | own chain `{chain_text(gold)}` {where} | first `{chain_text(first)}` "
        f"(cosine {cosine:.3f}, {reached})"
    )


def _ids(driver: Any, kg: str, names: list[str]) -> list[str]:
    records = driver.execute_query(render("eval/given_topics"), kg=kg, ids=[], names=names).records
    return [str(r["id"]) for r in records]


if __name__ == "__main__":
    main()
