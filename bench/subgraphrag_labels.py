"""How good are SubgraphRAG's weak labels? Shortest paths against chain labels, both against the question's
own relation path.

    python bench/subgraphrag_labels.py [--n 300] [--hops 1,2,3] [--kg metaqa] [--out FILE.md]

MetaQA dev, the *training* part of the scorer's split (labels are what training sees; nothing is tuned
here). For each question, the candidate subgraph of its hop count (the numpy reference of
``kgqa.subgraphrag.candidates``, uncapped) is labelled three ways:

* **gold**: the walks of the question type's relation path (``core.metaqa.qtype_steps``) that end at an
  answer, never through the topic entity: what a label should be;
* **shortest**: every triple on a shortest topic-answer path (the paper's weak labels);
* **chain**: ``chain_labels`` (the relation chains of the hop count whose end set best fits the answers),
  which needs only the QA pair.

It prints, per hop, each scheme's precision and recall against gold (micro over triples, and the mean per
question), the positives per question, and for ``chain`` how often the chosen chains include the gold one.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from kgqa.core.metaqa import qtype_steps
from kgqa.graph.connection import open_driver
from kgqa.training.subgraphrag import TrainConfig, dev_splits
from kgqa.training.subgraphrag_data import (
    DdeLayout,
    chain_labels,
    load_kg_index,
    load_local_graph,
    local_subgraph,
    question_ids,
    shortest_path_labels,
)

UNCAPPED = 10**9


def gold_labels(
    heads: np.ndarray,
    relations: np.ndarray,
    tails: np.ndarray,
    topics: list[int],
    answers: set[int],
    steps: list[tuple[int, str]],
) -> np.ndarray:
    """Triples on walks of ``steps`` ((relation index, "out"|"in")) from a topic to an answer, never back
    over the triple just taken and never into a topic entity."""
    labels = np.zeros(heads.size, dtype=bool)
    out_edges: dict[tuple[int, int], list[int]] = {}
    in_edges: dict[tuple[int, int], list[int]] = {}
    for t, (h, r, tl) in enumerate(zip(heads.tolist(), relations.tolist(), tails.tolist(), strict=True)):
        out_edges.setdefault((h, r), []).append(t)
        in_edges.setdefault((tl, r), []).append(t)
    topic_set = set(topics)
    # each walk: (node, last triple, triples so far)
    walks: list[tuple[int, int, tuple[int, ...]]] = [(t, -1, ()) for t in topics]
    for relation, way in steps:
        following = []
        for node, last, path in walks:
            edges = out_edges if way == "out" else in_edges
            for t in edges.get((node, relation), ()):
                other = int(tails[t] if way == "out" else heads[t])
                if t != last and other not in topic_set:
                    following.append((other, t, path + (t,)))
        walks = following
    for node, _last, path in walks:
        if node in answers:
            labels[list(path)] = True
    return labels


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=300, help="questions per hop")
    ap.add_argument("--hops", default="1,2,3")
    ap.add_argument("--kg", default="metaqa")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--out", type=Path, default=None, help="also write the table as Markdown")
    args = ap.parse_args()
    hops_wanted = [int(h) for h in args.hops.split(",")]

    train, _val, _hold = dev_splits(TrainConfig())
    with open_driver() as driver:
        index = load_kg_index(driver, args.kg)
        graph = load_local_graph(driver, index)
    rows = []
    for hop in hops_wanted:
        pool = [q for q in train if q.hops == hop and q.qtype]
        rng = np.random.default_rng([args.seed, hop])
        picked = [pool[i] for i in rng.choice(len(pool), size=min(args.n, len(pool)), replace=False)]
        tally = {s: {"tp": 0, "pos": 0, "prec": [], "rec": []} for s in ("shortest", "chain")}
        gold_total, chain_has_gold, fallbacks, n = 0, 0, 0, 0
        for q in picked:
            topics = question_ids(index, q.topics)
            answer_ids = question_ids(index, q.answers)
            if not topics or not answer_ids:
                continue
            sub = local_subgraph(graph, topics, hop, DdeLayout(include_seed=False), max_candidates=UNCAPPED)
            local_answers = np.flatnonzero(np.isin(sub.entities, answer_ids)).tolist()
            local_topics = sub.topics.tolist()
            steps = [(index.relation(rel), way) for rel, way in qtype_steps(q.qtype or "")]
            gold = gold_labels(sub.heads, sub.relations, sub.tails, local_topics, set(local_answers), steps)
            if not gold.any():
                continue
            n += 1
            gold_total += int(gold.sum())
            n_nodes = sub.entities.size
            found = chain_labels(
                n_nodes, sub.heads, sub.relations, sub.tails, local_topics, local_answers, length=hop
            )
            fallbacks += found.fallback is not None
            gold_chain = tuple((r, ">" if way == "out" else "<") for r, way in steps)
            chain_has_gold += gold_chain in found.chains
            schemes = {
                "shortest": shortest_path_labels(
                    sub.entities.size, sub.heads, sub.tails, local_topics, local_answers
                ),
                "chain": found.labels,
            }
            for scheme, labels in schemes.items():
                tp = int((labels & gold).sum())
                t = tally[scheme]
                t["tp"] += tp
                t["pos"] += int(labels.sum())
                t["prec"].append(tp / max(1, int(labels.sum())))
                t["rec"].append(tp / int(gold.sum()))
        for scheme, t in tally.items():
            rows.append(
                (
                    hop,
                    scheme,
                    n,
                    t["tp"] / max(1, t["pos"]),
                    t["tp"] / max(1, gold_total),
                    float(np.mean(t["prec"])),
                    float(np.mean(t["rec"])),
                    t["pos"] / max(1, n),
                    gold_total / max(1, n),
                    f"{100 * chain_has_gold / max(1, n):.1f}" if scheme == "chain" else "",
                    str(fallbacks) if scheme == "chain" else "",
                )
            )
    header = (
        "| hops | labels | n | precision (micro) | recall (micro) | precision (mean) | recall (mean) "
        "| positives / q | gold / q | gold chain chosen % | fallbacks |"
    )
    lines = [
        f"`python bench/subgraphrag_labels.py --n {args.n} --hops {args.hops}` (MetaQA dev, training part; "
        "against the walks of each question type's relation path)",
        "",
        header,
        "|" + "---:|" * 11,
    ]
    for hop, scheme, n, p, r, pm, rm, pos, gold, chosen, fb in rows:
        lines.append(
            f"| {hop} | {scheme} | {n} | {p:.3f} | {r:.3f} | {pm:.3f} | {rm:.3f} | {pos:.1f} | {gold:.1f} "
            f"| {chosen} | {fb} |"
        )
    text = "\n".join(lines)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
