"""The steps a KG's labelled questions end with, per kind they ask for (no database)."""

from __future__ import annotations

import numpy as np
from kgqa.learn.frag_ranker import learn_asked_steps
from kgqa.models.frag_ranker import FragRanker
from kgqa.retrieve.frag_ranking import WordMatch, feature_rows
from kgqa.training.questions import LabelledQuestion


def _question(text: str, *chain: tuple[str, str]) -> LabelledQuestion:
    return LabelledQuestion(text, ("t",), ("x",), ("a",), tuple(chain), "file:1")


def test_each_asked_kind_learns_the_share_of_its_last_steps() -> None:
    questions = [
        _question("who directed x", ("directed_by", "out")),
        _question("who wrote x", ("written_by", "out")),
        _question("who directed the films x starred in", ("starred_actors", "in"), ("directed_by", "out")),
        _question("which films did x star in", ("starred_actors", "in")),
        _question("what is x about", ("has_tags", "out")),  # asks for no kind
    ]
    learned = learn_asked_steps(questions, min_asked=2)
    assert learned == {"person": {"out:directed_by": round(2 / 3, 4), "out:written_by": round(1 / 3, 4)}}
    assert learn_asked_steps(questions, min_asked=4) == {}  # too few to learn from


def test_a_learned_kind_is_the_kind_feature() -> None:
    ranker = FragRanker(asked_steps={"person": {"out:directed_by": 0.75}})
    chains = [(("starred_actors", False),), (("starred_actors", False), ("directed_by", True))]
    rows = feature_rows(
        chains,
        np.zeros(3, dtype=np.float32),
        WordMatch([], None),
        None,
        None,
        ranker,
        "person",
        chain_similarity=lambda cs: np.zeros(len(cs), dtype=np.float32),
    )
    assert rows[:, 3].tolist() == [0.0, 0.75]
