"""Other ways of asking a question pattern, for training the question classifiers on more than MetaQA's own
wording (``kgqa train classifiers --paraphrases N``).

MetaQA's questions come from a few hundred phrasings; a user says "pictures", "appeared in", "made" or "who
penned", misspells a word, drops the question mark or starts with "hey,". Each rewrite here swaps words for
everyday synonyms drawn from the relation vocabulary (films, acting, directing, writing, genres, languages,
release years), then adds the noise a user types. The table is general English, written from the relations'
meaning, not from any question set, and nothing here reads MetaQA test or our free-form sets.
"""

from __future__ import annotations

import random
import re

# (pattern, alternatives): a match is replaced by one alternative chosen at random (itself included, so the
# original wording stays common). Longer phrases come first: a phrase rewritten is not rewritten again.
SYNONYMS: list[tuple[str, list[str]]] = [
    (r"\b(starred|acted|appeared) in\b", ["starred in", "acted in", "appeared in", "played in", "was in"]),
    (r"\bappears in\b", ["appears in", "stars in", "acts in", "is in", "shows up in"]),
    (r"\b(starred|acted) by\b", ["starred by", "acted by", "starring", "featuring", "with"]),
    (
        r"\bstarred together with\b|\bacted together with\b",
        ["starred together with", "acted alongside", "co-starred with"],
    ),
    (r"\btogether with\b", ["together with", "alongside", "with"]),
    (r"\bdirected by\b", ["directed by", "made by", "helmed by", "by the director"]),
    (r"\bwritten by\b", ["written by", "penned by", "scripted by", "by the writer"]),
    (r"\brelease years\b|\brelease dates\b", ["release years", "release dates", "years", "premiere years"]),
    (r"\brelease year\b|\brelease date\b", ["release year", "release date", "year", "premiere"]),
    (r"\bwere released\b", ["were released", "came out", "premiered", "were out"]),
    (r"\bwas released\b", ["was released", "came out", "premiered"]),
    (r"\brelease\b", ["release", "come out", "premiere"]),
    (r"\bdirected\b", ["directed", "made", "helmed", "shot"]),
    (r"\bwrote\b", ["wrote", "penned", "scripted", "authored"]),
    (r"\bmovies\b|\bfilms\b", ["movies", "films", "pictures", "flicks", "titles"]),
    (r"\bmovie\b|\bfilm\b", ["movie", "film", "picture", "flick"]),
    (r"\bdirectors\b", ["directors", "filmmakers"]),
    (r"\bdirector\b", ["director", "filmmaker"]),
    (r"\bwriters\b", ["writers", "screenwriters", "authors"]),
    (r"\bwriter\b", ["writer", "screenwriter", "author"]),
    (r"\bactors\b", ["actors", "stars", "cast members", "performers"]),
    (r"\bactor\b", ["actor", "star", "cast member", "performer"]),
    (r"\bgenres\b", ["genres", "kinds", "types", "categories"]),
    (r"\bgenre\b", ["genre", "kind", "type", "category"]),
    (r"\blanguages\b", ["languages", "tongues"]),
    (r"\blanguage\b", ["language", "tongue"]),
    (r"\bwho\b", ["who", "which person", "what person"]),
    (r"\bwhat are\b", ["what are", "list", "name", "tell me"]),
    (r"\bwhich\b", ["which", "what"]),
]
_COMPILED = [(re.compile(p), alternatives) for p, alternatives in SYNONYMS]
FILLERS = ["hey ", "quick question: ", "can you tell me ", "do you know ", "please tell me ", "i wonder "]


def _typo(word: str, rng: random.Random) -> str:
    """One slip: a dropped, doubled or swapped letter."""
    i = rng.randrange(1, len(word) - 1)
    kind = rng.randrange(3)
    if kind == 0:
        return word[:i] + word[i + 1 :]
    if kind == 1:
        return word[:i] + word[i] + word[i:]
    return word[: i - 1] + word[i] + word[i - 1] + word[i + 1 :]


def paraphrase(text: str, rng: random.Random, swap: float = 0.6) -> str:
    """A rewrite of ``text`` (a masked question pattern): each synonym match swapped with probability
    ``swap``, then maybe a filler in front, a typo in one word and no question mark. The entity placeholder
    (not letters only) never gets a typo."""
    taken: list[tuple[int, int]] = []
    edits: list[tuple[int, int, str]] = []
    for pattern, alternatives in _COMPILED:
        for match in pattern.finditer(text):
            start, end = match.span()
            if any(start < b and a < end for a, b in taken):
                continue
            taken.append((start, end))
            if rng.random() < swap:
                edits.append((start, end, rng.choice(alternatives)))
    out = text
    for start, end, new in sorted(edits, reverse=True):
        out = out[:start] + new + out[end:]
    if rng.random() < 0.15:
        out = rng.choice(FILLERS) + out
    if rng.random() < 0.25:
        words = out.split(" ")
        long_words = [i for i, w in enumerate(words) if len(w) >= 5 and w.isalpha()]
        if long_words:
            i = rng.choice(long_words)
            words[i] = _typo(words[i], rng)
            out = " ".join(words)
    if rng.random() < 0.3:
        out = out.rstrip(" ?")
    return out
