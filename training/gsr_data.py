"""GSR's training examples: a question with its topic entity masked -> the relation chain walked from it.

Two tasks, one model, as in GSR:
- ``retrieval``: the KG's questions (labelled, or synthesised from its relation paths by
  :mod:`kgqa.training.synthesis`) -> their relation chains;
- ``index``: one pseudo-question per relation and direction ("[MASK] place of birth", "person with place of
  birth [MASK]") -> that single step, so that every relation token is learned even where few questions use
  it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from kgqa.core.chains import Step
from kgqa.core.relation_text import step_text
from kgqa.models.gsr import MASK, masked
from kgqa.training.questions import LabelledQuestion


@dataclass(frozen=True)
class Example:
    text: str  # lower-cased, the topic entity replaced by [MASK]
    chain: tuple[Step, ...]
    task: str  # "retrieval" | "index"


def question_examples(questions: Iterable[LabelledQuestion]) -> list[Example]:
    """Each question with a chain, its topic masked as the database masks a linked question."""
    out = []
    for q in questions:
        if q.chain:
            out.append(Example(masked(q.text, [s for s in q.topic_spans if s]), tuple(q.chain), "retrieval"))
    return sorted(set(out), key=lambda e: (e.text, e.chain))


def index_examples(relations: Sequence[str]) -> list[Example]:
    """One pseudo-question per relation and direction, worded from the relation's name."""
    out = []
    for name in relations:
        out.append(Example(f"{MASK} {step_text((name, 'out'))}", ((name, "out"),), "index"))
        out.append(Example(f"{step_text((name, 'in'))} {MASK}", ((name, "in"),), "index"))
    return out
