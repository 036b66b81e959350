"""SimGRAG on the real MetaQA KG through the question-answering layer: the offline pattern builder, the match
procedure straight from Cypher, two-entity questions and free text with typos."""

from __future__ import annotations

from pathlib import Path

import pytest
from kgqa.evaluation.metaqa import read_questions
from kgqa.graph.cypher import render
from kgqa.qa.answering import QuestionAnswerer
from kgqa.retrieve.simgrag import SimGragTrace
from neo4j import Driver


@pytest.fixture(scope="module")
def answerer(driver: Driver, metaqa_kg: str) -> QuestionAnswerer:
    return QuestionAnswerer(driver, "simgrag", metaqa_kg)


def trace(result_trace: object) -> SimGragTrace:
    assert isinstance(result_trace, SimGragTrace)
    return result_trace


@pytest.mark.slow
@pytest.mark.parametrize(("hop", "line"), [(1, 0), (1, 1), (2, 0), (2, 1), (3, 0), (3, 1)])
def test_dev_questions(answerer: QuestionAnswerer, shared_data: Path, hop: int, line: int) -> None:
    q = read_questions("dev", hop, root=shared_data / "metaqa")[line]
    evidence = answerer.ask(q.question).evidence
    assert len(trace(evidence.trace).pattern) == hop, trace(evidence.trace).pattern
    assert evidence.answer_candidates and evidence.answer_candidates[0] in q.answers


def test_two_entity_questions(answerer: QuestionAnswerer) -> None:
    both = answerer.ask("who starred in both Heat and Ronin")
    assert "Robert De Niro" in both.answers
    made_with = answerer.ask("wich films did tom hanks make with director ron howard")
    assert set(made_with.answers) >= {"Apollo 13", "Splash"}
    assert "Cast Away" not in made_with.answers  # Tom Hanks, but not Ron Howard


def test_free_text_with_a_typo(answerer: QuestionAnswerer) -> None:
    result = answerer.ask("the films that share directors with Choper")
    assert trace(result.evidence.trace).pattern[0][0] == "Chopper"
    assert "Andrew Dominik" in {t for triplet in result.evidence.triplets for t in triplet}


def test_match_from_cypher_with_a_hand_written_pattern(driver: Driver, metaqa_kg: str) -> None:
    records = driver.execute_query(
        render("simgrag/match"),
        {"pattern": [["Kismet", "directed by", "UNKNOWN director"]], "config": {"kg": metaqa_kg, "k": 1}},
    ).records
    assert records[0]["bindings"]["UNKNOWN director"] == "William Dieterle"
    assert records[0]["triplets"] == [["Kismet", "directed_by", "William Dieterle"]]


def test_unknown_entity_gives_empty_evidence(answerer: QuestionAnswerer) -> None:
    result = answerer.ask("who directed Xqzvbn Plorkwisty")
    assert result.evidence.is_empty and result.answers == []


def test_an_entity_named_like_a_variable_stays_an_entity(answerer: QuestionAnswerer) -> None:
    # the film "Unknown" must not become an UNKNOWN pattern node
    result = answerer.ask("who stars in [Unknown]")
    assert "Liam Neeson" in result.answers


def test_a_pattern_one_hop_short_of_the_asked_kind_goes_on(answerer: QuestionAnswerer) -> None:
    # "movies" asked, the relation words stop at the directors: back over directed_by to what they made
    result = answerer.ask("which movies were made by the directors that Fernandel worked with")
    pattern = trace(result.evidence.trace).pattern
    assert len(pattern) == 3 and pattern[-1][1] == "directed by", pattern
    assert "Julien Duvivier" not in result.answers and "Pépé le Moko" in result.answers
    # "actors" asked, the words stop at the films: one starred_actors hop on
    actors = answerer.ask("which actors were in the films directed by William Dieterle")
    assert "Ronald Colman" in actors.answers  # Kismet (1944)
