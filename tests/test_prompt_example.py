"""The LLM prompt's worked example comes from the KG's own questions, walked in the real database."""

from __future__ import annotations

from typing import Any

from kgqa.learn.prompt_example import MAX_ANSWERS, prompt_example
from kgqa.training.questions import LabelledQuestion

STARRED_THEN_DIRECTED = (("starred_actors", "in"), ("directed_by", "out"))


def question(text: str, topic: str, chain: tuple[tuple[str, str], ...]) -> LabelledQuestion:
    return LabelledQuestion(text, (topic,), (topic,), (), chain, "test")


def test_the_example_is_a_question_of_the_kg_with_the_triplets_that_reach_its_answers(
    driver: Any, metaqa_kg: str
) -> None:
    many = question("who directed the films that Tom Hanks starred in", "Tom Hanks", STARRED_THEN_DIRECTED)
    few = question("who directed the films that Lee Pace starred in", "Lee Pace", STARRED_THEN_DIRECTED)
    example = prompt_example(driver, metaqa_kg, [many, few])
    assert example is not None and example.question == few.text  # Tom Hanks's directors are too many
    assert 0 < len(example.answers) <= MAX_ANSWERS
    for answer in example.answers:  # each answer is reached from the topic along the chain
        films = {h for h, r, t in example.triplets if r == "directed_by" and t == answer}
        assert any((film, "starred_actors", "Lee Pace") in example.triplets for film in films)
    nowhere = question("who directed the films No One starred in", "No One", STARRED_THEN_DIRECTED)
    assert prompt_example(driver, metaqa_kg, [nowhere]) is None
