"""Soaks, bounded and short (issue 17): clients in their own processes ask at once with no error, and when
the server is stopped and started mid-soak every failure is one line, no question hangs past the driver's
retry window, and the clients answer again by themselves once the server is back.

The server is a private managed one (its own home and port) holding the project's small movie KG, so the
shared test server is never restarted under the other tests. SimGRAG needs no trained model, so the home
needs nothing but the load. bench/serve/soak.py runs the full-size soaks on MetaQA.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from kgqa.evaluation.soak import run_soak
from kgqa.graph.server import ManagedServer

from tests.conftest import REPO, run_kgqa, side_home

SOAK_HOME = side_home("soak")
SOAK_PORT = int(os.environ.get("KGQA_TEST_SOAK_PORT", "7696"))
SOAK_ENV = {"KGQA_HOME": str(SOAK_HOME), "KGQA_BOLT_PORT": str(SOAK_PORT), "NEO4J_URI": ""}
KG = "movies"
QUESTIONS = [
    "who directed The Fall",
    "which films did lee pace act in",
    "what genre is Guardians of the Galaxy",
    "who starred in A Single Man?",
    "when was Miss Pettigrew Lives for a Day released",
    "who wrote the fall",
]
# The driver retries a query for up to 30 s while the server is away (max_transaction_retry_time), and a
# connection attempt gives up after 5 s: no question may take much longer than both.
LONGEST_S = 60


@pytest.fixture(scope="module")
def soak_server(neo4j_env: dict[str, str]) -> Iterator[ManagedServer]:
    server = ManagedServer(home=SOAK_HOME, port=SOAK_PORT)
    server.start()
    loaded = run_kgqa(
        "load", "metaqa", "--path", str(REPO / "examples" / "movies-kb.txt"), "--kg", KG, env=SOAK_ENV
    )
    assert loaded.returncode == 0, loaded.stderr[-2000:]
    yield server
    server.stop()


def test_clients_ask_at_once_without_error(soak_server: ManagedServer) -> None:
    report = run_soak(QUESTIONS, "simgrag", clients=2, seconds=6, kg=KG, env=SOAK_ENV)
    assert report.errors == 0, report.error_lines
    assert report.answered >= 12 and report.questions_per_s > 0
    assert 0 < report.p50_ms <= report.p95_ms <= report.longest_ms


def test_a_restart_during_a_soak_gives_one_line_errors_and_asking_resumes(soak_server: ManagedServer) -> None:
    def restart() -> None:
        soak_server.stop()
        soak_server.start()

    report = run_soak(
        QUESTIONS, "simgrag", clients=2, seconds=50, kg=KG, env=SOAK_ENV, restart=restart, restart_after_s=3
    )
    assert report.restart is not None, "the restart did not run"
    down, up = report.restart
    assert up < 45, f"the server took until {up:.0f} s of the soak to come back: too late to see it resume"
    assert report.multi_line_errors == 0, report.error_lines
    assert all(line.startswith("Neo4j: ") or "Neo4j" in line for line in report.error_lines), (
        report.error_lines
    )
    assert report.longest_ms < LONGEST_S * 1000, f"a question took {report.longest_ms / 1000:.1f} s"
    assert report.answered_after_restart > 0 and report.errors_after_restart == 0
    assert soak_server.pid() is not None
