"""The managed server's lifecycle, each failure giving one clear line. Uses its own home and port, so the
shared test server keeps running for the other tests."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import time
from pathlib import Path

import pytest

from tests.conftest import free_port, run_kgqa, side_home

LIFECYCLE_PORT = int(os.environ.get("KGQA_TEST_LIFECYCLE_PORT", "7698"))


@pytest.fixture(scope="module")
def lifecycle_env(neo4j_env: dict[str, str]) -> dict[str, str]:
    home = side_home("lifecycle")
    return {"KGQA_HOME": str(home), "KGQA_BOLT_PORT": str(LIFECYCLE_PORT)}


def _kgqa(env: dict[str, str], *args: str):  # type: ignore[no-untyped-def]
    clean = {k: v for k, v in env.items()}
    return run_kgqa(*args, env={**clean, "NEO4J_URI": ""})


def test_start_twice_stop_twice_and_versions(lifecycle_env: dict[str, str]) -> None:
    first = _kgqa(lifecycle_env, "server", "start", "--json")
    assert first.returncode == 0, first.stderr
    second = _kgqa(lifecycle_env, "server", "start")
    assert second.returncode == 0, second.stderr
    assert "already running" in second.stdout

    versions = _kgqa(
        lifecycle_env,
        "cypher",
        "--format",
        "json",
        "RETURN gds.version() AS gds, apoc.version() AS apoc, kgqa.version() AS kgqa",
    )
    assert versions.returncode == 0, versions.stderr
    assert '"gds": "2.13.9"' in versions.stdout and '"apoc": "5.26.19"' in versions.stdout
    assert '"kgqa": "0.1.0"' in versions.stdout

    status = _kgqa(lifecycle_env, "server", "status", "--json")
    assert '"running": true' in status.stdout

    stopped = _kgqa(lifecycle_env, "server", "stop")
    assert stopped.returncode == 0 and "stopped" in stopped.stdout
    again = _kgqa(lifecycle_env, "server", "stop")
    assert again.returncode == 0 and "not running" in again.stdout
    assert '"running": false' in _kgqa(lifecycle_env, "server", "status", "--json").stdout


def test_killed_server_is_reported_and_restarts(lifecycle_env: dict[str, str]) -> None:
    assert _kgqa(lifecycle_env, "server", "start").returncode == 0
    pid = int((Path(lifecycle_env["KGQA_HOME"]) / "neo4j" / "run" / "neo4j.pid").read_text())
    os.kill(pid, signal.SIGKILL)
    for _ in range(50):
        if not Path(f"/proc/{pid}").exists():
            break
        time.sleep(0.1)

    status = _kgqa(lifecycle_env, "server", "status", "--json")
    assert '"running": false' in status.stdout
    query = _kgqa(lifecycle_env, "cypher", "RETURN 1")
    assert query.returncode != 0
    assert query.stderr.strip().count("\n") == 0
    assert "not running" in query.stderr and "kgqa server start" in query.stderr

    restarted = _kgqa(lifecycle_env, "server", "start")
    assert restarted.returncode == 0, restarted.stderr
    assert _kgqa(lifecycle_env, "cypher", "RETURN 1 AS one").returncode == 0
    assert _kgqa(lifecycle_env, "server", "stop").returncode == 0


def test_port_in_use_is_a_clear_error(lifecycle_env: dict[str, str]) -> None:
    with socket.socket() as blocker:
        blocker.bind(("127.0.0.1", 0))
        blocker.listen()
        port = blocker.getsockname()[1]
        result = _kgqa({**lifecycle_env, "KGQA_BOLT_PORT": str(port)}, "server", "start")
    assert result.returncode == 1
    line = result.stderr.strip().splitlines()[-1]
    assert f"port {port}" in line and "in use" in line and "log:" in line


def test_crashed_start_points_at_the_log(lifecycle_env: dict[str, str]) -> None:
    # A heap larger than any machine has makes the JVM refuse to start: a real crash, not a simulated one.
    result = _kgqa({**lifecycle_env, "KGQA_HEAP": "100000g"}, "server", "start")
    assert result.returncode == 1
    line = result.stderr.strip().splitlines()[-1]
    assert line.startswith("kgqa: error: Neo4j failed to start") or "did not" in line
    assert "log:" in line
    assert '"running": false' in _kgqa(lifecycle_env, "server", "status", "--json").stdout


def test_missing_java_is_a_clear_error(lifecycle_env: dict[str, str], tmp_path: Path) -> None:
    result = _kgqa({**lifecycle_env, "JAVA_HOME": str(tmp_path / "no-jdk-here")}, "server", "start")
    assert result.returncode == 1
    assert "Java 17 or newer is required" in result.stderr


def test_wrong_password_from_env_is_a_clear_error(neo4j_env: dict[str, str]) -> None:
    from tests.conftest import TEST_PORT

    result = run_kgqa(
        "cypher",
        "RETURN 1",
        env={"NEO4J_URI": f"bolt://127.0.0.1:{TEST_PORT}", "NEO4J_USER": "neo4j", "NEO4J_PASSWORD": "wrong"},
    )
    assert result.returncode == 5  # the database unavailable (kgqa.core.errors)
    assert result.stderr.strip() == (
        f"kgqa: error: authentication failed for user 'neo4j' at bolt://127.0.0.1:{TEST_PORT} "
        "(check NEO4J_USER/NEO4J_PASSWORD)"
    )


def test_external_server_env_is_used(neo4j_env: dict[str, str]) -> None:
    from kgqa.graph.server import ManagedServer

    server = ManagedServer()
    result = run_kgqa(
        "cypher",
        "--format",
        "json",
        "RETURN kgqa.version() AS v",
        env={
            "NEO4J_URI": server.uri,
            "NEO4J_USER": "neo4j",
            "NEO4J_PASSWORD": server.password(),
            "KGQA_HOME": "/nonexistent-home",
        },
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == '[{"v": "0.1.0"}]'


def test_embedding_cache_size_reaches_the_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from kgqa.core.errors import KgqaError
    from kgqa.graph.server_install import write_conf

    monkeypatch.setenv("KGQA_EMBEDDING_CACHE_MB", "64")
    write_conf(tmp_path / "neo4j", 7999, tmp_path / "models")
    conf = (tmp_path / "neo4j" / "conf" / "neo4j.conf").read_text()
    assert "server.jvm.additional=-Dkgqa.embeddingCache.mb=64" in conf.splitlines()
    monkeypatch.setenv("KGQA_EMBEDDING_CACHE_MB", "lots")
    with pytest.raises(KgqaError, match="KGQA_EMBEDDING_CACHE_MB must be a whole number of megabytes"):
        write_conf(tmp_path / "neo4j", 7999, tmp_path / "models")


def test_a_home_whose_password_starts_with_a_dash_starts(neo4j_env: dict[str, str]) -> None:
    # Older kgqa generated such passwords (token_urlsafe): neo4j-admin read one as an option and the home
    # never started. A home that has one must start as it is, and `kgqa` must reach the server with it.
    home = side_home("dash-password")
    shutil.rmtree(home / "neo4j" / "data", ignore_errors=True)
    home.mkdir(parents=True, exist_ok=True)
    (home / "neo4j-password").write_text('-UY "odd" #chars @x\n')
    env = {"KGQA_HOME": str(home), "KGQA_BOLT_PORT": str(free_port())}
    try:
        started = _kgqa(env, "server", "start")
        assert started.returncode == 0, started.stderr
        one = _kgqa(env, "cypher", "--format", "json", "RETURN 1 AS one")
        assert one.returncode == 0 and one.stdout.strip() == '[{"one": 1}]', one.stderr
    finally:
        _kgqa(env, "server", "stop")
        shutil.rmtree(home / "neo4j" / "data", ignore_errors=True)
