"""What kind of answer a question asks for, from its English alone: "which city" asks for a city, "who" for a
person, "where" for a place, "when" for a time. Generic English, no KG's vocabulary: the words returned are
compared by the sentence encoder with what a KG's relations arrive at (learned per KG by ``kgqa train all``).
"""

from __future__ import annotations

import re

# The kind each question word asks for, in words a sentence encoder places near the kinds KGs name.
WH_KINDS = {
    "who": "person",
    "whom": "person",
    "whose": "person",
    "where": "place location",
    "when": "date year time",
}
_NOT_A_KIND = frozenset(
    """is are was were be been do does did has have had can could will would should the a an of in on at to
    for from by with and or that kind sort type one ones other else s""".split()
)
# Irregular past forms, which end a kind's phrase as "-ed" does ("which politician went to ...": "politician")
_IRREGULAR_PAST = frozenset(
    """went won wrote made sang grew began became took gave came ran led left met built bought brought
    fought taught thought found held kept lost paid said sold sent spent stood told drew drove flew knew rode
    rose saw shot spoke stole swam threw wore broke chose got hid meant beat fell fed felt fled forgot hung
    heard let put quit set sat slept struck tore wound""".split()
)
# The question's own question word: the first one, so that a relative clause ("how did the man who wrote it
# die") does not say what is asked.
_FIRST_WH = re.compile(r"\b(who|whom|whose|where|when|how)\b", re.IGNORECASE)
_WHICH = re.compile(r"\b(?:which|what)\b|^\W*(?:name|list)\b", re.IGNORECASE)
# words before the kind that do not say it: "which other films", "what kind of music", "which 1998 games"
_BEFORE_KIND = r"^(?:\s+(?:the|a|all|other|another|different|\d+)\b)*(?:\s+(?:kinds?|sorts?|types?) of\b)?"
_KIND_OF = re.compile(_BEFORE_KIND, re.IGNORECASE)
_WORD = re.compile(r"\s*([a-z][a-z\-]*)", re.IGNORECASE)
_HOW_MANY = re.compile(r"\bhow (many|much)\b", re.IGNORECASE)
NOUN_WORDS = 2  # "punk bands", "tv show": the kind is said by the noun at the end of its phrase


def _kind_phrase(text: str) -> str:
    """The noun after "which" or "what" that names a kind: the last of at most :data:`NOUN_WORDS` words
    before a function word, a verb in the past or the end ("which punk bands are ...": "bands"; "which
    famous composer died ...": "composer"), or the first when the second may be a verb ("which actor plays
    batman": "actor") or the first is a plural ("which countries border ...": "countries")."""
    words: list[str] = []
    rest = text[_KIND_OF.match(text).end() :]  # type: ignore[union-attr]
    while len(words) < NOUN_WORDS:
        word = _WORD.match(rest)
        if word is None or _ends_phrase(word.group(1), bool(words)):
            break
        words.append(word.group(1))
        rest = rest[word.end() :]
        if _plural(word.group(1)):
            break
    if len(words) == NOUN_WORDS:
        after = _WORD.match(rest)
        if after is not None and not _ends_phrase(after.group(1), True):
            words.pop()  # "actor plays batman": the second word is the verb
    return words[-1] if words else ""


def _ends_phrase(word: str, after_noun: bool) -> bool:
    return word in _NOT_A_KIND or (after_noun and (word.endswith("ed") or word in _IRREGULAR_PAST))


def _plural(word: str) -> bool:
    return len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is"))


def asked_for(question: str) -> str:
    """The kind of thing the question asks for, in words ("" when it does not say): the noun a "which" or
    "what" names ("where is spain, what continent": "continent"), else what the question's first question
    word asks for, so that a relative clause ("how did the man who wrote it die") does not say it."""
    text = question.lower()
    for which in _WHICH.finditer(text):
        phrase = _kind_phrase(text[which.end() :])
        if phrase:
            return phrase
    first = _FIRST_WH.search(text)
    if first is None:
        return ""
    if first.group(1) == "how":
        return "number amount" if _HOW_MANY.match(text, first.start()) else ""
    return WH_KINDS[first.group(1)]
