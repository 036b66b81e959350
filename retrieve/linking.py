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
    return [
        LinkedEntity(str(r["id"]), str(r["name"]), round(float(r["score"]), 4), str(r["how"]), str(r["span"]))
        for r in records
    ]
