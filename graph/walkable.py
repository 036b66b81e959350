"""The relation chains that can be walked from a question's topic entities: what a chain scorer chooses among.

A chain the KG cannot walk from the topic cannot answer, so the candidates come from the graph rather than
from every chain a model knows (``cypher_templates/paths/walkable.cypher.j2``: one and two steps, either way).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kgqa.core.chains import Chain
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
