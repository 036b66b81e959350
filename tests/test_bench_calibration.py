"""The calibration bench reads `kgqa eval`'s per-question files: only answers the answer scorer scored."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.accuracy.calibration import scored_rows, table


def _write(path: Path, rows: list[dict]) -> Path:
    run = {"kind": "run", "command": "kgqa eval webqsp --split dev --method auto"}
    path.write_text("\n".join(json.dumps(r) for r in [run, *rows]) + "\n", encoding="utf-8")
    return path


def _question(probability: float, right: bool, scored: bool = True) -> dict:
    explanation = {"scored_by": "auto's answer scorer"} if scored else {}
    return {
        "kind": "question",
        "answers": ["x"],
        "answer_scores": [probability],
        "answer_explanation": explanation,
        "metrics": {"hits1": float(right)},
    }


def test_first_answers_fall_in_their_probability_range(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "run.jsonl",
        [_question(0.95, True), _question(0.92, False), _question(0.4, False), _question(0.99, True, False)],
    )
    command, rows = scored_rows(path)
    assert command.startswith("kgqa eval") and rows == [(0.95, 1.0), (0.92, 0.0), (0.4, 0.0)]
    text = "\n".join(table([path]))
    assert "| 3 | - | 0 % (1) | - | - | 50 % (2) | 50.0 % of 2 |" in text


def test_a_broken_line_is_named(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"kind": "run"}\n{not json\n', encoding="utf-8")
    with pytest.raises(SystemExit, match="bad.jsonl:2: not JSON"):
        scored_rows(path)
