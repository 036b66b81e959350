"""GSR (method ``gsr``): a small trained model writes relation chains; the database walks them.

Everything happens in one call of ``kgqa.gsr.retrieve`` (``cypher_templates/gsr/retrieve.cypher.j2``): the
topic entity's words are masked, the KG's chain generator (trained by ``kgqa train all``) runs in ONNX Runtime
inside Neo4j and proposes chains of (relation, direction) steps by beam search, and each chain, best first,
is walked from the topic entities with SG-RAG's path semantics: a generated chain is exactly a template
nobody had to write. Chains that reach nothing are dropped; the first ``keep`` that reach something are the
evidence, and the best one's end nodes are the answers.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kgqa.core.types import Evidence, LinkedEntity, MethodTrace, Triplet
from kgqa.graph.cypher import render
from kgqa.models import registry
from kgqa.retrieve.base import Retriever
from kgqa.retrieve.paths import TemplateMatch, rank_answers, select_paths
from neo4j import RoutingControl

DEFAULT_BEAMS = 10
DEFAULT_KEEP = 3  # chains that reach something, as GSR keeps

Step = tuple[str, str]  # (relation, "out" | "in")


@dataclass
class GsrTrace(MethodTrace):
    masked_question: str
    chains: list[tuple[list[Step], float]]  # generated, best first, with log-probabilities
    executed: list[list[Step]] = field(default_factory=list)  # those that reached something, walked
    paths_truncated: bool = False  # a chain had more paths than the procedure's maxPaths


@dataclass(eq=False)
class GsrRetriever(Retriever):
    name = "gsr"

    model: str | None = None  # a GSR model installed by name; None: each KG's own
    beams: int = DEFAULT_BEAMS
    keep: int = DEFAULT_KEEP

    def retrieve(self, question: str, kg: str, k: int, topic_entities: list[LinkedEntity]) -> Evidence:
        evidence = Evidence(question=question, method=self.name, kg=kg, topic_entities=list(topic_entities))
        registry.require_gsr_model(kg, self.model)
        if not topic_entities:
            evidence.reason = "no topic entity linked"
            return evidence
        config = {
            "kg": kg,
            **({"model": self.model} if self.model else {}),
            "beams": self.beams,
            "keep": self.keep,
            "topicEntities": [e.id for e in topic_entities],
            "topicSpans": [e.span or e.name for e in topic_entities],
            "allChains": True,
        }
        records = self.driver.execute_query(
            render("gsr/retrieve"), {"question": question, "config": config}, routing_=RoutingControl.READ
        ).records
        trace = GsrTrace(str(records[0]["maskedQuestion"]) if records else "", [])
        evidence.trace = trace
        matches: dict[int, TemplateMatch] = {}
        for r in records:
            rank = int(r["chainRank"])
            if rank not in matches:
                steps: list[Step] = [(str(rel), str(way)) for rel, way in r["chain"]]
                trace.chains.append((steps, round(float(r["score"]), 4)))
                matches[rank] = TemplateMatch("gsr", truncated=bool(r["truncated"]))
            if r["triplets"]:
                matches[rank].paths.append([(str(h), str(rel), str(t)) for h, rel, t in r["triplets"]])
                matches[rank].answers.append(str(r["answer"]))
        triplets: list[Triplet] = []
        seen: set[Triplet] = set()
        for (steps, score), match in zip(trace.chains, matches.values(), strict=True):
            if not match.paths:
                continue
            trace.executed.append(steps)
            trace.paths_truncated |= match.truncated
            answers, support, first_path = rank_answers(match)
            if len(trace.executed) == 1:
                evidence.answer_candidates = answers
                evidence.answer_scores = [float(s) for s in support]
                evidence.hops = len(steps)
            chosen, _n = select_paths(match, answers, first_path, k)
            for index in chosen:
                path = match.paths[index]
                evidence.paths.append(path)
                evidence.path_scores.append(score)
                for t in path:
                    if t not in seen and len(triplets) < k:
                        seen.add(t)
                        triplets.append(t)
        evidence.triplets = triplets
        if not trace.executed:
            evidence.reason = "no generated chain reaches anything from the topic entities"
        return evidence
