"""Entity linking: the topic entities of a question, found inside the database.

One linker serves every road: ``kgqa ask`` calls the ``kgqa.link.entities`` procedure through this module,
and a Cypher user's ``CALL kgqa.subgraphrag.retrieve('question')`` runs the same Java class
(``io.kgqa.procedures.linking.EntityLinker``), so a question links the same way on both. What it does:
``[brackets]`` are honoured (exact name, then id, else the bracket's text is linked as free text); free text
is cut into word n-grams that are looked up by exact name in a few casings, matched through one fuzzy
full-text query (typos), and, when nothing convincing is found, by the entity-name vector index; spans are
scored and resolved greedily without overlaps. See the procedure's description for the details.

The question travels as a query parameter, never as query text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kgqa.core.limits import LINKED_ENTITIES
from kgqa.core.types import LinkedEntity
from kgqa.graph.cypher import render
from neo4j import Driver, RoutingControl

DEFAULT_MAX_ENTITIES = LINKED_ENTITIES


def link_entities(
    driver: Driver,
    question: str,
    kg: str,
    max_entities: int = DEFAULT_MAX_ENTITIES,
    secondary_ratio: float | None = None,
) -> list[LinkedEntity]:
    """Topic entities of ``question`` in ``kg``, best first; ``[]`` when no entity is found.

    ``secondary_ratio``: keep an entity after the first only when it scores this share of the best (the
    procedure's default 0.75 when None; 0 keeps all, for claims that name several entities)."""
    if max_entities <= 0 or not question.strip():
        return []
    records = driver.execute_query(
        render("linking/entities", with_ratio=secondary_ratio is not None),
        {"question": question, "kg": kg, "max_entities": max_entities, "secondary_ratio": secondary_ratio},
        routing_=RoutingControl.READ,
    ).records
    return [_linked(r, tuple(_linked(a) for a in r["alternatives"] or ())) for r in records]


def _linked(row: Any, alternatives: tuple[LinkedEntity, ...] = ()) -> LinkedEntity:
    return LinkedEntity(
        str(row["id"]),
        str(row["name"]),
        round(float(row["score"]), 4),
        str(row["how"]),
        str(row["span"]),
        alternatives,
    )


@dataclass(frozen=True)
class LinkCandidate:
    """One (entity, span) pair the linker weighed, before overlapping spans were resolved."""

    id: str
    name: str
    span: str
    start: int  # token positions of the span, end exclusive
    end: int
    how: str
    hand_score: float  # the hand-set score
    score: float  # the KG's learned link scorer's probability; the hand score when it has none
    learned: bool
    features: dict[str, float]


def link_candidates(driver: Driver, question: str, kg: str) -> list[LinkCandidate]:
    """Every candidate of ``question`` in ``kg``, best first (``kgqa.link.candidates``)."""
    if not question.strip():
        return []
    records = driver.execute_query(
        render("linking/candidates"), {"question": question, "kg": kg}, routing_=RoutingControl.READ
    ).records
    return [
        LinkCandidate(
            str(r["id"]),
            str(r["name"]),
            str(r["span"]),
            int(r["start"]),
            int(r["end"]),
            str(r["how"]),
            float(r["handScore"]),
            float(r["score"]),
            bool(r["learned"]),
            {str(k): float(v) for k, v in dict(r["features"]).items()},
        )
        for r in records
    ]


# What each lookup of the linker means, said to a person reading why a span was linked.
HOW_LINKED = {
    "bracket": "the [bracketed] name or id",
    "exact": "the span is the entity's name",
    "singular": "the span is the entity's name in the plural",
    "fulltext": "the span is the name up to case, accents or punctuation",
    "fuzzy": "the span is the name with a typo or two",
    "head": "the name without the words many names share",
    "distinctive": "a part of the name no other name has",
    "prefix": "the first words of a name far better connected than the others that start so",
    "derived": 'the word for its people or language ("russian" for Russia), which the KG vouches for',
    "partial": "a person named by the last word of the name",
    "short": 'a person named by a short first name and the surname ("abe lincoln")',
    "initials": "the initials of the name",
    "vector": "the nearest name by meaning (nothing matched by spelling)",
    "given": "given by the caller",
}


@dataclass(frozen=True)
class LinkReport:
    """How one question links: what the answer methods start from, and the other entities the linker found
    above its floor but left out (weaker than the first by more than its ratio, or beyond its count)."""

    question: str
    kg: str
    linked: list[LinkedEntity]
    also_found: list[LinkedEntity] = field(default_factory=list)
    # every (entity, span) pair weighed before overlapping spans were resolved, best first, with its features
    candidates: list[LinkCandidate] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        def row(e: LinkedEntity) -> dict[str, Any]:
            return {
                "span": e.span,
                "id": e.id,
                "name": e.name,
                "score": e.score,
                "how": e.how,
                "why": HOW_LINKED.get(e.how, e.how),
            }

        return {
            "question": self.question,
            "kg": self.kg,
            "linked": [row(e) for e in self.linked],
            "also_found": [row(e) for e in self.also_found],
            "candidates": [
                {
                    "span": c.span,
                    "id": c.id,
                    "name": c.name,
                    "how": c.how,
                    "why": HOW_LINKED.get(c.how, c.how),
                    "hand_score": round(c.hand_score, 4),
                    "score": round(c.score, 4),
                    "learned": c.learned,
                    "features": {k: round(v, 4) for k, v in sorted(c.features.items())},
                }
                for c in self.candidates
            ],
        }


def link_report(
    driver: Driver, question: str, kg: str, max_found: int = 10, max_candidates: int = 20
) -> LinkReport:
    """The entities ``question`` links to in ``kg`` as ``kgqa ask`` links them, up to ``max_found`` in all
    when every span above the floor is kept (the same procedure with no ratio to the best), and the first
    ``max_candidates`` candidates weighed (free text: a [bracketed] question links by its brackets)."""
    linked = link_entities(driver, question, kg)
    chosen = {e.id for e in linked}
    everything = link_entities(driver, question, kg, max_entities=max_found, secondary_ratio=0.0)
    candidates = link_candidates(driver, question, kg)[:max_candidates]
    return LinkReport(question, kg, linked, [e for e in everything if e.id not in chosen], candidates)
