"""FRAG on the real MetaQA KG through the question-answering layer: a few dev questions per hop, free text
with a typo, projection cleanup."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from kgqa.core.metaqa import read_questions
from kgqa.qa.answering import QuestionAnswerer
from kgqa.retrieve import frag
from kgqa.retrieve.frag import FragRetriever, FragTrace
from neo4j import Driver


@pytest.fixture(scope="module")
def answerer(driver: Driver, metaqa_kg: str, question_classifiers: Path) -> QuestionAnswerer:
    return QuestionAnswerer(driver, "frag", metaqa_kg)


def trace(result_trace: object) -> FragTrace:
    assert isinstance(result_trace, FragTrace)
    return result_trace


@pytest.mark.slow
@pytest.mark.parametrize(("hop", "line"), [(1, 0), (1, 1), (2, 0), (2, 1), (3, 0), (3, 1)])
def test_dev_questions(answerer: QuestionAnswerer, shared_data: Path, hop: int, line: int) -> None:
    q = read_questions("dev", hop, root=shared_data / "metaqa")[line]
    evidence = answerer.ask(q.question).evidence
    assert trace(evidence.trace).hop_range in ("simple", "complex")
    assert evidence.paths and len(evidence.paths) <= 32
    assert set(q.answers) & set(evidence.entities()), f"no gold answer in the evidence of {q.question!r}"
    if hop < 3:  # the 1- and 2-hop dev lines above are answered by the best path
        assert evidence.answer_candidates[0] in q.answers


def test_free_text_with_a_typo(answerer: QuestionAnswerer) -> None:
    result = answerer.ask("who directed Choper")
    assert [e.name for e in result.evidence.topic_entities][:1] == ["Chopper"]
    assert result.answer.top == "Andrew Dominik"


def test_unknown_entity_gives_empty_evidence(answerer: QuestionAnswerer) -> None:
    result = answerer.ask("who directed Xqzvbn Plorkwisty")
    assert result.evidence.is_empty and result.evidence.reason == "no topic entity"
    assert result.answers == [] and result.answer.reason == "no entity found in the question"


def test_big_neighbourhood_is_pruned_and_dropped(
    driver: Driver, metaqa_kg: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = f"kgqa_frag_test_{uuid.uuid4().hex}"
    monkeypatch.setattr(frag, "projection_name", lambda: name)
    answerer = QuestionAnswerer(driver, kg=metaqa_kg, retriever=FragRetriever(driver, hop_range="complex"))
    evidence = answerer.ask(
        "who acted in the movies directed by the director of [Some Mother's Son]"
    ).evidence
    assert trace(evidence.trace).ppr_pruned is True
    assert trace(evidence.trace).kept_nodes == 2000
    assert trace(evidence.trace).neighbourhood_nodes > 2000
    records, _, _ = driver.execute_query(
        "CALL gds.graph.list() YIELD graphName WHERE graphName = $name RETURN count(*) AS n", name=name
    )
    assert records[0]["n"] == 0
