"""SimGRAG retrieval in the database: a pattern graph of the question, matched by Graph Semantic Distance.

``kgqa.simgrag.retrieve`` builds the question's pattern without an LLM (the linked entities are its known
nodes, the words that name a KG relation its edges, the far end of the chain the node asked for) and streams
the top-k matches, ties with the k-th included. The answer is the entity matched to the asked-for node; the
answer set is every answer of the best distance (answers that tie are equally supported by the KG). The
evidence triplets are the matched subgraphs in match order.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from kgqa.core.errors import CannotRunHere
from kgqa.core.types import Evidence, LinkedEntity, MethodTrace, Triplet
from kgqa.graph.cypher import render
from kgqa.retrieve.base import Retriever
from neo4j import RoutingControl
from neo4j.exceptions import ClientError

DEFAULT_K = 3  # SimGRAG's top-k in the paper's code
TIE = 1e-6  # matches this close to the best distance are equally good answers


@dataclass(frozen=True)
class PatternSpec:
    """A pattern graph from a pattern source other than the in-database builder (an LLM, a user)."""

    edges: list[list[str]]  # [head, relation, tail]; UNKNOWN... or ?... nodes are variables
    answer: str  # the node the question asks for
    entities: dict[str, list[str]] = field(default_factory=dict)  # known node -> entity ids it stands for
    source: str = "given"


@dataclass
class SimGragTrace(MethodTrace):
    pattern: list[list[str]]  # the edges [head, relation, tail] that were matched
    pattern_source: str  # "offline" (kgqa.simgrag.pattern) or the source that wrote it (an LLM)
    k: int
    matches: int  # rows returned (ties with the k-th included)
    best_distance: float | None
    expansions: int  # partial matches the search extended
    exhaustive: bool  # False when the search stopped at its expansion budget
    notes: list[str] = field(default_factory=list)


@dataclass(eq=False)
class SimGragRetriever(Retriever):
    """SimGRAG with the offline pattern builder (``kgqa.simgrag.pattern``), no LLM in the loop."""

    name = "simgrag"

    # The paper matches its KG undirected; so does kgqa by default (BENCHMARKS.md has the measurement).
    directed: bool = False
    # a hop of any relation first when an entity lacks its first relation; off for claims
    bridge: bool = True

    def pattern_for(self, question: str, kg: str, topic_entities: list[LinkedEntity]) -> PatternSpec | None:
        """The question's pattern from another source; None: the in-database offline builder writes it."""
        return None

    def retrieve(self, question: str, kg: str, k: int, topic_entities: list[LinkedEntity]) -> Evidence:
        evidence = Evidence(question=question, method=self.name, kg=kg, topic_entities=list(topic_entities))
        started = time.perf_counter()
        spec = self.pattern_for(question, kg, topic_entities)
        if spec is not None:
            evidence.latency_ms["pattern"] = (time.perf_counter() - started) * 1000
            return self._match(evidence, spec, kg, k)
        if not topic_entities:
            evidence.reason = "no topic entity linked"
            return evidence
        config: dict[str, Any] = {
            "kg": kg,
            "k": DEFAULT_K,
            "topicEntities": [e.id for e in topic_entities],
            # the words each came from: one pattern node per span, and numbers in the question become nodes
            "topicSpans": [e.span or e.name for e in topic_entities],
            "directed": self.directed,
            "bridge": self.bridge,
        }
        started = time.perf_counter()
        records = self.driver.execute_query(
            render("simgrag/retrieve"), {"question": question, "config": config}, routing_=RoutingControl.READ
        ).records
        evidence.latency_ms["in_db_matching"] = (time.perf_counter() - started) * 1000
        rows = [dict(r) for r in records]
        fill_evidence(evidence, rows, k, "offline")
        return evidence

    def _match(self, evidence: Evidence, spec: PatternSpec, kg: str, k: int) -> Evidence:
        config: dict[str, Any] = {"kg": kg, "k": DEFAULT_K, "directed": self.directed}
        if spec.entities:
            config["entities"] = spec.entities
        started = time.perf_counter()
        try:
            records = self.driver.execute_query(
                render("simgrag/match"),
                {"pattern": spec.edges, "config": config},
                routing_=RoutingControl.READ,
            ).records
        except ClientError as exc:  # a pattern the procedure rejects: its one-line reason
            reason = (exc.message or str(exc)).split("\n")[0]
            raise CannotRunHere(f"the {spec.source} pattern cannot be matched: {reason}") from exc
        evidence.latency_ms["in_db_matching"] = (time.perf_counter() - started) * 1000
        rows = []
        for r in sorted((dict(r) for r in records), key=lambda row: (float(row["distance"]), row["rank"])):
            r["answer"] = r["bindings"].get(spec.answer)
            r["pattern"] = spec.edges
            rows.append(r)
        fill_evidence(evidence, rows, k, spec.source)
        return evidence


def fill_evidence(evidence: Evidence, rows: list[dict[str, Any]], k: int, source: str) -> None:
    """Triplets, answers and trace from ``kgqa.simgrag.retrieve``/``match`` rows sorted best first."""
    triplets: list[Triplet] = []
    seen: set[Triplet] = set()
    answers: list[str] = []
    scores: list[float] = []
    best = float(rows[0]["distance"]) if rows else None
    for row in rows:
        for head, relation, tail in row["triplets"]:
            triplet = (str(head), str(relation), str(tail))
            if triplet not in seen and len(triplets) < max(k, 1):
                seen.add(triplet)
                triplets.append(triplet)
        answer = row.get("answer")
        if (
            answer is not None
            and best is not None
            and float(row["distance"]) <= best + TIE
            and answer not in answers
        ):
            answers.append(str(answer))
            scores.append(-float(row["distance"]))
        evidence.paths.append([(str(h), str(r), str(t)) for h, r, t in row["triplets"]])
        evidence.path_scores.append(-float(row["distance"]))
    evidence.triplets = triplets
    evidence.answer_candidates = answers
    evidence.answer_scores = scores
    if rows:
        evidence.hops = None
        evidence.trace = SimGragTrace(
            pattern=[list(e) for e in rows[0].get("pattern") or []],
            pattern_source=source,
            k=DEFAULT_K,
            matches=len(rows),
            best_distance=best,
            expansions=int(rows[0].get("expansions") or 0),
            exhaustive=all(bool(r.get("exhaustive", True)) for r in rows),
        )
    else:
        evidence.reason = "no subgraph of the KG matches the question's pattern"
