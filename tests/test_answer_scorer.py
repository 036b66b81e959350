"""auto's answer scorer: its rows, its probabilities, how it is fitted and judged, and how it is saved.

Hand-built evidence and synthetic questions: no database. That the scorer is fitted by `kgqa train all` on a
real KG and read back by auto is checked in tests/test_routing.py.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from kgqa.answer import Answer
from kgqa.core.types import Evidence, LinkedEntity, Triplet
from kgqa.learn.answer_scorer import ScoredQuestion, fit_answer_scorer
from kgqa.qa.answer_scoring import (
    ANSWER_FEATURES,
    AnswerRow,
    AnswerScorer,
    MethodRun,
    answer_rows,
    answer_scorer_from_json,
    scored_answer,
)

TRIPLETS: list[Triplet] = [
    ("Film A", "starred_actors", "Lee Pace"),
    ("Film A", "directed_by", "Dir 1"),
    ("Lee Pace", "born_in", "Texas"),
]
LEE = LinkedEntity("Lee Pace", "Lee Pace", 1.0, "given", span="lee pace")


def _run(answers: list[str], scores: list[float], method: str = "frag", confidence: float | None = None):
    evidence = Evidence("who directed films lee pace starred in", method, "test", [LEE], TRIPLETS)
    evidence.confidence = confidence
    return MethodRun(method, evidence, Answer(answers, scores))


def _feature(row: AnswerRow, name: str) -> float:
    return row.features[ANSWER_FEATURES.index(name)]


def test_each_answer_has_a_row_of_what_its_method_and_walk_show() -> None:
    rows = answer_rows(
        "who directed films lee pace starred in", [LEE], _run(["Dir 1", "Texas"], [2.0, 2.0]), None
    )
    assert [r.answer for r in rows] == ["Dir 1", "Texas"] and [r.rank for r in rows] == [0, 1]
    first, second = rows
    assert _feature(first, "first") == 1.0 and _feature(second, "first") == 0.0
    assert _feature(second, "tied_first") == 1.0  # the same score as the first
    assert _feature(first, "hops_2") == 1.0 and _feature(second, "hops_1") == 1.0
    assert _feature(first, "method_frag") == 1.0 and _feature(first, "method_sgrag") == 0.0
    assert _feature(first, "has_confidence") == 0.0
    # without a path scorer no chain is read: the cosines are 0
    assert _feature(first, "chain_cosine") == 0.0


def test_an_answer_no_walk_reaches_says_so() -> None:
    [row] = answer_rows("q", [LEE], _run(["Someone"], [1.0], "sgrag", 0.7), None)
    assert _feature(row, "no_walk") == 1.0 and _feature(row, "chain_cosine_gap") == -1.0
    assert _feature(row, "confidence") == 0.7 and _feature(row, "has_confidence") == 1.0


def test_scores_become_probabilities_and_reorder_only_when_the_scorer_says() -> None:
    weights = tuple(3.0 if f == "hops_1" else 0.0 for f in ANSWER_FEATURES)
    run = _run(["Dir 1", "Texas", "Unscored"], [2.0, 1.0, 0.5])
    rows = answer_rows("q", [LEE], run, None)[:2]
    kept = scored_answer(AnswerScorer(weights, -1.0, reorder=False), rows, run.answer)
    assert kept.answers == ["Dir 1", "Texas", "Unscored"]
    assert kept.scores[0] == pytest.approx(1 / (1 + np.exp(1.0))) and kept.scores[1] == pytest.approx(
        1 / (1 + np.exp(-2.0))
    )
    assert kept.scores[2] == 0.0  # past the scored answers
    reordered = scored_answer(AnswerScorer(weights, -1.0, reorder=True), rows, run.answer)
    assert reordered.answers == ["Texas", "Dir 1", "Unscored"]
    assert reordered.explanation["scored_by"].startswith("auto's answer scorer")


def _questions(n: int, first_is_right: float, seed: int = 1) -> list[ScoredQuestion]:
    """Questions whose two answers differ in one feature: the right one has a 1-hop walk."""
    rng = random.Random(seed)
    index = ANSWER_FEATURES.index("hops_1")
    out = []
    for _ in range(n):
        right_first = rng.random() < first_is_right
        rows = []
        for rank in range(2):
            right = (rank == 0) == right_first
            features = [0.0] * len(ANSWER_FEATURES)
            features[index] = 1.0 if right else 0.0
            features[ANSWER_FEATURES.index("first")] = float(rank == 0)
            rows.append(AnswerRow("frag", f"a{rank}", rank, tuple(features)))
        out.append(ScoredQuestion(rows, [(rank == 0) == right_first for rank in range(2)], 1.0))
    return out


def test_reordering_is_kept_only_when_held_out_questions_get_more_right() -> None:
    # the right answer is second for 40 % of questions and its walk says so: reordering wins
    scorer = fit_answer_scorer(_questions(200, 0.6))
    assert scorer is not None and scorer.reorder
    assert scorer.metrics["reordered_right"] > scorer.metrics["first_right"] + 0.3
    # the right answer is always first: nothing to gain, the method's order stays
    always = fit_answer_scorer(_questions(200, 1.0))
    assert always is not None and not always.reorder
    assert always.metrics["first_right"] == 1.0 and always.metrics["sure_right"] == 1.0


def test_nothing_to_learn_from_is_no_scorer() -> None:
    assert fit_answer_scorer([]) is None
    only_right = [ScoredQuestion([AnswerRow("frag", "a", 0, (0.0,) * len(ANSWER_FEATURES))], [True], 1.0)]
    assert fit_answer_scorer(only_right) is None


def test_the_saved_scorer_reads_back_and_one_of_other_features_is_refused() -> None:
    scorer = AnswerScorer(
        tuple(float(i) for i in range(len(ANSWER_FEATURES))), 0.5, True, {"sure_right": 0.9}
    )
    assert answer_scorer_from_json(scorer.to_json()) == scorer
    other = scorer.to_json()
    other["weights"] = {**other["weights"], "votes": 1.0}
    assert answer_scorer_from_json(other) is None
    assert answer_scorer_from_json({**scorer.to_json(), "format": 99}) is None
    assert answer_scorer_from_json(None) is None
