"""The relation chains that can be walked from a question's topic entities: what a chain scorer chooses among.

A chain the KG cannot walk from the topic cannot answer, so the candidates come from the graph rather than
from every chain a model knows: one and two steps, either way. Training counts what each chain reaches
(``cypher_templates/paths/walkable.cypher.j2`` walks to the ends); a question needs only the chains, which
``kgqa.paths.walkable`` lists within the same bounds, reading each middle entity once for the steps it has
(from a country of FB15k-237: 67-135 ms walked, 19-35 ms listed).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kgqa.core.chains import Chain, parse_chain_key
from kgqa.graph.cypher import render
from neo4j import Driver, RoutingControl

WALKABLE_STEPS = 2  # the longest chain walkable_chains lists
MAX_VIA = 40  # middle entities read per first step (a hub in the middle is sampled, not read whole)
FANOUT = 400  # relationships read from each middle entity


@dataclass(frozen=True)
class WalkableChain:
    chain: Chain
    reached: int  # entities at its end (counted over the sampled middles for two steps)
    hits: int = 0  # of the answers asked about (training), among them


def walkable_chains(
    driver: Driver,
    kg: str,
    topic_ids: Sequence[str],
    answers: Sequence[str] = (),
    max_via: int = MAX_VIA,
    fanout: int = FANOUT,
) -> list[WalkableChain]:
    """Every chain of one or two steps from ``topic_ids``, in a stable order (fewest steps, then by name)."""
    if not topic_ids:
        return []
    records, _summary, _keys = driver.execute_query(
        render("paths/walkable"),
        {
            "kg": kg,
            "topic_ids": list(topic_ids),
            "answers": list(answers),
            "max_via": int(max_via),
            "fanout": int(fanout),
        },
        routing_=RoutingControl.READ,
    )
    out = [
        WalkableChain(
            tuple((str(r), str(w)) for r, w in record["chain"]), int(record["reached"]), int(record["hits"])
        )
        for record in records
    ]
    return sorted(out, key=lambda c: (len(c.chain), c.chain))


def walkable_at_question(
    driver: Driver, kg: str, topic_ids: Sequence[str], max_via: int = MAX_VIA, fanout: int = FANOUT
) -> list[Chain]:
    """The chains of :func:`walkable_chains`, in the same order, without what they reach."""
    if not topic_ids:
        return []
    records, _summary, _keys = driver.execute_query(
        render("paths/walkable_at_question"),
        {"kg": kg, "topic_ids": list(topic_ids), "max_via": int(max_via), "fanout": int(fanout)},
        routing_=RoutingControl.READ,
    )
    chains = [parse_chain_key(key) for key in records[0]["keys"]] if records else []
    return sorted(chains, key=lambda c: (len(c), c))


KG_CHAIN_ENTITIES = 2_000_000  # entities read to list a KG's two-step chains (a bounded read on a huge KG)


def kg_chains(driver: Driver, kg: str, most: int, entities: int = KG_CHAIN_ENTITIES) -> list[Chain]:
    """Up to ``most`` relation chains of one or two steps that the KG can walk from somewhere: every one-step
    chain, then the two-step ones that meet at the most entities (``paths/kg_chains``). What a chain scorer
    embeds ahead of the questions, so that no question waits for it."""
    if most <= 0:
        return []
    records, _summary, _keys = driver.execute_query(
        render("paths/kg_chains"),
        {"kg": kg, "entities": int(entities), "most": int(most)},
        routing_=RoutingControl.READ,
    )
    pairs: list[Chain] = [
        ((str(r["first"][0]), str(r["first"][1])), (str(r["second"][0]), str(r["second"][1])))
        for r in records
    ]
    # every step meets its own reverse somewhere, so the pairs name every step (unless the limit cut it)
    one_step: list[Chain] = sorted({(step,) for pair in pairs for step in pair})
    return (one_step + pairs)[:most]
