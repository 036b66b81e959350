"""Chains arriving at people are ruled out for a question asking for a place, and nothing else is.

The kinds below are written the way ``kgqa train all`` reads them off a KG (the subject words of the relations
the reached entities have, :mod:`kgqa.training.answer_types`); the axis is the stock encoder's.
"""

from __future__ import annotations

from typing import Any

from kgqa.core.question_words import asked_for
from kgqa.retrieve.answer_side import SURE_SIDE, asks_for_a_place, people_for_a_place, side

PERSON_STEP = ("people.person.place_of_birth", "in")
PLACE_STEP = ("people.person.place_of_birth", "out")
FILM_STEP = ("film.film.directed_by", "in")
UNKNOWN_STEP = ("music.artist.origin", "out")
KINDS = {
    "in:people.person.place_of_birth": "person award nominee actor",
    "out:people.person.place_of_birth": "location bibs location topic",
    "in:film.film.directed_by": "film award winning work topic",
}
CHAINS = [(PERSON_STEP,), (PLACE_STEP,), (FILM_STEP,), (UNKNOWN_STEP,), (PLACE_STEP, PERSON_STEP)]


def test_a_place_asked_rules_out_chains_ending_at_people_only(neo4j_env: Any) -> None:
    for question in ("where was the drummer of the band born?", "Where did she grow up"):
        assert asks_for_a_place(asked_for(question))
        assert people_for_a_place(asked_for(question), KINDS, CHAINS) == [True, False, False, False, True]


def test_a_person_asked_rules_out_nothing(neo4j_env: Any) -> None:
    """Countries and organisations answer "who" too ("who speaks farsi"): places are never ruled out."""
    assert side(asked_for("who owns the label?")) > SURE_SIDE
    assert not asks_for_a_place(asked_for("who owns the label?"))
    assert not any(people_for_a_place(asked_for("who owns the label?"), KINDS, CHAINS))


def test_a_question_that_asks_no_place_rules_out_nothing(neo4j_env: Any) -> None:
    for question in ("which films did she star in", "what band was he in", "when was it released", "x"):
        assert not any(people_for_a_place(asked_for(question), KINDS, CHAINS)), question
    assert people_for_a_place("", KINDS, CHAINS) == [False] * len(CHAINS)


def test_kinds_near_the_middle_are_never_ruled_out(neo4j_env: Any) -> None:
    """MetaQA's steps arrive at kinds said by plain relation names: none is sure enough to rule out."""
    plain = {"in:directed_by": "directed by written by starred actors", "in:starred_actors": "starred actors"}
    chains = [(("directed_by", "in"),), (("starred_actors", "in"),)]
    assert people_for_a_place(asked_for("where was it shot"), plain, chains) == [False, False]
    assert side("person") > SURE_SIDE > abs(side("film")) and side("place location") < -SURE_SIDE
