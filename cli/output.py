"""Terminal and JSON formatting shared by the commands."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table


def to_jsonable(value: Any) -> Any:
    """Neo4j values (nodes, relationships, paths, temporals) as plain JSON-friendly data."""
    from neo4j.graph import Node, Path, Relationship

    if isinstance(value, Node):
        return {"labels": sorted(value.labels), "properties": {k: to_jsonable(v) for k, v in value.items()}}
    if isinstance(value, Relationship):
        return {"type": value.type, "properties": {k: to_jsonable(v) for k, v in value.items()}}
    if isinstance(value, Path):
        return [to_jsonable(r) for r in value.relationships]
    if isinstance(value, dict):
        return {k: to_jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_jsonable(v) for v in value]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


def print_table(columns: list[str], rows: list[dict[str, Any]]) -> None:
    table = Table(*columns, show_lines=False)
    for row in rows:
        table.add_row(*(_cell(row[c]) for c in columns))
    console = Console()
    console.print(table)
    console.print(f"{len(rows)} row{'s' if len(rows) != 1 else ''}", style="dim")


def _cell(value: Any) -> str:
    import json

    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
