"""``--method auto``: a method chosen per question, with the reasons, and the next one tried when it fails.

No single method is best on every question (BENCHMARKS.md, free-form and two-entity tables): SG-RAG's
templates are near perfect on the MetaQA question types their classifier recognises, but answer a question
of another shape from the nearest type; SimGRAG's pattern graph joins the walks of several named entities,
which a chain (GSR) or a hop range (FRAG) from one entity cannot. So the route is planned from what is known
before any retrieval, and walked until a method answers:

1. **What the question names.** Two or more distinct linked spans (two people, a film and a year) go to the
   methods that intersect several walks first.
2. **Whether templates cover it.** sgrag is planned only on a KG that has the relations of its question types,
   and first only when the question-type classifier is sure (its score at least ``RoutePolicy.sure_qtype``).
3. **Availability.** A method whose model is missing is skipped, and the route says which command makes it.
4. **Fit.** A method that returns no evidence, or evidence with no answer, or a best answer of the wrong kind
   (a film for "when …", a year for "who …"), passes the question on; when every method has, the answer is
   "no answer" with the reasons, not the nearest template's guess.

``plan_route`` is a pure function of :class:`QuestionSignals`, so ``bench/auto_routing.py`` can replay a
policy over answers it recorded once; :class:`Router` plans and walks the route for one KG. The policy's
numbers are chosen there, on the tune parts of our own question sets, never on their held-out parts or on
MetaQA test.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kgqa.answer.extractive import answer_extractive
from kgqa.core.errors import KgqaError
from kgqa.core.metaqa import ROLE_RELATION
from kgqa.core.types import Evidence, LinkedEntity
from kgqa.models import registry
from kgqa.models.question_classifiers import QuestionClassifiers
from kgqa.qa.methods import AUTO_CANDIDATES, make_retriever, method_status
from kgqa.retrieve.base import Retriever
from neo4j import Driver


@dataclass(frozen=True)
class RoutePolicy:
    """The route's knobs (``bench/auto_routing.py`` measures them on the tune parts)."""

    # the question-type classifier's score (a linear-SVM margin) from which sgrag goes first: the best of the
    # deciles on the tune parts of our free-form sets (A and C) and two-entity set with 300 MetaQA dev
    # questions, after the linker and SimGRAG changes of issue 16 (bench/results/auto/routing.md; the orders
    # below were best there too)
    sure_qtype: float = 0.305
    # methods for a question naming several entities, best first
    several_entities: tuple[str, ...] = ("simgrag", "frag", "sgrag", "gsr", "subgraphrag")
    # methods for a question naming one entity whose type the classifier is sure of, on a KG with templates
    one_entity_sure: tuple[str, ...] = ("sgrag", "simgrag", "gsr", "frag", "subgraphrag")
    # methods for any other question naming one entity
    one_entity_unsure: tuple[str, ...] = ("simgrag", "gsr", "sgrag", "frag", "subgraphrag")


DEFAULT_POLICY = RoutePolicy()


@dataclass(frozen=True)
class QuestionSignals:
    """What the route is planned from: known before any method retrieves."""

    spans: int  # distinct question spans with a linked entity (two entities linked from one span count once)
    literals: int  # of those, spans whose entity is a literal value (a year, a number)
    templates_fit: bool  # the KG has every relation sgrag's question types walk
    qtype: str = ""  # the question-type classifier's best type ("" when no classifier was asked)
    qtype_score: float | None = None
    asked: str = ""  # "literal" or "entity" when the question's opening says which (asked_kind)

    def to_json(self) -> dict[str, Any]:
        return {
            "spans": self.spans,
            "literals": self.literals,
            "templates_fit": self.templates_fit,
            "qtype": self.qtype,
            "qtype_score": None if self.qtype_score is None else round(self.qtype_score, 4),
            "asked": self.asked,
        }


@dataclass(frozen=True)
class RouteStep:
    method: str
    why: str


@dataclass
class Route:
    """The plan and what each method it tried did; ``chosen`` gave the answer (None: none did)."""

    signals: QuestionSignals
    planned: list[RouteStep]
    tried: list[dict[str, str]] = field(default_factory=list)  # method, why planned, outcome
    chosen: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "chosen": self.chosen,
            "signals": self.signals.to_json(),
            "tried": self.tried,
            "not_tried": [
                {"method": s.method, "why": s.why}
                for s in self.planned
                if s.method not in {t["method"] for t in self.tried}
            ],
        }


def is_literal(entity: LinkedEntity) -> bool:
    """A literal value stored as a node: a year, a rating, a count ("1994", "7.5")."""
    return entity.name.replace(".", "", 1).replace(",", "").isdigit()


def question_signals(
    question: str,
    topics: Sequence[LinkedEntity],
    templates_fit: bool,
    classifiers: QuestionClassifiers | None,
) -> QuestionSignals:
    spans: dict[str, bool] = {}
    for e in topics:
        key = " ".join((e.span or e.name).lower().split())
        spans[key] = spans.get(key, False) or is_literal(e)
    asked = asked_kind(question)
    if classifiers is None or not templates_fit or not topics:
        return QuestionSignals(len(spans), sum(spans.values()), templates_fit, asked=asked)
    texts = [t for e in topics for t in (e.span, e.name) if t]
    prediction = classifiers.predict_qtype(question, texts)
    return QuestionSignals(
        len(spans), sum(spans.values()), templates_fit, prediction.qtype, prediction.score, asked
    )


def plan_route(
    signals: QuestionSignals, available: dict[str, str], policy: RoutePolicy = DEFAULT_POLICY
) -> list[RouteStep]:
    """Methods to try in order, each with why; ``available`` maps a method to "" or why it cannot run."""
    if signals.spans >= 2:
        order = policy.several_entities
        why = f"names {signals.spans} entities: a pattern graph joins their walks"
    elif (
        signals.templates_fit and signals.qtype_score is not None and signals.qtype_score >= policy.sure_qtype
    ):
        order = policy.one_entity_sure
        why = f"one entity; question type {signals.qtype} ({signals.qtype_score:.2f} ≥ {policy.sure_qtype})"
    else:
        order = policy.one_entity_unsure
        if not signals.templates_fit:
            why = "one entity; this KG has no question-type templates"
        else:
            score = "none" if signals.qtype_score is None else f"{signals.qtype_score:.2f}"
            why = f"one entity; question type unsure ({signals.qtype}: {score} < {policy.sure_qtype})"
    steps = []
    for rank, method in enumerate(order):
        if method == "sgrag" and not signals.templates_fit:
            continue
        if available.get(method, "not registered"):
            continue
        steps.append(RouteStep(method, why if rank == 0 or not steps else f"next after {steps[-1].method}"))
    return steps


# Question openings that ask for a literal value (a year, a date, a number) or for a named entity. Only the
# kind is checked, which any KG with literal nodes shares; which relation is meant is the methods' business.
_ASKS_LITERAL = re.compile(r"^\W*(when\b|(what|which|in what|in which)\s+years?\b|how many\b)", re.IGNORECASE)
_ASKS_ENTITY = re.compile(r"^\W*(who|whom|whose)\b", re.IGNORECASE)


# "How many times did X work with Y, and on which films?": a later question for things outweighs the count.
_ASKS_THINGS_LATER = re.compile(r"\b(which|what)\s+(?!years?\b)\w+", re.IGNORECASE)


def asked_kind(question: str) -> str:
    """The kind of answer the question's opening asks for: "literal", "entity", or "" (most questions)."""
    literal = _ASKS_LITERAL.search(question)
    if literal and not (literal.group(1).lower().startswith("how") and _ASKS_THINGS_LATER.search(question)):
        return "literal"
    if _ASKS_ENTITY.search(question):
        return "entity"
    return ""


def answered(evidence: Evidence, asked: str = "") -> str:
    """Why ``evidence`` cannot answer a question asking for ``asked`` (see :func:`asked_kind`); "" when it
    can. The route then tries the next method."""
    if evidence.is_empty:
        return evidence.reason or "no evidence"
    if not evidence.answer_candidates and not evidence.triplets:
        return "no answer candidate"
    if not asked:
        return ""
    wanted = "a year or number" if asked == "literal" else "a named entity"
    if evidence.answer_candidates:
        best = evidence.answer_candidates[0]
    else:
        # Ranked triplets without candidates (SubgraphRAG's top-k): the answer read off them is what the
        # extractive answerer picks; a year somewhere among them does not make the pick a year.
        best = answer_extractive(evidence, max_answers=1).top or ""
        if not best:
            return f"the question asks for {wanted}; no answer can be read off the evidence"
    if _literal_name(best) != (asked == "literal"):
        return f"the question asks for {wanted}; the best answer is {best!r}"
    return ""


def _literal_name(name: str) -> bool:
    return is_literal(LinkedEntity(name, name, 1.0, "answer"))


def templates_fit(relation_names: Sequence[str]) -> bool:
    """Whether a KG with these relation types has every relation sgrag's question types walk."""
    return set(ROLE_RELATION.values()) <= set(relation_names)


def follow_route(
    route: Route,
    retrieve: Callable[[str], Evidence],
) -> Evidence | None:
    """Asks each planned method in turn until one answers what was asked; records every try in
    ``route.tried``."""
    for step in route.planned:
        try:
            evidence = retrieve(step.method)
        except KgqaError as exc:  # a method that cannot run here passes the question on
            route.tried.append({"method": step.method, "why": step.why, "outcome": f"failed: {exc}"})
            continue
        reason = answered(evidence, route.signals.asked)
        route.tried.append({"method": step.method, "why": step.why, "outcome": reason or "answered"})
        if not reason:
            route.chosen = step.method
            return evidence
    return None


class Router:
    """``--method auto`` for one KG: plans a route per question and builds each method's retriever on first
    use (a method whose model is missing then fails once, with the command that makes it, and is skipped)."""

    def __init__(self, driver: Driver, kg: str, policy: RoutePolicy = DEFAULT_POLICY) -> None:
        self.driver = driver
        self.policy = policy
        status = method_status()
        self.available = {m: status.get(m, "not registered") for m in AUTO_CANDIDATES}
        self.retrievers: dict[str, Retriever] = {}
        self.broken: dict[str, str] = {}
        self.templates_fit = _templates_fit(driver, kg)
        self.classifiers = _classifiers_if_installed() if self.templates_fit else None

    def retriever(self, method: str) -> Retriever:
        if method in self.broken:
            raise KgqaError(self.broken[method])
        if method not in self.retrievers:
            try:
                self.retrievers[method] = make_retriever(self.driver, method)
            except KgqaError as exc:
                self.broken[method] = str(exc)
                raise
        return self.retrievers[method]

    def retrieve(self, question: str, kg: str, k: int, topics: list[LinkedEntity]) -> tuple[Evidence, Route]:
        signals = question_signals(question, topics, self.templates_fit, self.classifiers)
        route = Route(signals, plan_route(signals, self.available, self.policy))
        if not topics:
            route.planned = []
            return Evidence(question, "auto", kg, [], reason="no topic entity was linked"), route
        evidence = follow_route(route, lambda m: self.retriever(m).retrieve(question, kg, k, topics))
        if evidence is None:
            tried = ", ".join(t["method"] for t in route.tried)
            reason = (
                f"no method answered (tried {tried}; the route says why)" if tried else "no method can run"
            )
            evidence = Evidence(question, "auto", kg, topics, reason=reason)
        return evidence, route


def _templates_fit(driver: Driver, kg: str) -> bool:
    # imported on first use, as every retriever module is (kgqa.qa.methods)
    from kgqa.retrieve.frag import relation_embeddings

    names, _ = relation_embeddings(driver, kg)
    return templates_fit(names)


def _classifiers_if_installed() -> QuestionClassifiers | None:
    try:
        return registry.question_classifiers()
    except KgqaError:
        return None
