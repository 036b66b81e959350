"""SubgraphRAG training: weak labels, DDE reference, the decomposed MLP, ONNX export and installation.

The pure tests need torch, onnx and onnxruntime but no database; the end-to-end test trains a tiny model
with ``--limit`` against the real test server and the ``kgqa.subgraphrag.*`` procedures.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from kgqa.core.errors import KgqaError  # noqa: E402
from kgqa.core.text import without_brackets  # noqa: E402
from kgqa.retrieve.subgraphrag import SubgraphRagTrace, answer_candidates, dedup_scored  # noqa: E402
from kgqa.training.questions import LabelledQuestion  # noqa: E402
from kgqa.training.subgraphrag.candidates import DdeLayout, dde_entity_dim, feature_rows, input_dim  # noqa: E402
from kgqa.training.subgraphrag.config import TrainConfig  # noqa: E402
from kgqa.training.subgraphrag.embeddings import KgIndex  # noqa: E402
from kgqa.training.subgraphrag.examples import ExampleSet, sample_rows  # noqa: E402
from kgqa.training.subgraphrag.export import (  # noqa: E402
    check_onnx,
    check_rows,
    install_model,
    split_first_layer,
    to_onnx,
)
from kgqa.training.subgraphrag.fit import EmbeddingTensors, balanced_bce, fit, score_examples  # noqa: E402
from kgqa.training.subgraphrag.labels import ChainLabels, chain_labels, shortest_path_labels  # noqa: E402
from kgqa.training.subgraphrag.model import TripleScorer  # noqa: E402
from kgqa.training.subgraphrag.paths import expand_path_codes, path_slots, path_weights  # noqa: E402
from kgqa.training.subgraphrag.reference import LocalGraph, dde_codes, local_subgraph  # noqa: E402

# --- weak labels ---


def _labels(triples: list[tuple[int, int]], n: int, topics: list[int], answers: list[int]) -> list[bool]:
    heads = np.asarray([h for h, _ in triples])
    tails = np.asarray([t for _, t in triples])
    return shortest_path_labels(n, heads, tails, topics, answers).tolist()


def test_labels_follow_every_shortest_path_in_either_direction() -> None:
    # 0 = topic actor; films 1, 2 point at the actor (film -> actor, as in MetaQA's starred_actors);
    # both films are directed by 3 (answer); 4 is a detour 0-5-4-3 of length 3; 6 hangs off the answer.
    triples = [(1, 0), (2, 0), (1, 3), (2, 3), (5, 0), (5, 4), (4, 3), (3, 6)]
    assert _labels(triples, 7, [0], [3]) == [True, True, True, True, False, False, False, False]


def test_labels_include_parallel_triples_and_ignore_topic_answers() -> None:
    # two relations between one pair are both on the shortest path; the topic itself as an answer is ignored
    triples = [(0, 1), (0, 1), (1, 2), (0, 3)]
    assert _labels(triples, 4, [0], [1, 0]) == [True, True, False, False]


def test_labels_answer_on_the_way_to_another_answer() -> None:
    triples = [(0, 1), (1, 2), (0, 3)]
    assert _labels(triples, 4, [0], [1, 2]) == [True, True, False]


def test_labels_several_topics_and_unreachable_answers() -> None:
    triples = [(0, 2), (1, 2), (2, 3), (4, 5)]
    # answer 3 from topics 0 and 1 (each its own shortest paths); answer 5 is not connected
    assert _labels(triples, 6, [0, 1], [3, 5]) == [True, True, True, False]
    assert _labels(triples, 6, [0], []) == [False] * 4


def _chain(
    triples: list[tuple[int, int, int]], n: int, topics: list[int], answers: list[int], **kw: int
) -> ChainLabels:
    heads = np.asarray([h for h, _, _ in triples])
    rels = np.asarray([r for _, r, _ in triples])
    tails = np.asarray([t for _, _, t in triples])
    return chain_labels(n, heads, rels, tails, topics, answers, **kw)


# MetaQA-shaped: film 0 (topic) written by 1 (r0) and directed by 2 (r1); 1 also wrote film 3 and
# directed film 4; 3 is directed by 5, 4 by 6; film 7 is also directed by 2 and shares writer... nothing.
# "Who directed the films written by the writer of 0?" = 0 -r0> 1 <r0- 3 -r1> 5 (and 0 itself, excluded).
WRITER_DIRECTOR = [(0, 0, 1), (0, 1, 2), (3, 0, 1), (4, 1, 1), (3, 1, 5), (4, 1, 6), (7, 1, 2), (7, 0, 5)]


def test_chain_labels_keep_the_chain_that_explains_the_answers_not_a_shorter_route() -> None:
    # answer 5 is also 3 steps away via 0 -r1> 2 <r1- 7 -r0> 5, but that chain also reaches nothing else
    # here, so both chains fit; the shortest route 0-1-3-5 is the written-by chain's own walk.
    got = _chain(WRITER_DIRECTOR, 8, [0], [5], length=3)
    assert got.fallback is None and got.f1 == 1.0
    assert set(got.chains) == {((0, ">"), (0, "<"), (1, ">")), ((1, ">"), (1, "<"), (0, ">"))}
    assert got.labels.tolist() == [True, True, True, False, True, False, True, True]


def test_chain_labels_a_wider_chain_loses_to_the_exact_one() -> None:
    # answers 5 and 6 = directors of every film of person 1 (as writer r0 or as director r1):
    # 0 -r0> 1 <r0- 3 -r1> 5 reaches 5 only (F1 2/3); 0 -r0> 1 <r1- 4 -r1> 6 reaches 6 only; no chain
    # reaches both, so the two tie and both label; the route through 2 and 7 reaches 5 too (F1 2/3).
    got = _chain(WRITER_DIRECTOR, 8, [0], [5, 6], length=3)
    assert got.f1 == pytest.approx(2 / 3)
    assert ((0, ">"), (1, "<"), (1, ">")) in got.chains
    assert got.labels[[0, 3, 5]].all()  # the walk to 6


def test_chain_labels_without_a_length_prefer_the_shorter_chain_on_a_tie() -> None:
    triples = [(0, 0, 1), (1, 1, 2), (0, 2, 3), (3, 3, 1)]
    got = _chain(triples, 4, [0], [1])
    assert got.chains == (((0, ">"),),)
    assert got.labels.tolist() == [True, False, False, False]


def test_chain_labels_never_walk_back_over_a_triple_or_into_the_topic() -> None:
    # 0 -r0> 1; the only 2-step walk back to the topic is excluded, so nothing of length 2 reaches 1 again
    triples = [(0, 0, 1), (1, 1, 2)]
    got = _chain(triples, 3, [0], [1], length=2)
    assert got.fallback == "no chain reaches an answer"
    assert got.labels.tolist() == [True, False]  # the shortest-path labels


def test_chain_labels_fall_back_when_the_walks_explode() -> None:
    star = [(0, 0, i) for i in range(1, 50)] + [(i, 1, 50 + i) for i in range(1, 50)]
    got = _chain(star, 100, [0], [51], length=2, max_walks=60)
    assert got.fallback is not None and got.fallback.startswith("more than 60 walks")
    assert got.labels.sum() == 2


# --- DDE reference ---


def test_dde_forward_reverse_means_and_isolated_nodes() -> None:
    # 0 (topic) -> 1, 2 -> 1, 1 -> 3; node 4 isolated
    heads, tails = np.asarray([0, 2, 1]), np.asarray([1, 1, 3])
    codes = dde_codes(5, heads, tails, [0], DdeLayout(True))
    assert codes.shape == (5, 10)
    s0, f1, f2, r1, r2 = (codes[:, i : i + 2] for i in range(0, 10, 2))
    np.testing.assert_allclose(s0, [[0, 1], [1, 0], [1, 0], [1, 0], [1, 0]])
    # forward round 1: mean of in-neighbours' s0; node 1 has in-neighbours 0 (topic) and 2
    np.testing.assert_allclose(f1, [[0, 0], [0.5, 0.5], [0, 0], [1, 0], [0, 0]])
    np.testing.assert_allclose(f2, [[0, 0], [0, 0], [0, 0], [0.5, 0.5], [0, 0]])
    # reverse round 1: mean of out-neighbours' s0
    np.testing.assert_allclose(r1, [[1, 0], [1, 0], [1, 0], [0, 0], [0, 0]])
    np.testing.assert_allclose(r2, [[1, 0], [0, 0], [1, 0], [0, 0], [0, 0]])
    without = dde_codes(5, heads, tails, [0], DdeLayout(False))
    np.testing.assert_allclose(without, codes[:, 2:])


def test_dde_counts_parallel_triples() -> None:
    codes = dde_codes(3, np.asarray([0, 0, 2]), np.asarray([1, 1, 1]), [0], DdeLayout(False))
    np.testing.assert_allclose(codes[1, :2], [1 / 3, 2 / 3])


def test_three_rounds_see_distance_three() -> None:
    """A chain 0 -> 1 -> 2 -> 3 -> 4 from topic 0: the k-th forward round puts the topic's mass on node k, so
    two rounds cannot tell node 3 (an answer of a 3-hop question) from node 4; three can."""
    heads, tails = np.asarray([0, 1, 2, 3]), np.asarray([1, 2, 3, 4])
    two = dde_codes(5, heads, tails, [0], DdeLayout(False, 2, 0))
    three = dde_codes(5, heads, tails, [0], DdeLayout(False, 3, 0))
    assert two.shape == (5, 4) and three.shape == (5, 6)
    topic_mass = three[:, 1::2]  # column 1 of each round: the share of paths that started at the topic
    assert topic_mass[3].tolist() == [0.0, 0.0, 1.0] and topic_mass[4].tolist() == [0.0, 0.0, 0.0]
    assert two[3].tolist() == two[4].tolist()
    assert dde_entity_dim(DdeLayout(True, 3, 3)) == 14 and input_dim(DdeLayout(True, 3, 3)) == 4 * 384 + 28
    with pytest.raises(ValueError):
        DdeLayout(True, 9, 2)


def test_local_subgraph_radius_and_cap() -> None:
    # chain 0-1-2-3 plus a branch 1-4; topic 0
    graph = LocalGraph(
        np.asarray([0, 1, 2, 1]), np.asarray([0, 0, 0, 1], np.int32), np.asarray([1, 2, 3, 4]), 5
    )
    one = local_subgraph(graph, [0], 1, DdeLayout(True))
    assert one.size == 1
    two = local_subgraph(graph, [0], 2, DdeLayout(True))
    assert two.size == 3 and sorted(two.entities[two.tails].tolist()) == [1, 2, 4]
    capped = local_subgraph(graph, [0], 3, DdeLayout(False), max_candidates=2)
    assert capped.size == 2 and capped.entity_dde.shape[1] == 8
    assert capped.entities[capped.topics].tolist() == [0]


# --- model, ONNX, installation ---


def _toy_index(n_entities: int = 12, n_relations: int = 3, dim: int = 384, seed: int = 0) -> KgIndex:
    rng = np.random.default_rng(seed)

    def unit(rows: int) -> np.ndarray:
        x = rng.normal(size=(rows, dim)).astype(np.float32)
        return x / np.linalg.norm(x, axis=1, keepdims=True)

    ids = [f"e{i}" for i in range(n_entities)]
    relations = [f"r{i}" for i in range(n_relations)]
    return KgIndex("toy", ids, ids, unit(n_entities), relations, unit(n_relations))


def _toy_examples(
    index: KgIndex, include_seed: bool, n_questions: int = 24, seed: int = 1, path_steps: int = 0
) -> ExampleSet:
    rng = np.random.default_rng(seed)
    n = len(index.entity_ids)
    heads = rng.integers(0, n, 60)
    tails = (heads + rng.integers(1, n, 60)) % n
    graph = LocalGraph(heads, rng.integers(0, 3, 60).astype(np.int32), tails, n, 3)
    parts = []
    for q in range(n_questions):
        topic = int(rng.integers(0, n))
        sub = local_subgraph(graph, [topic], 3, DdeLayout(include_seed, path_steps=path_steps))
        labels = shortest_path_labels(
            sub.entities.size,
            sub.heads,
            sub.tails,
            sub.topics.tolist(),
            [int(rng.integers(0, sub.entities.size))],
        )
        parts.append((q, 1 + q % 3, sub, labels, int(labels.sum()), int(labels.size)))
    return ExampleSet.concat(parts, 10 if include_seed else 8)


@pytest.mark.parametrize(
    ("include_seed", "question_relation", "path_steps"),
    [(True, False, 0), (False, False, 0), (True, True, 0), (True, False, 2), (True, True, 1)],
)
def test_decomposed_forward_equals_plain_forward(
    include_seed: bool, question_relation: bool, path_steps: int
) -> None:
    torch.manual_seed(0)
    index = _toy_index()
    examples = _toy_examples(index, include_seed, path_steps=path_steps)
    questions = np.random.default_rng(3).normal(size=(len(examples), 384)).astype(np.float32)
    tensors = EmbeddingTensors(
        torch.from_numpy(questions),
        torch.from_numpy(index.entity_vectors),
        torch.from_numpy(index.relation_vectors),
    )
    model = TripleScorer(384, 10 if include_seed else 8, 32, question_relation, path_slots(path_steps))
    if path_steps:
        assert int(examples.path_width) == path_slots(path_steps) * 3 and examples.path_data.size > 0
    parts = score_examples(model, examples, tensors, batch_questions=5)
    for i in range(len(examples)):
        sub, _labels = examples.subgraph(i)
        rows = feature_rows(sub, index, questions[examples.question_rows[i]], question_relation)
        assert rows.shape[1] == model.input_dim
        with torch.no_grad():
            plain = model(torch.from_numpy(rows)).numpy()
        np.testing.assert_allclose(parts[i], plain, atol=1e-5)


def test_small_training_run_then_onnx_agrees_with_torch(tmp_path: Path) -> None:
    torch.manual_seed(0)
    index = _toy_index()
    train = _toy_examples(index, True, 40, seed=1)
    val = _toy_examples(index, True, 12, seed=2)
    questions = np.random.default_rng(3).normal(size=(40, 384)).astype(np.float32)
    tensors = EmbeddingTensors(
        torch.from_numpy(questions),
        torch.from_numpy(index.entity_vectors),
        torch.from_numpy(index.relation_vectors),
    )
    model = TripleScorer(384, 10, 16)
    config = TrainConfig(epochs=3, batch_questions=8, patience=5)
    history = fit(model, train, val, tensors, config, log=lambda _m: None)
    assert len(history) == 3 and all(0.0 <= h["recall@100"] <= 1.0 for h in history)
    model_bytes = to_onnx(model)
    rows = check_rows(model, val, index, questions)
    assert check_onnx(model_bytes, model, rows) <= 1e-5

    import onnx
    import onnxruntime as ort

    proto = onnx.load_from_string(model_bytes)
    assert proto.opset_import[0].version >= 17
    session = ort.InferenceSession(model_bytes, providers=["CPUExecutionProvider"])
    assert [i.name for i in session.get_inputs()] == ["features"]
    assert [o.name for o in session.get_outputs()] == ["scores"]
    for n in (1, 7, 300):  # dynamic N
        (out,) = session.run(["scores"], {"features": rows[:n]})
        assert out.shape == (n,)

    broken = TripleScorer(384, 10, 16)
    with pytest.raises(KgqaError, match="differ"):
        check_onnx(model_bytes, broken, rows)

    # The first layer in parts (what the database scores with) gives the same scores as torch.
    parts, parts_diff = split_first_layer(model, rows)
    assert parts_diff <= 1e-5
    from kgqa.training.scorer_onnx import check_parts, scores_from_parts

    assert scores_from_parts(parts, rows[:5], 384, 10).shape == (5,)
    with torch.no_grad():
        other = broken(torch.from_numpy(rows)).numpy()
    with pytest.raises(ValueError, match="differ"):
        check_parts(parts, other, rows, 384, 10, 1e-4)

    target = install_model(tmp_path / "toy", model_bytes, {"input_dim": model.input_dim})
    again = install_model(tmp_path / "toy", model_bytes, {"input_dim": model.input_dim, "v": 2})
    assert target == again and json.loads((target / "meta.json").read_text())["v"] == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["toy"]


def test_question_relation_model_exports_and_splits_like_torch(tmp_path: Path) -> None:
    torch.manual_seed(0)
    index = _toy_index()
    train = _toy_examples(index, True, 40, seed=1)
    val = _toy_examples(index, True, 12, seed=2)
    questions = np.random.default_rng(3).normal(size=(40, 384)).astype(np.float32)
    tensors = EmbeddingTensors(
        torch.from_numpy(questions),
        torch.from_numpy(index.entity_vectors),
        torch.from_numpy(index.relation_vectors),
    )
    model = TripleScorer(384, 10, 16, question_relation=True)
    assert model.input_dim == 5 * 384 + 2 * 10
    fit(model, train, val, tensors, TrainConfig(epochs=2, batch_questions=8), log=lambda _m: None)
    rows = check_rows(model, val, index, questions)
    assert rows.shape[1] == model.input_dim
    model_bytes = to_onnx(model)
    assert check_onnx(model_bytes, model, rows) <= 1e-5
    parts, parts_diff = split_first_layer(model, rows)
    assert parts_diff <= 1e-5

    # The product block matters: zeroing it changes the scores, so the parts check above compared it.
    with torch.no_grad():
        full = model(torch.from_numpy(rows)).numpy()
        cut = rows.copy()
        cut[:, 4 * 384 + 20 :] = 0
        assert np.abs(model(torch.from_numpy(cut)).numpy() - full).max() > 1e-3

    # parts.onnx rebuilt from the installed model.onnx + meta.json (python -m kgqa.training.scorer_onnx)
    from kgqa.training.scorer_onnx import PARTS_FILE, add_parts

    meta = {"input_dim": model.input_dim, "embedding_dim": 384, "question_relation": True}
    target = install_model(tmp_path / "qr", model_bytes, meta)
    assert add_parts(target) == target / PARTS_FILE


def test_a_path_code_model_exports_and_splits_like_torch() -> None:
    torch.manual_seed(0)
    index = _toy_index()
    train = _toy_examples(index, True, 40, seed=1, path_steps=2)
    val = _toy_examples(index, True, 12, seed=2, path_steps=2)
    questions = np.random.default_rng(3).normal(size=(40, 384)).astype(np.float32)
    tensors = EmbeddingTensors(
        torch.from_numpy(questions),
        torch.from_numpy(index.entity_vectors),
        torch.from_numpy(index.relation_vectors),
    )
    model = TripleScorer(384, 10, 16, path_slots=path_slots(2))
    assert model.input_dim == input_dim(DdeLayout(True, path_steps=2)) == 4 * 384 + 2 * (10 + 4 * 384)
    fit(model, train, val, tensors, TrainConfig(epochs=2, batch_questions=8), log=lambda _m: None)
    rows = check_rows(model, val, index, questions)
    assert rows.shape[1] == model.input_dim
    assert check_onnx(to_onnx(model), model, rows) <= 1e-5
    _parts, parts_diff = split_first_layer(model, rows)
    assert parts_diff <= 1e-5
    # the path codes matter: zeroing them changes the scores
    with torch.no_grad():
        full = model(torch.from_numpy(rows)).numpy()
        cut = rows.copy()
        cut[:, 4 * 384 + 10 : 4 * 384 + 10 + 4 * 384] = 0
        assert np.abs(model(torch.from_numpy(cut)).numpy() - full).max() > 1e-4


def test_path_weights_average_the_routes_per_step_and_direction() -> None:
    # The graph of the JUnit PathCodesTest: topic 0; 0 -r0-> 1; 2 -r1-> 1; 0 -r2-> 3; 3 -r1-> 2.
    heads, rels, tails = np.asarray([0, 2, 0, 3]), np.asarray([0, 1, 2, 1]), np.asarray([1, 1, 3, 2])
    weights = path_weights(4, heads, rels, tails, [0], 2, 3)
    assert weights.shape == (4, 12)
    assert weights[0].nnz == 0
    assert weights[1].toarray().nonzero()[1].tolist() == [0]
    node2 = weights[2].toarray()[0]
    assert node2.nonzero()[0].tolist() == [0, 2, 7, 10] and np.allclose(node2[[0, 2, 7, 10]], 0.5)
    vectors = np.asarray([[1, 0], [0, 1], [2, 2]], dtype=np.float32)
    expanded = expand_path_codes(weights, vectors)
    np.testing.assert_allclose(expanded[2], [1.5, 1, 0, 0, 0, 0.5, 0, 0.5])
    # one step only: farther entities inherit the first step's relations
    chain = path_weights(5, np.asarray([0, 1, 2]), np.asarray([0, 0, 0]), np.asarray([1, 2, 3]), [0], 1, 1)
    assert [chain[v].toarray()[0].tolist() for v in range(5)] == [[0, 0], [1, 0], [1, 0], [1, 0], [0, 0]]


def test_sample_rows_keeps_positives() -> None:
    index = _toy_index()
    examples = _toy_examples(index, True, 5)
    sub, labels = examples.subgraph(0)
    rows = sample_rows(sub, labels, 3, np.random.default_rng(0))
    assert set(np.flatnonzero(labels)) <= set(rows.tolist())
    assert (~labels[rows]).sum() <= 3


def test_train_all_splits_are_deterministic_and_keep_wordings_apart() -> None:
    from kgqa.learn.train_all import split_labelled, split_synthesised

    questions = [
        LabelledQuestion(
            f"who directed film {i % 40}" if i % 2 else f"what did person {i % 40} write",
            (f"film {i % 40}" if i % 2 else f"person {i % 40}",),
            ("e",),
            ("a",),
            (("r", "out"),),
            f"f:{i}",
        )
        for i in range(300)
    ]
    train, val, route = split_labelled(questions, 0.1, 0.05, seed=7)
    again = split_labelled(questions, 0.1, 0.05, seed=7)
    assert [q.source for q in train] == [q.source for q in again[0]]
    assert len({q.source for q in train + val + route}) == 300
    # the masked wording decides: no wording is in two parts
    from kgqa.models.question_classifiers import mask_question

    def wordings(part: list[LabelledQuestion]) -> set[str]:
        return {mask_question(q.text, q.topic_spans) for q in part}

    assert not wordings(train) & wordings(route) and not wordings(train) & wordings(val)
    synthesised = [
        LabelledQuestion("q", (f"t{i % 50}",), ("t",), ("a",), (("r", "out"),), "synthesised", "AB"[i % 2])
        for i in range(200)
    ]
    s_train, s_val, s_route = split_synthesised(synthesised, 0.1, seed=7)
    assert {q.wording for q in s_route} == {"B"} and {q.wording for q in s_train + s_val} == {"A"}
    assert not {q.topic_ids for q in s_train} & {q.topic_ids for q in s_val}


# --- retriever helpers ---


def test_question_text_drops_brackets() -> None:
    assert without_brackets("what movies did [Lee Pace]  star in") == "what movies did Lee Pace star in"


def test_dedup_scored_keeps_best_first() -> None:
    rows = [("a", "r", "b", 0.1), ("c", "r", "d", 0.9), ("a", "r", "b", 0.5)]
    triplets, scores = dedup_scored(rows)
    assert triplets == [("c", "r", "d"), ("a", "r", "b")] and scores == [0.9, 0.5]
    triplets, scores = dedup_scored(rows, by_score=False)  # the database's order (walks) is kept
    assert triplets == [("a", "r", "b"), ("c", "r", "d")] and scores == [0.1, 0.9]


def test_answer_candidates_prefers_path_ends() -> None:
    # topic X; film F starred X (high), F directed_by D (high), F has_genre G (low)
    triplets = [("F", "starred_actors", "X"), ("F", "directed_by", "D"), ("F", "has_genre", "G")]
    names, scores = answer_candidates(triplets, [5.0, 4.0, -4.0], ["X"])
    assert names[0] == "D" and "X" not in names and len(scores) == len(names)
    names, _ = answer_candidates(triplets, [5.0, -6.0, -6.0], ["X"])
    assert names[0] == "F"


# --- end to end against the real server ---


def _procedures(driver) -> set[str]:  # type: ignore[no-untyped-def]
    records, _, _ = driver.execute_query(
        "SHOW PROCEDURES YIELD name WHERE name STARTS WITH 'kgqa.subgraphrag' RETURN collect(name) AS names"
    )
    return set(records[0]["names"])


def test_db_candidates_match_the_numpy_reference(driver, metaqa_kg) -> None:  # type: ignore[no-untyped-def]
    from kgqa.training.subgraphrag.embeddings import load_kg_index
    from kgqa.training.subgraphrag.reference import check_reference_parity, load_local_graph

    index = load_kg_index(driver, "metaqa")
    graph = load_local_graph(driver, index)
    cases = [
        (["Kismet"], 1),
        (["Kismet"], 2),
        (["Lee Pace"], 2),
        (["Joel Zwick"], 3),
        (["Lee Pace", "Kismet"], 2),
    ]
    for dde in (DdeLayout(True), DdeLayout(False), DdeLayout(True, 3, 3)):
        assert check_reference_parity(driver, index, graph, cases, dde, max_rows=30000) == len(cases)


@pytest.mark.slow
def test_train_with_limit_installs_a_working_model(
    driver, metaqa_kg, question_classifiers, shared_data
) -> None:  # type: ignore[no-untyped-def]
    from tests.conftest import run_kgqa

    result = run_kgqa(
        "train",
        "subgraphrag",
        "--kg",
        "metaqa",
        "--questions",
        str(shared_data / "metaqa"),
        "--name",
        "pytest-tiny",
        "--epochs",
        "2",
        "--per-hop",
        "40",
        timeout=1200,
    )
    assert result.returncode == 0, result.stderr
    from kgqa.models.registry import subgraphrag_model_dir

    directory = subgraphrag_model_dir("metaqa", "pytest-tiny")
    meta = json.loads((directory / "meta.json").read_text())
    # The defaults (TrainConfig, subgraphrag_candidates): a row is
    # [z_q ‖ z_head ‖ z_rel ‖ z_tail ‖ z_q ⊙ z_rel] (5 vectors of 384) and the head's and tail's entity codes.
    # An entity code is its DDE, 2 columns per round with 2 forward + 2 reverse rounds and the seed one-hot
    # (2 * (2 + 2 + 1) = 10), then its 2-step path code: one relation mixture per (step, direction),
    # 2 * 2 = 4 of 384. Chain labels, topic masked.
    assert (meta["dde_rounds_forward"], meta["dde_rounds_reverse"], meta["embedding_dim"]) == (2, 2, 384)
    assert meta["input_dim"] == 5 * 384 + 2 * (2 * (2 + 2 + 1) + 2 * 2 * 384)
    assert meta["question_relation"] is True
    assert meta["include_seed"] is True and meta["kg"] == "metaqa" and meta["path_steps"] == 2
    assert meta["labels"] == "chain" and meta["question_mask"] == "it"
    assert meta["onnx_max_abs_diff"] <= 1e-5 and 0.0 <= meta["best_dev_recall@100"] <= 1.0
    assert (directory / "parts.onnx").is_file() and meta["parts_max_abs_diff"] <= 1e-5
    assert "kgqa.subgraphrag.retrieve" in _procedures(driver)
    # The database scores by parts; the same model without parts.onnx scores whole rows: same triples.
    whole = directory.parent / "pytest-tiny-whole"
    shutil.rmtree(whole, ignore_errors=True)
    shutil.copytree(directory, whole)
    (whole / "parts.onnx").unlink()
    try:
        by_model = {}
        for name in ("pytest-tiny", "pytest-tiny-whole"):
            rows = driver.execute_query(
                "CALL kgqa.subgraphrag.retrieve($question, {model: $model, kg: 'metaqa', hops: 3, k: 50})"
                " YIELD head, relation, tail, score RETURN head, relation, tail, score",
                question="what genres are the films directed by the [Kismet] director",
                model=name,
            ).records
            by_model[name] = {(r["head"], r["relation"], r["tail"]): r["score"] for r in rows}
    finally:
        shutil.rmtree(whole, ignore_errors=True)
    parts_scores, whole_scores = by_model["pytest-tiny"], by_model["pytest-tiny-whole"]
    assert len(whole_scores) == 50
    common = set(parts_scores) & set(whole_scores)
    assert len(common) >= 48  # a tie at the 50th place may fall either way
    assert max(abs(parts_scores[t] - whole_scores[t]) for t in common) <= 1e-4
    from kgqa.answer.extractive import answer_extractive
    from kgqa.core.types import LinkedEntity
    from kgqa.retrieve.subgraphrag import SubgraphRagRetriever

    retriever = SubgraphRagRetriever(driver, model="pytest-tiny")
    evidence = retriever.retrieve(
        "who directed [Kismet]", "metaqa", 20, [LinkedEntity("Kismet", "Kismet", 1.0, "given")]
    )
    assert 0 < len(evidence.triplets) <= 20
    # A MetaQA KG: the hop classifier says 1 hop, and the answerer walks exactly that far.
    assert isinstance(evidence.trace, SubgraphRagTrace) and evidence.trace.hops_predicted == 1
    # The evidence is whole walks of that many hops first (here the triples at Kismet), then the rest.
    assert evidence.trace.walk_hops == 1
    at_topic = [t for t in evidence.triplets if "Kismet" in (t[0], t[2])]
    assert at_topic and evidence.triplets[: len(at_topic)] == at_topic
    top_k = SubgraphRagRetriever(driver, model="pytest-tiny", select_walks=False).retrieve(
        "who directed [Kismet]", "metaqa", 20, [LinkedEntity("Kismet", "Kismet", 1.0, "given")]
    )
    assert isinstance(top_k.trace, SubgraphRagTrace) and top_k.trace.walk_hops is None
    assert top_k.scores == sorted(top_k.scores, reverse=True)
    three = retriever.retrieve(
        "what genres are the films directed by the [Kismet] director",
        "metaqa",
        30,
        [LinkedEntity("Kismet", "Kismet", 1.0, "given")],
    )
    assert isinstance(three.trace, SubgraphRagTrace) and three.trace.walk_hops == 3
    first, second, third = three.triplets[:3]  # the best walk, from Kismet outwards
    assert "Kismet" in (first[0], first[2])
    assert {first[0], first[2]} & {second[0], second[2]} and {second[0], second[2]} & {third[0], third[2]}
    assert "Kismet" not in (third[0], third[2])
    answer = answer_extractive(evidence)
    assert answer.answers and "Kismet" not in answer.answers
    assert answer.explanation["hops"] == 1
    # An explicit radius keeps the leaf rule (what other KGs get too).
    fixed = SubgraphRagRetriever(driver, model="pytest-tiny", hops=2).retrieve(
        "who directed [Kismet]", "metaqa", 20, [LinkedEntity("Kismet", "Kismet", 1.0, "given")]
    )
    assert isinstance(fixed.trace, SubgraphRagTrace) and fixed.trace.hops_predicted is None
    assert fixed.answer_candidates and "Kismet" not in fixed.answer_candidates
    # --if-missing (scripts/demo --all-methods): an installed model is kept, not retrained.
    before = (directory / "meta.json").read_bytes()
    kept = run_kgqa(
        "train", "subgraphrag", "--kg", "metaqa", "--name", "pytest-tiny", "--if-missing", timeout=120
    )
    assert kept.returncode == 0, kept.stderr
    assert "kept" in kept.stdout and (directory / "meta.json").read_bytes() == before


def test_balanced_bce_weighs_questions_and_classes_equally() -> None:
    logits = torch.tensor([2.0, -1.0, -3.0, 0.5, 0.5, 0.5, -2.0])
    labels = torch.tensor([True, False, False, True, True, True, False])
    rows = torch.tensor([0, 0, 0, 1, 1, 1, 1])
    loss = balanced_bce(logits, labels, rows, 2)
    bce = torch.nn.functional.binary_cross_entropy_with_logits
    q0 = 0.5 * bce(logits[:1], labels[:1].float()) + 0.5 * bce(logits[1:3], labels[1:3].float())
    q1 = 0.5 * bce(logits[3:6], labels[3:6].float()) + 0.5 * bce(logits[6:], labels[6:].float())
    torch.testing.assert_close(loss, (q0 + q1) / 2)
    only_negatives = balanced_bce(logits[1:3], labels[1:3], torch.tensor([0, 0]), 1)
    torch.testing.assert_close(only_negatives, bce(logits[1:3], labels[1:3].float()))


def test_feature_cache_key_covers_the_question_rows() -> None:
    """The same validation questions after fewer or more training questions point at other rows of the
    question-vector matrix (``--limit``); a cache keyed without the rows served stale offsets (IndexError
    with a smaller limit, the wrong question vectors with a larger one)."""
    from kgqa.training.subgraphrag.cache import cache_key
    from kgqa.training.subgraphrag.examples import feature_cache_key

    val = [
        LabelledQuestion(
            f"who directed F{i}", (f"F{i}",), (f"F{i}",), ("D",), (("directed_by", "out"),), f"d:{i}"
        )
        for i in range(3)
    ]
    common = {"version": 2, "kg": "fp", "hops": 2}
    after_60 = feature_cache_key(common, val, range(60, 63), None)
    after_80 = feature_cache_key(common, val, range(80, 83), None)
    assert cache_key(after_60) != cache_key(after_80)
    assert cache_key(after_60) == cache_key(feature_cache_key(common, val, range(60, 63), None))
    assert cache_key(feature_cache_key(common, val, range(60, 63), 8)) != cache_key(after_60)
    assert cache_key(feature_cache_key(common, val[:2], range(60, 62), None)) != cache_key(after_60)


def test_onnx_tolerance_is_relative_to_the_score_scale() -> None:
    from kgqa.training.scorer_onnx import relative_difference

    large = np.array([-80.0, 12.0, 40.0], dtype=np.float32)
    rounding = large + np.float32(8e-5)  # float32 rounding at this scale: fails an absolute 1e-5
    assert relative_difference(rounding, large) < 1e-5
    assert relative_difference(large + 1.0, large) > 1e-5  # a real difference still fails
    small = np.array([0.1, -0.2], dtype=np.float32)
    assert relative_difference(small + np.float32(5e-5), small) == pytest.approx(5e-5, rel=1e-2)
    assert relative_difference(np.zeros(0), np.zeros(0)) == 0.0
