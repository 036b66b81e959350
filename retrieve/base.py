"""The one retriever contract: ``retrieve(question, kg, k) -> Evidence``.

Subclasses implement ``_search``; the shared ``retrieve`` does entity linking and timing. Methods whose
evidence is a merged subgraph order it through the one shared MOT step, ``kgqa.retrieve.mot.dedup_order``
(the ``kgqa.triplets.dedupOrder`` procedure); score-ranked methods keep their score order.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod

from kgqa.retrieve.evidence import Evidence, LinkedEntity
from neo4j import Driver


class Retriever(ABC):
    name: str = "base"

    def __init__(self, driver: Driver) -> None:
        self.driver = driver

    def retrieve(
        self, question: str, kg: str, k: int = 100, topic_entities: list[LinkedEntity] | None = None
    ) -> Evidence:
        began = time.perf_counter()
        if topic_entities is None:
            from kgqa.retrieve.linking import link_entities

            topic_entities = link_entities(self.driver, question, kg)
        linked = time.perf_counter()
        evidence = self._search(question, kg, k, topic_entities)
        done = time.perf_counter()
        evidence.latency_ms.setdefault("linking", (linked - began) * 1000)
        evidence.latency_ms.setdefault("retrieval", (done - linked) * 1000)
        return evidence

    @abstractmethod
    def _search(self, question: str, kg: str, k: int, topic_entities: list[LinkedEntity]) -> Evidence:
        """Retrieve evidence for already-linked topic entities."""
