"""GSR's training examples: a question with its topic entity masked -> the relation chain walked from it.

Two tasks, one model, as in GSR:
- ``retrieval``: MetaQA dev questions (never test) -> the chain of their question type
  (``core.metaqa.qtype_steps``: ``movie_to_director_to_movie`` is directed_by out, directed_by in);
- ``index``: one pseudo-question per relation and direction ("[MASK] directed by", "directed by [MASK]")
  -> that single step, so that every relation token is learned even where few questions use it;
- ``path``: questions synthesised from the chains the KG can actually walk (:func:`walkable_chains`), worded
  from the relations' texts by a few generic English patterns (:func:`path_examples`): multi-hop chains
  for any KG, even one that has no question set.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from kgqa.core.metaqa import qtype_steps, read_questions
from kgqa.models.gsr import MASK, masked

Step = tuple[str, str]  # (relation, "out" | "in")


@dataclass(frozen=True)
class Example:
    text: str  # lower-cased, the topic entity replaced by [MASK]
    chain: tuple[Step, ...]
    task: str  # "retrieval" | "index" | "path"


def metaqa_examples(root: str | None = None) -> list[Example]:
    out = []
    for hops in (1, 2, 3):
        for q in read_questions("dev", hops, root=root):
            if q.qtype:
                out.append(Example(masked(q.question), tuple(qtype_steps(q.qtype)), "retrieval"))
    return out


def index_examples(relations: dict[str, str]) -> list[Example]:
    """relations: KG relation name -> its readable text."""
    out = []
    for name, text in relations.items():
        out.append(Example(f"{MASK} {text}", ((name, "out"),), "index"))
        out.append(Example(f"{text} {MASK}", ((name, "in"),), "index"))
    return out


def walkable_chains(
    signatures: Iterable[tuple[Sequence[str], Sequence[str], int]], max_hops: int = 3, share: float = 0.05
) -> list[tuple[Step, ...]]:
    """The chains of 1..max_hops steps the KG supports, from its entity signatures (outgoing types, incoming
    types, how many entities have exactly these): a step ``(r, "out")`` leaves an entity with an outgoing r
    and arrives at one with an incoming r. Two steps join when at least ``share`` of the entities a step
    arrives at can take the next one, so that a name shared by a film and a person does not make every
    chain look walkable."""
    leaves: set[Step] = set()  # steps some entity can start
    arriving: dict[Step, int] = {}  # entities a step can arrive at
    joined: dict[tuple[Step, Step], int] = {}  # entities that join (arriving step, leaving step)
    for outgoing, incoming, count in signatures:
        starts = {(r, "out") for r in outgoing} | {(r, "in") for r in incoming}
        arrivals = {(r, "out") for r in incoming} | {(r, "in") for r in outgoing}
        leaves |= starts
        for a in arrivals:
            arriving[a] = arriving.get(a, 0) + count
        for pair in itertools.product(arrivals, starts):
            joined[pair] = joined.get(pair, 0) + count
    meets = {pair for pair, n in joined.items() if n >= share * arriving[pair[0]]}
    chains: list[tuple[Step, ...]] = [(s,) for s in sorted(leaves)]
    frontier = list(chains)
    for _ in range(max_hops - 1):
        frontier = [c + (s,) for c in frontier for s in sorted(leaves) if (c[-1], s) in meets]
        chains += frontier
    return chains


# Generic English for one step, applied to the noun phrase built so far ({np}); the relation's text is {t}.
_OUT = ("the {t} of {np}", "{np}'s {t}", "{np} {t}")
_IN = ("things {t} {np}", "those {t} {np}", "the ones with {t} {np}")
_ASK = ("what is {np}", "which are {np}", "{np}", "name {np}", "who or what is {np}", "list {np}")


def path_examples(
    chains: Sequence[tuple[Step, ...]], relations: dict[str, str], per_chain: int, seed: int
) -> list[Example]:
    """``per_chain`` synthesised questions for each chain (composed inside out from [MASK])."""
    rng = random.Random(seed)
    out = []
    for chain in chains:
        for _ in range(per_chain):
            np = MASK
            for relation, way in chain:
                np = rng.choice(_OUT if way == "out" else _IN).format(t=relations[relation], np=np)
            out.append(
                Example(rng.choice(_ASK).format(np=np).lower().replace(MASK.lower(), MASK), chain, "path")
            )
    return out


def split(examples: list[Example], share: float, seed: int) -> tuple[list[Example], list[Example]]:
    """(train, validation) over distinct examples; a seeded share of the distinct *wordings* is held out.

    MetaQA's questions repeat a few hundred wordings with different entities, so a split by question would
    validate on wordings the model trained on; this one validates on wordings it never saw.
    """
    distinct = sorted(set(examples), key=lambda e: (e.task, e.text, e.chain))
    texts = sorted({e.text for e in distinct if e.task in ("retrieval", "path")})
    rng = random.Random(seed)
    held = set(rng.sample(texts, max(1, int(len(texts) * share)) if len(texts) > 1 else 0))
    valid = [e for e in distinct if e.text in held]
    train = [e for e in distinct if e.text not in held]
    return train, valid
