"""Relation paths walked from topic entities: the path template, what it returns, and how answers and evidence
are read off it. SG-RAG fills the template with a classified chain, GSR with a generated one.

A path is a list of (relation, "out" | "in") steps: "out" walks along the KG's triples, "in" against them
(``cypher_templates/sgrag/path.cypher.j2``; no node after the start is the topic entity).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from kgqa.core.limits import ROW_CAP
from kgqa.core.types import Triplet
from kgqa.graph.cypher import render
from neo4j import Driver, RoutingControl

DEFAULT_MAX_PATHS = ROW_CAP  # LIMIT guard of the template, per question
# Relationship types go into the query text in backticks (they come from the KG's own models, never from
# input); a name with a backtick could close them.
_RELATIONSHIP_TYPE = re.compile(r"^[^`\x00-\x1f]+$")


@dataclass
class TemplateMatch:
    """What one chain's path returned for the topic entities."""

    chain: str
    paths: list[list[Triplet]] = field(default_factory=list)
    answers: list[str] = field(default_factory=list)  # end nodes, in row order, one per path
    truncated: bool = False  # the $max_paths guard was hit


def steps_query(steps: Sequence[tuple[str, str]], what: str, to_ends: bool = False) -> str:
    """The path template for a chain of (relation, "out"|"in") steps: a classified one or a generated one.
    ``to_ends``: only the paths that end at ``$ends`` (:func:`run_steps` with ``ends``)."""
    if not all(_RELATIONSHIP_TYPE.match(rel) and way in ("out", "in") for rel, way in steps):  # query text
        raise ValueError(f"{what} has a relation name that cannot be quoted in Cypher")
    return render("sgrag/path", steps=list(steps), to_ends=to_ends)


def run_steps(
    driver: Driver,
    query: str,
    label: str,
    kg: str,
    topic_ids: Sequence[str],
    max_paths: int = DEFAULT_MAX_PATHS,
    ends: Sequence[str] | None = None,
) -> TemplateMatch:
    """Runs one rendered path template from the topic entity ids (``ends``: the end names a template
    rendered ``to_ends`` keeps)."""
    params: dict[str, object] = {"kg": kg, "topic_ids": list(topic_ids), "max_paths": int(max_paths)}
    if ends is not None:
        params["ends"] = list(ends)
    records, _summary, _keys = driver.execute_query(query, params, routing_=RoutingControl.READ)
    match = TemplateMatch(label, truncated=len(records) >= max_paths)
    for record in records:
        match.paths.append([(str(h), str(r), str(t)) for h, r, t in record["triplets"]])
        match.answers.append(str(record["answer"]))
    return match


def chain_ends(
    driver: Driver,
    kg: str,
    topic_ids: Sequence[str],
    chains: Sequence[str],
    max_paths: int = DEFAULT_MAX_PATHS,
) -> dict[str, tuple[set[str], bool]]:
    """Per chain key, the distinct end names of its paths from ``topic_ids`` and whether the ``max_paths``
    guard was hit: what comparing walks needs, without reading their (possibly thousands of) paths. One call
    for all the chains (``kgqa.paths.ends``): a template per chain compiled a query plan for each new chain,
    45-75 ms, where the walk takes a few."""
    if not chains or not topic_ids:
        return {key: (set(), False) for key in chains}
    records, _summary, _keys = driver.execute_query(
        render("paths/chain_ends"),
        {"kg": kg, "topic_ids": list(topic_ids), "chains": list(chains), "max_paths": int(max_paths)},
        routing_=RoutingControl.READ,
    )
    return {str(r["key"]): ({str(e) for e in r["ends"]}, int(r["paths"]) >= max_paths) for r in records}


def rank_answers(match: TemplateMatch) -> tuple[list[str], list[int], dict[str, int]]:
    """Distinct end nodes, most supporting paths first (stable); their path counts; each one's first path."""
    support: dict[str, int] = {}
    first_path: dict[str, int] = {}
    for index, answer in enumerate(match.answers):
        support[answer] = support.get(answer, 0) + 1
        first_path.setdefault(answer, index)
    ranked = sorted(support, key=lambda a: -support[a])  # sorted() is stable: ties keep first-seen order
    return ranked, [support[a] for a in ranked], first_path


def select_paths(
    match: TemplateMatch, answers: Sequence[str], first_path: dict[str, int], k: int
) -> tuple[list[int], int]:
    """Path indexes for the evidence: one per answer first (always kept), then others while <= k triplets."""
    chosen: list[int] = []
    triplets: set[Triplet] = set()
    for answer in answers:
        index = first_path[answer]
        chosen.append(index)
        triplets.update(match.paths[index])
    taken = set(chosen)
    for index, path in enumerate(match.paths):
        if index in taken:
            continue
        new = [t for t in path if t not in triplets]
        if len(triplets) + len(new) > k:
            continue
        chosen.append(index)
        triplets.update(new)
    return chosen, len(triplets)
