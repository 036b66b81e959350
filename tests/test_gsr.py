"""GSR: the exported chain generator agrees with torch, beam search, chains walked on the real MetaQA KG."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch
from kgqa.core.errors import ModelMissing
from kgqa.core.metaqa import read_questions
from kgqa.core.text import mask_topic
from kgqa.graph.cypher import render
from kgqa.models.gsr import MASK, ChainModel, gsr_models_dir, masked
from kgqa.qa.answering import QuestionAnswerer
from kgqa.retrieve.gsr import GsrRetriever, GsrTrace
from kgqa.retrieve.linking import link_entities
from kgqa.retrieve.sgrag import SgragRetriever, SgragTrace
from kgqa.training import gsr
from kgqa.training.gsr_data import Example
from neo4j import Driver

RELATIONS = ["directed_by", "written_by", "starred_actors"]


def test_masking() -> None:
    assert masked("who directed [Kismet]") == "who directed [MASK]"
    assert masked("Who directed Kismet?", ["kismet"]) == "who directed [MASK]?"
    # the shared rule (same strings as the JUnit QuestionText test)
    assert mask_topic("who  directed [Kismet] ?", ["x"], "it") == "who directed it ?"
    assert mask_topic("films of [A] with [B]", None, "it") == "films of it with it"
    spans = ["nothere", "Kismet"]
    assert mask_topic("who wrote kismet with kismet", spans, "it") == "who wrote it with kismet"
    assert mask_topic("no  span here", ["", "Heat"], "it") == "no span here"
    assert mask_topic("a [x] b", [], "\\1") == "a \\1 b"


def test_onnx_agrees_with_torch_and_beam_search_finds_the_trained_chain(tmp_path: Path) -> None:
    rows = [
        Example("who directed [MASK]", (("directed_by", "out"),), "retrieval"),
        Example("what did [MASK] write", (("written_by", "in"),), "retrieval"),
        Example(
            "who starred in films directed by [MASK]",
            (("directed_by", "in"), ("starred_actors", "out")),
            "retrieval",
        ),
    ]
    model, vocab, _report = gsr.train(
        rows * 20, rows, RELATIONS, gsr.GsrConfig(epochs=40, d_model=64, heads=2, lr=3e-3, dropout=0.0)
    )
    gsr.export(model, vocab, tmp_path, {"kg": "test"})  # raises when ONNX and torch disagree
    onnx = ChainModel(tmp_path)
    wp = gsr.WordPiece()
    for row in rows:
        best = onnx.chains(row.text, beams=3)[0]
        assert best.steps == row.chain
        ids = torch.tensor([wp.ids(row.text)])
        mask = torch.ones_like(ids)
        with torch.no_grad():
            memory = model.encode(ids, mask)
            expected = torch.log_softmax(
                model.decode(memory, mask, torch.tensor([[gsr.BOS]]))[0, -1], -1
            ).numpy()
        got = onnx.decoder.run(
            None,
            {
                "memory": onnx.encoder.run(None, {"ids": ids.numpy(), "mask": mask.numpy()})[0],
                "mask": mask.numpy(),
                "prefix": np.array([[gsr.BOS]], dtype=np.int64),
            },
        )[0][0]
        assert np.allclose(got, expected, atol=1e-4)


def test_a_missing_model_is_a_one_line_error(tmp_path: Path) -> None:
    with pytest.raises(ModelMissing) as error:
        ChainModel(tmp_path / "absent")
    assert "kgqa train gsr" in str(error.value) and "\n" not in str(error.value)


@pytest.fixture(scope="module")
def answerer(driver: Driver, metaqa_kg: str, gsr_model: str) -> QuestionAnswerer:
    return QuestionAnswerer(driver, "gsr", metaqa_kg)


@pytest.mark.parametrize(("hop", "line"), [(1, 0), (2, 0), (3, 0)])
def test_dev_questions(answerer: QuestionAnswerer, shared_data: Path, hop: int, line: int) -> None:
    q = read_questions("dev", hop, root=shared_data / "metaqa")[line]
    result = answerer.ask(q.question)
    trace = result.evidence.trace
    assert isinstance(trace, GsrTrace) and len(trace.executed[0]) == hop
    assert result.answers and result.answers[0] in q.answers


def test_no_entity_gives_empty_evidence_not_an_error(driver: Driver, metaqa_kg: str, gsr_model: str) -> None:
    evidence = GsrRetriever(driver).retrieve("who directed it", metaqa_kg, 100, [])
    assert evidence.is_empty and evidence.reason


@pytest.mark.parametrize("hop", [1, 2, 3])
def test_the_database_generates_the_chains_the_python_reference_does(
    driver: Driver, metaqa_kg: str, gsr_model: str, shared_data: Path, hop: int
) -> None:
    """kgqa.gsr.chains (ONNX Runtime Java, the Java tokenizer and beam search) against kgqa.models.gsr
    (onnxruntime and tokenizers in Python) on the same trained model: same chains, same order, same scores."""
    reference = ChainModel(gsr_models_dir() / gsr_model)
    for q in read_questions("dev", hop, root=shared_data / "metaqa")[:4]:
        expected = reference.chains(masked(q.question), beams=10)
        records = driver.execute_query(
            "CALL kgqa.gsr.chains($question, $config) YIELD chain, score, maskedQuestion "
            "RETURN chain, score, maskedQuestion",
            {"question": q.question, "config": {"kg": metaqa_kg, "model": gsr_model}},
        ).records
        assert records[0]["maskedQuestion"] == masked(q.question)
        got = [(tuple((r, d) for r, d in rec["chain"]), rec["score"]) for rec in records]
        assert [steps for steps, _s in got] == [c.steps for c in expected], q.question
        assert np.allclose([s for _c, s in got], [c.score for c in expected], atol=1e-3)


def test_retrieve_in_cypher_streams_the_walked_paths(driver: Driver, metaqa_kg: str, gsr_model: str) -> None:
    records = driver.execute_query(
        render("gsr/retrieve"),
        {"question": "who directed [Kismet]", "config": {"kg": metaqa_kg, "model": gsr_model, "keep": 1}},
    ).records
    assert records and all(r["chain"] == [["directed_by", "out"]] for r in records)
    assert "William Dieterle" in {r["answer"] for r in records}
    assert all(r["triplets"][0][0] == "Kismet" for r in records)


def test_bad_arguments_in_cypher(driver: Driver, metaqa_kg: str, gsr_model: str) -> None:
    from neo4j.exceptions import ClientError

    for config, reason in [
        ({"model": "no-such-model"}, "no GSR model 'no-such-model'"),
        ({"beams": 0}, "config.beams must be between 1 and 100"),
        ({"beams": -5}, "config.beams"),
        ({"kg": "no-such-kg"}, "no knowledge graph named 'no-such-kg'"),
    ]:
        with pytest.raises(ClientError) as error:
            driver.execute_query(
                render("gsr/retrieve"), {"question": "who directed [Kismet]", "config": config}
            )
        assert reason in str(error.value.message) and "\n" not in str(error.value.message)
    empty = driver.execute_query(
        render("gsr/retrieve"),
        {"question": "who directed it", "config": {"kg": metaqa_kg, "model": gsr_model}},
    ).records
    assert empty == []


def test_a_missing_model_fails_before_the_first_question(driver: Driver) -> None:
    with pytest.raises(ModelMissing) as error:
        GsrRetriever(driver, model="no-such-model")
    assert "kgqa train gsr --name no-such-model" in str(error.value)


def test_sgrag_falls_back_to_a_generated_chain(
    driver: Driver, metaqa_kg: str, gsr_model: str, question_classifiers: object
) -> None:
    question = "who directed [Kismet]"
    topics = link_entities(driver, question, metaqa_kg)
    unsure = SgragRetriever(driver, fallback_below=1e9)  # every score counts as unsure
    evidence = unsure.retrieve(question, metaqa_kg, 100, topics)
    trace = evidence.trace
    assert isinstance(trace, SgragTrace) and trace.fallback_reason.startswith("classifier unsure")
    assert trace.gsr_fallback is not None and trace.gsr_fallback.executed[0] == [("directed_by", "out")]
    assert evidence.answer_candidates[0] == "William Dieterle" and evidence.hops == 1
    assert ("Kismet", "directed_by", "William Dieterle") in evidence.triplets
    alone = SgragRetriever(driver, fallback=False).retrieve(question, metaqa_kg, 100, topics)
    assert isinstance(alone.trace, SgragTrace) and alone.trace.gsr_fallback is None
    assert alone.trace.fallback_reason == "" and alone.answer_candidates[0] == "William Dieterle"


def test_walkable_chains_follow_the_kg_and_ignore_rare_joins() -> None:
    from kgqa.training.gsr_data import path_examples, walkable_chains

    signatures = [
        (["directed_by", "starred_actors"], [], 100),  # films
        ([], ["directed_by"], 20),  # directors
        ([], ["starred_actors"], 50),  # actors
        (["directed_by"], ["starred_actors"], 1),  # a film that shares its name with an actor
    ]
    chains = walkable_chains(signatures, max_hops=2)
    assert (("directed_by", "out"),) in chains and (("directed_by", "in"),) in chains
    # film -> director -> other films, and film -> actor -> films
    assert (("directed_by", "out"), ("directed_by", "in")) in chains
    assert (("starred_actors", "out"), ("starred_actors", "in")) in chains
    # a director never stars: no director -> starred_actors step
    assert (("directed_by", "out"), ("starred_actors", "out")) not in chains
    # 1 actor of 51 is also a film with a director: too rare a join to teach
    assert (("starred_actors", "out"), ("directed_by", "out")) not in chains
    examples = path_examples(chains, {"directed_by": "directed by", "starred_actors": "starred actors"}, 2, 1)
    assert len(examples) == 2 * len(chains) and all(e.task == "path" for e in examples)
    assert all(e.text.count(MASK) == 1 and e.text.replace(MASK, "").islower() for e in examples)


def test_a_kg_without_questions_trains_from_its_own_chains(tmp_path: Path) -> None:
    from kgqa.training.gsr_data import walkable_chains

    relations = {"directed_by": "directed by", "starred_actors": "starred actors"}
    chains = walkable_chains([(["directed_by", "starred_actors"], [], 10), ([], ["directed_by"], 5)], 2)
    cfg = gsr.GsrConfig(epochs=2, d_model=32, heads=2)
    report = gsr.train_gsr(relations, tmp_path / "m", cfg=cfg, path_chains=chains, questions=False)
    assert report.validation > 0 and (tmp_path / "m" / "vocab.txt").is_file()
    assert ChainModel(tmp_path / "m").chains("[MASK] directed by", beams=2)
    # refit (the default): a second run on every wording, the held-out ones included
    assert report.refit_examples == report.examples + report.validation
    once = gsr.train_gsr(
        relations, tmp_path / "once", cfg=replace(cfg, refit=False), path_chains=chains, questions=False
    )
    assert once.refit_examples == 0 and once.examples == report.examples


def test_given_chains_score_as_the_beam_search_scored_them(gsr_model: str) -> None:
    from kgqa.models.registry import gsr_chain_model

    model = gsr_chain_model(gsr_model)
    question = masked("which films did [Kismet]'s director direct")
    beams = model.chains(question, beams=5)
    scores = model.score(question, [list(c.steps) for c in beams] + [[("no_such_relation", "out")], []])
    assert scores[:5] == pytest.approx([c.score for c in beams], abs=1e-4)
    assert list(scores[5:]) == [float("-inf"), float("-inf")]
