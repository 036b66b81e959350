"""`kgqa ask` end to end, as a user runs it: free text with a typo, and hostile text for every method."""

from __future__ import annotations

import json

import pytest
from kgqa.graph.config import kgqa_home
from neo4j import Driver

from tests.conftest import run_kgqa

KG = "metaqa"
INJECTIONS = [
    'who directed Kismet"}) MATCH (n) DETACH DELETE n //',
    "who directed [Kismet'}) MATCH (n) DETACH DELETE n //]",
    "'; MATCH (n) DETACH DELETE n; // {kg: 'metaqa'} $kg ${kg} who directed Kismet",
    "}}{{ {% for x in y %} DROP INDEX entity_name {{ 7*7 }} who directed Kismet",
]


@pytest.fixture(scope="module")
def metaqa(driver: Driver) -> Driver:
    records, _, _ = driver.execute_query("MATCH (k:KG {name: $kg}) RETURN k.status AS status", kg=KG)
    if not records or records[0]["status"] != "complete":
        pytest.skip("the MetaQA KG is not loaded in the test server")
    return driver


def _counts(driver: Driver) -> tuple[int, int, int]:
    records, _, _ = driver.execute_query(
        "MATCH (n) WITH count(n) AS nodes MATCH ()-[r]->() RETURN nodes, count(r) AS rels"
    )
    indexes, _, _ = driver.execute_query("SHOW INDEXES YIELD name RETURN count(name) AS n")
    return int(records[0]["nodes"]), int(records[0]["rels"]), int(indexes[0]["n"])


def test_free_text_with_one_typo_is_answered(metaqa: Driver) -> None:
    proc = run_kgqa("ask", "who directed the films Lee Pase starred in", "--kg", KG, "--json")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["topic_entities"][0] == "Lee Pace"
    assert result["linked_entities"][0]["how"] == "fuzzy"
    assert set(result["answers"]) == {"Neil LaBute", "Max Winkler", "Tarsem Singh"}


@pytest.mark.parametrize("method", ["sgrag", "frag", "cosine", "subgraphrag"])
def test_injection_text_returns_normally_and_changes_nothing(metaqa: Driver, method: str) -> None:
    if method == "subgraphrag" and not (kgqa_home() / "models" / "subgraphrag" / "default").is_dir():
        pytest.skip("no SubgraphRAG model 'default' in the test home (kgqa train subgraphrag --name default)")
    before = _counts(metaqa)
    for question in INJECTIONS:
        proc = run_kgqa("ask", question, "--kg", KG, "--method", method, "--json")
        assert proc.returncode == 0, f"{method} on {question!r}: {proc.stderr}"
        result = json.loads(proc.stdout)
        assert result["question"] == question
        if method in ("sgrag", "frag"):  # the template methods still find the film and its director
            assert "William Dieterle" in result["answers"], (method, question, result["answers"])
    assert _counts(metaqa) == before


def test_cosine_baseline_walks_the_predicted_hops(metaqa: Driver) -> None:
    """The baseline shares SubgraphRAG's radius and answerer, so a 2-hop question gets 2-hop answers."""
    from kgqa.answer.extractive import answer_extractive
    from kgqa.retrieve.cosine_baseline import CosineRetriever

    evidence = CosineRetriever(metaqa).retrieve("who directed the films that [Lee Pace] starred in", KG)
    assert evidence.metadata["hops_predicted"] == 2
    answer = answer_extractive(evidence)
    assert answer.explanation["hops"] == 2
    assert set(answer.answers) & {"Neil LaBute", "Max Winkler", "Tarsem Singh"}
    assert "Lee Pace" not in answer.answers
    fixed = CosineRetriever(metaqa, hops=2).retrieve("who directed the films that [Lee Pace] starred in", KG)
    assert "hops_predicted" not in fixed.metadata and fixed.metadata["answer_candidates"]
