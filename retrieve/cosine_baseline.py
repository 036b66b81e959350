"""A cosine-similarity retriever: the baseline the trained SubgraphRAG scorer is compared with.

Same candidates as SubgraphRAG (``kgqa.subgraphrag.candidates``: the triples within ``hops`` of the topic
entities), but each triple is scored without training, in the database (``kgqa.subgraphrag.cosine``), from
the stored embeddings:

    score = cos(z_q, z_head) + cos(z_q, z_rel) + cos(z_q, z_tail)

The procedure compares each entity and relation with the question once, however many triples share it.

Everything around the scorer is SubgraphRAG's, so a comparison measures the scorer alone: the candidate
radius (2, or the hop count the KG's classifier predicts), and the extractive answer (the predicted number
of hops walked over the scored triplets). Without a hop count, entities rank by their best triplet: cosine
sums are not probabilities, so SubgraphRAG's leaf rule does not apply.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from kgqa.core.limits import ROW_CAP
from kgqa.core.types import LinkedEntity, Triplet
from kgqa.graph.cypher import render
from kgqa.graph.kg import kg_embedding_model
from kgqa.retrieve.subgraphrag import DEFAULT_HOPS, SubgraphRagRetriever, embed_question
from neo4j import RoutingControl

DEFAULT_MAX_CANDIDATES = ROW_CAP

COSINE_QUERY = render("subgraphrag/cosine")


@dataclass(eq=False)
class CosineRetriever(SubgraphRagRetriever):
    """Top-K candidate triples by summed cosine similarity of the question to head, relation and tail; the
    radius and the hop prediction as for SubgraphRAG."""

    name = "cosine"

    model: str | None = field(default=None, init=False)  # untrained: no model
    max_candidates: int | None = DEFAULT_MAX_CANDIDATES
    select_walks: bool = field(default=False, init=False)

    def _check_model(self, kg: str) -> None:
        """Untrained: there is no model to check."""

    def _question_vector(self, question: str, kg: str | None = None) -> np.ndarray:
        """The cosine procedure compares stored vectors with the question's: it needs z_q given, by the
        encoder those vectors come from."""
        return embed_question(question, kg_embedding_model(self.driver, kg) if kg else None)

    def _scored_rows(
        self,
        question: str,
        kg: str,
        k: int,
        topic_entities: Sequence[LinkedEntity],
        vector: np.ndarray | None,
        hops: int | None,
    ) -> list[tuple[str, str, str, float]]:
        """The top k by cosine."""
        assert vector is not None  # _question_vector always embeds
        config = {
            "hops": int(hops or self.hops or DEFAULT_HOPS),
            "maxCandidates": int(self.max_candidates or DEFAULT_MAX_CANDIDATES),
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
        return [(str(r["head"]), str(r["relation"]), str(r["tail"]), float(r["score"])) for r in records]

    def _answers_without_hops(
        self, triplets: list[Triplet], scores: list[float], topic_names: list[str]
    ) -> tuple[list[str], list[float]]:
        ranked: dict[str, float] = {}
        topics = set(topic_names)
        for (head, _rel, tail), score in zip(triplets, scores, strict=True):
            for name in (head, tail):
                if name not in topics and name not in ranked:
                    ranked[name] = score
        return list(ranked), list(ranked.values())

    def _scorer_name(self, kg: str) -> str:
        return "cosine"
