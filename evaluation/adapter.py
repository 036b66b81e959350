"""From a method name to a function ``question -> (Evidence, Answer)``.

Questions go through ``kgqa.retrieve.pipeline.answer_question(driver, question, kg, method, llm, k)``, the
path ``kgqa ask`` takes. With ``USE_PIPELINE = False``, or a method given as ``module:Class`` (any
:class:`~kgqa.retrieve.base.Retriever` subclass, as the tests' fixture retrievers are), this module builds the
retriever itself and answers with :func:`kgqa.answer.answer`.
"""

from __future__ import annotations

import importlib
import inspect
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from kgqa.graph.errors import KgqaError

USE_PIPELINE = True

# method name -> "module" or "module:Class"; a module without a class names the one Retriever it defines.
KNOWN_METHODS: dict[str, str] = {
    "sgrag": "kgqa.retrieve.sgrag:SgragRetriever",
    "frag": "kgqa.retrieve.frag:FragRetriever",
    "subgraphrag": "kgqa.retrieve.subgraphrag:SubgraphRagRetriever",
    "simgrag": "kgqa.retrieve.simgrag",
    "gsr": "kgqa.retrieve.gsr",
    "cosine": "kgqa.retrieve.cosine_baseline",
}
ALIASES = {"cosine_baseline": "cosine", "sg-rag": "sgrag", "subgraph-rag": "subgraphrag"}


@dataclass
class Answered:
    """What one question produced: evidence, answer, and per-stage latency in ms."""

    evidence: Any  # kgqa.retrieve.evidence.Evidence
    answer: Any  # kgqa.answer.base.Answer
    latency_ms: dict[str, float]


AnswerFn = Callable[[str, list[Any] | None], Answered]


class MethodUnavailable(KgqaError):
    """The method's module is not importable (not written yet, or a dependency is missing)."""

    def __init__(self, method: str, module: str, reason: str) -> None:
        super().__init__(f"method {method!r} is not available: cannot import {module} ({reason})")
        self.method, self.module, self.reason = method, module, reason


def canonical(method: str) -> str:
    key = method.strip().lower()
    return ALIASES.get(key, key) if ":" not in method else method


def known_methods() -> dict[str, str]:
    """The pipeline's method registry when it exists, else this module's."""
    pipeline = _pipeline()
    registry = getattr(pipeline, "METHODS", None) if pipeline is not None else None
    return dict(registry) if isinstance(registry, dict) and registry else dict(KNOWN_METHODS)


def _spec(method: str) -> str:
    name = canonical(method)
    if ":" in name:
        return name
    methods = known_methods()
    if name not in methods:
        raise KgqaError(f"unknown method {method!r}; known: {', '.join(methods)} (or module:Class)")
    return methods[name]


def _import(method: str, module_name: str) -> ModuleType:
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        raise MethodUnavailable(method, module_name, f"no module named {exc.name!r}") from exc
    except ImportError as exc:
        raise MethodUnavailable(method, module_name, str(exc).splitlines()[0]) from exc


def retriever_class(method: str) -> type:
    """The Retriever class for ``method``; :class:`MethodUnavailable` when its module is not importable."""
    from kgqa.retrieve.base import Retriever

    module_name, _, class_name = _spec(method).partition(":")
    module = _import(method, module_name)
    if class_name:
        cls = getattr(module, class_name, None)
        if cls is None:
            raise MethodUnavailable(method, module_name, f"it defines no {class_name}")
        return cls  # type: ignore[no-any-return]
    found = [
        obj
        for obj in vars(module).values()
        if inspect.isclass(obj)
        and issubclass(obj, Retriever)
        and obj is not Retriever
        and obj.__module__ == module.__name__
        and not inspect.isabstract(obj)
    ]
    if len(found) != 1:
        raise MethodUnavailable(method, module_name, f"expected one Retriever class, found {len(found)}")
    return found[0]


def available_methods(candidates: list[str] | None = None) -> dict[str, str]:
    """Known methods whose retriever imports, with the reason for each one that does not (value "" = ok)."""
    status: dict[str, str] = {}
    for name in candidates or list(known_methods()):
        try:
            retriever_class(name)
            status[name] = ""
        except KgqaError as exc:
            status[name] = str(exc)
    return status


def _pipeline() -> ModuleType | None:
    if not USE_PIPELINE:
        return None
    try:
        module = importlib.import_module("kgqa.retrieve.pipeline")
    except ModuleNotFoundError as exc:
        if exc.name == "kgqa.retrieve.pipeline":
            return None
        raise
    return module if callable(getattr(module, "answer_question", None)) else None


def _as_answer(result: Any) -> tuple[Any, Any]:
    """(Evidence, Answer) from what the pipeline returns: a ``Result`` or an ``(Evidence, Answer)`` pair."""
    from kgqa.answer.base import Answer

    if isinstance(result, tuple):
        return result[0], result[1]
    return result.evidence, Answer(list(result.answers), list(result.answer_scores), dict(result.explanation))


def make_answer_fn(driver: Any, method: str, kg: str, llm: str | None, k: int) -> AnswerFn:
    """``fn(question, topic_entities) -> Answered``; fails early when the method is unavailable."""
    name = canonical(method)
    pipeline = _pipeline() if ":" not in name else None
    if pipeline is not None:
        chosen = pipeline.choose_method(name) if hasattr(pipeline, "choose_method") else name
        retriever = retriever_class(chosen)(driver)  # built once; fails early when the module is missing
        answer_question = pipeline.answer_question
        params = inspect.signature(answer_question).parameters
        llm_arg = None if llm is None or llm.strip().lower() in ("", "none", "extractive") else llm

        def via_pipeline(question: str, topic_entities: list[Any] | None) -> Answered:
            extra: dict[str, Any] = {}
            if "retriever" in params:
                extra["retriever"] = retriever
            if "topic_entities" in params and topic_entities:
                extra["topic_entities"] = topic_entities
            began = time.perf_counter()
            evidence, result = _as_answer(answer_question(driver, question, kg, chosen, llm_arg, k, **extra))
            return Answered(evidence, result, _stages(evidence, result, (time.perf_counter() - began) * 1000))

        return via_pipeline

    from kgqa.answer import answer

    direct_retriever = retriever_class(name)(driver)

    def direct(question: str, topic_entities: list[Any] | None) -> Answered:
        began = time.perf_counter()
        evidence = direct_retriever.retrieve(question, kg, k, topic_entities=topic_entities or None)
        retrieved = time.perf_counter()
        result = answer(evidence, llm)
        done = time.perf_counter()
        stages = _stages(evidence, result, (done - began) * 1000)
        stages["answering"] = (done - retrieved) * 1000
        return Answered(evidence, result, stages)

    return direct


def _stages(evidence: Any, result: Any, total: float) -> dict[str, float]:
    """linking / retrieval / answering / total (and any sub-stages) in ms, as the method recorded them.

    ``total`` is this harness's own wall-clock measure around the whole call.
    """
    recorded = dict(getattr(evidence, "latency_ms", {}) or {})
    stages = {key: float(value) for key, value in recorded.items() if isinstance(value, int | float)}
    if "answering" not in stages:
        explained = (getattr(result, "explanation", {}) or {}).get("latency_ms")
        if isinstance(explained, int | float):
            stages["answering"] = float(explained)
        else:
            stages["answering"] = max(0.0, total - stages.get("linking", 0.0) - stages.get("retrieval", 0.0))
    stages["total"] = total
    return stages
