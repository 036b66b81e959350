"""The :KG catalogue: list, inspect and drop loaded knowledge graphs."""

from __future__ import annotations

from typing import Any

from kgqa.graph.cypher import render
from kgqa.models.kg_models import models_summary, remove_models
from neo4j import Driver


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
