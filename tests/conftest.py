"""Test fixtures: a real Neo4j (GDS + APOC + kgqa plugin), never a mock.

The server comes from testcontainers when a Docker engine is reachable (docker/compose.yaml's image), and
otherwise from the managed local server, started through the same `ManagedServer` code that
`kgqa server start` runs. Tests get their own KGQA_HOME and port so they never touch a user's server.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED_DATA = Path(os.environ.get("KGQA_SHARED_DATA", REPO.parent / "shared" / "data"))
TEST_HOME = Path(os.environ.get("KGQA_TEST_HOME", Path.home() / ".kgqa-test"))
TEST_PORT = int(os.environ.get("KGQA_TEST_PORT", "7697"))


def _docker_reachable() -> bool:
    if os.environ.get("KGQA_TEST_DOCKER", "auto") == "never" or shutil.which("docker") is None:
        return False
    try:
        return subprocess.run(["docker", "info"], capture_output=True, timeout=5).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


@pytest.fixture(scope="session")
def neo4j_env() -> Iterator[dict[str, str]]:
    """Environment variables that point kgqa (in-process and subprocesses) at the test server."""
    saved = {
        k: os.environ.get(k)
        for k in ("KGQA_HOME", "KGQA_BOLT_PORT", "NEO4J_URI", "NEO4J_USER", "NEO4J_PASSWORD")
    }
    if _docker_reachable():  # pragma: no cover - no Docker engine on the project's machines
        from testcontainers.neo4j import Neo4jContainer

        container = Neo4jContainer(image="kgqa-neo4j:local", password="kgqa-test-password")
        container.start()
        env = {
            "NEO4J_URI": container.get_connection_url(),
            "NEO4J_USER": "neo4j",
            "NEO4J_PASSWORD": "kgqa-test-password",
        }
        os.environ.update(env)
        yield env
        container.stop()
    else:
        for key in ("NEO4J_URI", "NEO4J_USER", "NEO4J_PASSWORD"):
            os.environ.pop(key, None)
        os.environ["KGQA_HOME"] = str(TEST_HOME)
        os.environ["KGQA_BOLT_PORT"] = str(TEST_PORT)
        from kgqa.graph.server import ManagedServer

        server = ManagedServer()
        server.start(on_progress=lambda msg: print(f"[kgqa test server] {msg}", file=sys.stderr))
        yield {"KGQA_HOME": str(TEST_HOME), "KGQA_BOLT_PORT": str(TEST_PORT)}
        # The server is left running for the next test session; .ci/run stops it at the end.
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


@pytest.fixture(scope="session")
def driver(neo4j_env: dict[str, str]):  # type: ignore[no-untyped-def]
    from kgqa.graph.connection import open_driver

    drv = open_driver()
    yield drv
    drv.close()


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"benchmark data not found at {SHARED_DATA} (set KGQA_SHARED_DATA)")
    return SHARED_DATA


def run_kgqa(
    *args: str, env: dict[str, str] | None = None, input_text: str | None = None, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    """Runs the real `kgqa` console entry point in a subprocess, as a user would."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "kgqa.cli", *args],
        capture_output=True,
        text=True,
        env=full_env,
        input=input_text,
        timeout=timeout,
    )
