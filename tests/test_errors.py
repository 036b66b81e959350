"""The error classes of kgqa.core.errors: each reaches the CLI as its exit code and the service as its HTTP
status, from the one place that maps them (the service's statuses: tests/test_serve.py)."""

from __future__ import annotations

import re
import socket

from kgqa.core import errors
from kgqa.core.errors import (
    BadInput,
    CannotRunHere,
    DatabaseUnavailable,
    KgNotReady,
    KgqaError,
    LlmUnavailable,
    ModelMissing,
)
from kgqa.graph.connection import failure_kind
from neo4j.exceptions import ClientError, ServiceUnavailable, SessionExpired, TransientError

from tests.conftest import run_kgqa

CLASSES = [KgqaError, BadInput, KgNotReady, CannotRunHere, ModelMissing, DatabaseUnavailable, LlmUnavailable]


def test_the_table_in_the_module_says_what_the_classes_do() -> None:
    """The table users read (core/errors.py's docstring) is the mapping the code applies."""
    documented = {
        row.group(1): (int(row.group(2)), int(row.group(3)))
        for row in re.finditer(r"^(\w+)\s+(\d)\s+(\d{3})\s", errors.__doc__ or "", re.M)
    }
    assert documented == {cls.__name__: (cls.exit_code, cls.http_status) for cls in CLASSES}


def test_the_drivers_errors_count_as_the_database_unavailable_and_a_refused_query_does_not() -> None:
    assert failure_kind(ServiceUnavailable("gone")) is DatabaseUnavailable
    assert failure_kind(SessionExpired("gone")) is DatabaseUnavailable
    transient = TransientError._hydrate_neo4j(code="Neo.TransientError.General.MemoryPoolOutOfMemoryError")
    assert failure_kind(transient) is DatabaseUnavailable
    refused = ClientError._hydrate_neo4j(code="Neo.ClientError.Statement.SyntaxError", message="x")
    assert failure_kind(refused) is KgqaError
    for cls in (BadInput, KgNotReady, CannotRunHere, LlmUnavailable):
        assert failure_kind(cls("x")) is cls
    assert failure_kind(ModelMissing("model", "kgqa train all")) is ModelMissing


def test_the_cli_exits_with_the_code_of_the_failure(neo4j_env: dict[str, str], tmp_path: object) -> None:
    empty = run_kgqa("ask", " ")
    assert (empty.returncode, empty.stderr.strip()) == (2, "kgqa: error: the question is empty")
    unknown = run_kgqa("ask", "who is it", "--kg", "no-such-kg", "--method", "cosine")
    assert unknown.returncode == 3 and "no knowledge graph named 'no-such-kg'" in unknown.stderr
    with socket.socket() as sock:  # a port nothing listens on: the managed server there is not running
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    away = run_kgqa("kgs", env={"KGQA_HOME": str(tmp_path), "KGQA_BOLT_PORT": str(port)})
    assert away.returncode == 5, away.stderr
    assert away.stderr.strip().startswith("kgqa: error: the kgqa server is not running")
