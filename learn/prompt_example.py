"""The worked example of the LLM prompt, taken from the KG's own questions by ``kgqa train all``.

A small model copies the example's names and relations; one from another dataset (a film KG's, whatever
the KG) teaches it the wrong ones. The example is a question of the KG (a labelled one when the KG has
them, else a synthesised one), two hops when one answers in a few triplets, walked in the database along
its own chain.
"""

from __future__ import annotations

from collections.abc import Sequence

from kgqa.core.chains import chain_key
from kgqa.models.kg_models import PromptExample
from kgqa.retrieve.sgrag import run_template
from kgqa.training.questions import LabelledQuestion
from neo4j import Driver

MAX_TRIPLETS = 8  # a worked example the model reads before every question: a few lines
MAX_ANSWERS = 3
MAX_TRIES = 60  # questions walked before giving up (each is one query)


def prompt_example(driver: Driver, kg: str, questions: Sequence[LabelledQuestion]) -> PromptExample | None:
    """The first question, two-hop ones first, whose chain reaches between 1 and MAX_ANSWERS answers in at
    most MAX_TRIPLETS distinct triplets; None when none does."""
    candidates = sorted(
        (q for q in questions if q.chain and q.topic_ids and len(q.chain) <= 2),
        key=lambda q: (len(q.chain or ()) != 2, len(q.text)),
    )
    for question in candidates[:MAX_TRIES]:
        match = run_template(
            driver, chain_key(question.chain or ()), kg, list(question.topic_ids), max_paths=MAX_TRIPLETS
        )
        triplets = list(dict.fromkeys(t for path in match.paths for t in path))
        answers = list(dict.fromkeys(match.answers))
        if match.truncated or not 0 < len(answers) <= MAX_ANSWERS or len(triplets) > MAX_TRIPLETS:
            continue
        return PromptExample(question.text, tuple(tuple(t) for t in triplets), tuple(answers))  # type: ignore[misc]
    return None
