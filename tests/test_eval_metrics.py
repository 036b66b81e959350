"""The evaluation metrics on a hand-computed 5-question fixture (tests/fixtures/eval/cases.json).

No database and no shared data: these never skip. Every expected number below is worked out by hand in the
comments, from the fixture's gold answers, predictions and evidence.
"""

from __future__ import annotations

import json
from fractions import Fraction as F
from pathlib import Path
from typing import Any

import pytest
from kgqa.core.errors import BadInput, KgqaError
from kgqa.evaluation.datasets import load_dataset, sample_indices, split_limit
from kgqa.evaluation.metrics import (
    aggregate,
    answer_matching_rate,
    evidence_answer_recall,
    evidence_triple_recall,
    latency_summary,
    normalize_answer,
    percentile,
    score_answers,
)
from kgqa.evaluation.report import summarize
from kgqa.evaluation.results import build_record, read_jsonl
from kgqa.evaluation.runner import EvalConfig, in_order, run_eval

FIXTURES = Path(__file__).parent / "fixtures" / "eval"
MINI_METAQA = FIXTURES / "metaqa"
REPLAY = "tests.fixtures.eval.replay:ReplayRetriever"
CASES: list[dict[str, Any]] = json.loads((FIXTURES / "cases.json").read_text(encoding="utf-8"))["cases"]

# Per question, by hand.
# Q1 gold {the matrix, john wick, speed}; pred [matrix, speed, point break]: "Matrix" = "The Matrix" once the
#    article is dropped. correct 2 -> P 2/3, R 2/3, F1 2/3, Hits@1 1. Evidence entities hold matrix and speed:
#    answer recall 2/3; 2 of the 3 gold triples (John Wick's is missing): triple recall 2/3.
# Q2 exact single answer: everything 1.
# Q3 gold {jan de bont, alfonso cuaron}; pred [christopher nolan, alfonso cuaron (accent stripped),
#    jan de bont, jan de bont (a repeat after normalising)] -> 3 distinct, 2 correct: P 2/3, R 1, F1 0.8,
#    Hits@1 0 (Nolan first), Hit 1. Evidence entities: Speed, Sandra Bullock, Jan de Bont, Gravity -> answer
#    recall 1/2; triples: 3 of 4 (Gravity directed_by Alfonso Cuarón missing) -> 3/4.
# Q4 the method raised: no answers, no evidence: all 0, n_gold 1, triple recall 0 (2 gold triples known).
# Q5 gold {1999}; pred [1999, 2000]: P 1/2, R 1, F1 2/3, Hits@1 1; answer recall 1; triple recall 3/3.
EXPECTED: dict[str, dict[str, Any]] = {
    "metaqa-dev-1hop-00001": dict(
        hits1=1,
        hit=1,
        precision=F(2, 3),
        recall=F(2, 3),
        f1=F(2, 3),
        match_rate=F(2, 3),
        n_pred=3,
        n_gold=3,
        n_correct=2,
        ev_answer=F(2, 3),
        ev_triple=F(2, 3),
    ),
    "metaqa-dev-1hop-00002": dict(
        hits1=1,
        hit=1,
        precision=1,
        recall=1,
        f1=1,
        match_rate=1,
        n_pred=1,
        n_gold=1,
        n_correct=1,
        ev_answer=1,
        ev_triple=1,
    ),
    "metaqa-dev-2hop-00001": dict(
        hits1=0,
        hit=1,
        precision=F(2, 3),
        recall=1,
        f1=F(4, 5),
        match_rate=1,
        n_pred=3,
        n_gold=2,
        n_correct=2,
        ev_answer=F(1, 2),
        ev_triple=F(3, 4),
    ),
    "metaqa-dev-2hop-00002": dict(
        hits1=0,
        hit=0,
        precision=0,
        recall=0,
        f1=0,
        match_rate=0,
        n_pred=0,
        n_gold=1,
        n_correct=0,
        ev_answer=0,
        ev_triple=0,
    ),
    "metaqa-dev-3hop-00001": dict(
        hits1=1,
        hit=1,
        precision=F(1, 2),
        recall=1,
        f1=F(2, 3),
        match_rate=1,
        n_pred=2,
        n_gold=1,
        n_correct=1,
        ev_answer=1,
        ev_triple=1,
    ),
}

# Aggregated over the 5, by hand:
#   Hits@1 (1+1+0+0+1)/5 = 3/5; Hit 4/5;
#   precision (2/3+1+2/3+0+1/2)/5 = 17/30; recall (2/3+1+1+0+1)/5 = 11/15;
#   macro-F1 (2/3+1+4/5+0+2/3)/5 = 47/75; AMR = recall here = 11/15;
#   micro: correct 2+1+2+0+1 = 6, predicted 3+1+3+0+2 = 9, gold 3+1+2+1+1 = 8
#          -> P 6/9 = 2/3, R 6/8 = 3/4, F1 2*(2/3)(3/4)/(2/3+3/4) = 12/17;
#   evidence answer recall (2/3+1+1/2+0+1)/5 = 19/30; evidence triple recall (2/3+1+3/4+0+1)/5 = 41/60.
EXPECTED_ALL: dict[str, Any] = dict(
    n=5,
    hits1=F(3, 5),
    hit=F(4, 5),
    precision=F(17, 30),
    recall=F(11, 15),
    macro_f1=F(47, 75),
    match_rate=F(11, 15),
    micro_precision=F(2, 3),
    micro_recall=F(3, 4),
    micro_f1=F(12, 17),
    evidence_answer_recall=F(19, 30),
    evidence_triple_recall=F(41, 60),
    n_triple_recall=5,
)
# Per hop: 1-hop = Q1,Q2: Hits@1 1, P=R=F1 (2/3+1)/2 = 5/6, micro 3/4 each (correct 3, pred 4, gold 4).
#          2-hop = Q3,Q4: Hits@1 0, Hit 1/2, P 1/3, R 1/2, macro-F1 2/5,
#                  micro: correct 2 / pred 3 / gold 3 = 2/3.
#          3-hop = Q5 alone.
EXPECTED_HOPS: dict[str, dict[str, Any]] = {
    "1": dict(
        n=2,
        hits1=1,
        hit=1,
        precision=F(5, 6),
        recall=F(5, 6),
        macro_f1=F(5, 6),
        micro_precision=F(3, 4),
        micro_recall=F(3, 4),
        micro_f1=F(3, 4),
        evidence_answer_recall=F(5, 6),
        evidence_triple_recall=F(5, 6),
    ),
    "2": dict(
        n=2,
        hits1=0,
        hit=F(1, 2),
        precision=F(1, 3),
        recall=F(1, 2),
        macro_f1=F(2, 5),
        micro_precision=F(2, 3),
        micro_recall=F(2, 3),
        micro_f1=F(2, 3),
        evidence_answer_recall=F(1, 4),
        evidence_triple_recall=F(3, 8),
    ),
    "3": dict(
        n=1,
        hits1=1,
        hit=1,
        precision=F(1, 2),
        recall=1,
        macro_f1=F(2, 3),
        micro_precision=F(1, 2),
        micro_recall=1,
        micro_f1=F(2, 3),
        evidence_answer_recall=1,
        evidence_triple_recall=1,
    ),
}
# Latency over the 4 questions that did not fail (Q4's 5 ms total is excluded):
#   linking [10,20,30,40]: p50 = 25 (midway between ranks 1 and 2),
#       p95 at rank 0.95*3 = 2.85 -> 30+0.85*10 = 38.5
#   retrieval [20,40,60,80]: p50 50, p95 60+0.85*20 = 77;  answering [1,2,3,4]: p50 2.5, p95 3.85
#   total [31,62,93,124]: p50 77.5, p95 93+0.85*31 = 119.35
EXPECTED_LATENCY = {
    "linking": (25, 38.5, 40, 25),
    "retrieval": (50, 77, 80, 50),
    "answering": (2.5, 3.85, 4, 2.5),
    "total": (77.5, 119.35, 124, 77.5),
}


def approx(value: Any) -> Any:
    return pytest.approx(float(value), abs=1e-12)


def check(actual: dict[str, Any], expected: dict[str, Any]) -> None:
    for key, value in expected.items():
        assert actual[key] == approx(value), key


def fixture_records() -> list[dict[str, Any]]:
    """Records as the runner writes them, built straight from the fixture (no retriever in between)."""
    from kgqa.answer.base import Answer
    from kgqa.core.types import Evidence
    from kgqa.evaluation.datasets import EvalQuestion
    from kgqa.qa.answering import Result

    records = []
    for case in CASES:
        q = EvalQuestion(
            id=case["id"],
            dataset="metaqa",
            split="dev",
            question=case["question"],
            answers=tuple(case["gold"]),
            hops=case["hops"],
            qtype=case["qtype"],
        )
        gold = [(h, r, t) for h, r, t in case["gold_triples"]]
        if case.get("error"):
            record = build_record(q, gold, None, RuntimeError(case["error"]), case["latency_ms"]["total"])
        else:
            triplets = [(h, r, t) for h, r, t in case["triplets"]]
            ev = Evidence(case["question"], "fixture", "mini", [], triplets)
            answered = Result(
                ev,
                Answer(case["predicted"], [1.0] * len(case["predicted"])),
                {k: float(v) for k, v in case["latency_ms"].items()},
                None,
            )
            record = build_record(q, gold, answered)
        records.append(record)
    return records


# --- per question -------------------------------------------------------------------------------------------


def test_normalisation_lowercases_and_strips_punctuation_articles_and_accents() -> None:
    assert normalize_answer("The Lord of the Rings!") == "lord of rings"
    assert normalize_answer("Alfonso Cuarón") == normalize_answer("alfonso cuaron") == "alfonso cuaron"
    assert normalize_answer("Schindler's List") == "schindlers list"
    assert normalize_answer("  Paris,  Texas ") == "paris texas"
    assert normalize_answer("An American in Paris") == "american in paris"
    assert normalize_answer("The The") == "the the"  # nothing left: keep the lowercased original
    assert normalize_answer("1999") == "1999"


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_each_fixture_question_scores_as_computed_by_hand(case: dict[str, Any]) -> None:
    want = EXPECTED[case["id"]]
    scores = score_answers(case["predicted"], case["gold"]).to_dict()
    check(scores, {k: v for k, v in want.items() if not k.startswith("ev_")})
    assert evidence_answer_recall(case["gold"], case["triplets"]) == approx(want["ev_answer"])
    assert evidence_triple_recall(case["gold_triples"], case["triplets"]) == approx(want["ev_triple"])


def test_edge_cases_of_the_answer_metrics() -> None:
    empty = score_answers([], ["a"])
    assert (empty.precision, empty.recall, empty.f1, empty.hits1, empty.hit) == (0, 0, 0, 0, 0)
    no_gold = score_answers(["x"], [])
    assert (no_gold.precision, no_gold.recall, no_gold.f1) == (0, 0, 0)
    assert evidence_triple_recall(None, [("a", "r", "b")]) is None
    assert evidence_triple_recall([], [("a", "r", "b")]) is None
    # direction counts: the reversed triple is another triple
    assert evidence_triple_recall([("a", "r", "b")], [("b", "r", "a")]) == 0


def test_answer_matching_rate_reads_free_text_on_word_boundaries() -> None:
    text = "The films were directed by Jan de Bont and, I believe, by Alfonso Cuarón."
    assert answer_matching_rate(["Jan de Bont", "Alfonso Cuarón", "Nolan"], text) == approx(F(2, 3))
    assert answer_matching_rate(["Bont"], "Jan de Bontempi") == 0  # no match inside a word
    # in free text a mention counts; among entity names it does not ("English" in "The English Patient")
    assert score_answers(["x"], ["English"], text="I'd say The English Patient").match_rate == 1
    assert score_answers(["The English Patient"], ["English"]).match_rate == 0
    assert score_answers(["x"], ["Jan de Bont"], text=text).match_rate == 1
    # the separator between two predicted answers is never part of a match
    assert answer_matching_rate(["x y"], ["w x", "y z"]) == 0


# --- aggregation --------------------------------------------------------------------------------------------


def test_aggregate_over_the_five_questions() -> None:
    rows = []
    for case in CASES:
        row: dict[str, Any] = score_answers(case["predicted"], case["gold"]).to_dict()
        row["evidence_answer_recall"] = evidence_answer_recall(case["gold"], case["triplets"])
        row["evidence_triple_recall"] = evidence_triple_recall(case["gold_triples"], case["triplets"])
        rows.append(row)
    check(aggregate(rows), EXPECTED_ALL)
    empty = aggregate([])
    assert empty["n"] == 0 and empty["hits1"] is None and empty["micro_f1"] is None


def test_percentiles_match_numpy_linear_interpolation() -> None:
    import numpy

    values = [3.0, 1.0, 7.5, 2.2, 9.1, 4.4, 0.3]
    for q in (0, 5, 50, 90, 95, 99, 100):
        assert percentile(values, q) == pytest.approx(float(numpy.percentile(values, q)))
    assert latency_summary([]) == {"n": 0, "p50": None, "p95": None, "max": None, "mean": None}
    with pytest.raises(ValueError):
        percentile([], 50)


def test_summary_breaks_down_per_hop_and_question_type_and_times_each_stage() -> None:
    summary = summarize(fixture_records())
    check(summary["metrics"], EXPECTED_ALL)
    assert list(summary["by_hops"]) == ["1", "2", "3"]
    for hop, want in EXPECTED_HOPS.items():
        check(summary["by_hops"][hop], want)
    assert list(summary["by_qtype"]) == [c["qtype"] for c in CASES]  # ordered by hops, then name
    assert summary["by_qtype"]["actor_to_movie_to_director"]["hits1"] == 0
    assert summary["by_qtype"]["actor_to_movie_to_director"]["hops"] == 2
    assert summary["by_qtype"]["movie_to_year"]["macro_f1"] == 1
    for stage, (p50, p95, top, mean) in EXPECTED_LATENCY.items():
        got = summary["latency_ms"][stage]
        assert (got["n"], got["p50"], got["p95"], got["max"], got["mean"]) == (
            4,
            approx(p50),
            approx(p95),
            approx(top),
            approx(mean),
        ), stage
    assert summary["n_errors"] == 1
    assert summary["errors"] == {"RuntimeError: replayed failure: the retriever crashed": 1}


# --- the dataset reader on the mini MetaQA -----------------------------------------------------------------


def test_metaqa_reader_aligns_types_and_relation_paths_and_follows_them_to_gold_triples() -> None:
    data = load_dataset("metaqa", "dev", MINI_METAQA)
    assert [q.id for q in data.questions] == [c["id"] for c in CASES]
    for q, case in zip(data.questions, CASES, strict=True):
        assert (q.question, list(q.answers), q.hops, q.qtype) == (
            case["question"],
            case["gold"],
            case["hops"],
            case["qtype"],
        )
        assert data.gold_triples(q) == [tuple(t) for t in case["gold_triples"]]
    assert [n.split(":")[0] for n in data.notes] == ["gold triples"]
    # --limit is a seeded sample spread over the hops: 4 -> 2+1+1, the same for the same seed
    assert split_limit(4, 3) == [2, 1, 1]
    sample = [q.id for q in load_dataset("metaqa", "dev", MINI_METAQA, limit=4, seed=7).questions]
    assert [i.split("-")[2] for i in sample] == ["1hop", "1hop", "2hop", "3hop"]
    assert sample == [q.id for q in load_dataset("metaqa", "dev", MINI_METAQA, limit=4, seed=7).questions]
    assert sample_indices(10, 3, seed=1) == sorted(sample_indices(10, 3, seed=1))
    assert len(set(sample_indices(10, 3, seed=1))) == 3
    assert sample_indices(5, None, 0) == [0, 1, 2, 3, 4]
    assert [q.hops for q in load_dataset("metaqa", "dev", MINI_METAQA, hops=[2]).questions] == [2, 2]
    with pytest.raises(KgqaError, match="no 'dev' split"):
        load_dataset("cwq", "dev")
    with pytest.raises(KgqaError, match="not found"):
        load_dataset("metaqa", "dev", FIXTURES / "nowhere")


# --- the runner, replaying the fixture ----------------------------------------------------------------------


def _run(tmp_path: Path, chart: bool = False, **overrides: Any) -> dict[str, Any]:
    config = EvalConfig(
        dataset="metaqa",
        split="dev",
        method=REPLAY,
        kg="mini",
        path=MINI_METAQA,
        out=tmp_path / "run.json",
        progress=False,
        chart=chart,
        **overrides,
    )
    from kgqa.qa.answering import QuestionAnswerer

    from tests.fixtures.eval.replay import bracket_linker

    answerer = QuestionAnswerer(None, REPLAY, kg="mini", linker=bracket_linker)
    return run_eval(config, answerer=answerer)


def test_run_eval_on_the_fixture_reports_the_hand_computed_numbers(tmp_path: Path) -> None:
    report = _run(tmp_path, chart=True)
    check(report["metrics"], EXPECTED_ALL)
    for hop, want in EXPECTED_HOPS.items():
        check(report["by_hops"][hop], want)
    assert (report["n_questions"], report["n_done"], report["n_errors"]) == (5, 5, 1)
    assert report["complete"] is True
    for stage in ("linking", "retrieval"):  # replayed from the fixture as sub-stages; the rest is measured
        p50, p95, top, mean = EXPECTED_LATENCY[stage]
        got = report["latency_ms"][f"replayed_{stage}"]
        assert (got["p50"], got["p95"], got["max"]) == (approx(p50), approx(p95), approx(top))
    assert report["latency_ms"]["total"]["n"] == 4
    assert all(report["latency_ms"][stage]["n"] == 4 for stage in ("linking", "retrieval", "answering"))
    assert report["seeds"]["seed"] == 0 and report["versions"]["python"]
    assert report["versions"]["packages"]["neo4j"]
    header, records = read_jsonl(tmp_path / "run.jsonl")
    assert header is not None and header["config"]["method"] == REPLAY
    failed = records["metaqa-dev-2hop-00002"]
    assert failed["error"] == "RuntimeError: replayed failure: the retriever crashed" and failed["traceback"]
    assert records["metaqa-dev-2hop-00001"]["answers"][:2] == ["Christopher Nolan", "Alfonso Cuaron"]
    assert records["metaqa-dev-1hop-00001"]["gold_triples_missing"] == [
        ["John Wick", "starred_actors", "Keanu Reeves"]
    ]
    markdown = (tmp_path / "run.md").read_text()
    assert "| 2-hop | 2 | 0.0 | 50.0 | 40.0 | 66.7 |" in markdown
    assert "| all | 5 | 60.0 | 80.0 | 62.7 | 70.6 |" in markdown
    assert (tmp_path / "run.png").read_bytes()[:4] == b"\x89PNG"
    assert json.loads((tmp_path / "run.json").read_text())["metrics"]["hits1"] == approx(F(3, 5))


def test_a_crashed_run_resumes_where_it_stopped(tmp_path: Path) -> None:
    _run(tmp_path)
    jsonl = tmp_path / "run.jsonl"
    lines = jsonl.read_text().splitlines(keepends=True)
    # a crash after three questions, in the middle of writing the fourth
    jsonl.write_text("".join(lines[:4]) + lines[4][: len(lines[4]) // 2])
    report = _run(tmp_path)
    assert report["resumed_from"] == 3 and report["n_done"] == 5
    check(report["metrics"], EXPECTED_ALL)
    _header, records = read_jsonl(jsonl)
    assert len(records) == 5
    # a complete run resumes with nothing to do; errors are kept unless asked to retry them
    again = _run(tmp_path)
    assert again["resumed_from"] == 5 and again["n_errors"] == 1
    retried = _run(tmp_path, retry_errors=True)
    assert retried["resumed_from"] == 4 and retried["n_errors"] == 1
    fresh = _run(tmp_path, resume=False)
    assert fresh["resumed_from"] == 0
    assert len(jsonl.read_text().splitlines()) == 6  # header + 5


def test_workers_give_the_same_report_in_the_same_order(tmp_path: Path) -> None:
    serial = _run(tmp_path / "serial")
    parallel = _run(tmp_path / "parallel", workers=3)
    check(parallel["metrics"], EXPECTED_ALL)
    assert parallel["n_errors"] == serial["n_errors"] == 1
    assert parallel["config"]["workers"] == 3 and "--workers 3" in parallel["command"]

    def ids(folder: str) -> list[str]:
        lines = (tmp_path / folder / "run.jsonl").read_text().splitlines()[1:]
        return [json.loads(line)["id"] for line in lines]

    assert ids("parallel") == ids("serial")


def test_in_order_runs_calls_at_once_and_keeps_the_input_order() -> None:
    import threading
    import time

    running, most = 0, 0
    lock = threading.Lock()

    def slow_square(x: int) -> int:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
        time.sleep(0.02 if x % 2 else 0.001)  # odd inputs finish last
        with lock:
            running -= 1
        return x * x

    assert list(in_order(slow_square, range(12), workers=4)) == [x * x for x in range(12)]
    assert most > 1
    assert list(in_order(slow_square, range(3), workers=1)) == [0, 1, 4]
    with pytest.raises(KgqaError, match="--workers must be at least 1"):
        EvalConfig(dataset="metaqa", workers=0)


def test_resuming_with_other_settings_is_refused(tmp_path: Path) -> None:
    _run(tmp_path)
    with pytest.raises(KgqaError, match="different settings"):
        _run(tmp_path, k=5)


# --- warming up a server before the timed questions ---------------------------------------------------------


def test_warm_up_asks_questions_of_another_split_never_the_evaluated_ones(shared_data: Path) -> None:
    from kgqa.evaluation.runner import warm_up, warm_up_questions

    evaluated = load_dataset("metaqa", "test", limit=30)
    config = EvalConfig(dataset="metaqa", split="test", warmup=7)
    warm = warm_up_questions(config, evaluated)
    assert len(warm) == 7 and {q.split for q in warm} == {"dev"}  # MetaQA here: dev and test
    assert not {q.question for q in warm} & {q.question for q in evaluated.questions}
    webqsp = load_dataset("webqsp", "test", limit=20)
    on_webqsp = warm_up_questions(EvalConfig(dataset="webqsp", split="test", warmup=3), webqsp)
    assert len(on_webqsp) == 3 and {q.split for q in on_webqsp} == {"train"}
    with pytest.raises(BadInput, match="metaqa has no split besides dev to warm up on"):
        warm_up_questions(EvalConfig(dataset="metaqa", split="dev", warmup=3), evaluated)
    with pytest.raises(BadInput, match="cwq has no split besides test"):
        warm_up_questions(EvalConfig(dataset="cwq", split="test", warmup=3), evaluated)
    with pytest.raises(BadInput, match="--warmup must be at least 0"):
        EvalConfig(dataset="metaqa", warmup=-1)

    class Asked:
        def __init__(self) -> None:
            self.questions: list[str] = []

        def ask(self, question: str, topics: Any = None) -> None:
            self.questions.append(question)
            if len(self.questions) == 2:
                raise RuntimeError("a question that fails warms up as well")

    asked = Asked()
    warm_up(asked, None, config, warm)  # type: ignore[arg-type]
    assert asked.questions == [q.question for q in warm]
    assert "--warmup 7" in config.command()
