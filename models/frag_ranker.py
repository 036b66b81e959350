"""FRAG's path ranker for one KG (``<kg>/frag/ranker.json``, written by ``kgqa train all``).

FRAG ranks relation chains by how well they fit the question. Three things say it, each weighed per KG:
the sentence similarity of the question and the chain in words, how well the question's words name the
chain's relations, and whether what the question asks for ("which city", "who") is the kind of thing the
chain arrives at. That last one needs to know what each step of the KG arrives at, which relation names
often do not say; ``kgqa train all`` reads it off the KG (:mod:`kgqa.training.answer_types`) and stores it
here with the weights. On a KG with labelled questions it also learns, for each kind its questions ask for,
which steps their chains end with (``asked_steps``): on a KG without types a film and a person are both told
by the relations around them ("starred actors"), which the encoder cannot tell from "person", while the
KG's own questions say that "who" ends at ``directed_by`` walked out, never at ``starred_actors`` walked in.
"""

from __future__ import annotations

import json
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path

from kgqa.core.chains import Step
from kgqa.models import kg_models

RANKER_FILE = "ranker.json"
FORMAT = 1


# The features a chain is ranked by, in this order (FragRetriever computes them).
FEATURES = (
    "similarity",
    "used",
    "covered",
    "kind",
    "two_hops",
    "three_hops",
    "hop_match",
    "round_trip_asked",
    "round_trip_unasked",
    "weakest",
)


@dataclass(frozen=True)
class RankerWeights:
    similarity: float = 1.0  # cos(question, chain in words)
    used: float = 0.0  # mean over the chain's relations of how well a question word names each
    covered: float = 0.5  # mean over the question's relation words of how well the chain covers each
    kind: float = 0.4  # cos(what the question asks for, what the chain arrives at)
    two_hops: float = 0.0  # a bias for chains of two hops ...
    three_hops: float = 0.0  # ... and of three or more
    hop_match: float = 0.1  # the chain is as long as the hop classifier predicts
    round_trip_asked: float = 0.3  # out and back one relation, and the question asks for "other" ones ...
    round_trip_unasked: float = -0.3  # ... or it does not
    # how well a question word names the chain's least named relation: a hop nothing in the question asks
    # for ("who directed heat" walked through its actors) costs a little. Chosen on the tune parts of our
    # question sets: MetaQA free-form FRAG 60.9 -> 63.2, two-entity 43.9 -> 48.5, FB15k-237 unchanged at
    # 68.6; at 0.3 MetaQA gained more and FB15k-237's two-hop questions lost their second hop (63.2 -> 55.3).
    weakest: float = 0.15

    def vector(self) -> list[float]:
        return [float(getattr(self, name)) for name in FEATURES]


@dataclass(frozen=True)
class FragRanker:
    weights: RankerWeights = field(default_factory=RankerWeights)
    kinds: dict[str, str] = field(default_factory=dict)  # "out:rel" / "in:rel" -> what the step arrives at
    learned_on: str = ""  # what the weights were fitted on ("" : the defaults)
    # an entity with more relationships than this is a hub FRAG does not walk through (a genre, a country of
    # thousands of films): the KG's 99.9th percentile of degrees, read off it (None: FragConfig's)
    hub_degree: int | None = None
    # what the question asks for (asked_for) -> "out:rel" / "in:rel" -> the share of the KG's labelled
    # questions asking for it whose chain ends with that step; kinds asked too rarely are left out
    asked_steps: dict[str, dict[str, float]] = field(default_factory=dict)

    def to_json(self) -> dict[str, object]:
        """The ranker as saved; weights only when they were learned (the defaults stay the code's)."""
        data: dict[str, object] = {"format": FORMAT, **asdict(self)}
        if not self.learned_on:
            del data["weights"]
        return data


def kind_key(step: Step) -> str:
    """The key of ``FragRanker.kinds`` for what walking ``step`` arrives at: ``out:rel`` or ``in:rel``."""
    return f"{step[1]}:{step[0]}"


DEFAULT_RANKER = FragRanker()
_LOCK = threading.Lock()
_CACHE: dict[Path, tuple[float, FragRanker]] = {}


def ranker_path(kg: str) -> Path:
    return kg_models.part_dir(kg, "frag") / RANKER_FILE


def load_ranker(kg: str) -> FragRanker:
    """KG ``kg``'s ranker, or the default weights without step kinds when it has none."""
    path = ranker_path(kg)
    try:
        stamp = path.stat().st_mtime
    except OSError:
        return DEFAULT_RANKER
    with _LOCK:
        cached = _CACHE.get(path)
        if cached is not None and cached[0] == stamp:
            return cached[1]
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("format") != FORMAT:
            return DEFAULT_RANKER
        weights = {k: float(v) for k, v in (data.get("weights") or {}).items() if k in FEATURES}
        hub = data.get("hub_degree")
        ranker = FragRanker(
            RankerWeights(**weights),
            {str(k): str(v) for k, v in (data.get("kinds") or {}).items()},
            str(data.get("learned_on", "")),
            int(hub) if isinstance(hub, int | float) else None,
            {
                str(asked): {str(step): float(share) for step, share in steps.items()}
                for asked, steps in (data.get("asked_steps") or {}).items()
            },
        )
    except (OSError, ValueError, TypeError):
        return DEFAULT_RANKER
    with _LOCK:
        _CACHE[path] = (stamp, ranker)
    return ranker


def save_ranker(kg: str, ranker: FragRanker) -> Path:
    path = ranker_path(kg)
    kg_models.write_json_atomically(path, ranker.to_json())
    return path
