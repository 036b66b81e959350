"""`kgqa cypher`: a small Cypher shell against the configured server."""

from __future__ import annotations

import json
import sys

import click
from kgqa.cli.output import print_table, to_jsonable
from kgqa.graph.connection import open_driver
from neo4j import RoutingControl


@click.command()
@click.argument("query", required=False)
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option(
    "-p",
    "--param",
    "params",
    multiple=True,
    metavar="NAME=JSON",
    help="A query parameter, e.g. -p name='\"Kismet\"' (value parsed as JSON, else taken as a string).",
)
@click.option(
    "--write",
    is_flag=True,
    help="Allow statements that write (by default a statement whose plan writes is refused, and reads run "
    "in a read transaction).",
)
def cypher(query: str | None, fmt: str, params: tuple[str, ...], write: bool) -> None:
    """Run QUERY, or start an interactive shell when QUERY is absent (end statements with ';').

    Read-only unless --write: each statement is planned first (EXPLAIN) and refused if its plan writes, as
    neo4j-graphrag's Text2Cypher retriever does, then run routed as a read."""
    parameters = _parse_params(params)
    with open_driver() as driver:
        if query is not None:
            _run_one(driver, query, parameters, fmt, write)
            return
        _interactive(driver, parameters, fmt, write)


def refuse_writes(driver, query: str, parameters: dict[str, object]) -> None:  # type: ignore[no-untyped-def]
    """A one-line error when ``query``'s plan writes (EXPLAIN plans without running it)."""
    from kgqa.core.errors import KgqaError

    _records, summary, _keys = driver.execute_query(
        "EXPLAIN " + query, parameters, routing_=RoutingControl.READ
    )
    if summary.query_type not in ("r", None):
        kind = {"w": "writes", "rw": "reads and writes", "s": "changes the schema"}.get(
            str(summary.query_type), f"is of type {summary.query_type!r}"
        )
        raise KgqaError(f"the statement {kind}; kgqa cypher is read-only unless given --write")


def _run_one(driver, query: str, parameters: dict[str, object], fmt: str, write: bool = False) -> None:  # type: ignore[no-untyped-def]
    if not write:
        refuse_writes(driver, query, parameters)
    routing = RoutingControl.WRITE if write else RoutingControl.READ
    records, _summary, keys = driver.execute_query(query, parameters, routing_=routing)
    rows = [{key: to_jsonable(record[key]) for key in keys} for record in records]
    if fmt == "json":
        click.echo(json.dumps(rows, ensure_ascii=False))
    else:
        print_table(list(keys), rows)


def _interactive(driver, parameters: dict[str, object], fmt: str, write: bool) -> None:  # type: ignore[no-untyped-def]
    from kgqa.core.errors import KgqaError
    from neo4j.exceptions import Neo4jError

    interactive = sys.stdin.isatty()
    if interactive:
        click.echo("kgqa cypher shell: end a statement with ';', quit with :exit or Ctrl-D", err=True)
    buffer: list[str] = []
    while True:
        try:
            line = input("kgqa> " if not buffer else "  ...> ") if interactive else sys.stdin.readline()
        except EOFError:
            break
        if not interactive and line == "":
            break
        if line.strip() in (":exit", ":quit") and not buffer:
            break
        buffer.append(line.rstrip("\n"))
        text = "\n".join(buffer).strip()
        if text.endswith(";"):
            buffer.clear()
            statement = text.rstrip(";").strip()
            if not statement:
                continue
            try:
                _run_one(driver, statement, parameters, fmt, write)
            except Neo4jError as exc:
                click.echo(f"error: {exc.message}", err=True)
            except KgqaError as exc:
                click.echo(f"error: {exc}", err=True)
    leftover = "\n".join(buffer).strip()
    if leftover:
        _run_one(driver, leftover, parameters, fmt, write)


def _parse_params(params: tuple[str, ...]) -> dict[str, object]:
    from kgqa.core.errors import KgqaError

    parsed: dict[str, object] = {}
    for item in params:
        name, sep, raw = item.partition("=")
        if not sep or not name:
            raise KgqaError(f"--param expects NAME=VALUE, got {item!r}")
        try:
            parsed[name] = json.loads(raw)
        except json.JSONDecodeError:
            parsed[name] = raw
    return parsed
