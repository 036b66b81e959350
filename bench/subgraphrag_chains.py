"""How should SubgraphRAG's scored triples become an answer? Best walk against best relation chain.

    python bench/subgraphrag_chains.py --part validation --n 200 [--hops 1,2,3] [--model default]

Every candidate triple around the question's topic entity is scored by the installed model in the
database (``kgqa.subgraphrag.retrieve`` with k = the candidate cap), at the radius the hop classifier
predicts, exactly as ``kgqa ask --method subgraphrag`` scores them. The answer rules then compared, all on
the same scores:

* ``walk``: the end of the best single walk of the predicted length (sum of log-sigmoid of its triples);
  ``kgqa.subgraphrag.walks`` with ``rankBy: 'walk'``;
* ``chain-mean``: relation chains of the predicted length are executed from the topic entity; a chain
  scores ``sum over its steps of log(mean sigmoid of the triples it takes at that step)``; the answer is
  the best chain's end reached by the best walk along it;
* ``chain-logit``: as chain-mean with the mean logit per step (probabilities saturate near 1), what
  ``rankBy: 'chain'`` does.

Walks never enter a topic entity nor go straight back over the triple they came by; the ``simple``
variants also never reach an entity they passed (X → its director → a film he wrote → its director, him
again). Hits@1 and the F1 of the chosen chain's whole end set against the gold set. ``--part validation``
is the part of dev that only early-stopped training (the rules are chosen there); ``--part holdout`` is
the part no training or choice saw.
"""

from __future__ import annotations

import argparse
import math
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from kgqa.core.text import normalize_answer, without_brackets
from kgqa.graph.connection import open_driver
from kgqa.models import registry
from kgqa.retrieve.linking import link_entities
from kgqa.retrieve.subgraphrag import RETRIEVE_QUERY
from kgqa.training.subgraphrag import TrainConfig, dev_splits
from neo4j import RoutingControl
from rich.console import Console
from rich.progress import track

STDERR = Console(stderr=True)
LOGIT_CLIP = 20.0  # one extreme triple must not outweigh the rest of its step
Step = tuple[str, str]  # (relation, ">" forward or "<" backward)
RULES = ("walk", "chain-mean", "chain-logit")
SIMPLE = (False, True)


def sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(min(x, 50.0), -50.0)))


Arrival = tuple[float, int, tuple[str, ...]]  # (walk log-probability, triple it arrived over, nodes on it)
ARRIVALS = 3  # best walks kept per node and chain: enough that one of them may go on where the best may not


@dataclass
class Chain:
    steps: tuple[Step, ...]
    # node reached -> its best walks along this chain, best first: the best may not go on (straight back over
    # its own triple, or into a node it passed), so a few are kept
    nodes: dict[str, list[Arrival]]
    step_logits: list[list[float]]  # each triple's score taken at each step (logit, clipped to ±LOGIT_CLIP)


def chains(
    rows: Sequence[tuple[str, str, str, float]], topics: set[str], depth: int, simple: bool
) -> list[Chain]:
    """Every relation chain of exactly ``depth`` steps from the topic entities that ends somewhere other
    than a topic entity; walks never enter a topic entity, never go straight back over the triple they came
    by and, when ``simple``, never reach a node they passed already."""
    out: dict[str, list[tuple[Step, str, float, int]]] = defaultdict(list)
    for i, (head, rel, tail, score) in enumerate(rows):
        out[head].append(((rel, ">"), tail, score, i))
        out[tail].append(((rel, "<"), head, score, i))
    frontier = [Chain((), {t: [(0.0, -1, (t,))] for t in topics if t in out}, [])]
    for _level in range(depth):
        grown: dict[tuple[Step, ...], Chain] = {}
        for chain in frontier:
            for node, arrivals in chain.nodes.items():
                for step, other, score, triple in out.get(node, []):
                    if other in topics:
                        continue
                    usable = [a for a in arrivals if a[1] != triple and not (simple and other in a[2])]
                    if not usable:
                        continue
                    key = (*chain.steps, step)
                    child = grown.get(key)
                    if child is None:
                        child = grown[key] = Chain(key, {}, [*chain.step_logits, []])
                    child.step_logits[-1].append(max(min(score, LOGIT_CLIP), -LOGIT_CLIP))
                    walk = usable[0][0] + math.log(max(sigmoid(score), 1e-300))
                    kept = [*child.nodes.get(other, []), (walk, triple, (*usable[0][2], other))]
                    kept.sort(key=lambda a: -a[0])
                    child.nodes[other] = kept[:ARRIVALS]
        frontier = list(grown.values())
    return [c for c in frontier if c.nodes]


def best_walk(chain: Chain) -> float:
    return max(arrivals[0][0] for arrivals in chain.nodes.values())


def chain_score(chain: Chain, rule: str) -> float:
    if rule == "chain-mean":
        return sum(math.log(max(sum(map(sigmoid, xs)) / len(xs), 1e-300)) for xs in chain.step_logits)
    if rule == "chain-logit":
        return sum(sum(xs) / len(xs) for xs in chain.step_logits)
    return best_walk(chain)  # walk: the chain holding the best single walk


def answer(found: list[Chain], rule: str) -> tuple[str | None, set[str]]:
    if not found:
        return None, set()
    best = max(found, key=lambda c: (chain_score(c, rule), best_walk(c)))
    top = max(best.nodes.items(), key=lambda kv: kv[1][0][0])[0]
    return top, set(best.nodes)


def right_chain_rank(found: list[Chain], gold: set[str]) -> str:
    """Where chain-logit ranks the best chain whose ends are exactly the gold answers ("none": no chain's
    are, e.g. a wrong topic entity or hop count): how far the scorer is from picking it."""
    ranked = sorted(found, key=lambda c: (-chain_score(c, "chain-logit"), -best_walk(c)))
    for rank, chain in enumerate(ranked, start=1):
        if f1(set(chain.nodes), gold) == 1.0:
            return "1" if rank == 1 else "2" if rank == 2 else "3-5" if rank <= 5 else "lower"
    return "none"


def f1(predicted: set[str], gold: set[str]) -> float:
    hit = len({normalize_answer(p) for p in predicted} & gold)
    if not hit:
        return 0.0
    precision, recall = hit / len(predicted), hit / len(gold)
    return 2 * precision * recall / (precision + recall)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="default")
    parser.add_argument("--part", choices=("validation", "holdout"), default="validation")
    parser.add_argument("--n", type=int, default=200, help="questions per hop")
    parser.add_argument("--hops", default="1,2,3")
    args = parser.parse_args(argv)
    _train, validation, holdout = dev_splits(TrainConfig(seed=13))
    questions = validation if args.part == "validation" else holdout
    classifiers = registry.question_classifiers()
    print(
        f"`python bench/subgraphrag_chains.py --model {args.model} --part {args.part} --n {args.n}"
        f" --hops {args.hops}` (MetaQA dev, {args.part} part; hop count from the classifier)\n"
    )
    names = [f"{rule}{', simple' if simple else ''}" for simple in SIMPLE for rule in RULES]
    columns = " | ".join(f"{r} Hits@1 | {r} F1" for r in names)
    print(f"| hops | n | {columns} | best chain right | right chain 2nd | 3rd–5th | lower | none |")
    print("|---:|---:|" + "---:|---:|" * len(names) + "---:|---:|---:|---:|---:|")
    with open_driver() as driver:
        for hops in [int(h) for h in args.hops.split(",")]:
            group = [q for q in questions if q.hops == hops][: args.n]
            variants = [(rule, simple) for simple in SIMPLE for rule in RULES]
            hits = dict.fromkeys(variants, 0)
            f1s = dict.fromkeys(variants, 0.0)
            right_at: Counter[str] = Counter()  # where chain-logit (simple) ranks the first chain of F1 1
            for q in track(group, description=f"{hops}-hop", console=STDERR, transient=True):
                linked = link_entities(driver, q.question, "metaqa")
                if not linked:
                    continue
                spans = [e.span or e.name for e in linked]
                predicted = int(classifiers.predict_hops(q.question, spans).hops)
                config = {
                    "k": 20000,
                    "kg": "metaqa",
                    "model": args.model,
                    "topicEntities": [e.id for e in linked],
                    "topicSpans": spans,
                    "hops": max(predicted, 2),
                }
                records, _s, _k = driver.execute_query(
                    RETRIEVE_QUERY,
                    question=without_brackets(q.question),
                    config=config,
                    routing_=RoutingControl.READ,
                )
                rows = [
                    (str(r["head"]), str(r["relation"]), str(r["tail"]), float(r["score"])) for r in records
                ]
                gold = {normalize_answer(a) for a in q.answers}
                for simple in SIMPLE:
                    found = chains(rows, {e.name for e in linked}, predicted, simple)
                    for rule in RULES:
                        top, ends = answer(found, rule)
                        hits[(rule, simple)] += int(top is not None and normalize_answer(top) in gold)
                        f1s[(rule, simple)] += f1(ends, gold)
                right_at[right_chain_rank(chains(rows, {e.name for e in linked}, predicted, True), gold)] += 1
            n = len(group)
            cells = " | ".join(f"{100 * hits[v] / n:.1f} | {100 * f1s[v] / n:.1f}" for v in variants)
            ranks = " | ".join(f"{100 * right_at[b] / n:.1f}" for b in ("1", "2", "3-5", "lower", "none"))
            print(f"| {hops} | {n} | {cells} | {ranks} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
