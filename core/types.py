"""What every retriever returns and every answerer reads: linked entities, triplets and typed evidence."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

Triplet = tuple[str, str, str]  # (head name, KG relation name, tail name), in the KG's direction


@dataclass(frozen=True)
class LinkedEntity:
    """A topic entity found in the question."""

    id: str
    name: str
    score: float
    how: str  # "bracket", "exact", "fulltext", "fuzzy", "vector", "given"
    span: str = ""  # the words of the question it was linked from
    # other entities the same words may name, best first (the linker's runners-up on the same words): a
    # method whose question leads nowhere from this entity may mean one of them. Not part of its identity.
    alternatives: tuple[LinkedEntity, ...] = field(default=(), compare=False)


@dataclass
class MethodTrace:
    """What one method did to find its evidence, for people and reports; no answerer reads it.

    Each retriever subclasses it with typed fields of its own (``SgragTrace``, ``FragTrace``, ...).
    """

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass
class Evidence:
    """Deduplicated triplets in prompt order, and what the method knows about where the answers are.

    Every method fills ``triplets``. The other fields are filled by the methods that know them, and an
    answerer uses the most specific one present (candidates, then paths, then the triplets' structure):

    =====================  =====  ====  ===========  ======
    field                  sgrag  frag  subgraphrag  cosine
    =====================  =====  ====  ===========  ======
    scores                  -      -     yes          yes
    paths                   yes    yes   -            -
    path_scores             -      yes   -            -
    answer_candidates       yes    yes   no hop count  no hop count
    answer_scores           yes    yes   with them    with them
    hops                    yes    -     predicted    predicted
    =====================  =====  ====  ===========  ======
    """

    question: str
    method: str
    kg: str
    topic_entities: list[LinkedEntity]
    triplets: list[Triplet] = field(default_factory=list)
    # one per triplet, higher is better, for methods that rank triplets by a score
    scores: list[float] = field(default_factory=list)
    # reasoning paths walked from a topic entity, most relevant first (a hop may go against the KG direction)
    paths: list[list[Triplet]] = field(default_factory=list)
    path_scores: list[float] = field(default_factory=list)  # one per path, higher is better
    # the method's own answer set, best first: a template's end nodes, the ends of the ranked paths, ...
    answer_candidates: list[str] = field(default_factory=list)
    answer_scores: list[float] = field(default_factory=list)  # one per candidate, higher is better
    # how many hops from the topic entities the answers lie, when the method knows or predicts it
    hops: int | None = None
    # how likely the first answer is right (0..1), from a model whose scores mean that on held-out questions;
    # None when the method has no such model. What `auto` compares across methods.
    confidence: float | None = None
    reason: str = ""  # why there is no evidence, when there is none
    trace: MethodTrace | None = None
    # the method's own sub-stages (the question-answering layer times linking, retrieval and answering)
    latency_ms: dict[str, float] = field(default_factory=dict)

    @property
    def is_empty(self) -> bool:
        return not self.triplets and not any(self.paths)

    def entities(self) -> list[str]:
        """Names of all entities in the triplets, in first-seen order."""
        seen: dict[str, None] = {}
        for head, _rel, tail in self.triplets:
            seen.setdefault(head, None)
            seen.setdefault(tail, None)
        return list(seen)

    def topic_names(self) -> list[str]:
        """Topic entity names in linking order, without repeats."""
        return list(dict.fromkeys(e.name for e in self.topic_entities))
