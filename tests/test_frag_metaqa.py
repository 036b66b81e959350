"""FRAG on the real MetaQA KG through the question-answering layer: a few dev questions per hop, free text
with a typo, projection cleanup."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from kgqa.evaluation.metaqa import read_questions
from kgqa.qa.answering import QuestionAnswerer
from kgqa.retrieve.frag import FragRetriever, FragTrace
from kgqa.retrieve.linking import link_entities
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


def test_big_neighbourhood_is_pruned_like_gds_pagerank(driver: Driver, metaqa_kg: str) -> None:
    from kgqa.graph.cypher import render

    retriever = FragRetriever(driver, hop_range="complex")
    answerer = QuestionAnswerer(driver, kg=metaqa_kg, retriever=retriever)
    question = "who acted in the movies directed by the director of [Some Mother's Son]"
    evidence = answerer.ask(question).evidence
    assert trace(evidence.trace).ppr_pruned is True
    assert trace(evidence.trace).kept_nodes == 2000
    assert trace(evidence.trace).neighbourhood_nodes > 2000
    # The same pruning by GDS itself (gds.pageRank with sourceNodes on a projection of the neighbourhood).
    params = retriever.neighbourhood_params(metaqa_kg, [e.id for e in evidence.topic_entities], 4)
    params["graph"] = f"kgqa_frag_test_{uuid.uuid4().hex}"
    try:
        records, _, _ = driver.execute_query(render("frag/gds_pagerank"), params)
    finally:
        driver.execute_query("CALL gds.graph.drop($graph, false) YIELD graphName RETURN 1", params)
    by_gds = set(records[0]["ids"])
    records, _, _ = driver.execute_query(render("frag/neighbourhood"), params)
    ours = set(records[0]["ids"])
    assert len(ours) == len(by_gds) == 2000
    assert len(ours & by_gds) >= 1990  # ties at the 2000th place may fall either way


def test_paths_are_ranked_by_the_kgs_ranker(driver: Driver, metaqa_models: str) -> None:
    from kgqa.models.frag_ranker import FragRanker, RankerWeights, load_ranker

    question = "who directed the films starred by [Lee Pace]"  # a dev wording: the hop count counts
    own = load_ranker(metaqa_models)
    assert own.kinds and own.hub_degree  # what each step arrives at, and the KG's hub degree, read off it
    evidence = (
        QuestionAnswerer(driver, kg=metaqa_models, retriever=FragRetriever(driver)).ask(question).evidence
    )
    assert trace(evidence.trace).ranker == (own.learned_on or "default weights")
    assert set(evidence.answer_candidates[:3]) == {"Neil LaBute", "Max Winkler", "Tarsem Singh"}
    # the ranker is the KG's: a given one replaces it (an ablation), and its weights decide the order
    flat = FragRanker(RankerWeights(**dict.fromkeys(RankerWeights.__dataclass_fields__, 0.0)), own.kinds)
    evidence = (
        QuestionAnswerer(driver, kg=metaqa_models, retriever=FragRetriever(driver, ranker=flat))
        .ask(question)
        .evidence
    )
    assert trace(evidence.trace).ranker == "default weights"
    assert evidence.path_scores and set(evidence.path_scores) == {0.0}


def test_the_chain_similarity_is_the_path_scorers_when_the_kg_has_one(
    driver: Driver, metaqa_models: str
) -> None:
    import numpy as np
    from kgqa.models import registry
    from kgqa.retrieve.frag import FragConfig
    from kgqa.retrieve.frag_ranking import core_chain

    question = "who directed the films that Lee Pace starred in"
    topics = link_entities(driver, question, metaqa_models)
    assert [t.name for t in topics] == ["Lee Pace"]
    scorer = registry.path_scorer(metaqa_models)
    chains, features = FragRetriever(driver).chain_features(question, metaqa_models, topics)
    frozen_chains, frozen = FragRetriever(driver, FragConfig(path_scorer=False)).chain_features(
        question, metaqa_models, topics
    )
    assert chains and chains == frozen_chains
    similarity = features[:, 0]
    if scorer is None:  # the KG's own questions said its scorer ranks worse: the sentence encoder's cosines
        np.testing.assert_allclose(similarity, frozen[:, 0], rtol=1e-5)
    else:
        spans = [t for e in topics for t in (e.span, e.name) if t]
        expected = scorer.cosines(question, spans, [core_chain(c) for c in chains])
        np.testing.assert_allclose(similarity, expected, rtol=1e-4, atol=1e-5)
        assert not np.allclose(similarity, frozen[:, 0])
    # every other feature is the same either way
    np.testing.assert_allclose(features[:, 1:], frozen[:, 1:], rtol=1e-5)
    answerer = QuestionAnswerer(driver, kg=metaqa_models, retriever=FragRetriever(driver))
    used = trace(answerer.ask(question).evidence.trace).chain_similarity
    assert used == ("sentence encoder" if scorer is None else "path scorer")


def test_the_hop_count_counts_only_when_the_classifier_is_sure(question_classifiers: Path) -> None:
    from kgqa.models import registry
    from kgqa.models.question_classifiers import FAMILIAR_WORDING
    from kgqa.retrieve.frag import classifier_hop_predictor

    classifiers = registry.question_classifiers("metaqa")
    # a dev question's own wording is one the classifier learned: its hop count stands whatever the margin
    learned = classifiers.predict_hops("what movies did [Lee Pace] act in", ["Lee Pace"])
    assert learned.familiar > 0.99 and learned.sure_hops(margin=1e9) == learned.hops == 1
    question, spans = "who directed the films that [Lee Pace] starred in", ["Lee Pace"]
    prediction = classifiers.predict_hops(question, spans)
    assert prediction.hops == 2 and prediction.familiar < FAMILIAR_WORDING  # worded as people word it
    hop_range, hops = classifier_hop_predictor("metaqa")(question, spans)
    assert hop_range == "simple" and hops == prediction.sure_hops()
    # below the margin asked for, the hop range stands and the count is left to the ranker's other features
    margin = prediction.score
    assert classifier_hop_predictor("metaqa", margin + 0.01)(question, spans) == (hop_range, None)
    assert classifier_hop_predictor("metaqa", margin - 0.01)(question, spans) == (hop_range, 2)
    assert classifier_hop_predictor("metaqa", None)(question, spans) == (hop_range, 2)


def test_the_kgs_questions_say_which_steps_a_who_question_ends_with(
    driver: Driver, metaqa_models: str
) -> None:
    """MetaQA has no types: a film and a person are both told by the relations around them, so the encoder
    cannot say which one "who" asks for. The KG's labelled questions can, and the kind feature reads them."""
    from kgqa.models.frag_ranker import load_ranker

    ranker = load_ranker(metaqa_models)
    who = ranker.asked_steps["person"]
    assert who.get("out:directed_by", 0.0) > 0.1 and who.get("in:starred_actors", 0.0) < 0.01
    question = "who directed the films that Lee Pace starred in"
    topics = link_entities(driver, question, metaqa_models)
    chains, features = FragRetriever(driver).chain_features(question, metaqa_models, topics)
    kind = dict(zip(chains, features[:, 3].tolist(), strict=True))
    starred = (("starred_actors", False),)
    assert kind[starred] == pytest.approx(
        who.get("in:starred_actors", 0.0)
    )  # a film is not who was asked for
    assert kind[(("starred_actors", False), ("directed_by", True))] == pytest.approx(who["out:directed_by"])
