"""Question in, evidence and answers out: link -> retrieve -> answer, timed. `kgqa ask`, `kgqa eval` and the
bench scripts all go through :class:`QuestionAnswerer`.

This is the only place that times the stages: ``linking``, ``retrieval``, ``answering`` and ``total`` (wall
clock around the three), plus whatever sub-stages the retriever recorded in ``Evidence.latency_ms``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kgqa.answer import NO_EVIDENCE, NO_TOPIC_ENTITY, Answer, answer, is_offline, no_answer
from kgqa.answer.support import answer_support
from kgqa.core.errors import BadInput, CannotRunHere, KgNotReady, KgqaError
from kgqa.core.types import Evidence, LinkedEntity
from kgqa.graph.kg import LoadedKg, no_embeddings_line, resolve_kg
from kgqa.qa.methods import NEEDS_VECTORS, canonical, choose_method, make_retriever
from kgqa.qa.routing import Fit, Route, Router, asked_kind, fit_check
from kgqa.retrieve.base import Retriever
from neo4j import Driver

# Evidence triplets one answer may carry: far above what any method returns usefully (SubgraphRAG's 100), and
# bounded, since a huge k overflows the database's integers and sizes Python's arrays.
MAX_K = 1000
STAGES = ("linking", "retrieval", "answering", "total")  # what every answer is timed by, in this order
Linker = Callable[[str, str], list[LinkedEntity]]  # (question, kg) -> topic entities, best first


@dataclass
class Result:
    evidence: Evidence
    answer: Answer
    latency_ms: dict[str, float]  # the stages above, then the retriever's sub-stages
    llm: str | None  # None: the extractive answerer
    route: Route | None = None  # --method auto: what was planned and tried, and why

    @property
    def answers(self) -> list[str]:
        return self.answer.answers

    def to_json(self) -> dict[str, Any]:
        """The `kgqa ask --json` object (README.md, "Using it")."""
        ev = self.evidence
        return {
            "question": ev.question,
            "kg": ev.kg,
            "method": ev.method,
            "llm": self.llm,
            "topic_entities": [e.name for e in ev.topic_entities],
            "linked_entities": [
                {
                    "id": e.id,
                    "name": e.name,
                    "score": round(e.score, 4),
                    "how": e.how,
                    "span": e.span,
                    # what else the same words may name, as the linker found it
                    "alternatives": [
                        {"id": a.id, "name": a.name, "score": round(a.score, 4), "how": a.how}
                        for a in e.alternatives
                    ],
                }
                for e in ev.topic_entities
            ],
            "answers": self.answer.answers,
            "answer_scores": [round(s, 4) for s in self.answer.scores],
            # the first answers, each with its score and the walk of the evidence it was read off
            "answer_details": [s.to_json() for s in answer_support(ev, self.answer)],
            # how likely the first answer is right, when the method's model says (the path scorer)
            "confidence": None if ev.confidence is None else round(ev.confidence, 4),
            "triplets": [list(t) for t in ev.triplets],
            "hops": ev.hops,
            "explanation": self.answer.explanation,
            "trace": ev.trace.to_json() if ev.trace is not None else None,
            "latency_ms": {k: round(v, 2) for k, v in self.latency_ms.items()},
            "route": self.route.to_json() if self.route is not None else None,
        }


def _db_linker(driver: Driver) -> Linker:
    from kgqa.retrieve.linking import link_entities

    return lambda question, kg: link_entities(driver, question, kg)


class QuestionAnswerer:
    """One method, KG, answerer and evidence size, kept warm across questions (the retriever is built once).

    ``kg`` None means the only or most recently loaded KG. ``linker`` replaces the database's entity linker
    (tests replay recorded questions without a database).
    """

    def __init__(
        self,
        driver: Driver | None,
        method: str = "auto",
        kg: str | None = None,
        llm: str | None = None,
        k: int = 100,
        linker: Linker | None = None,
        retriever: Retriever | None = None,
    ) -> None:
        if not 1 <= k <= MAX_K:
            raise BadInput(f"-k must be between 1 and {MAX_K}, got {k}")
        self.driver = driver
        loaded = (
            require_complete(resolve_kg(driver, kg)) if driver is not None else LoadedKg(kg or "", None, None)
        )
        self.kg = loaded.name
        self.router: Router | None = None
        if retriever is None and canonical(method) == "auto" and driver is not None:
            self.router = Router(driver, loaded)
            self.method = "auto"
            self.retriever = None
        else:
            self.method = retriever.name if retriever is not None else choose_method(method)
            if retriever is None and driver is not None and self.method in NEEDS_VECTORS:
                if not loaded.embedded:
                    raise CannotRunHere(no_embeddings_line(self.method, self.kg))
            self.retriever = retriever or make_retriever(driver, self.method)  # type: ignore[arg-type]
        self.llm = None if is_offline(llm) else llm
        self.k = k
        if linker is None and driver is None:
            raise KgqaError("a question-answerer without a database needs a linker")
        self.link = linker or _db_linker(driver)  # type: ignore[arg-type]

    def ask(self, question: str, topic_entities: list[LinkedEntity] | None = None) -> Result:
        """Answers ``question``; ``topic_entities`` given (e.g. by a benchmark) skip linking."""
        if not question or not question.strip():
            raise BadInput("the question is empty")
        began = time.perf_counter()
        topics = list(topic_entities) if topic_entities else self.link(question, self.kg)
        linked = time.perf_counter()
        route = None
        if self.router is not None:
            evidence, route = self.router.retrieve(question, self.kg, self.k, topics)
        else:
            assert self.retriever is not None
            evidence = self.retriever.retrieve(question, self.kg, self.k, topics)
        retrieved = time.perf_counter()
        # A method's best answer of the wrong kind (a film for "when ...") is a guess from the nearest thing
        # it covers: said as no answer, with the reason, by every method (the route has checked it already).
        # The fit check reads the extractive answer off evidence without candidates; it is read once.
        checked = route is None and not evidence.is_empty
        fit = fit_check(evidence, asked_kind(question)) if checked else Fit("")
        read = route.read if route is not None else fit.read
        if not evidence.topic_entities:
            reply = no_answer(NO_TOPIC_ENTITY)
        elif evidence.is_empty:
            reply = no_answer(evidence.reason or NO_EVIDENCE)
        elif fit.reason:
            reply = no_answer(fit.reason)
        elif read is not None and self.llm is None:
            reply = read
        else:
            reply = answer(evidence, self.llm)
        done = time.perf_counter()
        latency = {
            "linking": (linked - began) * 1000,
            "retrieval": (retrieved - linked) * 1000,
            "answering": (done - retrieved) * 1000,
            "total": (done - began) * 1000,
        }
        for stage, ms in evidence.latency_ms.items():
            latency.setdefault(stage, ms)
        return Result(evidence, reply, latency, self.llm, route)


def require_complete(loaded: LoadedKg) -> LoadedKg:
    """A KG whose load was interrupted (or is still running) would answer from part of its graph, say from
    2,048 of 43,234 embedded names, without a word: refused in one line instead."""
    if loaded.status != "complete":
        raise KgNotReady(
            f"KG {loaded.name!r} is not completely loaded (status {loaded.status or 'unknown'}); "
            "rerun the `kgqa load` that made it (it resumes), or see `kgqa kgs`"
        )
    return loaded


def answer_question(
    driver: Driver,
    question: str,
    kg: str | None = None,
    method: str = "auto",
    llm: str | None = None,
    k: int = 100,
    topic_entities: list[LinkedEntity] | None = None,
) -> Result:
    """One question, start to end: what `kgqa ask` runs."""
    if not question or not question.strip():
        raise BadInput("the question is empty")
    return QuestionAnswerer(driver, method, kg, llm, k).ask(question, topic_entities)
