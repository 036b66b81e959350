"""`kgqa server start|stop|status`."""

from __future__ import annotations

import json
import time

import click
from kgqa.cli.options import json_option
from kgqa.core import config
from kgqa.core.errors import KgqaError
from kgqa.graph.server import ManagedServer


@click.group()
def server() -> None:
    """Manage the local Neo4j (with GDS, APOC and the kgqa plugin)."""


def _refuse_external(action: str) -> None:
    external = config.external_server()
    if external is not None:
        raise KgqaError(
            f"NEO4J_URI is set ({external.uri}): kgqa uses that server and does not {action} it; "
            "unset NEO4J_URI to manage the local one"
        )


@server.command()
@json_option("the status")
def start(as_json: bool) -> None:
    """Start the local server (assembling it on first use); a no-op when it already runs."""
    _refuse_external("start")
    managed = ManagedServer()
    already = managed.pid() is not None
    began = time.monotonic()
    status = managed.start(on_progress=lambda msg: click.echo(f"kgqa: {msg}", err=True))
    if as_json:
        click.echo(json.dumps({**status.to_dict(), "seconds": round(time.monotonic() - began, 2)}))
    elif already:
        click.echo(f"Neo4j is already running on {status.uri} (pid {status.pid})")
    else:
        click.echo(
            f"Neo4j {status.versions.get('neo4j')} running on {status.uri} (pid {status.pid}) "
            f"in {time.monotonic() - began:.1f}s"
        )


@server.command()
def stop() -> None:
    """Stop the local server; a no-op when it is not running."""
    _refuse_external("stop")
    if ManagedServer().stop():
        click.echo("Neo4j stopped")
    else:
        click.echo("Neo4j is not running")


@server.command()
@json_option("the status")
def status(as_json: bool) -> None:
    """Whether the server runs, where, and which versions it has."""
    external = config.external_server()
    if external is not None:
        from kgqa.graph.connection import open_driver
        from kgqa.graph.server import _query_versions

        with open_driver(external.uri, external.user, external.password):
            pass
        versions = _query_versions(external.uri, external.user, external.password)
        report = {"running": True, "uri": external.uri, "managed": False, "versions": versions}
    else:
        report = ManagedServer().status().to_dict()
    if as_json:
        click.echo(json.dumps(report))
        return
    state = "running" if report["running"] else "not running"
    click.echo(f"Neo4j is {state} at {report['uri']}")
    for name, version in report["versions"].items():  # type: ignore[union-attr]
        click.echo(f"  {name:6} {version or 'not loaded'}")
