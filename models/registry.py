"""How query time gets a KG's trained artefacts: loaded once per process, never trained.

Every model belongs to one KG (:mod:`kgqa.models.kg_models`: ``<KGQA_HOME>/models/kgs/<kg>/``). A missing
one is a :class:`~kgqa.core.errors.ModelMissing` error naming ``kgqa train all --kg KG``. SubgraphRAG and GSR
models also exist by name (``<KGQA_HOME>/models/subgraphrag/<name>/``, ``kgqa train subgraphrag --name``),
for experiments that compare two models on one KG; nothing picks a named model unless asked to.
"""

from __future__ import annotations

import threading
from pathlib import Path

from kgqa.core.config import external_server, models_dir
from kgqa.core.errors import ModelMissing
from kgqa.models import kg_models
from kgqa.models.path_scorer import META_FILE as PATH_SCORER_META
from kgqa.models.path_scorer import PathScorer, ranks_sgrag
from kgqa.models.question_classifiers import METADATA_FILE, QuestionClassifiers, load_question_classifiers

_LOCK = threading.Lock()
_CLASSIFIERS: dict[Path, tuple[float, QuestionClassifiers]] = {}
_PATH_SCORERS: dict[Path, tuple[float, PathScorer]] = {}


def _stamp(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return -1.0


def question_classifiers(kg: str) -> QuestionClassifiers:
    """KG ``kg``'s question classifiers (cached per process; read again when they are retrained)."""
    directory = kg_models.part_dir(kg, "classifiers")
    stamp = _stamp(directory / METADATA_FILE)
    with _LOCK:
        cached = _CLASSIFIERS.get(directory)
        if cached is None or cached[0] != stamp:
            loaded = load_question_classifiers(directory)
            if loaded is None:
                # absent, or saved by another kgqa format or scikit-learn version: train again
                what = "usable question classifier" if stamp >= 0 else "question classifier"
                raise ModelMissing(f"{what} for KG {kg!r}", kg_models.train_command(kg), str(directory))
            cached = _CLASSIFIERS[directory] = (stamp, loaded)
        return cached[1]


def forget_loaded_models() -> None:
    """Drop what this process loaded, so that a model trained since is read again (`kgqa train` does it)."""
    with _LOCK:
        _CLASSIFIERS.clear()
        _PATH_SCORERS.clear()
        _PROFILES.clear()


def path_scorer(kg: str, outranked_too: bool = False) -> PathScorer | None:
    """KG ``kg``'s question-to-path scorer (cached per process), or None when the KG has none, or when its own
    held-out questions said sgrag's chain classifier ranks better (:func:`ranks_sgrag`), unless
    ``outranked_too`` (for the questions worded unlike the KG's own, which those held-out ones were not)."""
    directory = kg_models.part_dir(kg, "path_scorer")
    stamp = _stamp(directory / PATH_SCORER_META)
    if stamp < 0 or not (outranked_too or ranks_sgrag(directory)):
        return None
    with _LOCK:
        cached = _PATH_SCORERS.get(directory)
        if cached is None or cached[0] != stamp:
            cached = _PATH_SCORERS[directory] = (stamp, PathScorer(directory))
        return cached[1]


_PROFILES: dict[Path, tuple[float, float]] = {}


def unfamiliar_below(kg: str) -> float:
    """The familiarity (the masked question's cosine to the nearest wording the KG's classifiers learned)
    below which a question is worded unlike the KG's labelled questions, learned with its route (``kgqa
    train all``); 0 (no question is) for a KG without labelled questions or a route learned before it was."""
    path = kg_models.kg_models_dir(kg) / kg_models.PROFILE_FILE
    stamp = _stamp(path)
    with _LOCK:
        cached = _PROFILES.get(path)
    if cached is None or cached[0] != stamp:
        profile = kg_models.read_profile(kg)
        value = float((profile.route if profile else {}).get("unfamiliar_below", 0.0))
        cached = (stamp, value)
        with _LOCK:
            _PROFILES[path] = cached
    return cached[1]


def named_model_dir(kind: str, name: str) -> Path:
    """``<models>/<kind>/<name>``: a model installed by name (``kgqa train subgraphrag --name``)."""
    return models_dir() / kind / name


def subgraphrag_model_dir(kg: str, name: str | None = None) -> Path:
    return named_model_dir("subgraphrag", name) if name else kg_models.part_dir(kg, "subgraphrag")


def subgraphrag_model_installed(kg: str, name: str | None = None) -> bool:
    return (subgraphrag_model_dir(kg, name) / "meta.json").is_file()


def gsr_model_dir(kg: str, name: str | None = None) -> Path:
    return named_model_dir("gsr", name) if name else kg_models.part_dir(kg, "gsr")


def gsr_model_installed(kg: str, name: str | None = None) -> bool:
    """Whether KG ``kg``'s GSR model (or the one named ``name``) is installed, all four of its files."""
    directory = gsr_model_dir(kg, name)
    return all((directory / f).is_file() for f in ("encoder.onnx", "decoder.onnx", "vocab.txt", "meta.json"))


def require_subgraphrag_model(kg: str, name: str | None = None) -> None:
    """Fails early, naming the training command, when the managed server lacks the model. With an external
    server (NEO4J_URI) the models live on that machine; the database then names the command itself."""
    if external_server() is not None or subgraphrag_model_installed(kg, name):
        return
    command = f"kgqa train subgraphrag --kg {kg} --name {name}" if name else kg_models.train_command(kg)
    what = f"SubgraphRAG model {name!r}" if name else f"SubgraphRAG model for KG {kg!r}"
    raise ModelMissing(what, command, str(subgraphrag_model_dir(kg, name)))


def require_gsr_model(kg: str, name: str | None = None) -> None:
    """As :func:`require_subgraphrag_model`, for GSR."""
    if external_server() is not None or gsr_model_installed(kg, name):
        return
    command = f"kgqa train gsr --kg {kg} --name {name}" if name else kg_models.train_command(kg)
    what = f"GSR model {name!r}" if name else f"GSR model for KG {kg!r}"
    raise ModelMissing(what, command, str(gsr_model_dir(kg, name)))
