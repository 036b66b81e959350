"""auto's answer scorer: one probability per answer, the same scale whichever method found it.

Each method scores its answers on a scale of its own (a share of a chain's answers, a sum of chain features, a
graph distance). This scorer puts the answers of the method ``auto`` chose on one scale: the probability that
each is right, a logistic model fitted by ``kgqa train all`` on the KG's held-out questions
(:mod:`kgqa.learn.route`) over what any method's answers show (:data:`ANSWER_FEATURES`):

* where the method put it: first, its rank, whether it ties the first, how many answers it gave;
* how sure the method said it was (sgrag's path-scorer probability), and which method it was;
* the walk it was read off (:mod:`kgqa.answer.support`): its length, and how well the KG's fine-tuned
  question-to-path scorer says that chain answers the question, against the best chain of any answer.

The probability of the first answer is auto's ``confidence``. The answers are reordered by it only where the
KG's held-out questions said that puts a right answer first more often (``AnswerScorer.reorder``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from kgqa.answer.base import Answer
from kgqa.answer.support import answer_support
from kgqa.core.chains import parse_chain_key
from kgqa.core.types import Evidence, LinkedEntity
from kgqa.models.path_scorer import PathScorer
from kgqa.qa.methods import AUTO_CANDIDATES

ANSWER_FEATURES = (
    "first",
    "rank_log",
    "tied_first",
    "answers_log",
    "confidence",
    "has_confidence",
    "hops_1",
    "hops_2",
    "hops_more",
    "no_walk",
    "chain_cosine",
    "chain_cosine_gap",
    *(f"method_{m}" for m in AUTO_CANDIDATES),
)
SCORED_PER_METHOD = 10  # answers of each question the scorer learns from (auto scores all it gives)
FORMAT = 1


@dataclass(frozen=True)
class MethodRun:
    """What the method auto chose returned for a question, and the answer read off it."""

    method: str
    evidence: Evidence
    answer: Answer


@dataclass(frozen=True)
class AnswerRow:
    method: str
    answer: str
    rank: int
    features: tuple[float, ...]  # in ANSWER_FEATURES order


def answer_rows(
    question: str,
    topics: Sequence[LinkedEntity],
    run: MethodRun,
    scorer: PathScorer | None,
    limit: int = SCORED_PER_METHOD,
) -> list[AnswerRow]:
    """One row per answer among the first ``limit`` of ``run``."""
    supports = answer_support(run.evidence, run.answer, limit)
    cosines = _chain_cosines(question, topics, [s.chain for s in supports], scorer)
    best = max(cosines.values(), default=0.0)
    scores = run.answer.scores
    rows = []
    for rank, support in enumerate(supports):
        chain = support.chain
        hops = chain.count("|") + 1 if chain else 0
        cosine = cosines.get(chain, 0.0)
        values = {
            "first": float(rank == 0),
            "rank_log": math.log1p(rank),
            "tied_first": float(rank < len(scores) and scores[rank] == scores[0]),
            "answers_log": math.log1p(len(run.answer.answers)),
            "confidence": run.evidence.confidence or 0.0,
            "has_confidence": float(run.evidence.confidence is not None),
            "hops_1": float(hops == 1),
            "hops_2": float(hops == 2),
            "hops_more": float(hops > 2),
            "no_walk": float(hops == 0),
            "chain_cosine": cosine,
            "chain_cosine_gap": cosine - best if chain else -1.0,
            **{f"method_{m}": float(run.method == m) for m in AUTO_CANDIDATES},
        }
        rows.append(AnswerRow(run.method, support.answer, rank, tuple(values[f] for f in ANSWER_FEATURES)))
    return rows


def _chain_cosines(
    question: str, topics: Sequence[LinkedEntity], chains: Sequence[str], scorer: PathScorer | None
) -> dict[str, float]:
    """The path scorer's cosine of the question and each chain (none without a scorer)."""
    keys = sorted({c for c in chains if c})
    if scorer is None or not keys:
        return {}
    spans = [t for e in topics for t in (e.span, e.name) if t]
    values = scorer.cosines(question, spans, [parse_chain_key(k) for k in keys])
    return {k: float(v) for k, v in zip(keys, values, strict=True)}


@dataclass(frozen=True)
class AnswerScorer:
    """The fitted logistic model, and whether auto orders its answers by it on this KG (its held-out
    questions said a right answer then comes first more often)."""

    weights: tuple[float, ...]  # in ANSWER_FEATURES order
    bias: float
    reorder: bool
    metrics: dict[str, float] = field(default_factory=dict)

    def probabilities(self, rows: Sequence[AnswerRow]) -> np.ndarray:
        if not rows:
            return np.zeros(0)
        x = np.asarray([r.features for r in rows], dtype=np.float64)
        return 1.0 / (1.0 + np.exp(-(x @ np.asarray(self.weights) + self.bias)))

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "weights": dict(zip(ANSWER_FEATURES, self.weights, strict=True)),
            "bias": self.bias,
            "reorder": self.reorder,
            "metrics": self.metrics,
        }


def answer_scorer_from_json(data: Any) -> AnswerScorer | None:
    """The scorer saved with a KG's route; None when there is none, or it was fitted on other features (a
    route trained by another version of kgqa: ``kgqa train route`` renews it)."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return None
    weights = data.get("weights")
    if not isinstance(weights, dict) or set(weights) != set(ANSWER_FEATURES):
        return None
    try:
        return AnswerScorer(
            tuple(float(weights[f]) for f in ANSWER_FEATURES),
            float(data["bias"]),
            bool(data.get("reorder", False)),
            {str(k): float(v) for k, v in (data.get("metrics") or {}).items()},
        )
    except (KeyError, TypeError, ValueError):
        return None


def scored_answer(scorer: AnswerScorer, rows: Sequence[AnswerRow], answer: Answer) -> Answer:
    """``answer`` with each scored answer's probability as its score (any answer ``rows`` left out after
    them, in the method's order, with score 0), reordered by it where ``scorer.reorder``."""
    probabilities = {row.answer: float(p) for row, p in zip(rows, scorer.probabilities(rows), strict=True)}
    scored = [a for a in answer.answers if a in probabilities]
    if scorer.reorder:
        scored.sort(key=lambda a: -probabilities[a])
    rest = [a for a in answer.answers if a not in probabilities]
    explanation = {
        **answer.explanation,
        "scored_by": "auto's answer scorer: the probability that each answer is right",
    }
    return Answer([*scored, *rest], [probabilities[a] for a in scored] + [0.0] * len(rest), explanation)
