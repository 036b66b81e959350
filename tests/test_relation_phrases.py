"""SimGRAG's relation phrases: learned from people's questions only, never from synthesised ones."""

from __future__ import annotations

from kgqa.training.questions import LabelledQuestion
from kgqa.training.relation_phrases import learn_relation_phrases
from kgqa.training.synthesis import SOURCE as SYNTHESISED


def _q(text: str, topic: str, relation: str, source: str = "questions.txt:1") -> LabelledQuestion:
    return LabelledQuestion(
        text=text,
        topic_ids=("e1",),
        topic_spans=(topic,),
        answer_ids=("e2",),
        chain=((relation, "out"),),
        source=source,
    )


def test_a_word_people_use_for_one_relation_becomes_its_phrase() -> None:
    questions = [_q(f"who helmed {name}", name, "directed_by") for name in ("Alien", "Heat", "Ran", "Up")]
    questions += [_q(f"who starred in {name}", name, "starred_actors") for name in ("Alien", "Heat", "Ran")]
    phrases = learn_relation_phrases(questions, ["directed_by", "starred_actors"])
    assert phrases["directed_by"][0] == "directed by"  # the relation's own words come first
    assert "helmed" in phrases["directed_by"]
    assert "helmed" not in phrases["starred_actors"]
    assert "starred" in phrases["starred_actors"]
    # the topic's words are never a phrase
    assert "alien" not in phrases["directed_by"]


def test_synthesised_questions_teach_nothing() -> None:
    questions = [
        _q(f"the gender of {name}", name, "has_genre", source=SYNTHESISED)
        for name in ("Alien", "Heat", "Ran", "Up")
    ]
    phrases = learn_relation_phrases(questions, ["has_genre"])
    assert phrases["has_genre"] == ["has genre"]


def test_a_word_shared_by_many_relations_is_nobodys_phrase() -> None:
    questions = [_q(f"tell me about the film {n}", n, "directed_by") for n in ("Alien", "Heat", "Ran")]
    questions += [_q(f"tell me about the film {n}", n, "starred_actors") for n in ("Up", "Jaws", "Big")]
    phrases = learn_relation_phrases(questions, ["directed_by", "starred_actors"], min_share=0.6)
    assert "film" not in phrases["directed_by"] and "film" not in phrases["starred_actors"]


def test_a_word_few_of_a_relations_questions_use_is_noise() -> None:
    names = [f"Film{i}" for i in range(2000)]
    questions = [_q(f"who directed {n}", n, "directed_by") for n in names]
    # a paraphraser's slip: 4 of 2,004 questions, all of them this relation's
    questions += [_q(f"who went toward {n}", n, "directed_by") for n in names[:4]]
    phrases = learn_relation_phrases(questions, ["directed_by"])
    assert "directed" in phrases["directed_by"] and "toward" not in phrases["directed_by"]
    # on a KG with few questions, the same 4 are a phrase
    few = learn_relation_phrases(questions[:10] + questions[-4:], ["directed_by"])
    assert "toward" in few["directed_by"]
