"""What every retriever returns and every answerer consumes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

Triplet = tuple[str, str, str]  # (head name, KG relation name, tail name)


@dataclass(frozen=True)
class LinkedEntity:
    """A topic entity found in the question."""

    id: str
    name: str
    score: float
    how: str  # "bracket", "exact", "fulltext", "fuzzy", "vector", "given"
    span: str = ""


@dataclass
class Evidence:
    """Deduplicated triplets in prompt order, with where they came from."""

    question: str
    method: str
    kg: str
    topic_entities: list[LinkedEntity]
    triplets: list[Triplet]
    scores: list[float] = field(default_factory=list)  # one per triplet when the method scores them
    paths: list[list[Triplet]] = field(default_factory=list)  # reasoning paths, for methods that build them
    metadata: dict[str, Any] = field(default_factory=dict)
    latency_ms: dict[str, float] = field(default_factory=dict)

    @property
    def is_empty(self) -> bool:
        return not self.triplets

    def entities(self) -> list[str]:
        """Names of all entities in the triplets, in first-seen order."""
        seen: dict[str, None] = {}
        for head, _rel, tail in self.triplets:
            seen.setdefault(head, None)
            seen.setdefault(tail, None)
        return list(seen)
