"""Questions worded from relation names: how a synthesised question reads, in many ways.

Everything a wording knows about a relation comes from its name (:mod:`kgqa.core.relation_text`): the role
its tail plays ("place of birth"), the kind of thing its head is ("person"), the phrase the name spells. The
English around them is generic: a noun phrase per hop, built inside out from the topic entity ("the place of
birth of the director of X"), and a question made of it. Which question word fits (who, where, when) is
read off the asked role by the sentence encoder's similarity to a person, a place and a time, so that "place
of birth" is asked with "where" and "spouse" with "who" on any KG.

The wordings come in two families. Models learn from family ``A``; auto's route is measured on questions
worded in family ``B``, which no model saw, so that a method that only learned the synthesiser's phrasing
does not look better than it is on people's questions. People rarely say a relation's name ("where was X
born", not "the place of birth of X"), so family ``B`` also says the relation's words in other words: each
is swapped for one of its nearest neighbours in the sentence encoder's vocabulary ("birth" -> "born",
"spouse" -> "wife"), which is English the encoder knows, not anything written for a KG
(:class:`Paraphraser`). A method that learned relation names by heart then fails there as it would on
people's questions, and the route does not trust it more than it earns.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from kgqa.core.chains import Step
from kgqa.core.relation_text import asked_role, relation_words

# What the generic question words ask for; a role this close to one of them is asked with it.
WH_ANCHORS = {"who": "a person, someone", "where": "a place, a location", "when": "a date, a year, a time"}
WH_MIN_SIMILARITY = 0.35
WH_MARGIN = 0.04

FAMILIES = ("A", "B")


@dataclass(frozen=True)
class Wording:
    text: str
    family: str  # "A" (training) or "B" (held out from every model, for the route)
    template: str


def _np_out(role: str, np: str, rng: random.Random, family: str) -> str:
    forms = {
        "A": ("the {r} of {np}", "{np}'s {r}", "{np} {r}"),
        "B": ("the {r} for {np}", "{np}'s {r}"),
    }[family]
    return rng.choice(forms).format(r=role, np=np)


def _np_in(subject: str, phrase: str, np: str, rng: random.Random, family: str) -> str:
    if not subject:
        forms = {
            "A": ("those {p} {np}", "the ones {p} {np}", "what is {p} {np}"),
            "B": ("the things {p} {np}",),
        }[family]
        return rng.choice(forms).format(p=phrase, np=np)
    forms = {
        "A": ("the {s} with {p} {np}", "the {s} whose {p} is {np}", "the {s} that has {np} as {p}"),
        "B": ("the {s} with {np} as {p}", "the {s} for which {p} is {np}"),
    }[family]
    return rng.choice(forms).format(s=subject, p=phrase, np=np)


Rewrite = Callable[[str, random.Random], str]


def _same(text: str, rng: random.Random) -> str:
    del rng
    return text


def noun_phrase(
    chain: Sequence[Step], topic: str, rng: random.Random, family: str, rewrite: Rewrite = _same
) -> str:
    np = topic
    for relation, way in chain:
        words = relation_words(relation)
        if way == "out":
            role = words.role if rng.random() < 0.7 else words.phrase
            np = _np_out(rewrite(role, rng), np, rng, family)
        else:
            np = _np_in(rewrite(words.subject, rng), rewrite(words.phrase, rng), np, rng, family)
    return np


_ASK = {
    "A": (
        "what is {np}?",
        "which are {np}?",
        "{np}",
        "name {np}",
        "tell me {np}",
        "what are {np}",
        "{wh} is {np}?",
    ),
    "B": ("{wh} was {np}?", "could you tell me {np}?", "do you know {np}", "{np}?", "list {np}"),
}
# One hop said with its own verb-like phrase: "who is X spouse", "what X place of birth".
_ASK_SHORT = {
    "A": ("{wh} {np}?", "{np} {wh}?"),
    "B": ("{np}, {wh}?",),
}


def word_question(
    chain: Sequence[Step], topic: str, asked: str, rng: random.Random, family: str, rewrite: Rewrite = _same
) -> Wording:
    """One wording of ``chain`` from ``topic``; ``asked`` is the question word that fits what it asks for and
    ``rewrite`` says the relation's words (in other words, for paraphrased questions)."""
    np = noun_phrase(chain, topic, rng, family, rewrite)
    pool = _ASK[family] + (_ASK_SHORT[family] if len(chain) == 1 else ())
    template = rng.choice(pool)
    text = template.format(np=np, wh=asked)
    if rng.random() < 0.3:
        text = text.lower()
    return Wording(" ".join(text.split()), family, template)


# People name what they ask for ("which countries border Spain"); the kind's word must not read as a step.
_ASK_KIND = (
    "which {k} is {np}?",
    "what {k} is {np}?",
    "which {k}s are {np}?",
    "name the {k} that is {np}",
    "{k}: {np}?",
)


def word_kind_question(chain: Sequence[Step], topic: str, kind: str, rng: random.Random) -> Wording:
    """A family-A wording of ``chain`` from ``topic`` that names the ``kind`` of thing it asks for."""
    np = noun_phrase(chain, topic, rng, "A")
    template = rng.choice(_ASK_KIND)
    text = template.format(np=np, k=kind)
    if rng.random() < 0.3:
        text = text.lower()
    return Wording(" ".join(text.split()), "A", template)


# A round trip asks for the others that share the topic's neighbour ("what other films did the DP of X
# shoot"), and people say "other" and "same", not the relation twice.
_ASK_OTHERS = (
    "what other {k} have the same {r} as {t}?",
    "which other {k} share {t}'s {r}?",
    "{k} with the same {r} as {t}",
    "what else has the {r} of {t}?",
    "other {k} by the {r} of {t}",
)


def word_round_trip(chain: Sequence[Step], topic: str, kind: str, rng: random.Random) -> Wording:
    """A family-A wording of the round trip ``chain`` from ``topic`` ("other films with the same
    cinematography as X"); ``kind`` names what it arrives at ("" says "ones")."""
    role = asked_role(chain[0])
    template = rng.choice(_ASK_OTHERS)
    text = template.format(k=f"{kind}s" if kind else "ones", r=role, t=topic)
    if rng.random() < 0.3:
        text = text.lower()
    return Wording(" ".join(text.split()), "A", template)


_VOCAB_WORD = re.compile(r"^[a-z]{3,15}$")
# English function words: never swapped, never a swap
_KEEP = frozenset("of the and for with from into onto upon about than that this what which who".split())


class Paraphraser:
    """A relation's words said in other words: each word swapped for one of its ``top`` nearest neighbours in
    the sentence encoder's own vocabulary (whole words of its WordPiece vocabulary) that is not the same word
    (another stem) and at least ``min_similarity`` close. English the encoder knows, the same for every KG."""

    def __init__(
        self,
        embed: Callable[[Sequence[str]], object],
        vocabulary: Sequence[str],
        top: int = 3,
        min_similarity: float = 0.55,
    ) -> None:
        self.words = sorted({w for w in vocabulary if _VOCAB_WORD.match(w) and w not in _KEEP})
        self._embed = embed
        self._matrix = np.asarray(embed(self.words), dtype=np.float32)
        self.top = top
        self.min_similarity = min_similarity
        self._neighbours: dict[str, list[str]] = {}

    def neighbours(self, word: str) -> list[str]:
        if word not in self._neighbours:
            vector = np.asarray(self._embed([word]), dtype=np.float32)[0]
            similarity = self._matrix @ vector
            found: list[str] = []
            for i in np.argsort(-similarity)[:50]:
                other = self.words[int(i)]
                if similarity[i] < self.min_similarity or len(found) >= self.top:
                    break
                if other[:4] != word[:4] and word not in other and other not in word:
                    found.append(other)
            self._neighbours[word] = found
        return self._neighbours[word]

    def __call__(self, text: str, rng: random.Random) -> str:
        out = []
        for word in text.split():
            options = [] if word in _KEEP or len(word) < 3 else self.neighbours(word)
            out.append(rng.choice(options) if options else word)
        return " ".join(out)


class QuestionWords:
    """The question word for what a chain asks, read off the encoder once per asked role."""

    def __init__(self, embed: callable) -> None:  # type: ignore[valid-type]
        self._embed = embed
        self._anchors = np.asarray(embed(list(WH_ANCHORS.values())))
        self._cache: dict[str, str] = {}

    def prepare(self, roles: Sequence[str]) -> None:
        missing = [r for r in dict.fromkeys(roles) if r and r not in self._cache]
        if not missing:
            return
        similarity = np.asarray(self._embed(missing)) @ self._anchors.T
        words = list(WH_ANCHORS)
        for role, row in zip(missing, similarity, strict=True):
            order = np.argsort(-row)
            best, second = row[order[0]], row[order[1]]
            sure = best >= WH_MIN_SIMILARITY and best - second >= WH_MARGIN
            self._cache[role] = words[int(order[0])] if sure else "what"

    def __call__(self, role: str) -> str:
        if role not in self._cache:
            self.prepare([role])
        return self._cache.get(role, "what")
