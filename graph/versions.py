"""What the connected server runs: Neo4j's version and edition, and the plugins' versions."""

from __future__ import annotations

from kgqa.graph.cypher import render
from neo4j import Driver
from neo4j.exceptions import Neo4jError

PLUGINS = {"gds": "gds.version", "apoc": "apoc.version", "kgqa": "kgqa.version"}


def server_versions(driver: Driver) -> dict[str, str | None]:
    """``neo4j``, ``edition`` and one entry per plugin; None for a plugin that is not installed."""
    row = driver.execute_query(render("versions/neo4j")).records[0]
    versions: dict[str, str | None] = {"neo4j": str(row["version"]), "edition": str(row["edition"])}
    for name, function in PLUGINS.items():
        try:
            versions[name] = str(
                driver.execute_query(render("versions/plugin", function=function)).records[0][0]
            )
        except Neo4jError:  # an unknown function: the plugin is missing, which is a fact to record
            versions[name] = None
    return versions
