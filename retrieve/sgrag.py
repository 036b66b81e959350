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

When a GSR model is installed (``kgqa train gsr``) and no template matches (a question of a type MetaQA does
not have, or a KG that is not MetaQA), or the classifier is unsure about a question with one linked entity
(its score below ``FALLBACK_BELOW``), the first generated chain that reaches something gives the evidence
instead, and the trace says why (``fallback_reason``, ``gsr_fallback``). The rule was chosen on the tune
parts of our free-form and two-entity sets and checked on their held-out parts
(``bench/sgrag_gsr_fallback.py``: Hits@1 58.6 -> 69.0 on free-form held-out questions, 37.0 -> 33.3 on
two-entity ones).

The evidence's ``answer_candidates`` are the template's end nodes, most supporting paths first (ties: the
order the database returned them), and ``hops`` is the type's hop count. ``k`` caps the triplets, but never
at the cost of an answer: one supporting path per answer is always kept, then further paths while they fit.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from kgqa.core.errors import ModelMissing
from kgqa.core.metaqa import qtype_hops, qtype_steps
from kgqa.core.types import Evidence, LinkedEntity, MethodTrace
from kgqa.models import registry
from kgqa.models.question_classifiers import QtypePrediction, QuestionClassifiers, hop_range
from kgqa.retrieve.base import Retriever
from kgqa.retrieve.gsr import GsrRetriever, GsrTrace
from kgqa.retrieve.mot import dedup_order
from kgqa.retrieve.paths import (
    DEFAULT_MAX_PATHS,
    TemplateMatch,
    rank_answers,
    run_steps,
    select_paths,
    steps_query,
)
from neo4j import Driver

DEFAULT_MAX_TYPES = 3  # question types tried, best first, until one matches
# The question-type classifier's score (not a probability) below which a GSR chain is preferred for a question
# with one linked entity: the 90th percentile of its scores on the tune parts of our free-form and two-entity
# sets, the best rule there (bench/sgrag_gsr_fallback.py; a chain starts from one entity, so questions naming
# several keep their templates).
FALLBACK_BELOW = 1.145
# No floor on the answering chain's probability: none paid on those tune parts (the same bench), although
# code-like noise in a question can mislead both the classifier and GSR (tests/test_ask_cli.py).


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
    # No template matched and a GSR model's generated chain gave the evidence instead (its trace):
    # a chain is a template nobody wrote.
    gsr_fallback: GsrTrace | None = None
    fallback_reason: str = ""


def path_query(qtype: str) -> str:
    """The Cypher of ``qtype``'s relation path; a ValueError for anything that is not a MetaQA type."""
    return steps_query(qtype_steps(qtype), f"question type {qtype!r}")


def run_template(
    driver: Driver, qtype: str, kg: str, topic_ids: Sequence[str], max_paths: int = DEFAULT_MAX_PATHS
) -> TemplateMatch:
    """Follows ``qtype``'s relation path from the topic entity ids."""
    return run_steps(driver, path_query(qtype), qtype, kg, topic_ids, max_paths)


class SgragRetriever(Retriever):
    name = "sgrag"

    def __init__(
        self,
        driver: Driver,
        classifiers: QuestionClassifiers | None = None,
        max_paths: int = DEFAULT_MAX_PATHS,
        max_types: int = DEFAULT_MAX_TYPES,
        fallback: GsrRetriever | None | bool = True,
        fallback_below: float | None = FALLBACK_BELOW,
    ) -> None:
        """``fallback``: the GSR retriever to ask when no template matches or the classifier scores below
        ``fallback_below`` (None: only when no template matches); True: the default GSR model when one is
        installed; False or None: none."""
        super().__init__(driver)
        self.classifiers = classifiers or registry.question_classifiers()
        self.max_paths = max_paths
        self.max_types = max_types
        if fallback is True:
            try:
                fallback = GsrRetriever(driver, keep=1)
            except ModelMissing:
                fallback = None
        self.fallback: GsrRetriever | None = fallback or None
        self.fallback_below = fallback_below

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
        unsure = (
            self.fallback_below is not None and prediction.score < self.fallback_below and len(topic_ids) == 1
        )
        if self.fallback is not None and unsure:  # the chain is preferred: no template query is needed
            reason = f"classifier unsure ({prediction.score:.3f} < {self.fallback_below})"
            if (chained := self._try_chain(question, kg, k, evidence, trace, reason, began)) is not None:
                return chained
        match = TemplateMatch(prediction.qtype)
        for qtype, _score in prediction.ranked[: max(1, self.max_types)]:
            trace.qtypes_tried.append(qtype)
            match = run_template(self.driver, qtype, kg, topic_ids, self.max_paths)
            if match.paths:
                break
        matched = time.perf_counter()
        if self.fallback is not None and not match.paths and not unsure:  # unsure: the chain was tried
            reason = "no template matched"
            if (chained := self._try_chain(question, kg, k, evidence, trace, reason, began)) is not None:
                return chained

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

    def _try_chain(
        self,
        question: str,
        kg: str,
        k: int,
        evidence: Evidence,
        trace: SgragTrace,
        reason: str,
        began: float,
    ) -> Evidence | None:
        """The evidence of GSR's first chain that reached something, ordered by MOT like a template's; None
        when no generated chain answers."""
        assert self.fallback is not None
        generated = self.fallback.retrieve(question, kg, k, evidence.topic_entities)
        if not generated.answer_candidates or not isinstance(generated.trace, GsrTrace):
            return None
        trace.fallback_reason = reason
        trace.gsr_fallback = generated.trace
        trace.qtype = "generated chain"
        trace.hop_range = hop_range(generated.hops or 1)
        evidence.paths = generated.paths
        evidence.triplets = dedup_order(
            self.driver, (t for p in evidence.paths for t in p), evidence.topic_names()
        )
        support = generated.answer_scores
        total = max(1.0, sum(support))
        evidence.answer_candidates = list(generated.answer_candidates)
        evidence.answer_scores = [s / total for s in support]
        evidence.hops = generated.hops
        trace.answer_support = [int(s) for s in support]
        trace.paths_matched = trace.paths_in_evidence = len(evidence.paths)
        evidence.latency_ms["with_gsr_fallback"] = (time.perf_counter() - began) * 1000
        return evidence
