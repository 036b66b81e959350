"""One linker, two roads: `kgqa ask` and a Cypher user's `CALL kgqa.subgraphrag.retrieve('question')` link the
same question to the same topic entities, because both call the one in-database linker (kgqa.link.entities).

200 questions: MetaQA dev questions with their brackets removed (as typed, lower-cased, with a typo) and the
hand-written free-form set (bench/questions/metaqa_freeform.jsonl). For each, the ask road's linked entities
(`QuestionAnswerer.ask(...).to_json()`, what `kgqa ask --json` prints; a few go through the real CLI too) must
equal `kgqa.link.entities`, and `kgqa.subgraphrag.retrieve` given only the question must return exactly the
rows it returns when given the ask road's entity ids.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from kgqa.core.text import without_brackets
from kgqa.evaluation.metaqa import read_questions
from kgqa.qa.answering import QuestionAnswerer
from neo4j import Driver
from neo4j.exceptions import ClientError

from tests.conftest import REPO, run_kgqa

FREEFORM = REPO / "bench" / "questions" / "metaqa_freeform.jsonl"
SEED = 20261123
QUESTIONS = 200
CLI_QUESTIONS = 5
K = 30


def _typo(text: str, rng: random.Random) -> str:
    words = text.split(" ")
    k = max(range(len(words)), key=lambda i: len(words[i]))
    if len(words[k]) >= 5:
        pos = rng.randrange(1, len(words[k]) - 1)
        words[k] = words[k][:pos] + words[k][pos + 1 :]
    return " ".join(words)


def _questions(shared_data: Path) -> list[str]:
    rng = random.Random(SEED)
    dev = [q for hops in (1, 2, 3) for q in read_questions("dev", hops, root=shared_data / "metaqa")]
    picked = rng.sample(dev, 140)
    out = []
    for i, q in enumerate(picked):
        plain = without_brackets(q.question)
        if i % 3 == 1:
            plain = plain.lower()
        elif i % 3 == 2:
            plain = without_brackets(q.question.replace(f"[{q.topic}]", _typo(q.topic, rng)))
        out.append(plain)
    freeform = [json.loads(line)["question"] for line in FREEFORM.read_text(encoding="utf-8").splitlines()]
    out += rng.sample(freeform, QUESTIONS - len(out))
    return out


def _rows(driver: Driver, question: str, config: dict[str, Any]) -> list[tuple[Any, ...]] | str:
    try:
        records = driver.execute_query(
            "CALL kgqa.subgraphrag.retrieve($q, $config) YIELD head, relation, tail, score "
            "RETURN head, relation, tail, score",
            q=question,
            config=config,
        ).records
    except ClientError as error:  # no topic entity found: the same one-line error on both calls
        return str(error.message).splitlines()[0]
    return [(r["head"], r["relation"], r["tail"], round(float(r["score"]), 5)) for r in records]


@pytest.fixture(scope="module")
def answerer(driver: Driver, metaqa_kg: str, question_classifiers: Path) -> QuestionAnswerer:
    return QuestionAnswerer(driver, "cosine", metaqa_kg)


def test_ask_and_cypher_link_200_questions_identically(
    driver: Driver, metaqa_kg: str, subgraphrag_model: str, answerer: QuestionAnswerer, shared_data: Path
) -> None:
    questions = _questions(shared_data)
    assert len(questions) == QUESTIONS
    linked_somewhere = 0
    for question in questions:
        asked = answerer.ask(question).to_json()["linked_entities"]
        in_db = [
            dict(r)
            for r in driver.execute_query(
                "CALL kgqa.link.entities($q, {kg: $kg}) YIELD id, name, score, how, span "
                "RETURN id, name, score, how, span",
                q=question,
                kg=metaqa_kg,
            ).records
        ]

        def key(entity: dict[str, Any]) -> tuple[str, str, str]:
            return entity["id"], entity["how"], entity["span"]

        assert [key(e) for e in asked] == [key(e) for e in in_db]
        assert [e["score"] for e in asked] == pytest.approx([round(e["score"], 4) for e in in_db], abs=1e-4)
        config = {"kg": metaqa_kg, "k": K}
        linked_in_procedure = _rows(driver, question, config)
        if asked:
            linked_somewhere += 1
            # The words that named each entity go along, as `kgqa ask` sends them: the model masks them in
            # z_q, and a misspelt name ("Ncolas Bro") is not the entity's own name.
            spans = [e["span"] or e["name"] for e in asked]
            given = _rows(
                driver, question, {**config, "topicEntities": [e["id"] for e in asked], "topicSpans": spans}
            )
            assert linked_in_procedure == given, question
        else:
            assert isinstance(linked_in_procedure, str) and "no topic entity" in linked_in_procedure, question
    assert linked_somewhere >= 0.9 * QUESTIONS


def test_the_cli_prints_what_the_library_links(answerer: QuestionAnswerer, shared_data: Path) -> None:
    for question in _questions(shared_data)[:: QUESTIONS // CLI_QUESTIONS]:
        proc = run_kgqa("ask", question, "--kg", answerer.kg, "--method", "cosine", "--json")
        assert proc.returncode == 0, proc.stderr
        printed = json.loads(proc.stdout)["linked_entities"]
        assert printed == answerer.ask(question).to_json()["linked_entities"]
