"""The sentence encoder's ONNX graph written from its safetensors weights, without torch or transformers.

Tracing the model with ``torch.onnx.export`` would make every user install torch (several GB) just to get a
~90 MB file. BERT's forward pass is small and fixed, so this module writes the same graph directly: weights
from ``model.safetensors`` (``safetensors.numpy``), shapes and constants from ``config.json``, nodes with
``onnx.helper``. Runtime imports: numpy, onnx, safetensors, the standard library.

The result has the interface both consumers read (see :mod:`kgqa.models.encoder`): inputs ``input_ids``,
``attention_mask``, ``token_type_ids`` (int64 ``[batch, sequence]``), output ``last_hidden_state`` (float32
``[batch, sequence, hidden]``), no pooling, opset 17 and IR version 8 so that ONNX Runtime Java 1.20 in the
database loads it. Only configurations this code implements are accepted; anything else is a ValueError
naming the config field, rather than a model that silently computes something else.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
# ONNX Runtime 1.20 (the Java runtime in the database) reads IR versions up to 10; opset 17 belongs to IR 8.
IR_VERSION = 8
# What transformers adds to the scores of padded keys (torch.finfo(torch.float32).min).
_MASK_VALUE = float(np.finfo(np.float32).min)
# Files whose bytes determine the numbers: a build from other bytes is not current.
_FINGERPRINT_FILES = (
    "config.json",
    "model.safetensors",
    "vocab.txt",
    "tokenizer_config.json",
    "sentence_bert_config.json",
    "1_Pooling/config.json",
)


def source_fingerprint(source: Path) -> str:
    """sha256 over the files that determine the numbers: the idempotence key stored in ``encoder.json``."""
    digest = hashlib.sha256()
    for name in _FINGERPRINT_FILES:
        path = Path(source) / name
        digest.update(name.encode())
        if path.exists():
            with path.open("rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    digest.update(block)
    return digest.hexdigest()


@dataclass(frozen=True)
class BertConfig:
    """The part of ``config.json`` the graph depends on, validated up front."""

    hidden_size: int
    num_attention_heads: int
    num_hidden_layers: int
    intermediate_size: int
    layer_norm_eps: float
    vocab_size: int | None
    max_position_embeddings: int | None
    type_vocab_size: int | None

    @property
    def head_size(self) -> int:
        return self.hidden_size // self.num_attention_heads


def _int_field(raw: Mapping[str, object], name: str) -> int:
    value = raw.get(name)
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"config.json: {name} must be a positive integer, got {value!r}")
    return value


def _optional_int_field(raw: Mapping[str, object], name: str) -> int | None:
    return _int_field(raw, name) if name in raw else None


def read_config(path: Path) -> BertConfig:
    """Reads ``config.json`` and refuses what the graph below does not implement (ValueError, one line)."""
    raw = json.loads(Path(path).read_text())
    if not isinstance(raw, dict):
        raise ValueError(f"config.json: expected a JSON object, got {type(raw).__name__}")
    model_type = raw.get("model_type", "bert")
    if model_type != "bert":
        raise ValueError(f"config.json: model_type {model_type!r} is not supported (only 'bert')")
    hidden_act = raw.get("hidden_act", "gelu")
    if hidden_act != "gelu":
        raise ValueError(f"config.json: hidden_act {hidden_act!r} is not supported (only 'gelu', exact erf)")
    position = raw.get("position_embedding_type", "absolute")
    if position != "absolute":
        raise ValueError(
            f"config.json: position_embedding_type {position!r} is not supported (only 'absolute')"
        )
    for flag in ("is_decoder", "add_cross_attention"):
        if raw.get(flag):
            raise ValueError(f"config.json: {flag} true is not supported (encoder-only BERT)")
    eps = raw.get("layer_norm_eps")
    if isinstance(eps, bool) or not isinstance(eps, int | float) or not 0 < eps < 1:
        raise ValueError(f"config.json: layer_norm_eps must be a number in (0, 1), got {eps!r}")
    config = BertConfig(
        hidden_size=_int_field(raw, "hidden_size"),
        num_attention_heads=_int_field(raw, "num_attention_heads"),
        num_hidden_layers=_int_field(raw, "num_hidden_layers"),
        intermediate_size=_int_field(raw, "intermediate_size"),
        layer_norm_eps=float(eps),
        vocab_size=_optional_int_field(raw, "vocab_size"),
        max_position_embeddings=_optional_int_field(raw, "max_position_embeddings"),
        type_vocab_size=_optional_int_field(raw, "type_vocab_size"),
    )
    if config.hidden_size % config.num_attention_heads:
        raise ValueError(
            f"config.json: hidden_size {config.hidden_size} is not a multiple of "
            f"num_attention_heads {config.num_attention_heads}"
        )
    return config


class _Weights:
    """The safetensors tensors by BertModel name, checked for shape as they are taken."""

    def __init__(self, path: Path) -> None:
        from safetensors.numpy import load_file

        tensors = load_file(str(path))
        # A task head's checkpoint (BertForX) stores the encoder under "bert."; BertModel has no prefix.
        if not any(k.startswith("embeddings.") for k in tensors) and any(
            k.startswith("bert.embeddings.") for k in tensors
        ):
            tensors = {k[len("bert.") :]: v for k, v in tensors.items() if k.startswith("bert.")}
        self._tensors = tensors

    def get(self, name: str, shape: tuple[int | None, ...]) -> np.ndarray:
        if name not in self._tensors:
            raise ValueError(f"model.safetensors: tensor {name} is missing")
        array = self._tensors[name]
        if array.ndim != len(shape) or any(
            w is not None and w != a for w, a in zip(shape, array.shape, strict=True)
        ):
            raise ValueError(
                f"model.safetensors: tensor {name} has shape {list(array.shape)}, config.json implies "
                f"{[d if d is not None else '?' for d in shape]}"
            )
        # The graph computes in float32; an fp16 checkpoint is widened here rather than in every session.
        return np.ascontiguousarray(array, dtype=np.float32)


class _Graph:
    """Collects nodes and initializers; names are unique by construction (prefix per layer)."""

    def __init__(self) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self._names: set[str] = set()

    def const(self, name: str, value: np.ndarray) -> str:
        if name in self._names:
            raise AssertionError(f"duplicate initializer {name}")
        self._names.add(name)
        self.initializers.append(numpy_helper.from_array(value, name))
        return name

    def node(self, op: str, inputs: list[str], output: str, **attributes: object) -> str:
        self.nodes.append(helper.make_node(op, inputs, [output], name=output, **attributes))
        return output

    def linear(self, x: str, weight: np.ndarray, bias: np.ndarray, name: str) -> str:
        """``x @ weight.T + bias`` as MatMul + Add: the torch Linear layout, transposed once here."""
        w = self.const(f"{name}.weight_t", np.ascontiguousarray(weight.T))
        b = self.const(f"{name}.bias", bias)
        return self.node("Add", [self.node("MatMul", [x, w], f"{name}/MatMul"), b], f"{name}/Add")

    def layer_norm(
        self, x: str, weight: np.ndarray, bias: np.ndarray, eps: float, name: str, output: str | None = None
    ) -> str:
        w = self.const(f"{name}.weight", weight)
        b = self.const(f"{name}.bias", bias)
        return self.node("LayerNormalization", [x, w, b], output or f"{name}/LayerNorm", axis=-1, epsilon=eps)


def _scalar(value: float) -> np.ndarray:
    return np.array(value, dtype=np.float32)


def _ints(*values: int) -> np.ndarray:
    return np.array(values, dtype=np.int64)


def build_model(source: Path) -> onnx.ModelProto:
    """The BERT encoder of ``source`` (config.json + model.safetensors) as an in-memory ONNX model."""
    source = Path(source)
    cfg = read_config(source / "config.json")
    weights = _Weights(source / "model.safetensors")
    h, heads, d, ffn = cfg.hidden_size, cfg.num_attention_heads, cfg.head_size, cfg.intermediate_size
    g = _Graph()

    # Embeddings: word + position (0..sequence-1) + token type, then LayerNorm.
    word = g.const(
        "embeddings.word_embeddings", weights.get("embeddings.word_embeddings.weight", (cfg.vocab_size, h))
    )
    position = g.const(
        "embeddings.position_embeddings",
        weights.get("embeddings.position_embeddings.weight", (cfg.max_position_embeddings, h)),
    )
    token_type = g.const(
        "embeddings.token_type_embeddings",
        weights.get("embeddings.token_type_embeddings.weight", (cfg.type_vocab_size, h)),
    )
    zero_1d = g.const("const.zero_1d", _ints(0))
    # Shape(start=1, end=2) is [sequence]; Slice of the table's first rows is Gather(position, 0..seq-1).
    seq_len = g.node("Shape", ["input_ids"], "embeddings/sequence_length", start=1, end=2)
    positions = g.node("Slice", [position, zero_1d, seq_len, zero_1d], "embeddings/position_rows")
    x = g.node("Gather", [word, "input_ids"], "embeddings/word")
    x = g.node(
        "Add",
        [x, g.node("Gather", [token_type, "token_type_ids"], "embeddings/token_type")],
        "embeddings/add_type",
    )
    x = g.node("Add", [x, positions], "embeddings/add_position")
    x = g.layer_norm(
        x,
        weights.get("embeddings.LayerNorm.weight", (h,)),
        weights.get("embeddings.LayerNorm.bias", (h,)),
        cfg.layer_norm_eps,
        "embeddings",
    )

    one = g.const("const.one", _scalar(1.0))
    half = g.const("const.half", _scalar(0.5))
    sqrt2 = g.const("const.sqrt2", _scalar(math.sqrt(2.0)))
    scale = g.const("const.attention_scale", _scalar(1.0 / math.sqrt(d)))
    split_heads = g.const("const.split_heads", _ints(0, 0, heads, d))  # 0 = keep batch / sequence
    merge_heads = g.const("const.merge_heads", _ints(0, 0, h))

    # Additive mask [batch, 1, 1, sequence]: 0 for real tokens, float32 min for padding (as transformers),
    # computed once and broadcast over heads and query positions in every layer.
    mask = g.node("Unsqueeze", ["attention_mask", g.const("const.axes_1_2", _ints(1, 2))], "mask/unsqueeze")
    mask = g.node("Cast", [mask], "mask/float", to=TensorProto.FLOAT)
    mask = g.node("Sub", [one, mask], "mask/inverted")
    mask = g.node("Mul", [mask, g.const("const.mask_value", _scalar(_MASK_VALUE))], "mask/additive")

    for i in range(cfg.num_hidden_layers):
        p = f"encoder.layer.{i}"

        def w(name: str, shape: tuple[int, ...], p: str = p) -> np.ndarray:
            return weights.get(f"{p}.{name}", shape)

        # Self-attention: heads as [batch, heads, sequence, head_size]; K transposed to [.., head_size, seq].
        qkv = {}
        for part, perm in (("query", (0, 2, 1, 3)), ("key", (0, 2, 3, 1)), ("value", (0, 2, 1, 3))):
            y = g.linear(
                x,
                w(f"attention.self.{part}.weight", (h, h)),
                w(f"attention.self.{part}.bias", (h,)),
                f"{p}.attention.self.{part}",
            )
            y = g.node("Reshape", [y, split_heads], f"{p}.attention.self.{part}/split_heads")
            qkv[part] = g.node("Transpose", [y], f"{p}.attention.self.{part}/transpose", perm=list(perm))
        scores = g.node("MatMul", [qkv["query"], qkv["key"]], f"{p}.attention.self/scores")
        scores = g.node("Mul", [scores, scale], f"{p}.attention.self/scaled")
        scores = g.node("Add", [scores, mask], f"{p}.attention.self/masked")
        probs = g.node("Softmax", [scores], f"{p}.attention.self/softmax", axis=-1)
        context = g.node("MatMul", [probs, qkv["value"]], f"{p}.attention.self/context")
        context = g.node("Transpose", [context], f"{p}.attention.self/merge_transpose", perm=[0, 2, 1, 3])
        context = g.node("Reshape", [context, merge_heads], f"{p}.attention.self/merge_heads")
        y = g.linear(
            context,
            w("attention.output.dense.weight", (h, h)),
            w("attention.output.dense.bias", (h,)),
            f"{p}.attention.output.dense",
        )
        y = g.node("Add", [y, x], f"{p}.attention.output/residual")
        x = g.layer_norm(
            y,
            w("attention.output.LayerNorm.weight", (h,)),
            w("attention.output.LayerNorm.bias", (h,)),
            cfg.layer_norm_eps,
            f"{p}.attention.output",
        )

        # Feed-forward with exact GELU, x * 0.5 * (1 + erf(x / sqrt 2)), in the node order ONNX Runtime fuses.
        y = g.linear(
            x,
            w("intermediate.dense.weight", (ffn, h)),
            w("intermediate.dense.bias", (ffn,)),
            f"{p}.intermediate.dense",
        )
        erf = g.node(
            "Erf", [g.node("Div", [y, sqrt2], f"{p}.intermediate.gelu/div")], f"{p}.intermediate.gelu/erf"
        )
        gelu = g.node(
            "Mul", [y, g.node("Add", [erf, one], f"{p}.intermediate.gelu/add")], f"{p}.intermediate.gelu/mul"
        )
        gelu = g.node("Mul", [gelu, half], f"{p}.intermediate.gelu/half")
        y = g.linear(
            gelu, w("output.dense.weight", (h, ffn)), w("output.dense.bias", (h,)), f"{p}.output.dense"
        )
        y = g.node("Add", [y, x], f"{p}.output/residual")
        last = i == cfg.num_hidden_layers - 1
        x = g.layer_norm(
            y,
            w("output.LayerNorm.weight", (h,)),
            w("output.LayerNorm.bias", (h,)),
            cfg.layer_norm_eps,
            f"{p}.output",
            output="last_hidden_state" if last else None,
        )

    dims = ["batch", "sequence"]
    inputs = [
        helper.make_tensor_value_info(name, TensorProto.INT64, dims)
        for name in ("input_ids", "attention_mask", "token_type_ids")
    ]
    outputs = [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, [*dims, h])]
    graph = helper.make_graph(g.nodes, "bert_encoder", inputs, outputs, initializer=g.initializers)
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_operatorsetid("", OPSET)],
        producer_name="kgqa.models.encoder_build",
        ir_version=IR_VERSION,
    )
    onnx.checker.check_model(model)
    return model


def build_encoder(source: Path, out: Path) -> None:
    """Writes ``out/model.onnx`` (the BERT encoder of ``source``) and copies ``out/vocab.txt``.

    Everything is validated and built in memory first, so a refused config leaves ``out`` untouched; the
    model file is written under a temporary name and renamed, so no reader sees half of it.
    """
    source, out = Path(source), Path(out)
    model = build_model(source)
    out.mkdir(parents=True, exist_ok=True)
    partial = out / f".model.onnx.{os.getpid()}.partial"
    try:
        onnx.save_model(model, str(partial))
        os.replace(partial, out / "model.onnx")
    finally:
        partial.unlink(missing_ok=True)
    shutil.copyfile(source / "vocab.txt", out / "vocab.txt")
