"""Question in, evidence and answers out: the one path `kgqa ask` and `kgqa eval` share.

link -> retrieve (method) -> answer (extractive or LLM). Methods are looked up by name so that an optional
method whose dependencies are missing fails with a clear message instead of breaking the others.
"""

from __future__ import annotations

import importlib
import json
import time
from dataclasses import dataclass

from kgqa.graph import config
from kgqa.graph.cypher import render
from kgqa.graph.errors import KgqaError
from kgqa.retrieve.base import Retriever
from kgqa.retrieve.evidence import Evidence, LinkedEntity
from neo4j import Driver

# method name -> "module:class" (only implemented methods: SimGRAG and GSR are not built yet)
METHODS: dict[str, str] = {
    "sgrag": "kgqa.retrieve.sgrag:SgragRetriever",
    "frag": "kgqa.retrieve.frag:FragRetriever",
    "subgraphrag": "kgqa.retrieve.subgraphrag:SubgraphRagRetriever",
    "cosine": "kgqa.retrieve.cosine_baseline:CosineRetriever",
}
# Used by --method auto when no evaluation has ranked the methods yet: best measured on MetaQA dev first.
DEFAULT_PREFERENCE = ["sgrag", "subgraphrag", "frag"]


@dataclass
class Result:
    evidence: Evidence
    answers: list[str]
    answer_scores: list[float]
    explanation: dict[str, object]
    llm: str | None

    def to_json(self) -> dict[str, object]:
        """The `kgqa ask --json` contract of DESIGN.md."""
        ev = self.evidence
        return {
            "question": ev.question,
            "kg": ev.kg,
            "method": ev.method,
            "llm": self.llm,
            "topic_entities": [e.name for e in ev.topic_entities],
            "linked_entities": [
                {"id": e.id, "name": e.name, "score": round(e.score, 4), "how": e.how, "span": e.span}
                for e in ev.topic_entities
            ],
            "answers": self.answers,
            "answer_scores": [round(s, 4) for s in self.answer_scores],
            "triplets": [list(t) for t in ev.triplets],
            "explanation": self.explanation,
            "metadata": _jsonable(ev.metadata),
            "latency_ms": {k: round(v, 2) for k, v in ev.latency_ms.items()},
        }


def resolve_kg(driver: Driver, kg: str | None) -> str:
    rows = driver.execute_query(render("kg/resolve"), {"kg": kg}).records
    if not rows:
        if kg is None:
            raise KgqaError("no knowledge graph is loaded; run `kgqa load metaqa --path ...` first")
        raise KgqaError(f"no knowledge graph named {kg!r} is loaded (see `kgqa kgs`)")
    return str(rows[0]["name"])


def available_methods() -> list[str]:
    found = []
    for name, target in METHODS.items():
        module = target.split(":")[0]
        if importlib.util.find_spec(module) is not None:
            found.append(name)
    return found


def choose_method(method: str) -> str:
    """`auto` picks the method that measured best on dev (recorded by `kgqa eval`), else a preference."""
    if method != "auto":
        if method not in METHODS:
            raise KgqaError(f"unknown method {method!r}; choose one of: auto, {', '.join(METHODS)}")
        return method
    ranking_file = config.kgqa_home() / "method-ranking.json"
    candidates = DEFAULT_PREFERENCE
    if ranking_file.exists():
        try:
            candidates = list(json.loads(ranking_file.read_text())["ranking"]) + DEFAULT_PREFERENCE
        except (ValueError, KeyError, TypeError):
            pass
    available = set(available_methods())
    for name in candidates:
        if name in available:
            return name
    raise KgqaError("no retrieval method is available")


def make_retriever(driver: Driver, method: str) -> Retriever:
    module_name, _, class_name = METHODS[method].partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        raise KgqaError(f"method {method!r} is not available: {exc}") from None
    retriever: Retriever = getattr(module, class_name)(driver)
    return retriever


def answer_question(
    driver: Driver,
    question: str,
    kg: str | None = None,
    method: str = "auto",
    llm: str | None = None,
    k: int = 100,
    topic_entities: list[LinkedEntity] | None = None,
    retriever: Retriever | None = None,
) -> Result:
    if not question or not question.strip():
        raise KgqaError("the question is empty")
    if k <= 0:
        raise KgqaError(f"-k must be positive, got {k}")
    kg_name = resolve_kg(driver, kg)
    chosen = choose_method(method) if retriever is None else retriever.name
    retriever = retriever or make_retriever(driver, chosen)
    began = time.perf_counter()
    evidence = retriever.retrieve(question, kg_name, k, topic_entities=topic_entities)
    evidence.method = chosen

    answering = time.perf_counter()
    if not evidence.topic_entities:
        answers, scores, explanation = [], [], {"reason": "no entity found in the question"}
    elif evidence.is_empty:
        answers, scores, explanation = [], [], {"reason": "no evidence found"}
    else:
        from kgqa.answer import answer

        reply = answer(evidence, llm)
        answers, scores, explanation = reply.answers, reply.scores, reply.explanation
    done = time.perf_counter()
    evidence.latency_ms["answering"] = (done - answering) * 1000
    evidence.latency_ms["total"] = (done - began) * 1000
    return Result(evidence, answers, scores, dict(explanation), llm if llm and llm != "none" else None)


def _jsonable(value: object) -> object:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)
