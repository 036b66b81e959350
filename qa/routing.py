"""``--method auto``: a method chosen per question, with the reasons, and the next one tried when it fails.

No single method is best on every question (BENCHMARKS.md, free-form and two-entity tables): SG-RAG's
templates are near perfect on the chains their classifier recognises, but answer a question
of another shape from the nearest type; SimGRAG's pattern graph joins the walks of several named entities,
which a chain (GSR) or a hop range (FRAG) from one entity cannot. So the route is planned from what is known
before any retrieval, and walked until a method answers:

1. **What the question names.** Two or more distinct linked spans (two people, a film and a year) go to the
   methods that intersect several walks first.
2. **Whether templates cover it.** sgrag is planned only on a KG that has its templates (the chain
   classifier ``kgqa train all`` fits on the KG's questions), and first only when that classifier is sure
   (its score at least ``RoutePolicy.sure_qtype``).
3. **Availability.** A method whose model is missing is skipped, and the route says which command makes it.
4. **Fit.** A method that returns no evidence, or evidence with no answer, or a best answer of the wrong kind
   (a film for "when …", a year for "who …"), passes the question on; when every method has, the answer is
   "no answer" with the reasons, not the nearest template's guess.

``plan_route`` is a pure function of :class:`QuestionSignals`, so a policy can be replayed over answers
recorded once: ``kgqa train all`` does that on the KG's held-out training questions and stores the best
policy with the KG's models (:func:`learn_policy`); :class:`Router` plans and walks the route for one KG with
that KG's policy, or :data:`DEFAULT_POLICY` for a KG that has none. Only the route passes a question from one
method to another; no retriever calls another method.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from kgqa.answer.base import Answer
from kgqa.answer.extractive import answer_extractive
from kgqa.core.errors import CannotRunHere
from kgqa.core.types import Evidence, LinkedEntity
from kgqa.graph.kg import LoadedKg
from kgqa.models import kg_models, registry
from kgqa.models.path_scorer import PathScorer, ranks_sgrag
from kgqa.models.question_classifiers import QuestionClassifiers
from kgqa.qa.answer_scoring import (
    AnswerScorer,
    MethodRun,
    answer_rows,
    answer_scorer_from_json,
    scored_answer,
)
from kgqa.qa.methods import AUTO_CANDIDATES, NEEDS_VECTORS, make_retriever, method_status
from kgqa.retrieve.base import Retriever
from neo4j import Driver


@dataclass(frozen=True)
class RoutePolicy:
    """The route's knobs: learned per KG by ``kgqa train all`` (:func:`learn_policy`), kept in its profile."""

    # the chain classifier's score (a linear-SVM margin) from which sgrag goes first (the default: what our
    # free-form tune questions chose before routes were learned per KG)
    sure_qtype: float = 0.305
    # methods for a question naming several entities, best first
    several_entities: tuple[str, ...] = ("simgrag", "frag", "sgrag", "gsr", "subgraphrag")
    # methods for a question naming one entity whose type the classifier is sure of, on a KG with templates
    one_entity_sure: tuple[str, ...] = ("sgrag", "simgrag", "gsr", "frag", "subgraphrag")
    # methods for any other question naming one entity
    one_entity_unsure: tuple[str, ...] = ("simgrag", "gsr", "sgrag", "frag", "subgraphrag")
    # an answer whose confidence (a method's calibrated probability that it is right) is below this passes
    # the question on; the surest such answer is still given when no later method answers. The default was
    # chosen on the tune part of our FB15k-237 questions; a KG's labelled held-out questions learn their own.
    min_confidence: float = 0.4
    # a question whose wording is less like the KG's labelled questions than this (TF-IDF cosine of the masked
    # question to the nearest wording its classifiers learned) goes to the methods that read no learned
    # wording first (WORDING_FREE). Learned as the share UNFAMILIAR_SHARE of the KG's own held-out wordings
    # that fall below it (:func:`unfamiliar_threshold`); 0 (never) for a KG without labelled questions.
    unfamiliar_below: float = 0.0


DEFAULT_POLICY = RoutePolicy()
ANSWER_SCORER = "answer_scorer"  # the key of the answer scorer in a KG's saved route
# The methods that read no model fitted to the wording of the KG's questions (FRAG's hop count weighs only on
# wordings it learned): how they answer a question worded as no labelled question was is how they answer
# users. sgrag's templates and GSR's generator learned their questions' very sentences: on MetaQA's free-form
# tune questions worded unlike its templates, sgrag 0.43 and gsr 0.65 against simgrag's 0.95.
WORDING_FREE = ("frag", "simgrag")
# The share of the KG's own held-out wordings that the learned familiarity threshold sends to WORDING_FREE
# first: a KG whose questions come from a few templates has nearly all its own wordings far above people's
# (MetaQA), and one whose questions are people's own (WebQSP) has its threshold low, where few fall.
UNFAMILIAR_SHARE = 0.05
NEVER_SURE = 1e9  # a threshold no classifier score reaches: sgrag is never planned first


@dataclass(frozen=True)
class QuestionSignals:
    """What the route is planned from: known before any method retrieves."""

    spans: int  # distinct question spans with a linked entity (two entities linked from one span count once)
    literals: int  # of those, spans whose entity is a literal value (a year, a number)
    templates_fit: bool  # the KG has sgrag's templates (its chain classifier)
    qtype: str = ""  # the question-type classifier's best type ("" when no classifier was asked)
    qtype_score: float | None = None
    asked: str = ""  # "literal" or "entity" when the question's opening says which (asked_kind)
    path_scorer: bool = False  # the KG has a question-to-path scorer: sgrag ranks every chain walkable
    # the cosine of the masked question to the nearest wording the KG's classifiers learned (None: unknown)
    familiarity: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "spans": self.spans,
            "literals": self.literals,
            "templates_fit": self.templates_fit,
            "qtype": self.qtype,
            "qtype_score": None if self.qtype_score is None else round(self.qtype_score, 4),
            "asked": self.asked,
            "path_scorer": self.path_scorer,
            "familiarity": None if self.familiarity is None else round(self.familiarity, 4),
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
    stale: str | None = None  # why the KG's route may not plan well (trained before some of its methods)
    read: Answer | None = None  # the chosen evidence's extractive answer, when the fit check read it off

    def to_json(self) -> dict[str, Any]:
        return {
            "chosen": self.chosen,
            "stale": self.stale,
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
    path_scorer: bool = False,
) -> QuestionSignals:
    spans: dict[str, bool] = {}
    for e in topics:
        key = " ".join((e.span or e.name).lower().split())
        spans[key] = spans.get(key, False) or is_literal(e)
    asked = asked_kind(question)
    if classifiers is None or not templates_fit or not topics:
        return QuestionSignals(
            len(spans), sum(spans.values()), templates_fit, asked=asked, path_scorer=path_scorer
        )
    texts = [t for e in topics for t in (e.span, e.name) if t]
    prediction = classifiers.predict_chain(question, texts)
    # The wording is what is left once the names are masked: a topic given by the caller without its span, and
    # whose name the question does not spell out ("russian" for Russia), leaves it unknown.
    lowered = question.lower()
    located = all(e.span or e.name.lower() in lowered for e in topics)
    return QuestionSignals(
        len(spans),
        sum(spans.values()),
        templates_fit,
        prediction.chain,
        prediction.score,
        asked,
        path_scorer,
        prediction.familiar if located else None,
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
        why = f"one entity; chain {signals.qtype} ({signals.qtype_score:.2f} ≥ {policy.sure_qtype})"
    else:
        order = policy.one_entity_unsure
        if not signals.templates_fit:
            why = "one entity; this KG has no sgrag templates"
        else:
            score = "none" if signals.qtype_score is None else f"{signals.qtype_score:.2f}"
            why = f"one entity; chain unsure ({signals.qtype}: {score} < {policy.sure_qtype})"
    if signals.familiarity is not None and signals.familiarity < policy.unfamiliar_below:
        order = (*(m for m in order if m in WORDING_FREE), *(m for m in order if m not in WORDING_FREE))
        why += (
            f"; worded unlike the KG's questions ({signals.familiarity:.2f} < {policy.unfamiliar_below:.2f}):"
            " the methods that read no learned wording first"
        )
    if signals.path_scorer and "sgrag" in order:
        # the scorer reads the question with a fine-tuned language model and says how sure it is: asked first,
        # its unsure answers pass the question on (follow_route). With several spans too: a second span is
        # often a word of the question that names a kind or a role ("the composer of ..."), which the
        # pattern-graph methods then join as if it were a second topic; sgrag joins two topics' chains only
        # where they meet and is unsure when they do not (our FB15k-237 tune questions: 17 -> 20 of 38).
        order = ("sgrag", *(m for m in order if m != "sgrag"))
        why = "the KG's path scorer ranks every chain walkable from the topic"
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


@dataclass(frozen=True)
class Fit:
    """Whether evidence answers what the question asks: ``reason`` says why not ("" when it does), and
    ``read`` is the extractive answer the check read off evidence without answer candidates, kept so that
    the answerer does not read it again (None when the check needed none)."""

    reason: str
    read: Answer | None = None


def fit_check(evidence: Evidence, asked: str = "") -> Fit:
    """Why ``evidence`` cannot answer a question asking for ``asked`` (see :func:`asked_kind`), with the
    answer read off it when that took the extractive answerer. The route then tries the next method."""
    if evidence.is_empty:
        return Fit(evidence.reason or "no evidence")
    if not evidence.answer_candidates and not evidence.triplets:
        return Fit("no answer candidate")
    if not asked:
        return Fit("")
    wanted = "a year or number" if asked == "literal" else "a named entity"
    read = None
    if evidence.answer_candidates:
        best = evidence.answer_candidates[0]
    else:
        # Ranked triplets without candidates (SubgraphRAG's top-k): the answer read off them is what the
        # extractive answerer picks; a year somewhere among them does not make the pick a year.
        read = answer_extractive(evidence)
        best = read.top or ""
        if not best:
            return Fit(f"the question asks for {wanted}; no answer can be read off the evidence", read)
    if _literal_name(best) != (asked == "literal"):
        return Fit(f"the question asks for {wanted}; the best answer is {best!r}", read)
    return Fit("", read)


def answered(evidence: Evidence, asked: str = "") -> str:
    """Why ``evidence`` cannot answer a question asking for ``asked``; "" when it can (:func:`fit_check`)."""
    return fit_check(evidence, asked).reason


def _literal_name(name: str) -> bool:
    return is_literal(LinkedEntity(name, name, 1.0, "answer"))


def follow_route(
    route: Route,
    retrieve: Callable[[str], Evidence],
    min_confidence: float = DEFAULT_POLICY.min_confidence,
) -> Evidence | None:
    """Asks each planned method in turn until one answers what was asked, sure enough when it says how sure
    it is (``Evidence.confidence`` ≥ ``min_confidence``); records every try in ``route.tried``. When only
    unsure answers came, the surest of them is the answer."""
    unsure: Evidence | None = None
    unsure_read: Answer | None = None
    for step in route.planned:
        try:
            evidence = retrieve(step.method)
        except CannotRunHere as exc:  # passes the question on; any other failure is reported, not skipped
            route.tried.append({"method": step.method, "why": step.why, "outcome": f"failed: {exc}"})
            continue
        fit = fit_check(evidence, route.signals.asked)
        reason = fit.reason
        if not reason and evidence.confidence is not None and evidence.confidence < min_confidence:
            reason = f"unsure (confidence {evidence.confidence:.2f} < {min_confidence:.2f})"
            if unsure is None or (unsure.confidence or 0.0) < evidence.confidence:
                unsure, unsure_read = evidence, fit.read
        route.tried.append({"method": step.method, "why": step.why, "outcome": reason or "answered"})
        if not reason:
            route.chosen = step.method
            route.read = fit.read
            return evidence
    if unsure is not None:
        route.chosen = unsure.method
        route.read = unsure_read
        route.tried.append(
            {"method": unsure.method, "why": "no method was sure", "outcome": "answered (the surest unsure)"}
        )
    return unsure


class Router:
    """``--method auto`` for one KG: plans a route per question with the KG's learned policy and builds each
    method's retriever on first use (a method whose model is missing then fails once, with the command that
    makes it, and is skipped)."""

    def __init__(self, driver: Driver, loaded: LoadedKg, policy: RoutePolicy | None = None) -> None:
        kg = loaded.name
        self.driver = driver
        self.policy = policy or policy_for(kg)
        newer = kg_models.parts_newer_than_route(kg) if policy is None else []
        self.stale = kg_models.stale_route_note(kg, newer) if newer else None
        status = method_status()
        self.available = {m: status.get(m, "not registered") for m in AUTO_CANDIDATES}
        # A KG loaded with --no-embeddings: the methods that compare its vectors are not planned at all.
        self.embedded = loaded.embedded
        if not self.embedded:
            for method in NEEDS_VECTORS.intersection(self.available):
                self.available[method] = self.available[method] or "the KG has no embeddings"
        self.retrievers: dict[str, Retriever] = {}
        self.broken: dict[str, CannotRunHere] = {}
        self.classifiers = installed_classifiers(kg)
        self.templates_fit = self.classifiers is not None
        self.path_scorer = ranks_sgrag(kg_models.part_dir(kg, "path_scorer"))
        # the chosen method's answers, each with the probability that it is right
        self.answer_scorer = answer_scorer_for(kg) if policy is None else None

    def retriever(self, method: str) -> Retriever:
        if method in self.broken:
            raise self.broken[method]
        if method not in self.retrievers:
            try:
                self.retrievers[method] = make_retriever(self.driver, method)
            except CannotRunHere as exc:
                self.broken[method] = exc
                raise
        return self.retrievers[method]

    def retrieve(self, question: str, kg: str, k: int, topics: list[LinkedEntity]) -> tuple[Evidence, Route]:
        signals = question_signals(question, topics, self.templates_fit, self.classifiers, self.path_scorer)
        route = Route(signals, plan_route(signals, self.available, self.policy), stale=self.stale)
        if not topics:
            route.planned = []
            return Evidence(question, "auto", kg, [], reason="no topic entity was linked"), route
        evidence = follow_route(
            route, lambda m: self.retriever(m).retrieve(question, kg, k, topics), self.policy.min_confidence
        )
        if evidence is not None and self.answer_scorer is not None:
            began = time.perf_counter()
            self.score_answers(self.answer_scorer, route, evidence, question, topics)
            evidence.latency_ms["answer_scoring"] = (time.perf_counter() - began) * 1000
        if evidence is None:
            tried = ", ".join(t["method"] for t in route.tried)
            reason = (
                f"no method answered (tried {tried}; the route says why)" if tried else "no method can run"
            )
            if not self.embedded:
                reason += (
                    f"; KG {kg!r} was loaded without embeddings, so FRAG, SimGRAG and SubgraphRAG were "
                    f"skipped (`kgqa index --kg {kg}` adds them)"
                )
            evidence = Evidence(question, "auto", kg, topics, reason=reason)
        return evidence, route

    @staticmethod
    def score_answers(
        scorer: AnswerScorer, route: Route, evidence: Evidence, question: str, topics: list[LinkedEntity]
    ) -> None:
        """The chosen evidence's answers with the answer scorer's probabilities
        (:mod:`kgqa.qa.answer_scoring`): ``route.read`` is what the extractive answerer gives, and the first
        one's probability becomes the evidence's confidence."""
        read = route.read or answer_extractive(evidence)
        if not read.answers:
            return
        run = MethodRun(evidence.method, evidence, read)
        rows = answer_rows(question, topics, run, scorer_of(evidence.kg), limit=len(read.answers))
        route.read = scored_answer(scorer, rows, read)
        evidence.confidence = route.read.scores[0] if route.read.scores else None


def scorer_of(kg: str) -> PathScorer | None:
    """The KG's question-to-path scorer, which the answer scorer reads whether or not sgrag ranks by it."""
    return registry.path_scorer(kg, outranked_too=True)


def answer_scorer_for(kg: str) -> AnswerScorer | None:
    """The answer scorer ``kgqa train all`` fitted with ``kg``'s route, or None."""
    profile = kg_models.read_profile(kg)
    if profile is None or not profile.route:
        return None
    return answer_scorer_from_json(profile.route.get(ANSWER_SCORER))


def policy_for(kg: str) -> RoutePolicy:
    """The route ``kgqa train all`` learned for ``kg`` (its profile), else :data:`DEFAULT_POLICY`."""
    profile = kg_models.read_profile(kg)
    if profile is None or not profile.route:
        return DEFAULT_POLICY
    return policy_from_json(profile.route)


def unfamiliar_threshold(familiarities: Sequence[float | None], share: float = UNFAMILIAR_SHARE) -> float:
    """The familiarity below which at most ``share`` of ``familiarities`` (the KG's own held-out wordings,
    scored by classifiers that never saw them) fall; 0 (nothing is unfamiliar) when none is known."""
    known = sorted(f for f in familiarities if f is not None)
    return known[int(len(known) * share)] if known else 0.0


def policy_to_json(policy: RoutePolicy) -> dict[str, Any]:
    return {
        "sure_qtype": policy.sure_qtype,
        "several_entities": list(policy.several_entities),
        "one_entity_sure": list(policy.one_entity_sure),
        "one_entity_unsure": list(policy.one_entity_unsure),
        "min_confidence": policy.min_confidence,
        "unfamiliar_below": policy.unfamiliar_below,
    }


def policy_from_json(data: dict[str, Any]) -> RoutePolicy:
    try:
        return RoutePolicy(
            sure_qtype=float(data.get("sure_qtype", DEFAULT_POLICY.sure_qtype)),
            several_entities=tuple(data.get("several_entities") or DEFAULT_POLICY.several_entities),
            one_entity_sure=tuple(data.get("one_entity_sure") or DEFAULT_POLICY.one_entity_sure),
            one_entity_unsure=tuple(data.get("one_entity_unsure") or DEFAULT_POLICY.one_entity_unsure),
            min_confidence=float(data.get("min_confidence", DEFAULT_POLICY.min_confidence)),
            unfamiliar_below=float(data.get("unfamiliar_below", DEFAULT_POLICY.unfamiliar_below)),
        )
    except (TypeError, ValueError):
        return DEFAULT_POLICY


def installed_classifiers(kg: str) -> QuestionClassifiers | None:
    try:
        return registry.question_classifiers(kg)
    except CannotRunHere:
        return None


@dataclass(frozen=True)
class MethodOutcome:
    """What one method did with one question: whether the route would accept its evidence, and whether its
    best answer was right."""

    passes: bool
    hit: bool
    confidence: float | None = None  # the method's confidence in its answer, when it says


@dataclass(frozen=True)
class RouteRecord:
    """One held-out question: the route's signals and every method's outcome, recorded once so that any
    policy can be replayed over it."""

    signals: QuestionSignals
    outcomes: dict[str, MethodOutcome]
    weight: float = 1.0


def replay(policy: RoutePolicy, records: Sequence[RouteRecord], available: dict[str, str]) -> float:
    """The weighted Hits@1 of ``policy`` over ``records``: each question answered as :func:`follow_route`
    walks the route :func:`plan_route` plans for it."""
    return sum(replayed_hit(record, policy, available) for record in records)


def replayed_hit(record: RouteRecord, policy: RoutePolicy, available: dict[str, str]) -> float:
    """One record's weighted hit under ``policy`` (:func:`replayed_choice`)."""
    method = replayed_choice(record, policy, available)
    return record.weight * record.outcomes[method].hit if method is not None else 0.0


def replayed_choice(record: RouteRecord, policy: RoutePolicy, available: dict[str, str]) -> str | None:
    """The method whose answer ``policy``'s route gives for one record: the first planned method whose
    evidence passes and is sure enough, else the surest unsure one (None: no method passes)."""
    unsure: tuple[str, MethodOutcome] | None = None
    for step in plan_route(record.signals, available, policy):
        outcome = record.outcomes.get(step.method)
        if outcome is None or not outcome.passes:
            continue
        if outcome.confidence is not None and outcome.confidence < policy.min_confidence:
            if unsure is None or (unsure[1].confidence or 0.0) < outcome.confidence:
                unsure = (step.method, outcome)
            continue
        return step.method
    return unsure[0] if unsure is not None else None


CONFIDENCE_GRID = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)


def learn_min_confidence(
    policy: RoutePolicy, records: Sequence[RouteRecord], available: dict[str, str]
) -> RoutePolicy:
    """``policy`` with the confidence under which an answer passes the question on that answers most of
    ``records`` (ties: the one nearest the policy's own)."""
    if not any(o.confidence is not None for r in records for o in r.outcomes.values()):
        return policy
    scored = [
        (replay(replace(policy, min_confidence=c), records, available), -abs(c - policy.min_confidence), c)
        for c in CONFIDENCE_GRID
    ]
    return replace(policy, min_confidence=max(scored)[2])


MIN_GAIN = 0.01  # a learned policy replaces the default only when it answers this share more


def learn_policy(
    records: Sequence[RouteRecord],
    methods: Sequence[str],
    default: RoutePolicy = DEFAULT_POLICY,
    min_gain: float = MIN_GAIN,
    first: Sequence[str] = (),
) -> tuple[RoutePolicy, dict[str, float]]:
    """The policy with the best weighted Hits@1 over ``records``: a threshold from which the chain
    classifier is sure (one of its scores' deciles, or never), and for each kind of question (several
    entities, one with a sure chain, one without) the order of ``methods`` that answers most. Ties keep
    ``default``'s choice, and so does a gain under ``min_gain`` (a few hundred held-out questions do not
    tell a point apart from noise). Methods in ``first`` come before the others in every order: those
    whose score on ``records`` says how they do on users' questions, when the others' does not (it is
    measured on wordings like the ones they were trained on). Returns the policy and what it and
    ``default`` score."""
    import itertools

    def partitioned(order: Sequence[str]) -> tuple[str, ...]:
        return tuple(m for m in order if m in first) + tuple(m for m in order if m not in first)

    default = RoutePolicy(
        default.sure_qtype,
        partitioned(default.several_entities),
        partitioned(default.one_entity_sure),
        partitioned(default.one_entity_unsure),
    )
    available = dict.fromkeys(methods, "")
    scores = sorted(r.signals.qtype_score for r in records if r.signals.qtype_score is not None)
    thresholds = {default.sure_qtype, NEVER_SURE}
    if scores:
        thresholds.update(scores[int(len(scores) * q / 10)] for q in range(10))
    orders = [order for order in itertools.permutations(methods) if partitioned(order) == order]

    def bucket(record: RouteRecord, sure: float) -> str:
        s = record.signals
        if s.spans >= 2:
            return "several"
        if s.templates_fit and s.qtype_score is not None and s.qtype_score >= sure:
            return "sure"
        return "unsure"

    def answered_by(members: Sequence[RouteRecord], order: Sequence[str], sure: float) -> float:
        # as the route will run it: plan_route's own rules (sgrag first where the path scorer ranks, sgrag
        # only where it has templates) and the unsure answers that pass the question on
        every = tuple(order)
        policy = replace(
            default, sure_qtype=sure, several_entities=every, one_entity_sure=every, one_entity_unsure=every
        )
        return sum(replayed_hit(record, policy, available) for record in members)

    defaults = {
        "several": default.several_entities,
        "sure": default.one_entity_sure,
        "unsure": default.one_entity_unsure,
    }
    best: tuple[float, float, RoutePolicy] | None = None
    for sure in sorted(thresholds):
        groups: dict[str, list[RouteRecord]] = {"several": [], "sure": [], "unsure": []}
        for record in records:
            groups[bucket(record, sure)].append(record)
        chosen: dict[str, tuple[str, ...]] = {}
        total = 0.0
        for name, members in groups.items():
            fallback = partitioned(
                tuple(m for m in defaults[name] if m in methods)
                + tuple(m for m in methods if m not in defaults[name])
            )
            kept = answered_by(members, fallback, sure)
            best_order, best_score = fallback, kept
            for order in orders:
                score = answered_by(members, order, sure)
                if score > best_score + 1e-9:
                    best_order, best_score = tuple(order), score
            # Another order than the default's must answer two more of the bucket's questions: one of 120
            # orders that wins by one on a sample is as likely luck as a better route.
            margin = 2 * max((r.weight for r in members), default=0.0)
            if best_score - kept < margin - 1e-9:
                best_order, best_score = fallback, kept
            chosen[name] = best_order
            total += best_score
        policy = RoutePolicy(
            sure, chosen["several"], chosen["sure"], chosen["unsure"], default.min_confidence
        )
        closeness = -abs(sure - default.sure_qtype) if sure != NEVER_SURE else -NEVER_SURE
        if best is None or (total, closeness) > (best[0], best[1]):
            best = (total, closeness, policy)
    assert best is not None
    # The orders chosen, the confidence that passes a question on is chosen for them (and for the default's),
    # on the KG's own questions only: a scorer fine-tuned on synthesised wordings is surer of them than of
    # people's (the threshold they chose, 0.1, gave auto 57.8 on our held-out FB15k-237 questions).
    learned_policy = learn_min_confidence(best[2], records, available) if not first else best[2]
    default = learn_min_confidence(default, records, available) if not first else default
    best = (replay(learned_policy, records, available), best[1], learned_policy)
    weight = sum(r.weight for r in records) or 1.0
    learned, kept = best[0] / weight, replay(default, records, available) / weight
    report = {
        "learned": round(learned, 4),
        "default": round(kept, 4),
        "kept_default": float(learned - kept < min_gain),
    }
    return (best[2] if learned - kept >= min_gain else default), report
