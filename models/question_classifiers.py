"""Query-text classifiers at query time: question -> MetaQA question type (SG-RAG), hop count and range
(FRAG, SubgraphRAG's radius).

Light scikit-learn models (TF-IDF over word 1-3-grams and character 2-5-grams, then a linear SVM) that
``kgqa train classifiers`` fits on MetaQA dev and the KB (:mod:`kgqa.training.question_classifiers`) and
saves under ``$KGQA_HOME/models/question_classifiers/``. This module only loads and applies them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import joblib
import numpy as np
import sklearn
from kgqa.core.metaqa import qtype_hops
from kgqa.core.text import BRACKET
from sklearn.pipeline import FeatureUnion
from sklearn.svm import LinearSVC

FORMAT_VERSION = 1
MODEL_FILE = "classifiers.joblib"
METADATA_FILE = "metadata.json"  # written last by training: its presence means the models are complete
PLACEHOLDER = "_ent_"
SIMPLE_MAX_HOPS = 2  # FRAG: simple = at most 2 hops, complex otherwise

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
class QtypePrediction:
    qtype: str
    hops: int
    score: float  # linear-SVM margin of the chosen type
    ranked: list[tuple[str, float]]  # the best few types with their margins, best first


@dataclass(frozen=True)
class HopPrediction:
    hops: int  # MetaQA-style exact hop count (1, 2 or 3)
    hop_range: HopRange  # FRAG: "simple" (<= 2 hops) or "complex"
    score: float


@dataclass
class QuestionClassifiers:
    """The fitted question-type and hop models (one shared TF-IDF featurizer), with their saved metadata."""

    features: FeatureUnion
    qtype_svm: LinearSVC
    hop_svm: LinearSVC
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def qtypes(self) -> list[str]:
        return [str(c) for c in self.qtype_svm.classes_]

    def predict_qtype(self, question: str, entity_texts: Iterable[str] = (), top: int = 5) -> QtypePrediction:
        return self.predict_qtypes([question], [list(entity_texts)], top=top)[0]

    def predict_qtypes(
        self, questions: Sequence[str], entity_texts: Sequence[Iterable[str]] | None = None, top: int = 5
    ) -> list[QtypePrediction]:
        texts = _masked(questions, entity_texts)
        margins = np.asarray(self.qtype_svm.decision_function(self.features.transform(texts)))
        classes = self.qtypes
        out = []
        for row in margins.reshape(len(texts), -1):
            order = np.argsort(-row)[:top]
            ranked = [(classes[i], float(row[i])) for i in order]
            out.append(QtypePrediction(ranked[0][0], qtype_hops(ranked[0][0]), ranked[0][1], ranked))
        return out

    def predict_hops(self, question: str, entity_texts: Iterable[str] = ()) -> HopPrediction:
        return self.predict_hops_many([question], [list(entity_texts)])[0]

    def predict_hops_many(
        self, questions: Sequence[str], entity_texts: Sequence[Iterable[str]] | None = None
    ) -> list[HopPrediction]:
        texts = _masked(questions, entity_texts)
        margins = np.asarray(self.hop_svm.decision_function(self.features.transform(texts)))
        margins = margins.reshape(len(texts), -1)
        classes = [int(c) for c in self.hop_svm.classes_]
        out = []
        for row in margins:
            best = int(np.argmax(row))
            out.append(HopPrediction(classes[best], hop_range(classes[best]), float(row[best])))
        return out


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
        return QuestionClassifiers(parts["features"], parts["qtype"], parts["hops"], metadata)
    except (OSError, ValueError, EOFError, KeyError, TypeError):
        return None
