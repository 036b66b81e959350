"""The ONNX graphs of a trained SubgraphRAG scorer: the whole model, and its first layer in parts.

``model.onnx`` (``whole_onnx``) maps ``features`` [N, input_dim] to ``scores`` [N].

``parts.onnx`` (``parts_onnx``) is the first layer split by the block each weight multiplies.

The scorer is Linear -> ReLU -> Linear over [z_q ‖ z_head ‖ z_rel ‖ z_tail ‖ dde_head ‖ dde_tail], with
z_q ⊙ z_rel appended when the model was trained with ``question_relation``. Its first layer is a sum of one
product per block, so for a question

    pre(h, r, t) = question_part + head_parts[h] + relation_parts[r] + tail_parts[t]
    score        = out_weight · relu(pre) + out_bias

where head_parts[v] = W_head · [z_v ‖ dde_v] is computed once per entity, not once per triple
(relation_parts[r] = W_rel · z_r, plus W_qr · (z_q ⊙ z_r) with ``question_relation``), and the
1,556-wide feature rows are never built. ``kgqa.subgraphrag.retrieve`` uses this graph when a model has it
(3-hop MetaQA: about 20,000 candidate triples over about half as many entities) and the whole model
otherwise; the two agree to float rounding (``check_parts``).

The graph (opset 17, IR 8): inputs ``heads`` [Nh, d+e], ``tails`` [Nt, d+e], ``relations`` [R, d],
``questions`` [Q, d]; outputs ``head_parts`` [Nh, H], ``tail_parts`` [Nt, H], ``relation_parts`` [R, H],
``question_parts`` [Q, H] (first-layer bias included), ``out_weight`` [1, H], ``out_bias`` [1].

    python -m kgqa.training.scorer_onnx NAME [NAME ...]   # add parts.onnx to installed models
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
from kgqa.models.registry import subgraphrag_model_dir

PARTS_FILE = "parts.onnx"
ONNX_OPSET = 17
PARAMETERS = ("hidden.weight", "hidden.bias", "out.weight", "out.bias")


def whole_onnx(params: Mapping[str, np.ndarray]) -> bytes:
    """Linear -> ReLU -> Linear as an ONNX graph, written node by node from the weights.

    Building the four nodes directly keeps the file independent of torch's exporter generations (the
    TorchScript exporter is deprecated; the dynamo one needs onnxscript); callers check it numerically.
    """
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    weights = {name: np.asarray(params[name], dtype=np.float32) for name in PARAMETERS}
    input_dim = weights["hidden.weight"].shape[1]
    initializers = [numpy_helper.from_array(v, k) for k, v in weights.items()]
    initializers.append(numpy_helper.from_array(np.asarray([1], dtype=np.int64), "squeeze_axes"))
    nodes = [
        helper.make_node(
            "Gemm", ["features", "hidden.weight", "hidden.bias"], ["pre"], transB=1, name="hidden"
        ),
        helper.make_node("Relu", ["pre"], ["act"], name="relu"),
        helper.make_node("Gemm", ["act", "out.weight", "out.bias"], ["logit"], transB=1, name="out"),
        helper.make_node("Squeeze", ["logit", "squeeze_axes"], ["scores"], name="squeeze"),
    ]
    graph = helper.make_graph(
        nodes,
        "subgraphrag_triple_scorer",
        [helper.make_tensor_value_info("features", TensorProto.FLOAT, ["N", input_dim])],
        [helper.make_tensor_value_info("scores", TensorProto.FLOAT, ["N"])],
        initializer=initializers,
    )
    proto = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", ONNX_OPSET)], producer_name="kgqa.training.subgraphrag"
    )
    proto.ir_version = 8  # readable by every ONNX Runtime >= 1.10
    onnx.checker.check_model(proto, full_check=True)
    return proto.SerializeToString()


def parts_onnx(
    params: Mapping[str, np.ndarray], embedding_dim: int, dde_dim: int, question_relation: bool = False
) -> bytes:
    """The split first layer of a scorer with ``params`` (``hidden.*``, ``out.*`` as torch names them).

    With ``question_relation``, relation_parts also carries W_qr · (z_r ⊙ z_q): ``questions`` holds one row
    (broadcast over the relations, as the database calls it) or one row per relation."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    weight = np.asarray(params["hidden.weight"], dtype=np.float32)
    d, e = embedding_dim, dde_dim
    hidden = weight.shape[0]
    blocks_of_d = 5 if question_relation else 4
    if weight.shape[1] != blocks_of_d * d + 2 * e:
        raise ValueError(
            f"hidden.weight has {weight.shape[1]} columns, expected {blocks_of_d} x {d} + 2 x {e}"
        )
    blocks = {
        "w_head": np.concatenate([weight[:, d : 2 * d], weight[:, 4 * d : 4 * d + e]], axis=1),
        "w_tail": np.concatenate([weight[:, 3 * d : 4 * d], weight[:, 4 * d + e : 4 * d + 2 * e]], axis=1),
        "w_relation": weight[:, 2 * d : 3 * d],
        "w_question": weight[:, :d],
        "b_hidden": np.asarray(params["hidden.bias"], dtype=np.float32).reshape(hidden),
        "w_out": np.asarray(params["out.weight"], dtype=np.float32).reshape(1, hidden),
        "b_out": np.asarray(params["out.bias"], dtype=np.float32).reshape(1),
    }
    initializers = [numpy_helper.from_array(np.ascontiguousarray(v), k) for k, v in blocks.items()]
    nodes = [
        helper.make_node("Gemm", ["heads", "w_head"], ["head_parts"], transB=1, name="head"),
        helper.make_node("Gemm", ["tails", "w_tail"], ["tail_parts"], transB=1, name="tail"),
        helper.make_node(
            "Gemm",
            ["relations", "w_relation"],
            ["relation_alone" if question_relation else "relation_parts"],
            transB=1,
            name="relation",
        ),
        helper.make_node(
            "Gemm", ["questions", "w_question", "b_hidden"], ["question_parts"], transB=1, name="question"
        ),
        helper.make_node("Identity", ["w_out"], ["out_weight"], name="out_weight"),
        helper.make_node("Identity", ["b_out"], ["out_bias"], name="out_bias"),
    ]
    if question_relation:
        initializers.append(numpy_helper.from_array(np.ascontiguousarray(weight[:, 4 * d + 2 * e :]), "w_qr"))
        nodes += [
            helper.make_node("Mul", ["relations", "questions"], ["relation_x_question"], name="qr_product"),
            helper.make_node("Gemm", ["relation_x_question", "w_qr"], ["qr_parts"], transB=1, name="qr"),
            helper.make_node("Add", ["relation_alone", "qr_parts"], ["relation_parts"], name="relation_sum"),
        ]
    floats = TensorProto.FLOAT
    graph = helper.make_graph(
        nodes,
        "subgraphrag_scorer_onnx",
        [
            helper.make_tensor_value_info("heads", floats, ["Nh", d + e]),
            helper.make_tensor_value_info("tails", floats, ["Nt", d + e]),
            helper.make_tensor_value_info("relations", floats, ["R", d]),
            helper.make_tensor_value_info("questions", floats, ["Q", d]),
        ],
        [
            helper.make_tensor_value_info("head_parts", floats, ["Nh", hidden]),
            helper.make_tensor_value_info("tail_parts", floats, ["Nt", hidden]),
            helper.make_tensor_value_info("relation_parts", floats, ["R", hidden]),
            helper.make_tensor_value_info("question_parts", floats, ["Q", hidden]),
            helper.make_tensor_value_info("out_weight", floats, [1, hidden]),
            helper.make_tensor_value_info("out_bias", floats, [1]),
        ],
        initializer=initializers,
    )
    proto = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", ONNX_OPSET)], producer_name="kgqa.training.scorer_onnx"
    )
    proto.ir_version = 8  # readable by ONNX Runtime Java 1.20
    onnx.checker.check_model(proto, full_check=True)
    return proto.SerializeToString()


def scores_from_parts(
    parts: bytes, rows: np.ndarray, embedding_dim: int, dde_dim: int, question_relation: bool = False
) -> np.ndarray:
    """What the database computes from ``parts``, for full feature ``rows`` (one question per row)."""
    import onnxruntime as ort

    d, e = embedding_dim, dde_dim
    session = ort.InferenceSession(parts, providers=["CPUExecutionProvider"])
    rows = np.ascontiguousarray(rows, dtype=np.float32)
    feeds = {
        "heads": np.concatenate([rows[:, d : 2 * d], rows[:, 4 * d : 4 * d + e]], axis=1),
        "tails": np.concatenate([rows[:, 3 * d : 4 * d], rows[:, 4 * d + e : 4 * d + 2 * e]], axis=1),
        "relations": np.ascontiguousarray(rows[:, 2 * d : 3 * d]),
        "questions": np.ascontiguousarray(rows[:, :d]),
    }
    head, tail, relation, question, w_out, b_out = session.run(None, feeds)
    return (np.maximum(question + head + relation + tail, 0.0) @ w_out.T).reshape(-1) + b_out[0]


def relative_difference(scores: np.ndarray, reference: np.ndarray) -> float:
    """Max |scores - reference| relative to the reference's scale (at least 1): float32 rounding grows with
    the logits, so a fixed absolute tolerance fails a well-trained model whose logits are large."""
    if reference.size == 0:
        return 0.0
    scale = max(1.0, float(np.max(np.abs(reference))))
    return float(np.max(np.abs(scores - reference))) / scale


def check_parts(
    parts: bytes,
    full_scores: np.ndarray,
    rows: np.ndarray,
    embedding_dim: int,
    dde_dim: int,
    tolerance: float,
    question_relation: bool = False,
) -> float:
    """:func:`relative_difference` of parts and full over ``rows``; ValueError above ``tolerance``."""
    worst = relative_difference(
        scores_from_parts(parts, rows, embedding_dim, dde_dim, question_relation), full_scores
    )
    if worst > tolerance:
        raise ValueError(
            f"parts.onnx and the whole model differ by {worst:.2e} of the score scale (> {tolerance:.0e})"
        )
    return worst


def params_from_model(model_path: Path) -> dict[str, np.ndarray]:
    """The scorer's weights, read back from the ``model.onnx`` that ``kgqa train subgraphrag`` wrote."""
    import onnx
    from onnx import numpy_helper

    found = {i.name: numpy_helper.to_array(i) for i in onnx.load(str(model_path)).graph.initializer}
    missing = [name for name in PARAMETERS if name not in found]
    if missing:
        raise ValueError(
            f"{model_path} is not a Linear-ReLU-Linear scorer: no initializer {', '.join(missing)}"
        )
    return {name: found[name] for name in PARAMETERS}


def add_parts(directory: Path, tolerance: float = 1e-4) -> Path:
    """Writes ``parts.onnx`` next to a trained model's ``model.onnx`` (checked against it on random rows)."""
    import onnxruntime as ort

    meta = json.loads((directory / "meta.json").read_text(encoding="utf-8"))
    d = int(meta.get("embedding_dim", 384))
    question_relation = bool(meta.get("question_relation", False))
    e = (int(meta["input_dim"]) - (5 if question_relation else 4) * d) // 2
    params = params_from_model(directory / "model.onnx")
    parts = parts_onnx(params, d, e, question_relation)
    rows = np.random.default_rng(0).normal(0, 0.1, size=(512, int(meta["input_dim"]))).astype(np.float32)
    if question_relation:  # the last block is the product of the question and relation blocks
        rows[:, 4 * d + 2 * e :] = rows[:, :d] * rows[:, 2 * d : 3 * d]
    session = ort.InferenceSession(str(directory / "model.onnx"), providers=["CPUExecutionProvider"])
    (full,) = session.run(["scores"], {"features": rows})
    check_parts(parts, np.asarray(full).reshape(-1), rows, d, e, tolerance, question_relation)
    target = directory / PARTS_FILE
    tmp = directory / f".{PARTS_FILE}.tmp-{os.getpid()}"
    tmp.write_bytes(parts)
    os.replace(tmp, target)
    return target


def main(argv: Sequence[str] | None = None) -> int:
    names = list(sys.argv[1:] if argv is None else argv)
    if not names:
        print("usage: python -m kgqa.training.scorer_onnx KG [KG ...]", file=sys.stderr)
        return 2
    for name in names:
        try:
            print(add_parts(subgraphrag_model_dir(name)))
        except (OSError, ValueError, KeyError) as exc:
            print(f"kgqa: {name}: {exc}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
