"""SimGRAG's relation phrases for one KG: the words its questions use for each relation.

SimGRAG matches the words of a question to the KG's relations by embedding distance; a relation's name
("has_tags", "people.person.place_of_birth") is often not how people ask for it ("what is X about", "where
was X born"). From people's questions that name their chain, each word that questions using a relation
share more than chance is kept as one of that relation's phrases. Synthesised questions never teach a
phrase: their words are the relation's own name, or the paraphraser's guesses at it, which put "gender"
among a genre relation's words.

- a phrase is counted once per question whose chain uses the relation (the topic entity's words never);
- it is kept for a relation when at least ``min_count`` such questions use it, and at least ``min_recall`` of
  the relation's questions (a word a handful of 16,000 questions use is a paraphraser's slip, "toward" for
  "directed by", not how people ask), and at least ``min_share`` of all questions that use the phrase use
  that relation;
- at most ``per_relation`` phrases per relation, the most used first.

The words of a relation's own name are always among its phrases: its role ("place of birth") and, for a
dotted name, what its subject is ("person"). Written to ``<kg>/simgrag/phrases.json`` as
``{"relations": {relation: [phrase, ...]}}``; ``kgqa.simgrag.*`` reads it.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path

from kgqa.core.relation_text import relation_words
from kgqa.models.kg_models import write_json_atomically
from kgqa.training.questions import LabelledQuestion
from kgqa.training.synthesis import SOURCE as SYNTHESISED

PHRASES_FILE = "phrases.json"
# Function words and the words that only ask ("what", "which"): never a relation's phrase on any KG.
FUNCTION_WORDS = frozenset(
    """a an the of in on at to for from by with as is are was were be been being do does did what which who
    whom whose when where why how that this these those it its and or but not no any some all both each me
    my i you your we our they their them he she his her him can could would should will shall may might must
    has have had there here than then also just only very so such tell give list name show find please
    about into out up down over under again s t""".split()
)
_WORD = re.compile(r"[a-z][a-z'\-]*")


def _phrases(text: str, spans: Sequence[str]) -> set[str]:
    lowered = text.lower()
    for span in sorted((s.lower() for s in spans if s), key=len, reverse=True):
        lowered = lowered.replace(span, " ")
    words = [w.strip("'-") for w in _WORD.findall(lowered)]
    # single words: a pair ("films directed") carries the thing asked for into the relation's name, and then
    # "which films" reads as the relation rather than as the kind of answer
    return {w for w in words if w and w not in FUNCTION_WORDS and len(w) > 2}


def learn_relation_phrases(
    questions: Sequence[LabelledQuestion],
    relations: Sequence[str],
    min_count: int = 3,
    min_share: float = 0.8,
    per_relation: int = 12,
    min_recall: float = 0.003,
) -> dict[str, list[str]]:
    """relation -> its phrases, name words first (see the module's docstring)."""
    by_phrase: Counter[str] = Counter()
    with_relation: dict[str, Counter[str]] = defaultdict(Counter)
    asked: Counter[str] = Counter()
    for q in questions:
        if not q.chain or q.source == SYNTHESISED:
            continue
        phrases = _phrases(q.text, q.topic_spans)
        by_phrase.update(phrases)
        for relation in {r for r, _w in q.chain}:
            with_relation[relation].update(phrases)
            asked[relation] += 1
    out: dict[str, list[str]] = {}
    for relation in relations:
        words = relation_words(relation)
        named = [p for p in dict.fromkeys([words.role, words.phrase, words.subject]) if p]
        least = max(min_count, min_recall * asked[relation])
        scored = [
            (n, p)
            for p, n in with_relation.get(relation, Counter()).items()
            if n >= least and n / by_phrase[p] >= min_share
        ]
        learned = [p for _n, p in sorted(scored, key=lambda t: (-t[0], t[1]))]
        out[relation] = list(dict.fromkeys(named + learned))[: per_relation + len(named)]
    return out


def save_relation_phrases(phrases: dict[str, list[str]], directory: Path) -> Path:
    path = directory / PHRASES_FILE
    write_json_atomically(path, {"relations": phrases})
    return path
