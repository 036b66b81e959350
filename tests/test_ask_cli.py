"""`kgqa ask` end to end, as a user runs it: free text with a typo, and hostile text for every method."""

from __future__ import annotations

import json

import pytest
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
def metaqa(driver: Driver, metaqa_kg: str, question_classifiers: object, subgraphrag_model: str) -> Driver:
    """MetaQA with every model the methods need, so that each method answers (none is skipped)."""
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
    # each answer with its score and the walk from the topic it was read off
    details = result["answer_details"]
    assert [d["answer"] for d in details] == result["answers"]
    assert [d["score"] for d in details] == result["answer_scores"]
    assert {d["chain"] for d in details} == {"starred_actors<|directed_by>"}
    assert all(d["path"][0][2] == "Lee Pace" and d["path"][-1][2] == d["answer"] for d in details)


@pytest.mark.parametrize("method", ["sgrag", "frag", "cosine", "subgraphrag"])
def test_injection_text_returns_normally_and_changes_nothing(metaqa: Driver, method: str) -> None:
    before = _counts(metaqa)
    for question in INJECTIONS:
        proc = run_kgqa("ask", question, "--kg", KG, "--method", method, "--json")
        assert proc.returncode == 0, f"{method} on {question!r}: {proc.stderr}"
        result = json.loads(proc.stdout)
        assert result["question"] == question
        assert "Kismet" in result["topic_entities"], (method, question, result["topic_entities"])
        # the chain methods still find the film's director through the code-like noise
        if method in ("frag", "sgrag"):
            assert "William Dieterle" in result["answers"], (method, question, result["answers"])
    assert _counts(metaqa) == before


def test_cosine_baseline_walks_the_predicted_hops(metaqa: Driver) -> None:
    """The baseline shares SubgraphRAG's radius and answerer, so a 2-hop question gets 2-hop answers."""
    from kgqa.qa.answering import QuestionAnswerer
    from kgqa.retrieve.cosine_baseline import CosineRetriever
    from kgqa.retrieve.subgraphrag import SubgraphRagTrace

    question = "who directed the films that [Lee Pace] starred in"
    # the classifier says 2 hops with a margin below SURE_HOP_MARGIN: its count stands only when asked to
    trusting = CosineRetriever(metaqa, sure_hop_margin=None)
    result = QuestionAnswerer(metaqa, kg=KG, retriever=trusting).ask(question)
    assert isinstance(result.evidence.trace, SubgraphRagTrace) and result.evidence.trace.hops_predicted == 2
    assert result.evidence.hops == 2 and result.answer.explanation["hops"] == 2
    assert set(result.answers) & {"Neil LaBute", "Max Winkler", "Tarsem Singh"}
    assert "Lee Pace" not in result.answers
    fixed = QuestionAnswerer(metaqa, kg=KG, retriever=CosineRetriever(metaqa, hops=2)).ask(question).evidence
    assert isinstance(fixed.trace, SubgraphRagTrace) and fixed.trace.hops_predicted is None
    assert fixed.hops is None and fixed.answer_candidates
    unsure = QuestionAnswerer(metaqa, kg=KG, retriever=CosineRetriever(metaqa)).ask(question).evidence
    assert isinstance(unsure.trace, SubgraphRagTrace) and unsure.trace.hops_predicted is None
    assert unsure.trace.hop_source == "model radius (the hop classifier is unsure)"


def test_a_question_of_over_a_thousand_words_is_answered(metaqa: Driver) -> None:
    """Lucene refuses queries of more than 1,024 clauses: the linker bounds its full-text query. Past the
    procedures' text limit (4,000 characters) a question is one line naming the limit."""
    import string

    alphabet = string.ascii_lowercase + string.digits
    filler = " ".join([f"{a}{b}" for a in alphabet for b in alphabet][:1100])
    assert len(filler.split()) >= 1100
    proc = run_kgqa("ask", f"who directed {filler} Kismet", "--kg", KG, "--method", "frag", "--json")
    assert proc.returncode == 0, proc.stderr
    assert "Kismet" in json.loads(proc.stdout)["topic_entities"]
    too_long = run_kgqa("ask", "who directed Kismet " + "word " * 1000, "--kg", KG, "--method", "frag")
    assert too_long.returncode == 1
    assert too_long.stderr.strip().count("\n") == 0 and "at most 4000 characters" in too_long.stderr
