"""Evaluation: benchmark readers, pure KGQA metrics, the resumable runner, reports and charts.

``kgqa eval`` calls :func:`kgqa.evaluation.runner.run_eval`; ``bench/benchmarks_report.py`` runs it for every
available method and regenerates BENCHMARKS.md.
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
