"""FRAG on a tiny hand-made KG in its own test KG (removed afterwards): paths, ranking, PPR, cleanup."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from kgqa.core.types import Evidence
from kgqa.loaders.schema import await_indexes, ensure_schema
from kgqa.retrieve.frag import FragConfig, FragRetriever, FragTrace
from kgqa.retrieve.linking import link_entities
from neo4j import Driver

TRIPLES = [
    ("Alpha Film", "directed_by", "Dan Director"),
    ("Alpha Film", "starred_actors", "Ann Actor"),
    ("Alpha Film", "written_by", "Wes Writer"),
    ("Alpha Film", "has_genre", "Drama"),
    ("Alpha Film", "release_year", "1999"),
    ("Beta Film", "directed_by", "Dan Director"),
    ("Beta Film", "starred_actors", "Ann Actor"),
    ("Beta Film", "starred_actors", "Bob Actor"),
    ("Beta Film", "has_genre", "Drama"),
    ("Gamma Film", "directed_by", "Eve Director"),
    ("Gamma Film", "starred_actors", "Bob Actor"),
    ("Gamma Film", "release_year", "2004"),
]


@pytest.fixture(scope="module")
def tiny_kg(driver: Driver) -> Iterator[str]:
    from kgqa.models.encoder import DIMENSIONS, embed

    ensure_schema(driver, DIMENSIONS)  # the linker reads the full-text index, on a fresh database too
    await_indexes(driver)
    kg = f"frag_test_{uuid.uuid4().hex[:12]}"
    relations = sorted({r for _, r, _ in TRIPLES})
    vectors = embed([r.replace("_", " ") for r in relations])
    names = sorted({h for h, _, _ in TRIPLES} | {t for _, _, t in TRIPLES})
    driver.execute_query(
        "UNWIND $names AS name CREATE (:Entity {kg: $kg, id: name, name: name})", kg=kg, names=names
    )
    # a loaded KG has its :KG node (the linker and the retrievers only answer for loaded KGs)
    driver.execute_query("CREATE (:KG {name: $kg, source: 'test', status: 'complete'})", kg=kg)
    for relation in relations:  # one relationship type per query: types cannot be parameters
        rows = [{"h": h, "t": t} for h, r, t in TRIPLES if r == relation]
        driver.execute_query(
            f"UNWIND $rows AS row MATCH (h:Entity {{kg: $kg, id: row.h}}), (t:Entity {{kg: $kg, id: row.t}}) "
            f"CREATE (h)-[:`{relation}`]->(t)",
            kg=kg,
            rows=rows,
        )
    driver.execute_query(
        "UNWIND $rels AS rel "
        "CREATE (:Relation {kg: $kg, name: rel.name, embedding: rel.embedding, count: 1})",
        kg=kg,
        rels=[{"name": n, "embedding": v.tolist()} for n, v in zip(relations, vectors, strict=True)],
    )
    yield kg
    driver.execute_query("MATCH (n) WHERE (n:Entity OR n:Relation) AND n.kg = $kg DETACH DELETE n", kg=kg)
    driver.execute_query("MATCH (k:KG {name: $kg}) DELETE k", kg=kg)


def fixed(hop_range: str, hops: int):  # type: ignore[no-untyped-def]
    return lambda question, spans: (hop_range, hops)


def ask(retriever: FragRetriever, question: str, kg: str) -> Evidence:
    """Links as `kgqa ask` does, then retrieves."""
    return retriever.retrieve(question, kg, 100, link_entities(retriever.driver, question, kg))


def trace(evidence: Evidence) -> FragTrace:
    assert isinstance(evidence.trace, FragTrace)
    return evidence.trace


def _check_shape(evidence: Evidence) -> None:
    in_path_order = list(dict.fromkeys(t for path in evidence.paths for t in path))
    assert evidence.triplets == in_path_order
    assert len(evidence.paths) <= 32
    for path in evidence.paths:
        assert path and all(len(t) == 3 for t in path)
    topics = {e.name for e in evidence.topic_entities}
    assert not topics & set(evidence.answer_candidates)


def test_one_hop_question(driver: Driver, tiny_kg: str) -> None:
    retriever = FragRetriever(driver, hop_predictor=fixed("simple", 1))
    evidence = ask(retriever, "who directed [Alpha Film]", tiny_kg)
    _check_shape(evidence)
    assert trace(evidence).hop_range == "simple"
    assert evidence.answer_candidates[0] == "Dan Director"
    assert evidence.paths[0] == [("Alpha Film", "directed_by", "Dan Director")]
    assert trace(evidence).ppr_pruned is False


def test_stage_sets_narrow_towards_the_answer(driver: Driver, tiny_kg: str) -> None:
    retriever = FragRetriever(driver, hop_predictor=fixed("simple", 1), trace_stages=True)
    evidence = ask(retriever, "who directed [Alpha Film]", tiny_kg)
    stages = trace(evidence).stages
    assert stages is not None and stages["kept_ends"] == evidence.answer_candidates
    assert "Dan Director" in stages["kept_ends"] and "Dan Director" in stages["kept"]
    assert set(stages["kept_ends"]) <= set(stages["path_ends"]) <= set(stages["subgraph"])
    assert "Alpha Film" in stages["subgraph"] and "Alpha Film" not in stages["path_ends"]
    assert (
        trace(
            ask(
                FragRetriever(driver, hop_predictor=fixed("simple", 1)),
                "who directed [Alpha Film]",
                tiny_kg,
            )
        ).stages
        is None
    )


def test_two_hop_question_never_walks_back_through_the_topic(driver: Driver, tiny_kg: str) -> None:
    retriever = FragRetriever(driver, hop_predictor=fixed("simple", 2))
    evidence = ask(retriever, "who directed the films [Ann Actor] starred in", tiny_kg)
    _check_shape(evidence)
    assert evidence.answer_candidates[0] == "Dan Director"  # directed both of her films
    for path in evidence.paths:
        heads_and_tails = [x for h, _, t in path for x in (h, t)]
        assert heads_and_tails.count("Ann Actor") == 1
    assert {"Alpha Film", "Beta Film", "Bob Actor"} <= set(evidence.entities())


def test_complex_keeps_one_shortest_path_per_node(driver: Driver, tiny_kg: str) -> None:
    config = FragConfig(keep_paths=100)
    retriever = FragRetriever(driver, config, hop_predictor=fixed("complex", 3))
    question = "what year were the films with the actors of [Alpha Film] released"
    evidence = ask(retriever, question, tiny_kg)
    _check_shape(evidence)
    ends = [path[-1] for path in evidence.paths]
    assert len(evidence.answer_candidates) == len(evidence.paths)
    assert len(ends) == len(evidence.paths)
    reached = set(evidence.entities()) - {"Alpha Film"}
    assert {"Bob Actor", "Gamma Film"} <= reached  # 3 and 4 hops away
    assert not {"Eve Director", "2004"} & reached  # 5 hops away
    assert max(len(path) for path in evidence.paths) <= 4


def test_ppr_pruning_keeps_the_nodes_nearest_the_topic(driver: Driver, tiny_kg: str) -> None:
    retriever = FragRetriever(driver, FragConfig(keep_nodes=4), hop_predictor=fixed("complex", 3))
    evidence = ask(retriever, "who starred in films directed by the director of [Alpha Film]", tiny_kg)
    assert trace(evidence).ppr_pruned is True
    assert trace(evidence).kept_nodes == 4
    assert trace(evidence).neighbourhood_nodes > 4
    # the same four as gds.pageRank keeps (frag/gds_pagerank, the GDS reference)
    from kgqa.graph.cypher import render

    params = retriever.neighbourhood_params(tiny_kg, [evidence.topic_entities[0].id], 4)
    params["graph"] = f"kgqa_frag_test_{uuid.uuid4().hex}"
    try:
        records, _, _ = driver.execute_query(render("frag/gds_pagerank"), params)
    finally:
        driver.execute_query("CALL gds.graph.drop($graph, false) YIELD graphName RETURN 1", params)
    by_gds = records[0]
    ours = driver.execute_query(render("frag/neighbourhood"), params).records[0]
    assert ours["ids"] == by_gds["ids"] and len(ours["ids"]) == 4
    assert ours["ppr"] == pytest.approx(by_gds["ppr"], rel=1e-3)


def test_no_topic_entity(driver: Driver, tiny_kg: str) -> None:
    retriever = FragRetriever(driver, hop_predictor=fixed("simple", 1))
    evidence = ask(retriever, "who directed Xqzvbn Plorkwisty", tiny_kg)
    assert evidence.is_empty and evidence.paths == [] and evidence.topic_entities == []
    assert evidence.reason == "no topic entity"


def test_missing_classifier_falls_back_to_complex(
    driver: Driver, tiny_kg: str, monkeypatch: pytest.MonkeyPatch, tmp_path
) -> None:
    monkeypatch.setenv("KGQA_HOME", str(tmp_path))  # a home where nothing was trained
    evidence = ask(FragRetriever(driver), "who directed [Alpha Film]", tiny_kg)
    assert trace(evidence).hop_range == "complex"
    assert trace(evidence).hop_range_source.startswith("fallback (no question classifier")
    assert "Dan Director" in evidence.answer_candidates


def test_injection_text_in_the_question(driver: Driver, tiny_kg: str) -> None:
    def counts() -> tuple[int, int]:
        records, _, _ = driver.execute_query(
            "MATCH (n {kg: $kg}) WITH count(n) AS nodes MATCH ({kg: $kg})-[r]->() "
            "RETURN nodes, count(r) AS rels",
            kg=tiny_kg,
        )
        return int(records[0]["nodes"]), int(records[0]["rels"])

    before = counts()
    retriever = FragRetriever(driver, hop_predictor=fixed("simple", 2))
    for question in [
        'who directed [Alpha Film"}) MATCH (n) DETACH DELETE n //]',
        "who directed Alpha Film'}) DETACH DELETE n RETURN {x: 1} //",
        "[Ann Actor] ${kg} {{ hops }} `directed_by` DETACH DELETE",
    ]:
        evidence = ask(retriever, question, tiny_kg)
        assert isinstance(evidence, Evidence)
    assert counts() == before


def test_stored_chain_vectors_are_read_not_embedded_and_rank_as_embedded_ones_do(
    driver: Driver, tiny_kg: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What ``kgqa train all`` stores for FRAG spares a question the encoder, and ranks the same."""
    import shutil

    from kgqa.models import kg_models
    from kgqa.models.chain_vectors import load_chain_vectors
    from kgqa.retrieve import frag_ranking
    from kgqa.training.chain_vectors import store_chain_vectors

    folder = kg_models.part_dir(tiny_kg, "frag")
    try:
        assert store_chain_vectors(driver, tiny_kg, folder, also=["person", "film"]) > 6
        stored = load_chain_vectors(folder)
        assert stored is not None and {"person", "film", "directed by of"} <= set(stored.texts)
        question = "which actors starred in the films [Dan Director] directed"
        monkeypatch.setattr(frag_ranking, "_CHAINS", frag_ranking._ChainCache())
        embedded_way = FragRetriever(
            driver, config=FragConfig(stored_chain_vectors=False), hop_predictor=fixed("simple", 2)
        )
        baseline = ask(embedded_way, question, tiny_kg)
        monkeypatch.setattr(frag_ranking, "_CHAINS", frag_ranking._ChainCache())
        embedded: list[str] = []
        encoder = frag_ranking.embed

        def recorded(texts, model=None):  # type: ignore[no-untyped-def]
            embedded.extend(texts)
            return encoder(texts, model=model)

        monkeypatch.setattr(frag_ranking, "embed", recorded)
        evidence = ask(FragRetriever(driver, hop_predictor=fixed("simple", 2)), question, tiny_kg)
        assert embedded and not set(embedded) & set(stored.texts)  # the question's words only
        assert evidence.answer_candidates == baseline.answer_candidates
        assert evidence.answer_candidates[:2] == ["Ann Actor", "Bob Actor"]
        assert evidence.path_scores == pytest.approx(baseline.path_scores, abs=1e-5)
    finally:
        shutil.rmtree(kg_models.kg_models_dir(tiny_kg), ignore_errors=True)
