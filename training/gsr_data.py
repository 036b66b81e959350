"""GSR's training examples: a question with its topic entity masked -> the relation chain walked from it.

Two tasks, one model, as in GSR:
- ``retrieval``: MetaQA dev questions (never test) -> the chain of their question type
  (``core.metaqa.qtype_steps``: ``movie_to_director_to_movie`` is directed_by out, directed_by in);
- ``index``: one pseudo-question per relation and direction ("[MASK] directed by", "directed by [MASK]")
  -> that single step, so that every relation token is learned even where few questions use it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from kgqa.core.metaqa import qtype_steps, read_questions
from kgqa.models.gsr import MASK, masked

Step = tuple[str, str]  # (relation, "out" | "in")


@dataclass(frozen=True)
class Example:
    text: str  # lower-cased, the topic entity replaced by [MASK]
    chain: tuple[Step, ...]
    task: str  # "retrieval" | "index"


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


def split(examples: list[Example], share: float, seed: int) -> tuple[list[Example], list[Example]]:
    """(train, validation) over distinct examples; a seeded share of the distinct *wordings* is held out.

    MetaQA's questions repeat a few hundred wordings with different entities, so a split by question would
    validate on wordings the model trained on; this one validates on wordings it never saw.
    """
    distinct = sorted(set(examples), key=lambda e: (e.task, e.text, e.chain))
    texts = sorted({e.text for e in distinct if e.task == "retrieval"})
    rng = random.Random(seed)
    held = set(rng.sample(texts, int(len(texts) * share)))
    valid = [e for e in distinct if e.text in held]
    train = [e for e in distinct if e.text not in held]
    return train, valid
