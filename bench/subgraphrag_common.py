"""The pieces of the SubgraphRAG benchmark (bench/subgraphrag_webqsp.py) that measure one question.

Each question is run through the real in-database paths:

* the gold triples are every triple on a shortest topic→answer path within the candidate radius (the
  weak-label definition the scorer was trained on), from the uncapped numpy reference of the candidates;
* ``kgqa.subgraphrag.retrieve`` (a trained scorer, ONNX inside Neo4j) and the cosine baseline
  (``kgqa.subgraphrag.cosine`` over the same candidates) each return their top max(K) triples once;
  metrics at every K come from prefixes.

Metrics per question and K: triple recall (gold triples among the top K), answer recall (gold answers among
the entities of the top K), Hits@1 of two extractive rules: ``top`` = the first non-topic entity in score
order, ``leaf`` = ``kgqa.retrieve.subgraphrag.answer_candidates`` (path ends; meant for the trained model).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from kgqa.core.text import normalize_answer, without_brackets
from kgqa.retrieve.cosine_baseline import COSINE_QUERY
from kgqa.retrieve.subgraphrag import (
    RETRIEVE_QUERY,
    answer_candidates,
    dedup_scored,
    select_answers,
)
from kgqa.training.subgraphrag_data import (
    DdeLayout,
    KgIndex,
    LocalGraph,
    local_subgraph,
    shortest_path_labels,
)
from neo4j import Driver, RoutingControl

Triplet = tuple[str, str, str]
COSINE = "cosine"
UNCAPPED = 10**9


def embed_questions(texts: Sequence[str]) -> np.ndarray:
    """z_q for many questions, through the same encoder the retriever uses."""
    from kgqa.models.encoder import embed

    return embed([without_brackets(t) for t in texts])


@dataclass
class Gold:
    triples: set[Triplet]
    answers: set[str]  # normalised names
    answers_in_candidates: int
    candidates: int


def gold_for(
    graph: LocalGraph,
    index: KgIndex,
    topic_ids: Sequence[str],
    answer_ids: Sequence[int],
    answer_names: Iterable[str],
    hops: int,
) -> Gold:
    """Gold triples: every triple on a shortest topic→answer path within ``hops`` (no candidate cap, so a
    retriever whose capped candidates miss some of them pays for it). Computed with the numpy reference of
    the candidate definition (identical to the procedure's below the cap; see the training parity check)."""
    sub = local_subgraph(
        graph,
        [index.entity(t) for t in topic_ids],
        hops,
        DdeLayout(include_seed=False),
        max_candidates=UNCAPPED,
    )
    answers_local = np.flatnonzero(np.isin(sub.entities, np.asarray(answer_ids, dtype=np.int64)))
    labels = shortest_path_labels(
        sub.entities.size, sub.heads, sub.tails, sub.topics.tolist(), answers_local.tolist()
    )
    names = index.entity_names
    triples = {
        (names[sub.entities[h]], index.relation_names[r], names[sub.entities[t]])
        for h, r, t in zip(sub.heads[labels], sub.relations[labels], sub.tails[labels], strict=True)
    }
    return Gold(triples, {normalize_answer(a) for a in answer_names}, int(answers_local.size), sub.size)


def answer_ceiling(gold: Gold, topic_names: Sequence[str], k: int) -> float | None:
    """The share of the gold answers that any K triples could show: a shortest-path tree over the gold
    triples from the topic entities, answers added cheapest first (the tree edges each one adds) until K
    triples are spent. A 3-hop question with 60 answers on their own branches needs about 120 triples, so
    answer recall@100 cannot reach 1 there whatever the scorer does."""
    if not gold.answers:
        return None
    adjacency: dict[str, list[tuple[str, Triplet]]] = {}
    for triple in gold.triples:
        head, _rel, tail = triple
        adjacency.setdefault(head, []).append((tail, triple))
        adjacency.setdefault(tail, []).append((head, triple))
    parent: dict[str, tuple[str, Triplet] | None] = {t: None for t in topic_names if t in adjacency}
    frontier = list(parent)
    while frontier:
        following = []
        for node in frontier:
            for other, triple in adjacency.get(node, ()):
                if other not in parent:
                    parent[other] = (node, triple)
                    following.append(other)
        frontier = following
    reached = [n for n in parent if normalize_answer(n) in gold.answers and parent[n] is not None]
    used: set[Triplet] = set()
    covered: set[str] = set()
    while reached:
        costs = []
        for node in reached:
            chain, at = [], node
            while parent[at] is not None:
                previous, triple = parent[at]  # type: ignore[misc]
                if triple not in used:
                    chain.append(triple)
                at = previous
            costs.append((len(chain), node, chain))
        cost, node, chain = min(costs)
        if len(used) + cost > k:
            break
        used.update(chain)
        covered.add(normalize_answer(node))
        reached.remove(node)
    return len(covered) / len(gold.answers)


def run_model(
    driver: Driver,
    kg: str,
    model: str | None,
    question: str,
    topic_ids: Sequence[str],
    vector: np.ndarray,
    k: int,
    hops: int,
    max_candidates: int,
    walk_hops: int | None = None,
) -> tuple[list[tuple[str, str, str, float]], float]:
    """The procedure's rows in rank order. ``model``: a scorer installed by name (None: the KG's own);
    ``walk_hops``: whole walks of that many hops first."""
    config: dict[str, Any] = {
        "k": k,
        "kg": kg,
        "topicEntities": list(topic_ids),
        "questionEmbedding": [float(x) for x in vector],
        "hops": hops,
        "maxCandidates": max_candidates,
    }
    if model:
        config["model"] = model
    if walk_hops is not None:
        config.update({"select": "paths", "pathHops": walk_hops})
    began = time.perf_counter()
    records, _, _ = driver.execute_query(
        RETRIEVE_QUERY, question=without_brackets(question), config=config, routing_=RoutingControl.READ
    )
    ms = (time.perf_counter() - began) * 1000
    return [(r["head"], r["relation"], r["tail"], float(r["score"])) for r in records], ms


def run_cosine(
    driver: Driver,
    kg: str,
    topic_ids: Sequence[str],
    vector: np.ndarray,
    k: int,
    hops: int,
    max_candidates: int,
) -> tuple[list[tuple[str, str, str, float]], float]:
    began = time.perf_counter()
    records, _, _ = driver.execute_query(
        COSINE_QUERY,
        kg=kg,
        topicIds=list(topic_ids),
        config={
            "hops": hops,
            "maxCandidates": max_candidates,
            "questionEmbedding": [float(x) for x in vector],
            "k": k,
        },
        routing_=RoutingControl.READ,
    )
    ms = (time.perf_counter() - began) * 1000
    return [(r["head"], r["relation"], r["tail"], float(r["score"])) for r in records], ms


def question_metrics(
    rows: Sequence[tuple[str, str, str, float]],
    gold: Gold,
    topic_names: Sequence[str],
    ks: Sequence[int],
    leaf_rule: bool,
    by_score: bool = True,
) -> dict[str, float | None]:
    """``by_score`` False: the rows' order is the selection's (walks), and K takes its prefixes."""
    triplets, scores = dedup_scored(rows, by_score=by_score)
    topics = set(topic_names)
    out: dict[str, float | None] = {}
    first_entity = next((n for h, _r, t in triplets for n in (h, t) if n not in topics), None)
    for k in ks:
        top = triplets[:k]
        entities = {normalize_answer(n) for h, _r, t in top for n in (h, t)}
        out[f"triple_recall@{k}"] = len(gold.triples & set(top)) / len(gold.triples) if gold.triples else None
        out[f"triple_ceiling@{k}"] = min(1.0, k / len(gold.triples)) if gold.triples else None
        out[f"answer_recall@{k}"] = len(gold.answers & entities) / len(gold.answers) if gold.answers else None
        out[f"answer_ceiling@{k}"] = answer_ceiling(gold, topic_names, k)
        out[f"hits1_top@{k}"] = float(
            first_entity is not None and normalize_answer(first_entity) in gold.answers
        )
        if leaf_rule:
            names, values = answer_candidates(top, scores[:k], topic_names)
            out[f"hits1_leaf@{k}"] = float(bool(names) and normalize_answer(names[0]) in gold.answers)
            chosen = {normalize_answer(n) for n in select_answers(names, values)[0]}
            hits = len(chosen & gold.answers)
            precision, recall = hits / max(1, len(chosen)), hits / max(1, len(gold.answers))
            out[f"answer_f1_leaf@{k}"] = 2 * precision * recall / (precision + recall) if hits else 0.0
    return out


@dataclass
class Tally:
    """Per (group, method) metric lists and latencies."""

    values: dict[tuple[str, str], dict[str, list[float]]] = field(default_factory=dict)
    latency: dict[tuple[str, str], list[float]] = field(default_factory=dict)

    def add(self, group: str, method: str, metrics: dict[str, float | None], ms: float) -> None:
        bucket = self.values.setdefault((group, method), {})
        for key, value in metrics.items():
            if value is not None:
                bucket.setdefault(key, []).append(value)
        self.latency.setdefault((group, method), []).append(ms)

    def summary(self) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for (group, method), bucket in self.values.items():
            lat = self.latency.get((group, method), [])
            out[f"{group}|{method}"] = {
                "group": group,
                "method": method,
                "n": len(lat),
                **{k: round(statistics.fmean(v), 4) for k, v in sorted(bucket.items())},
                "latency_p50_ms": round(float(np.percentile(lat, 50)), 1) if lat else None,
                "latency_p95_ms": round(float(np.percentile(lat, 95)), 1) if lat else None,
            }
        return out


def markdown_table(summary: dict[str, dict[str, Any]], ks: Sequence[int], answer_k: int = 100) -> str:
    """Triple recall (TR) and answer recall (AR) at every K; the best AR any ``answer_k`` triples could reach
    (:func:`answer_ceiling`); Hits@1 of both rules and the answer-set F1 of the leaf rule at ``answer_k``;
    sequential in-DB latency."""
    head = ["group", "method", "n"]
    for k in ks:
        head += [f"TR@{k}", f"AR@{k}"]
    head += [f"AR ceiling@{answer_k}", f"H1 top@{answer_k}", f"H1 leaf@{answer_k}", f"F1 leaf@{answer_k}"]
    head += ["p50 ms", "p95 ms"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]

    def cell(row: dict[str, Any], key: str) -> str:
        value = row.get(key)
        return "–" if value is None else (f"{value:.3f}" if isinstance(value, float) else str(value))

    for row in summary.values():
        cells = [row["group"], row["method"], str(row["n"])]
        for k in ks:
            cells += [cell(row, f"triple_recall@{k}"), cell(row, f"answer_recall@{k}")]
        cells += [
            cell(row, f"answer_ceiling@{answer_k}"),
            cell(row, f"hits1_top@{answer_k}"),
            cell(row, f"hits1_leaf@{answer_k}"),
            cell(row, f"answer_f1_leaf@{answer_k}"),
            cell(row, "latency_p50_ms"),
            cell(row, "latency_p95_ms"),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
