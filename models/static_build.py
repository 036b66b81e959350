"""The fast encoder: a static embedding distilled from all-MiniLM-L6-v2 with ``model2vec``.

A static model is one vector per vocabulary token; a text's embedding is the mean of its tokens' rows,
L2-normalised. Embedding is then a tokenisation and a table lookup, with no transformer, which is what
makes a million entity names take seconds instead of most of an hour. The price is context: "the godfather"
is the mean of "the" and "godfather" (bench/embedding/fast_path.py measures what that costs on MetaQA).

Distillation (``model2vec.distill``) runs every token of the packaged model's vocabulary through the
transformer once (about 2 minutes on 2 cores), keeps 384 dimensions (PCA without reduction, so the vector
indexes and every 384-d consumer still fit) and weights rows by token frequency (SIF). It needs torch and
transformers, the ``train`` extra; using the result needs only ``tokenizers``, ``safetensors`` and numpy.

The build writes ``<KGQA_HOME>/models/encoder/all-MiniLM-L6-v2-static/``: model2vec's own files
(``model.safetensors`` with one float32 tensor ``embeddings`` [tokens, 384], ``tokenizer.json``,
``config.json``), so ``model2vec.StaticModel.from_pretrained`` loads it; ``vocab.txt``, the tokenizer's
tokens in its id order (model2vec drops BERT's ``[unusedN]``, ``[CLS]``, ``[SEP]`` and ``[MASK]``, so the
ids are not BERT's), for the database's Java WordPiece; and ``encoder.json``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np

# What distillation is asked for; part of encoder.json, so a change of recipe is a rebuild.
DISTILL_PARAMS: dict[str, Any] = {
    "pca_dims": 384,
    "sif_coefficient": 1e-4,
    "token_remove_pattern": r"\[unused\d+\]",
    "quantize_to": "float32",
    "pooling": "mean",
}
TENSOR = "embeddings"


def distill_static(source: Path, out: Path) -> dict[str, Any]:
    """Distils ``source`` (a sentence-transformers directory) into ``out``; what ``encoder.json`` needs to
    know about the tokenizer (max length, character cut, special tokens)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    try:
        from model2vec.distill import distill
    except ImportError as missing:
        from kgqa.core.errors import KgqaError

        raise KgqaError(
            f"building the fast encoder needs model2vec's distillation ({missing.name} is missing): "
            "pip install 'kgqa[train]'"
        ) from None
    model = distill(str(source), device="cpu", **DISTILL_PARAMS)
    if model.weights is not None or model.token_mapping is not None or not model.normalize:
        # The readers (StaticEncoder, the Java StaticEmbedding) implement mean + normalise of plain rows.
        raise ValueError(
            "model2vec returned a weighted, quantised or unnormalised model; readers expect none"
        )
    model.save_pretrained(str(out))
    tokenizer = json.loads((out / "tokenizer.json").read_text(encoding="utf-8"))
    spec = tokenizer.get("model") or {}
    if spec.get("type") != "WordPiece" or spec.get("continuing_subword_prefix") != "##":
        raise ValueError(
            f"the distilled tokenizer is {spec.get('type')!r}, the readers implement WordPiece '##'"
        )
    normalizer = tokenizer.get("normalizer") or {}
    if normalizer.get("type") != "BertNormalizer" or tokenizer.get("post_processor") is not None:
        raise ValueError("the distilled tokenizer's normalizer or post-processor is not BERT's plain one")
    vocab = sorted(spec["vocab"].items(), key=lambda item: item[1])
    if [i for _t, i in vocab] != list(range(len(vocab))):
        raise ValueError("the distilled tokenizer's ids are not 0..n-1")
    table = np.asarray(model.embedding)
    if table.shape != (len(vocab), DISTILL_PARAMS["pca_dims"]) or table.dtype != np.float32:
        raise ValueError(
            f"distilled table is {table.shape} {table.dtype}, expected ({len(vocab)}, 384) float32"
        )
    # One token per line, line number = id: the format WordPieceTokenizer.fromVocabFile reads. No BERT
    # token contains a line break.
    (out / "vocab.txt").write_text("".join(f"{token}\n" for token, _i in vocab), encoding="utf-8")
    lowercase = bool(normalizer.get("lowercase", True))
    strip = normalizer.get("strip_accents")
    return {
        "tokens": len(vocab),
        "max_length": int(model.max_length or 512),
        # model2vec cuts a text to max_length x the median token length (in characters) before tokenising.
        "max_chars": int(model.max_length or 512) * int(model.median_token_length),
        "do_lower_case": lowercase,
        "strip_accents": lowercase if strip is None else bool(strip),
        "tokenize_chinese_chars": bool(normalizer.get("handle_chinese_chars", True)),
        "clean_text": bool(normalizer.get("clean_text", True)),
        "unk_token": spec.get("unk_token", "[UNK]"),
        "max_input_chars_per_word": int(spec.get("max_input_chars_per_word", 100)),
        # Matched whole in the raw text, before normalisation, as tokenizers does with its added tokens.
        "added_tokens": [t["content"] for t in tokenizer.get("added_tokens") or []],
        "model2vec": _model2vec_version(),
    }


def _model2vec_version() -> str:
    from importlib.metadata import version

    return version("model2vec")
