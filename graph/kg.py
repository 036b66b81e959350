"""The catalogue of loaded knowledge graphs: which one a question is asked against, and list, inspect and
drop them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kgqa.core.errors import KgNotReady
from kgqa.graph.cypher import render
from kgqa.models.kg_models import models_summary, remove_models
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


def list_kgs(driver: Driver) -> list[dict[str, Any]]:
    """Every KG with its counts; a KG still loading (or interrupted) shows what is in the graph now."""
    rows = [dict(r) for r in driver.execute_query(render("load/list_kgs", one=False)).records]
    for row in rows:
        if row["status"] != "complete":
            row.update(live_counts(driver, row["name"]))
        row.update(models_summary(str(row["name"]), row.get("fingerprint")))
    return rows


def kg_info(driver: Driver, kg: str) -> dict[str, Any] | None:
    records = driver.execute_query(render("load/list_kgs", one=True), kg=kg).records
    return dict(records[0]) if records else None


def live_counts(driver: Driver, kg: str) -> dict[str, int]:
    record = driver.execute_query(render("load/counts"), kg=kg).records[0]
    return {
        "entities": int(record["entities"]),
        "relationships": int(record["relationships"]),
        "relations": int(record["relations"]),
    }


def drop_kg(driver: Driver, kg: str) -> bool:
    """Deletes one KG (entities, relationships, relation nodes, its :KG node); False if there was none."""
    existed = kg_info(driver, kg) is not None
    with driver.session() as session:  # CALL { } IN TRANSACTIONS needs an auto-commit transaction
        session.run(render("load/drop_entities"), kg=kg).consume()
    driver.execute_query(render("load/drop_kg"), kg=kg)
    if existed:
        remove_models(kg)
    return existed
