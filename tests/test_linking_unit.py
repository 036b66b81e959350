"""Entity linking helpers that need no database: escaping, edit distance, normalisation."""

from __future__ import annotations

import random

from kgqa.retrieve.linking import allowed_edits, escape_lucene, levenshtein, normalize


def _reference(a: str, b: str) -> int:
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def test_bounded_levenshtein_matches_reference() -> None:
    rng = random.Random(3)
    for _ in range(5000):
        a = "".join(rng.choice("abc") for _ in range(rng.randint(0, 8)))
        b = "".join(rng.choice("abc") for _ in range(rng.randint(0, 8)))
        bound = rng.randint(0, 3)
        exact = _reference(a, b)
        assert levenshtein(a, b, bound) == (exact if exact <= bound else bound + 1)


def test_lucene_special_characters_are_escaped() -> None:
    raw = 'Lee Pace"}) DETACH DELETE n // (a OR b) AND c~ * ? : \\ / [x] {y} ^ ! + - && ||'
    escaped = escape_lucene(raw)
    for ch in '"(){}[]^~*?:\\/!+-':
        assert f"\\{ch}" in escaped
    assert " AND " not in escaped and " OR " not in escaped


def test_normalize_and_typo_budget() -> None:
    assert normalize("Amélie  (2001)!") == "amelie 2001"
    assert normalize("Ocean's Eleven") == "ocean s eleven"
    assert allowed_edits(4) == 0 and allowed_edits(7) == 1 and allowed_edits(20) == 3
