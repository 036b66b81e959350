"""`kgqa cypher`: a small Cypher shell against the configured server."""

from __future__ import annotations

import json
import sys

import click
from kgqa.cli.output import print_table, to_jsonable
from kgqa.graph.connection import open_driver


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
def cypher(query: str | None, fmt: str, params: tuple[str, ...]) -> None:
    """Run QUERY, or start an interactive shell when QUERY is absent (end statements with ';')."""
    parameters = _parse_params(params)
    with open_driver() as driver:
        if query is not None:
            _run_one(driver, query, parameters, fmt)
            return
        _interactive(driver, parameters, fmt)


def _run_one(driver, query: str, parameters: dict[str, object], fmt: str) -> None:  # type: ignore[no-untyped-def]
    records, _summary, keys = driver.execute_query(query, parameters)
    rows = [{key: to_jsonable(record[key]) for key in keys} for record in records]
    if fmt == "json":
        click.echo(json.dumps(rows, ensure_ascii=False))
    else:
        print_table(list(keys), rows)


def _interactive(driver, parameters: dict[str, object], fmt: str) -> None:  # type: ignore[no-untyped-def]
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
                _run_one(driver, statement, parameters, fmt)
            except Neo4jError as exc:
                click.echo(f"error: {exc.message}", err=True)
    leftover = "\n".join(buffer).strip()
    if leftover:
        _run_one(driver, leftover, parameters, fmt)


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
