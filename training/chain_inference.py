"""The relation chain of a labelled question that does not say it: read off the KG.

For each question, the chains of one or two steps from its topic entity that reach at least one of its
answers are collected in the database (``training/chains_to_answers``), and each is walked in full
(``training/chain_ends``) for its precision. The chain with the best F1 of its walk against the answers is
the question's chain (a tie goes to the shorter chain, then the one reaching more answers); a question whose
best F1 is below ``MIN_F1`` gets none. This is SubgraphRAG's and GSR's weak supervision, done once.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from typing import Protocol

from kgqa.core.chains import Chain
from kgqa.graph.cypher import render
from neo4j import Driver, RoutingControl
from tqdm import tqdm


class LabelledQuestion(Protocol):
    """What chain inference reads of a question (:class:`kgqa.training.questions.LabelledQuestion` has it)."""

    @property
    def topic_ids(self) -> tuple[str, ...]: ...

    @property
    def answer_ids(self) -> tuple[str, ...]: ...


MAX_HOPS = 2  # three-step walks from a hub are costly, and labelled questions rarely need them unsaid
MIN_F1 = 0.2
MAX_PATHS = 5_000
BATCH = 100
_PLAIN = re.compile(r"^[^`]+$")


def infer_chains(
    driver: Driver, kg: str, questions: Sequence[LabelledQuestion], max_hops: int = MAX_HOPS
) -> list[Chain | None]:
    candidates: dict[int, dict[Chain, int]] = defaultdict(dict)  # question -> chain -> answers reached
    open_questions = list(range(len(questions)))
    best: dict[int, tuple[float, int, int, Chain]] = {}
    for hops in range(1, max_hops + 1):
        rows = [
            {"key": i, "topics": list(questions[i].topic_ids), "answers": list(questions[i].answer_ids)}
            for i in open_questions
        ]
        query = render("training/chains_to_answers", hops=hops)
        found: dict[int, dict[Chain, int]] = defaultdict(dict)
        for start in tqdm(range(0, len(rows), BATCH), desc=f"chains of {hops} hops", leave=False):
            records = driver.execute_query(
                query,
                {"kg": kg, "rows": rows[start : start + BATCH], "max_paths": MAX_PATHS},
                routing_=RoutingControl.READ,
            ).records
            for r in records:
                chain = tuple((str(rel), str(way)) for rel, way in r["chain"])
                found[int(r["key"])][chain] = int(r["reached"])
        _score(driver, kg, questions, found, best)
        for i, chains in found.items():
            candidates[i].update(chains)
        # a question answered exactly needs no longer chain
        open_questions = [i for i in open_questions if best.get(i, (0.0,))[0] < 1.0]
    return [best[i][3] if i in best and best[i][0] >= MIN_F1 else None for i in range(len(questions))]


def _score(
    driver: Driver,
    kg: str,
    questions: Sequence[LabelledQuestion],
    found: dict[int, dict[Chain, int]],
    best: dict[int, tuple[float, int, int, Chain]],
) -> None:
    by_chain: dict[Chain, list[int]] = defaultdict(list)
    for i, chains in found.items():
        for chain in chains:
            if all(_PLAIN.match(rel) for rel, _way in chain):
                by_chain[chain].append(i)
    for chain, members in by_chain.items():
        query = render("training/chain_ends", steps=list(chain))
        for start in range(0, len(members), BATCH):
            rows = [
                {"key": i, "topics": list(questions[i].topic_ids)} for i in members[start : start + BATCH]
            ]
            records = driver.execute_query(
                query, {"kg": kg, "rows": rows, "max_paths": MAX_PATHS}, routing_=RoutingControl.READ
            ).records
            for r in records:
                i, ends = int(r["key"]), int(r["ends"])
                reached = found[i][chain]
                precision = reached / max(ends, 1)
                recall = reached / max(len(set(questions[i].answer_ids)), 1)
                f1 = 0.0 if reached == 0 else 2 * precision * recall / (precision + recall)
                rank = (round(f1, 6), -len(chain), reached, chain)
                if i not in best or rank[:3] > best[i][:3]:
                    best[i] = rank
