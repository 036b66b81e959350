"""The benchmark readers on the real files in ../shared/data (skipped where the data is absent)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from kgqa.evaluation.datasets import load_dataset


def test_metaqa_splits_question_types_and_gold_triples(shared_data: Path) -> None:
    dev = load_dataset("metaqa", "dev", shared_data / "metaqa")
    assert Counter(q.hops for q in dev.questions) == {1: 9992, 2: 14872, 3: 14274}
    assert len(dev.notes) == 1 and dev.notes[0].startswith("gold triples:")
    first = dev.questions[0]
    assert (first.id, first.question, first.qtype) == (
        "metaqa-dev-1hop-00001",
        "what movies did [Temuera Morrison] act in",
        "actor_to_movie",
    )
    assert first.answers == ("Once Were Warriors", "Tracker", "River Queen")
    assert first.topic_entities == (("Temuera Morrison", "Temuera Morrison"),)
    assert first.relation_path == ("starred_actors_inv",)
    assert dev.gold_triples(first) == sorted(
        (film, "starred_actors", "Temuera Morrison") for film in first.answers
    )
    three = next(q for q in dev.questions if q.hops == 3)
    assert three.relation_path == ("directed_by", "directed_by_inv", "has_genre")  # README sample, line 1
    gold = dev.gold_triples(three)
    assert gold and all(rel in ("directed_by", "has_genre") for _h, rel, _t in gold)
    assert {t for _h, rel, t in gold if rel == "has_genre"} == {"Drama", "Music"}
    # a seeded sample of one hop
    test = load_dataset("metaqa", "test", shared_data / "metaqa", hops=[2], limit=50, seed=3)
    assert len(test.questions) == 50 and {q.hops for q in test.questions} == {2}
    assert all(q.qtype and q.relation_path for q in test.questions)


def test_webqsp_and_cwq_test_files(shared_data: Path) -> None:
    webqsp = load_dataset("webqsp", "test", shared_data / "webqsp")
    assert len(webqsp.questions) == 1628 and webqsp.skipped == {"no gold answer": 11}
    q = next(x for x in webqsp.questions if x.id == "WebQTest-377")
    assert q.question == "what school did michael jordan attend?"
    assert q.topic_entities == (("m.054c1", "Michael Jordan"),)
    assert "University of North Carolina at Chapel Hill" in q.answers
    assert sum(1 for x in webqsp.questions if x.hops) > 1500  # inferential chains matched by question text
    assert webqsp.gold_triples(webqsp.questions[0]) is not None

    cwq = load_dataset("cwq", "test", shared_data / "cwq")
    assert len(cwq.questions) == 3531
    first = cwq.questions[0]
    assert first.id == "WebQTest-832_c334509bb5e02cacae1ba2e80c176499"
    assert first.answers == ("2014 World Series",) and first.answer_ids == ("m.0117q3yz",)
    assert first.qtype == "composition" and first.topic_entities == (("m.03_dwn", "Lou Seal"),)
    assert cwq.gold_triples(first)


def test_webqsp_train_gives_topic_and_answer_mids(shared_data: Path) -> None:
    train = load_dataset("webqsp", "train", shared_data / "webqsp")
    assert len(train.questions) == 2850
    q = train.questions[0]
    assert q.question == "what character did natalie portman play in star wars"
    assert q.topic_entities == (("m.09l3p", ""),) and q.answer_ids == ("m.0drf_",) and q.answers == ()
    assert q.hops == 2  # film.actor.film|film.performance.character


def test_only_metaqa_and_webqsp_have_a_dev_split_and_only_metaqa_hops(shared_data: Path) -> None:
    from kgqa.core.errors import KgqaError

    with pytest.raises(KgqaError, match="no 'dev' split"):
        load_dataset("cwq", "dev", shared_data / "cwq")
    with pytest.raises(KgqaError, match="--hops applies to metaqa only"):
        load_dataset("webqsp", "test", shared_data / "webqsp", hops=[1])


def test_webqsp_dev_is_the_train_questions_the_kgs_training_held_out(shared_data: Path) -> None:
    from kgqa.evaluation.reachable import held_out_questions

    train = load_dataset("webqsp", "train", shared_data / "webqsp")
    dev = held_out_questions(train, ["What character did Natalie Portman play in Star Wars?"])
    assert [q.question for q in dev.questions] == ["what character did natalie portman play in star wars"]
    assert held_out_questions(train, []).questions == []
