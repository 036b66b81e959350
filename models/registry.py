"""Where every trained artefact lives and how query time gets it: loaded once per process, never trained.

A missing artefact is a :class:`~kgqa.core.errors.ModelMissing` error naming the `kgqa train ...` command
that makes it. Layout under ``$KGQA_HOME/models`` (the managed server reads the same directory as the JVM
property ``kgqa.models.dir``)::

    question_classifiers/   SG-RAG's question type and the hop classifier (kgqa train classifiers)
    subgraphrag/<name>/     SubgraphRAG scorers, read by the database (kgqa train subgraphrag --name NAME)
    encoder/<name>/         the sentence encoder as ONNX, built from the packaged weights (no training)
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

from kgqa.core.config import external_server, models_dir
from kgqa.core.errors import ModelMissing
from kgqa.models.gsr import ChainModel, gsr_models_dir
from kgqa.models.question_classifiers import METADATA_FILE, QuestionClassifiers, load_question_classifiers

TRAIN_CLASSIFIERS = "kgqa train classifiers"
# What `kgqa train subgraphrag` (3+3 DDE rounds, the question-relation feature) took on MetaQA here:
# meta.json training_seconds 1804 on 2 cores, 12 epochs, sharing the machine with another training job.
SUBGRAPHRAG_TRAINING_TAKES = "about 30 minutes on 2 cores for MetaQA; --limit N --epochs E for a quick one"

_LOCK = threading.Lock()
_CLASSIFIERS: dict[Path, QuestionClassifiers] = {}
_CHAIN_MODELS: dict[Path, ChainModel] = {}


def question_classifiers_dir() -> Path:
    return models_dir() / "question_classifiers"


def question_classifiers() -> QuestionClassifiers:
    """The installed question classifiers (cached per process)."""
    directory = question_classifiers_dir()
    with _LOCK:
        cached = _CLASSIFIERS.get(directory)
        if cached is None:
            cached = load_question_classifiers(directory)
            if cached is None:
                # saved by another kgqa format or scikit-learn version: unreadable here, so train again
                what = (
                    "usable question classifier"
                    if (directory / METADATA_FILE).is_file()
                    else "question classifier"
                )
                raise ModelMissing(what, TRAIN_CLASSIFIERS, str(directory))
            _CLASSIFIERS[directory] = cached
        return cached


def forget_loaded_models() -> None:
    """Drop what this process loaded, so that a model trained since is read again (`kgqa train` does it)."""
    with _LOCK:
        _CLASSIFIERS.clear()
        _CHAIN_MODELS.clear()


def gsr_chain_model(name: str = "default") -> ChainModel:
    """GSR's chain generator ``name`` in this process (onnxruntime, cached), for scoring given relation chains
    (FRAG's path reranking); ModelMissing when it is not installed here."""
    directory = gsr_models_dir() / name
    with _LOCK:
        cached = _CHAIN_MODELS.get(directory)
        if cached is None:
            if not all((directory / f).is_file() for f in ("encoder.onnx", "decoder.onnx", "meta.json")):
                raise ModelMissing(f"GSR model {name!r}", f"kgqa train gsr --name {name}", str(directory))
            cached = _CHAIN_MODELS[directory] = ChainModel(directory)
        return cached


def subgraphrag_models_dir() -> Path:
    return models_dir() / "subgraphrag"


def subgraphrag_model_dir(name: str) -> Path:
    return subgraphrag_models_dir() / name


def subgraphrag_model_installed(name: str) -> bool:
    """Whether this machine's model registry holds SubgraphRAG model ``name``."""
    return (subgraphrag_model_dir(name) / "meta.json").is_file()


def subgraphrag_model_encoder(name: str) -> str | None:
    """The encoder of the vectors SubgraphRAG model ``name`` was trained on (meta.json); None: unknown."""
    try:
        meta = json.loads((subgraphrag_model_dir(name) / "meta.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    encoder = meta.get("encoder") if isinstance(meta, dict) else None
    return str(encoder) if encoder else None


def subgraphrag_models_for(encoder: str) -> list[str]:
    """The installed SubgraphRAG models trained on ``encoder``'s vectors, by name."""
    directory = subgraphrag_models_dir()
    names = sorted(p.name for p in directory.iterdir() if p.is_dir()) if directory.is_dir() else []
    return [n for n in names if subgraphrag_model_installed(n) and subgraphrag_model_encoder(n) == encoder]


def gsr_model_installed(name: str) -> bool:
    """Whether this machine's model registry holds GSR model ``name`` (all four of its files)."""
    directory = gsr_models_dir() / name
    return all((directory / f).is_file() for f in ("encoder.onnx", "decoder.onnx", "vocab.txt", "meta.json"))


def require_subgraphrag_model(name: str) -> None:
    """Fails early, naming the training command, when the managed server has no SubgraphRAG model ``name``.

    With an external server (NEO4J_URI) the models live on that machine; the database then names the
    command itself when the model is missing.
    """
    if external_server() is not None:
        return
    directory = subgraphrag_model_dir(name)
    if not subgraphrag_model_installed(name):
        raise ModelMissing(
            f"SubgraphRAG model {name!r}",
            f"kgqa train subgraphrag --name {name}",
            str(directory),
            SUBGRAPHRAG_TRAINING_TAKES,
        )


def require_gsr_model(name: str) -> None:
    """Fails early, naming the training command, when the managed server has no GSR model ``name`` (as
    :func:`require_subgraphrag_model`; with an external server the database names the command itself)."""
    if external_server() is not None:
        return
    directory = gsr_models_dir() / name
    if not gsr_model_installed(name):
        raise ModelMissing(f"GSR model {name!r}", f"kgqa train gsr --name {name}", str(directory))
