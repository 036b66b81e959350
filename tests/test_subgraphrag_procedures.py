"""kgqa.subgraphrag.* over Bolt against the real server (GDS/APOC/kgqa plugin + ONNX Runtime in plugins/).

A tiny KG (`kgqa_test_subgraphrag`) and a linear test scorer are created for the module and removed after:

    Kismet -directed_by-> William Dieterle <-directed_by- Portrait of Jennie
    Kismet -starred_actors-> Marlene Dietrich <-starred_actors- Golden Earrings -directed_by-> Mitchell Leisen

The scorer is `scores = features @ w` with known random w, so every score can be recomputed here from the
contract's feature layout [z_q | z_head | z_rel | z_tail | dde_head | dde_tail], using the DDE that
`kgqa.subgraphrag.candidates` returns: that is the check that training (which reads candidates) and
inference (retrieve) agree.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from kgqa.graph.cypher import render
from neo4j.exceptions import Neo4jError

KG = "kgqa_test_subgraphrag"
MODEL = "kgqa-test-linear"
DIM = 384
INPUT_DIM = 4 * DIM + 20
ENTITIES = [
    "Kismet",
    "William Dieterle",
    "Marlene Dietrich",
    "Golden Earrings",
    "Portrait of Jennie",
    "Mitchell Leisen",
    "Lonely Entity",
]
TRIPLES = [
    ("Kismet", "directed_by", "William Dieterle"),
    ("Kismet", "starred_actors", "Marlene Dietrich"),
    ("Golden Earrings", "starred_actors", "Marlene Dietrich"),
    ("Portrait of Jennie", "directed_by", "William Dieterle"),
    ("Golden Earrings", "directed_by", "Mitchell Leisen"),
]
RELATIONS = ["directed_by", "starred_actors"]


def _unit(rng: np.random.Generator, n: int) -> np.ndarray:
    v = rng.normal(size=(n, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


@pytest.fixture(scope="module")
def vectors() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(5)
    ents = _unit(rng, len(ENTITIES))
    rels = _unit(rng, len(RELATIONS))
    out = {name: ents[i] for i, name in enumerate(ENTITIES)}
    out.update({f"rel:{name}": rels[i] for i, name in enumerate(RELATIONS)})
    out["question"] = _unit(rng, 1)[0]
    out["w"] = rng.normal(size=INPUT_DIM).astype(np.float32) / 10
    return out


@pytest.fixture(scope="module")
def tiny_kg(driver, vectors):  # type: ignore[no-untyped-def]
    def cleanup() -> None:
        driver.execute_query("MATCH (n:Entity {kg: $kg}) DETACH DELETE n", {"kg": KG})
        driver.execute_query("MATCH (n:Relation {kg: $kg}) DETACH DELETE n", {"kg": KG})
        driver.execute_query("MATCH (n:KG {name: $kg}) DETACH DELETE n", {"kg": KG})

    cleanup()
    driver.execute_query("CREATE FULLTEXT INDEX entity_name IF NOT EXISTS FOR (e:Entity) ON EACH [e.name]")
    # status 'test', not 'complete': it must never become anybody's default KG.
    driver.execute_query("CREATE (:KG {name: $kg, source: 'test', status: 'test'})", {"kg": KG})
    driver.execute_query(
        "UNWIND $rows AS row CREATE (:Entity {kg: $kg, id: row.name, name: row.name, embedding: row.v})",
        {"kg": KG, "rows": [{"name": n, "v": vectors[n].tolist()} for n in ENTITIES]},
    )
    driver.execute_query(
        "UNWIND $rows AS row CREATE (:Relation {kg: $kg, name: row.name, embedding: row.v})",
        {"kg": KG, "rows": [{"name": r, "v": vectors[f"rel:{r}"].tolist()} for r in RELATIONS]},
    )
    for head, rel, tail in TRIPLES:
        driver.execute_query(
            f"MATCH (h:Entity {{kg: $kg, id: $h}}), (t:Entity {{kg: $kg, id: $t}}) CREATE (h)-[:{rel}]->(t)",
            {"kg": KG, "h": head, "t": tail},
        )
    driver.execute_query("CALL db.awaitIndexes(120)")
    yield KG
    cleanup()


@pytest.fixture(scope="module")
def models_dir(neo4j_env: dict[str, str]) -> Path:
    return Path(neo4j_env["KGQA_HOME"]) / "models"


@pytest.fixture(scope="module")
def linear_model(models_dir: Path, vectors):  # type: ignore[no-untyped-def]
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    graph = helper.make_graph(
        [
            helper.make_node("MatMul", ["features", "w"], ["col"]),
            helper.make_node("Reshape", ["col", "flat"], ["scores"]),
        ],
        "linear_test_scorer",
        [helper.make_tensor_value_info("features", TensorProto.FLOAT, ["N", INPUT_DIM])],
        [helper.make_tensor_value_info("scores", TensorProto.FLOAT, ["N"])],
        [
            numpy_helper.from_array(vectors["w"].reshape(INPUT_DIM, 1), "w"),
            numpy_helper.from_array(np.array([-1], dtype=np.int64), "flat"),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8  # ONNX Runtime Java 1.20 reads IR <= 10
    target = models_dir / "subgraphrag" / MODEL
    target.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(target / "model.onnx"))
    meta = {
        "input_dim": INPUT_DIM,
        "embedding_dim": DIM,
        "dde_rounds_forward": 2,
        "dde_rounds_reverse": 2,
        "include_seed": True,
        "encoder": "all-MiniLM-L6-v2",
        "hops": 2,
        "kg": KG,
    }
    (target / "meta.json").write_text(json.dumps(meta))
    yield MODEL
    shutil.rmtree(target, ignore_errors=True)


PATH_MODEL = "kgqa-test-linear-path"
PATH_CODE = 2 * 2 * DIM  # 2 steps, 2 directions, a relation mixture each
PATH_INPUT_DIM = 4 * DIM + 2 * (10 + PATH_CODE)


@pytest.fixture(scope="module")
def linear_path_model(models_dir: Path, vectors):  # type: ignore[no-untyped-def]
    """A linear scorer over rows with 2-step path codes, trained (as it were) on masked questions."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    w = np.random.default_rng(11).normal(size=PATH_INPUT_DIM).astype(np.float32) / 10
    graph = helper.make_graph(
        [
            helper.make_node("MatMul", ["features", "w"], ["col"]),
            helper.make_node("Reshape", ["col", "flat"], ["scores"]),
        ],
        "linear_path_test_scorer",
        [helper.make_tensor_value_info("features", TensorProto.FLOAT, ["N", PATH_INPUT_DIM])],
        [helper.make_tensor_value_info("scores", TensorProto.FLOAT, ["N"])],
        [
            numpy_helper.from_array(w.reshape(PATH_INPUT_DIM, 1), "w"),
            numpy_helper.from_array(np.array([-1], dtype=np.int64), "flat"),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    target = models_dir / "subgraphrag" / PATH_MODEL
    target.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(target / "model.onnx"))
    meta = {
        "input_dim": PATH_INPUT_DIM,
        "embedding_dim": DIM,
        "dde_rounds_forward": 2,
        "dde_rounds_reverse": 2,
        "include_seed": True,
        "path_steps": 2,
        "question_mask": "it",
        "encoder": "all-MiniLM-L6-v2",
        "hops": 3,
        "kg": KG,
    }
    (target / "meta.json").write_text(json.dumps(meta))
    yield w
    shutil.rmtree(target, ignore_errors=True)


def _candidates(driver, ids: list[str], config: dict | None = None) -> list[dict]:  # type: ignore[no-untyped-def]
    records = driver.execute_query(
        "CALL kgqa.subgraphrag.candidates($kg, $ids, $config) "
        "YIELD head, relation, tail, headId, tailId, dde "
        "RETURN head, relation, tail, headId, tailId, dde",
        {"kg": KG, "ids": ids, "config": config or {}},
    ).records
    return [dict(r) for r in records]


def _retrieve(driver, question: str, config: dict) -> list[dict]:  # type: ignore[no-untyped-def]
    records = driver.execute_query(
        "CALL kgqa.subgraphrag.retrieve($q, $config) YIELD head, relation, tail, score, rank "
        "RETURN head, relation, tail, score, rank",
        {"q": question, "config": config},
    ).records
    return [dict(r) for r in records]


def _error(driver, query: str, params: dict) -> str:  # type: ignore[no-untyped-def]
    with pytest.raises(Neo4jError) as info:
        driver.execute_query(query, params)
    return str(info.value.message)


# ------------------------------------------------------------------------------------------ candidates


def test_candidates_within_hops_with_dde(driver, tiny_kg) -> None:  # type: ignore[no-untyped-def]
    one = _candidates(driver, ["Kismet"], {"hops": 1})
    assert {(r["head"], r["relation"], r["tail"]) for r in one} == set(TRIPLES[:2])
    two = _candidates(driver, ["Kismet"])
    assert {(r["head"], r["relation"], r["tail"]) for r in two} == set(TRIPLES[:4])
    assert [(r["head"], r["tail"]) for r in two[:2]] == [(r["head"], r["tail"]) for r in one], "BFS order"
    three = _candidates(driver, ["Kismet"], {"hops": 3})
    assert len(three) == 5
    assert all(len(r["dde"]) == 20 for r in two)
    assert all(len(r["dde"]) == 16 for r in _candidates(driver, ["Kismet"], {"includeSeed": False}))

    # Hand-computed on the 2-hop subgraph K->D, K->M, G->M, P->D with topic K; parts [s0 | f1 | f2 | r1 | r2].
    k = [0, 1, 0, 0, 0, 0, 1, 0, 0, 0]
    d = [1, 0, 0.5, 0.5, 0, 0, 0, 0, 0, 0]  # in-edges from K (topic) and P: mean [.5, .5]
    g = [1, 0, 0, 0, 0, 0, 1, 0, 0, 0]  # out-edge to M (not topic)
    by_pair = {(r["head"], r["tail"]): r for r in two}
    assert by_pair[("Kismet", "William Dieterle")]["dde"] == pytest.approx(k + d)
    assert by_pair[("Golden Earrings", "Marlene Dietrich")]["dde"] == pytest.approx(g + d)
    assert by_pair[("Kismet", "William Dieterle")]["headId"] == "Kismet"


def test_candidates_cap_and_isolated(driver, tiny_kg) -> None:  # type: ignore[no-untyped-def]
    full = _candidates(driver, ["Kismet"])
    capped = _candidates(driver, ["Kismet"], {"maxCandidates": 3})
    assert [(r["head"], r["tail"]) for r in capped] == [(r["head"], r["tail"]) for r in full[:3]]
    message = _error(
        driver,
        "CALL kgqa.subgraphrag.candidates($kg, ['Kismet'], {maxCandidates: 3, failOnTruncation: true})",
        {"kg": KG},
    )
    assert "config.maxCandidates: more than 3 candidate triples" in message
    assert _candidates(driver, ["Lonely Entity"]) == []


def test_candidates_errors(driver, tiny_kg) -> None:  # type: ignore[no-untyped-def]
    assert "topicIds[1]: no entity with id 'Nobody'" in _error(
        driver, "CALL kgqa.subgraphrag.candidates($kg, ['Kismet', 'Nobody'])", {"kg": KG}
    )
    assert "kg: no knowledge graph named 'no-such-kg' is loaded" in _error(
        driver, "CALL kgqa.subgraphrag.candidates('no-such-kg', ['Kismet'])", {}
    )
    assert "config.hops must be between 1 and 6, got 0" in _error(
        driver, "CALL kgqa.subgraphrag.candidates($kg, ['Kismet'], {hops: 0})", {"kg": KG}
    )


# -------------------------------------------------------------------------------------------- retrieve


def _expected_scores(rows: list[dict], vectors, question: np.ndarray) -> dict:  # type: ignore[no-untyped-def]
    expected = {}
    for r in rows:
        features = np.concatenate(
            [
                question,
                vectors[r["head"]],
                vectors[f"rel:{r['relation']}"],
                vectors[r["tail"]],
                np.asarray(r["dde"], dtype=np.float32),
            ]
        )
        assert features.shape == (INPUT_DIM,)
        expected[(r["head"], r["relation"], r["tail"])] = float(features @ vectors["w"])
    return expected


def test_retrieve_scores_follow_the_feature_contract(driver, tiny_kg, linear_model, vectors) -> None:  # type: ignore[no-untyped-def]
    q = vectors["question"]
    rows = _retrieve(
        driver,
        "ignored",
        {"kg": KG, "model": MODEL, "k": 100, "topicEntities": ["Kismet"], "questionEmbedding": q.tolist()},
    )
    expected = _expected_scores(_candidates(driver, ["Kismet"]), vectors, q)
    assert len(rows) == len(expected) == 4
    for r in rows:
        assert r["score"] == pytest.approx(expected[(r["head"], r["relation"], r["tail"])], abs=1e-4)
    assert [r["rank"] for r in rows] == [1, 2, 3, 4]
    assert [r["score"] for r in rows] == sorted((r["score"] for r in rows), reverse=True)
    top2 = _retrieve(
        driver,
        "ignored",
        {"kg": KG, "model": MODEL, "k": 2, "topicEntities": ["kismet"], "questionEmbedding": q.tolist()},
    )
    assert top2 == rows[:2]


def test_path_codes_in_the_database_are_the_trainers(driver, tiny_kg, linear_path_model, vectors) -> None:  # type: ignore[no-untyped-def]
    """kgqa.subgraphrag.retrieve's path codes (Java PathCodes) against the trainer's numpy path_weights over
    the same candidates, through a linear scorer whose every weight is known."""
    from kgqa.training.subgraphrag.paths import expand_path_codes, path_weights

    q = vectors["question"]
    for topics in (["Kismet"], ["Golden Earrings", "Portrait of Jennie"]):
        rows = _retrieve(
            driver,
            "ignored",
            {"kg": KG, "model": PATH_MODEL, "topicEntities": topics, "questionEmbedding": q.tolist()},
        )
        candidates = _candidates(driver, topics, {"hops": 3})
        names = sorted({r["head"] for r in candidates} | {r["tail"] for r in candidates})
        local = {name: i for i, name in enumerate(names)}
        heads = np.asarray([local[r["head"]] for r in candidates])
        rels = np.asarray([RELATIONS.index(r["relation"]) for r in candidates])
        tails = np.asarray([local[r["tail"]] for r in candidates])
        weights = path_weights(len(names), heads, rels, tails, [local[t] for t in topics], 2, len(RELATIONS))
        codes = expand_path_codes(weights, np.stack([vectors[f"rel:{r}"] for r in RELATIONS]))
        assert np.abs(codes).sum() > 0
        expected = {}
        for r in candidates:
            dde = np.asarray(r["dde"], dtype=np.float32)
            features = np.concatenate(
                [
                    q,
                    vectors[r["head"]],
                    vectors[f"rel:{r['relation']}"],
                    vectors[r["tail"]],
                    dde[:10],
                    codes[local[r["head"]]],
                    dde[10:],
                    codes[local[r["tail"]]],
                ]
            )
            expected[(r["head"], r["relation"], r["tail"])] = float(features @ linear_path_model)
        assert len(rows) == len(expected) == 5
        for r in rows:
            assert r["score"] == pytest.approx(expected[(r["head"], r["relation"], r["tail"])], abs=1e-4)


def test_walks_are_the_best_walk_of_each_end_entity(driver, tiny_kg, linear_path_model, vectors) -> None:  # type: ignore[no-untyped-def]
    q = vectors["question"].tolist()
    base = {"kg": KG, "model": PATH_MODEL, "topicEntities": ["Kismet"], "questionEmbedding": q}
    scores = {(r["head"], r["relation"], r["tail"]): r["score"] for r in _retrieve(driver, "x", base)}
    records = driver.execute_query(
        render("subgraphrag/walks"), {"question": "x", "config": {**base, "pathHops": 2, "rankBy": "walk"}}
    ).records
    # Kismet's 2-step walks end at Portrait of Jennie (via the director) and Golden Earrings (via the actor)
    assert sorted(r["answer"] for r in records) == ["Golden Earrings", "Portrait of Jennie"]
    assert [r["rank"] for r in records] == [1, 2]
    for r in records:
        steps = [tuple(t) for t in r["triplets"]]
        assert len(steps) == 2 and "Kismet" in steps[0] and r["answer"] in steps[1]
        assert r["tripletScores"] == pytest.approx([scores[t] for t in steps], abs=1e-4)
        expected = sum(-np.logaddexp(0, -s) for s in r["tripletScores"])
        assert r["score"] == pytest.approx(expected, abs=1e-4)
    assert records[0]["score"] >= records[1]["score"]
    # k bounds the distinct triples: the first walk's two fit in 3, the second's would make 4
    capped = driver.execute_query(
        render("subgraphrag/walks"),
        {"question": "x", "config": {**base, "pathHops": 2, "k": 3, "rankBy": "walk"}},
    ).records
    assert [r["answer"] for r in capped] == [records[0]["answer"]]
    assert "config has an unknown key 'select'" in _error(
        driver, "CALL kgqa.subgraphrag.walks('x', $config)", {"config": {**base, "select": "top"}}
    )


def test_walks_grouped_by_relation_chain(driver, tiny_kg, linear_path_model, vectors) -> None:  # type: ignore[no-untyped-def]
    q = vectors["question"].tolist()
    base = {"kg": KG, "model": PATH_MODEL, "topicEntities": ["Kismet"], "questionEmbedding": q, "pathHops": 2}
    scores = {(r["head"], r["relation"], r["tail"]): r["score"] for r in _retrieve(driver, "x", base)}
    records = driver.execute_query(render("subgraphrag/walks"), {"question": "x", "config": base}).records
    assert records and [r["rank"] for r in records] == list(range(1, len(records) + 1))
    ranks = [r["chainRank"] for r in records]
    assert ranks == sorted(ranks) and ranks[0] == 1
    by_chain = {r["chainRank"]: (tuple(r["chain"]), r["chainScore"]) for r in records}
    chain_scores = [by_chain[rank][1] for rank in sorted(by_chain)]
    assert chain_scores == sorted(chain_scores, reverse=True)
    for r in records:
        steps = [tuple(t) for t in r["triplets"]]
        # each step follows the chain's relation, forward (">": head to tail) or back ("<")
        assert [t[1] for t in steps] == [step[:-1] for step in r["chain"]]
        assert all(step[-1] in "<>" for step in r["chain"]) and len(steps) == 2
        assert r["tripletScores"] == pytest.approx([scores[t] for t in steps], abs=1e-4)
        expected = sum(-np.logaddexp(0, -s) for s in r["tripletScores"])
        assert r["score"] == pytest.approx(expected, abs=1e-4)
        assert "Kismet" != r["answer"]
    # the best chain is kept whole whatever k is: its ends are the answer set
    first = [r["answer"] for r in records if r["chainRank"] == 1]
    capped = driver.execute_query(
        render("subgraphrag/walks"), {"question": "x", "config": {**base, "k": 1}}
    ).records
    assert [r["answer"] for r in capped] == first


def test_a_masked_model_embeds_the_question_with_its_topic_masked(  # type: ignore[no-untyped-def]
    driver, tiny_kg, linear_path_model, models_dir
) -> None:
    from kgqa.models.encoder import OnnxEncoder, ensure_encoder

    encoder = OnnxEncoder(ensure_encoder(models_dir.parent))
    masked = encoder.embed_one("who directed it").tolist()
    for question, config in (
        ("who directed [Kismet]", {}),  # the bracket
        ("who directed kismet", {}),  # the linked words
        ("who directed Kismet", {"topicEntities": ["Kismet"], "topicSpans": ["Kismet"]}),  # given
    ):
        in_db = _retrieve(driver, question, {"kg": KG, "model": PATH_MODEL, **config})
        given = _retrieve(
            driver,
            question,
            {"kg": KG, "model": PATH_MODEL, "topicEntities": ["Kismet"], "questionEmbedding": masked},
        )
        assert [r["score"] for r in in_db] == pytest.approx([r["score"] for r in given], abs=1e-4), question


def test_retrieve_embeds_and_links_in_the_database(driver, tiny_kg, linear_model, models_dir) -> None:  # type: ignore[no-untyped-def]
    from kgqa.models.encoder import OnnxEncoder, ensure_encoder

    encoder = OnnxEncoder(ensure_encoder(models_dir.parent))
    question = "who directed [kismet]"
    in_db = _retrieve(driver, question, {"kg": KG, "model": MODEL})
    given = _retrieve(
        driver,
        question,
        {"kg": KG, "model": MODEL, "questionEmbedding": encoder.embed_one("who directed kismet").tolist()},
    )
    assert [(r["head"], r["tail"]) for r in in_db] == [(r["head"], r["tail"]) for r in given]
    assert [r["score"] for r in in_db] == pytest.approx([r["score"] for r in given], abs=1e-4)
    # Free text (no brackets): the longest exact entity name in the question.
    free = _retrieve(
        driver, "Which films did Marlene Dietrich star in?", {"kg": KG, "model": MODEL, "hops": 1}
    )
    assert {(r["head"], r["tail"]) for r in free} == {
        ("Kismet", "Marlene Dietrich"),
        ("Golden Earrings", "Marlene Dietrich"),
    }


def test_retrieve_errors_are_clear(driver, tiny_kg, linear_model, models_dir) -> None:  # type: ignore[no-untyped-def]
    call = "CALL kgqa.subgraphrag.retrieve($q, $config)"
    base = {"kg": KG, "model": MODEL}
    message = _error(
        driver, call, {"q": "who directed [Kismet]", "config": {**base, "model": "no-such-model"}}
    )
    assert f"no SubgraphRAG model 'no-such-model' in {models_dir / 'subgraphrag'}" in message
    assert "`kgqa train subgraphrag --kg" in message
    assert "config.k must be > 0, got 0" in _error(
        driver, call, {"q": "who directed [Kismet]", "config": {**base, "k": 0}}
    )
    assert "config.k must be > 0, got -5" in _error(
        driver, call, {"q": "who directed [Kismet]", "config": {**base, "k": -5}}
    )
    assert "config.topicEntities[0]: no entity with id or name 'Nobody Atall'" in _error(
        driver, call, {"q": "x", "config": {**base, "topicEntities": ["Nobody Atall"]}}
    )
    # a bracket naming nothing is linked as free text, as `kgqa ask` links it; nothing found is one line
    assert f"question: no topic entity of KG '{KG}' found in 'who directed [Nobody Atall]'" in _error(
        driver, call, {"q": "who directed [Nobody Atall]", "config": base}
    )
    assert "config.kg: no knowledge graph named 'no-such-kg' is loaded" in _error(
        driver, call, {"q": "who directed [Kismet]", "config": {**base, "kg": "no-such-kg"}}
    )
    assert "config has an unknown key 'K'" in _error(
        driver, call, {"q": "who directed [Kismet]", "config": {**base, "K": 5}}
    )


# ------------------------------------------------------------------------------------- cosine baseline


def test_cosine_retriever_ranks_by_summed_similarity(driver, tiny_kg, vectors) -> None:  # type: ignore[no-untyped-def]
    from kgqa.core.types import LinkedEntity
    from kgqa.retrieve.cosine_baseline import CosineRetriever
    from kgqa.retrieve.subgraphrag import embed_question

    question = "who directed Kismet"
    q = embed_question(question)

    def cos(a: np.ndarray, b: np.ndarray) -> float:
        return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))

    # The 2-hop candidates of Kismet, scored here from the vectors the fixture stored.
    expected = sorted(
        (
            (cos(q, vectors[h]) + cos(q, vectors[f"rel:{r}"]) + cos(q, vectors[t]), (h, r, t))
            for h, r, t in TRIPLES[:4]
        ),
        reverse=True,
    )
    topic = [LinkedEntity(id="Kismet", name="Kismet", score=1.0, how="given")]
    evidence = CosineRetriever(driver, hops=2).retrieve(question, KG, 3, topic)
    assert evidence.triplets == [t for _s, t in expected[:3]]
    assert evidence.scores == pytest.approx([s for s, _t in expected[:3]], abs=1e-5)
    assert evidence.answer_candidates and "Kismet" not in evidence.answer_candidates
