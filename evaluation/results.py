"""An eval's results on disk: the per-question JSONL records, and the report's JSON, Markdown and chart.

The JSONL is what makes a run resumable (:mod:`kgqa.evaluation.runner`): one record per question, appended
and flushed as each finishes, read back by a rerun with the same settings.
"""

from __future__ import annotations

import json
import traceback
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kgqa.evaluation.datasets import EvalQuestion
from kgqa.evaluation.metrics import evidence_answer_recall, evidence_triple_recall, score_answers
from kgqa.evaluation.report import render_markdown
from kgqa.qa.answering import Result

MAX_STORED_METADATA_ITEMS = 50


# --- the per-question JSONL ---------------------------------------------------------------------------------


def read_jsonl(path: Path) -> tuple[dict[str, Any] | None, dict[str, dict[str, Any]]]:
    """(header, records by id, last one wins); unreadable lines (a write cut off by a crash) are ignored."""
    header: dict[str, Any] | None = None
    records: dict[str, dict[str, Any]] = {}
    if not path.is_file():
        return None, records
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            line = line.strip()
            if not line:
                continue
            try:
                item = json.loads(line)
            except json.JSONDecodeError:
                continue
            if not isinstance(item, dict):
                continue
            if item.get("kind") == "run" and header is None:
                header = item
            elif item.get("kind") == "question" and "id" in item:
                records[str(item["id"])] = item
    return header, records


class Appender:
    """The per-question JSONL, opened to append to (or afresh), one flushed line per record."""

    def __init__(self, path: Path, fresh: bool) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        if not fresh and path.is_file() and path.stat().st_size > 0:
            with path.open("rb") as handle:
                handle.seek(-1, 2)
                needs_newline = handle.read(1) != b"\n"
            self.handle = path.open("a", encoding="utf-8")
            if needs_newline:  # the last write was cut off; start on a line of our own
                self.handle.write("\n")
        else:
            self.handle = path.open("w", encoding="utf-8")

    def write(self, item: Mapping[str, Any]) -> None:
        self.handle.write(json.dumps(item, ensure_ascii=False, default=str) + "\n")
        self.handle.flush()

    def close(self) -> None:
        self.handle.close()


# --- one question -------------------------------------------------------------------------------------------


def _jsonable(value: Any, depth: int = 0) -> Any:
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if depth > 4:
        return str(value)
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v, depth + 1) for k, v in list(value.items())[:MAX_STORED_METADATA_ITEMS]}
    if isinstance(value, list | tuple | set):
        return [_jsonable(v, depth + 1) for v in list(value)[:MAX_STORED_METADATA_ITEMS]]
    return str(value)


def build_record(
    q: EvalQuestion,
    gold_triples: list[tuple[str, str, str]] | None,
    answered: Result | None,
    error: BaseException | None = None,
    elapsed_ms: float | None = None,
) -> dict[str, Any]:
    """The JSONL record of one question, metrics included (zeros when it failed)."""
    record: dict[str, Any] = {
        "kind": "question",
        "id": q.id,
        "question": q.question,
        "hops": q.hops,
        "qtype": q.qtype,
        "gold": list(q.answers),
        "answer_ids": list(q.answer_ids) or None,
        "relation_path": list(q.relation_path) if q.relation_path else None,
        "n_gold_triples": len(gold_triples) if gold_triples is not None else None,
    }
    answers: list[str] = []
    triplets: list[list[str]] = []
    raw_text: str | None = None
    if answered is not None:
        ev, ans = answered.evidence, answered.answer
        answers = [str(a) for a in ans.answers]
        triplets = [[str(x) for x in t] for t in ev.triplets]
        explanation = ans.explanation
        raw_text = ans.raw_output
        record.update(
            {
                "answers": answers,
                "answer_scores": [float(s) for s in ans.scores],
                "raw_output": raw_text,
                "topic_entities": [
                    {"id": e.id, "name": e.name, "score": e.score, "how": e.how} for e in ev.topic_entities
                ],
                "triplets": triplets,
                "n_paths": len(ev.paths),
                "evidence_hops": ev.hops,
                "trace": _jsonable(ev.trace.to_json()) if ev.trace is not None else None,
                "route": _jsonable(answered.route.to_json()) if answered.route is not None else None,
                "answer_explanation": _jsonable({k: v for k, v in explanation.items() if k != "evidence"}),
                "latency_ms": {k: round(v, 3) for k, v in answered.latency_ms.items()},
                "error": None,
            }
        )
    else:
        record.update(
            {
                "answers": [],
                "answer_scores": [],
                "raw_output": None,
                "topic_entities": [],
                "triplets": [],
                "latency_ms": {"total": round(elapsed_ms or 0.0, 3)},
            }
        )
    if error is not None:
        message = str(error).splitlines()[0] if str(error) else ""
        record["error"] = f"{type(error).__name__}: {message}".strip().rstrip(":")
        record["traceback"] = traceback.format_exception(error)[-3:]
    metrics: dict[str, Any] = score_answers(answers, q.answers, raw_text).to_dict()
    metrics["evidence_answer_recall"] = evidence_answer_recall(q.answers, triplets)
    metrics["evidence_triple_recall"] = evidence_triple_recall(gold_triples, triplets)
    record["metrics"] = metrics
    if gold_triples:
        have = {(h, r, t) for h, r, t in triplets}
        record["gold_triples_missing"] = [list(t) for t in gold_triples if t not in have][:20]
    return record


# --- the report files ---------------------------------------------------------------------------------------


def write_outputs(report: dict[str, Any], paths: Mapping[str, Path], chart: bool = True) -> None:
    paths["report"].parent.mkdir(parents=True, exist_ok=True)
    paths["report"].write_text(
        json.dumps(report, indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8"
    )
    paths["markdown"].write_text(render_markdown(report), encoding="utf-8")
    if chart:
        from kgqa.evaluation.plots import render_chart, series_from_report

        cfg = report["config"]
        render_chart(
            [series_from_report(report)],
            paths["chart"],
            f"kgqa eval {cfg['dataset']} {cfg['split']} — {cfg['method']}, llm {cfg['llm']}",
        )
