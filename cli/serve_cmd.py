"""`kgqa serve`: the HTTP API (OpenAPI at /docs) and the web page."""

from __future__ import annotations

import os

import click
from kgqa.cli.options import count_option
from kgqa.core.errors import KgqaError

WORKERS_HELP = (
    "Serving processes: the question-answering layer is Python, so one process answers one question at a "
    "time between database calls; more use more cores."
)


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind (loopback by default).")
@count_option("--port", 8000, 1, 65535, "Port to bind.")
@count_option("--workers", 1, 1, 64, WORKERS_HELP)
@click.option(
    "--allow-host",
    "allow_hosts",
    multiple=True,
    metavar="NAME",
    help="A Host header name to answer besides the bound address (a DNS name a proxy forwards); '*' answers "
    "any. Repeatable.",
)
def serve(host: str, port: int, workers: int, allow_hosts: tuple[str, ...]) -> None:
    """Serve the question-answering layer over HTTP, with a web page that draws the evidence.

    Bound to anything but loopback, every /api call needs the bearer token in $KGQA_HOME/serve-token.
    Requests whose Host header names neither the bound address nor an --allow-host are refused (421).
    """
    import uvicorn
    from kgqa.core.process import port_in_use
    from kgqa.service.app import ServiceSettings, create_app, is_loopback, service_token

    if port_in_use(host if host not in ("0.0.0.0", "::") else "127.0.0.1", port):
        raise KgqaError(f"port {port} on {host} is in use by another process; choose another with --port")
    token = None if is_loopback(host) else service_token()
    if token is not None:
        click.echo(
            "kgqa: bound beyond loopback: /api calls need the bearer token in $KGQA_HOME/serve-token",
            err=True,
        )
    click.echo(f"kgqa: serving on http://{host}:{port}/ (API docs at /docs)", err=True)
    if workers == 1:
        settings = ServiceSettings(host, port, token, allow_hosts)
        uvicorn.run(create_app(settings), host=host, port=port, log_level="warning")
        return
    os.environ.update(
        {
            "KGQA_SERVE_HOST": host,
            "KGQA_SERVE_PORT": str(port),
            "KGQA_SERVE_ALLOWED_HOSTS": ",".join(allow_hosts),
        }
    )
    uvicorn.run(
        "kgqa.service.app:app_from_env",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        log_level="warning",
    )
