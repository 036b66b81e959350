"""FRAG (method ``frag``): reasoning-aware, flexible retrieval of reasoning paths.

After Gao et al., "FRAG: A Flexible Modular Framework for Retrieval-Augmented Generation based on Knowledge
Graphs" (2025):

1. **Reasoning-aware**: a query-only classifier says *simple* (at most 2 hops) or *complex*
   (:mod:`kgqa.models.question_classifiers`; "complex" when none is installed, which the trace says).
2. **Preprocessing**, inside the database in one procedure call (``kgqa.frag.neighbourhood``, through
   ``cypher_templates/frag/neighbourhood.cypher.j2``): the 2-hop (simple) or 4-hop (complex) neighbourhood of
   the topic entities; when it holds more than ``keep_nodes`` nodes it is pruned to the ``keep_nodes`` best
   by personalized PageRank from the topic entities (damping 0.8, at most 1000 iterations), computed in the
   procedure with the semantics of ``gds.pageRank`` with ``sourceNodes`` (``frag/gds_pagerank`` is that GDS
   reference; the tests check that both keep the same nodes). Projecting every question's neighbourhood
   into GDS cost 50-150 ms of a 3-hop question's time; the iteration itself costs a few.
   Hubs (non-topic nodes with more than the KG's hub degree of relationships, e.g. a genre or a year)
   join the neighbourhood but are not expanded; layer and size caps keep it bounded.
3. **Retrieval** on the kept subgraph (:mod:`kgqa.retrieve.frag_paths`): simple -> every simple path of at
   most 2 hops, breadth first; complex -> one shortest path per reached node, at most 4 hops (among equally
   short ones, the most relevant). Paths never pass back through a topic entity, nor through a hub.
4. **Postprocessing** (:mod:`kgqa.retrieve.frag_ranking`): relations are pruned by the similarity of their
   stored embeddings (``(:Relation {embedding})``) to the question (keep ``keep_relations`` = 64). Paths are
   ranked by the KG's path ranker (:mod:`kgqa.models.frag_ranker`, FRAG's reranking step, learned per KG by
   ``kgqa train all``): the similarity of the verbalised chain to the question with its topic entity
   removed (the cosine of the KG's fine-tuned question-to-path scorer when it has one, else of the sentence
   encoder), how well the chain's relations match the question's words (see
   :class:`~kgqa.retrieve.frag_ranking.WordMatch`), and whether the kind of thing the chain arrives at is
   what the question asks for ("which city", "who"); ties go to end nodes reached by more paths, then by
   PageRank. The best ``keep_paths`` = 32 are kept, most relevant first.

Extension beyond the paper: the project's classifier also predicts the exact hop count, and paths of that
length rank first (``FragConfig.hop_count_ranges``).

The evidence carries the paths (``paths``, with ``path_scores``), their triplets deduplicated in path order,
and the path end entities in rank order as ``answer_candidates`` (with ``answer_scores``); its
:class:`FragTrace` has the hop range, the relation scores and the size of each stage, and ``latency_ms`` the
per-stage timings.
"""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import numpy as np
from kgqa.core.errors import ModelMissing
from kgqa.core.question_words import asked_for
from kgqa.core.types import Evidence, LinkedEntity, MethodTrace, Triplet
from kgqa.graph.cypher import render
from kgqa.graph.kg import kg_embedding_model
from kgqa.models import registry
from kgqa.models.encoder import embed
from kgqa.models.frag_ranker import FEATURES, FragRanker, load_ranker
from kgqa.models.question_classifiers import SURE_HOP_MARGIN
from kgqa.retrieve.base import Retriever
from kgqa.retrieve.frag_paths import Step, Subgraph, path_triplets, shortest_paths, simple_paths
from kgqa.retrieve.frag_ranking import (
    ChainSimilarity,
    WordMatch,
    core_chain,
    feature_rows,
    prune_relations,
    rank_paths,
    relation_query,
    use_stored_chain_vectors,
)

HopRange = Literal["simple", "complex"]
DEFAULT_HUB_DEGREE = 200


@dataclass(frozen=True)
class FragConfig:
    """FRAG's knobs: the paper's values, plus caps that bound the neighbourhood on hub-heavy KGs."""

    simple_hops: int = 2
    complex_hops: int = 4
    damping: float = 0.8
    max_iterations: int = 1000
    keep_nodes: int = 2000  # entity pruning by personalized PageRank
    keep_relations: int = 64  # relation pruning by similarity to the question
    keep_paths: int = 32  # path ranking by similarity to the question
    # non-topic nodes with more relationships are not expanded (hubs); None: the KG's own hub degree (its
    # ranker's, read off the KG by `kgqa train all`), else DEFAULT_HUB_DEGREE
    max_degree: int | None = None
    max_fanout: int = 5000  # neighbours read per expanded node
    max_new: int = 6000  # new nodes kept per breadth-first layer (best connected first)
    max_nodes: int = 12000  # neighbourhood size cap
    max_paths: int = 50000  # candidate paths enumerated before ranking
    # Extension: when the classifier also predicts the exact hop count, the ranker's hop_match feature says
    # whether a path has that length, in these hop ranges (in complex mode the shortest path to an answer is
    # often shorter than the question).
    hop_count_ranges: tuple[str, ...] = ("simple", "complex")
    # ... but only when the classifier is sure of it (HopPrediction.sure_hops: a wording it learned, or
    # this SVM margin). The ranker's weights are fitted on the KG's labelled questions, worded as the
    # classifier learned; people word theirs otherwise, and a wrong hop count made two-hop questions stop at
    # their middle entity. MetaQA free-form tune, fitted weights, trusting every count / only sure ones:
    # set A 62.6 / 70.1 Hits@1 (two-hop 11.5 / 40.4), two-entity set 80.3 / 86.4. None: trust every count.
    sure_hop_margin: float | None = SURE_HOP_MARGIN
    # Extension: the chain similarity is the KG's question-to-path scorer's, when it has one
    path_scorer: bool = True
    # Extension: the chain vectors the KG's training stored are read, not embedded while a question waits
    stored_chain_vectors: bool = True


@dataclass
class FragTrace(MethodTrace):
    hop_range: str
    hop_range_source: str  # "classifier", "given", or "fallback (...)": why complex was assumed
    hops_predicted: int | None
    config: dict[str, Any]
    neighbourhood_nodes: int = 0
    ppr_pruned: bool = False
    kept_nodes: int = 0
    kept_edges: int = 0
    candidate_paths: int = 0
    relation_scores: dict[str, float] = field(default_factory=dict)
    ranker: str = ""  # whose weights ranked the chains: the KG's learned ones, or the defaults
    asked_for: str = ""  # what the question asks for, as the ranker compared it with the chains' ends
    chain_similarity: str = ""  # whose cosines the similarity feature is: "path scorer" or "sentence encoder"
    # With FragRetriever(trace_stages=True): the entity names each stage still holds, so that a benchmark can
    # say where a gold answer was lost: "subgraph" (after PPR pruning), "path_ends" (ends of the candidate
    # paths over the kept relations), "kept" (every node on the kept paths), "kept_ends" (their end nodes).
    stages: dict[str, list[str]] | None = None


# --- the hop-range classifier -------------------------------------------------------------------------------

HopPredictor = Callable[[str, Sequence[str]], tuple[HopRange, int | None]]


def classifier_hop_predictor(kg: str, sure_margin: float | None = SURE_HOP_MARGIN) -> HopPredictor:
    """KG ``kg``'s query-only hop classifier; ModelMissing when none is installed. Its hop count is None
    when it is unsure (:meth:`~kgqa.models.question_classifiers.HopPrediction.sure_hops`; ``sure_margin``
    None: never); the hop range stands, as it only sets how far FRAG walks."""
    classifiers = registry.question_classifiers(kg)

    def predict(question: str, spans: Sequence[str]) -> tuple[HopRange, int | None]:
        prediction = classifiers.predict_hops(question, list(spans))
        return prediction.hop_range, prediction.sure_hops(sure_margin)

    return predict


# --- the retriever ------------------------------------------------------------------------------------------


@dataclass
class _Candidates:
    sub: Subgraph
    paths: list[tuple[list[int], list[Step]]]
    question_vector: np.ndarray
    word_match: WordMatch
    prefer_hops: int | None
    model: str | None
    ranker: FragRanker
    groups: dict[int, int]
    chain_similarity: ChainSimilarity | None = None


_GC_LOCK = threading.Lock()
_GC_PAUSES = 0


@contextmanager
def _cyclic_gc_paused() -> Iterator[None]:
    """Pauses Python's cyclic garbage collector (reference counting still frees everything here).

    Why: building the subgraph, its paths and their ranking allocates tens of thousands of small lists and
    tuples, which triggers full collections of the whole process heap: the same 3-hop question took 16 ms
    or 150 ms in its path stage depending on when one struck. Counted, so concurrent questions (``--workers``)
    re-enable it only when the last one is done."""
    global _GC_PAUSES
    with _GC_LOCK:
        if _GC_PAUSES == 0 and not gc.isenabled():
            paused_here = False
        else:
            paused_here = True
            _GC_PAUSES += 1
            gc.disable()
    try:
        yield
    finally:
        if paused_here:
            with _GC_LOCK:
                _GC_PAUSES -= 1
                if _GC_PAUSES == 0:
                    gc.enable()


@dataclass(eq=False)
class FragRetriever(Retriever):
    """``hop_range`` forces simple/complex (tests, ablations); otherwise ``hop_predictor`` decides, by default
    the KG's own classifier. Without an installed classifier every question is complex (the paper's fallback
    when it cannot tell), and the trace says so. ``trace_stages`` records what each stage kept
    (``FragTrace.stages``; for benchmarks: it can be thousands of names). ``ranker``: the path ranker for
    every KG (ablations); None: each KG's own (:func:`load_ranker`)."""

    name = "frag"

    config: FragConfig = field(default_factory=FragConfig)
    hop_predictor: HopPredictor | None = None
    hop_range: HopRange | None = None
    trace_stages: bool = False
    ranker: FragRanker | None = None

    # hop range ---------------------------------------------------------------------------------------------

    def predict_hop_range(
        self, question: str, kg: str, topic_entities: Sequence[LinkedEntity]
    ) -> tuple[HopRange, str, int | None]:
        """(hop range, where it came from, predicted hop count if the classifier gives one)."""
        if self.hop_range is not None:
            return self.hop_range, "given", None
        predictor = self.hop_predictor
        if predictor is None:
            try:
                predictor = classifier_hop_predictor(kg, self.config.sure_hop_margin)
            except ModelMissing as missing:
                return "complex", f"fallback ({missing})", None
        spans = [e.span or e.name for e in topic_entities]
        hop_range, hops = predictor(question, spans)
        return hop_range, "classifier", hops

    # search ------------------------------------------------------------------------------------------------

    def retrieve(self, question: str, kg: str, k: int, topic_entities: list[LinkedEntity]) -> Evidence:
        cfg = self.config
        timings: dict[str, float] = {}
        began = time.perf_counter()
        hop_range, source, hops_predicted = self.predict_hop_range(question, kg, topic_entities)
        trace = FragTrace(hop_range, source, hops_predicted, asdict(cfg))
        evidence = Evidence(question, self.name, kg, list(topic_entities), trace=trace)
        timings["frag_classify"] = _ms(began)
        if not topic_entities:
            evidence.reason = "no topic entity"
            evidence.latency_ms.update(timings)
            return evidence

        with _cyclic_gc_paused():
            found = self._candidates(question, kg, topic_entities, hop_range, hops_predicted, trace, timings)
            mark = time.perf_counter()
            ranked = rank_paths(
                found.paths,
                found.sub,
                found.question_vector,
                found.word_match,
                found.prefer_hops,
                one_per_node=hop_range == "complex",
                model=found.model,
                ranker=found.ranker,
                asked=trace.asked_for,
                question=question,
                groups=found.groups,
                chain_similarity=found.chain_similarity,
            )
            timings["frag_rank"] = _ms(mark)
        sub, paths = found.sub, found.paths

        kept = ranked[: cfg.keep_paths]
        seen: dict[Triplet, None] = {}
        answers: dict[str, float] = {}
        for score, nodes, steps in kept:
            triplets = path_triplets(sub, nodes, steps)
            evidence.paths.append(triplets)
            for t in triplets:
                seen.setdefault(t, None)
            answers.setdefault(sub.names[nodes[-1]], score)
        if self.trace_stages:
            trace.stages = {
                "subgraph": list(sub.names),
                "path_ends": list(dict.fromkeys(sub.names[nodes[-1]] for nodes, _steps in paths)),
                "kept": list(dict.fromkeys(sub.names[n] for _s, nodes, _st in kept for n in nodes[1:])),
                "kept_ends": list(answers),
            }
        evidence.triplets = list(seen)[:k] if k > 0 else list(seen)
        evidence.answer_candidates = list(answers)
        evidence.answer_scores = list(answers.values())
        evidence.path_scores = [score for score, _, _ in kept]
        evidence.latency_ms.update(timings)
        return evidence

    def _candidates(
        self,
        question: str,
        kg: str,
        topic_entities: Sequence[LinkedEntity],
        hop_range: HopRange,
        hops_predicted: int | None,
        trace: FragTrace,
        timings: dict[str, float],
    ) -> _Candidates:
        """The pruned neighbourhood, the candidate paths over the pruned relations, and what ranking them
        needs (stages 2 and 3, and what stage 4 reads)."""
        cfg = self.config
        hops = cfg.simple_hops if hop_range == "simple" else cfg.complex_hops
        mark = time.perf_counter()
        ranker = self.ranker or load_ranker(kg)
        if cfg.stored_chain_vectors:
            use_stored_chain_vectors(kg)
        sub = self._subgraph(kg, [e.id for e in topic_entities], hops, trace, ranker.hub_degree)
        timings["frag_subgraph"] = _ms(mark)

        mark = time.perf_counter()
        query = relation_query(question, topic_entities)
        model = kg_embedding_model(self.driver, kg)  # the stored relation vectors' encoder
        question_vector = embed([query], model=model)[0]
        present = {relation for edges in sub.adjacency for _n, relation, _f in edges}
        allowed, relation_scores, word_match = prune_relations(
            self.driver, kg, query, question_vector, cfg.keep_relations, model, present
        )
        trace.relation_scores = relation_scores
        timings["frag_relations"] = _ms(mark)

        mark = time.perf_counter()
        position = {node_id: i for i, node_id in enumerate(sub.ids)}
        sources = [position[e.id] for e in topic_entities if e.id in position]
        if hop_range == "simple":
            paths = simple_paths(sub, sources, hops, allowed, cfg.max_paths)
        else:
            paths = shortest_paths(sub, sources, hops, allowed, cfg.max_paths)
        timings["frag_paths"] = _ms(mark)
        trace.candidate_paths = len(paths)
        trace.ranker = ranker.learned_on or "default weights"
        trace.asked_for = asked_for(question)
        spans: dict[str, int] = {}
        groups = {
            position[e.id]: spans.setdefault(" ".join((e.span or e.name).lower().split()), len(spans))
            for e in topic_entities
            if e.id in position
        }
        prefer = hops_predicted if hop_range in cfg.hop_count_ranges else None
        several = len(set(groups.values())) > 1
        chain_similarity = None if several else self._chain_similarity(question, kg, topic_entities)
        trace.chain_similarity = "sentence encoder" if chain_similarity is None else "path scorer"
        return _Candidates(
            sub,
            paths,
            question_vector,
            word_match,
            prefer,
            model,
            ranker,
            groups,
            chain_similarity,
        )

    def _chain_similarity(
        self, question: str, kg: str, topic_entities: Sequence[LinkedEntity]
    ) -> ChainSimilarity | None:
        """The KG's question-to-path scorer as FRAG's chain similarity, when the KG has one: fine-tuned on its
        questions, it tells chains apart better than the frozen encoder. Asked for questions that name one
        entity only: the sum of each span's best walk that ranks what several spans reach, and the penalty
        of an end one span alone reaches, are on the encoder's scale (with the scorer's, "films both X and
        Y acted in" got X's films: 5 such misses on our FB15k-237 tune questions)."""
        scorer = registry.path_scorer(kg) if self.config.path_scorer else None
        if scorer is None:
            return None
        spans = [t for e in topic_entities for t in (e.span, e.name) if t]
        return lambda chains: scorer.cosines(question, spans, [core_chain(c) for c in chains])

    def chain_features(
        self, question: str, kg: str, topic_entities: Sequence[LinkedEntity]
    ) -> tuple[list[tuple[Step, ...]], np.ndarray]:
        """The candidate relation chains of a question and their ranking features (what ``kgqa train all``
        fits the KG's ranker weights on)."""
        if not topic_entities:
            return [], np.zeros((0, len(FEATURES)), dtype=np.float32)
        hop_range, _source, hops_predicted = self.predict_hop_range(question, kg, topic_entities)
        trace = FragTrace(hop_range, "", hops_predicted, {})
        with _cyclic_gc_paused():
            found = self._candidates(question, kg, topic_entities, hop_range, hops_predicted, trace, {})
        chains = list(dict.fromkeys(tuple(steps) for _, steps in found.paths))
        features = feature_rows(
            chains,
            found.question_vector,
            found.word_match,
            found.prefer_hops,
            found.model,
            found.ranker,
            trace.asked_for,
            question,
            found.chain_similarity,
        )
        return chains, features

    def neighbourhood_params(
        self, kg: str, topic_ids: list[str], hops: int, hub_degree: int | None = None
    ) -> dict[str, Any]:
        """The parameters of frag/neighbourhood (and of its GDS reference, frag/gds_pagerank)."""
        cfg = self.config
        return {
            "kg": kg,
            "topic_ids": topic_ids,
            "max_degree": cfg.max_degree or hub_degree or DEFAULT_HUB_DEGREE,
            "max_fanout": cfg.max_fanout,
            "max_new": cfg.max_new,
            "max_nodes": cfg.max_nodes,
            "keep_nodes": cfg.keep_nodes,
            "damping": cfg.damping,
            "max_iterations": cfg.max_iterations,
            "ppr_concurrency": 1,  # the GDS reference only: threads cost more than they save on these sizes
            "hops": hops,
        }

    def _subgraph(
        self, kg: str, topic_ids: list[str], hops: int, trace: FragTrace, hub_degree: int | None = None
    ) -> Subgraph:
        """The neighbourhood, pruned by personalized PageRank when too big: one call (frag/neighbourhood)."""
        records, _, _ = self.driver.execute_query(
            render("frag/neighbourhood"), self.neighbourhood_params(kg, topic_ids, hops, hub_degree)
        )
        row = records[0]
        trace.neighbourhood_nodes = int(row["neighbourhood"])
        trace.ppr_pruned = bool(row["pruned"])
        ids = [str(x) for x in row["ids"]]
        ppr = [float(x) for x in row.get("ppr") or []] or [0.0] * len(ids)
        adjacency: list[list[tuple[int, str, bool]]] = [[] for _ in ids]
        for start, end, relation in row["edges"]:
            adjacency[start].append((end, relation, True))
            adjacency[end].append((start, relation, False))
        names = [str(x) for x in row["names"]]
        sub = Subgraph(ids, names, [bool(x) for x in row["expandable"]], ppr, adjacency)
        trace.kept_nodes, trace.kept_edges = len(ids), len(row["edges"])
        return sub


def _ms(since: float) -> float:
    return (time.perf_counter() - since) * 1000
