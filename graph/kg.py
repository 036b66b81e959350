"""Which loaded knowledge graph a question is asked against."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kgqa.core.errors import KgNotReady
from kgqa.graph.cypher import render
from neo4j import Driver, RoutingControl


@dataclass(frozen=True)
class LoadedKg:
    name: str
    source: str | None  # "metaqa", "freebase", "dbpedia"
    status: str | None  # "complete" once a load finished
    properties: dict[str, Any] = field(default_factory=dict)  # the :KG node's scalar properties
    embedded: bool = True  # it has stored vectors (False: loaded with --no-embeddings, not indexed since)


def resolve_kg(driver: Driver, kg: str | None) -> LoadedKg:
    """The named KG, else the only or most recently loaded complete one; a one-line error when none is."""
    records = driver.execute_query(render("kg/resolve"), {"kg": kg}, routing_=RoutingControl.READ).records
    if not records:
        if kg is None:
            raise KgNotReady("no knowledge graph is loaded; load one first (`kgqa load SOURCE --path ...`)")
        raise KgNotReady(f"no knowledge graph named {kg!r} is loaded (see `kgqa kgs`)")
    row = records[0]
    properties = {
        key: value
        for key, value in dict(row["properties"]).items()
        if isinstance(value, str | int | float | bool)
    }
    return LoadedKg(str(row["name"]), row["source"], row["status"], properties, bool(row["embedded"]))


def kg_embedding_model(driver: Driver, kg: str) -> str | None:
    """The encoder ``kg``'s stored vectors come from (``embedding_model`` on its :KG node), or None when it
    records none. A text compared with those vectors must be embedded by the same one. Read on every call
    (one small query), so a KG reloaded with another encoder is never compared through a stale answer."""
    records = driver.execute_query(
        render("kg/embedding_model"), {"kg": kg}, routing_=RoutingControl.READ
    ).records
    model = records[0]["model"] if records else None
    return str(model) if model else None


def no_embeddings_line(method: str, kg: str) -> str:
    """The one line a method that compares vectors says on a KG that has none."""
    return (
        f"method {method!r} compares stored vectors and KG {kg!r} was loaded without embeddings; "
        f"add them with `kgqa index --kg {kg}`, or use --method sgrag or gsr"
    )
