"""SimGRAG's fact verification: is a claim supported by the KG, refuted by it, or without enough evidence?

A claim is turned into a question about its last-named entity ("Kismet was directed by William Dieterle" ->
"Kismet was directed by what"), answered by SimGRAG's pattern matching from the claim's other entities, and
judged by what the KG gives back: the named entity among the best matches -> supported; other entities but not
that one -> refuted (the KG fills that slot differently); no match at all, or a claim that names a single
entity -> not enough evidence. The matched subgraph is the reason.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

from kgqa.core.errors import BadInput
from kgqa.core.text import normalize_answer
from kgqa.core.types import LinkedEntity, Triplet
from kgqa.graph.cypher import render
from kgqa.graph.kg import resolve_kg
from kgqa.retrieve.linking import link_entities
from kgqa.retrieve.simgrag import SimGragRetriever, SimGragTrace
from neo4j import Driver, RoutingControl

SUPPORTED = "supported"
REFUTED = "refuted"
NOT_ENOUGH = "not enough evidence"
NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w])")
MAX_ENTITIES = 4


@dataclass
class Verdict:
    claim: str
    label: str
    kg: str
    subject: list[str]  # the entities the question is asked from
    object: str | None  # the entity the claim says is there
    question: str  # the claim as a question about its object
    kg_says: list[str] = field(default_factory=list)  # what the best matches give for the object's place
    reason: list[Triplet] = field(default_factory=list)  # the matched subgraph behind the label
    pattern: list[list[str]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def claim_entities(driver: Driver, claim: str, kg: str) -> list[LinkedEntity]:
    """The claim's entities: linked ones, and numbers that are entities of the KG (a year, a rating)."""
    found = link_entities(driver, claim, kg, max_entities=MAX_ENTITIES, secondary_ratio=0.0)
    inside = " ".join(e.span or e.name for e in found)
    numbers = sorted({m.group() for m in NUMBER.finditer(claim)} - set(NUMBER.findall(inside)))
    if numbers:
        records = driver.execute_query(
            render("simgrag/entities_named"), {"names": numbers, "kg": kg}, routing_=RoutingControl.READ
        ).records
        found += [LinkedEntity(str(r["id"]), str(r["name"]), 1.0, "literal", str(r["name"])) for r in records]
    return found


def _speaks_of(
    driver: Driver, kg: str, objects: list[LinkedEntity], path: list[Triplet], answer: str
) -> bool:
    """Whether the claimed entity has a relation of the kind that reaches the KG's own answer."""
    final = next((r for h, r, t in reversed(path) if answer in (h, t)), None)
    if final is None:
        return False
    records = driver.execute_query(
        render("simgrag/relation_types"),
        {"ids": [e.id for e in objects], "kg": kg},
        routing_=RoutingControl.READ,
    ).records
    return final in {str(r["type"]) for r in records}


DIRECT_SLACK = 0.05  # how much farther than the best answer a direct tie may be and still count


def _direct(
    driver: Driver,
    kg: str,
    relation: str,
    subject: list[LinkedEntity],
    objects: list[LinkedEntity],
    best_scores: list[float],
) -> list[Triplet]:
    # the nodes carry the entities' own names, so that their distance is what the best answer's was
    head, tail = subject[0].name, objects[0].name
    if head == tail:
        return []
    pattern = [[head, relation, tail]]
    config = {"kg": kg, "k": 1, "entities": {head: [e.id for e in subject], tail: [e.id for e in objects]}}
    records = driver.execute_query(
        render("simgrag/match"), {"pattern": pattern, "config": config}, routing_=RoutingControl.READ
    ).records
    if not records:
        return []
    best = -best_scores[0] if best_scores else float("inf")
    if float(records[0]["distance"]) > best + DIRECT_SLACK:
        return []
    return [(str(h), str(r), str(t)) for h, r, t in records[0]["triplets"]]


def verify_claim(driver: Driver, claim: str, kg: str | None = None) -> Verdict:
    if not claim or not claim.strip():  # as `kgqa ask ""` does: nothing to check is the caller's mistake
        raise BadInput("the claim is empty")
    kg_name = resolve_kg(driver, kg).name
    entities = claim_entities(driver, claim, kg_name)
    lowered = claim.casefold()
    spans: dict[str, list[LinkedEntity]] = {}
    for e in entities:
        spans.setdefault((e.span or e.name).casefold(), []).append(e)
    if len(spans) < 2:
        named = [e.name for e in entities]
        return Verdict(claim, NOT_ENOUGH, kg_name, named, None, claim)
    # the object is the entity named last; the others are where the question starts
    last = max(spans, key=lambda span: lowered.rfind(span))
    objects = spans.pop(last)
    start = lowered.rfind(last)
    question = (claim[:start] + "what" + claim[start + len(last) :]).strip() if start >= 0 else claim
    subject = [e for group in spans.values() for e in group]
    retriever = SimGragRetriever(driver, bridge=False)
    evidence = retriever.retrieve(question, kg_name, 100, subject)
    targets = {normalize_answer(e.name) for e in objects}
    says = list(evidence.answer_candidates)
    hit = next((a for a in says if normalize_answer(a) in targets), None)
    reason: list[Triplet] = []
    for path in evidence.paths:
        if hit is None or any(hit in (h, t) for h, _r, t in path):
            reason = list(path)
            break
    pattern = evidence.trace.pattern if isinstance(evidence.trace, SimGragTrace) else []
    if hit is None and len(pattern) == 1 and len(spans) == 1:
        # a one-relation claim whose words name no KG relation well ("came out in"): the object tied to the
        # subject directly, about as closely as the KG's own best answer, supports it
        direct = _direct(driver, kg_name, pattern[0][1], subject, objects, evidence.path_scores)
        if direct:
            hit, reason = objects[0].name, direct
    label = SUPPORTED if hit else (REFUTED if says else NOT_ENOUGH)
    if label == REFUTED and not _speaks_of(driver, kg_name, objects, reason, says[0]):
        # the KG fills the slot with things the claimed entity is never related by ("born in 1956" answered
        # with films): it does not record that kind of fact, so it cannot refute it
        label = NOT_ENOUGH
    return Verdict(
        claim,
        label,
        kg_name,
        [e.name for e in subject],
        objects[0].name,
        question,
        says[:10],
        reason,
        pattern,
    )
