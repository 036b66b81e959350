"""What the stages of a load pass each other: the request (LoadOptions), the running report (LoadSummary),
and what the KG held before the load (Previous), which the finishing steps compare against.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class LoadOptions:
    source: str
    paths: list[Path]
    kg: str | None = None
    bulk: bool = False
    strict: bool = False
    force: bool = False
    batch_size: int = 5000
    embeddings: bool = True
    # The sentence encoder of the KG's vectors (None: KGQA_EMBEDDING_MODEL or all-MiniLM-L6-v2); the fast
    # path is kgqa.models.encoder.STATIC_MODEL. Recorded on the :KG node as embedding_model.
    embedding_model: str | None = None


@dataclass
class LoadSummary:
    kg: str
    source: str
    format: str
    mode: str
    paths: list[str]
    status: str = "complete"
    entities: int = 0
    relationships: int = 0
    relations: int = 0
    facts_read: int = 0
    labels_read: int = 0
    skipped: int = 0
    dropped: dict[str, int] = field(default_factory=dict)
    labels_without_facts: int = 0
    embedded_entities: int = 0
    embedded_relations: int = 0
    embedding_model: str | None = None
    seconds: float = 0.0
    phases: dict[str, float] = field(default_factory=dict)
    already_loaded: bool = False
    issues: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Previous:
    """What the KG looked like before this load (None fields when it is new)."""

    embedding_model: str | None
    labels_without_facts: int = 0
    relation_counts: dict[str, int] | None = None  # distinct triples per relation, when the load counted them
