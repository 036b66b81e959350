"""Evaluation: benchmark readers, pure KGQA metrics, the resumable runner, reports and charts.

``kgqa eval`` calls :func:`kgqa.evaluation.runner.run_eval`; ``bench/report.py`` writes
BENCHMARKS.md from the reports and the other result files that ``bench/report.toml`` lists (``--run`` runs its
MetaQA evals first).
"""

from kgqa.evaluation.metrics import (
    AnswerScores,
    aggregate,
    answer_matching_rate,
    evidence_answer_recall,
    evidence_triple_recall,
    latency_summary,
    normalize_answer,
    percentile,
    score_answers,
)

__all__ = [
    "AnswerScores",
    "aggregate",
    "answer_matching_rate",
    "evidence_answer_recall",
    "evidence_triple_recall",
    "latency_summary",
    "normalize_answer",
    "percentile",
    "score_answers",
]
