"""The chains walkable from a topic: what a question offers the path scorer (``kgqa.paths.walkable``) is what
training ranked (``paths/walkable``), on the MetaQA KG's hubs (a genre reaches thousands of films) and on its
small entities, with the bounds that sample a hub."""

from __future__ import annotations

from typing import Any

import pytest
from kgqa.graph.cypher import render
from kgqa.graph.walkable import walkable_at_question, walkable_chains
from neo4j import RoutingControl
from neo4j.exceptions import Neo4jError


def _entities(driver: Any, kg: str) -> list[str]:
    records, _, _ = driver.execute_query(
        "MATCH (n:Entity {kg: $kg}) WITH n, COUNT { (n)--() } AS degree ORDER BY degree DESC, n.id"
        " WITH collect(n.id) AS ids RETURN ids[..5] + ids[2000..2005] AS ids",
        {"kg": kg},
        routing_=RoutingControl.READ,
    )
    return list(records[0]["ids"])


def test_a_question_is_offered_the_chains_training_walks(driver: Any, metaqa_kg: str) -> None:
    ids = _entities(driver, metaqa_kg)
    assert len(ids) == 10
    for topic in ids:
        for max_via, fanout in ((40, 400), (3, 5)):
            walked = [c.chain for c in walkable_chains(driver, metaqa_kg, [topic], (), max_via, fanout)]
            assert walked, topic
            offered = walkable_at_question(driver, metaqa_kg, [topic], max_via, fanout)
            assert offered == walked, (topic, fanout)


def test_several_topics_give_each_chain_once(driver: Any, metaqa_kg: str) -> None:
    ids = _entities(driver, metaqa_kg)[:2]
    both = walkable_at_question(driver, metaqa_kg, ids)
    assert len(both) == len(set(both))
    assert set(both) == {c for topic in ids for c in walkable_at_question(driver, metaqa_kg, [topic])}
    assert walkable_at_question(driver, metaqa_kg, []) == []


def test_an_unknown_topic_is_named(driver: Any, metaqa_kg: str) -> None:
    with pytest.raises(Neo4jError, match="no entity with id 'no such entity'"):
        driver.execute_query(
            render("paths/walkable_at_question"),
            {"kg": metaqa_kg, "topic_ids": ["no such entity"], "max_via": 40, "fanout": 400},
        )
