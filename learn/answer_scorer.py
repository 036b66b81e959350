"""auto's answer scorer, fitted and judged on the KG's held-out questions (:mod:`kgqa.qa.answer_scoring`).

Every method already answered each of the route's held-out questions once (:mod:`kgqa.learn.route`); the
answers of the method the learned route chooses are the rows, and whether each is a gold answer the label.
The scorer is judged by cross-validation over the questions (no question's rows are scored by a model that
read them): auto reorders its answers by it only when that puts a right answer first for :data:`MIN_GAIN`
more of them. Its calibration (how often first answers given a probability of at least 0.9 were right) is
measured the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from kgqa.qa.answer_scoring import AnswerRow, AnswerScorer

FOLDS = 5
MIN_GAIN = 0.01  # of the questions' weight that reordering must put right
SURE = 0.9


@dataclass(frozen=True)
class ScoredQuestion:
    """One held-out question: the rows of the answers of the method the route chose, their labels and the
    question's weight."""

    rows: list[AnswerRow]
    labels: list[bool]
    weight: float


def _fit(questions: Sequence[ScoredQuestion], seed: int) -> AnswerScorer | None:
    from sklearn.linear_model import LogisticRegression

    x = np.asarray([r.features for q in questions for r in q.rows], dtype=np.float64)
    y = np.asarray([label for q in questions for label in q.labels], dtype=np.int64)
    if len(set(y.tolist())) < 2:
        return None
    weights = np.asarray([q.weight for q in questions for _ in q.rows], dtype=np.float64)
    model = LogisticRegression(C=1.0, max_iter=2000, random_state=seed)
    model.fit(x, y, sample_weight=weights / weights.mean())
    return AnswerScorer(tuple(float(w) for w in model.coef_[0]), float(model.intercept_[0]), reorder=False)


def fit_answer_scorer(questions: Sequence[ScoredQuestion], seed: int = 13) -> AnswerScorer | None:
    """The scorer fitted on every question, with ``reorder`` and its cross-validated metrics; None when the
    questions hold no right and wrong answers to learn from."""
    usable = [q for q in questions if q.rows]
    full = _fit(usable, seed)
    if full is None:
        return None
    order = np.random.default_rng(seed).permutation(len(usable))
    total = kept = reordered = 0.0
    sure = {False: [0.0, 0.0], True: [0.0, 0.0]}  # reorder -> [weight given >= SURE, of it right]
    for fold in range(FOLDS):
        held = set(order[fold::FOLDS].tolist())
        model = _fit([usable[i] for i in range(len(usable)) if i not in held], seed)
        if model is None:
            continue
        for i in sorted(held):
            q = usable[i]
            probabilities = model.probabilities(q.rows)
            best = int(np.argmax(probabilities))
            total += q.weight
            kept += q.weight * q.labels[0]
            reordered += q.weight * q.labels[best]
            for reorder, first in ((False, 0), (True, best)):
                if probabilities[first] >= SURE:
                    sure[reorder][0] += q.weight
                    sure[reorder][1] += q.weight * q.labels[first]
    reorder = total > 0 and (reordered - kept) / total >= MIN_GAIN
    given, right = sure[reorder]
    metrics = {
        "first_right": round(kept / total, 4) if total else 0.0,
        "reordered_right": round(reordered / total, 4) if total else 0.0,
        "sure_share": round(given / total, 4) if total else 0.0,
        "sure_right": round(right / given, 4) if given else 0.0,
    }
    return AnswerScorer(full.weights, full.bias, reorder=reorder, metrics=metrics)
