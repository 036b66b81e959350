"""SubgraphRAG retrieval, run inside the database.

``kgqa.subgraphrag.retrieve`` embeds the question (its topic entity masked as the model was trained), scores
every candidate triple around the topic entities with the trained MLP (ONNX Runtime Java) over
[z_q ‖ z_head ‖ z_rel ‖ z_tail ‖ DDE] and streams the top K, best first. This module only passes the linked
entities and the words that named them, and shapes the result as ``Evidence``.

With a predicted hop count, ``kgqa.subgraphrag.walks`` reads the scores as relation chains of that length:
the best chain's ends are the answer set (``Evidence.answer_candidates``) and its walks, then the next
chains', are the evidence paths. Without one, the evidence is the top K triplets in score order and the
answer candidates come from a leaf rule over the scores.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from kgqa.core.errors import ModelMissing
from kgqa.core.text import without_brackets
from kgqa.core.types import Evidence, LinkedEntity, MethodTrace, Triplet
from kgqa.graph.cypher import render
from kgqa.models import registry
from kgqa.models.encoder import embed
from kgqa.models.question_classifiers import SURE_HOP_MARGIN
from kgqa.retrieve.base import Retriever
from neo4j import RoutingControl

DEFAULT_HOPS = 2  # the candidate radius models are trained with; a question predicted deeper widens it
ANSWER_RELATIVE = 0.5  # answers: candidates scoring at least this share of the best one

RETRIEVE_QUERY = render("subgraphrag/retrieve")
WALKS_QUERY = render("subgraphrag/walks")
HopPredictor = Callable[[str, Sequence[str]], int | None]
WALK_RANKINGS = ("chain", "walk")


@dataclass
class Walks:
    """What ``kgqa.subgraphrag.walks`` streamed, in its order."""

    paths: list[list[Triplet]]
    scores: list[float]  # each walk's sum of log-sigmoid
    triplet_scores: list[list[float]]
    ends: list[str]
    chain_ranks: list[int]  # 1 for every walk of the best chain (every walk when ranked by walk)
    chains: list[list[str]]
    chain_scores: list[float]

    def best_chain_ends(self) -> tuple[list[str], list[float]]:
        """The ends of the best chain's walks, best walk first: the chain's answer set."""
        seen: set[str] = set()
        names: list[str] = []
        values: list[float] = []
        for end, rank, score in zip(self.ends, self.chain_ranks, self.scores, strict=True):
            if rank == 1 and end not in seen:
                seen.add(end)
                names.append(end)
                values.append(score)
        return names, values


@dataclass
class SubgraphRagTrace(MethodTrace):
    scorer: str  # the model's name, or "cosine"
    k: int
    hops_predicted: int | None  # from the hop classifier, on KGs whose questions it understands
    hop_source: str  # "classifier", "fixed radius", "model radius", or why the classifier was not used
    candidate_hops: int | None  # the radius asked of the database (None: the model's own)
    walk_hops: int | None = None  # the evidence is whole walks of this many hops (None: the top k triples)
    walks: int = 0  # how many walks (evidence paths) the database gave
    rank_by: str | None = None  # "chain" or "walk" when walking
    chain: list[str] = field(default_factory=list)  # the best relation chain, a "rel>" or "rel<" per step
    chain_score: float | None = None  # its sum over steps of log(mean sigmoid of the triples taken)


def embed_question(question: str, model: str | None = None) -> np.ndarray:
    """z_q (float32 [384], L2-normalised) of the question as training embedded it: brackets removed, so a
    bracketed and a plain question score alike. ``model``: the KG's encoder (None: the default)."""
    return embed([without_brackets(question)], model=model)[0]


def dedup_scored(
    rows: Sequence[tuple[str, str, str, float]], by_score: bool = True
) -> tuple[list[Triplet], list[float]]:
    """Triplets in descending score order (``by_score``; else in the rows' order), the first occurrence of
    each kept."""
    ordered = (
        sorted(enumerate(rows), key=lambda item: (-item[1][3], item[0])) if by_score else enumerate(rows)
    )
    seen: set[Triplet] = set()
    triplets: list[Triplet] = []
    scores: list[float] = []
    for _i, (head, relation, tail, score) in ordered:
        triplet = (head, relation, tail)
        if triplet in seen:
            continue
        seen.add(triplet)
        triplets.append(triplet)
        scores.append(float(score))
    return triplets, scores


def answer_candidates(
    triplets: Sequence[Triplet], scores: Sequence[float], topic_names: Sequence[str]
) -> tuple[list[str], list[float]]:
    """Entities of the scored triplets, topic entities excluded, ranked by a leaf rule.

    Each entity e gets ``p_in(e) * (1 - p_out(e))``: p_in is the best (sigmoid) score of a triplet that
    reaches e from an entity nearer the topic (BFS over the triplets, either direction), p_out the best score
    of a triplet that continues from e to an entity farther away. An entity that the scorer keeps walking
    past (a film on the way to its director) thus ranks below the end of the path. Entities the BFS does
    not reach fall back to their best triplet score, below every reached one. Ties keep first appearance.
    """
    topics = set(topic_names)
    probs = [1.0 / (1.0 + math.exp(-max(min(s, 50.0), -50.0))) for s in scores]
    adjacency: dict[str, list[str]] = {}
    for head, _rel, tail in triplets:
        adjacency.setdefault(head, []).append(tail)
        adjacency.setdefault(tail, []).append(head)
    dist: dict[str, int] = {t: 0 for t in topics if t in adjacency}
    frontier = list(dist)
    while frontier:
        nxt: list[str] = []
        for node in frontier:
            for other in adjacency[node]:
                if other not in dist:
                    dist[other] = dist[node] + 1
                    nxt.append(other)
        frontier = nxt
    p_in: dict[str, float] = {}
    p_out: dict[str, float] = {}
    best: dict[str, float] = {}
    first: dict[str, int] = {}
    for i, ((head, _rel, tail), p) in enumerate(zip(triplets, probs, strict=True)):
        for node in (head, tail):
            first.setdefault(node, i)
            best[node] = max(best.get(node, 0.0), p)
        dh, dt = dist.get(head), dist.get(tail)
        if dh is None or dt is None or dh == dt:
            continue
        near, far = (head, tail) if dh < dt else (tail, head)
        p_in[far] = max(p_in.get(far, 0.0), p)
        p_out[near] = max(p_out.get(near, 0.0), p)
    ranked: list[tuple[float, int, str, float]] = []
    for node, position in first.items():
        if node in topics:
            continue
        if node in p_in:
            value = p_in[node] * (1.0 - p_out.get(node, 0.0))
            ranked.append((1.0 + value, position, node, value))
        else:
            ranked.append((best[node] * 1e-3, position, node, best[node] * 1e-3))
    ranked.sort(key=lambda item: (-item[0], item[1]))
    return [node for _k, _p, node, _v in ranked], [value for _k, _p, _n, value in ranked]


def select_answers(
    names: Sequence[str], values: Sequence[float], relative: float = ANSWER_RELATIVE
) -> tuple[list[str], list[float]]:
    """The answer set read off ``answer_candidates``: every candidate within ``relative`` of the best value
    (at least the best one). The extractive answerer takes ``Evidence.answer_candidates`` as the answer set,
    so it gets this, not the whole ranking."""
    if not names:
        return [], []
    floor = relative * values[0]
    kept = [(n, v) for n, v in zip(names, values, strict=True) if v >= floor] or [(names[0], values[0])]
    return [n for n, _v in kept], [v for _n, v in kept]


@dataclass(eq=False)
class SubgraphRagRetriever(Retriever):
    """Top-K triples scored in the database by a trained SubgraphRAG model (``kgqa train subgraphrag``).

    ``select_walks``: with a predicted hop count, the evidence is walks of that many hops, picked in the
    database (``kgqa.subgraphrag.walks``), as reasoning paths; otherwise the k best triples alone.
    ``rank_by``: "chain" (the walks of the best-scored relation chain, whose ends are the answer set;
    ChainSelection.java) or "walk" (each end entity's best walk, ends ranked by it; PathSelection).
    ``model`` None: each KG's own scorer (``kgqa train all``); a name: that installed model on every KG.
    ``hops`` fixes the candidate radius and turns the hop prediction off."""

    name = "subgraphrag"

    model: str | None = None
    hops: int | None = None
    max_candidates: int | None = None
    include_seed: bool | None = None
    hop_predictor: HopPredictor | None = None
    # the hop count counts only when the classifier is sure of it (HopPrediction.sure_hops: a wording it
    # learned, or this margin; None: always); an unsure one leaves the model's radius and the leaf rule
    sure_hop_margin: float | None = SURE_HOP_MARGIN
    select_walks: bool = True
    rank_by: str = "chain"

    def __post_init__(self) -> None:
        if self.rank_by not in WALK_RANKINGS:
            raise ValueError(f"rank_by must be one of {', '.join(WALK_RANKINGS)}, got {self.rank_by!r}")

    def _predicted_hops(self, question: str, kg: str, spans: Sequence[str]) -> tuple[int | None, str]:
        """The question's hop count from the KG's hop classifier, and where the radius came from.

        It widens the candidate radius past the model's default (3-hop questions need 3 hops) and tells the
        extractive answerer how deep the answers lie; without a classifier the model's radius and the leaf
        rule stand.
        """
        if self.hops is not None:
            return None, "fixed radius"
        if self.hop_predictor is not None:
            return self.hop_predictor(question, spans), "classifier"
        try:
            classifiers = registry.question_classifiers(kg)
        except ModelMissing as missing:  # the paper's method has no classifier: its radius and leaf rule
            return None, f"model radius ({missing})"
        hops = classifiers.predict_hops(question, list(spans)).sure_hops(self.sure_hop_margin)
        return hops, "classifier" if hops is not None else "model radius (the hop classifier is unsure)"

    def config(
        self,
        kg: str,
        k: int,
        topic_entities: Sequence[LinkedEntity],
        question_vector: np.ndarray | None,
    ) -> dict[str, Any]:
        """The procedure's configuration map; unset options fall back to the model's meta.json."""
        config: dict[str, Any] = {
            "k": int(k),
            "kg": kg,
            **({"model": self.model} if self.model else {}),
            "topicEntities": [e.id for e in topic_entities],
            "topicSpans": [e.span or e.name for e in topic_entities],
        }
        if question_vector is not None:
            config["questionEmbedding"] = [float(x) for x in question_vector]
        if self.hops is not None:
            config["hops"] = int(self.hops)
        if self.max_candidates is not None:
            config["maxCandidates"] = int(self.max_candidates)
        if self.include_seed is not None:
            config["includeSeed"] = bool(self.include_seed)
        return config

    def _scored_rows(
        self,
        question: str,
        kg: str,
        k: int,
        topic_entities: Sequence[LinkedEntity],
        vector: np.ndarray | None,
        hops: int | None,
    ) -> list[tuple[str, str, str, float]]:
        """The k best (head, relation, tail, score) rows from the database, best first; ``hops`` widens the
        radius."""
        config = self.config(kg, k, topic_entities, vector)
        if hops is not None:
            config["hops"] = hops
        records, _summary, _keys = self.driver.execute_query(
            RETRIEVE_QUERY, question=without_brackets(question), config=config, routing_=RoutingControl.READ
        )
        return [(str(r["head"]), str(r["relation"]), str(r["tail"]), float(r["score"])) for r in records]

    def _walks(
        self, question: str, kg: str, k: int, topic_entities: Sequence[LinkedEntity], hops: int
    ) -> Walks:
        """Walks of ``hops`` steps in the database's order (see ``rank_by``)."""
        config = self.config(kg, k, topic_entities, None)
        config["hops"] = max(hops, DEFAULT_HOPS)
        config["pathHops"] = hops
        config["rankBy"] = self.rank_by
        records, _summary, _keys = self.driver.execute_query(
            WALKS_QUERY, question=without_brackets(question), config=config, routing_=RoutingControl.READ
        )
        return Walks(
            paths=[[(str(h), str(r), str(t)) for h, r, t in rec["triplets"]] for rec in records],
            scores=[float(rec["score"]) for rec in records],
            triplet_scores=[[float(x) for x in rec["tripletScores"]] for rec in records],
            ends=[str(rec["answer"]) for rec in records],
            chain_ranks=[int(rec["chainRank"]) for rec in records],
            chains=[[str(step) for step in rec["chain"]] for rec in records],
            chain_scores=[float(rec["chainScore"]) for rec in records],
        )

    def _answers_without_hops(
        self, triplets: list[Triplet], scores: list[float], topic_names: list[str]
    ) -> tuple[list[str], list[float]]:
        """Answer candidates when no hop count is known: the leaf rule over the scorer's probabilities."""
        ranked, ranked_scores = answer_candidates(triplets, scores, topic_names)
        return select_answers(ranked, ranked_scores)

    def _scorer_name(self, kg: str) -> str:
        return self.model or f"{kg}'s own"

    def _question_vector(self, question: str, kg: str | None = None) -> np.ndarray | None:
        """z_q, or None to let the database embed the question as the model was trained (the topic masked)."""
        return None

    def _check_model(self, kg: str) -> None:
        registry.require_subgraphrag_model(kg, self.model)

    def retrieve(self, question: str, kg: str, k: int, topic_entities: list[LinkedEntity]) -> Evidence:
        self._check_model(kg)
        began = time.perf_counter()
        vector = self._question_vector(question, kg)
        embedded = time.perf_counter()
        rows: list[tuple[str, str, str, float]] = []
        walks = Walks([], [], [], [], [], [], [])
        predicted, source = None, "no topic entity"
        wider = None
        walking = False
        if topic_entities:
            predicted, source = self._predicted_hops(question, kg, [e.span or e.name for e in topic_entities])
            wider = predicted if predicted is not None and predicted > DEFAULT_HOPS else None
            walking = predicted is not None and self.select_walks
            if walking:
                assert predicted is not None
                walks = self._walks(question, kg, k, topic_entities, predicted)
                rows = [
                    (*triplet, score)
                    for path, scores_of_path in zip(walks.paths, walks.triplet_scores, strict=True)
                    for triplet, score in zip(path, scores_of_path, strict=True)
                ]
            else:
                rows = self._scored_rows(question, kg, k, topic_entities, vector, wider)
        scored = time.perf_counter()
        triplets, scores = dedup_scored(rows, by_score=not walking)
        evidence = Evidence(
            question,
            self.name,
            kg,
            list(topic_entities),
            triplets=triplets,
            scores=scores,
            trace=SubgraphRagTrace(
                self._scorer_name(kg),
                k,
                predicted,
                source,
                wider or self.hops,
                predicted if walking else None,
                len(walks.paths),
                self.rank_by if walking else None,
                walks.chains[0] if walking and self.rank_by == "chain" and walks.chains else [],
                walks.chain_scores[0] if walking and self.rank_by == "chain" and walks.chain_scores else None,
            ),
            paths=walks.paths,
            path_scores=walks.scores,
            latency_ms={
                **({"question_embedding": (embedded - began) * 1000} if vector is not None else {}),
                "in_db_scoring": (scored - embedded) * 1000,
            },
        )
        if predicted is not None:
            evidence.hops = predicted  # the answerer walks exactly that many hops over the scored triplets
            if walking and self.rank_by == "chain":
                # the best chain's ends are one answer set, as a relation path gives it
                evidence.answer_candidates, evidence.answer_scores = walks.best_chain_ends()
        else:
            evidence.answer_candidates, evidence.answer_scores = self._answers_without_hops(
                triplets, scores, evidence.topic_names()
            )
        if not topic_entities:
            evidence.reason = "no topic entity was linked"
        return evidence
