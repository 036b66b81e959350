"""A KG's question-to-path scorer at query time: the fine-tuned MiniLM encoder (ONNX) and its chain vectors.

Trained by :mod:`kgqa.training.path_scorer` (``kgqa train all``); this side only reads it. It scores how well
each relation chain answers a question: the cosine of the masked question's vector and the chain's (the chain
as words, :func:`kgqa.core.relation_text.chain_text`), and a probability over the candidates given (a softmax
at the training temperature). Chains it never saw while training are embedded on first use and kept.
"""

from __future__ import annotations

import functools
import json
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from kgqa.core.chains import Chain, parse_chain_key
from kgqa.core.relation_text import chain_text
from kgqa.core.text import mask_topic
from kgqa.models.encoder import OnnxEncoder

META_FILE = "meta.json"  # written last by training: its presence means the scorer is complete
CHAINS_FILE = "chains.json"
VECTORS_FILE = "chains.npy"
COSINE_FLOOR = "cosine_floor"  # meta key: below it no chain is one the scorer recognises (0: none learned)
TOPIC_MASK = "[MASK]"  # a special token of the encoder's vocabulary: where the topic entity was
_MAX_CACHED = 200_000


_MASKED = "kgqamaskedtopic"  # not bracketed: a mask already put in stops mask_topic at its bracket rule


def scorer_query(question: str, topic_spans: Sequence[str]) -> str:
    """The question as the scorer reads it: lower case, each topic entity replaced by the mask token (the
    longest spans first, ties by their words, so that the same question always reads the same)."""
    text = question
    for span in sorted({s for s in topic_spans if s}, key=lambda s: (-len(s), s)):
        text = mask_topic(text, [span], _MASKED)
    return text.lower().replace(_MASKED, TOPIC_MASK)


def set_ranks_sgrag(directory: Path, ranks: bool) -> None:
    """Records whether sgrag ranks its chains with this scorer (``kgqa train all`` measures it)."""
    meta = json.loads((directory / META_FILE).read_text(encoding="utf-8"))
    meta["ranks_sgrag"] = ranks
    (directory / META_FILE).write_text(json.dumps(meta, indent=1), encoding="utf-8")


def ranks_sgrag(directory: Path) -> bool:
    """Whether sgrag ranks with the scorer in ``directory`` (False when there is none, or when ``kgqa train
    all`` has not decided it)."""
    try:
        return bool(json.loads((directory / META_FILE).read_text(encoding="utf-8")).get("ranks_sgrag", False))
    except (OSError, ValueError):
        return False


class PathScorer:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.meta = json.loads((directory / META_FILE).read_text(encoding="utf-8"))
        self.temperature = float(self.meta["config"]["temperature"])
        self.cosine_floor = float(self.meta.get(COSINE_FLOOR, 0.0))
        self.encoder = OnnxEncoder(directory)
        keys = json.loads((directory / CHAINS_FILE).read_text(encoding="utf-8"))
        vectors = np.load(directory / VECTORS_FILE)
        self._vectors: dict[Chain, np.ndarray] = {
            parse_chain_key(k): v for k, v in zip(keys, vectors, strict=True)
        }
        self._lock = threading.Lock()

    def chain_vectors(self, chains: Sequence[Chain]) -> np.ndarray:
        with self._lock:
            missing = [c for c in dict.fromkeys(chains) if c not in self._vectors]
        if missing:
            embedded = self.encoder.embed([chain_text(c) for c in missing])
            with self._lock:
                if len(self._vectors) < _MAX_CACHED:
                    self._vectors.update(zip(missing, embedded, strict=True))
                found = dict(zip(missing, embedded, strict=True))
        else:
            found = {}
        with self._lock:
            return (
                np.stack([self._vectors.get(c, found.get(c)) for c in chains]) if chains else np.zeros((0, 1))
            )

    def cosines(self, question: str, topic_spans: Sequence[str], chains: Sequence[Chain]) -> np.ndarray:
        if not chains:
            return np.zeros(0, dtype=np.float32)
        return self.chain_vectors(chains) @ self._query_vector(scorer_query(question, topic_spans))

    @functools.lru_cache(maxsize=64)  # noqa: B019 - one scorer per KG, kept for the process anyway
    def _query_vector(self, text: str) -> np.ndarray:
        """The masked question's vector: sgrag ranks each topic's chains against the same question."""
        return self.encoder.embed_one(text)

    def probabilities(self, cosines: np.ndarray) -> np.ndarray:
        """A softmax over the candidates at the training temperature: how sure the scorer is of each."""
        if cosines.size == 0:
            return cosines
        logits = cosines / self.temperature
        weights = np.exp(logits - logits.max())
        return weights / weights.sum()

    def rank(
        self, question: str, topic_spans: Sequence[str], chains: Sequence[Chain]
    ) -> list[tuple[Chain, float, float]]:
        """``(chain, cosine, probability)`` best first."""
        cosines = self.cosines(question, topic_spans, chains)
        probabilities = self.probabilities(cosines)
        order = np.argsort(-cosines, kind="stable")
        return [(chains[i], float(cosines[i]), float(probabilities[i])) for i in order]
