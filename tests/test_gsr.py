"""GSR: the exported chain generator agrees with torch, beam search, chains walked on the real MetaQA KG."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from kgqa.core.errors import ModelMissing
from kgqa.core.text import mask_topic
from kgqa.evaluation.metaqa import read_questions
from kgqa.graph.cypher import render
from kgqa.models.gsr import ChainModel, masked
from kgqa.models.kg_models import part_dir
from kgqa.qa.answering import QuestionAnswerer
from kgqa.retrieve.gsr import GsrRetriever, GsrTrace
from kgqa.retrieve.linking import link_entities
from kgqa.training import gsr
from kgqa.training.gsr_data import Example
from kgqa.training.questions import LabelledQuestion
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
        rows * 20,
        rows,
        RELATIONS,
        gsr.GsrConfig(examples=2400, d_model=64, heads=2, lr=3e-3, dropout=0.0),
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
    assert "kgqa train all" in str(error.value) and "\n" not in str(error.value)


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
    reference = ChainModel(part_dir(gsr_model, "gsr"))
    for q in read_questions("dev", hop, root=shared_data / "metaqa")[:4]:
        expected = reference.chains(masked(q.question), beams=10)
        records = driver.execute_query(
            "CALL kgqa.gsr.chains($question, $config) YIELD chain, score, maskedQuestion "
            "RETURN chain, score, maskedQuestion",
            {"question": q.question, "config": {"kg": metaqa_kg}},
        ).records
        assert records[0]["maskedQuestion"] == masked(q.question)
        got = [(tuple((r, d) for r, d in rec["chain"]), rec["score"]) for rec in records]
        assert [steps for steps, _s in got] == [c.steps for c in expected], q.question
        assert np.allclose([s for _c, s in got], [c.score for c in expected], atol=1e-3)


def test_retrieve_in_cypher_streams_the_walked_paths(driver: Driver, metaqa_kg: str, gsr_model: str) -> None:
    records = driver.execute_query(
        render("gsr/retrieve"),
        {"question": "who directed [Kismet]", "config": {"kg": metaqa_kg, "keep": 1}},
    ).records
    assert records and all(r["chain"] == [["directed_by", "out"]] for r in records)
    assert "William Dieterle" in {r["answer"] for r in records}
    assert all(r["triplets"][0][0] == "Kismet" for r in records)


def test_bad_arguments_in_cypher(driver: Driver, metaqa_kg: str, gsr_model: str) -> None:
    from neo4j.exceptions import ClientError

    for config, reason in [
        ({"kg": metaqa_kg, "model": "no-such-model"}, "no GSR model 'no-such-model'"),
        ({"beams": 0}, "config.beams must be between 1 and 100"),
        ({"beams": -5}, "config.beams"),
        ({"kg": "no-such-kg"}, "no knowledge graph named 'no-such-kg'"),
    ]:
        with pytest.raises(ClientError) as error:
            driver.execute_query(
                render("gsr/retrieve"), {"question": "who directed [Kismet]", "config": config}
            )
        assert reason in str(error.value.message) and "\n" not in str(error.value.message)
    # A question in which no topic entity is found is refused, as every retriever refuses it (TopicEntities).
    with pytest.raises(ClientError) as error:
        driver.execute_query(
            render("gsr/retrieve"), {"question": "who directed it", "config": {"kg": metaqa_kg}}
        )
    message = str(error.value.message)
    assert f"no topic entity of KG '{metaqa_kg}' found in 'who directed it'" in message
    assert "\n" not in message


def test_a_missing_model_is_one_line_naming_the_kgs_training(driver: Driver, metaqa_kg: str) -> None:
    topics = link_entities(driver, "who directed [Kismet]", metaqa_kg)
    with pytest.raises(ModelMissing) as error:
        GsrRetriever(driver, model="no-such-model").retrieve("who directed [Kismet]", metaqa_kg, 100, topics)
    assert "kgqa train gsr --kg metaqa --name no-such-model" in str(error.value)


def _q(text: str, span: str, chain: tuple[tuple[str, str], ...]) -> LabelledQuestion:
    return LabelledQuestion(text, (span,), (span,), ("x",), chain, "test")


def test_a_kg_trains_its_generator_from_its_questions(tmp_path: Path) -> None:
    relations = ["directed_by", "starred_actors"]
    directed = (("directed_by", "out"),)
    costars = (("starred_actors", "in"), ("starred_actors", "out"))
    training = [_q(f"who directed {n}", n, directed) for n in ("Heat", "Up", "Big")] + [
        _q(f"who acted with {n}", n, costars) for n in ("Ann Lee", "Bo Park")
    ]
    validation = [_q("who directed Jaws", "Jaws", directed)]
    report = gsr.train_gsr(
        relations, tmp_path / "m", training, validation, gsr.GsrConfig(examples=3000, d_model=32, heads=2)
    )
    # Examples are distinct (masked text, chain) pairs (gsr_data.question_examples): "who directed [MASK]"
    # three times and "who acted with [MASK]" twice are 2, plus one index pseudo-question per relation and
    # way (index_examples). The validation question is counted apart and never trained on.
    assert report.validation == 1 and report.examples == 2 + 2 * len(relations)
    assert (tmp_path / "m" / "vocab.txt").is_file()
    chains = ChainModel(tmp_path / "m").chains("who directed [MASK]", beams=2)
    assert chains[0].steps == directed
    with pytest.raises(ValueError, match="relations the KG does not have"):
        gsr.train_gsr(["directed_by"], tmp_path / "n", training, [], gsr.GsrConfig(examples=1000))


def test_given_chains_score_as_the_beam_search_scored_them(gsr_model: str) -> None:
    model = ChainModel(part_dir(gsr_model, "gsr"))  # the KG's own
    question = masked("which films did [Kismet]'s director direct")
    beams = model.chains(question, beams=5)
    scores = model.score(question, [list(c.steps) for c in beams] + [[("no_such_relation", "out")], []])
    assert scores[:5] == pytest.approx([c.score for c in beams], abs=1e-4)
    assert list(scores[5:]) == [float("-inf"), float("-inf")]
