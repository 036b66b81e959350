"""Questions synthesised from a KG's own relation paths: what every KG has, with or without a question set.

1. **Which steps.** Every relation of the KG, walked out (from its heads) and in (from its tails), is a
   one-hop chain. Its topics are a seeded sample of the entities that can take the step, more for a
   relation with more triples (``topics_per_fact``), between ``min_topics`` and ``max_topics``.
2. **Walks.** Each sampled topic's typed neighbourhood is read from the database (at most ``fanout``
   relationships). A (topic, step) whose answer set has 1 to ``max_answers`` entities is a one-hop question.
   Where a one-hop step reaches at most ``max_bridge`` entities (one director, one spouse), their
   neighbourhoods are read too and every second step out of them is a two-hop chain: "the place of birth of
   the director of X". A chain seen from fewer than ``min_support`` topics is dropped; each kept chain keeps
   at most ``per_chain`` questions, and at most ``max_chains`` two-hop chains are kept, the most frequent
   first: chains are sampled by how often they occur, with a cap.
3. **Wording** (:mod:`kgqa.training.wording`): each question is worded from its relations' names, in one of
   two families; ``B`` is held out from every model to measure the route, and says the relations' words in
   other words, as people do.

The topic is named in the text as the KG names it, so that a model that masks it reads what a linked
question gives it.
"""

from __future__ import annotations

import dataclasses
import random
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from kgqa.core.chains import Chain, Step, is_round_trip
from kgqa.core.relation_text import asked_role, relation_words
from kgqa.graph.cypher import render
from kgqa.training.questions import LabelledQuestion
from kgqa.training.wording import (
    Paraphraser,
    QuestionWords,
    word_kind_question,
    word_question,
    word_round_trip,
)
from neo4j import Driver, RoutingControl
from tqdm import tqdm

SOURCE = "synthesised"


@dataclass(frozen=True)
class SynthesisConfig:
    min_topics: int = 4
    max_topics: int = 40
    topics_per_fact: float = 0.01  # a relation with 10,000 triples gets 100 topics (capped at max_topics)
    fanout: int = 400
    max_answers: int = 20
    max_bridge: int = 2  # two-hop chains only through steps that reach at most this many entities
    min_support: int = 2
    per_chain: int = 4  # questions per two-hop chain at most (one-hop chains keep max_topics)
    max_chains: int = 1000  # two-hop chains kept, the most frequent first
    family_b_share: float = 0.2  # questions worded in the held-out family B
    paraphrase_share: float = 0.25  # training questions whose relation words are said in other words
    seed: int = 13


@dataclass
class _Walk:
    topic: str
    chain: Chain
    answers: tuple[str, ...]


def _steps(driver: Driver, kg: str) -> list[tuple[Step, int]]:
    records = driver.execute_query(render("load/relation_counts"), {"kg": kg}, routing_=RoutingControl.READ)
    out = []
    for r in records.records:
        out.append(((str(r["name"]), "out"), int(r["count"])))
        out.append(((str(r["name"]), "in"), int(r["count"])))
    return out


def _sample_topics(
    driver: Driver, kg: str, steps: Sequence[tuple[Step, int]], cfg: SynthesisConfig, rng: random.Random
) -> dict[Step, list[str]]:
    sampled: dict[Step, list[str]] = {}
    for step, count in tqdm(steps, desc="sampling topics per relation", leave=False):
        wanted = max(cfg.min_topics, min(cfg.max_topics, round(count * cfg.topics_per_fact)))
        records = driver.execute_query(
            render("training/sample_topics", rel=step[0], way=step[1]),
            {"kg": kg, "limit": 50_000},
            routing_=RoutingControl.READ,
        ).records
        ids = sorted(str(r["id"]) for r in records)
        sampled[step] = rng.sample(ids, min(wanted, len(ids)))
    return sampled


def _neighbourhoods(
    driver: Driver, kg: str, ids: Sequence[str], fanout: int, desc: str
) -> tuple[dict[str, dict[Step, list[str]]], dict[str, str]]:
    adjacency: dict[str, dict[Step, list[str]]] = {}
    names: dict[str, str] = {}
    unique = list(dict.fromkeys(ids))
    for start in tqdm(range(0, len(unique), 500), desc=desc, leave=False):
        records = driver.execute_query(
            render("training/neighbourhoods"),
            {"kg": kg, "ids": unique[start : start + 500], "fanout": fanout},
            routing_=RoutingControl.READ,
        ).records
        for r in records:
            by_step: dict[Step, list[str]] = defaultdict(list)
            for relation, way, other, name in r["edges"]:
                by_step[(str(relation), str(way))].append(str(other))
                names[str(other)] = str(name)
            adjacency[str(r["id"])] = dict(by_step)
            names[str(r["id"])] = str(r["name"])
    return adjacency, names


def _paraphraser(embed: Callable[[Sequence[str]], object], progress: Callable[[str], None]) -> Paraphraser:
    from kgqa.models.encoder import vocabulary

    paraphraser = Paraphraser(embed, vocabulary())
    progress(
        f"the held-out wordings say relations in other words: {len(paraphraser.words)} words of the encoder"
    )
    return paraphraser


def synthesise(
    driver: Driver,
    kg: str,
    cfg: SynthesisConfig | None = None,
    embed: Callable[[Sequence[str]], object] | None = None,
    progress: Callable[[str], None] = lambda _m: None,
) -> list[LabelledQuestion]:
    """Questions synthesised from ``kg``'s relation paths (see the module's docstring)."""
    cfg = cfg or SynthesisConfig()
    rng = random.Random(cfg.seed)
    steps = _steps(driver, kg)
    if not steps:
        return []
    sampled = _sample_topics(driver, kg, steps, cfg, rng)
    topics = [t for ids in sampled.values() for t in ids]
    adjacency, names = _neighbourhoods(driver, kg, topics, cfg.fanout, "reading topic neighbourhoods")

    walks: list[_Walk] = []
    bridges: dict[str, list[tuple[str, Step]]] = defaultdict(list)  # middle entity -> (topic, first step)
    for step, ids in sampled.items():
        for topic in ids:
            reached = [e for e in dict.fromkeys(adjacency.get(topic, {}).get(step, [])) if e != topic]
            if 1 <= len(reached) <= cfg.max_answers:
                walks.append(_Walk(topic, (step,), tuple(reached)))
            if 1 <= len(reached) <= cfg.max_bridge:
                for middle in reached:
                    bridges[middle].append((topic, step))
    middles, middle_names = _neighbourhoods(driver, kg, list(bridges), cfg.fanout, "reading second hops")
    names.update(middle_names)

    two_hop: dict[tuple[str, Chain], set[str]] = defaultdict(set)
    for middle, firsts in bridges.items():
        for topic, first in firsts:
            for second, others in middles.get(middle, {}).items():
                two_hop[(topic, (first, second))].update(o for o in others if o != topic)
    support: Counter[Chain] = Counter()
    for (_topic, chain), answers in two_hop.items():
        if 1 <= len(answers) <= cfg.max_answers:
            support[chain] += 1
    kept = [c for c, n in support.most_common() if n >= cfg.min_support][: cfg.max_chains]
    kept_set = set(kept)
    per_chain: dict[Chain, list[_Walk]] = defaultdict(list)
    for (topic, chain), answers in sorted(two_hop.items()):
        if chain in kept_set and 1 <= len(answers) <= cfg.max_answers:
            per_chain[chain].append(_Walk(topic, chain, tuple(sorted(answers))))
    for chain in kept:
        group = per_chain[chain]
        rng.shuffle(group)
        walks += group[: cfg.per_chain]
    progress(
        f"{len(walks)} walks: {sum(len(w.chain) == 1 for w in walks)} one-hop over {len(sampled)} steps, "
        f"{sum(len(w.chain) == 2 for w in walks)} two-hop over {len(kept)} chains "
        f"({sum(is_round_trip(c) for c in kept)} round trips)"
    )

    words = QuestionWords(embed) if embed is not None else None
    if words is not None:
        words.prepare([asked_role(w.chain[-1]) for w in walks])
    paraphrase = _paraphraser(embed, progress) if embed is not None else None
    out: list[LabelledQuestion] = []
    for walk in walks:
        family = "B" if rng.random() < cfg.family_b_share else "A"
        topic_name = names.get(walk.topic, walk.topic)
        asked = words(asked_role(walk.chain[-1])) if words is not None else "what"
        # every held-out wording, and a share of the training ones, say the relation in other words
        reworded = family == "B" or rng.random() < cfg.paraphrase_share
        if paraphrase is not None and reworded:
            wording = word_question(walk.chain, topic_name, asked, rng, family, paraphrase)
        else:
            wording = word_question(walk.chain, topic_name, asked, rng, family)
        span = topic_name.lower() if wording.text.islower() else topic_name
        out.append(
            LabelledQuestion(
                text=wording.text,
                topic_ids=(walk.topic,),
                topic_spans=(span,),
                answer_ids=walk.answers,
                chain=walk.chain,
                source=SOURCE,
                wording=family,
            )
        )
    return out


def as_people_ask(
    questions: Sequence[LabelledQuestion], kinds: dict[Step, tuple[str, ...]], share: float, seed: int
) -> list[LabelledQuestion]:
    """``questions`` with synthesised ones worded again the ways people ask; labelled ones are kept as they
    are. A round trip is asked for "other" things "with the same" neighbour; of the other questions, a
    ``share`` of those whose last step arrives at a kind (:func:`kgqa.training.answer_types.arrival_kinds`)
    name it ("which country is ...")."""
    rng = random.Random(seed)
    out: list[LabelledQuestion] = []
    for q in questions:
        if q.source != SOURCE or not q.chain or not q.topic_spans:
            out.append(q)
            continue
        topic, options = q.topic_spans[0], kinds.get(q.chain[-1], ())
        if len(q.chain) == 2 and is_round_trip(q.chain) and rng.random() < 2 * share:
            kind = options[0] if options else relation_words(q.chain[0][0]).subject
            wording = word_round_trip(q.chain, topic, kind, rng)
        elif options and rng.random() < share:
            wording = word_kind_question(q.chain, topic, rng.choice(options), rng)
        else:
            out.append(q)
            continue
        span = topic.lower() if wording.text.islower() else topic
        out.append(dataclasses.replace(q, text=wording.text, topic_spans=(span,), wording=wording.family))
    return out
