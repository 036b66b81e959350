"""GSR: the exported chain generator agrees with torch, beam search, chains walked on the real MetaQA KG."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from kgqa.core.errors import ModelMissing
from kgqa.core.metaqa import read_questions
from kgqa.models.gsr import ChainModel, masked
from kgqa.qa.answering import QuestionAnswerer
from kgqa.retrieve.gsr import GsrRetriever, GsrTrace
from kgqa.training import gsr
from kgqa.training.gsr_data import Example
from neo4j import Driver

RELATIONS = ["directed_by", "written_by", "starred_actors"]


def test_masking() -> None:
    assert masked("who directed [Kismet]") == "who directed [MASK]"
    assert masked("Who directed Kismet?", ["kismet"]) == "who directed [MASK]?"


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
