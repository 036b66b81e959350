"""What kind of thing each step of a KG arrives at, read off the KG: "which city", "who" and "which band" ask
for a kind, and a relation's name often does not say it (``location.location.adjoin_s..`` arrives at
countries, ``film.director.film`` walked in arrives at people).

For every relation walked either way, a sample of the entities it arrives at is read from the database with
the relations they have. An entity's kind is told by its own relations: for a dotted name the subject words
of the relations it is the head of (``people.person.*``: person), for a plain name the relation words of the
relations it is the tail of (``directed_by``: directed by). The step's kind is the ``words`` most frequent
among its sample. Written as ``{"out:rel" | "in:rel": "words"}``; FRAG's ranker compares it with what the
question asks for.

The path scorer's synthesised questions name a kind ("which city is ..."): :func:`arrival_kinds` gives each
step the head kinds most of its arrivals have, and :func:`specific_kinds` leaves out the ones so many steps
arrive at that they say nothing ("topic").
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
# a kind names a step's arrivals when at least this share of them are of it ("which country")
KIND_SHARE = 0.5
BROAD_SHARE = 0.25


def entity_kind(outgoing: Sequence[str], incoming: Sequence[str]) -> list[str]:
    """The words that say what an entity is, from the relation types it has."""
    words = [relation_words(r).subject for r in outgoing if relation_words(r).subject]
    if not words:
        words = [relation_words(r).phrase for r in incoming]
    return list(dict.fromkeys(words))


def arrivals(driver: Driver, kg: str, step: Step, sample: int) -> list[tuple[list[str], list[str]]]:
    """A sample of the entities ``step`` arrives at, each as the relation types it has out and in."""
    records = driver.execute_query(
        render("training/arrivals", rel=step[0], way=step[1]),
        {"kg": kg, "sample": sample},
        routing_=RoutingControl.READ,
    ).records
    return [([str(x) for x in r["outgoing"]], [str(x) for x in r["incoming"]]) for r in records]


class Arrivals:
    """The sample of each step's arrivals (:func:`arrivals`), read from the database once per step: FRAG's
    answer types and the path scorer's kind words read the same sample in one training."""

    def __init__(self, driver: Driver, kg: str, sample: int = SAMPLE) -> None:
        self.driver, self.kg, self.sample = driver, kg, sample
        self._read: dict[Step, list[tuple[list[str], list[str]]]] = {}

    def __call__(self, step: Step) -> list[tuple[list[str], list[str]]]:
        if step not in self._read:
            self._read[step] = arrivals(self.driver, self.kg, step, self.sample)
        return self._read[step]


def learn_answer_types(
    read: Arrivals,
    steps: Sequence[Step],
    words: int = WORDS,
    progress: Callable[[str], None] = lambda _m: None,
) -> dict[str, str]:
    out: dict[str, str] = {}
    for step in tqdm(steps, desc="what each relation arrives at", leave=False):
        counts: Counter[str] = Counter()
        for outgoing, incoming in read(step):
            counts.update(entity_kind(outgoing, incoming))
        out[kind_key(step)] = " ".join(w for w, _n in counts.most_common(words))
    progress(f"the kinds of thing {len(out)} steps arrive at")
    return out


def head_kinds(outgoing: Sequence[str]) -> set[str]:
    """The kinds an entity is the head of by its dotted relation names (``people.person.*``: person); none
    on a KG whose relation names do not say their head's kind."""
    return {relation_words(r).subject for r in outgoing if relation_words(r).subject}


def arrival_kinds(
    read: Arrivals, steps: Sequence[Step], share: float = KIND_SHARE
) -> dict[Step, tuple[str, ...]]:
    """The kinds that at least ``share`` of each step's sampled arrivals are of, the most common first."""
    out: dict[Step, tuple[str, ...]] = {}
    for step in tqdm(dict.fromkeys(steps), desc="which kinds each step arrives at", leave=False):
        reached = read(step)
        counts: Counter[str] = Counter()
        for outgoing, _incoming in reached:
            counts.update(head_kinds(outgoing))
        common = [k for k, n in counts.items() if n >= share * len(reached)]
        kinds = sorted(common, key=lambda k: (-counts[k], k))
        if kinds:
            out[step] = tuple(kinds)
    return out


def specific_kinds(
    kinds: dict[Step, tuple[str, ...]], broad_share: float = BROAD_SHARE, most: int = 3
) -> dict[Step, tuple[str, ...]]:
    """Each step's ``most`` first kinds that are worth asking for: a kind that more than ``broad_share`` of
    the steps arrive at (every entity is a "topic") says nothing of any of them."""
    spread: Counter[str] = Counter(k for named in kinds.values() for k in named)
    broad = {k for k, n in spread.items() if n > broad_share * len(kinds)}
    out = {s: tuple(k for k in named if k not in broad)[:most] for s, named in kinds.items()}
    return {s: named for s, named in out.items() if named}
