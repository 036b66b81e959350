"""SimGRAG with an LLM as the pattern source, as the paper does it: the LLM rewrites the question as a pattern
graph (``{"divided": [...], "graph": [[head, relation, tail], ...], "answer": node}``), few-shot, and the
database matches it (``kgqa.simgrag.match``).

It sits in the question-answering layer because it talks to the LLM endpoint of ``kgqa.answer.llm``; the
retriever below it knows only :class:`~kgqa.retrieve.simgrag.PatternSpec`. The endpoint is the one
``--llm`` uses (``OPENAI_BASE_URL``, else ``kgqa llm serve``); the model is ``KGQA_PATTERN_LLM`` (default
``smollm2``). The JSON schema goes with the request: llama.cpp's server enforces it while decoding, so even a
small local model returns parseable JSON; a remote model's invalid JSON is retried once, then the question
fails with a one-line error.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from kgqa.answer.llm import LLMAnswerer, LLMConfig
from kgqa.core.errors import CannotRunHere
from kgqa.core.text import without_brackets
from kgqa.core.types import LinkedEntity
from kgqa.retrieve.simgrag import PatternSpec, SimGragRetriever
from neo4j import Driver

DEFAULT_MODEL = "smollm2"
TEMPERATURE = 0.2  # the paper's

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "divided": {"type": "array", "items": {"type": "string"}},
        "graph": {
            "type": "array",
            "minItems": 1,
            "maxItems": 6,
            "items": {"type": "array", "items": {"type": "string"}, "minItems": 3, "maxItems": 3},
        },
        "answer": {"type": "string"},
    },
    "required": ["divided", "graph", "answer"],
}

INSTRUCTIONS = (
    "Rewrite the question as a small knowledge graph pattern. Split it into simple statements ('divided'), "
    "then write each statement as an edge [head, relation, tail]. Entities named in the question keep their "
    "exact name. Every unknown thing is a node 'UNKNOWN <type> <n>'. 'answer' is the UNKNOWN node the "
    "question asks for. Reply with JSON only."
)

# Question -> pattern examples, written for this project (not taken from any benchmark's question files),
# about made-up names so that no KG's facts leak into the prompt; kept as data beside this module.
EXAMPLES_FILE = Path(__file__).with_name("simgrag_llm_examples.jsonl")


def examples() -> list[tuple[str, dict[str, Any]]]:
    """The few-shot examples: (question, its pattern as the LLM is asked to write it)."""
    out = []
    for line in EXAMPLES_FILE.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        out.append((record.pop("question"), record))
    return out


def messages_for(question: str) -> list[dict[str, str]]:
    out = [{"role": "system", "content": INSTRUCTIONS}]
    for text, pattern in examples():
        out.append({"role": "user", "content": text})
        out.append({"role": "assistant", "content": json.dumps(pattern)})
    out.append({"role": "user", "content": without_brackets(question)})
    return out


def parse_pattern(text: str) -> tuple[list[list[str]], str]:
    """The edges and the asked-for node of an LLM reply; ValueError naming what is wrong."""
    data = json.loads(text)
    if not isinstance(data, dict) or not isinstance(data.get("graph"), list) or not data["graph"]:
        raise ValueError("no 'graph' list of edges")
    edges: list[list[str]] = []
    for i, edge in enumerate(data["graph"], start=1):
        if not (
            isinstance(edge, list) and len(edge) == 3 and all(isinstance(x, str) and x.strip() for x in edge)
        ):
            raise ValueError(f"edge {i} is not [head, relation, tail]: {edge!r}")
        edges.append([x.strip() for x in edge])
    nodes = [n for e in edges for n in (e[0], e[2])]
    if all(n.upper().startswith("UNKNOWN") or n.startswith("?") for n in nodes):
        raise ValueError("no known entity in the pattern, only UNKNOWN nodes")
    answer = str(data.get("answer") or "").strip()
    if answer not in nodes:
        unknown = [n for n in nodes if n.upper().startswith("UNKNOWN")]
        if not unknown:
            raise ValueError("no UNKNOWN node to answer with")
        answer = unknown[-1]
    return edges, answer


def pin_entities(edges: list[list[str]], topic_entities: list[LinkedEntity]) -> dict[str, list[str]]:
    """Known pattern nodes that name a linked entity are tied to it; the others go to the vector search."""
    by_text: dict[str, list[str]] = {}
    for e in topic_entities:
        for text in (e.name, e.span):
            if text:
                by_text.setdefault(text.casefold(), []).append(e.id)
    pins: dict[str, list[str]] = {}
    for node in {n for edge in edges for n in (edge[0], edge[2])}:
        if node.upper().startswith("UNKNOWN") or node.startswith("?"):
            continue
        ids = by_text.get(node.casefold())
        if ids:
            pins[node] = list(dict.fromkeys(ids))
    return pins


class LlmSimGragRetriever(SimGragRetriever):
    """SimGRAG whose pattern an LLM writes (``--method simgrag-llm``)."""

    name = "simgrag-llm"

    def __init__(self, driver: Driver, directed: bool = False, config: LLMConfig | None = None) -> None:
        super().__init__(driver, directed)
        model = os.environ.get("KGQA_PATTERN_LLM") or DEFAULT_MODEL
        self.llm = LLMAnswerer(
            config
            or LLMConfig.from_env(
                model,
                temperature=TEMPERATURE,
                max_tokens=400,
                extra={"response_format": {"type": "json_object", "schema": SCHEMA}},
            )
        )

    def pattern_for(self, question: str, kg: str, topic_entities: list[LinkedEntity]) -> PatternSpec:
        messages = messages_for(question)
        problem = ""
        for _attempt in range(2):
            text = self.llm.complete(messages).text  # type: ignore[arg-type]
            try:
                edges, answer = parse_pattern(text)
                return PatternSpec(
                    edges, answer, pin_entities(edges, topic_entities), source=f"llm:{self.llm.config.model}"
                )
            except (ValueError, json.JSONDecodeError) as exc:
                problem = str(exc)
        raise CannotRunHere(f"the LLM gave no usable pattern for {question!r} in two tries ({problem})")
