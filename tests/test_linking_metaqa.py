"""Entity linking (the in-database kgqa.link.entities, through kgqa.retrieve.linking) against the real MetaQA
KG: brackets, free text, typos, unknown names, injection text. The linker's pieces are unit-tested in JUnit
(procedures/src/test/java/io/kgqa/procedures/linking)."""

from __future__ import annotations

import pytest
from kgqa.retrieve.linking import link_entities
from neo4j.exceptions import ClientError

KG = "metaqa"


@pytest.fixture(scope="module")
def metaqa(driver, metaqa_kg):  # type: ignore[no-untyped-def]
    return driver


def _names(linked):  # type: ignore[no-untyped-def]
    return [e.name for e in linked]


def test_brackets_are_exact(metaqa) -> None:  # type: ignore[no-untyped-def]
    linked = link_entities(metaqa, "who directed the films [Lee Pace] starred in", KG)
    assert _names(linked) == ["Lee Pace"]
    assert linked[0].how == "bracket" and linked[0].score == 1.0


def test_bracket_with_a_typo_falls_back_to_free_text(metaqa) -> None:  # type: ignore[no-untyped-def]
    linked = link_entities(metaqa, "who directed [Choper]", KG)
    assert _names(linked)[:1] == ["Chopper"]


@pytest.mark.parametrize(
    "question",
    [
        "who directed the films Lee Pace starred in",
        "what films did Lee Pace star in",
        "what films did lee pace star in",
    ],
)
def test_free_text(metaqa, question: str) -> None:  # type: ignore[no-untyped-def]
    linked = link_entities(metaqa, question, KG)
    assert linked and linked[0].name == "Lee Pace"
    assert linked[0].span.lower() == "lee pace"
    assert all(0 < e.score <= 1 for e in linked)


def test_longer_exact_match_wins_over_its_parts(metaqa) -> None:  # type: ignore[no-untyped-def]
    linked = link_entities(metaqa, "who are the actors in The Lathe of Heaven", KG)
    assert linked[0].name == "The Lathe of Heaven"


@pytest.mark.parametrize("question", ["who directed Choper", "what year was choper released"])
def test_one_typo(metaqa, question: str) -> None:  # type: ignore[no-untyped-def]
    linked = link_entities(metaqa, question, KG)
    assert linked and linked[0].name == "Chopper"
    assert linked[0].how == "fuzzy"


def test_unknown_entity_gives_nothing(metaqa) -> None:  # type: ignore[no-untyped-def]
    assert link_entities(metaqa, "who directed Xqzvbn Plorkwisty", KG) == []
    assert link_entities(metaqa, "", KG) == []
    assert link_entities(metaqa, "what is the", KG) == []


def test_an_unknown_kg_is_a_clear_error(metaqa) -> None:  # type: ignore[no-untyped-def]
    for question in ("who directed [Lee Pace]", "what films did Lee Pace star in"):
        with pytest.raises(ClientError, match="config.kg: no knowledge graph named 'no_such_kg_for_linking'"):
            link_entities(metaqa, question, "no_such_kg_for_linking")


INJECTIONS = [
    'who directed Lee Pace"}) MATCH (n) DETACH DELETE n //',
    "who directed [Lee Pace'}) MATCH (n) DETACH DELETE n //]",
    "'; MATCH (n) DETACH DELETE n; // {kg: 'metaqa'} $kg ${kg}",
    'Lee Pace~ AND (title:* OR "x") \\ / ^2 [a TO z] {b TO c} && || !',
    "CALL apoc.periodic.iterate('MATCH (n) RETURN n', 'DETACH DELETE n', {}) Chopper",
    "}}{{ {% for x in y %} DROP INDEX entity_name",
]


def _counts(driver) -> tuple[int, int]:  # type: ignore[no-untyped-def]
    records, _, _ = driver.execute_query(
        "MATCH (e:Entity {kg: $kg}) WITH count(e) AS nodes "
        "MATCH (:Entity {kg: $kg})-[r]->() RETURN nodes, count(r) AS relationships",
        kg=KG,
    )
    return int(records[0]["nodes"]), int(records[0]["relationships"])


def test_injection_text_is_only_text(metaqa) -> None:  # type: ignore[no-untyped-def]
    before = _counts(metaqa)
    for question in INJECTIONS:
        linked = link_entities(metaqa, question, KG)
        assert isinstance(linked, list)
    assert _counts(metaqa) == before
    records, _, _ = metaqa.execute_query("SHOW INDEXES YIELD name WHERE name = 'entity_name' RETURN name")
    assert records, "the full-text index must still exist"
    assert link_entities(metaqa, INJECTIONS[0], KG)[0].name == "Lee Pace"


@pytest.mark.parametrize(
    ("question", "names"),
    [
        (
            "Which Woody Allen movies feature Diane Keaotn?",
            {"Woody Allen", "Diane Keaton"},
        ),  # swapped letters
        (
            "Which Herzog films have Klaus Kinksi in them?",
            {"Werner Herzog", "Klaus Kinski"},
        ),  # a surname alone
        ("What westerns was Glenn Ford in?", {"Glenn Ford", "Western"}),  # a plural, a shared value
        (
            "movies with both robert downey jr and jude law",
            {"Robert Downey Jr.", "Jude Law"},
        ),  # twins share a place
        ("what else did the director of jud suss make", {"Jud Süß"}),  # ß typed as ss
        (
            "What other scripts did the writer of Wayne's World's sequel write",
            {"Wayne's World"},
        ),  # possessive
    ],
)
def test_free_text_names_every_entity(metaqa, question: str, names: set[str]) -> None:  # type: ignore[no-untyped-def]
    linked = {e.name for e in link_entities(metaqa, question, KG)}
    assert names <= linked, linked
