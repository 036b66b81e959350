"""SG-RAG question-type templates: their shape (no database), and each one on real MetaQA dev questions."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from kgqa.graph.cypher import render
from kgqa.retrieve.sgrag import entity_ids_by_name, run_template, sgrag_qtypes
from kgqa.training.metaqa_data import qtype_hops, qtype_steps, read_questions

QUESTIONS_PER_TYPE = 3
# Known MetaQA quirks where no KB path gives the gold answers: answers split at a comma ("Paris, Texas"),
# and an answer equal to the topic entity. The templates are right not to produce them.
QUIRKS = {
    "what does [Harry Dean Stanton] star in",
    "what movies can be described by [elizabeth taylor]",
    "which films are about [9/11]",
}


def test_one_template_per_metaqa_question_type(shared_data: Path) -> None:
    root = shared_data / "metaqa"
    found: dict[int, set[str]] = {}
    for hops in (1, 2, 3):
        types = set((root / f"{hops}-hop" / "qa_dev_qtype.txt").read_text(encoding="utf-8").split())
        types |= set((root / f"{hops}-hop" / "qa_train_qtype.txt").read_text(encoding="utf-8").split())
        found[hops] = types
    assert {h: len(t) for h, t in found.items()} == {1: 13, 2: 21, 3: 15}
    assert set().union(*found.values()) == set(sgrag_qtypes())


@pytest.mark.parametrize("qtype", sorted(sgrag_qtypes()))
def test_template_shape(qtype: str) -> None:
    text = render(f"sgrag/{qtype}")
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


@pytest.fixture(scope="module")
def metaqa_kg(driver) -> str:  # type: ignore[no-untyped-def]
    rows = driver.execute_query(
        "MATCH (k:KG {name: 'metaqa'}) "
        "OPTIONAL MATCH (:Entity {kg: 'metaqa', name: 'Kismet'})-[r]->() "
        "RETURN count(r) AS n"
    ).records
    if not rows or rows[0]["n"] == 0:
        pytest.skip("KG 'metaqa' is not loaded in the test server (kgqa load metaqa --path ...)")
    return "metaqa"


Cases = dict[str, list[tuple[str, str, set[str]]]]


@pytest.mark.parametrize("qtype", sorted(sgrag_qtypes()))
def test_template_answers_cover_gold_on_dev(
    qtype: str,
    driver,
    metaqa_kg: str,  # type: ignore[no-untyped-def]
    dev_questions: Cases,
) -> None:
    cases = dev_questions[qtype]
    assert cases, f"no dev question of type {qtype}"
    ids = entity_ids_by_name(driver, metaqa_kg, [topic for _q, topic, _gold in cases])
    for question, topic, gold in cases:
        match = run_template(driver, qtype, metaqa_kg, [ids[topic]])
        answers = set(match.answers)
        assert gold <= answers, f"{question}: missing {sorted(gold - answers)[:5]}"
        assert topic not in answers
        assert not match.truncated
        for path in match.paths:
            assert len(path) == qtype_hops(qtype)
            assert all(len(t) == 3 for t in path)
