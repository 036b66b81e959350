"""Whether what a chain arrives at is the kind of thing the question asks for: "which city" wants cities, not
the counties a chain of the same words reaches; "what channel" a TV network, not a language.

The fine-tuned path scorer reads a chain's relation words, and a chain's end is often said by none of them.
What an entity is, the KG says where its relation names say the type of their head (Freebase-style
``domain.type.property``: the head of ``location.citytown.postal_codes`` is a "citytown"). An entity's kinds
are the subject words of the relations it is the head of (:func:`kgqa.core.relation_text.relation_words`),
read from the database for a sample of each chain's ends; its fit to what the question asks for
(:func:`kgqa.core.question_words.asked_for`) is the best cosine of those words to it in the stock sentence
encoder, and a chain's fit is the mean over its ends that have kinds. A chain whose fit is more than
:data:`KIND_GAP` below the best fit among the scorer's first :data:`KIND_CHAINS` chains loses probability
(:data:`KIND_WEIGHT` per unit of shortfall, in log-probability), when the best fit is at least
:data:`KIND_SURE`. Ends without kinds (a value no typed relation starts from) are left out of a chain's fit,
and a chain with none keeps its place; on a KG whose relation names do not say their head's type (plain
names, ``born_in``) no end has kinds, nothing is read and the scorer's ranking stands. On our FB15k-237 tune
questions the first
topic's best chain reaches a right answer for 58.8 % of them without this and 63.4 % with it (weight 10,
gap 0.1, sure 0.55; weights 5 to 10, gaps 0 to 0.1 and no sure level within a point of it).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping, Sequence

import numpy as np
from kgqa.core.chains import Chain
from kgqa.core.relation_text import relation_words
from kgqa.graph.cypher import render
from kgqa.models.encoder import embed
from neo4j import Driver, RoutingControl

KIND_CHAINS = 10  # the scorer's best chains whose ends are read
KIND_ENDS = 20  # ends of each chain whose kinds are read (the first in name order: the same every time)
KIND_GAP = 0.1  # a shortfall in fit the scorer's ranking is trusted over
# the best fit from which any chain is lowered: the asked word names that kind nearly ("city": "citytown"
# 0.79, "channel": "tv network" 0.68), where below it the encoder's near-universal neighbours decide ("bands"
# is 0.53 from "genre", 0.49 from "instrument" and 0.36 from "artist", which FB15k-237's bands are)
KIND_SURE = 0.55
KIND_WEIGHT = 10.0  # log-probability lost per unit of shortfall beyond the gap


class _Cosines:
    """Cosines of short texts (kind words, what a question asks for), each text embedded once per process."""

    def __init__(self) -> None:
        self._vectors: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()

    def best(self, asked: str, kinds: Sequence[str]) -> float:
        with self._lock:
            missing = [t for t in dict.fromkeys([asked, *kinds]) if t not in self._vectors]
        if missing:
            vectors = embed(missing)
            with self._lock:
                self._vectors.update(zip(missing, vectors, strict=True))
        with self._lock:
            wanted = self._vectors[asked]
            return max(float(self._vectors[k] @ wanted) for k in kinds)


_COSINES = _Cosines()


def entity_kinds(driver: Driver, kg: str, names: Sequence[str]) -> dict[str, list[str]]:
    """Per name the KG has, the subject words of the relations its entity is the head of ([] when none
    says one)."""
    if not names:
        return {}
    records, _summary, _keys = driver.execute_query(
        render("paths/entity_kinds"), {"kg": kg, "names": list(names)}, routing_=RoutingControl.READ
    )
    out: dict[str, list[str]] = {}
    for record in records:
        subjects = (relation_words(str(t)).subject for t in record["outgoing"])
        out[str(record["name"])] = sorted({s for s in subjects if s})
    return out


def says_types(chains: Sequence[Chain]) -> bool:
    """Whether any relation of ``chains`` says the type of its head: where none does, the KG's names are plain
    and no end can have kinds, so there is nothing to read."""
    return any(relation_words(relation).subject for chain in chains for relation, _way in chain)


def kind_fit(asked: str, kinds: Sequence[str]) -> float | None:
    """The best cosine of ``asked`` to one of an entity's ``kinds``; None when either is unknown."""
    if not asked or not kinds:
        return None
    return _COSINES.best(asked, kinds)


def chain_fits(
    asked: str, ends: Mapping[str, Sequence[str]], kinds: Mapping[str, Sequence[str]]
) -> dict[str, float | None]:
    """Per chain key, the mean fit of its ends (``ends``: their names) that have kinds; None when none has.

    An end without kinds says nothing: a form of government, a profession, a time zone or a cemetery is a
    node no typed relation starts from in FB15k-237, and counting such ends as fitting nothing lost 34 and won
    28 of a sample of 976 WebQSP train questions ("what type of government does france have" answered with
    countries), where leaving them out wins."""
    out: dict[str, float | None] = {}
    for key, names in ends.items():
        fits = [f for f in (kind_fit(asked, kinds.get(n, ())) for n in names) if f is not None]
        out[key] = sum(fits) / len(fits) if fits else None
    return out


def reweighted(
    probabilities: Sequence[float],
    fits: Sequence[float | None],
    gap: float = KIND_GAP,
    weight: float = KIND_WEIGHT,
    sure: float = KIND_SURE,
) -> list[float] | None:
    """The chains' probabilities with those that fit what is asked worse than the best by more than ``gap``
    lowered; None when no chain's fit is known, the best is below ``sure`` or none is lowered. What they lose
    is not shared out: a chain of the kind asked is no likelier for the others being unlikely (sharing it out
    raised sgrag's confidence past auto's threshold on chains that were wrong all the same: 976 WebQSP train
    questions, auto 56.1 shared, 56.7 kept, 56.5 without the fit)."""
    known = [f for f in fits if f is not None]
    if not known or max(known) < sure:
        return None
    best = max(known)
    factors = [1.0 if f is None else math.exp(-weight * max(0.0, best - f - gap)) for f in fits]
    if all(x == 1.0 for x in factors):
        return None
    return [p * x for p, x in zip(probabilities, factors, strict=True)]
