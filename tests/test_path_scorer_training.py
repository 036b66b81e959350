"""What the question-to-path scorer is trained on, and the cosine floor it learns (pure functions)."""

from __future__ import annotations

import pytest
from kgqa.training.questions import LabelledQuestion

pytest.importorskip("torch")


def test_the_path_scorer_learns_the_chains_nobody_labelled_from_synthesised_questions() -> None:
    """On a labelled KG the scorer ranks for questions the classifier does not know, which ask chains nobody
    labelled: synthesised questions of those chains fill up to half its questions (of the asked chains, none:
    people's wordings teach those); without labels, every question is synthesised."""
    from kgqa.learn.train_all import scorer_questions

    def questions(n: int, source: str, relation: str = "r") -> list[LabelledQuestion]:
        return [
            LabelledQuestion(f"q{i}", ("t",), ("t",), ("a",), ((relation, "out"),), source) for i in range(n)
        ]

    labelled = questions(3000, "labelled")
    synthesised = questions(1500, "synthesised", "unasked") + questions(500, "synthesised")
    mix = scorer_questions(labelled, synthesised, 2000, seed=7)
    assert len(mix) == 2000 and sum(q.source == "synthesised" for q in mix) == 1000
    assert all(q.chain == (("unasked", "out"),) for q in mix if q.source == "synthesised")
    few = scorer_questions(labelled[:300], synthesised, 2000, seed=7)
    assert sum(q.source == "labelled" for q in few) == 300 and len(few) == 1800  # every labelled one
    assert len(scorer_questions([], synthesised, 2000, seed=7)) == 2000  # no labels: any chain
    assert scorer_questions(labelled, [], 2000, seed=7) == scorer_questions(labelled, [], 2000, seed=7)
    assert len(scorer_questions(labelled, [], 2000, seed=7)) == 2000
    # every round trip ("other films of X's director") is kept: the synthesiser walks few of them
    trip = LabelledQuestion("t", ("t",), ("t",), ("a",), (("d", "out"), ("d", "in")), "synthesised")
    with_trips = scorer_questions([], synthesised + [trip] * 30, 500, seed=7)
    assert len(with_trips) == 500 and sum(q is trip for q in with_trips) == 30


def test_the_cosine_floor_leaves_the_learned_share_of_held_out_questions_below_it() -> None:
    from kgqa.training.path_scorer import cosine_floor

    cosines = [i / 100 for i in range(100)]  # 0.00 .. 0.99
    assert cosine_floor(cosines, 0.05) == 0.05  # five of the hundred fall below it
    assert sum(c < cosine_floor(cosines, 0.05) for c in cosines) == 5
    assert cosine_floor(list(reversed(cosines)), 0.0) == 0.0  # nothing below: the lowest
    assert cosine_floor([], 0.05) == 0.0  # nothing held out: no floor


def test_if_missing_trains_again_a_labelled_kgs_scorer_without_a_cosine_floor(
    tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A scorer trained on labelled questions before scorers learned their floor answers every question: an
    `--if-missing` training fits it again. Without labelled questions there is no floor to learn."""
    from kgqa.learn.train_all import part_up_to_date
    from kgqa.models import kg_models
    from kgqa.models.kg_models import KgProfile, PartReport

    monkeypatch.setenv("KGQA_HOME", str(tmp_path))
    meta = kg_models.part_dir("k", "path_scorer") / "meta.json"
    meta.parent.mkdir(parents=True)
    meta.write_text("{}")

    def profile(labelled: int, metrics: dict[str, float]) -> KgProfile:
        return KgProfile("k", "f", "now", [], labelled, 10, {"path_scorer": PartReport(1.0, 10, metrics)})

    assert part_up_to_date("k", "path_scorer", profile(5, {"chain_at_1_held_out": 0.9, "cosine_floor": 0.3}))
    assert not part_up_to_date("k", "path_scorer", profile(5, {"chain_at_1_held_out": 0.9}))
    assert part_up_to_date("k", "path_scorer", profile(0, {"chain_at_1_held_out": 0.9}))
    assert not part_up_to_date("k", "path_scorer", None)  # files without a report
    meta.unlink()
    assert not part_up_to_date("k", "path_scorer", profile(0, {"chain_at_1_held_out": 0.9}))
