"""SimGRAG with an LLM as the pattern source: reply parsing, pinning, the retry-once rule (with a stand-in for
the remote API), the match on the real MetaQA KG, and the schema-constrained reply of the real local
server."""

from __future__ import annotations

import json
from typing import Any

import pytest
from kgqa.answer.llm import Completion, LLMAnswerer, LLMConfig
from kgqa.core.errors import KgqaError
from kgqa.core.types import LinkedEntity
from kgqa.qa.answering import QuestionAnswerer
from kgqa.qa.simgrag_llm import SCHEMA, LlmSimGragRetriever, messages_for, parse_pattern, pin_entities
from neo4j import Driver

from tests.test_llm_server import served  # noqa: F401  (the real local server, started once per module)


def test_parse_pattern_reads_edges_and_the_asked_node() -> None:
    text = json.dumps(
        {
            "divided": [],
            "graph": [["Kismet", "directed by", "UNKNOWN director 1"]],
            "answer": "UNKNOWN director 1",
        }
    )
    assert parse_pattern(text) == ([["Kismet", "directed by", "UNKNOWN director 1"]], "UNKNOWN director 1")
    # an answer that is not a node falls back to the last UNKNOWN node
    text = json.dumps({"graph": [["Kismet", "directed by", "UNKNOWN d"]], "answer": "the director"})
    assert parse_pattern(text)[1] == "UNKNOWN d"


@pytest.mark.parametrize(
    "reply",
    [
        "not json",
        json.dumps({"graph": []}),
        json.dumps({"graph": [["a", "b"]]}),
        json.dumps({"graph": [["a", "r", "b"]]}),
    ],
)
def test_parse_pattern_rejects_bad_replies(reply: str) -> None:
    with pytest.raises(ValueError):
        parse_pattern(reply)


def test_known_nodes_that_name_a_linked_entity_are_pinned() -> None:
    topics = [LinkedEntity("Kismet", "Kismet", 1.0, "exact", "kismet")]
    pins = pin_entities([["KISMET", "directed by", "UNKNOWN d"], ["Somewhere", "r", "UNKNOWN d"]], topics)
    assert pins == {"KISMET": ["Kismet"]}


class Replies:
    """Stands in for the remote LLM API: hands out prepared replies, one per call."""

    def __init__(self, *texts: str) -> None:
        self.texts = list(texts)
        self.calls = 0

    def __call__(self, messages: list[dict[str, str]]) -> Completion:
        self.calls += 1
        return Completion(self.texts.pop(0), 1, 1.0, {})


def retriever(driver: Driver, replies: Replies, monkeypatch: pytest.MonkeyPatch) -> LlmSimGragRetriever:
    r = LlmSimGragRetriever(driver, config=LLMConfig(model="stand-in", base_url="http://127.0.0.1:9/v1"))
    monkeypatch.setattr(r.llm, "complete", replies)
    return r


def test_a_pattern_from_the_llm_is_matched_in_the_kg(
    driver: Driver, metaqa_kg: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    reply = {
        "divided": ["Kismet was directed by someone", "that director directed films"],
        "graph": [
            ["Kismet", "directed by", "UNKNOWN director 1"],
            ["UNKNOWN film 1", "directed by", "UNKNOWN director 1"],
        ],
        "answer": "UNKNOWN film 1",
    }
    replies = Replies("{broken", json.dumps(reply))  # invalid once, then valid: retried once
    qa = QuestionAnswerer(driver, kg=metaqa_kg, retriever=retriever(driver, replies, monkeypatch))
    result = qa.ask("which films share a director with [Kismet]")
    assert replies.calls == 2
    assert "Portrait of Jennie" in result.answers and "Kismet" not in result.answers
    assert result.evidence.trace is not None and result.evidence.trace.pattern_source == "llm:stand-in"


def test_two_bad_replies_are_one_line_error(
    driver: Driver, metaqa_kg: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    replies = Replies("nope", json.dumps({"graph": "x"}))
    r = retriever(driver, replies, monkeypatch)
    with pytest.raises(KgqaError) as error:
        r.retrieve("who directed [Kismet]", metaqa_kg, 100, [])
    assert "\n" not in str(error.value) and "who directed [Kismet]" in str(error.value)


@pytest.mark.llm
def test_the_local_server_returns_schema_valid_json(served: dict[str, object]) -> None:  # noqa: F811
    status = served["status"]
    assert isinstance(status, dict)
    config = LLMConfig(
        model="smollm2",
        base_url=str(status["url"]),
        timeout_s=600,
        max_retries=0,
        max_tokens=300,
        temperature=0.2,
        extra={"response_format": {"type": "json_object", "schema": SCHEMA}},
    )
    text = LLMAnswerer(config).complete(messages_for("who directed [Kismet]")).text  # type: ignore[arg-type]
    data: Any = json.loads(text)  # the server enforced the schema while decoding
    assert isinstance(data["graph"], list) and data["graph"]
    assert all(isinstance(edge, list) and len(edge) == 3 for edge in data["graph"])
    assert isinstance(data["answer"], str)
