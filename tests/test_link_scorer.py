"""The linker's candidates, its alternatives and its learned scorer: how names are rewritten as people type
them, the floor, and the scorer fitted and judged on the real linker of KG metaqa."""

from __future__ import annotations

import json
import math
import random
from collections import Counter
from dataclasses import replace
from typing import Any

import pytest
from kgqa.learn.link_scorer import (
    SCORER_FILE,
    LinkScorerConfig,
    _Asked,
    learned_floor,
    mention_variants,
    rewrite_mentions,
    train_link_scorer,
)
from kgqa.models import kg_models
from kgqa.retrieve.linking import link_candidates, link_entities, link_report
from kgqa.training.questions import LabelledQuestion


def _question(text: str, topic: str, span: str, source: str = "file:1") -> LabelledQuestion:
    return LabelledQuestion(text, (topic,), (span,), (), None, source)


def test_a_known_names_variants_include_its_distinctive_and_last_word_and_an_unknown_ones_do_not() -> None:
    df = Counter({"university": 40, "of": 90, "oxford": 2})
    famous = mention_variants("University of Oxford", True, df, random.Random(1))
    assert famous[:2] == ["University of Oxford", "university of oxford"]
    assert "oxford" in famous
    typo = famous[2]
    assert typo != "university of oxford" and abs(len(typo) - len("university of oxford")) <= 1
    rare = mention_variants("University of Oxford", False, df, random.Random(1))
    assert "oxford" not in rare
    assert "amelie" in mention_variants("Amélie", False, Counter(), random.Random(1))


def test_rewriting_touches_only_questions_that_name_their_topic_exactly() -> None:
    names = {"m.1": ("Sony Corporation", 500), "m.2": ("Heat", 3)}
    df = Counter({"corporation": 30, "sony": 3})
    questions = [
        _question("where is Sony Corporation based", "m.1", "Sony Corporation"),
        _question("who directed heat", "m.2", "heat"),
        _question("who founded sony", "m.1", "sony"),  # typed otherwise already: kept as typed
    ]
    rewritten = rewrite_mentions(questions, names, 100, df, 1.0, random.Random(3))
    assert rewritten[0].text != questions[0].text and rewritten[0].text.startswith("where is ")
    assert rewritten[2].text == "who founded sony"
    assert [r.topics for r in rewritten] == [frozenset({"m.1"}), frozenset({"m.2"}), frozenset({"m.1"})]
    kept = rewrite_mentions(questions, names, 100, df, 0.0, random.Random(3))
    assert [r.text for r in kept] == [q.text for q in questions]


class _Candidate:
    def __init__(self, id: str, features: dict[str, float]) -> None:
        self.id, self.features = id, features


def test_the_floor_is_reached_by_all_but_its_share_of_the_best_right_candidates() -> None:
    rows: list[Any] = [
        (
            _Asked(f"q{i}", frozenset({"right"})),
            [_Candidate("right", {"x": i / 10}), _Candidate("w", {"x": 1})],
        )
        for i in range(10)
    ]
    rows.append((_Asked("none right", frozenset({"gone"})), [_Candidate("w", {"x": 1.0})]))
    # probability = sigmoid(10 x - 5): the right candidates' scores rise with i; the question without one is
    # left out
    assert learned_floor(rows, [10.0], -5.0, 0.0) == pytest.approx(1 / (1 + math.exp(5)))
    assert learned_floor(rows, [10.0], -5.0, 0.2) == pytest.approx(1 / (1 + math.exp(3)))
    assert learned_floor([], [10.0], -5.0, 0.1) == 0.0


def test_candidates_carry_their_features_and_links_their_alternatives(driver, metaqa_models: str) -> None:  # type: ignore[no-untyped-def]
    question = "what movies did spielberg direct"
    candidates = link_candidates(driver, question, metaqa_models)
    assert len(candidates) >= 3
    assert all(not c.learned and c.score == c.hand_score for c in candidates)
    assert {"hand_score", "log_degree", "most_connected_on_span", "ordinary"} <= set(candidates[0].features)
    assert [c.score for c in candidates] == sorted((c.score for c in candidates), reverse=True)
    linked = link_entities(driver, question, metaqa_models)
    first = linked[0]
    assert first.alternatives and len(first.alternatives) <= 3
    assert all(a.span == first.span and a.id not in {e.id for e in linked} for a in first.alternatives)
    assert "Steven Spielberg" in [a.name for a in first.alternatives]
    # the alternatives are not part of a link's identity: a link compares equal without them
    assert replace(first, alternatives=()) == first
    report = link_report(driver, question, metaqa_models).to_json()
    assert report["candidates"] and set(report["candidates"][0]) >= {"hand_score", "score", "features", "why"}
    assert link_candidates(driver, "   ", metaqa_models) == []


def test_the_scorer_is_fitted_on_the_kgs_questions_and_installed_only_when_it_links_better(  # type: ignore[no-untyped-def]
    driver, metaqa_models: str, tmp_path
) -> None:
    names = {
        str(r["name"]): str(r["id"])
        for r in driver.execute_query(
            "MATCH (e:Entity {kg: $kg}) WHERE e.name IN $names RETURN e.name AS name, e.id AS id",
            {
                "kg": metaqa_models,
                "names": ["Heat", "Tom Hanks", "Steven Spielberg", "Ginger Rogers", "Alien"],
            },
        ).records
    }
    asked = [
        ("who directed {}", "Heat"),
        ("what films did {} act in", "Tom Hanks"),
        ("which movies did {} direct", "Steven Spielberg"),
        ("who starred with {}", "Ginger Rogers"),
        ("what genre is {}", "Alien"),
    ]
    questions = [_question(t.format(n), names[n], n) for t, n in asked if n in names] * 4
    directory = kg_models.part_dir(metaqa_models, "linking")
    installed = directory / SCORER_FILE
    before = installed.read_bytes() if installed.exists() else None
    try:
        report = train_link_scorer(
            driver,
            metaqa_models,
            questions[:12],
            [],
            questions[12:],
            directory,
            LinkScorerConfig(max_questions=12, max_validation=8),
            progress=lambda _m: None,
        )
        assert report.questions == 12 and report.candidates >= 12
        assert {"topic_first_hand", "topic_first_learned", "floor"} <= set(report.metrics)
        assert installed.exists() == report.kept
        if report.kept:
            model = json.loads(installed.read_text())
            assert len(model["features"]) == len(model["weights"]) and model["floor"] == report.floor
        # without labelled questions to judge it on, nothing is fitted and the hand score links
        none = train_link_scorer(
            driver, metaqa_models, [], questions, [], directory, progress=lambda _m: None
        )
        assert not none.kept and not installed.exists()
    finally:
        if before is not None:
            installed.write_bytes(before)
        else:
            installed.unlink(missing_ok=True)
