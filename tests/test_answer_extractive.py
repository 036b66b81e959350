"""The extractive answerer on hand-built evidence: no database, no model."""

from __future__ import annotations

import time
from typing import Any

from kgqa.answer import NO_EVIDENCE, answer, answer_extractive
from kgqa.core.types import Evidence, LinkedEntity, Triplet


def evidence(triplets: list[Triplet], topics: list[str], method: str = "sgrag", **kw: Any) -> Evidence:
    return Evidence(
        question="q?",
        method=method,
        kg="test",
        topic_entities=[LinkedEntity(id=t, name=t, score=1.0, how="given") for t in topics],
        triplets=triplets,
        **kw,
    )


LEE_PACE_2HOP = [
    ("Film A", "starred_actors", "Lee Pace"),
    ("Film A", "directed_by", "Dir 1"),
    ("Film B", "starred_actors", "Lee Pace"),
    ("Film B", "directed_by", "Dir 2"),
    ("Film C", "starred_actors", "Lee Pace"),
    ("Film C", "directed_by", "Dir 1"),
]


def test_one_hop_answers_are_the_far_ends_never_the_topic() -> None:
    ev = evidence(
        [("Lee Pace", "starred_in", "Film A"), ("Film B", "starred_actors", "Lee Pace")],
        ["Lee Pace"],
        hops=1,
    )
    result = answer_extractive(ev)
    assert result.answers == ["Film A", "Film B"]  # first appearance breaks the tie
    assert result.scores == [1.0, 1.0]
    assert "Lee Pace" not in result.answers


def test_two_hop_prefers_the_requested_depth_and_ranks_by_support() -> None:
    result = answer_extractive(evidence(LEE_PACE_2HOP, ["Lee Pace"], hops=2))
    assert result.answers == ["Dir 1", "Dir 2"]  # Dir 1 is reached through two films
    assert result.scores == [1.0, 0.5]
    assert result.explanation["strategy"] == "layers"
    assert result.explanation["evidence"]["Dir 2"] == [
        ["Film B", "starred_actors", "Lee Pace"],
        ["Film B", "directed_by", "Dir 2"],
    ]


def test_without_hops_the_deepest_layer_is_the_far_end() -> None:
    result = answer_extractive(evidence(LEE_PACE_2HOP, ["Lee Pace"]))
    assert result.answers == ["Dir 1", "Dir 2"]
    assert result.explanation["hops_source"] == "deepest layer"


def test_one_hop_question_over_deeper_evidence_stops_at_one_hop() -> None:
    result = answer_extractive(evidence(LEE_PACE_2HOP, ["Lee Pace"], hops=1))
    assert result.answers == ["Film A", "Film B", "Film C"]


def test_answer_also_closer_to_the_topic_is_found_by_the_relation_signature() -> None:
    # 3 hops from director D: D's films -> their actors -> those actors' films. F1 and F2 are both directed by
    # D *and* reached through actor A, so their shortest distance is 1, yet they are 3-hop answers (MetaQA
    # keeps every entity but the topic).
    triplets = [
        ("F1", "directed_by", "D"),
        ("F1", "starred_actors", "A"),
        ("F2", "starred_actors", "A"),
        ("F2", "directed_by", "D"),
        ("F3", "starred_actors", "A"),
    ]
    result = answer_extractive(evidence(triplets, ["D"], hops=3))
    assert set(result.answers) == {"F1", "F2", "F3"}
    assert "D" not in result.answers and "A" not in result.answers


def test_wrong_kind_walks_of_the_right_length_are_not_answers() -> None:
    # "who directed films that share actors with [X]": X -starred-> A -starred<- F -directed-> Dir.
    # actor B is also three non-backtracking steps away (X, A, F, B) but by starred/starred/starred.
    triplets = [
        ("X", "starred_actors", "A"),
        ("F", "starred_actors", "A"),
        ("F", "starred_actors", "B"),
        ("X", "starred_actors", "B"),
        ("F", "directed_by", "Dir"),
    ]
    result = answer_extractive(evidence(triplets, ["X"], hops=3))
    assert result.answers == ["Dir"]


def test_walks_never_pass_back_through_the_topic() -> None:
    # co-stars of Ann: the walk Ann -> Film -> Ann is not allowed, and Ann is never an answer.
    triplets = [
        ("Film", "starred_actors", "Ann"),
        ("Film", "starred_actors", "Bob"),
        ("Film", "starred_actors", "Cat"),
    ]
    result = answer_extractive(evidence(triplets, ["Ann"], hops=2))
    assert result.answers == ["Bob", "Cat"]


def test_triplet_scores_rank_by_the_weakest_link_of_the_best_walk() -> None:
    triplets = [("Q", "r", "M1"), ("M1", "s", "Low"), ("Q", "r", "M2"), ("M2", "s", "High")]
    ev = evidence(triplets, ["Q"], method="subgraphrag", scores=[0.9, 0.2, 0.8, 0.7], hops=2)
    result = answer_extractive(ev)
    assert result.answers == ["High", "Low"]
    assert result.scores == [0.7, 0.2]


def test_requested_depth_beyond_the_evidence_falls_back_to_the_deepest_layer() -> None:
    ev = evidence([("Q", "r", "A"), ("Q", "r", "B")], ["Q"], hops=3)
    result = answer_extractive(ev)
    assert result.answers == ["A", "B"]
    assert "deepest layer" in result.explanation["strategy"]


def test_answer_candidates_from_the_retriever_are_trusted_in_order() -> None:
    ev = evidence(
        LEE_PACE_2HOP,
        ["Lee Pace"],
        answer_candidates=["Dir 2", "Lee Pace", "Dir 1", "Dir 2"],
        hops=2,
    )
    result = answer_extractive(ev)
    assert result.answers == ["Dir 2", "Dir 1"]
    assert result.explanation["strategy"] == "answer_candidates"
    assert result.explanation["dropped_topic_entities"] == ["Lee Pace"]
    scored = answer_extractive(evidence([], ["Q"], answer_candidates=["a", "b"], answer_scores=[0.9, 0.4]))
    assert scored.answers == ["a", "b"] and scored.scores == [0.9, 0.4]


def test_paths_answers_are_end_points_walked_from_the_topic() -> None:
    p1 = [("Film A", "starred_actors", "Lee Pace"), ("Film A", "directed_by", "Dir 1")]  # first hop reversed
    p2 = [("Lee Pace", "acted_in", "Film B"), ("Film B", "directed_by", "Dir 2")]
    p3 = [("Film C", "starred_actors", "Lee Pace")]  # 1 hop: an intermediate, not a 2-hop answer
    p4 = [("Film C", "starred_actors", "Lee Pace"), ("Film C", "directed_by", "Dir 2")]
    ev = evidence(
        [t for p in (p1, p2, p3, p4) for t in p],
        ["Lee Pace"],
        method="frag",
        paths=[p1, p2, p3, p4],
        hops=2,
    )
    result = answer_extractive(ev)
    assert result.answers == ["Dir 1", "Dir 2"]
    assert result.scores == [1.0, 0.5]  # 1 / (1 + rank of the best path)
    assert result.explanation["path_counts"] == {"Dir 1": 1, "Dir 2": 2}
    assert result.explanation["evidence"]["Dir 1"] == [list(t) for t in p1]


def test_path_scores_then_frequency_then_order() -> None:
    paths = [[("Q", "r", "X")], [("Q", "r", "Y")], [("Q", "s", "Y")], [("Q", "r", "Z")], [("Q", "r", "Q2")]]
    ev = evidence(
        [p[0] for p in paths],
        ["Q", "Q2"],
        method="frag",
        paths=paths,
        path_scores=[0.5, 0.5, 0.3, 0.9, 1.0],
    )
    result = answer_extractive(ev)
    assert result.answers == ["Z", "Y", "X"]  # Q2 is a topic entity; Y beats X on frequency at equal score
    assert result.scores == [0.9, 0.5, 0.5]


def test_empty_evidence_says_nothing_was_found() -> None:
    result = answer(evidence([], ["Q"]), llm="none")
    assert result.answers == [] and result.scores == []
    assert result.explanation["reason"] == NO_EVIDENCE


def test_no_topic_entity_or_topic_absent_from_the_triplets() -> None:
    assert answer_extractive(evidence([("a", "r", "b")], [])).answers == []
    absent = answer_extractive(evidence([("a", "r", "b")], ["zzz"]))
    assert absent.answers == [] and "do not appear" in absent.explanation["reason"]


def test_max_answers_and_determinism() -> None:
    ev = evidence(LEE_PACE_2HOP, ["Lee Pace"], hops=1)
    assert answer_extractive(ev, max_answers=2).answers == ["Film A", "Film B"]
    assert answer_extractive(ev).answers == answer_extractive(ev).answers


def test_fast_on_a_large_evidence_set() -> None:
    # a popular actor: 300 films, each with 5 co-stars and a director, 3 hops deep
    triplets: list[Triplet] = []
    for f in range(300):
        triplets.append((f"film{f}", "starred_actors", "Star"))
        triplets.append((f"film{f}", "directed_by", f"dir{f % 40}"))
        triplets.extend((f"film{f}", "starred_actors", f"actor{(f * 7 + i) % 500}") for i in range(5))
    ev = evidence(triplets, ["Star"], hops=3)
    began = time.perf_counter()
    result = answer_extractive(ev)
    elapsed = time.perf_counter() - began
    assert result.answers and "Star" not in result.answers
    assert elapsed < 2.0, f"took {elapsed:.2f}s"


def test_explanations_are_json() -> None:
    import json

    scored = evidence(LEE_PACE_2HOP, ["Lee Pace"], scores=[0.9] * 6, hops=2)
    paths = evidence(LEE_PACE_2HOP, ["Lee Pace"], paths=[LEE_PACE_2HOP[:2]], hops=2)
    for ev in (scored, paths, evidence(LEE_PACE_2HOP, ["Lee Pace"]), evidence([], ["Q"])):
        result = answer_extractive(ev)
        json.dumps(result.to_dict(), allow_nan=False)
