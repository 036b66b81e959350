"""The one registry of retrieval methods: names, aliases, the retriever class behind each, and ``auto``.

Retrievers are imported by name only when asked for, so that a method whose optional dependency is missing
fails with a one-line error instead of taking the others down. A ``module:Class`` spec names any
:class:`~kgqa.retrieve.base.Retriever` subclass (the test suite's fixture methods use it).
"""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass

from kgqa.core.errors import BadInput, CannotRunHere, KgqaError
from kgqa.retrieve.base import Retriever
from neo4j import Driver


@dataclass(frozen=True)
class Method:
    name: str
    target: str  # "module:Class"
    summary: str


METHODS: dict[str, Method] = {
    m.name: m
    for m in (
        Method("sgrag", "kgqa.retrieve.sgrag:SgragRetriever", "SG-RAG: question-type Cypher templates + MOT"),
        Method("frag", "kgqa.retrieve.frag:FragRetriever", "FRAG: hop range, PPR pruning, ranked paths"),
        Method(
            "subgraphrag",
            "kgqa.retrieve.subgraphrag:SubgraphRagRetriever",
            "SubgraphRAG: DDE + trained MLP scored in the database",
        ),
        Method(
            "simgrag",
            "kgqa.retrieve.simgrag:SimGragRetriever",
            "SimGRAG: the question's pattern graph matched by Graph Semantic Distance (no LLM, no training)",
        ),
        Method(
            "simgrag-llm",
            "kgqa.qa.simgrag_llm:LlmSimGragRetriever",
            "SimGRAG as published: an LLM writes the pattern graph (OPENAI_BASE_URL or kgqa llm serve)",
        ),
        Method(
            "gsr",
            "kgqa.retrieve.gsr:GsrRetriever",
            "GSR: a trained model writes relation chains, walked in Cypher",
        ),
        Method(
            "cosine",
            "kgqa.retrieve.cosine_baseline:CosineRetriever",
            "baseline: SubgraphRAG's candidates ranked by cosine similarity",
        ),
    )
}
ALIASES = {
    "cosine_baseline": "cosine",
    "sg-rag": "sgrag",
    "subgraph-rag": "subgraphrag",
    "sim-grag": "simgrag",
}
# The methods that compare the KG's stored vectors: on a KG loaded with --no-embeddings they are refused in
# one line (and left out of a route) instead of failing on empty vectors.
NEEDS_VECTORS = frozenset({"frag", "subgraphrag", "simgrag", "simgrag-llm", "cosine"})
# What a per-question route (`--method auto`, kgqa.qa.routing) may use: the baseline and the LLM variant are
# never chosen for the user.
AUTO_CANDIDATES = ("sgrag", "simgrag", "gsr", "frag", "subgraphrag")


def canonical(method: str) -> str:
    """The registry name of ``method`` (aliases and case folded); a ``module:Class`` spec as given."""
    if ":" in method:
        return method.strip()
    key = method.strip().lower()
    return ALIASES.get(key, key)


def retriever_class(method: str) -> type[Retriever]:
    """The Retriever class of ``method``; a one-line error when it is unknown or cannot be imported."""
    name = canonical(method)
    if ":" in name:
        target = name
    elif name in METHODS:
        target = METHODS[name].target
    else:
        raise BadInput(f"unknown method {method!r}; choose one of: auto, {', '.join(METHODS)}")
    module_name, _, class_name = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        reason = f"no module named {exc.name!r}" if isinstance(exc, ModuleNotFoundError) else str(exc)
        raise CannotRunHere(
            f"method {method!r} is not available: cannot import {module_name} ({reason})"
        ) from exc
    found = getattr(module, class_name, None)
    if not (inspect.isclass(found) and issubclass(found, Retriever)) or inspect.isabstract(found):
        raise BadInput(f"method {method!r}: {target} is not a Retriever class")
    return found


def make_retriever(driver: Driver, method: str) -> Retriever:
    return retriever_class(method)(driver)


def choose_method(method: str) -> str:
    """``method`` checked against the registry (unknown or unavailable: a one-line error now). ``auto`` is
    a route per question (:mod:`kgqa.qa.routing`), planned by the question-answering layer."""
    if canonical(method) == "auto":
        raise BadInput("--method auto plans a route per question and needs the database")
    retriever_class(method)
    return canonical(method)


def method_status() -> dict[str, str]:
    """Every registered method with "" when it can run here, else the one-line reason it cannot."""
    status: dict[str, str] = {}
    for name in METHODS:
        try:
            retriever_class(name)
            status[name] = ""
        except KgqaError as exc:
            status[name] = str(exc)
    return status
