"""The entity linker's learned scorer for one KG (``<kg>/linking/link_scorer.json``, read by
``kgqa.link.entities``): the probability that an (entity, span) candidate names a topic of the question, a
logistic model over the features the linker streams (``kgqa.link.candidates``): the hand score, how the name
was matched, how well known the entity is beside the others the same words name, whether the span is ordinary
or question words, where it stands.

It learns from the KG's questions: the labelled ones (what its users typed) and the synthesised ones, whose
topic names are rewritten the ways people type names (lower case, a typo, without accents or punctuation, and,
for the KG's well-connected entities, the name's most distinctive word or its last word: people shorten the
names they know). A question's candidates whose entity is one of its topics are the positives.

The floor under which a candidate is not linked is the score that all but ``floor_share`` of the held-out
questions' best right candidates reach. Only people's questions decide whether the scorer is kept: it is
installed when, on the KG's labelled held-out questions as typed, the linker with it puts a topic first more
often than without it. A KG without labelled questions links by the hand score (questions synthesised from
its names would judge the scorer on the very rewrites it learned).
"""

from __future__ import annotations

import math
import random
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kgqa.graph.cypher import render
from kgqa.models.kg_models import write_json_atomically
from kgqa.retrieve.linking import LinkCandidate, link_candidates, link_entities
from kgqa.training.questions import LabelledQuestion
from kgqa.training.synthesis import SOURCE as SYNTHESISED
from neo4j import Driver, RoutingControl

SCORER_FILE = "link_scorer.json"
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_MINOR = frozenset("a an the of in on at to for and or by with from de la le".split())


@dataclass(frozen=True)
class LinkScorerConfig:
    max_questions: int = 3000  # training questions at most (labelled first, then synthesised)
    max_validation: int = 400
    famous_share: float = 0.1  # the best-connected share of entities whose names people shorten
    vary_labelled_share: float = 0.5  # labelled questions that name their topic exactly, rewritten
    floor_share: float = 0.01
    c: float = 1.0  # the logistic model's inverse regularisation
    seed: int = 13


@dataclass
class LinkScorerReport:
    questions: int
    candidates: int
    kept: bool
    floor: float
    metrics: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class _Asked:
    text: str
    topics: frozenset[str]


def _words(text: str) -> list[str]:
    return _WORD.findall(text)


def _plain(text: str) -> str:
    """Without accents and punctuation: "Amélie" -> "Amelie", "Guns N' Roses" -> "Guns N Roses"."""
    folded = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    return " ".join(_words(folded))


def _typo(word: str, rng: random.Random) -> str:
    """One slip of the keyboard in a word: two letters swapped, one dropped or one doubled."""
    i = rng.randrange(1, len(word) - 1)
    kind = rng.randrange(3)
    if kind == 0:
        return word[:i] + word[i + 1] + word[i] + word[i + 2 :]
    if kind == 1:
        return word[:i] + word[i + 1 :]
    return word[:i] + word[i] + word[i:]


def mention_variants(name: str, famous: bool, name_df: Counter[str], rng: random.Random) -> list[str]:
    """The ways a person may type ``name``: as it is, in lower case, with a typo, without accents or
    punctuation, and, for a well-known entity of several words, by its most distinctive word or its last."""
    out = [name, name.lower()]
    words = _words(name)
    long_words = [w for w in words if len(w) >= 5 and w.isalpha()]
    if long_words:
        word = rng.choice(long_words)
        out.append(name.lower().replace(word.lower(), _typo(word.lower(), rng), 1))
    plain = _plain(name)
    if plain and plain != name:
        out.append(plain.lower())
    content = [w for w in words if w.lower() not in _MINOR and not w.isdigit()]
    if famous and len(content) >= 2:
        distinctive = min(content, key=lambda w: (name_df.get(w.lower(), 0), -len(w)))
        out.append(distinctive.lower())
        if content[-1] != distinctive:
            out.append(content[-1].lower())
    return out


def _replace_first(text: str, span: str, by: str) -> str | None:
    at = text.lower().find(span.lower())
    return None if at < 0 or not span else text[:at] + by + text[at + len(span) :]


def rewrite_mentions(
    questions: Sequence[LabelledQuestion],
    names: dict[str, tuple[str, int]],
    famous_degree: int,
    name_df: Counter[str],
    share: float,
    rng: random.Random,
) -> list[_Asked]:
    """Each question with, for ``share`` of those that name a topic exactly, that name typed another way."""
    out = []
    for q in questions:
        text = q.text
        topic = q.topic_ids[0] if q.topic_ids else None
        name, degree = names.get(topic, ("", 0)) if topic else ("", 0)
        span = next((s for s in q.topic_spans if s and s.lower() == name.lower()), None)
        if span and rng.random() < share:
            variant = rng.choice(mention_variants(name, degree >= famous_degree, name_df, rng)[1:])
            text = _replace_first(text, span, variant) or text
        out.append(_Asked(text, frozenset(q.topic_ids)))
    return out


def _entity_names(driver: Driver, kg: str) -> tuple[dict[str, tuple[str, int]], Counter[str]]:
    records = driver.execute_query(
        render("training/entity_names_degrees"), {"kg": kg}, routing_=RoutingControl.READ
    ).records
    names = {str(r["id"]): (str(r["name"] or ""), int(r["degree"])) for r in records}
    name_df: Counter[str] = Counter()
    for name, _degree in names.values():
        name_df.update({w.lower() for w in _words(name)})
    return names, name_df


def _rows(
    driver: Driver, kg: str, asked: Sequence[_Asked], progress: Callable[[str], None]
) -> list[tuple[_Asked, list[LinkCandidate]]]:
    out = []
    for i, q in enumerate(asked):
        out.append((q, link_candidates(driver, q.text, kg)))
        if (i + 1) % 500 == 0:
            progress(f"  the linker's candidates of {i + 1} / {len(asked)} questions")
    return out


def fit(rows: Sequence[tuple[_Asked, list[LinkCandidate]]], c: float, seed: int) -> tuple[list[float], float]:
    """(weights, bias) of a logistic model, the features in the order of their names: does the candidate name
    a topic of its question."""
    import numpy as np
    from sklearn.linear_model import LogisticRegression

    names = sorted(rows[0][1][0].features)
    x = [[cand.features[n] for n in names] for _q, cands in rows for cand in cands]
    y = [int(cand.id in q.topics) for q, cands in rows for cand in cands]
    model = LogisticRegression(C=c, max_iter=5000, random_state=seed)
    model.fit(np.asarray(x, dtype=float), np.asarray(y))
    return [float(w) for w in model.coef_[0]], float(model.intercept_[0])


def _probability(weights: Sequence[float], bias: float, features: dict[str, float]) -> float:
    z = bias + sum(w * features[n] for w, n in zip(weights, sorted(features), strict=True))
    return 1 / (1 + math.exp(-z))


def learned_floor(
    rows: Sequence[tuple[_Asked, list[LinkCandidate]]], weights: Sequence[float], bias: float, share: float
) -> float:
    """The score that all but ``share`` of the questions' best-scored right candidates reach."""
    best = sorted(
        max(_probability(weights, bias, cand.features) for cand in cands if cand.id in q.topics)
        for q, cands in rows
        if any(cand.id in q.topics for cand in cands)
    )
    return best[int(share * len(best))] if best else 0.0


def topic_first(driver: Driver, kg: str, asked: Sequence[_Asked]) -> tuple[float, float]:
    """(share of questions whose first linked entity is a topic, share with nothing linked)."""
    first = nothing = 0
    for q in asked:
        linked = link_entities(driver, q.text, kg)
        first += bool(linked) and linked[0].id in q.topics
        nothing += not linked
    n = max(len(asked), 1)
    return round(first / n, 4), round(nothing / n, 4)


def train_link_scorer(
    driver: Driver,
    kg: str,
    labelled: Sequence[LabelledQuestion],
    synthesised: Sequence[LabelledQuestion],
    validation: Sequence[LabelledQuestion],
    directory: Path,
    config: LinkScorerConfig = LinkScorerConfig(),
    progress: Callable[[str], None] = print,
) -> LinkScorerReport:
    """Fits and installs ``kg``'s link scorer in ``directory``, beside the linker's words it reads."""
    path = directory / SCORER_FILE
    path.unlink(missing_ok=True)  # the candidates and the baseline are the hand score's
    people = [q for q in validation if q.source != SYNTHESISED]
    if not labelled or not people:
        progress("the link scorer: no labelled questions to judge it on; the hand score links")
        return LinkScorerReport(0, 0, False, 0.0, {})
    rng = random.Random(config.seed)
    names, name_df = _entity_names(driver, kg)
    degrees = sorted((d for _n, d in names.values()), reverse=True)
    famous = degrees[min(len(degrees) - 1, int(config.famous_share * len(degrees)))] if degrees else 0
    labelled = rng.sample(list(labelled), min(len(labelled), config.max_questions))
    synthesised = rng.sample(list(synthesised), min(len(synthesised), config.max_questions - len(labelled)))
    train = rewrite_mentions(labelled, names, famous, name_df, config.vary_labelled_share, rng)
    train += rewrite_mentions(synthesised, names, famous, name_df, 1.0, rng)
    held = [
        _Asked(q.text, frozenset(q.topic_ids))
        for q in rng.sample(people, min(len(people), config.max_validation))
    ]
    progress(f"the link scorer: {len(train)} training, {len(held)} held-out labelled questions")
    rows = [r for r in _rows(driver, kg, train, progress) if r[1]]
    if not any(c.id in q.topics for q, cands in rows for c in cands):
        return LinkScorerReport(len(rows), 0, False, 0.0, {})
    weights, bias = fit(rows, config.c, config.seed)
    held_rows = [r for r in _rows(driver, kg, held, progress) if r[1]]
    floor = learned_floor(held_rows or rows, weights, bias, config.floor_share)
    hand_first, hand_nothing = topic_first(driver, kg, held)
    write_json_atomically(
        path,
        {
            "features": sorted(rows[0][1][0].features),  # the order fit() reads them in
            "weights": weights,
            "bias": bias,
            "floor": floor,
            "trained_on": f"{len(rows)} questions ({len(labelled)} labelled)",
        },
    )
    learned_first, learned_nothing = topic_first(driver, kg, held)
    kept = learned_first > hand_first
    if not kept:
        path.unlink(missing_ok=True)
    metrics = {
        "topic_first_hand": hand_first,
        "topic_first_learned": learned_first,
        "nothing_linked_hand": hand_nothing,
        "nothing_linked_learned": learned_nothing,
        "floor": round(floor, 4),
    }
    progress(
        f"the link scorer puts a topic first for {learned_first:.3f} of {len(held)} held-out labelled "
        "questions "
        f"(hand score {hand_first:.3f}): " + ("kept" if kept else "not kept")
    )
    return LinkScorerReport(len(rows), sum(len(c) for _q, c in rows), kept, floor, metrics)
