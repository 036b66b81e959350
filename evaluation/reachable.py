"""Which of a Freebase benchmark's questions a KG can answer at all, and the dev split of a trained KG.

A KG such as FB15k-237 holds a slice of Freebase: a WebQSP or CWQ question whose topic entity it lacks, or
whose gold answers are not within two hops of that topic, cannot be answered from it by any method. The
evaluation keeps the questions that can, counts the others by rule, and says so in the report:

- ``topic not in the KG``: none of the question's topic mids is an entity of the KG;
- ``no gold answer within 2 hops``: the topic is there, but no gold answer (by mid; by name where the
  dataset gives no mids) is one or two relationships away from it, in either direction.

Questions whose gold answers the dataset gives only as mids (WebQSP train) take the names the KG gives them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from kgqa.core.text import normalize_answer
from kgqa.evaluation.datasets import Dataset, EvalQuestion
from kgqa.graph.cypher import render

MAX_HOPS = 2
BATCH = 200
TOPIC_MISSING = "topic not in the KG"
ANSWER_UNREACHED = f"no gold answer within {MAX_HOPS} hops"


def _row(q: EvalQuestion) -> dict[str, Any]:
    topics = [mid for mid, _name in q.topic_entities]
    topics += ["/" + mid.replace(".", "/", 1) for mid in topics]
    return {"qid": q.id, "topics": topics, "answer_ids": list(q.answer_ids), "answer_names": list(q.answers)}


def reachable_questions(driver: Any, kg: str, data: Dataset) -> Dataset:
    """``data`` with only the questions KG ``kg`` can answer (see the module's docstring); the others are
    counted in ``skipped`` by rule."""
    found: dict[str, dict[str, Any]] = {}
    query = render("eval/reachable")
    for start in range(0, len(data.questions), BATCH):
        batch = [_row(q) for q in data.questions[start : start + BATCH]]
        for record in driver.execute_query(query, kg=kg, questions=batch).records:
            found[str(record["qid"])] = dict(record)
    kept: list[EvalQuestion] = []
    skipped = dict(data.skipped)
    hops: dict[int, int] = {}
    for q in data.questions:
        row = found.get(q.id)
        if row is None or not row["topic_found"]:
            skipped[TOPIC_MISSING] = skipped.get(TOPIC_MISSING, 0) + 1
            continue
        names = [str(n) for n in row["reachable_names"] if n]
        if not names:
            skipped[ANSWER_UNREACHED] = skipped.get(ANSWER_UNREACHED, 0) + 1
            continue
        hops[int(row["hops"])] = hops.get(int(row["hops"]), 0) + 1
        known = row["topic_names"][0] if row["topic_names"] else ""
        topics = tuple((mid, name or known) for mid, name in q.topic_entities)
        kept.append(replace(q, answers=q.answers or tuple(dict.fromkeys(names)), topic_entities=topics))
    note = (
        f"{len(kept)} of {len(data.questions)} questions kept: a topic entity in KG {kg!r} and a gold answer "
        f"within {MAX_HOPS} hops of it ("
        + ", ".join(f"{n} at {h} hop{'s' if h > 1 else ''}" for h, n in sorted(hops.items()))
        + ")"
    )
    return replace(data, questions=kept, skipped=skipped, notes=[*data.notes, note])


def held_out_questions(data: Dataset, held_out: Sequence[str]) -> Dataset:
    """The dev split: the questions of ``data`` whose text is among ``held_out`` (what the KG's training
    kept from every model), compared as answers are (case, punctuation and spacing aside)."""
    wanted = {normalize_answer(t) for t in held_out}
    kept = [q for q in data.questions if normalize_answer(q.question) in wanted]
    note = f"dev: {len(kept)} train questions that the KG's training held out from every model"
    return replace(data, questions=kept, notes=[*data.notes, note])
