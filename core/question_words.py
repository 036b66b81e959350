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
    for from by with kind sort type one ones other else""".split()
)
# "which city", "what kind of music", "in which country", "name the bands": the noun after the question word
_WHICH = re.compile(
    r"\b(?:which|what|name(?: the| a| all)?|list(?: the| all)?)\s+"
    r"((?:kinds? of |sorts? of |types? of )?[a-z][a-z\-]*)",
    re.IGNORECASE,
)
_WH = re.compile(r"\b(who|whom|whose|where|when)\b", re.IGNORECASE)
_HOW_MANY = re.compile(r"\bhow (many|much)\b", re.IGNORECASE)


def asked_for(question: str) -> str:
    """The kind of thing the question asks for, in words ("" when it does not say)."""
    text = question.lower()
    which = _WHICH.search(text)
    if which:
        noun = which.group(1).split()[-1]
        if noun not in _NOT_A_KIND:
            return noun
    if _HOW_MANY.search(text):
        return "number amount"
    wh = _WH.search(text)
    if wh:
        return WH_KINDS[wh.group(1).lower()]
    return ""
