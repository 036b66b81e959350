"""Which walk of the evidence supports each answer: hand-built evidence, no database, no model."""

from __future__ import annotations

from kgqa.answer import Answer
from kgqa.answer.support import answer_support, walked_steps
from kgqa.core.types import Evidence, LinkedEntity, Triplet


def _evidence(
    triplets: list[Triplet], topics: list[str], paths: list[list[Triplet]] | None = None
) -> Evidence:
    return Evidence(
        question="q?",
        method="any",
        kg="test",
        topic_entities=[LinkedEntity(id=t, name=t, score=1.0, how="given") for t in topics],
        triplets=triplets,
        paths=paths or [],
    )


TWO_HOP = [
    ("Film A", "starred_actors", "Lee Pace"),
    ("Film A", "directed_by", "Dir 1"),
    ("Film B", "starred_actors", "Lee Pace"),
    ("Film B", "directed_by", "Dir 2"),
]


def test_steps_go_out_along_the_stored_direction_and_in_against_it() -> None:
    assert walked_steps(TWO_HOP[:2], "Lee Pace") == [("starred_actors", "in"), ("directed_by", "out")]
    assert walked_steps([("Lee Pace", "born_in", "Texas")], "Lee Pace") == [("born_in", "out")]


def test_the_methods_own_path_supports_its_answer_first() -> None:
    # the triplets alone reach Dir 1 through Film A too; the method's path says Film B's walk was the one
    paths = [[("Film B", "starred_actors", "Lee Pace"), ("Film B", "directed_by", "Dir 1")]]
    ev = _evidence([*TWO_HOP, ("Film B", "directed_by", "Dir 1")], ["Lee Pace"], paths)
    [support] = answer_support(ev, Answer(["Dir 1"], [0.7]))
    assert support.chain == "starred_actors<|directed_by>"
    assert support.path == paths[0] and support.score == 0.7


def test_without_paths_the_shortest_walk_over_the_triplets_supports_it() -> None:
    ev = _evidence(TWO_HOP, ["Lee Pace"])
    details = answer_support(ev, Answer(["Dir 2", "Film A"], [2.0, 1.0]))
    assert [d.chain for d in details] == ["starred_actors<|directed_by>", "starred_actors<"]
    assert details[0].path == [TWO_HOP[2], TWO_HOP[3]]
    assert details[0].to_json()["path"] == [list(TWO_HOP[2]), list(TWO_HOP[3])]


def test_a_walk_never_passes_through_another_topic_entity() -> None:
    # Dir 1 is reached from Lee Pace only through the other topic, Film A: each topic is a start, not a stop
    ev = _evidence(TWO_HOP[:2], ["Lee Pace", "Film A"])
    [support] = answer_support(ev, Answer(["Dir 1"], [1.0]))
    assert support.chain == "directed_by>" and support.path == [TWO_HOP[1]]


def test_an_answer_no_walk_reaches_has_no_chain() -> None:
    ev = _evidence(TWO_HOP, ["Lee Pace"])
    [support] = answer_support(ev, Answer(["Someone the LLM named"], [1.0]))
    assert support.chain == "" and support.path == []
    assert answer_support(_evidence([], ["Lee Pace"]), Answer([], [])) == []


def test_only_the_first_answers_are_detailed() -> None:
    ev = _evidence(TWO_HOP, ["Lee Pace"])
    assert len(answer_support(ev, Answer(["Dir 1", "Dir 2", "Film A"], [3.0, 2.0, 1.0]), limit=2)) == 2
