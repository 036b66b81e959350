"""Text rules shared by every layer: the bracket convention for topic entities, and answer normalisation."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence

# MetaQA marks the topic entity as "[Lee Pace]"; users may too. Nested or empty brackets mark nothing.
BRACKET = re.compile(r"\[([^\[\]]+)\]")
_BRACKET_CHARS = re.compile(r"[\[\]]")
_SPACES = re.compile(r"\s+")

_APOSTROPHES = re.compile(r"['\u2019`]")
_NON_WORD = re.compile(r"[^\w\s]|_")
_ARTICLES = re.compile(r"\b(?:a|an|the)\b")


def bracketed(question: str) -> list[str]:
    """The texts inside ``[brackets]``, stripped, in order, without repeats."""
    return list(dict.fromkeys(m.group(1).strip() for m in BRACKET.finditer(question) if m.group(1).strip()))


def without_brackets(question: str) -> str:
    """Every ``[`` and ``]`` replaced by a space, whitespace collapsed: the question as a user would type it.

    The database's ``kgqa.subgraphrag.retrieve`` embeds the same string, so both roads embed alike.
    """
    return _SPACES.sub(" ", _BRACKET_CHARS.sub(" ", question)).strip()


def mask_topic(question: str, spans: Sequence[str] | None, mask: str) -> str:
    """The question with its topic entity replaced by ``mask``: every ``[bracketed]`` name, else the first of
    ``spans`` (the linked words) found in it, ignoring case; whitespace collapsed.

    What a model that should learn the question's shape rather than its entity reads: GSR's chain generator,
    and SubgraphRAG's question embedding (a long film title otherwise outweighs "directed" in z_q). The
    database's ``QuestionText.maskTopic`` is the same rule.
    """
    text, replaced = BRACKET.subn(lambda _m: mask, question)
    for span in spans or ():
        if replaced:
            break
        if span:
            text, replaced = re.subn(re.escape(span), lambda _m: mask, text, count=1, flags=re.IGNORECASE)
    return " ".join(text.split())


def normalize_answer(text: str) -> str:
    """The one form answers are compared in: ``"The Lord of the Rings!"`` -> ``"lord of rings"``.

    Accents and case folded, apostrophes deleted (``Schindler's`` -> ``schindlers``, so a reply without the
    apostrophe still matches), other punctuation and underscores become spaces, the articles a/an/the
    dropped. A string that normalises to nothing (``"The The"``) keeps its lowercased, trimmed self so that
    it cannot match every other such string.
    """
    decomposed = unicodedata.normalize("NFKD", str(text))
    plain = "".join(ch for ch in decomposed if not unicodedata.combining(ch)).lower()
    plain = _APOSTROPHES.sub("", plain)
    plain = _NON_WORD.sub(" ", plain)
    plain = _ARTICLES.sub(" ", plain)
    plain = _SPACES.sub(" ", plain).strip()
    return plain or _SPACES.sub(" ", str(text).lower()).strip()


def normalized_unique(items: Iterable[str]) -> list[str]:
    """Normalised strings, repeats dropped, first occurrence order kept."""
    return list(dict.fromkeys(normalize_answer(item) for item in items))
