"""What the entity linker needs to know about one KG's words, read off the KG and its questions
(``<kg>/linking/words.json``, read by ``kgqa.link.entities``).

- **Question words**: the words the KG's questions use around their entities, not in them ("films",
  "directed" on a film KG; "born", "capital" on an encyclopaedic one). A span made only of these is rarely
  the entity meant, however many entities happen to be named by one of them. Learned from the KG's
  questions (labelled, and synthesised from its relation paths): a word outside the topic spans of at least
  ``min_questions`` questions, and at least ``min_ratio`` times as often outside names as in them.
- **Name-word frequencies**: in how many entity names each of the commonest words occurs ("language",
  "university", "corporation"): a name's rare words are its head, so "Microsoft" names "Microsoft
  Corporation" and "Portuguese" names "Portuguese Language" when nothing is named by the word alone.
- **Initials**: the initials of the KG's best-connected names of several words ("usa" for "United States of
  America"), as people type them.
- **Common English words**: the commonest words of English, read off the sentence encoder's WordPiece
  vocabulary, whose whole words come by how often they occur in its training text ("home", "singer",
  "married" early; "spielberg", "obama" far later). A common word typed in lower case is not a surname said
  alone ("the lead singer" is not Bryan Singer), and a correctly spelt one is not a typo of a name ("movie"
  is not "B movie").
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path

from kgqa.graph.cypher import render
from kgqa.models.kg_models import write_json_atomically
from kgqa.training.questions import LabelledQuestion
from neo4j import Driver, RoutingControl

WORDS_FILE = "words.json"
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
# Words a title or a name leaves small ("Lord of the Rings"): no initial of their own.
_MINOR = frozenset("a an the of in on at to for and or by with from de la le".split())
COMMON_NAME_WORDS = 2000  # name words whose frequency is kept (the commonest)
COMMON_ENGLISH_WORDS = 5000  # the encoder vocabulary's first whole words ("the" ... "composer")
INITIALS_SHARE = 0.02  # the best-connected 2 % of the names of several words get their initials


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def _initial_words(words: Sequence[str]) -> list[str]:
    """The words of a name that give an initial: not small ones, not numbers, not a two-letter tag."""
    return [w for w in words if w not in _MINOR and not w.isdigit() and len(w) > 2]


def initialled(words: list[str]) -> list[list[str]]:
    """The words whose initials people type for a name: all of them, and those before its first small word
    ("us" for "United States of America", as well as "usa")."""
    out = [words]
    for i, word in enumerate(words):
        if word in _MINOR:
            if i >= 2:
                out.append(words[:i])
            break
    return out


def question_words(
    questions: Sequence[LabelledQuestion],
    name_df: Counter[str],
    min_questions: int = 20,
    min_ratio: float = 3.0,
) -> list[str]:
    outside: Counter[str] = Counter()
    for q in questions:
        text = q.text.lower()
        for span in sorted((s.lower() for s in q.topic_spans if s), key=len, reverse=True):
            text = text.replace(span, " ")
        outside.update(set(_words(text)))
    return sorted(
        w
        for w, n in outside.items()
        if n >= min_questions and not w.isdigit() and n >= min_ratio * name_df.get(w, 0)
    )


def common_english_words(vocabulary: Sequence[str], top: int = COMMON_ENGLISH_WORDS) -> list[str]:
    """The first ``top`` whole words (letters only, two or more) of a WordPiece vocabulary, in its order."""
    words = [w for w in vocabulary if len(w) > 1 and w.isalpha() and w.isascii() and w.islower()]
    return words[:top]


def learn_linking_words(
    driver: Driver, kg: str, questions: Sequence[LabelledQuestion], vocabulary: Sequence[str] = ()
) -> dict[str, object]:
    records = driver.execute_query(
        render("training/entity_names_degrees"), {"kg": kg}, routing_=RoutingControl.READ
    ).records
    name_df: Counter[str] = Counter()
    several: list[tuple[int, str, str]] = []
    for r in records:
        name = str(r["name"] or "")
        words = _words(name)
        name_df.update(set(words))
        if len(_initial_words(words)) >= 2:
            several.append((int(r["degree"]), str(r["id"]), name))
    several.sort(reverse=True)
    initials: dict[str, list[str]] = defaultdict(list)
    for _degree, entity, name in several[: max(1, round(len(several) * INITIALS_SHARE))]:
        for words in initialled(_words(name)):
            letters = "".join(w[0] for w in _initial_words(words))
            if 2 <= len(letters) <= 5 and entity not in initials[letters]:
                initials[letters].append(entity)
    return {
        "entities": len(records),
        "question_words": question_words(questions, name_df),
        "name_words": dict(name_df.most_common(COMMON_NAME_WORDS)),
        "initials": {k: v[:3] for k, v in sorted(initials.items())},
        "common_words": common_english_words(vocabulary),
    }


def save_linking_words(words: dict[str, object], directory: Path) -> Path:
    path = directory / WORDS_FILE
    write_json_atomically(path, words)
    return path
