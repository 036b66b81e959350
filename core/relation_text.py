"""Relation names read as English: what a step of a chain asks for, from the name alone.

No KG's vocabulary is written here, only how relation names are built:

- Freebase-style dotted names, ``domain.type.property`` (``people.person.place_of_birth``): the *subject* is
  the type (``person``), the *role* of the tail is the property (``place of birth``); a longer domain
  (``base.popstra.celebrity.dated``) ends the same way. A compound (CVT) name
  ``a.b.c..d.e.f`` (``film.actor.film..film.performance.film``) passes through a mediator: the subject is
  ``b``, the role is the last property ``f`` and the mediator's property ``c`` joins the phrase.
- Plain names, ``born_in``, ``memberOf``, ``birthPlace``: the words of the name are both the phrase
  and the role; there is no subject type.

Walked "out" (topic entity = head), a step asks for its role ("the place of birth of X"); walked "in"
(topic entity = tail), it asks for its subject ("the person whose place of birth is X").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from kgqa.core.chains import Step

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SEPARATORS = re.compile(r"[._/#:\-\s]+")


def name_words(name: str) -> str:
    """``place_of_birth`` -> ``place of birth``; ``birthPlace`` -> ``birth place``."""
    return " ".join(_SEPARATORS.sub(" ", _CAMEL.sub(" ", name)).split()).lower()


@dataclass(frozen=True)
class RelationWords:
    subject: str  # what the head is ("person"), "" when the name does not say
    role: str  # what the tail is to the head ("place of birth")
    phrase: str  # the relation as words, mediator included ("spouse s spouse", "directed by")
    domain: str = ""  # the name's first part ("people"), "" for a plain name


@lru_cache(maxsize=65536)
def relation_words(name: str) -> RelationWords:
    parts = [p.split(".") for p in name.split("..")]
    if len(parts[0]) < 3 or any(len(p) < 2 for p in parts):
        words = name_words(name)
        return RelationWords("", words, words)
    # domain.type.property, and base.<domain>.type.property: the type is the part before the property
    domain, subject = ".".join(parts[0][:-2]), parts[0][-2]
    properties = [parts[0][-1], *(p[-1] for p in parts[1:])]
    role = name_words(properties[-1])
    phrase = " ".join(dict.fromkeys(name_words(p) for p in properties if p))
    return RelationWords(name_words(subject), role, phrase, name_words(domain))


def asked_role(step: Step) -> str:
    """What walking ``step`` arrives at, in words: the role out, the subject in (the phrase when the name
    says no subject)."""
    words = relation_words(step[0])
    if step[1] == "out":
        return words.role
    return words.subject or words.phrase


def step_text(step: Step) -> str:
    """One hop in words, as a question would name it: ``place of birth`` out, ``person with place of
    birth`` in (``directed by`` out, ``directed by of`` in for a plain name)."""
    words = relation_words(step[0])
    if step[1] == "out":
        return words.phrase if not words.subject else f"{words.subject} {words.phrase}"
    if not words.subject:
        return f"{words.phrase} of"
    return f"{words.subject} with {words.phrase}"


def chain_text(chain: tuple[Step, ...] | list[Step]) -> str:
    """A chain in words, hop by hop from the topic entity."""
    return " , ".join(step_text(s) for s in chain)
