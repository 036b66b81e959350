"""auto's route for one KG, measured: every method answers the KG's held-out training questions once, and
:func:`kgqa.qa.routing.learn_policy` replays policies over what they did.

The questions are held out from every model the methods read: the labelled questions of a held-out share
of wordings or, for a KG without labelled questions, synthesised questions worded in the family no model
saw (:mod:`kgqa.training.wording`). When several pools are given, each weighs the same, whatever its size.
Topic entities are linked from the question text, once per question, as a user gets them.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from kgqa.core.errors import CannotRunHere
from kgqa.core.text import normalize_answer
from kgqa.core.types import LinkedEntity
from kgqa.learn.answer_scorer import ScoredQuestion, fit_answer_scorer
from kgqa.models import kg_models, registry
from kgqa.models.path_scorer import ranks_sgrag
from kgqa.qa.answer_scoring import AnswerScorer, MethodRun, answer_rows
from kgqa.qa.answering import QuestionAnswerer
from kgqa.qa.routing import (
    MethodOutcome,
    RoutePolicy,
    RouteRecord,
    answered,
    asked_kind,
    installed_classifiers,
    learn_policy,
    question_signals,
    replayed_choice,
    unfamiliar_threshold,
)
from kgqa.retrieve.linking import link_entities
from kgqa.training.questions import LabelledQuestion, entity_names
from neo4j import Driver
from tqdm import tqdm


@dataclass
class RouteMeasurement:
    policy: RoutePolicy
    scores: dict[str, float]  # the learned and the default policy's Hits@1 over the records
    answer_scorer: AnswerScorer | None  # None: no right and wrong answers to learn from
    methods: dict[str, dict[str, float]] = field(default_factory=dict)  # method -> pool -> Hits@1
    questions: dict[str, int] = field(default_factory=dict)  # pool -> questions asked
    unavailable: dict[str, str] = field(default_factory=dict)  # method -> why it could not run


def sample_route_questions(
    pools: dict[str, Sequence[LabelledQuestion]], per_pool: int, seed: int
) -> dict[str, list[LabelledQuestion]]:
    """At most ``per_pool`` questions of each pool, the same share of each hop count."""
    rng = random.Random(seed)
    out: dict[str, list[LabelledQuestion]] = {}
    for name, questions in pools.items():
        by_hops: dict[int | None, list[LabelledQuestion]] = defaultdict(list)
        for q in questions:
            by_hops[q.hops].append(q)
        chosen: list[LabelledQuestion] = []
        total = len(questions)
        for _hops, group in sorted(by_hops.items(), key=lambda kv: kv[0] or 0):
            take = min(len(group), max(1, round(per_pool * len(group) / max(total, 1))))
            chosen += rng.sample(group, take)
        out[name] = chosen[:per_pool]
    return out


def method_hits(driver: Driver, kg: str, method: str, questions: Sequence[LabelledQuestion]) -> float:
    """Hits@1 of ``method`` on ``questions`` (their topics linked from the text, as users ask)."""
    answerer = QuestionAnswerer(driver, method, kg)
    names = entity_names(driver, kg, [a for q in questions for a in q.answer_ids])
    hits = 0
    for q in tqdm(questions, desc=f"{method}: asking", unit="q", leave=False):
        gold = {normalize_answer(names[a]) for a in q.answer_ids if a in names}
        try:
            result = answerer.ask(q.text)
        except CannotRunHere:
            continue
        hits += bool(result.answers) and normalize_answer(result.answers[0]) in gold
    return hits / max(len(questions), 1)


@dataclass(frozen=True)
class _Asked:
    """One held-out question as every method answered it (the runs that passed the fit check)."""

    text: str
    topics: list[LinkedEntity]
    gold: set[str]
    runs: dict[str, MethodRun]


def scored_questions(
    kg: str,
    records: Sequence[RouteRecord],
    asked: Sequence[_Asked],
    policy: RoutePolicy,
    available: dict[str, str],
) -> list[ScoredQuestion]:
    """The answer scorer's examples: the answers of the method ``policy``'s route chooses, one question
    each."""
    scorer = registry.path_scorer(kg, outranked_too=True)
    out = []
    for record, question in zip(records, asked, strict=True):
        method = replayed_choice(record, policy, available)
        run = question.runs.get(method) if method is not None else None
        rows = answer_rows(question.text, question.topics, run, scorer) if run is not None else []
        labels = [normalize_answer(r.answer) in question.gold for r in rows]
        out.append(ScoredQuestion(rows, labels, record.weight))
    return out


def measure_route(
    driver: Driver,
    kg: str,
    pools: dict[str, Sequence[LabelledQuestion]],
    methods: Sequence[str],
    progress: Callable[[str], None] = lambda _m: None,
    first: Sequence[str] = (),
) -> RouteMeasurement:
    """Asks every method each pool's questions and learns the policy from what they did; ``first``: the
    methods planned before the others (:func:`kgqa.qa.routing.learn_policy`)."""
    answerers: dict[str, QuestionAnswerer] = {}
    unavailable: dict[str, str] = {}
    for method in methods:
        try:
            answerers[method] = QuestionAnswerer(driver, method, kg)
        except CannotRunHere as exc:
            unavailable[method] = str(exc)
    classifiers = installed_classifiers(kg)
    path_scorer = ranks_sgrag(kg_models.part_dir(kg, "path_scorer"))
    names = entity_names(driver, kg, [a for qs in pools.values() for q in qs for a in q.answer_ids])
    records: list[RouteRecord] = []
    asked: list[_Asked] = []  # per record: what the answer scorer learns from
    pooled: list[str] = []  # per record: its pool
    hits: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for pool, questions in pools.items():
        weight = 1.0 / max(len(questions), 1)
        for q in tqdm(questions, desc=f"route: asking every method ({pool})", unit="q", leave=False):
            gold = {normalize_answer(names[a]) for a in q.answer_ids if a in names}
            topics = link_entities(driver, q.text, kg)
            signals = question_signals(q.text, topics, classifiers is not None, classifiers, path_scorer)
            outcomes: dict[str, MethodOutcome] = {}
            runs: dict[str, MethodRun] = {}
            for method, answerer in answerers.items():
                try:
                    result = answerer.ask(q.text, topics) if topics else None
                except CannotRunHere:
                    result = None
                if result is None:
                    outcomes[method] = MethodOutcome(False, False)
                    hits[method][pool].append(0.0)
                    continue
                passes = not answered(result.evidence, asked_kind(q.text))
                top = result.answers[0] if result.answers else ""
                hit = bool(top) and normalize_answer(top) in gold
                outcomes[method] = MethodOutcome(passes, hit, result.evidence.confidence)
                hits[method][pool].append(float(hit))
                if passes and result.answers:
                    runs[method] = MethodRun(method, result.evidence, result.answer)
            records.append(RouteRecord(signals, outcomes, weight))
            asked.append(_Asked(q.text, topics, gold, runs))
            pooled.append(pool)
    usable = [m for m in methods if m in answerers]
    if "labelled" in pools:
        # A synthesised question asks of one topic: two spans linked in it are a word of the relation's name
        # taken for an entity, not two things named. Which methods answer questions naming two things is
        # for the KG's own questions to say (on MetaQA's, the synthesised ones sent them to sgrag first:
        # 98.5 -> 72.7 on the two-entity set's tune part).
        kept = [
            i
            for i, (r, p) in enumerate(zip(records, pooled, strict=True))
            if p == "labelled" or r.signals.spans < 2
        ]
        records = [records[i] for i in kept]
        asked = [asked[i] for i in kept]
        pooled = [pooled[i] for i in kept]
    policy, scores = learn_policy(records, usable, first=first)
    # Its probabilities are meant for people's questions: the KG's own say how often an answer is right when
    # it has any (fitted on both pools, first answers given 0.9 or more were right for 82 % of WebQSP's
    # test questions, against 90 % fitted on WebQSP's alone).
    calibrating = [i for i, p in enumerate(pooled) if p == "labelled"] or list(range(len(records)))
    answer_scorer = fit_answer_scorer(
        scored_questions(
            kg,
            [records[i] for i in calibrating],
            [asked[i] for i in calibrating],
            policy,
            dict.fromkeys(usable, ""),
        )
    )
    if answer_scorer is not None:
        m = answer_scorer.metrics
        progress(
            f"answer scorer (cross-validated on the same questions): first answers given at least 0.9 "
            f"right for {m['sure_right']:.3f}; a right answer first for {m['reordered_right']:.3f} "
            f"reordered by it, {m['first_right']:.3f} as the method ordered them: "
            + ("reordered" if answer_scorer.reorder else "the method's order kept")
        )
    if "labelled" in pools:
        # people's questions worded unlike any of the KG's own go to the methods that read no wording first
        threshold = unfamiliar_threshold(
            [r.signals.familiarity for r, p in zip(records, pooled, strict=True) if p == "labelled"]
        )
        policy = replace(policy, unfamiliar_below=threshold)
        progress(
            f"a question less like the KG's questions than {threshold:.2f} goes to FRAG and SimGRAG first"
        )
    progress(
        f"route learned on {len(records)} held-out questions: Hits@1 {scores['learned']:.3f}, the default "
        f"route {scores['default']:.3f}: "
        + ("the default kept" if scores["kept_default"] else "the learned one kept")
    )
    return RouteMeasurement(
        policy,
        scores,
        answer_scorer,
        {
            m: {pool: round(sum(v) / len(v), 4) for pool, v in by_pool.items() if v}
            for m, by_pool in hits.items()
        },
        {pool: len(qs) for pool, qs in pools.items()},
        unavailable,
    )
