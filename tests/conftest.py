"""Test fixtures: a real Neo4j (GDS + APOC + kgqa plugin), never a mock, and the state the tests need.

The server is the managed local one, started through the same `ManagedServer` code that `kgqa server start`
runs, with its own KGQA_HOME and port so the tests never touch a user's server. The suite makes what it
needs itself, whatever ran before and in whatever order the tests run: the session fixtures below load
MetaQA from ../shared/data and train the models the tests use (each only when it is not there yet).

Skips: a test that needs ../shared/data skips with a reason starting ``benchmark data not found`` when the
data is absent. With ``KGQA_FAIL_ON_SKIP=1`` (scripts/test sets it) the run fails if any other test skipped,
or if anything skipped while the data is there: a green CI run has run every test.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED_DATA = Path(os.environ.get("KGQA_SHARED_DATA", REPO.parent / "shared" / "data"))
TEST_HOME = Path(os.environ.get("KGQA_TEST_HOME", Path.home() / ".kgqa-test"))
TEST_PORT = int(os.environ.get("KGQA_TEST_PORT", "7697"))
NO_DATA = "benchmark data not found"


def free_port() -> int:
    """A port of 127.0.0.1 that nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def side_home(name: str) -> Path:
    """The home of a server a test starts beside the shared one: under KGQA_TEST_HOME like everything the
    tests make, so that a fresh test home is fresh for every server."""
    return TEST_HOME / "side-homes" / name


METAQA_KG = "metaqa"
# What the suite trains when the test home has no models for a KG: smaller than `kgqa train all`'s defaults,
# the same code.
QUICK_TRAINING: dict[str, Any] = {
    "subgraphrag_per_hop": 100,
    "subgraphrag_epochs": 3,
    "gsr_examples": 40_000,
    "route_questions": 60,
    "path_scorer_questions": 300,
    "link_scorer_questions": 600,
    "path_scorer_epochs": 1,
}

_skipped: list[tuple[str, str]] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    # an expected failure (xfail) reports as skipped too; it ran, so it is not a skip
    if report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        _skipped.append((report.nodeid, str(reason)))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if os.environ.get("KGQA_FAIL_ON_SKIP") != "1" or not _skipped:
        return
    data_here = SHARED_DATA.is_dir()
    bad = [(node, why) for node, why in _skipped if data_here or NO_DATA not in why]
    if bad:
        lines = "\n".join(f"  {node}: {why}" for node, why in bad)
        print(f"\nkgqa: {len(bad)} tests skipped that must run here (KGQA_FAIL_ON_SKIP=1):\n{lines}")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture(scope="session")
def neo4j_env() -> Iterator[dict[str, str]]:
    """Environment variables that point kgqa (in-process and subprocesses) at the test server."""
    saved = {
        k: os.environ.get(k)
        for k in ("KGQA_HOME", "KGQA_BOLT_PORT", "NEO4J_URI", "NEO4J_USER", "NEO4J_PASSWORD")
    }
    for key in ("NEO4J_URI", "NEO4J_USER", "NEO4J_PASSWORD"):
        os.environ.pop(key, None)
    os.environ["KGQA_HOME"] = str(TEST_HOME)
    os.environ["KGQA_BOLT_PORT"] = str(TEST_PORT)
    from kgqa.graph.server import ManagedServer

    server = ManagedServer()
    server.start(on_progress=lambda msg: print(f"[kgqa test server] {msg}", file=sys.stderr))
    yield {"KGQA_HOME": str(TEST_HOME), "KGQA_BOLT_PORT": str(TEST_PORT)}
    # The server is left running for the next test session; scripts/test stops it at the end.
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
        pytest.skip(f"{NO_DATA} at {SHARED_DATA} (set KGQA_SHARED_DATA)")
    return SHARED_DATA


@pytest.fixture(scope="session")
def metaqa_kg(driver: Any, shared_data: Path) -> str:
    """KG ``metaqa``: all of MetaQA with embeddings, by the real loader (a no-op when it is loaded)."""
    from kgqa.loaders.load_types import LoadOptions
    from kgqa.loaders.pipeline import load

    summary = load(LoadOptions("metaqa", [shared_data / "metaqa"], kg=METAQA_KG), driver=driver)
    assert summary.status == "complete" and summary.entities == 43_234, summary
    return METAQA_KG


@pytest.fixture(scope="session")
def metaqa_models(driver: Any, metaqa_kg: str, shared_data: Path) -> str:
    """KG ``metaqa``'s own models in the test home, made by the real ``kgqa train all`` from MetaQA's dev
    split when missing (``QUICK_TRAINING``: smaller, the same code); the parts already installed are kept."""
    from kgqa.learn.train_all import TrainAllOptions, train_all
    from kgqa.models import registry

    train_all(
        driver,
        metaqa_kg,
        TrainAllOptions(questions=(shared_data / "metaqa",), if_missing=True, **QUICK_TRAINING),
        log=lambda msg: print(f"[kgqa test models] {msg}", file=sys.stderr),
    )
    registry.forget_loaded_models()
    return metaqa_kg


@pytest.fixture(scope="session")
def question_classifiers(metaqa_models: str) -> Path:
    """The installed chain and hop classifiers of KG ``metaqa``."""
    from kgqa.models.kg_models import part_dir

    return part_dir(metaqa_models, "classifiers")


@pytest.fixture(scope="session")
def subgraphrag_model(metaqa_models: str) -> str:
    """KG ``metaqa``'s SubgraphRAG scorer is installed; the KG's name (its models are the KG's own)."""
    return metaqa_models


@pytest.fixture(scope="session")
def gsr_model(metaqa_models: str) -> str:
    """KG ``metaqa``'s GSR chain generator is installed; the KG's name."""
    return metaqa_models


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
