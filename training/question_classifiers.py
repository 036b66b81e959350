"""Training of the query-text classifiers for one KG: question -> relation chain (SG-RAG's template) and
hop count (FRAG, SubgraphRAG's radius). The models themselves are :mod:`kgqa.models.question_classifiers`.

They are fitted in seconds to minutes on the KG's questions (:mod:`kgqa.training.questions`: labelled ones
when the KG has them, and questions synthesised from its relation paths):

1. Every question becomes a pattern by masking its topic entity; each distinct (pattern, chain) is used once
   masked and, up to ``fills`` times, as questions with their entity left in (so the model also copes when
   the entity could not be masked).
2. Chains that fewer than ``min_examples`` questions use are not classes: a template nobody asks for is
   noise. At most ``max_chains`` chains are kept, the most used first.
3. Honest accuracy: the ``validation`` questions (wordings no training question has) are scored with a
   first fit; the saved model is then refitted on every question.
"""

from __future__ import annotations

import json
import os
import random
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import joblib
import numpy as np
import sklearn
from kgqa.core.chains import chain_key
from kgqa.models.question_classifiers import (
    FORMAT_VERSION,
    METADATA_FILE,
    MODEL_FILE,
    PLACEHOLDER,
    OneClass,
    QuestionClassifiers,
    hop_range,
    mask_question,
)
from kgqa.training.questions import LabelledQuestion
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.pipeline import FeatureUnion
from sklearn.preprocessing import normalize
from sklearn.svm import LinearSVC

DEFAULT_SEED = 13


def _features() -> FeatureUnion:
    return FeatureUnion(
        [
            (
                "words",
                TfidfVectorizer(
                    analyzer="word", ngram_range=(1, 3), sublinear_tf=True, token_pattern=r"(?u)\b\w+\b|'"
                ),
            ),
            ("chars", TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 5), sublinear_tf=True, min_df=2)),
        ]
    )


def _spans(q: LabelledQuestion) -> list[str]:
    return [s for s in q.topic_spans if s]


def _examples(
    questions: Sequence[LabelledQuestion], keep: set[str], fills: int, rng: random.Random
) -> tuple[list[str], list[str]]:
    """Each distinct masked pattern once, and up to ``fills`` of its questions with the entity left in."""
    raw: dict[tuple[str, str], list[str]] = defaultdict(list)
    for q in questions:
        if q.chain is None:
            continue
        label = chain_key(q.chain)
        if label not in keep:
            continue
        raw[(mask_question(q.text, _spans(q)), label)].append(q.text.lower())
    texts: list[str] = []
    labels: list[str] = []
    for (pattern, label), originals in sorted(raw.items()):
        texts.append(pattern)
        labels.append(label)
        unique = sorted(set(originals))
        for text in rng.sample(unique, min(fills, len(unique))):
            if text != pattern:
                texts.append(text)
                labels.append(label)
    return texts, labels


def _fit(texts: Sequence[str], labels: Sequence[str], seed: int) -> tuple[FeatureUnion, LinearSVC, LinearSVC]:
    features = _features()
    matrix = features.fit_transform(texts)
    chain_svm = LinearSVC(C=1.0, random_state=seed).fit(matrix, labels)
    hops = [label.count("|") + 1 for label in labels]
    hop_svm = (
        LinearSVC(C=1.0, random_state=seed).fit(matrix, hops) if len(set(hops)) > 1 else OneClass(hops[0])
    )
    return features, chain_svm, hop_svm


def _score(models: QuestionClassifiers, questions: Sequence[LabelledQuestion]) -> dict[str, Any]:
    """Per-question accuracy, topic masked by its span (as a linked question is) and not masked at all."""
    rows = [q for q in questions if q.chain is not None]
    if not rows:
        return {"questions": 0}
    result: dict[str, Any] = {"questions": len(rows)}
    for name, spans in (("masked", [_spans(q) for q in rows]), ("raw", [[] for _ in rows])):
        texts = [q.text for q in rows]
        chains = models.predict_chains(texts, spans)
        hops = models.predict_hops_many(texts, spans)
        gold = [q.chain for q in rows]
        result[f"chain_accuracy_{name}"] = float(
            np.mean([p.steps == g for p, g in zip(chains, gold, strict=True)])
        )
        result[f"hops_accuracy_{name}"] = float(
            np.mean([p.hops == len(g) for p, g in zip(hops, gold, strict=True) if g])
        )
        result[f"hop_range_accuracy_{name}"] = float(
            np.mean([p.hop_range == hop_range(len(g)) for p, g in zip(hops, gold, strict=True) if g])
        )
    return result


def kept_chains(questions: Sequence[LabelledQuestion], min_examples: int, max_chains: int) -> list[str]:
    counts = Counter(chain_key(q.chain) for q in questions if q.chain is not None)
    return [c for c, n in counts.most_common() if n >= min_examples][:max_chains]


def train_question_classifiers(
    training: Sequence[LabelledQuestion],
    validation: Sequence[LabelledQuestion],
    out_dir: Path,
    seed: int = DEFAULT_SEED,
    fills: int = 4,
    min_examples: int = 2,
    max_chains: int = 1500,
) -> QuestionClassifiers:
    """Fits on ``training``, scores ``validation``, refits on both and saves to ``out_dir``."""
    began = time.perf_counter()
    everything = [*training, *validation]
    keep = set(kept_chains(everything, min_examples, max_chains))
    if not keep:
        raise ValueError("no relation chain has enough questions to learn from")
    texts, labels = _examples(training, keep, fills, random.Random(seed))
    first = QuestionClassifiers(*_fit(texts, labels, seed)) if len(set(labels)) > 1 else None
    validation_report = _score(first, validation) if first is not None else {"questions": 0}
    texts, labels = _examples(everything, keep, fills, random.Random(seed))
    if len(set(labels)) < 2:
        raise ValueError("the questions use fewer than two relation chains: nothing to classify")
    features, chain_svm, hop_svm = _fit(texts, labels, seed)
    metadata: dict[str, Any] = {
        "format_version": FORMAT_VERSION,
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "seed": seed,
        "fills": fills,
        "model": "TF-IDF word 1-3 + char_wb 2-5 grams -> LinearSVC(C=1.0), one for the chain, one for hops",
        "model_file": MODEL_FILE,
        "sklearn_version": sklearn.__version__,
        "training_examples": len(texts),
        "questions": len(everything),
        "chains": len(keep),
        "validation": validation_report,
        "train_seconds": round(time.perf_counter() - began, 2),
    }
    patterns = sorted({t for t in texts if PLACEHOLDER in t}) or sorted(set(texts))
    models = QuestionClassifiers(
        features, chain_svm, hop_svm, metadata, known=normalize(features.transform(patterns))
    )
    _save(models, out_dir)
    return models


def _save(models: QuestionClassifiers, directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / METADATA_FILE).unlink(missing_ok=True)  # incomplete until the metadata is back
    fd, tmp = tempfile.mkstemp(dir=directory, suffix=".tmp")
    os.close(fd)
    joblib.dump(
        {
            "features": models.features,
            "chain": models.chain_svm,
            "hops": models.hop_svm,
            "known": models.known,
        },
        tmp,
        compress=3,
    )
    os.replace(tmp, directory / MODEL_FILE)
    fd, tmp = tempfile.mkstemp(dir=directory, suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(models.metadata, handle, indent=2, sort_keys=True)
    os.replace(tmp, directory / METADATA_FILE)  # written last: its presence means the models are complete
