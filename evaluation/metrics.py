"""KGQA metrics: pure functions over strings and numbers, no I/O, no database.

Per question (:func:`score_answers`, :func:`evidence_answer_recall`, :func:`evidence_triple_recall`):

- **Hits@1**: the first predicted answer is a gold answer.
- **Hit**: any predicted answer is a gold answer.
- **precision / recall / F1** over the *sets* of normalised answers. An empty prediction scores 0 on all
  three (the SubgraphRAG/NSM convention), as does an empty gold set.
- **answer matching rate** (SG-RAG): |gold ∩ predicted| / |gold|. For a free-text answer (an LLM's raw
  output) a gold answer counts as matched when its normalised form occurs in the normalised text on word
  boundaries, which is how SG-RAG scores LLM answers; for a list of answers (the extractive answerer) it is
  the set recall, since substring matches between entity names ("English" in "The English Patient") would
  be false hits.
- **evidence answer recall**: the share of gold answers that occur among the entities of the retrieved
  triplets.
- **evidence triple recall**: the share of gold triples (the triples on the gold reasoning paths, when
  known) that are among the retrieved triplets.

Aggregated (:func:`aggregate`): means of the per-question values (so ``macro_f1`` is the mean F1), plus
``micro_precision``/``micro_recall``/``micro_f1`` from the summed counts over all questions.

Strings are matched after :func:`normalize_answer`: Unicode accents removed, lowercase, punctuation removed,
the articles a/an/the dropped, whitespace collapsed.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from kgqa.core.text import normalize_answer, normalized_unique


@dataclass(frozen=True)
class AnswerScores:
    """The answer metrics of one question."""

    hits1: float
    hit: float
    precision: float
    recall: float
    f1: float
    match_rate: float
    n_pred: int  # distinct normalised predicted answers
    n_gold: int  # distinct normalised gold answers
    n_correct: int  # |gold ∩ predicted|

    def to_dict(self) -> dict[str, float | int]:
        return asdict(self)


def f1_score(precision: float, recall: float) -> float:
    return 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0


def score_answers(predicted: Sequence[str], gold: Sequence[str], text: str | None = None) -> AnswerScores:
    """The answer metrics for ranked ``predicted`` answers (best first) against ``gold``.

    ``text`` is the free-text answer (an LLM's raw output) the answer matching rate reads; without it the
    rate is the recall of the predicted list.
    """
    pred = normalized_unique(predicted)
    gold_set = set(normalized_unique(gold))
    correct = sum(1 for p in pred if p in gold_set)
    precision = correct / len(pred) if pred else 0.0
    recall = correct / len(gold_set) if gold_set else 0.0
    return AnswerScores(
        hits1=1.0 if pred and pred[0] in gold_set else 0.0,
        hit=1.0 if correct else 0.0,
        precision=precision,
        recall=recall,
        f1=f1_score(precision, recall),
        match_rate=answer_matching_rate(gold, text) if text is not None else recall,
        n_pred=len(pred),
        n_gold=len(gold_set),
        n_correct=correct,
    )


def answer_matching_rate(gold: Sequence[str], text: str | Sequence[str]) -> float:
    """SG-RAG's |gold ∩ predicted| / |gold|: gold answers mentioned, on word boundaries, in the text."""
    gold_set = normalized_unique(gold)
    if not gold_set:
        return 0.0
    pieces = [text] if isinstance(text, str) else list(text)
    # The separator survives no normalisation, so a gold answer cannot match across two predicted answers.
    haystack = " | ".join(normalize_answer(piece) for piece in pieces)
    padded = f" {haystack} "
    return sum(1 for g in gold_set if f" {g} " in padded) / len(gold_set)


def evidence_answer_recall(gold: Sequence[str], triplets: Iterable[Sequence[str]]) -> float:
    """The share of gold answers that appear as an entity (head or tail) of the retrieved triplets."""
    gold_set = set(normalized_unique(gold))
    if not gold_set:
        return 0.0
    entities: set[str] = set()
    for triplet in triplets:
        entities.add(normalize_answer(triplet[0]))
        entities.add(normalize_answer(triplet[2]))
    return len(gold_set & entities) / len(gold_set)


def _triple_key(triplet: Sequence[str]) -> tuple[str, str, str]:
    return normalize_answer(triplet[0]), str(triplet[1]).strip(), normalize_answer(triplet[2])


def evidence_triple_recall(
    gold_triples: Iterable[Sequence[str]] | None, triplets: Iterable[Sequence[str]]
) -> float | None:
    """The share of gold triples among the retrieved triplets; None when they are unknown or empty.

    Triples match on normalised head and tail and the exact relation name, in the stored direction.
    """
    if gold_triples is None:
        return None
    gold_set = {_triple_key(t) for t in gold_triples}
    if not gold_set:
        return None
    retrieved = {_triple_key(t) for t in triplets}
    return len(gold_set & retrieved) / len(gold_set)


# --- aggregation --------------------------------------------------------------------------------------------

MEAN_KEYS = ("hits1", "hit", "precision", "recall", "f1", "match_rate")


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def aggregate(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Aggregate per-question metric rows (``AnswerScores.to_dict()`` plus the two evidence recalls).

    Means are over all rows (``macro_f1`` = mean F1); the evidence triple recall is averaged over the rows
    that have one (``n_triple_recall`` says how many). Micro scores come from the summed counts.
    """
    out: dict[str, Any] = {"n": len(rows)}
    for key in MEAN_KEYS:
        out[key] = _mean([float(r[key]) for r in rows])
    out["macro_f1"] = out.pop("f1")
    pred = sum(int(r["n_pred"]) for r in rows)
    gold = sum(int(r["n_gold"]) for r in rows)
    correct = sum(int(r["n_correct"]) for r in rows)
    if rows:
        micro_p = correct / pred if pred else 0.0
        micro_r = correct / gold if gold else 0.0
        out.update(micro_precision=micro_p, micro_recall=micro_r, micro_f1=f1_score(micro_p, micro_r))
    else:
        out.update(micro_precision=None, micro_recall=None, micro_f1=None)
    ev_answer = [
        float(r["evidence_answer_recall"]) for r in rows if r.get("evidence_answer_recall") is not None
    ]
    out["evidence_answer_recall"] = _mean(ev_answer)
    ev_triple = [
        float(r["evidence_triple_recall"]) for r in rows if r.get("evidence_triple_recall") is not None
    ]
    out["evidence_triple_recall"] = _mean(ev_triple)
    out["n_triple_recall"] = len(ev_triple)
    return out


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0..100) with linear interpolation between closest ranks (numpy's default)."""
    if not values:
        raise ValueError("percentile of no values")
    if not 0 <= q <= 100:
        raise ValueError(f"q must be within 0..100, got {q}")
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100
    low, high = math.floor(rank), math.ceil(rank)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def latency_summary(values: Sequence[float]) -> dict[str, float | int | None]:
    """p50/p95/max/mean of latencies in ms; ``None`` values when there are none."""
    if not values:
        return {"n": 0, "p50": None, "p95": None, "max": None, "mean": None}
    return {
        "n": len(values),
        "p50": percentile(values, 50),
        "p95": percentile(values, 95),
        "max": max(values),
        "mean": sum(values) / len(values),
    }
