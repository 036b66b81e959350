"""The bulk path (neo4j-admin import) gives the same graph as the online path.

neo4j-admin replaces the whole database, so the bulk loads run against a private managed server of their
own (under ``$KGQA_TEST_HOME``, port ``$KGQA_TEST_BULK_PORT``), never the shared test server. The online
loads of the same inputs go to the shared test server under ``t_bulk_*`` names and are dropped afterwards.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from kgqa.graph.connection import open_driver
from kgqa.graph.kg import drop_kg
from kgqa.graph.server import ManagedServer

from tests.conftest import run_kgqa, side_home
from tests.fixtures.loaders.helpers import graph_of
from tests.test_load_parsers import DBPEDIA, FREEBASE, METAQA

BULK_HOME = side_home("bulk")
BULK_PORT = int(os.environ.get("KGQA_TEST_BULK_PORT", "7699"))
BULK_ENV = {
    "KGQA_HOME": str(BULK_HOME),
    "KGQA_BOLT_PORT": str(BULK_PORT),
    "NEO4J_URI": "",
    "KGQA_HEAP": "768m",
    "KGQA_PAGECACHE": "256m",
}


@pytest.fixture(scope="module")
def bulk_server(neo4j_env: dict[str, str]) -> Iterator[ManagedServer]:
    if "NEO4J_URI" in neo4j_env:  # pragma: no cover - Docker: no managed home to import into
        pytest.skip("the bulk path needs the managed local server")
    saved = {k: os.environ.get(k) for k in ("KGQA_HEAP", "KGQA_PAGECACHE")}
    os.environ.update({k: BULK_ENV[k] for k in saved})
    server = ManagedServer(home=BULK_HOME, port=BULK_PORT)
    try:
        server.start()
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    yield server
    server.stop()


@pytest.fixture()
def bulk_driver(bulk_server: ManagedServer) -> Iterator[Any]:
    """A fresh driver per test: bookmarks of a database that neo4j-admin replaced would never be reached."""
    driver = open_driver(bulk_server.uri, "neo4j", bulk_server.password())
    yield driver
    driver.close()


def _fresh(server: ManagedServer) -> Any:
    return open_driver(server.uri, "neo4j", server.password())


@pytest.fixture(scope="module", autouse=True)
def clean(driver: Any) -> Iterator[None]:
    def drop_all() -> None:
        query = "MATCH (k:KG) WHERE k.name STARTS WITH 't_bulk_' RETURN k.name AS n"
        for row in driver.execute_query(query).records:
            drop_kg(driver, row["n"])

    drop_all()
    yield
    drop_all()


def _same_graph(online: dict[str, Any], bulk: dict[str, Any]) -> None:
    assert sorted(online["triples"]) == sorted(bulk["triples"])
    assert {i: n for i, (n, _) in online["entities"].items()} == {
        i: n for i, (n, _) in bulk["entities"].items()
    }
    for entity, (_, vector) in online["entities"].items():
        assert np.allclose(vector, bulk["entities"][entity][1], atol=1e-5), entity
    assert {n: (c, t) for n, (c, t, _) in online["relations"].items()} == {
        n: (c, t) for n, (c, t, _) in bulk["relations"].items()
    }
    for name, (_, _, vector) in online["relations"].items():
        assert np.allclose(vector, bulk["relations"][name][2], atol=1e-5), name
    for key in (
        "entities",
        "relationships",
        "relations",
        "skipped",
        "status",
        "source",
        "format",
        "embedding_model",
    ):
        assert online["kg"][key] == bulk["kg"][key], key


def _load(*args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    result = run_kgqa("load", *args, "--json", env=env, timeout=1800)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout)


@pytest.mark.parametrize(
    "source,path,kg",
    [
        ("dbpedia", DBPEDIA, "t_bulk_dbp"),
        ("freebase", FREEBASE, "t_bulk_fb"),
        ("metaqa", METAQA, "t_bulk_mq"),
    ],
)
def test_bulk_and_online_give_the_same_graph(
    source: str, path: Path, kg: str, driver: Any, bulk_driver: Any, bulk_server: ManagedServer
) -> None:
    for row in bulk_driver.execute_query("MATCH (k:KG) RETURN k.name AS n").records:  # a private database
        drop_kg(bulk_driver, row["n"])
    online = _load(source, "--path", str(path), "--kg", kg)
    bulk = _load(source, "--path", str(path), "--kg", kg, "--bulk", "--force", env=BULK_ENV)
    assert bulk["mode"] == "bulk" and online["mode"] == "online"
    for key in ("entities", "relationships", "relations", "skipped", "embedded_entities"):
        assert online[key] == bulk[key], key
    assert bulk["embedded_entities"] == bulk["entities"]  # every one imported with its vector
    with _fresh(bulk_server) as after:  # the old driver's bookmarks belong to the replaced database
        _same_graph(graph_of(driver, kg), graph_of(after, kg))
        shown = after.execute_query("SHOW INDEXES YIELD name, state").records
    states = {r["name"]: r["state"] for r in shown}
    names = (
        "entity_embedding",
        "relation_embedding",
        "entity_name",
        "entity_kg_name",
        "entity_key",
        "relation_key",
        "kg_name",
    )
    assert all(states[n] == "ONLINE" for n in names), states


def test_bulk_refuses_a_database_that_holds_another_kg(bulk_server: ManagedServer, bulk_driver: Any) -> None:
    held = [r["n"] for r in bulk_driver.execute_query("MATCH (k:KG) RETURN k.name AS n").records]
    assert held, "the previous test leaves one KG in the bulk database"
    result = run_kgqa("load", "metaqa", "--path", str(METAQA), "--kg", "t_bulk_other", "--bulk", env=BULK_ENV)
    assert result.returncode != 0
    assert f"holds {held[0]}" in result.stderr and "load without --bulk" in result.stderr
    assert [r["n"] for r in bulk_driver.execute_query("MATCH (k:KG) RETURN k.name AS n").records] == held
    again = _load(
        "metaqa" if held[0] == "t_bulk_mq" else "freebase",
        "--path",
        str(METAQA if held[0] == "t_bulk_mq" else FREEBASE),
        "--kg",
        held[0],
        "--bulk",
        env=BULK_ENV,
    )
    assert again["already_loaded"]


def test_bulk_needs_the_managed_server() -> None:
    result = run_kgqa(
        "load",
        "metaqa",
        "--path",
        str(METAQA),
        "--bulk",
        env={"NEO4J_URI": "bolt://127.0.0.1:1", "NEO4J_PASSWORD": "x"},
    )
    assert (
        result.returncode != 0
        and "--bulk imports with neo4j-admin into the managed local server" in result.stderr
    )


# A bulk load killed while neo4j-admin has the database offline: the process dies inside
# ManagedServer.offline_import without running any clean-up (os._exit is what SIGKILL leaves behind).
KILLED_DURING_IMPORT = """
import os, sys
from pathlib import Path
from kgqa.graph.server import ManagedServer
server = ManagedServer(home=Path(sys.argv[1]), port=int(sys.argv[2]))
with server.offline_import(sys.argv[3]) as imported:
    store = server.neo4j_home / "data" / "databases" / "neo4j"
    if sys.argv[4] == "imported":  # neo4j-admin finished: a whole store (here the earlier one, copied)
        import shutil
        data = server.neo4j_home / "data"
        shutil.copytree(server.aside_dir / "databases", store)
        shutil.copytree(server.aside_dir / "transactions", data / "transactions" / "neo4j")
        imported()
    else:  # neo4j-admin was half-way: a partial store
        store.mkdir(parents=True)
        (store / "neostore").write_bytes(b"half an import")
    os._exit(9)
"""


def _kgs(server: ManagedServer) -> dict[str, int]:
    with _fresh(server) as fresh:
        rows = fresh.execute_query("MATCH (k:KG) RETURN k.name AS n, k.entities AS e").records
        return {r["n"]: r["e"] for r in rows}


@pytest.mark.parametrize("phase", ["importing", "imported"])
def test_a_killed_bulk_import_is_recovered_by_the_next_start(bulk_server: ManagedServer, phase: str) -> None:
    before = _kgs(bulk_server)
    assert before, "the earlier tests leave one KG in the bulk database"
    kg = next(iter(before))
    killed = subprocess.run(
        [sys.executable, "-c", KILLED_DURING_IMPORT, str(BULK_HOME), str(BULK_PORT), kg, phase],
        env={**os.environ, **BULK_ENV},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert killed.returncode == 9, killed.stderr[-2000:]
    assert bulk_server.pid() is None and bulk_server.import_marker.exists()

    started = run_kgqa("server", "start", env=BULK_ENV, timeout=300)
    assert started.returncode == 0, started.stderr[-2000:]
    said = "the imported graph is kept" if phase == "imported" else "the database is back as it was"
    assert f"a bulk load of KG '{kg}'" in started.stderr and said in started.stderr
    assert not bulk_server.import_marker.exists() and not bulk_server.aside_dir.exists()
    assert _kgs(bulk_server) == before


def test_a_failed_bulk_import_puts_the_database_back(bulk_server: ManagedServer) -> None:
    before = _kgs(bulk_server)
    with pytest.raises(RuntimeError, match="neo4j-admin failed"), bulk_server.offline_import("t_bulk_x"):
        store = bulk_server.neo4j_home / "data" / "databases" / "neo4j"
        store.mkdir(parents=True)
        (store / "neostore").write_bytes(b"half an import")
        raise RuntimeError("neo4j-admin failed")
    assert bulk_server.pid() is not None and not bulk_server.import_marker.exists()
    assert _kgs(bulk_server) == before


def test_start_refuses_while_a_bulk_import_runs(bulk_server: ManagedServer) -> None:
    # A live kgqa process owns the marker: `server start` must not touch the database under it.
    owner = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "kgqa"])
    try:
        bulk_server.import_marker.write_text(
            json.dumps({"kg": "t_bulk_x", "pid": owner.pid, "phase": "importing"})
        )
        bulk_server.stop()
        started = run_kgqa("server", "start", env=BULK_ENV, timeout=120)
        assert started.returncode != 0
        line = started.stderr.strip().splitlines()[-1]
        assert f"a bulk import of KG 't_bulk_x' (pid {owner.pid}) has the database offline" in line
    finally:
        owner.kill()
        owner.wait()
        bulk_server.import_marker.unlink(missing_ok=True)
    assert run_kgqa("server", "start", env=BULK_ENV, timeout=300).returncode == 0
