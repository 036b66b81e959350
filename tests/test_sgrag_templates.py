"""SG-RAG's one path template, rendered per MetaQA question type: its shape (no database), and each type on
real MetaQA dev questions."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from kgqa.core.metaqa import qtype_hops, qtype_steps, read_questions
from kgqa.retrieve.sgrag import path_query, run_template

QUESTIONS_PER_TYPE = 3
# Known MetaQA quirks where no KB path gives the gold answers: answers split at a comma ("Paris, Texas"),
# and an answer equal to the topic entity. The templates are right not to produce them.
QUIRKS = {
    "what does [Harry Dean Stanton] star in",
    "what movies can be described by [elizabeth taylor]",
    "which films are about [9/11]",
}


def _metaqa_qtypes(root: Path) -> dict[int, set[str]]:
    found: dict[int, set[str]] = {}
    for hops in (1, 2, 3):
        types = set((root / f"{hops}-hop" / "qa_dev_qtype.txt").read_text(encoding="utf-8").split())
        types |= set((root / f"{hops}-hop" / "qa_train_qtype.txt").read_text(encoding="utf-8").split())
        found[hops] = types
    return found


# MetaQA's 49 question types (its dev and train labels), listed so that the shape tests need no data.
QTYPES = [
    "actor_to_movie",
    "actor_to_movie_to_actor",
    "actor_to_movie_to_director",
    "actor_to_movie_to_genre",
    "actor_to_movie_to_language",
    "actor_to_movie_to_writer",
    "actor_to_movie_to_year",
    "director_to_movie",
    "director_to_movie_to_actor",
    "director_to_movie_to_director",
    "director_to_movie_to_genre",
    "director_to_movie_to_language",
    "director_to_movie_to_writer",
    "director_to_movie_to_year",
    "movie_to_actor",
    "movie_to_actor_to_movie",
    "movie_to_actor_to_movie_to_director",
    "movie_to_actor_to_movie_to_genre",
    "movie_to_actor_to_movie_to_language",
    "movie_to_actor_to_movie_to_writer",
    "movie_to_actor_to_movie_to_year",
    "movie_to_director",
    "movie_to_director_to_movie",
    "movie_to_director_to_movie_to_actor",
    "movie_to_director_to_movie_to_genre",
    "movie_to_director_to_movie_to_language",
    "movie_to_director_to_movie_to_writer",
    "movie_to_director_to_movie_to_year",
    "movie_to_genre",
    "movie_to_imdbrating",
    "movie_to_imdbvotes",
    "movie_to_language",
    "movie_to_tags",
    "movie_to_writer",
    "movie_to_writer_to_movie",
    "movie_to_writer_to_movie_to_actor",
    "movie_to_writer_to_movie_to_director",
    "movie_to_writer_to_movie_to_genre",
    "movie_to_writer_to_movie_to_language",
    "movie_to_writer_to_movie_to_year",
    "movie_to_year",
    "tag_to_movie",
    "writer_to_movie",
    "writer_to_movie_to_actor",
    "writer_to_movie_to_director",
    "writer_to_movie_to_genre",
    "writer_to_movie_to_language",
    "writer_to_movie_to_writer",
    "writer_to_movie_to_year",
]


def test_every_metaqa_question_type_has_a_path(shared_data: Path) -> None:
    found = _metaqa_qtypes(shared_data / "metaqa")
    assert {h: len(t) for h, t in found.items()} == {1: 13, 2: 21, 3: 15}
    assert set().union(*found.values()) == set(QTYPES)
    for hops, types in found.items():
        assert {qtype_hops(t) for t in types} == {hops}


@pytest.mark.parametrize("qtype", QTYPES)
def test_template_shape(qtype: str) -> None:
    text = path_query(qtype)
    # Values only as parameters: no string literals at all in the query text.
    assert "'" not in text and '"' not in text
    for param in ("$kg", "$topic_ids", "$max_paths"):
        assert param in text
    assert "LIMIT $max_paths" in text
    # The relation path in the template is the one the type name states, with directions.
    pattern = next(line for line in text.splitlines() if line.startswith("MATCH (n0)"))
    steps = re.findall(r"(<-|-)\[r\d+:`(\w+)`\]-(>?)", pattern)
    assert [(rel, "in" if left == "<-" else "out") for left, rel, _right in steps] == qtype_steps(qtype)
    assert len(steps) == qtype_hops(qtype)
    # No backtracking through the topic entity: every later node is compared with it.
    for i in range(1, qtype_hops(qtype) + 1):
        assert f"n{i} <> n0" in text


def _questions_by_type() -> dict[str, list[tuple[str, str, set[str]]]]:
    out: dict[str, list[tuple[str, str, set[str]]]] = {}
    for hops in (1, 2, 3):
        for q in read_questions("dev", hops):
            bucket = out.setdefault(q.qtype, [])
            if len(bucket) < QUESTIONS_PER_TYPE and q.question not in QUIRKS:
                bucket.append((q.question, q.topic, set(q.answers)))
    return out


@pytest.fixture(scope="module")
def dev_questions(shared_data: Path) -> dict[str, list[tuple[str, str, set[str]]]]:
    del shared_data
    return _questions_by_type()


Cases = dict[str, list[tuple[str, str, set[str]]]]


@pytest.mark.parametrize("qtype", QTYPES)
def test_template_answers_cover_gold_on_dev(
    qtype: str,
    driver,
    metaqa_kg: str,  # type: ignore[no-untyped-def]
    dev_questions: Cases,
) -> None:
    cases = dev_questions[qtype]
    assert cases, f"no dev question of type {qtype}"
    ids = {
        r["name"]: r["id"]
        for r in driver.execute_query(
            "UNWIND $names AS name MATCH (e:Entity {kg: $kg, name: name}) RETURN e.name AS name, e.id AS id",
            names=[topic for _q, topic, _gold in cases],
            kg=metaqa_kg,
        ).records
    }
    for question, topic, gold in cases:
        match = run_template(driver, qtype, metaqa_kg, [ids[topic]])
        answers = set(match.answers)
        assert gold <= answers, f"{question}: missing {sorted(gold - answers)[:5]}"
        assert topic not in answers
        assert not match.truncated
        for path in match.paths:
            assert len(path) == qtype_hops(qtype)
            assert all(len(t) == 3 for t in path)
