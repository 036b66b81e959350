"""`kgqa cypher`: a small Cypher shell against the configured server."""

from __future__ import annotations

import json
import sys

import click
from kgqa.cli.output import print_table, to_jsonable
from kgqa.core.errors import BadInput, KgqaError
from kgqa.graph.connection import failure_line, open_driver
from neo4j import NotificationMinimumSeverity, Query, RoutingControl
from neo4j.exceptions import Neo4jError

READ_TIMEOUT_S = 60.0  # a read-only statement's transaction timeout unless --timeout says otherwise
# Exit codes from 126 up mean "not executable", "not found" and signals to a shell: a count stops below.
MAX_EXIT_CODE = 125
# Procedures Neo4j plans as "schema" (mode DBMS) that only read: allowed without --write. Other DBMS-mode
# procedures (db.clearQueryCaches, ...) change the server's state and stay refused.
READ_ONLY_DBMS_PROCEDURES = frozenset(
    {
        "dbms.components",
        "dbms.info",
        "dbms.listConfig",
        "dbms.queryJmx",
        "dbms.showCurrentUser",
        "dbms.clientConfig",
        "dbms.listCapabilities",
        "dbms.routing.getRoutingTable",
        "dbms.cluster.routing.getRoutingTable",
    }
)


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
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True, max=86_400),
    default=None,
    help=f"Stop a statement after this many seconds (default: {READ_TIMEOUT_S:g} for reads, none with "
    "--write).",
)
def cypher(query: str | None, fmt: str, params: tuple[str, ...], write: bool, timeout: float | None) -> None:
    """Run QUERY, or start an interactive shell when QUERY is absent (end statements with ';').

    Read-only unless --write: each statement is planned first (EXPLAIN) and refused if its plan writes, as
    neo4j-graphrag's Text2Cypher retriever does, then run routed as a read, in a transaction that times out.
    Statements read from standard input go on after one fails; the exit code is the number that failed."""
    parameters = _parse_params(params)
    limit = timeout if timeout is not None else (None if write else READ_TIMEOUT_S)
    with open_driver() as driver:
        if query is not None:
            _run_one(driver, query, parameters, fmt, write, limit)
            return
        failed, total = _interactive(driver, parameters, fmt, write, limit)
    if failed:
        click.echo(f"kgqa: error: {failed} of {total} statements failed", err=True)
        sys.exit(min(failed, MAX_EXIT_CODE))


def refuse_writes(driver, query: str, parameters: dict[str, object]) -> None:  # type: ignore[no-untyped-def]
    """A one-line error when ``query``'s plan writes (EXPLAIN plans without running it)."""
    # Notifications off for the plan: the statement's run reports the same ones, so each is printed once.
    with driver.session(
        default_access_mode="READ", notifications_min_severity=NotificationMinimumSeverity.OFF
    ) as session:
        summary = session.run("EXPLAIN " + query, parameters).consume()
    if summary.query_type == "s" and _only_reads(summary.plan):
        return
    if summary.query_type not in ("r", None):
        kind = {"w": "writes", "rw": "reads and writes", "s": "changes the schema"}.get(
            str(summary.query_type), f"is of type {summary.query_type!r}"
        )
        raise BadInput(f"the statement {kind}; kgqa cypher is read-only unless given --write")


def _only_reads(plan: dict[str, object] | None) -> bool:
    """Whether a plan Neo4j types "schema" only calls DBMS procedures that read (``dbms.components()``)."""
    called: list[str] = []
    stack = [plan] if plan else []
    while stack:
        node = stack.pop()
        if str(node.get("operatorType", "")).startswith("ProcedureCall"):
            details = str((node.get("args") or {}).get("Details", ""))  # type: ignore[union-attr]
            called.append(details.split("(", 1)[0].strip())
        stack.extend(node.get("children") or [])  # type: ignore[arg-type]
    return bool(called) and all(name in READ_ONLY_DBMS_PROCEDURES for name in called)


def _run_one(  # type: ignore[no-untyped-def]
    driver,
    query: str,
    parameters: dict[str, object],
    fmt: str,
    write: bool = False,
    timeout: float | None = None,
) -> None:
    if not write:
        refuse_writes(driver, query, parameters)
    routing = RoutingControl.WRITE if write else RoutingControl.READ
    try:
        records, _summary, keys = driver.execute_query(
            Query(query, timeout=timeout), parameters, routing_=routing
        )
    except Neo4jError as exc:
        if exc.code and "TransactionTimedOut" in exc.code:
            raise KgqaError(
                f"the statement ran longer than {timeout:g} s and was stopped (--timeout)"
            ) from None
        raise
    rows = [{key: to_jsonable(record[key]) for key in keys} for record in records]
    if fmt == "json":
        click.echo(json.dumps(rows, ensure_ascii=False))
    else:
        print_table(list(keys), rows)


def _interactive(  # type: ignore[no-untyped-def]
    driver, parameters: dict[str, object], fmt: str, write: bool, timeout: float | None
) -> tuple[int, int]:
    """Runs the statements of standard input; (failed, run)."""
    failed = total = 0

    def attempt(statement: str) -> None:
        nonlocal failed, total
        total += 1
        try:
            _run_one(driver, statement, parameters, fmt, write, timeout)
        except (Neo4jError, KgqaError) as exc:
            failed += 1
            click.echo(f"error: {failure_line(exc) or exc}", err=True)

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
            if statement:
                attempt(statement)
    leftover = "\n".join(buffer).strip()
    if leftover:
        attempt(leftover)
    return failed, total


def _parse_params(params: tuple[str, ...]) -> dict[str, object]:
    parsed: dict[str, object] = {}
    for item in params:
        name, sep, raw = item.partition("=")
        if not sep or not name:
            raise BadInput(f"--param expects NAME=VALUE, got {item!r}")
        try:
            parsed[name] = json.loads(raw)
        except json.JSONDecodeError:
            parsed[name] = raw
    return parsed
