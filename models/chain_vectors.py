"""A KG's relation chains in words and their vectors by its sentence encoder, stored ahead of the questions.

FRAG compares every chain of the paths it finds with the question. A chain's words are the same whichever
question asks, but embedding a few hundred new ones took half a second of a question's time, so ``kgqa train
all`` (FRAG's part) embeds the KG's one- and two-step chains once, and query time reads them from here. The
vectors are keyed by the encoder that made them: a KG loaded again with another encoder embeds its chains when
asked, until it is trained again.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from kgqa.models.kg_models import write_json_atomically

TEXTS_FILE = "chain_texts.json"  # written last: its presence means the vectors beside it are complete
VECTORS_FILE = "chain_vectors.npy"


@dataclass(frozen=True)
class ChainVectors:
    model: str | None  # the encoder that made them (None: the default one)
    texts: list[str]
    vectors: np.ndarray  # one L2-normalised row per text


def save_chain_vectors(directory: Path, vectors: ChainVectors) -> None:
    """Writes the vectors, then the texts that name their rows: a reader sees the old pair or the new one."""
    if len(vectors.texts) != len(vectors.vectors):
        raise ValueError(f"{len(vectors.texts)} texts for {len(vectors.vectors)} vectors")
    directory.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{VECTORS_FILE}-", suffix=".npy", dir=directory)
    try:
        with os.fdopen(handle, "wb") as out:
            np.save(out, np.asarray(vectors.vectors, dtype=np.float32))
        (directory / TEXTS_FILE).unlink(missing_ok=True)  # no texts beside vectors they do not name
        os.replace(temporary, directory / VECTORS_FILE)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    write_json_atomically(directory / TEXTS_FILE, {"model": vectors.model, "texts": list(vectors.texts)})


def load_chain_vectors(directory: Path) -> ChainVectors | None:
    """The stored vectors, or None when there are none or they do not match their texts."""
    try:
        meta = json.loads((directory / TEXTS_FILE).read_text(encoding="utf-8"))
        matrix = np.load(directory / VECTORS_FILE)
    except (OSError, ValueError):
        return None
    texts = meta.get("texts")
    if not isinstance(texts, list) or matrix.ndim != 2 or len(texts) != len(matrix):
        return None
    model = meta.get("model")
    return ChainVectors(str(model) if model is not None else None, [str(t) for t in texts], matrix)


def chain_vectors_stamp(directory: Path) -> float:
    """When the stored vectors were last written (-1: there are none)."""
    try:
        return (directory / TEXTS_FILE).stat().st_mtime
    except OSError:
        return -1.0
