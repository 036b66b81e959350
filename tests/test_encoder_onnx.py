"""The installed ONNX encoder (Python side) against sentence-transformers: same tokens, same vectors.

`kgqa ask` and the loader embed with OnnxEncoder (onnxruntime + tokenizers, no torch) on the encoder built
into the kgqa home; published embeddings of all-MiniLM-L6-v2 come from sentence-transformers. These must
agree, or the cosine scores of every retriever drift. (tests/test_encoder_build.py checks the builder.)
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import SHARED_DATA, TEST_HOME

pytest.importorskip("onnxruntime")
pytest.importorskip("tokenizers")

TRICKY = [
    "who directed Kismet",
    "what movies did [Lee Pace] star in?",
    "Amélie",
    "Café Zürich — naïve façade",
    "İstanbul",
    "ΣΊΣΥΦΟΣ",
    "straße",
    "location.country.languages_spoken",
    "m.0dgw9r",
    "中文字符 test",
    "emoji 🎬 film",
    "",
    "   ",
    "tabs\tand\nnewlines",
    "non\u00a0breaking",
    "zero\u200bwidth",
    "$100 + 50% = <great>",
    "O'Brien's",
    "the quick brown fox jumps over the lazy dog " * 40,  # longer than 256 tokens: truncated the same way
]


def metaqa_names(limit: int = 1000) -> list[str]:
    """`limit` entity names spread evenly over MetaQA's sorted entity list (deterministic)."""
    kb = SHARED_DATA / "metaqa" / "kb_dedup.txt"
    if not kb.exists():
        pytest.skip(f"MetaQA KB not found at {kb} (set KGQA_SHARED_DATA)")
    names: set[str] = set()
    with kb.open(encoding="utf-8") as fh:
        for line in fh:
            parts = line.rstrip("\n").split("|")
            if len(parts) == 3:
                names.add(parts[0])
                names.add(parts[2])
    ordered = sorted(names)
    step = max(1, len(ordered) // limit)
    return ordered[::step][:limit]


@pytest.fixture(scope="module")
def export_dir() -> Path:
    from kgqa.models.encoder import ensure_encoder

    # The test home keeps the build between sessions; the in-DB test reads the same one.
    return ensure_encoder(TEST_HOME)


@pytest.fixture(scope="module")
def reference():  # type: ignore[no-untyped-def]
    import os

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from kgqa.models.encoder import source_dir
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(source_dir()), device="cpu")


def test_build_is_complete_and_idempotent(export_dir: Path) -> None:
    from kgqa.models.encoder import ensure_encoder

    meta = json.loads((export_dir / "encoder.json").read_text())
    assert meta["dimension"] == 384 and meta["max_seq_length"] == 256
    assert meta["inputs"] == ["input_ids", "attention_mask", "token_type_ids"]
    assert meta["output"] == "last_hidden_state"
    before = (export_dir / "model.onnx").stat().st_mtime_ns
    assert ensure_encoder(export_dir.parent.parent.parent) == export_dir
    assert (export_dir / "model.onnx").stat().st_mtime_ns == before, "a second call must not build again"


def test_tokens_match_sentence_transformers(export_dir: Path, reference) -> None:  # type: ignore[no-untyped-def]
    from kgqa.models.encoder import OnnxEncoder

    encoder = OnnxEncoder(export_dir)
    for text in TRICKY:
        expected = reference.tokenizer(text, truncation=True, max_length=reference.max_seq_length)[
            "input_ids"
        ]
        assert encoder.tokenize(text) == expected, text


def test_vectors_match_sentence_transformers(export_dir: Path, reference) -> None:  # type: ignore[no-untyped-def]
    from kgqa.models.encoder import OnnxEncoder

    texts = TRICKY + metaqa_names(1000)
    ours = OnnxEncoder(export_dir).embed(texts)
    theirs = reference.encode(texts, normalize_embeddings=True, convert_to_numpy=True, batch_size=128)
    assert ours.shape == theirs.shape == (len(texts), 384)
    assert ours.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    cosines = np.sum(ours * theirs, axis=1)
    print(
        f"OnnxEncoder vs sentence-transformers on {len(texts)} texts: "
        f"min cosine {cosines.min():.7f}, mean {cosines.mean():.7f}"
    )
    assert cosines.min() >= 0.999
    assert np.abs(ours - theirs).max() < 1e-3


def test_batching_does_not_change_results(export_dir: Path) -> None:
    from kgqa.models.encoder import OnnxEncoder

    encoder = OnnxEncoder(export_dir)
    texts = ["a", "a much longer sentence about the films of William Dieterle", "Kismet"]
    together = encoder.embed(texts)
    alone = np.stack([encoder.embed_one(t) for t in texts])
    np.testing.assert_allclose(together, alone, atol=1e-5)
    assert encoder.embed([]).shape == (0, 384)


def test_the_encoder_runs_on_cuda_when_onnx_runtime_offers_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import onnxruntime as ort
    from kgqa.models.encoder import execution_providers

    assert execution_providers() == ["CPUExecutionProvider"]  # this machine has no GPU
    offered = ["TensorrtExecutionProvider", "CUDAExecutionProvider", "CPUExecutionProvider"]
    monkeypatch.setattr(ort, "get_available_providers", lambda: offered)
    assert execution_providers() == ["CUDAExecutionProvider", "CPUExecutionProvider"]
