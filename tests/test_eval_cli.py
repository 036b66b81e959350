"""`kgqa eval` end to end: the real console entry point, the real Neo4j test server, real MetaQA dev.

The sgrag run skips (with the reason) only while `kgqa.retrieve.sgrag` does not exist yet; everything else
here runs. The metric values themselves are pinned by the hand-computed fixture in test_eval_metrics.py;
this file checks that a real run produces consistent, complete, resumable output.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from kgqa.core.text import normalize_answer

from tests.conftest import run_kgqa
from tests.test_eval_metrics import EXPECTED_ALL, EXPECTED_HOPS, MINI_METAQA, REPLAY, check


def _eval(tmp_path: Path, name: str, *args: str, timeout: float = 600) -> tuple[dict[str, Any], Path]:
    out = tmp_path / f"{name}.json"
    result = run_kgqa("eval", *args, "--out", str(out), "--no-progress", timeout=timeout)
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(out.read_text()), out


def _records(out: Path) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in out.with_suffix(".jsonl").read_text().splitlines() if line.strip()]
    assert lines[0]["kind"] == "run"
    return [rec for rec in lines[1:] if rec["kind"] == "question"]


def _check_consistent(report: dict[str, Any], records: list[dict[str, Any]]) -> None:
    """Recompute Hits@1, Hit and the micro counts from the JSONL, independently of the report code."""
    assert len(records) == report["n_done"] == report["n_questions"]
    hits1 = hit = correct = n_pred = n_gold = 0
    for rec in records:
        gold = {normalize_answer(g) for g in rec["gold"]}
        pred = list(dict.fromkeys(normalize_answer(a) for a in rec["answers"]))
        hits1 += bool(pred) and pred[0] in gold
        hit += any(p in gold for p in pred)
        correct += sum(p in gold for p in pred)
        n_pred += len(pred)
        n_gold += len(gold)
        if not rec.get("error"):
            assert {"linking", "retrieval", "answering", "total"} <= set(rec["latency_ms"]), rec["id"]
    n = len(records)
    assert report["metrics"]["hits1"] == pytest.approx(hits1 / n)
    assert report["metrics"]["hit"] == pytest.approx(hit / n)
    assert report["metrics"]["micro_precision"] == pytest.approx(correct / n_pred if n_pred else 0.0)
    assert report["metrics"]["micro_recall"] == pytest.approx(correct / n_gold)
    for stage in ("linking", "retrieval", "answering", "total"):
        lat = report["latency_ms"][stage]
        assert lat["n"] == n - report["n_errors"]
        if lat["n"]:
            assert 0 <= lat["p50"] <= lat["p95"] <= lat["max"]
    assert report["versions"]["server"]["neo4j"] and report["versions"]["server"]["gds"]
    assert report["versions"]["kgqa"] and report["versions"]["packages"]["neo4j"]
    assert report["machine"]["nproc"] >= 1 and report["seeds"]["seed"] == 0


def test_cli_on_the_hand_computed_fixture(neo4j_env: dict[str, str], metaqa_kg: str, tmp_path: Path) -> None:
    report, out = _eval(
        tmp_path,
        "replay",
        "metaqa",
        "--split",
        "dev",
        "--path",
        str(MINI_METAQA),
        "--method",
        REPLAY,
        "--kg",
        metaqa_kg,
    )
    check(report["metrics"], EXPECTED_ALL)
    for hop, want in EXPECTED_HOPS.items():
        check(report["by_hops"][hop], want)
    _check_consistent(report, _records(out))
    assert out.with_suffix(".png").read_bytes()[:4] == b"\x89PNG"
    assert "| all | 5 | 60.0 | 80.0 | 62.7 | 70.6 |" in out.with_suffix(".md").read_text()


def _replay_args(kg: str) -> list[str]:
    return ["metaqa", "--split", "dev", "--path", str(MINI_METAQA), "--method", REPLAY, "--kg", kg]


def test_without_matplotlib_the_chart_is_skipped_and_said_so(
    neo4j_env: dict[str, str], metaqa_kg: str, tmp_path: Path
) -> None:
    """The product installed without the eval extra: the questions run, the chart is skipped with a note."""
    import subprocess
    import sys

    out = tmp_path / "no-chart.json"
    blocked = "import sys; sys.modules['matplotlib'] = None; from kgqa.cli.main import main; main()"
    done = subprocess.run(
        [sys.executable, "-c", blocked, "eval", *_replay_args(metaqa_kg), "--out", str(out), "--no-progress"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "no chart (matplotlib is not installed: pip install 'kgqa[eval]')" in done.stderr
    assert json.loads(out.read_text())["n_done"] == 5 and not out.with_suffix(".png").exists()


def test_cli_against_the_real_graph(
    neo4j_env: dict[str, str], metaqa_kg: str, question_classifiers: Path, tmp_path: Path
) -> None:
    """The untrained cosine method over real MetaQA 1-hop dev: the candidates hold the answers."""
    report, out = _eval(
        tmp_path, "cosine", "metaqa", "--split", "dev", "--hops", "1", "--limit", "30", "--method", "cosine"
    )
    assert list(report["by_hops"]) == ["1"] and report["n_questions"] == 30
    assert report["by_qtype"], "question types read from qa_dev_qtype.txt"
    _check_consistent(report, _records(out))
    # every gold answer of a 1-hop question is a neighbour of the topic entity; the 1-hop gold triples too
    assert report["metrics"]["evidence_answer_recall"] > 0.9
    assert report["metrics"]["evidence_triple_recall"] > 0.9 and report["metrics"]["n_triple_recall"] == 30
    assert report["metrics"]["hits1"] > 0.3


def test_cli_sgrag_on_300_dev_questions(
    neo4j_env: dict[str, str], metaqa_kg: str, question_classifiers: Path, tmp_path: Path
) -> None:
    report, out = _eval(
        tmp_path, "sgrag", "metaqa", "--split", "dev", "--limit", "300", "--method", "sgrag", timeout=3600
    )
    assert report["config"]["method"] == "sgrag" and report["complete"]
    assert {h: m["n"] for h, m in report["by_hops"].items()} == {"1": 100, "2": 100, "3": 100}
    records = _records(out)
    _check_consistent(report, records)
    assert report["metrics"]["hits1"] > 0.5, "far below any working method: the harness or sgrag is broken"
    assert out.with_suffix(".png").read_bytes()[:4] == b"\x89PNG"
    # a rerun resumes: nothing is answered again and the numbers stay
    again, _ = _eval(tmp_path, "sgrag", "metaqa", "--split", "dev", "--limit", "300", "--method", "sgrag")
    assert again["resumed_from"] == 300
    assert again["metrics"] == report["metrics"]


def test_cli_errors_are_one_line(neo4j_env: dict[str, str], tmp_path: Path) -> None:
    unknown = run_kgqa(
        "eval",
        "metaqa",
        "--split",
        "dev",
        "--method",
        "nosuch",
        "--path",
        str(MINI_METAQA),
        "--out",
        str(tmp_path / "x.json"),
        "--no-progress",
    )
    assert unknown.returncode == 2  # bad input
    assert unknown.stderr.strip().splitlines()[-1].startswith("kgqa: error: unknown method 'nosuch'")
    no_dev = run_kgqa("eval", "cwq", "--split", "dev")
    assert no_dev.returncode == 2 and "cwq has no dev split here" in no_dev.stderr
    no_kg = run_kgqa(
        "eval",
        *_replay_args("no-such-kg"),
        "--out",
        str(tmp_path / "y.json"),
        "--no-progress",
    )
    assert no_kg.returncode == 3 and "no knowledge graph named 'no-such-kg' is loaded" in no_kg.stderr
    bad_hops = run_kgqa("eval", "metaqa", "--hops", "1,4")
    assert bad_hops.returncode == 2 and "hops must be among 1,2,3" in bad_hops.stderr
    # the report named like its records would be written over them: refused before anything is read
    records = tmp_path / "z.jsonl"
    records.write_text("kept\n")
    over = run_kgqa("eval", *_replay_args("metaqa"), "--out", str(records), "--no-progress")
    assert over.returncode == 2 and "names a file written beside the report" in over.stderr
    assert len(over.stderr.strip().splitlines()) == 1 and records.read_text() == "kept\n"
