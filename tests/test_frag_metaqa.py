"""FRAG on the real MetaQA KG: a few dev questions per hop, free text with a typo, projection cleanup."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from kgqa.answer.extractive import answer_extractive
from kgqa.retrieve import frag
from kgqa.retrieve.frag import FragRetriever
from neo4j import Driver

KG = "metaqa"


@pytest.fixture(scope="module")
def metaqa(driver: Driver) -> Driver:
    records, _, _ = driver.execute_query("MATCH (k:KG {name: $kg}) RETURN k.status AS status", kg=KG)
    if not records or records[0]["status"] != "complete":
        pytest.skip(
            "the MetaQA KG is not loaded in the test server (kgqa load metaqa --path ../shared/data/metaqa)"
        )
    return driver


@pytest.fixture(scope="module")
def retriever(metaqa: Driver) -> FragRetriever:
    return FragRetriever(metaqa)


def _dev(shared_data: Path, hop: int, line: int) -> tuple[str, set[str]]:
    path = shared_data / "metaqa" / f"{hop}-hop" / "vanilla" / "qa_dev.txt"
    question, answers = path.read_text(encoding="utf-8").splitlines()[line].split("\t")
    return question, set(answers.split("|"))


@pytest.mark.slow
@pytest.mark.parametrize(("hop", "line"), [(1, 0), (1, 1), (2, 0), (2, 1), (3, 0), (3, 1)])
def test_dev_questions(retriever: FragRetriever, shared_data: Path, hop: int, line: int) -> None:
    question, gold = _dev(shared_data, hop, line)
    evidence = retriever.retrieve(question, KG)
    assert evidence.metadata["hop_range"] in ("simple", "complex")
    assert evidence.paths and len(evidence.paths) <= 32
    assert gold & set(evidence.entities()), f"no gold answer in the evidence of {question!r}"
    if hop < 3:  # the 1- and 2-hop dev lines above are answered by the best path
        assert evidence.metadata["answer_candidates"][0] in gold


def test_free_text_with_a_typo(retriever: FragRetriever) -> None:
    evidence = retriever.retrieve("who directed Choper", KG)
    assert [e.name for e in evidence.topic_entities][:1] == ["Chopper"]
    answer = answer_extractive(evidence)
    assert answer.top == "Andrew Dominik"


def test_unknown_entity_gives_empty_evidence(retriever: FragRetriever) -> None:
    evidence = retriever.retrieve("who directed Xqzvbn Plorkwisty", KG)
    assert evidence.is_empty and evidence.metadata["reason"] == "no topic entity"


def test_big_neighbourhood_is_pruned_and_dropped(metaqa: Driver, monkeypatch: pytest.MonkeyPatch) -> None:
    name = f"kgqa_frag_test_{uuid.uuid4().hex}"
    monkeypatch.setattr(frag, "projection_name", lambda: name)
    retriever = FragRetriever(metaqa, hop_range="complex")
    question = "who acted in the movies directed by the director of [Some Mother's Son]"
    evidence = retriever.retrieve(question, KG)
    assert evidence.metadata["ppr_pruned"] is True
    assert evidence.metadata["kept_nodes"] == 2000
    assert evidence.metadata["neighbourhood_nodes"] > 2000
    records, _, _ = metaqa.execute_query(
        "CALL gds.graph.list() YIELD graphName WHERE graphName = $name RETURN count(*) AS n", name=name
    )
    assert records[0]["n"] == 0
