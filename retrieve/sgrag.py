"""SG-RAG (method ``sgrag``): question -> question type -> Cypher path template -> subgraphs -> MOT.

1. A query-text classifier (:mod:`kgqa.models.question_classifiers`) names the MetaQA question type, e.g.
   ``actor_to_movie_to_director``; the topic entity is masked first so only the wording decides.
2. The type's relation path (:func:`kgqa.core.metaqa.qtype_steps`) fills the one path template,
   ``cypher_templates/sgrag/path.cypher.j2``, which follows it from the topic entities (``$kg``,
   ``$topic_ids``) and returns every matched path as ``[head, relation, tail]`` triplets in the KG's
   direction, plus the path's end node. MetaQA semantics: no node of a path after the start is the topic
   entity. When the best type matches nothing from these entities (say a movie-start type for an actor), the
   next-best types are tried, up to ``max_types``.
3. The subgraphs are merged and go through MOT (:func:`kgqa.retrieve.mot.dedup_order`: the in-database
   ``kgqa.triplets.dedupOrder``), so the prompt reads outward from the topic entity.

The evidence's ``answer_candidates`` are the template's end nodes, most supporting paths first (ties: the
order the database returned them), and ``hops`` is the type's hop count. ``k`` caps the triplets, but never
at the cost of an answer: one supporting path per answer is always kept, then further paths while they fit.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from kgqa.core.metaqa import qtype_hops, qtype_steps
from kgqa.core.types import Evidence, LinkedEntity, MethodTrace, Triplet
from kgqa.graph.cypher import render
from kgqa.models import registry
from kgqa.models.question_classifiers import QtypePrediction, QuestionClassifiers, hop_range
from kgqa.retrieve.base import Retriever
from kgqa.retrieve.mot import dedup_order
from neo4j import Driver, RoutingControl

DEFAULT_MAX_PATHS = 20_000  # LIMIT guard of the template, per question
DEFAULT_MAX_TYPES = 3  # question types tried, best first, until one matches
_RELATIONSHIP_TYPE = re.compile(r"^\w+$")


@dataclass
class SgragTrace(MethodTrace):
    qtype: str  # the type whose template gave the evidence (the classifier's best when none matched)
    qtype_classified: str
    qtype_score: float
    qtype_ranked: list[tuple[str, float]]
    hop_range: str
    qtypes_tried: list[str] = field(default_factory=list)
    answer_support: list[int] = field(default_factory=list)  # paths ending at each answer candidate
    paths_matched: int = 0
    paths_in_evidence: int = 0
    paths_truncated: bool = False  # the $max_paths guard was hit
    k_exceeded_to_keep_answers: bool = False


@dataclass
class TemplateMatch:
    """What one question type's path returned for the topic entities."""

    qtype: str
    paths: list[list[Triplet]] = field(default_factory=list)
    answers: list[str] = field(default_factory=list)  # end nodes, in row order, one per path
    truncated: bool = False  # the $max_paths guard was hit


def path_query(qtype: str) -> str:
    """The Cypher of ``qtype``'s relation path; a ValueError for anything that is not a MetaQA type."""
    return steps_query(qtype_steps(qtype), f"question type {qtype!r}")


def steps_query(steps: Sequence[tuple[str, str]], what: str) -> str:
    """The path template for a chain of (relation, "out"|"in") steps: a question type's or a generated one."""
    if not all(_RELATIONSHIP_TYPE.match(rel) and way in ("out", "in") for rel, way in steps):  # query text
        raise ValueError(f"{what} has a relation that is not a plain name")
    return render("sgrag/path", steps=list(steps))


def run_template(
    driver: Driver, qtype: str, kg: str, topic_ids: Sequence[str], max_paths: int = DEFAULT_MAX_PATHS
) -> TemplateMatch:
    """Follows ``qtype``'s relation path from the topic entity ids."""
    return run_steps(driver, path_query(qtype), qtype, kg, topic_ids, max_paths)


def run_steps(
    driver: Driver,
    query: str,
    label: str,
    kg: str,
    topic_ids: Sequence[str],
    max_paths: int = DEFAULT_MAX_PATHS,
) -> TemplateMatch:
    """Runs one rendered path template from the topic entity ids."""
    records, _summary, _keys = driver.execute_query(
        query,
        {"kg": kg, "topic_ids": list(topic_ids), "max_paths": int(max_paths)},
        routing_=RoutingControl.READ,
    )
    match = TemplateMatch(label, truncated=len(records) >= max_paths)
    for record in records:
        match.paths.append([(str(h), str(r), str(t)) for h, r, t in record["triplets"]])
        match.answers.append(str(record["answer"]))
    return match


def rank_answers(match: TemplateMatch) -> tuple[list[str], list[int], dict[str, int]]:
    """Distinct end nodes, most supporting paths first (stable); their path counts; each one's first path."""
    support: dict[str, int] = {}
    first_path: dict[str, int] = {}
    for index, answer in enumerate(match.answers):
        support[answer] = support.get(answer, 0) + 1
        first_path.setdefault(answer, index)
    ranked = sorted(support, key=lambda a: -support[a])  # sorted() is stable: ties keep first-seen order
    return ranked, [support[a] for a in ranked], first_path


def select_paths(
    match: TemplateMatch, answers: Sequence[str], first_path: dict[str, int], k: int
) -> tuple[list[int], int]:
    """Path indexes for the evidence: one per answer first (always kept), then others while <= k triplets."""
    chosen: list[int] = []
    triplets: set[Triplet] = set()
    for answer in answers:
        index = first_path[answer]
        chosen.append(index)
        triplets.update(match.paths[index])
    taken = set(chosen)
    for index, path in enumerate(match.paths):
        if index in taken:
            continue
        new = [t for t in path if t not in triplets]
        if len(triplets) + len(new) > k:
            continue
        chosen.append(index)
        triplets.update(new)
    return chosen, len(triplets)


class SgragRetriever(Retriever):
    name = "sgrag"

    def __init__(
        self,
        driver: Driver,
        classifiers: QuestionClassifiers | None = None,
        max_paths: int = DEFAULT_MAX_PATHS,
        max_types: int = DEFAULT_MAX_TYPES,
    ) -> None:
        super().__init__(driver)
        self.classifiers = classifiers or registry.question_classifiers()
        self.max_paths = max_paths
        self.max_types = max_types

    def classify(self, question: str, topic_entities: Sequence[LinkedEntity] = ()) -> QtypePrediction:
        texts = [t for e in topic_entities for t in (e.span, e.name) if t]
        return self.classifiers.predict_qtype(question, texts)

    def retrieve(self, question: str, kg: str, k: int, topic_entities: list[LinkedEntity]) -> Evidence:
        began = time.perf_counter()
        prediction = self.classify(question, topic_entities)
        classified = time.perf_counter()
        trace = SgragTrace(
            qtype=prediction.qtype,
            qtype_classified=prediction.qtype,
            qtype_score=prediction.score,
            qtype_ranked=[(q, round(s, 4)) for q, s in prediction.ranked],
            hop_range=hop_range(prediction.hops),
        )
        evidence = Evidence(question, self.name, kg, list(topic_entities), hops=prediction.hops, trace=trace)
        if not topic_entities:
            evidence.reason = "no topic entity was linked"
            evidence.latency_ms["classify"] = (classified - began) * 1000
            return evidence

        topic_ids = list(dict.fromkeys(e.id for e in topic_entities))
        match = TemplateMatch(prediction.qtype)
        for qtype, _score in prediction.ranked[: max(1, self.max_types)]:
            trace.qtypes_tried.append(qtype)
            match = run_template(self.driver, qtype, kg, topic_ids, self.max_paths)
            if match.paths:
                break
        matched = time.perf_counter()

        answers, support, first_path = rank_answers(match)
        chosen, _count = select_paths(match, answers, first_path, k)
        evidence.paths = [match.paths[i] for i in chosen]
        evidence.triplets = dedup_order(
            self.driver, (t for p in evidence.paths for t in p), evidence.topic_names()
        )
        ordered = time.perf_counter()

        total = max(1, len(match.paths))
        used = match.qtype if match.paths else prediction.qtype  # nothing matched: report the classifier's
        evidence.answer_candidates = answers
        evidence.answer_scores = [s / total for s in support]
        evidence.hops = qtype_hops(used)
        trace.qtype = used
        trace.hop_range = hop_range(qtype_hops(used))
        trace.answer_support = support
        trace.paths_matched = len(match.paths)
        trace.paths_in_evidence = len(evidence.paths)
        trace.paths_truncated = match.truncated
        trace.k_exceeded_to_keep_answers = len(evidence.triplets) > k
        if not match.paths:
            evidence.reason = f"no path of types {trace.qtypes_tried} starts at the topic entities"
        evidence.latency_ms.update(
            {
                "classify": (classified - began) * 1000,
                "template": (matched - classified) * 1000,
                "mot": (ordered - matched) * 1000,
            }
        )
        return evidence
