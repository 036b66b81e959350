"""MOT (merge, dedup, order) for every retriever: one wrapper around ``kgqa.triplets.dedupOrder``.

The ordering itself lives in the database procedure (SG-RAG's MOT: exact duplicates dropped, first occurrence
kept, then a stable sort by BFS distance from the topic entities over the triplets' own undirected graph), so
Cypher-only users and ``kgqa ask`` get the same prompt order.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from kgqa.core.types import Triplet
from kgqa.graph.cypher import render
from neo4j import Driver, RoutingControl


def dedup_order_with_distance(
    driver: Driver, triplets: Iterable[Sequence[str]], topic_names: Iterable[str]
) -> list[tuple[Triplet, int | None]]:
    """Merged, deduplicated triplets in BFS order, each with its distance (None: not connected to a topic)."""
    payload = [[str(head), str(relation), str(tail)] for head, relation, tail in triplets]
    if not payload:
        return []
    records, _summary, _keys = driver.execute_query(
        render("mot/dedup_order"),
        {"triplets": payload, "topics": list(dict.fromkeys(str(t) for t in topic_names))},
        routing_=RoutingControl.READ,
    )
    return [((r["head"], r["relation"], r["tail"]), r["distance"]) for r in records]


def dedup_order(
    driver: Driver, triplets: Iterable[Sequence[str]], topic_names: Iterable[str]
) -> list[Triplet]:
    """Merged, deduplicated triplets in BFS order from the topic entities (SG-RAG MOT)."""
    return [triplet for triplet, _distance in dedup_order_with_distance(driver, triplets, topic_names)]
