"""SG-RAG (method ``sgrag``): question -> question type -> Cypher template -> subgraphs -> MOT.

1. A query-text classifier (:mod:`kgqa.training.question_classifiers`) names the MetaQA question type, e.g.
   ``actor_to_movie_to_director``; the topic entity is masked first so only the wording decides.
2. That type's template (``cypher_templates/sgrag/<qtype>.cypher.j2``) follows its fixed relation path from
   the topic entities (``$kg``, ``$topic_ids``) and returns every matched path as ``[head, relation, tail]``
   triplets in the KG's direction, plus the path's end node. MetaQA semantics: no node of a path after the
   start is the topic entity. When the best type matches nothing from these entities (say a movie-start type
   for an actor), the next-best types are tried, up to ``max_types``.
3. The subgraphs are merged and go through MOT (:func:`kgqa.retrieve.mot.dedup_order`: the in-database
   ``kgqa.triplets.dedupOrder``), so the prompt reads outward from the topic entity.

``metadata["answer_candidates"]`` holds the template's end nodes, most supporting paths first (ties: the order
the database returned them). ``k`` caps the triplets, but never at the cost of an answer: one supporting path
per answer is always kept, then further paths are added while they fit.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from kgqa.graph.cypher import render, template_names
from kgqa.retrieve.base import Retriever
from kgqa.retrieve.evidence import Evidence, LinkedEntity, Triplet
from kgqa.retrieve.mot import dedup_order
from kgqa.training.metaqa_data import BRACKET, qtype_hops
from kgqa.training.question_classifiers import (
    QtypePrediction,
    QuestionClassifiers,
    hop_range,
    load_or_train_question_classifiers,
)
from neo4j import Driver, RoutingControl

TEMPLATE_DIR = "sgrag"
DEFAULT_MAX_PATHS = 20_000  # LIMIT guard of the templates, per question
DEFAULT_MAX_TYPES = 3  # question types tried, best first, until one matches


@lru_cache(maxsize=1)
def sgrag_qtypes() -> frozenset[str]:
    """Question types that have a template (``_``-prefixed files are shared macros)."""
    prefix = f"{TEMPLATE_DIR}/"
    return frozenset(
        n.removeprefix(prefix)
        for n in template_names()
        if n.startswith(prefix) and not n.removeprefix(prefix).startswith("_")
    )


@dataclass
class TemplateMatch:
    """What one question-type template returned for the topic entities."""

    qtype: str
    paths: list[list[Triplet]] = field(default_factory=list)
    answers: list[str] = field(default_factory=list)  # end nodes, in row order, one per path
    truncated: bool = False  # the $max_paths guard was hit


def run_template(
    driver: Driver, qtype: str, kg: str, topic_ids: Sequence[str], max_paths: int = DEFAULT_MAX_PATHS
) -> TemplateMatch:
    """Runs ``cypher_templates/sgrag/<qtype>`` for the topic entity ids."""
    if qtype not in sgrag_qtypes():
        raise ValueError(f"no SG-RAG template for question type {qtype!r}")
    records, _summary, _keys = driver.execute_query(
        render(f"{TEMPLATE_DIR}/{qtype}"),
        {"kg": kg, "topic_ids": list(topic_ids), "max_paths": int(max_paths)},
        routing_=RoutingControl.READ,
    )
    match = TemplateMatch(qtype, truncated=len(records) >= max_paths)
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


def entity_ids_by_name(driver: Driver, kg: str, names: Sequence[str]) -> dict[str, str]:
    """Exact ``(kg, name)`` lookups in one query: name -> Entity id, for the names that exist."""
    if not names:
        return {}
    records, _summary, _keys = driver.execute_query(
        "UNWIND $names AS name MATCH (e:Entity {kg: $kg, name: name}) RETURN e.name AS name, e.id AS id",
        {"kg": kg, "names": list(dict.fromkeys(names))},
        routing_=RoutingControl.READ,
    )
    return {str(r["name"]): str(r["id"]) for r in records}


def bracket_names(question: str) -> list[str]:
    return list(dict.fromkeys(m.group(1).strip() for m in BRACKET.finditer(question)))


def bracket_topic_entities(
    driver: Driver, question: str, kg: str, known: dict[str, str] | None = None
) -> list[LinkedEntity]:
    """Topic entities from MetaQA ``[brackets]`` by exact name (tests/benchmarks; real linking is elsewhere).

    ``known`` (name -> id, from :func:`entity_ids_by_name`) saves the lookup when names were resolved in bulk.
    """
    names = bracket_names(question)
    found = known if known is not None else entity_ids_by_name(driver, kg, names)
    return [LinkedEntity(id=found[n], name=n, score=1.0, how="bracket", span=n) for n in names if n in found]


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
        self._classifiers = classifiers
        self.max_paths = max_paths
        self.max_types = max_types

    @property
    def classifiers(self) -> QuestionClassifiers:
        if self._classifiers is None:
            self._classifiers = load_or_train_question_classifiers()
        return self._classifiers

    def classify(self, question: str, topic_entities: Sequence[LinkedEntity] = ()) -> QtypePrediction:
        texts = [t for e in topic_entities for t in (e.span, e.name) if t]
        return self.classifiers.predict_qtype(question, texts)

    def _search(self, question: str, kg: str, k: int, topic_entities: list[LinkedEntity]) -> Evidence:
        began = time.perf_counter()
        prediction = self.classify(question, topic_entities)
        classified = time.perf_counter()
        metadata: dict[str, object] = {
            "qtype": prediction.qtype,
            "hops": prediction.hops,
            "hop_range": hop_range(prediction.hops),
            "qtype_classified": prediction.qtype,
            "qtype_score": prediction.score,
            "qtype_ranked": [[q, round(s, 4)] for q, s in prediction.ranked],
            "answer_candidates": [],
        }
        evidence = Evidence(
            question=question,
            method=self.name,
            kg=kg,
            topic_entities=list(topic_entities),
            triplets=[],
            metadata=metadata,
        )
        if not topic_entities:
            metadata["reason"] = "no topic entity was linked"
            evidence.latency_ms["classify"] = (classified - began) * 1000
            return evidence

        topic_ids = list(dict.fromkeys(e.id for e in topic_entities))
        tried: list[str] = []
        match = TemplateMatch(prediction.qtype)
        for qtype, _score in prediction.ranked:
            if len(tried) >= max(1, self.max_types):
                break
            if qtype not in sgrag_qtypes():
                continue
            tried.append(qtype)
            match = run_template(self.driver, qtype, kg, topic_ids, self.max_paths)
            if match.paths:
                break
        matched = time.perf_counter()

        answers, support, first_path = rank_answers(match)
        chosen, _count = select_paths(match, answers, first_path, k)
        paths = [match.paths[i] for i in chosen]
        topic_names = list(dict.fromkeys(e.name for e in topic_entities))
        evidence.triplets = dedup_order(self.driver, (t for p in paths for t in p), topic_names)
        evidence.paths = paths
        ordered = time.perf_counter()

        total = max(1, len(match.paths))
        used = match.qtype if match.paths else prediction.qtype  # nothing matched: report the classifier's
        metadata.update(
            {
                "qtype": used,
                "hops": qtype_hops(used),
                "hop_range": hop_range(qtype_hops(used)),
                "qtype_classified": prediction.qtype,
                "qtypes_tried": tried,
                "template": f"{TEMPLATE_DIR}/{used}",
                "answer_candidates": answers,
                "answer_support": support,
                "answer_scores": [s / total for s in support],
                "paths_matched": len(match.paths),
                "paths_in_evidence": len(paths),
                "paths_truncated": match.truncated,
                "k_exceeded_to_keep_answers": len(evidence.triplets) > k,
            }
        )
        if not match.paths:
            metadata["reason"] = f"no path of types {tried} starts at the topic entities"
        evidence.latency_ms.update(
            {
                "classify": (classified - began) * 1000,
                "template": (matched - classified) * 1000,
                "mot": (ordered - matched) * 1000,
            }
        )
        return evidence
