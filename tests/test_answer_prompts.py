"""Prompt formats per method, and reading answers back from messy model output."""

from __future__ import annotations

from pathlib import Path

import pytest
from kgqa.answer.prompts import (
    DEFAULT_EXAMPLE,
    SUBGRAPHRAG_SYSTEM,
    build_messages,
    frag_path,
    map_to_entities,
    mentioned_entities,
    parse_answers,
    style_for,
)
from kgqa.core.text import normalize_answer
from kgqa.core.types import Evidence, LinkedEntity, Triplet
from kgqa.models.kg_models import PromptExample, write_prompt_example

TRIPLETS: list[Triplet] = [
    ("Film A", "starred_actors", "Lee Pace"),
    ("Film A", "directed_by", "Barry Sonnenfeld"),
    ("The Fall", "starred_actors", "Lee Pace"),
    ("The Fall", "directed_by", "Tarsem Singh"),
]


def evidence(method: str, paths: list[list[Triplet]] | None = None) -> Evidence:
    return Evidence(
        question="who directed the films that Lee Pace starred in?",
        method=method,
        kg="test",
        topic_entities=[LinkedEntity("Lee Pace", "Lee Pace", 1.0, "given")],
        triplets=list(TRIPLETS),
        paths=paths or [],
    )


def test_style_follows_the_method() -> None:
    assert style_for("subgraphrag") == "subgraphrag"
    assert style_for("frag") == "frag"
    for other in ("sgrag", "simgrag", "gsr", "anything"):
        assert style_for(other) == "sgrag"


def test_subgraphrag_prompt_has_its_system_prompt_one_example_and_triplet_lines() -> None:
    messages = build_messages(evidence("subgraphrag"))
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
    assert messages[0]["content"] == SUBGRAPHRAG_SYSTEM and '"ans:"' in SUBGRAPHRAG_SYSTEM
    assert "ans: " in messages[2]["content"]  # the worked example answers in the format asked for
    assert parse_answers(messages[2]["content"]) == list(DEFAULT_EXAMPLE.answers)  # a KG without its own
    last = messages[3]["content"]
    assert last == (
        "Triplets:\n(Film A, starred_actors, Lee Pace)\n(Film A, directed_by, Barry Sonnenfeld)\n"
        "(The Fall, starred_actors, Lee Pace)\n(The Fall, directed_by, Tarsem Singh)\n\n"
        "Question:\nwho directed the films that Lee Pace starred in?"
    )


def test_a_trained_kg_gets_its_own_worked_example(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The example is the KG's own question, triplets and answers (`kgqa train all` writes it)."""
    monkeypatch.setenv("KGQA_HOME", str(tmp_path))
    own = PromptExample(
        "which language is spoken where Tagore was born",
        (("Rabindranath Tagore", "born_in", "Kolkata"), ("Kolkata", "language", "Bengali")),
        ("Bengali",),
    )
    write_prompt_example("test", own)
    messages = build_messages(evidence("subgraphrag"))
    assert "(Kolkata, language, Bengali)" in messages[1]["content"] and own.question in messages[1]["content"]
    assert parse_answers(messages[2]["content"]) == ["Bengali"]
    assert "Ada Lovelace" not in messages[1]["content"]
    (tmp_path / "models" / "kgs" / "test" / "prompt_example.json").write_text("{not json")
    assert "Ada Lovelace" in build_messages(evidence("subgraphrag"))[1]["content"]  # unreadable: the default


def test_frag_prompt_writes_reasoning_paths_from_the_topic() -> None:
    paths = [[TRIPLETS[2], TRIPLETS[3]], [("Lee Pace", "acted_in", "Film A"), TRIPLETS[1]]]
    messages = build_messages(evidence("frag", paths))
    assert [m["role"] for m in messages] == ["system", "user"]
    assert "reasoning paths" in messages[0]["content"] and '"ans:"' in messages[0]["content"]
    assert messages[1]["content"].startswith(
        "Reasoning Paths:\n"
        "Lee Pace <- starred_actors <- The Fall -> directed_by -> Tarsem Singh\n"
        "Lee Pace -> acted_in -> Film A -> directed_by -> Barry Sonnenfeld\n\n"
        "Question:\n"
    )


def test_frag_path_forward_only() -> None:
    path = [("A", "r1", "B"), ("B", "r2", "C")]
    assert frag_path(path, {"A"}) == "A -> r1 -> B -> r2 -> C"


def test_frag_without_paths_writes_each_triplet_as_a_one_hop_path() -> None:
    content = build_messages(evidence("frag"))[1]["content"]
    assert "Lee Pace <- starred_actors <- Film A" in content
    assert "Film A -> directed_by -> Barry Sonnenfeld" in content


def test_sgrag_prompt_writes_pipe_triplets() -> None:
    messages = build_messages(evidence("sgrag"))
    assert "subject|relation|object" in messages[0]["content"]
    assert "Film A|starred_actors|Lee Pace\nFilm A|directed_by|Barry Sonnenfeld\n" in messages[1]["content"]
    assert messages[1]["content"].endswith("Question: who directed the films that Lee Pace starred in?")


def test_max_items_caps_the_prompt() -> None:
    content = build_messages(evidence("sgrag"), max_items=1)[1]["content"]
    assert content.count("|") == 2


@pytest.mark.parametrize(
    "text, expected",
    [
        ("ans: Tarsem Singh\nans: Barry Sonnenfeld", ["Tarsem Singh", "Barry Sonnenfeld"]),
        (
            "Let's think.\n\n**ans:** Tarsem Singh\n- Ans : Barry Sonnenfeld.\n",
            ["Tarsem Singh", "Barry Sonnenfeld"],
        ),
        ('1. ans: `Tarsem Singh`\n2. ANS: "Barry Sonnenfeld"', ["Tarsem Singh", "Barry Sonnenfeld"]),
        ("ans: Tarsem Singh ans: Barry Sonnenfeld", ["Tarsem Singh", "Barry Sonnenfeld"]),
        ("ans: Tarsem Singh\nans: Tarsem Singh\nans: not available", ["Tarsem Singh"]),
        ("ans: not available", []),
        ("The answer is: Tarsem Singh", ["Tarsem Singh"]),
        ("Answer: Tarsem Singh", ["Tarsem Singh"]),
        ("I could not find it.", []),
        ("", []),
    ],
)
def test_parse_answers_is_robust_to_messy_output(text: str, expected: list[str]) -> None:
    assert parse_answers(text) == expected


def test_ans_lines_win_over_answer_lines() -> None:
    assert parse_answers("Answer: thinking about it\nans: Tarsem Singh") == ["Tarsem Singh"]


def test_one_normaliser_for_answers_and_metrics() -> None:
    assert normalize_answer("The Fall") == normalize_answer("fall") == "fall"
    assert normalize_answer("  Amélie!  ") == "amelie"
    assert normalize_answer("directed_by") == "directed by"
    # an apostrophe is deleted, never a word break, wherever answers are compared
    assert normalize_answer("Schindler's List") == normalize_answer("Schindlers List") == "schindlers list"
    assert normalize_answer("Schindler’s List") == "schindlers list"


def test_map_to_entities_uses_the_evidence_spelling_and_keeps_order() -> None:
    ev = evidence("sgrag")
    raw = ["tarsem singh", "Fall", "barry sonnenfeld (director of Film A)", "Someone Else", "Tarsem Singh."]
    answers, unmatched = map_to_entities(raw, ev)
    assert answers == ["Tarsem Singh", "The Fall", "Barry Sonnenfeld", "Someone Else"]
    assert unmatched == ["Someone Else"]


def test_map_to_entities_splits_lists_on_one_line() -> None:
    answers, _ = map_to_entities(["Tarsem Singh, Barry Sonnenfeld and Film A"], evidence("sgrag"))
    assert answers == ["Tarsem Singh", "Barry Sonnenfeld", "Film A"]


def test_mentioned_entities_fallback_in_order_of_mention() -> None:
    text = "Looking at this, Barry Sonnenfeld directed Film A, and Tarsem Singh directed The Fall."
    found = mentioned_entities(text, evidence("sgrag"), exclude={"Lee Pace", "Film A", "The Fall"})
    assert found == ["Barry Sonnenfeld", "Tarsem Singh"]
