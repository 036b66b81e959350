"""Whether a chain can answer a question asking for a place: one that surely arrives at people cannot.

A fine-tuned path scorer reads the relation words of a chain and little of where it ends: "where was the
lead singer of X born" is as close to the chain from X's home town to the people born there as to the chain
from X to its members to their birthplaces, and the scorer was 0.90 sure of the first (our FB15k-237 tune
questions). What a chain arrives at is known per KG (``FragRanker.kinds``, learned by ``kgqa train all`` from
the relations of the entities each step reaches), and what the question asks for by its English
(:func:`kgqa.core.question_words.asked_for`). Both are placed on one axis, their cosine to "person" less their
cosine to "place location" in the stock sentence encoder, and a chain is ruled out only when both
are far from the middle (:data:`SURE_SIDE`). Films, bands, teams, languages and years sit near the middle
(within 0.15), so only a person asked where is ever told apart; "which city" (-0.22) and "which band" (+0.07)
are left to the scorer. On MetaQA every step's kind sits within 0.18 of the middle.

One way only: people never answer a question asking for a place (none of the 190 such questions of a sample of
1,000 WebQSP train questions has people for its gold answers), but countries and organisations answer "who"
("who speaks farsi", "who does the uk trade with": 5 of its 100 "who" questions), so a chain arriving at
places is never ruled out.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence

import numpy as np
from kgqa.core.chains import Chain
from kgqa.core.question_words import WH_KINDS
from kgqa.models.encoder import embed
from kgqa.models.frag_ranker import kind_key

# How far from the middle both ends of the axis must be; chosen from where a KG's kinds fall (FB15k-237's
# people from +0.25 up, its places from -0.25 down, everything else between), not from any question.
SURE_SIDE = 0.3
_POLES = (WH_KINDS["who"], WH_KINDS["where"])


class _Sides:
    """Each text's place on the person-place axis, computed once per process."""

    def __init__(self) -> None:
        self._poles: np.ndarray | None = None
        self._known: dict[str, float] = {}
        self._lock = threading.Lock()

    def __call__(self, texts: Sequence[str]) -> list[float]:
        with self._lock:
            missing = [t for t in dict.fromkeys(texts) if t not in self._known]
        if missing:
            if self._poles is None:
                self._poles = embed(list(_POLES))
            similarity = embed(missing) @ self._poles.T
            with self._lock:
                self._known.update(
                    (t, float(row[0] - row[1])) for t, row in zip(missing, similarity, strict=True)
                )
        with self._lock:
            return [self._known[t] for t in texts]


_SIDE = _Sides()


def side(text: str) -> float:
    """Cosine to "person" less cosine to "place location": above :data:`SURE_SIDE` a person, below minus it
    a place."""
    return _SIDE([text])[0]


def asks_for_a_place(asked: str) -> bool:
    """Whether ``asked`` (:func:`kgqa.core.question_words.asked_for`) is surely a place: only then can a chain
    be ruled out, so callers skip the chains of every other question."""
    return bool(asked) and side(asked) <= -SURE_SIDE


def people_for_a_place(asked: str, kinds: Mapping[str, str], chains: Sequence[Chain]) -> list[bool]:
    """Per chain, whether it surely arrives at people where the question surely asks for a place; all False
    when the question does not. ``asked``: what the question asks for, in words
    (:func:`kgqa.core.question_words.asked_for`). ``kinds``: what each step arrives at, the KG's
    ``FragRanker.kinds`` (a step it does not know is never ruled out)."""
    if not chains or not asks_for_a_place(asked):
        return [False] * len(chains)
    arrivals = [kinds.get(kind_key(chain[-1]), "") if chain else "" for chain in chains]
    known = [a for a in dict.fromkeys(arrivals) if a]
    sides = dict(zip(known, _SIDE(known), strict=True))
    return [bool(a) and sides[a] >= SURE_SIDE for a in arrivals]
