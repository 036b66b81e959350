"""Constraints and indexes of the graph model, shared by all KGs in the database."""

from __future__ import annotations

import time
from collections.abc import Callable

from kgqa.core.errors import KgqaError
from kgqa.graph.cypher import render
from neo4j import Driver

CONSTRAINTS = ("kg_name", "entity_key", "relation_key")
INDEXES = ("entity_kg_name", "entity_name")
VECTOR_INDEXES = ("entity_embedding", "relation_embedding")
ALL = CONSTRAINTS + INDEXES + VECTOR_INDEXES

# What each of our indexes covers: (index type, label, properties). An index with the same coverage under
# another name (say a constraint someone created by hand) serves in its place, so it is reported as ours.
COVERAGE: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "kg_name": ("RANGE", "KG", ("name",)),
    "entity_key": ("RANGE", "Entity", ("kg", "id")),
    "relation_key": ("RANGE", "Relation", ("kg", "name")),
    "entity_kg_name": ("RANGE", "Entity", ("kg", "name")),
    "entity_name": ("FULLTEXT", "Entity", ("name",)),
    "entity_embedding": ("VECTOR", "Entity", ("embedding",)),
    "relation_embedding": ("VECTOR", "Relation", ("embedding",)),
}


def ensure_schema(driver: Driver, dimensions: int) -> None:
    """Creates whatever is missing (idempotent); a vector index of other dimensions is an error."""
    for name in CONSTRAINTS + INDEXES:
        driver.execute_query(render(f"schema/{name}"))
    for name in VECTOR_INDEXES:
        driver.execute_query(render(f"schema/{name}", dimensions=dimensions))
    for row in index_states(driver):
        if row["name"] in VECTOR_INDEXES:
            config = (row.get("options") or {}).get("indexConfig", {})
            existing = config.get("vector.dimensions")
            if existing is not None and int(existing) != dimensions:
                raise KgqaError(
                    f"vector index {row['name']} has {existing} dimensions but the embedding model makes "
                    f"{dimensions}; all KGs in a database share one model (set KGQA_EMBEDDING_MODEL)"
                )


def index_states(driver: Driver) -> list[dict[str, object]]:
    """One row per kgqa index, under our name, including an equivalent index created under another name."""
    labels = sorted({label for _, label, _ in COVERAGE.values()})
    rows = [dict(r) for r in driver.execute_query(render("schema/show"), labels=labels).records]
    by_coverage = {
        (str(r["type"]), (r["labelsOrTypes"] or [None])[0], tuple(r["properties"] or ())): r for r in rows
    }
    found = []
    for name, coverage in COVERAGE.items():
        row = next((r for r in rows if r["name"] == name), None) or by_coverage.get(coverage)
        if row is not None:
            found.append({**row, "name": name, "actual_name": row["name"]})
    return found


def await_indexes(
    driver: Driver, on_percent: Callable[[float], None] | None = None, stall_seconds: float = 900.0
) -> dict[str, str]:
    """Waits until the kgqa indexes are ONLINE; returns name -> state. Raises if one FAILED, or if population
    made no progress for ``stall_seconds`` (a million vectors take minutes, so there is no overall limit).
    ``on_percent`` receives the least populated index's percentage as it grows."""
    best, since = -1.0, time.monotonic()
    while True:
        rows = index_states(driver)
        failed = [str(r["name"]) for r in rows if r["state"] == "FAILED"]
        if failed:
            raise KgqaError(f"index population failed for {', '.join(failed)} (see the Neo4j debug log)")
        if all(r["state"] == "ONLINE" for r in rows):
            if on_percent is not None:
                on_percent(100.0)
            return {str(r["name"]): str(r["state"]) for r in rows}
        percent = min(float(r.get("populationPercent") or 0.0) for r in rows if r["state"] != "ONLINE")
        if percent > best:
            best, since = percent, time.monotonic()
            if on_percent is not None:
                on_percent(percent)
        elif time.monotonic() - since > stall_seconds:
            waiting = ", ".join(f"{r['name']} ({r['state']})" for r in rows if r["state"] != "ONLINE")
            raise KgqaError(
                f"index population made no progress for {stall_seconds:.0f} s at {best:.0f}%: {waiting} "
                "(see the Neo4j debug log)"
            )
        time.sleep(0.5)
