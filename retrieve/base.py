"""The one retriever contract: ``retrieve(question, kg, k, topic_entities) -> Evidence``.

Linking, timing and answering are the question-answering layer's (``kgqa.qa``); a retriever only finds
evidence for topic entities that are already linked, and says in the typed fields of
:class:`~kgqa.core.types.Evidence` what it knows about where the answers are. Methods whose evidence is a
merged subgraph order it through the one shared MOT step (``kgqa.retrieve.mot``); score-ranked methods keep
their score order.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar

from kgqa.core.types import Evidence, LinkedEntity
from neo4j import Driver


@dataclass(eq=False)
class Retriever(ABC):
    """A method's retriever: its knobs are its dataclass fields, after the driver it queries through
    (compared by identity, as the live objects they are)."""

    name: ClassVar[str]
    driver: Driver

    @abstractmethod
    def retrieve(self, question: str, kg: str, k: int, topic_entities: list[LinkedEntity]) -> Evidence:
        """Evidence for ``question`` around ``topic_entities`` in KG ``kg``, at most ``k`` triplets where the
        method can cap them; ``topic_entities`` may be empty (the evidence then says why it is empty)."""
