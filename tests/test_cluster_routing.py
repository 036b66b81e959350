"""The ``neo4j://`` routing scheme, as on a cluster or Aura, against the local server: the driver fetches a
routing table, kgqa's reads (linking, retrieval procedures, ``kgqa cypher``) go to a reader and
``kgqa cypher --write`` to the writer. A single server answers the routing request with itself in every
role, so this checks that every road kgqa takes works through routing, not the cluster's placement."""

from __future__ import annotations

import json

import pytest
from kgqa.graph.connection import open_driver
from kgqa.graph.server import ManagedServer
from neo4j import Driver, RoutingControl

from tests.conftest import run_kgqa


@pytest.fixture(scope="module")
def routed_env(neo4j_env: dict[str, str]) -> dict[str, str]:
    server = ManagedServer()
    return {
        "NEO4J_URI": server.uri.replace("bolt://", "neo4j://"),
        "NEO4J_USER": "neo4j",
        "NEO4J_PASSWORD": server.password(),
        "KGQA_HOME": neo4j_env["KGQA_HOME"],
    }


def test_the_server_gives_a_routing_table(routed_env: dict[str, str]) -> None:
    with open_driver(routed_env["NEO4J_URI"], "neo4j", routed_env["NEO4J_PASSWORD"]) as routed:
        records, _, _ = routed.execute_query("RETURN kgqa.version() AS v", routing_=RoutingControl.READ)
        assert records[0]["v"] == "0.1.0"
        table = routed.execute_query("CALL dbms.routing.getRoutingTable({}, 'neo4j')").records[0]
    roles = {server["role"] for server in table["servers"]}
    assert roles == {"READ", "WRITE", "ROUTE"}, table


@pytest.mark.parametrize("method", ["sgrag", "frag", "gsr", "simgrag"])
def test_ask_through_routing(
    routed_env: dict[str, str],
    metaqa_kg: str,
    question_classifiers: object,
    gsr_model: str,
    method: str,
) -> None:
    proc = run_kgqa(
        "ask",
        "who directed [Kismet]",
        "--kg",
        metaqa_kg,
        "--method",
        method,
        "--llm",
        "none",
        "--json",
        env=routed_env,
    )
    assert proc.returncode == 0, proc.stderr
    answers = json.loads(proc.stdout)["answers"]
    assert answers and answers[0] == "William Dieterle", answers


def test_cypher_reads_by_default_and_writes_with_write(routed_env: dict[str, str], driver: Driver) -> None:
    read = run_kgqa("cypher", "--format", "json", "RETURN 1 AS one", env=routed_env)
    assert read.returncode == 0 and json.loads(read.stdout) == [{"one": 1}], read.stderr
    create = "CREATE (:KgqaRoutingProbe {at: 1})"
    refused = run_kgqa("cypher", create, env=routed_env)
    assert refused.returncode != 0 and refused.stderr.strip().count("\n") == 0
    written = run_kgqa("cypher", "--write", create, env=routed_env)
    assert written.returncode == 0, written.stderr
    try:
        count = driver.execute_query("MATCH (p:KgqaRoutingProbe) RETURN count(p) AS n").records[0]["n"]
        assert count == 1
    finally:
        driver.execute_query("MATCH (p:KgqaRoutingProbe) DELETE p")
