"""GSR (method ``gsr``): a small trained model writes relation chains; the database walks them.

The topic entity's words are masked, the chain generator (:mod:`kgqa.models.gsr`, beam search over the ONNX
export of ``kgqa train gsr``) proposes chains of (relation, direction) steps, and each chain, best first, is
walked from the topic entities with SG-RAG's path template (``cypher_templates/sgrag/path.cypher.j2``): a
generated chain is exactly a template nobody had to write. Chains that reach nothing are dropped; the first
``keep`` that reach something are the evidence, and the best one's end nodes are the answers.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kgqa.core.types import Evidence, LinkedEntity, MethodTrace, Triplet
from kgqa.models.gsr import DEFAULT_MODEL, ChainModel, gsr_models_dir, masked
from kgqa.retrieve.base import Retriever
from kgqa.retrieve.sgrag import rank_answers, run_steps, select_paths, steps_query
from neo4j import Driver

DEFAULT_BEAMS = 10
DEFAULT_KEEP = 3  # chains that reach something, as GSR keeps


@dataclass
class GsrTrace(MethodTrace):
    masked_question: str
    chains: list[tuple[list[tuple[str, str]], float]]  # generated, best first, with log-probabilities
    executed: list[list[tuple[str, str]]] = field(default_factory=list)  # those that reached something


_MODELS: dict[str, ChainModel] = {}


def chain_model(name: str = DEFAULT_MODEL) -> ChainModel:
    if name not in _MODELS:
        _MODELS[name] = ChainModel(gsr_models_dir() / name)
    return _MODELS[name]


class GsrRetriever(Retriever):
    name = "gsr"

    def __init__(self, driver: Driver, model: str = DEFAULT_MODEL, beams: int = DEFAULT_BEAMS) -> None:
        super().__init__(driver)
        self.model = chain_model(model)
        self.beams = beams

    def retrieve(self, question: str, kg: str, k: int, topic_entities: list[LinkedEntity]) -> Evidence:
        evidence = Evidence(question=question, method=self.name, kg=kg, topic_entities=list(topic_entities))
        if not topic_entities:
            evidence.reason = "no topic entity linked"
            return evidence
        text = masked(question, [e.span or e.name for e in topic_entities])
        chains = self.model.chains(text, self.beams)
        trace = GsrTrace(text, [([*c.steps], round(c.score, 4)) for c in chains])
        evidence.trace = trace
        topic_ids = [e.id for e in topic_entities]
        triplets: list[Triplet] = []
        seen: set[Triplet] = set()
        for chain in chains:
            if len(trace.executed) >= DEFAULT_KEEP:
                break
            match = run_steps(
                self.driver, steps_query(chain.steps, "a generated chain"), "gsr", kg, topic_ids
            )
            if not match.paths:
                continue
            trace.executed.append([*chain.steps])
            answers, support, first_path = rank_answers(match)
            if len(trace.executed) == 1:
                evidence.answer_candidates = answers
                evidence.answer_scores = [float(s) for s in support]
                evidence.hops = len(chain.steps)
            chosen, _n = select_paths(match, answers, first_path, k)
            for index in chosen:
                path = match.paths[index]
                evidence.paths.append(path)
                evidence.path_scores.append(chain.score)
                for t in path:
                    if t not in seen and len(triplets) < k:
                        seen.add(t)
                        triplets.append(t)
        evidence.triplets = triplets
        if not trace.executed:
            evidence.reason = "no generated chain reaches anything from the topic entities"
        return evidence
