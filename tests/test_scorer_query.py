"""The question as the path scorer reads it: every topic span masked, the same text in every process."""

from __future__ import annotations

from kgqa.models.path_scorer import TOPIC_MASK, scorer_query


def test_every_topic_span_is_masked_whatever_their_order() -> None:
    question = "Who acted in both Pulp Fiction and Jackie Brown"
    spans = ["Pulp Fiction", "Jackie Brown"]  # as long as each other: the order once came from a set's hash
    expected = f"who acted in both {TOPIC_MASK} and {TOPIC_MASK}"
    assert scorer_query(question, spans) == scorer_query(question, spans[::-1]) == expected
    assert (
        scorer_query(question, ["Pulp Fiction", "Pulp Fiction"])
        == f"who acted in both {TOPIC_MASK} and jackie brown"
    )


def test_a_bracketed_topic_and_a_span_the_question_lacks() -> None:
    assert (
        scorer_query("what films did [Tom Hanks] star in", ["Tom Hanks"])
        == f"what films did {TOPIC_MASK} star in"
    )
    # a name the question does not contain masks nothing; the linked words do
    assert scorer_query("who directed Alien", ["Alien (film)", "Alien"]) == f"who directed {TOPIC_MASK}"
    assert scorer_query("who directed Alien", []) == "who directed alien"
