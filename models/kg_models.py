"""Each KG's own models: where they live, and the profile that says what they cover.

``kgqa train all --kg NAME`` learns, for one KG, everything its methods and ``auto`` read, and installs it in
one folder (the managed server reads the same folder through ``kgqa.models.dir``)::

    <KGQA_HOME>/models/kgs/<kg>/
        profile.json        written last: what was trained, from which questions, how long each part took,
                            how each method did on the held-out questions, and the route measured from that
        classifiers/        the question's relation chain (sgrag's template) and hop count (FRAG, SubgraphRAG)
        gsr/                GSR's chain generator (ONNX, run by kgqa.gsr.*)
        subgraphrag/        SubgraphRAG's triple scorer (ONNX, run by kgqa.subgraphrag.*)
        simgrag/phrases.json   the words the KG's questions use for each relation (kgqa.simgrag.*)
        frag/ranker.json    FRAG's path ranker: what each relation arrives at, and how its features weigh
        linking/words.json  the entity linker's words: question words, name-word frequencies, initials
        path_scorer/        the question-to-path scorer: MiniLM fine-tuned on the KG's questions (ONNX)
        held_out.json       the KG's own questions that no model trained on (`kgqa eval ... --split dev`)

A KG's models belong to that KG and are never used for another: a KG without them is a one-line error naming
``kgqa train all --kg NAME``, or, for ``auto``, a method the route skips.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from kgqa.core.config import models_dir
from kgqa.core.errors import BadInput, KgqaError

KGS_FOLDER = "kgs"
PROFILE_FILE = "profile.json"
PROFILE_FORMAT = 1
# The parts of a KG's models, the folder of each and the file whose presence means it is complete.
PARTS: dict[str, str] = {
    "classifiers": "classifiers/metadata.json",
    "gsr": "gsr/meta.json",
    "subgraphrag": "subgraphrag/meta.json",
    "simgrag": "simgrag/phrases.json",
    "frag": "frag/ranker.json",
    "linking": "linking/words.json",
    "path_scorer": "path_scorer/meta.json",
}
_SAFE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,127}$")


def train_command(kg: str) -> str:
    return f"kgqa train all --kg {kg}"


def kg_models_dir(kg: str, home: Path | None = None) -> Path:
    """``<KGQA_HOME>/models/kgs/<kg>``; a one-line error for a name that cannot be a folder."""
    if not _SAFE.match(kg) or ".." in kg:
        raise BadInput(f"invalid KG name {kg!r}: use letters, digits, '_', '.' or '-'")
    return models_dir(home) / KGS_FOLDER / kg


def part_dir(kg: str, part: str, home: Path | None = None) -> Path:
    if part not in PARTS:
        raise ValueError(f"unknown model part {part!r}; the parts are {', '.join(PARTS)}")
    return kg_models_dir(kg, home) / PARTS[part].split("/")[0]


def part_installed(kg: str, part: str, home: Path | None = None) -> bool:
    return (kg_models_dir(kg, home) / PARTS[part]).is_file()


@dataclass
class PartReport:
    """What training one part did: how long, on how many examples, and what it measured."""

    seconds: float
    examples: int = 0
    metrics: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


@dataclass
class KgProfile:
    """What a KG's models cover (``profile.json``)."""

    kg: str
    fingerprint: str  # of the KG the models were trained on (its :KG node's fingerprint)
    trained_at: str
    questions: list[str]  # the labelled question sets read ([] when learned from the KG alone)
    labelled: int  # labelled questions used
    synthesised: int  # questions synthesised from the KG's relation paths
    parts: dict[str, PartReport] = field(default_factory=dict)
    # held-out questions: method -> Hits@1 (and per kind) of each method, as auto's route measured them
    methods: dict[str, dict[str, float]] = field(default_factory=dict)
    route: dict[str, Any] = field(default_factory=dict)  # kgqa.qa.routing.RoutePolicy as JSON
    # the parts installed when the route was measured (None: a profile from before this was kept)
    route_parts: list[str] | None = None
    format: int = PROFILE_FORMAT

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> KgProfile:
        parts = {name: PartReport(**report) for name, report in (data.get("parts") or {}).items()}
        fields = {k: v for k, v in data.items() if k in cls.__dataclass_fields__ and k != "parts"}
        return cls(**fields, parts=parts)


def read_profile(kg: str, home: Path | None = None) -> KgProfile | None:
    """The KG's profile, or None when it has none (never trained) or one of another format."""
    path = kg_models_dir(kg, home) / PROFILE_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("format") != PROFILE_FORMAT:
            return None
        return KgProfile.from_json(data)
    except (OSError, ValueError, TypeError, KeyError):
        return None


def write_json_atomically(path: Path, data: Any) -> None:
    """Writes ``data`` as JSON beside ``path`` and renames it there: a reader sees the old file or the new."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}-", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(data, out, indent=1, ensure_ascii=False, sort_keys=True)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


HELD_OUT_FILE = "held_out.json"


def write_held_out(kg: str, texts: list[str], home: Path | None = None) -> Path:
    """The texts of the KG's labelled questions ``kgqa train all`` kept from every model (validation and
    route): the KG's dev set."""
    path = kg_models_dir(kg, home) / HELD_OUT_FILE
    write_json_atomically(path, {"questions": sorted(set(texts))})
    return path


def read_held_out(kg: str, home: Path | None = None) -> set[str]:
    """The held-out question texts; a one-line error when the KG was not trained on labelled
    questions."""
    path = kg_models_dir(kg, home) / HELD_OUT_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return {str(t) for t in data["questions"]}
    except (OSError, ValueError, TypeError, KeyError):
        raise KgqaError(
            f"KG {kg!r} has no held-out questions ({path.name}): train it with labelled questions, "
            f"`{train_command(kg)} --questions FILE`"
        ) from None


PROMPT_EXAMPLE_FILE = "prompt_example.json"


@dataclass(frozen=True)
class PromptExample:
    """A question of the KG's own, the triplets that answer it and its answers: the worked example of the LLM
    prompt, so that a small model sees this KG's names and relations, not another dataset's."""

    question: str
    triplets: tuple[tuple[str, str, str], ...]
    answers: tuple[str, ...]


def write_prompt_example(kg: str, example: PromptExample, home: Path | None = None) -> Path:
    path = kg_models_dir(kg, home) / PROMPT_EXAMPLE_FILE
    write_json_atomically(
        path,
        {
            "question": example.question,
            "triplets": [list(t) for t in example.triplets],
            "answers": list(example.answers),
        },
    )
    return path


def read_prompt_example(kg: str, home: Path | None = None) -> PromptExample | None:
    """The KG's worked example (``kgqa train all`` writes it); None when it has none or it is unreadable."""
    try:
        data = json.loads((kg_models_dir(kg, home) / PROMPT_EXAMPLE_FILE).read_text(encoding="utf-8"))
        triplets = tuple((str(h), str(r), str(t)) for h, r, t in data["triplets"])
        example = PromptExample(str(data["question"]), triplets, tuple(str(a) for a in data["answers"]))
    except (OSError, ValueError, TypeError, KeyError, BadInput):
        return None
    return example if example.question and example.triplets and example.answers else None


def write_profile(profile: KgProfile, home: Path | None = None) -> Path:
    path = kg_models_dir(profile.kg, home) / PROFILE_FILE
    write_json_atomically(path, profile.to_json())
    return path


def installed_parts(kg: str, home: Path | None = None) -> list[str]:
    return [part for part in PARTS if part_installed(kg, part, home)]


def parts_newer_than_route(kg: str, profile: KgProfile | None = None) -> list[str]:
    """The parts installed after auto's route was measured: the route never asked the methods they make."""
    profile = profile if profile is not None else read_profile(kg)
    if profile is None or not profile.route or profile.route_parts is None:
        return []
    return [part for part in installed_parts(kg) if part not in profile.route_parts]


def stale_route_note(kg: str, newer: list[str]) -> str:
    return (
        f"auto's route for KG {kg!r} was learned before {', '.join(newer)} "
        f"{'was' if len(newer) == 1 else 'were'} trained; `kgqa train route --kg {kg}` renews it"
    )


def models_summary(kg: str, fingerprint: str | None = None) -> dict[str, Any]:
    """What ``kgqa kgs`` shows of a KG's models: the parts installed (and the route), when they were trained,
    and whether the KG was reloaded since (its fingerprint changed)."""
    try:
        parts = installed_parts(kg)
    except BadInput:
        return {"models": "", "trained_at": None, "models_current": None, "route_stale": None}
    profile = read_profile(kg)
    newer = parts_newer_than_route(kg, profile)
    if profile is not None and profile.route:
        parts.append("route (stale)" if newer else "route")
    current = None
    if profile is not None and fingerprint:
        current = profile.fingerprint == fingerprint
    return {
        "models": ",".join(parts),
        "trained_at": profile.trained_at if profile else None,
        "models_current": current,
        "route_stale": stale_route_note(kg, newer) if newer else None,
    }


def remove_models(kg: str) -> bool:
    """Deletes KG ``kg``'s models (with the KG: a KG's models belong to it); False when it had none."""
    import shutil

    directory = kg_models_dir(kg)
    if not directory.exists():
        return False
    shutil.rmtree(directory)
    return True
