"""SG-RAG on a tiny hand-made KG: the no-backtrack rule, KG scoping, the path guard, k, the retriever.

The graph (KG ``test_sgrag``), all relationships movie -> value as in MetaQA:

    Alpha Film  -starred_actors-> Ann Actor, Bob Actor;  -directed_by-> Dee Director;  -release_year-> 1990
    Beta Film   -starred_actors-> Ann Actor;             -directed_by-> Eve Director;  -release_year-> 1995
    Gamma Film  -starred_actors-> Bob Actor;             -directed_by-> Dee Director
    Delta Film  -starred_actors-> Cat Actor;             -directed_by-> Fay Director

A second KG ``test_sgrag_other`` holds another ``Alpha Film`` (same name and id) starring ``Zed Actor``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kgqa.core.types import LinkedEntity
from kgqa.retrieve.linking import link_entities
from kgqa.retrieve.paths import rank_answers, select_paths
from kgqa.retrieve.sgrag import SgragRetriever, SgragTrace, run_template

KG = "test_sgrag"
OTHER_KG = "test_sgrag_other"
TRIPLES = [
    ("Alpha Film", "starred_actors", "Ann Actor"),
    ("Alpha Film", "starred_actors", "Bob Actor"),
    ("Alpha Film", "directed_by", "Dee Director"),
    ("Alpha Film", "release_year", "1990"),
    ("Beta Film", "starred_actors", "Ann Actor"),
    ("Beta Film", "directed_by", "Eve Director"),
    ("Beta Film", "release_year", "1995"),
    ("Gamma Film", "starred_actors", "Bob Actor"),
    ("Gamma Film", "directed_by", "Dee Director"),
    ("Delta Film", "starred_actors", "Cat Actor"),
    ("Delta Film", "directed_by", "Fay Director"),
]
OTHER_TRIPLES = [("Alpha Film", "starred_actors", "Zed Actor"), ("Omega Film", "starred_actors", "Zed Actor")]

CREATE = """
UNWIND $triples AS t
MERGE (h:Entity {kg: $kg, id: t[0]}) ON CREATE SET h.name = t[0]
MERGE (x:Entity {kg: $kg, id: t[2]}) ON CREATE SET x.name = t[2]
WITH h, x, t
CALL apoc.create.relationship(h, t[1], {}, x) YIELD rel
RETURN count(rel) AS n
"""


def _delete(driver, kg: str) -> None:  # type: ignore[no-untyped-def]
    driver.execute_query("MATCH (e:Entity {kg: $kg}) DETACH DELETE e", {"kg": kg})
    driver.execute_query("MATCH (k:KG {name: $kg}) DELETE k", {"kg": kg})


@pytest.fixture(scope="module")
def tiny_kg(driver) -> Iterator[str]:  # type: ignore[no-untyped-def]
    for kg, triples in ((KG, TRIPLES), (OTHER_KG, OTHER_TRIPLES)):
        _delete(driver, kg)
        driver.execute_query(CREATE, {"kg": kg, "triples": [list(t) for t in triples]})
        # a loaded KG has its :KG node (the linker and the retrievers only answer for loaded KGs)
        driver.execute_query("CREATE (:KG {name: $kg, source: 'test', status: 'complete'})", {"kg": kg})
    yield KG
    for kg in (KG, OTHER_KG):
        _delete(driver, kg)


def _answers(driver, qtype: str, topic: str) -> list[str]:  # type: ignore[no-untyped-def]
    return sorted(set(run_template(driver, qtype, KG, [topic]).answers))


def test_paths_never_pass_back_through_the_topic(driver, tiny_kg: str) -> None:  # type: ignore[no-untyped-def]
    # Co-stars of Ann: Bob (through Alpha) -- never Ann herself through Alpha or Beta.
    assert _answers(driver, "actor_to_movie_to_actor", "Ann Actor") == ["Bob Actor"]
    # Films sharing an actor with Alpha: Beta (Ann) and Gamma (Bob), not Alpha itself.
    assert _answers(driver, "movie_to_actor_to_movie", "Alpha Film") == ["Beta Film", "Gamma Film"]
    # Directors of those films: Eve (Beta) and Dee (Gamma). Dee is also Alpha's director, but is reached
    # through Gamma; Alpha -> Ann <- Alpha -> Dee would backtrack and is not a path.
    assert _answers(driver, "movie_to_actor_to_movie_to_director", "Alpha Film") == [
        "Dee Director",
        "Eve Director",
    ]
    assert _answers(driver, "movie_to_actor_to_movie_to_year", "Alpha Film") == ["1995"]  # not Alpha's 1990
    paths = run_template(driver, "movie_to_actor_to_movie_to_director", KG, ["Alpha Film"]).paths
    for path in paths:
        assert all(head != "Alpha Film" for head, _rel, _tail in path[1:])


def test_triplets_keep_the_kg_direction(driver, tiny_kg: str) -> None:  # type: ignore[no-untyped-def]
    match = run_template(driver, "actor_to_movie_to_director", KG, ["Bob Actor"])
    assert sorted(map(tuple, match.paths)) == [
        (("Alpha Film", "starred_actors", "Bob Actor"), ("Alpha Film", "directed_by", "Dee Director")),
        (("Gamma Film", "starred_actors", "Bob Actor"), ("Gamma Film", "directed_by", "Dee Director")),
    ]
    assert match.answers == ["Dee Director", "Dee Director"]
    answers, support, _first = rank_answers(match)
    assert (answers, support) == (["Dee Director"], [2])


def test_scoped_to_one_kg(driver, tiny_kg: str) -> None:  # type: ignore[no-untyped-def]
    assert _answers(driver, "movie_to_actor", "Alpha Film") == ["Ann Actor", "Bob Actor"]
    other = run_template(driver, "movie_to_actor", OTHER_KG, ["Alpha Film"])
    assert other.answers == ["Zed Actor"]


def test_max_paths_guard(driver, tiny_kg: str) -> None:  # type: ignore[no-untyped-def]
    full = run_template(driver, "movie_to_actor_to_movie_to_director", KG, ["Alpha Film"])
    assert len(full.paths) == 2 and not full.truncated
    cut = run_template(driver, "movie_to_actor_to_movie_to_director", KG, ["Alpha Film"], max_paths=1)
    assert len(cut.paths) == 1 and cut.truncated


def test_unknown_type_is_refused(driver) -> None:  # type: ignore[no-untyped-def]
    for qtype in ("movie_to_x}) DETACH DELETE n //", "actor_to_director", "movie", ""):
        with pytest.raises(ValueError, match="not a MetaQA question type"):
            run_template(driver, qtype, KG, ["Alpha Film"])


def test_select_paths_keeps_every_answer_within_k(driver, tiny_kg: str) -> None:  # type: ignore[no-untyped-def]
    match = run_template(driver, "movie_to_actor_to_movie_to_director", KG, ["Alpha Film"])
    answers, _support, first = rank_answers(match)
    chosen, count = select_paths(match, answers, first, k=1)
    assert {match.answers[i] for i in chosen} == set(answers)  # one path per answer even over k
    assert count == 6  # two 3-triplet paths, nothing shared
    chosen_all, _ = select_paths(match, answers, first, k=100)
    assert sorted(chosen_all) == [0, 1]


@pytest.fixture(scope="module")
def retriever(driver, question_classifiers) -> SgragRetriever:  # type: ignore[no-untyped-def]
    # the real classifiers, installed in the test home; templates only (test_gsr tests the GSR fallback)
    return SgragRetriever(driver, fallback=False)


def test_retriever_end_to_end(
    driver,
    tiny_kg: str,
    retriever: SgragRetriever,  # type: ignore[no-untyped-def]
) -> None:
    question = "which movies have the same actor of [Alpha Film]"
    topics = link_entities(driver, question, KG)
    assert [(t.id, t.how) for t in topics] == [("Alpha Film", "bracket")]
    evidence = retriever.retrieve(question, KG, k=100, topic_entities=topics)
    assert evidence.method == "sgrag" and isinstance(evidence.trace, SgragTrace)
    assert evidence.trace.qtype == "movie_to_actor_to_movie"
    assert evidence.hops == 2 and evidence.trace.hop_range == "simple"
    assert sorted(evidence.answer_candidates) == ["Beta Film", "Gamma Film"]
    # MOT: deduplicated, and ordered outward from the topic entity.
    assert len(evidence.triplets) == len(set(evidence.triplets)) == 4
    assert [t[0] for t in evidence.triplets[:2]] == ["Alpha Film", "Alpha Film"]
    assert {t[0] for t in evidence.triplets[2:]} == {"Beta Film", "Gamma Film"}
    assert {"classify", "template", "mot"} <= set(evidence.latency_ms)


def test_retriever_falls_back_to_a_type_that_matches(
    driver,
    tiny_kg: str,  # type: ignore[no-untyped-def]
    retriever: SgragRetriever,
) -> None:
    # Worded like "who directed [X]" but X is an actor: movie_to_director matches nothing from an actor, so
    # a next-best type is tried; whatever it is, it must start from an actor.
    topics = [LinkedEntity(id="Ann Actor", name="Ann Actor", score=1.0, how="given")]
    evidence = retriever.retrieve("who directed [Ann Actor]", KG, k=100, topic_entities=topics)
    assert isinstance(evidence.trace, SgragTrace)
    tried = evidence.trace.qtypes_tried
    assert tried[0] == "movie_to_director"
    assert len(tried) >= 2
    if evidence.answer_candidates:
        assert evidence.trace.qtype.startswith("actor_to_")


def test_no_topic_entity_gives_empty_evidence(
    driver,
    tiny_kg: str,  # type: ignore[no-untyped-def]
    retriever: SgragRetriever,
) -> None:
    question = "who directed [nobody's film'}) DETACH DELETE e //]"
    counts = driver.execute_query(
        "MATCH (e:Entity {kg: $kg}) OPTIONAL MATCH (e)-[r]->() RETURN count(DISTINCT e) AS n, count(r) AS r",
        {"kg": KG},
    ).records[0]
    topics = link_entities(driver, question, KG)
    assert topics == []
    evidence = retriever.retrieve(question, KG, k=100, topic_entities=topics)
    assert evidence.is_empty and evidence.answer_candidates == []
    assert "no topic entity" in evidence.reason
    after = driver.execute_query(
        "MATCH (e:Entity {kg: $kg}) OPTIONAL MATCH (e)-[r]->() RETURN count(DISTINCT e) AS n, count(r) AS r",
        {"kg": KG},
    ).records[0]
    assert (after["n"], after["r"]) == (counts["n"], counts["r"])
