"""One place that decides which Neo4j a command talks to and opens the driver."""

from __future__ import annotations

import re

from kgqa.core import config
from kgqa.core.errors import BadInput, DatabaseUnavailable, KgqaError
from neo4j import Driver, GraphDatabase
from neo4j.exceptions import AuthError, ConfigurationError, DriverError, Neo4jError, ServiceUnavailable


def connection_settings() -> tuple[str, str, str]:
    """(uri, user, password): NEO4J_* when set, else the managed local server."""
    external = config.external_server()
    if external is not None:
        return external.uri, external.user, external.password
    from kgqa.graph.server import ManagedServer

    server = ManagedServer()
    if server.pid() is None:
        raise DatabaseUnavailable(
            f"the kgqa server is not running at {server.uri}; start it with `kgqa server start` "
            "or point NEO4J_URI/NEO4J_USER/NEO4J_PASSWORD at your own Neo4j"
        )
    return server.uri, "neo4j", server.password()


def open_driver(
    uri: str | None = None,
    user: str | None = None,
    password: str | None = None,
    retry_s: float | None = None,
) -> Driver:
    """A connected driver; connection problems become one-line KgqaErrors.

    ``retry_s`` bounds how long a query is retried while the server is away (the driver's default is 30 s:
    right for a command that should ride out a restart, long for a web request that should fail fast)."""
    if uri is None:
        uri, user, password = connection_settings()
    options = {} if retry_s is None else {"max_transaction_retry_time": retry_s}
    try:
        driver = GraphDatabase.driver(
            uri, auth=(user or "neo4j", password or ""), connection_timeout=5, **options
        )
    except (ConfigurationError, ValueError) as exc:
        first = str(exc).split(". ")[0].rstrip(".")
        raise BadInput(
            f"NEO4J_URI {uri!r} is not a Neo4j address: {first} (use bolt:// or neo4j://)"
        ) from None
    try:
        driver.verify_connectivity()
    except AuthError:
        driver.close()
        raise DatabaseUnavailable(
            f"authentication failed for user {user!r} at {uri} (check NEO4J_USER/NEO4J_PASSWORD)"
        ) from None
    except (ServiceUnavailable, OSError, ValueError) as exc:
        driver.close()
        detail = (str(exc).splitlines()[0] if str(exc) else type(exc).__name__).rstrip(": ")
        raise DatabaseUnavailable(f"cannot reach Neo4j at {uri}: {detail}") from None
    return driver


JAVA_CAUSE = re.compile(r"Caused by: (?:[\w$]+\.)+[\w$]*(?:Exception|Error): ")


def failure_line(exc: BaseException) -> str | None:
    """The one line a user reads for a failure of kgqa or of the database (None: a bug, left to surface).

    A server that goes away mid-question raises the driver's own errors (ServiceUnavailable, SessionExpired,
    a connection closed mid-result): each becomes ``Neo4j: <its first line>``, never a traceback.
    """
    if isinstance(exc, KgqaError):
        return str(exc)
    if isinstance(exc, (Neo4jError, DriverError)):
        message = getattr(exc, "message", None) or str(exc)
        first = message.strip().splitlines()[0] if message.strip() else type(exc).__name__
        # A procedure that fails while the database shuts down names its Java exception: the user reads why.
        return f"Neo4j: {JAVA_CAUSE.sub('', first)}"
    return None


def failure_kind(exc: BaseException) -> type[KgqaError]:
    """The kgqa error class a failure counts as, for its exit code and HTTP status: the driver's own errors
    (the server gone, a transient failure) count as :class:`DatabaseUnavailable`; a query Neo4j refused, as
    any other failure."""
    if isinstance(exc, KgqaError):
        return type(exc)
    if isinstance(exc, DriverError) or (isinstance(exc, Neo4jError) and "Transient" in (exc.code or "")):
        return DatabaseUnavailable
    return KgqaError
