"""Query-text classifiers at query time: question -> the relation chain it walks (SG-RAG's template) and its
hop count and range (FRAG, SubgraphRAG's radius).

Light scikit-learn models (TF-IDF over word 1-3-grams and character 2-5-grams, then a linear SVM) that
``kgqa train all`` fits per KG on that KG's questions, labelled or synthesised from its relation paths
(:mod:`kgqa.training.question_classifiers`), and saves under ``<KGQA_HOME>/models/kgs/<kg>/classifiers/``.
A class is a chain key (``directed_by>|directed_by<``, :mod:`kgqa.core.chains`): the classes are the chains
the KG's questions use, which is what sgrag's templates are. This module only loads and applies them.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import joblib
import numpy as np
import sklearn
from kgqa.core.chains import Chain, parse_chain_key
from kgqa.core.text import BRACKET
from sklearn.pipeline import FeatureUnion
from sklearn.preprocessing import normalize
from sklearn.svm import LinearSVC

FORMAT_VERSION = 2
MODEL_FILE = "classifiers.joblib"
METADATA_FILE = "metadata.json"  # written last by training: its presence means the models are complete
PLACEHOLDER = "_ent_"
SIMPLE_MAX_HOPS = 2  # FRAG: simple = at most 2 hops, complex otherwise
RECENT_PREDICTIONS = 64  # questions whose chain prediction is kept (a server answers a few at a time)

HopRange = Literal["simple", "complex"]

_SPACES = re.compile(r"\s+")


def mask_question(question: str, entity_texts: Iterable[str] = ()) -> str:
    """The question as the classifiers see it: lowercase, topic entities replaced by a placeholder.

    ``[bracketed]`` spans are masked when present; otherwise each of ``entity_texts`` (linked spans or
    names, longest first) is masked case-insensitively where it occurs. Unmasked text is classified as is.
    """
    if BRACKET.search(question):
        text = BRACKET.sub(f" {PLACEHOLDER} ", question)
    else:
        text = question
        for entity in sorted({e.strip() for e in entity_texts if e and e.strip()}, key=len, reverse=True):
            text = re.sub(re.escape(entity), f" {PLACEHOLDER} ", text, flags=re.IGNORECASE)
    return _SPACES.sub(" ", text.lower()).strip()


def hop_range(hops: int) -> HopRange:
    return "simple" if hops <= SIMPLE_MAX_HOPS else "complex"


@dataclass(frozen=True)
class ChainPrediction:
    chain: str  # the chain key of the best class
    steps: Chain
    score: float  # linear-SVM margin of the chosen chain
    ranked: list[tuple[str, float]]  # the best few chains with their margins, best first
    # the masked question's cosine to the nearest wording the classifiers learned (None: saved without them)
    familiar: float | None = None

    @property
    def hops(self) -> int:
        return len(self.steps)


# A hop count the classifier predicts with a smaller SVM margin, for a wording unlike any it learned from,
# is a guess. On people's wording (our free-form MetaQA set's tune part, 146 questions) it was right for
# 53 % of the questions whose wording is unlike the learned ones (cosine < 0.6: 120 of them), for all 17 at
# 0.8 or above; among the unlike ones, for 71 % at the margin or above and 42 % below it. The KG's own
# questions are worded as it learned, and a fifth of them fall below the margin, all rightly.
SURE_HOP_MARGIN = 1.0
FAMILIAR_WORDING = 0.8  # the cosine (TF-IDF) of the masked question to its nearest learned wording


@dataclass(frozen=True)
class HopPrediction:
    hops: int
    hop_range: HopRange  # FRAG: "simple" (<= 2 hops) or "complex"
    score: float
    familiar: float = 0.0  # the cosine of the masked question to the nearest wording the classifier learned

    def sure_hops(self, margin: float | None = SURE_HOP_MARGIN) -> int | None:
        """The hop count when the wording is one the classifier learned or its margin is at least
        ``margin`` (None: always), else None."""
        if margin is None or self.score >= margin or self.familiar >= FAMILIAR_WORDING:
            return self.hops
        return None


@dataclass
class QuestionClassifiers:
    """The fitted chain and hop models (one shared TF-IDF featurizer), with their saved metadata."""

    features: FeatureUnion
    chain_svm: LinearSVC
    hop_svm: LinearSVC | OneClass
    metadata: dict[str, Any] = field(default_factory=dict)
    # the masked wordings learned from, as unit rows of the features (None: classifiers saved before them)
    known: Any = None
    # the last few questions' chain predictions: ``auto`` plans its route from one and sgrag then walks it,
    # so the question is classified once
    _recent: dict[tuple[str, tuple[str, ...], int], ChainPrediction] = field(
        default_factory=dict, repr=False, compare=False
    )
    _recent_lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)
    _known_by_word: Any = field(default=None, repr=False, compare=False)

    @property
    def chains(self) -> list[str]:
        """The chain keys the classifier knows: sgrag's templates for this KG."""
        return [str(c) for c in self.chain_svm.classes_]

    def predict_chain(self, question: str, entity_texts: Iterable[str] = (), top: int = 5) -> ChainPrediction:
        texts = tuple(entity_texts)
        key = (question, texts, top)
        with self._recent_lock:
            known = self._recent.get(key)
        if known is not None:
            return known
        prediction = self.predict_chains([question], [list(texts)], top=top)[0]
        with self._recent_lock:
            if len(self._recent) >= RECENT_PREDICTIONS:
                self._recent.pop(next(iter(self._recent)))
            self._recent[key] = prediction
        return prediction

    def predict_chains(
        self, questions: Sequence[str], entity_texts: Sequence[Iterable[str]] | None = None, top: int = 5
    ) -> list[ChainPrediction]:
        texts = _masked(questions, entity_texts)
        matrix = self.features.transform(texts)
        margins = np.asarray(self.chain_svm.decision_function(matrix))
        familiar: Sequence[float | None] = (
            [None] * len(texts)
            if self.known is None or self.known.shape[0] == 0
            else self.familiarity(matrix)
        )
        classes = self.chains
        out = []
        for row, near in zip(margins.reshape(len(texts), -1), familiar, strict=True):
            if len(classes) == 2 and row.shape[0] == 1:  # a binary SVM gives one margin, for classes[1]
                row = np.array([-row[0], row[0]])
            order = np.argsort(-row)[:top]
            ranked = [(classes[i], float(row[i])) for i in order]
            known = None if near is None else float(near)
            out.append(
                ChainPrediction(ranked[0][0], parse_chain_key(ranked[0][0]), ranked[0][1], ranked, known)
            )
        return out

    def predict_hops(self, question: str, entity_texts: Iterable[str] = ()) -> HopPrediction:
        return self.predict_hops_many([question], [list(entity_texts)])[0]

    def predict_hops_many(
        self, questions: Sequence[str], entity_texts: Sequence[Iterable[str]] | None = None
    ) -> list[HopPrediction]:
        texts = _masked(questions, entity_texts)
        classes = [int(c) for c in self.hop_svm.classes_]
        if len(classes) == 1:
            return [HopPrediction(classes[0], hop_range(classes[0]), 1.0, 1.0) for _ in texts]
        matrix = self.features.transform(texts)
        familiar = self.familiarity(matrix)
        margins = np.asarray(self.hop_svm.decision_function(matrix)).reshape(len(texts), -1)
        out = []
        for row, known in zip(margins, familiar, strict=True):
            if len(classes) == 2:
                best = int(row[0] > 0)
                score = abs(float(row[0]))
            else:
                best = int(np.argmax(row))
                score = float(row[best])
            out.append(HopPrediction(classes[best], hop_range(classes[best]), score, float(known)))
        return out

    def familiarity(self, matrix: Any) -> np.ndarray:
        """Per row of featurised questions, the cosine to the nearest learned wording (0 when unknown)."""
        if self.known is None or self.known.shape[0] == 0:
            return np.zeros(matrix.shape[0])
        if self._known_by_word is None:  # transposed once: the product per question is then a third as long
            self._known_by_word = self.known.T.tocsr()
        return np.asarray((normalize(matrix) @ self._known_by_word).toarray().max(axis=1)).ravel()


class OneClass:
    """The hop model of a KG whose questions all have one length (a LinearSVC needs two classes)."""

    def __init__(self, value: int) -> None:
        self.classes_ = np.array([value])

    def decision_function(self, matrix: Any) -> np.ndarray:
        return np.ones((matrix.shape[0], 1))


def _masked(questions: Sequence[str], entity_texts: Sequence[Iterable[str]] | None) -> list[str]:
    if entity_texts is None:
        return [mask_question(q) for q in questions]
    return [mask_question(q, e) for q, e in zip(questions, entity_texts, strict=True)]


def load_question_classifiers(directory: Path) -> QuestionClassifiers | None:
    """The saved classifiers, or None when absent, incomplete or of another format/sklearn version."""
    try:
        metadata = json.loads((directory / METADATA_FILE).read_text(encoding="utf-8"))
        if (
            metadata.get("format_version") != FORMAT_VERSION
            or metadata.get("sklearn_version") != sklearn.__version__
        ):
            return None
        parts = joblib.load(directory / MODEL_FILE)
        return QuestionClassifiers(
            parts["features"], parts["chain"], parts["hops"], metadata, known=parts.get("known")
        )
    except (OSError, ValueError, EOFError, KeyError, TypeError, AttributeError, ImportError) as exc:
        del exc
        return None
    except Exception:  # noqa: BLE001 - a corrupt pickle raises whatever its bytes make it raise
        return None
