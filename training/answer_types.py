"""What kind of thing each step of a KG arrives at, read off the KG: "which city", "who" and "which band" ask
for a kind, and a relation's name often does not say it (``location.location.adjoin_s..`` arrives at
countries, ``film.director.film`` walked in arrives at people).

For every relation walked either way, a sample of the entities it arrives at is read from the database with
the relations they have. An entity's kind is told by its own relations: for a dotted name the subject words
of the relations it is the head of (``people.person.*``: person), for a plain name the relation words of the
relations it is the tail of (``directed_by``: directed by). The step's kind is the ``words`` most frequent
among its sample. Written as ``{"out:rel" | "in:rel": "words"}``; FRAG's ranker compares it with what the
question asks for, and the synthesiser names it in its questions ("which city is ...").
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

from kgqa.core.chains import Step
from kgqa.core.relation_text import relation_words
from kgqa.graph.cypher import render
from kgqa.models.frag_ranker import kind_key
from neo4j import Driver, RoutingControl
from tqdm import tqdm

SAMPLE = 25
WORDS = 3


def entity_kind(outgoing: Sequence[str], incoming: Sequence[str]) -> list[str]:
    """The words that say what an entity is, from the relation types it has."""
    words = [relation_words(r).subject for r in outgoing if relation_words(r).subject]
    if not words:
        words = [relation_words(r).phrase for r in incoming]
    return list(dict.fromkeys(words))


def learn_answer_types(
    driver: Driver,
    kg: str,
    steps: Sequence[Step],
    sample: int = SAMPLE,
    words: int = WORDS,
    progress: Callable[[str], None] = lambda _m: None,
) -> dict[str, str]:
    out: dict[str, str] = {}
    for step in tqdm(steps, desc="what each relation arrives at", leave=False):
        records = driver.execute_query(
            render("training/arrivals", rel=step[0], way=step[1]),
            {"kg": kg, "sample": sample},
            routing_=RoutingControl.READ,
        ).records
        counts: Counter[str] = Counter()
        for r in records:
            counts.update(entity_kind([str(x) for x in r["outgoing"]], [str(x) for x in r["incoming"]]))
        out[kind_key(step)] = " ".join(w for w, _n in counts.most_common(words))
    progress(f"the kinds of thing {len(out)} steps arrive at")
    return out
