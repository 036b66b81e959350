"""A chain whose ends are of another kind than the question asks for loses probability; nothing else moves.

The kinds below are written the way the database gives them (the subject words of the relations an entity is
the head of: :func:`kgqa.retrieve.answer_kinds.entity_kinds`); the cosines are the stock encoder's.
"""

from __future__ import annotations

from typing import Any

from kgqa.core.question_words import asked_for
from kgqa.retrieve.answer_kinds import chain_fits, kind_fit, reweighted, says_types

KINDS = {
    "Binghamton": ["citytown", "hud county place", "location"],
    "Delaware County": ["us county", "location", "statistical region"],
    "NBC": ["tv network", "organization"],
    "English Language": ["human language", "field of study"],
    "Action": [],
}


def test_the_kind_asked_fits_the_entities_of_that_kind_best(neo4j_env: Any) -> None:
    city = asked_for("Which city is the seat of Broome County, NY?")
    assert kind_fit(city, KINDS["Binghamton"]) > kind_fit(city, KINDS["Delaware County"])  # type: ignore[operator]
    channel = asked_for("what channel did the golden girls air on")
    assert kind_fit(channel, KINDS["NBC"]) > kind_fit(channel, KINDS["English Language"])  # type: ignore[operator]


def test_unknown_kinds_fit_nothing_and_an_unasked_kind_is_unknown(neo4j_env: Any) -> None:
    assert kind_fit("city", []) is None
    assert kind_fit("", KINDS["Binghamton"]) is None
    assert chain_fits("genre", {"a>": ["Action"], "b>": ["Nobody"], "c>": []}, KINDS) == {
        "a>": None,
        "b>": None,
        "c>": None,
    }
    assert chain_fits("", {"a>": ["Binghamton"]}, KINDS) == {"a>": None}


def test_a_chain_of_another_kind_loses_probability_to_one_of_the_kind_asked(neo4j_env: Any) -> None:
    ends = {"county>": ["Delaware County"], "city>": ["Binghamton"], "untyped>": ["Action"], "none>": []}
    fits = chain_fits("city", ends, KINDS)
    lowered = reweighted([0.4, 0.3, 0.2, 0.1], [fits[k] for k in ends])
    assert lowered is not None
    assert lowered[0] < 0.3 and lowered[1:] == [0.3, 0.2, 0.1]  # the city chain now leads
    # what the county chain lost is not shared out: the others are no likelier for it


def test_nothing_moves_when_no_fit_is_known_sure_or_apart() -> None:
    assert reweighted([0.7, 0.3], [None, None]) is None
    assert reweighted([0.7, 0.3], [0.1, 0.5]) is None  # the best fit is not one the encoder is sure of
    assert reweighted([0.7, 0.3], [0.6, 0.65]) is None  # within the gap the scorer is trusted


def test_a_kg_whose_relation_names_say_no_type_is_not_read() -> None:
    assert says_types([(("film.film.directed_by", "out"),), (("born_in", "in"),)])
    assert not says_types([(("directed_by", "in"), ("born_in", "out"))])
    assert not says_types([])
