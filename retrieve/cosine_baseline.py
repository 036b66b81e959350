"""A cosine-similarity retriever: the baseline the trained SubgraphRAG scorer is compared with.

Same candidates as SubgraphRAG (``kgqa.subgraphrag.candidates``: the triples within ``hops`` of the topic
entities), but each triple is scored without training, in the database (``kgqa.subgraphrag.cosine``), from
the stored embeddings:

    score = cos(z_q, z_head) + cos(z_q, z_rel) + cos(z_q, z_tail)

The procedure compares each entity and relation with the question once, however many triples share it.
"""

from __future__ import annotations

import time

from kgqa.graph.cypher import render
from kgqa.retrieve.base import Retriever
from kgqa.retrieve.evidence import Evidence, LinkedEntity
from kgqa.retrieve.subgraphrag import dedup_scored, embed_question
from neo4j import Driver, RoutingControl

DEFAULT_HOPS = 2
DEFAULT_MAX_CANDIDATES = 20000

COSINE_QUERY = render("subgraphrag/cosine")


class CosineRetriever(Retriever):
    """Top-K candidate triples by summed cosine similarity of the question to head, relation and tail."""

    name = "cosine"

    def __init__(
        self, driver: Driver, hops: int = DEFAULT_HOPS, max_candidates: int = DEFAULT_MAX_CANDIDATES
    ) -> None:
        super().__init__(driver)
        self.hops = hops
        self.max_candidates = max_candidates

    def _search(self, question: str, kg: str, k: int, topic_entities: list[LinkedEntity]) -> Evidence:
        began = time.perf_counter()
        vector = embed_question(question)
        embedded = time.perf_counter()
        rows: list[tuple[str, str, str, float]] = []
        if topic_entities:
            config = {
                "hops": int(self.hops),
                "maxCandidates": int(self.max_candidates),
                "questionEmbedding": [float(x) for x in vector],
                "k": int(k),
            }
            records, _summary, _keys = self.driver.execute_query(
                COSINE_QUERY,
                kg=kg,
                topicIds=[e.id for e in topic_entities],
                config=config,
                routing_=RoutingControl.READ,
            )
            rows = [(str(r["head"]), str(r["relation"]), str(r["tail"]), float(r["score"])) for r in records]
        scored = time.perf_counter()
        triplets, scores = dedup_scored(rows)
        # Cosine sums are not probabilities: rank entities by their best triplet (the plain extractive rule).
        ranked: dict[str, float] = {}
        topics = {e.name for e in topic_entities}
        for (head, _rel, tail), score in zip(triplets, scores, strict=True):
            for name in (head, tail):
                if name not in topics and name not in ranked:
                    ranked[name] = score
        return Evidence(
            question=question,
            method=self.name,
            kg=kg,
            topic_entities=topic_entities,
            triplets=triplets,
            scores=scores,
            metadata={
                "k": k,
                "candidate_hops": self.hops,
                "answer_candidates": list(ranked),
                "answer_scores": list(ranked.values()),
            },
            latency_ms={
                "question_embedding": (embedded - began) * 1000,
                "in_db_scoring": (scored - embedded) * 1000,
            },
        )
