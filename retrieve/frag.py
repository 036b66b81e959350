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
   Hubs (non-topic nodes with more than ``max_degree`` relationships, e.g. MetaQA genres, years, languages)
   join the neighbourhood but are not expanded; layer and size caps keep it bounded.
3. **Retrieval** on the kept subgraph: simple -> every simple path of at most 2 hops, breadth first;
   complex -> one shortest path per reached node, at most 4 hops (among equally short ones, the most
   relevant). Paths never pass back through a topic entity, nor through a hub.
4. **Postprocessing**: relations are pruned by the similarity of their stored embeddings
   (``(:Relation {embedding})``) to the question (keep ``keep_relations`` = 64). Paths are ranked by the
   similarity of their relation chain to the question with its topic entity removed: the verbalised chain
   against the question, plus how well the chain's relations match the question's words (see
   :class:`_WordMatch`); ties go to end nodes reached by more paths, then by PageRank. The best
   ``keep_paths`` = 32 are kept, most relevant first.

Extension beyond the paper: the project's classifier also predicts the exact hop count, and paths of that
length rank first (``FragConfig.hop_count_ranges``).

The evidence carries the paths (``paths``, with ``path_scores``), their triplets deduplicated in path order,
and the path end entities in rank order as ``answer_candidates`` (with ``answer_scores``); its
:class:`FragTrace` has the hop range, the relation scores and the size of each stage, and ``latency_ms`` the
per-stage timings.
"""

from __future__ import annotations

import gc
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from typing import Any, Literal

import numpy as np
from kgqa.core.errors import ModelMissing
from kgqa.core.text import BRACKET
from kgqa.core.types import Evidence, LinkedEntity, MethodTrace, Triplet
from kgqa.graph.cypher import render
from kgqa.graph.kg import kg_embedding_model
from kgqa.models import registry
from kgqa.models.encoder import embed
from kgqa.models.gsr import ChainModel, masked
from kgqa.retrieve.base import Retriever
from neo4j import Driver

HopRange = Literal["simple", "complex"]
Step = tuple[str, bool]  # (relation name, True when walked along the stored direction)
# Words that never name a relation; every other word of the question may ("director", "released", "tags").
_FUNCTION_WORDS = frozenset(
    "a an the of in on at to for from by with as is are was were be been being do does did what which who "
    "whom whose when where why how that this these those it its and or but also same together".split()
)


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
    # Path reranking (the paper's bge-reranker step): the relation chains ranked best by similarity, at most
    # this many, are rescored by a model trained here, GSR's chain generator (log P(chain | question));
    # 0 turns it off. Only when a GSR model is installed and one topic entity was linked; the trace says
    # which ranking ran. Chosen on the tune part of bench/questions/metaqa_freeform.jsonl
    # (bench/questions_answers.py --methods frag,frag:similarity,frag:rerank-keeps-hops).
    rerank_chains: int = 64
    # When the chain model gives its best chain less than 1 % (log-probability below this), the question is
    # unlike anything it learned from (noise, an injection: two GSR models trained here gave those -7.4 and
    # -8.1) and the similarity ranking stands. On our free-form tune questions this costs 3 and gains 1 of
    # 240 (bench/results/frag/rerank-floor.md); the 10th percentile of their best scores, -7.6, sits in the
    # tail where two training runs of the same model already differ.
    rerank_floor: float | None = -4.6
    # with the reranker, paths of the predicted hop count still rank first
    rerank_keeps_hop_count: bool = False
    max_degree: int = 200  # non-topic nodes with more relationships are not expanded (hubs)
    max_fanout: int = 5000  # neighbours read per expanded node
    max_new: int = 6000  # new nodes kept per breadth-first layer (best connected first)
    max_nodes: int = 12000  # neighbourhood size cap
    max_paths: int = 50000  # candidate paths enumerated before ranking
    # Extension: when the classifier also predicts the exact hop count, paths of that length rank first, in
    # these hop ranges (in complex mode the shortest path to an answer is often shorter than the question).
    hop_count_ranges: tuple[str, ...] = ("simple", "complex")


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
    reranker: str = ""  # the model that reranked the chains ("" : similarity alone, and why)
    chains_reranked: int = 0
    best_chain_log_probability: float | None = None  # the reranker's best score: how sure it was
    # With FragRetriever(trace_stages=True): the entity names each stage still holds, so that a benchmark can
    # say where a gold answer was lost: "subgraph" (after PPR pruning), "path_ends" (ends of the candidate
    # paths over the kept relations), "kept" (every node on the kept paths), "kept_ends" (their end nodes).
    stages: dict[str, list[str]] | None = None


# --- the hop-range classifier -------------------------------------------------------------------------------

HopPredictor = Callable[[str, Sequence[str]], tuple[HopRange, int | None]]


def classifier_hop_predictor() -> HopPredictor:
    """The project's query-only hop classifier; ModelMissing when none is installed."""
    classifiers = registry.question_classifiers()

    def predict(question: str, spans: Sequence[str]) -> tuple[HopRange, int | None]:
        prediction = classifiers.predict_hops(question, list(spans))
        return prediction.hop_range, int(prediction.hops)

    return predict


# --- embeddings (question, relations, relation chains) ------------------------------------------------------


class _ChainCache:
    """Embeddings of verbalised relation chains; chains recur across questions, so they are computed once."""

    def __init__(self, size: int = 100_000) -> None:
        self._size = size
        self._data: OrderedDict[tuple[str | None, str], np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, texts: Sequence[str], model: str | None = None) -> np.ndarray:
        """Rows of ``texts`` by ``model`` (the KG's encoder; None: the default one)."""
        keys = [(model, t) for t in texts]
        with self._lock:
            missing = [key for key in dict.fromkeys(keys) if key not in self._data]
        if missing:
            vectors = embed([t for _m, t in missing], model=model)
            with self._lock:
                for key, vector in zip(missing, vectors, strict=True):
                    self._data[key] = vector
                while len(self._data) > self._size:
                    self._data.popitem(last=False)
        with self._lock:
            return np.stack([self._data[k] for k in keys]) if keys else np.zeros((0, 0), dtype=np.float32)


_CHAINS = _ChainCache()
_RELATIONS: dict[tuple[int, str], tuple[float, list[str], np.ndarray]] = {}
_RELATIONS_TTL = 300.0


def relation_embeddings(driver: Driver, kg: str) -> tuple[list[str], np.ndarray]:
    """Relation names of ``kg`` and their stored embeddings (cached per driver and KG for a few minutes)."""
    key = (id(driver), kg)
    cached = _RELATIONS.get(key)
    now = time.monotonic()
    if cached is not None and now - cached[0] < _RELATIONS_TTL:
        return cached[1], cached[2]
    records, _, _ = driver.execute_query(render("frag/relations"), {"kg": kg}, routing_="r")
    names = [str(r["name"]) for r in records]
    matrix = np.asarray([r["embedding"] for r in records], dtype=np.float32).reshape(len(names), -1)
    _RELATIONS[key] = (now, names, matrix)
    return names, matrix


def relation_query(question: str, topic_entities: Sequence[LinkedEntity]) -> str:
    """The question without its topic entities: what is left asks for relations ("who directed the films
    starred in"), and the entity's own words would only pull the similarity towards unrelated relations."""
    text = BRACKET.sub(" ", question)
    if text == question:
        for entity in sorted(topic_entities, key=lambda e: -len(e.span or e.name)):
            span = entity.span or entity.name
            if span:
                text = re.sub(re.escape(span), " ", text, flags=re.IGNORECASE)
    text = " ".join(text.split())
    return text or question


def _stem(word: str) -> str:
    """A crude stem: the first four letters of words of at least four ("directed", "director" -> "dire")."""
    return word[:4] if len(word) >= 4 else ""


@lru_cache(maxsize=4096)
def _relation_stems(name: str) -> frozenset[str]:
    return frozenset(s for s in (_stem(w) for w in re.split(r"[\W_]+", name.lower())) if s)


def relation_words(name: str) -> str:
    """ "directed_by" -> "directed by"; "film.film.directed_by" -> "film directed by" (repeats dropped)."""
    words = re.sub(r"[._/]+", " ", name).split()
    return " ".join(dict.fromkeys(words))


def chain_text(chain: Sequence[Step]) -> str:
    """A relation chain in words, each hop marked with the way it is walked."""
    parts = []
    for relation, forward in chain:
        words = relation_words(relation)
        parts.append(words if forward else f"{words} of")
    return " , ".join(parts)


# --- paths on the kept subgraph -----------------------------------------------------------------------------


@dataclass
class _Subgraph:
    ids: list[str]
    names: list[str]
    expandable: list[bool]
    ppr: list[float]
    adjacency: list[list[tuple[int, str, bool]]]  # node -> (neighbour, relation, forward)


def _simple_paths(
    sub: _Subgraph, sources: Iterable[int], hops: int, allowed: set[str], limit: int
) -> list[tuple[list[int], list[Step]]]:
    """Every simple path of 1..hops hops from the sources, breadth first, through expandable nodes only."""
    topics = set(sources)
    out: list[tuple[list[int], list[Step]]] = []
    layer: list[tuple[list[int], list[Step]]] = [([s], []) for s in sources]
    for _ in range(hops):
        following: list[tuple[list[int], list[Step]]] = []
        for nodes, steps in layer:
            last = nodes[-1]
            if len(nodes) > 1 and not sub.expandable[last]:
                continue
            for neighbour, relation, forward in sub.adjacency[last]:
                if relation not in allowed or neighbour in nodes or neighbour in topics:
                    continue
                path = (nodes + [neighbour], steps + [(relation, forward)])
                out.append(path)
                following.append(path)
                if len(out) >= limit:
                    return out
        layer = following
    return out


def _shortest_paths(
    sub: _Subgraph, sources: Iterable[int], hops: int, allowed: set[str], limit: int, per_node: int = 8
) -> list[tuple[list[int], list[Step]]]:
    """Shortest paths (at most ``hops`` hops) from the sources to every reached node, breadth first.

    A node reached by several shortest paths keeps up to ``per_node`` of them with distinct relation chains;
    ranking then keeps the most relevant one per node, so each node still contributes one shortest path,
    not an arbitrary one (a film both written and directed by the same person is reached either way)."""
    depth: dict[int, int] = {}
    found: dict[int, dict[tuple[Step, ...], list[int]]] = {}
    for s in sources:
        depth[s] = 0
        found[s] = {(): [s]}
    frontier = list(found)
    order: list[int] = []
    for level in range(1, hops + 1):
        following: list[int] = []
        for node in frontier:
            if level > 1 and not sub.expandable[node]:
                continue
            for neighbour, relation, forward in sub.adjacency[node]:
                if relation not in allowed:
                    continue
                if neighbour not in depth:
                    depth[neighbour] = level
                    found[neighbour] = {}
                    following.append(neighbour)
                    order.append(neighbour)
                if depth[neighbour] != level:
                    continue
                chains = found[neighbour]
                for chain, nodes in found[node].items():
                    if len(chains) >= per_node:
                        break
                    extended = chain + ((relation, forward),)
                    if extended not in chains:
                        chains[extended] = nodes + [neighbour]
        frontier = following
    out: list[tuple[list[int], list[Step]]] = []
    for node in order:
        for chain, nodes in found[node].items():
            out.append((nodes, list(chain)))
        if len(out) >= limit:
            break
    return out


def _triplets(sub: _Subgraph, nodes: Sequence[int], steps: Sequence[Step]) -> list[Triplet]:
    out: list[Triplet] = []
    for (relation, forward), a, b in zip(steps, nodes, nodes[1:], strict=False):
        head, tail = (a, b) if forward else (b, a)
        out.append((sub.names[head], relation, sub.names[tail]))
    return out


# --- the retriever ------------------------------------------------------------------------------------------

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


class FragRetriever(Retriever):
    name = "frag"

    def __init__(
        self,
        driver: Driver,
        config: FragConfig | None = None,
        hop_predictor: HopPredictor | None = None,
        hop_range: HopRange | None = None,
        trace_stages: bool = False,
        chain_model: ChainModel | None | bool = True,
    ) -> None:
        """``hop_range`` forces simple/complex (tests, ablations); otherwise ``hop_predictor`` decides, by
        default the project's classifier. Without an installed classifier every question is complex (the
        paper's fallback when it cannot tell), and the trace says so. ``trace_stages`` records what each
        stage kept (``FragTrace.stages``; for benchmarks: it can be thousands of names). ``chain_model``
        reranks the chains (True: the default GSR model when one is installed; False or None: none)."""
        super().__init__(driver)
        self.config = config or FragConfig()
        self._no_reranker = ""
        if chain_model is True:
            try:
                chain_model = registry.gsr_chain_model()
            except ModelMissing as missing:
                chain_model, self._no_reranker = None, f"similarity only ({missing})"
        self.chain_model: ChainModel | None = chain_model or None
        self.trace_stages = trace_stages
        self._hop_range = hop_range
        self._no_predictor = ""
        if hop_predictor is None and hop_range is None:
            try:
                hop_predictor = classifier_hop_predictor()
            except ModelMissing as missing:
                self._no_predictor = f"fallback ({missing})"
        self._hop_predictor = hop_predictor

    # hop range ---------------------------------------------------------------------------------------------

    def predict_hop_range(
        self, question: str, topic_entities: Sequence[LinkedEntity]
    ) -> tuple[HopRange, str, int | None]:
        """(hop range, where it came from, predicted hop count if the classifier gives one)."""
        if self._hop_range is not None:
            return self._hop_range, "given", None
        if self._hop_predictor is None:
            return "complex", self._no_predictor, None
        spans = [e.span or e.name for e in topic_entities]
        hop_range, hops = self._hop_predictor(question, spans)
        return hop_range, "classifier", hops

    # search ------------------------------------------------------------------------------------------------

    def retrieve(self, question: str, kg: str, k: int, topic_entities: list[LinkedEntity]) -> Evidence:
        cfg = self.config
        timings: dict[str, float] = {}
        began = time.perf_counter()
        hop_range, source, hops_predicted = self.predict_hop_range(question, topic_entities)
        trace = FragTrace(hop_range, source, hops_predicted, asdict(cfg))
        evidence = Evidence(question, self.name, kg, list(topic_entities), trace=trace)
        timings["frag_classify"] = _ms(began)
        if not topic_entities:
            evidence.reason = "no topic entity"
            evidence.latency_ms.update(timings)
            return evidence

        with _cyclic_gc_paused():
            hops = cfg.simple_hops if hop_range == "simple" else cfg.complex_hops
            mark = time.perf_counter()
            sub = self._subgraph(kg, [e.id for e in topic_entities], hops, trace)
            timings["frag_subgraph"] = _ms(mark)

            mark = time.perf_counter()
            query = relation_query(question, topic_entities)
            model = kg_embedding_model(self.driver, kg)  # the stored relation vectors' encoder
            question_vector = embed([query], model=model)[0]
            allowed, relation_scores, word_match = self._prune_relations(kg, query, question_vector, model)
            timings["frag_relations"] = _ms(mark)

            mark = time.perf_counter()
            position = {node_id: i for i, node_id in enumerate(sub.ids)}
            sources = [position[e.id] for e in topic_entities if e.id in position]
            if hop_range == "simple":
                paths = _simple_paths(sub, sources, hops, allowed, cfg.max_paths)
            else:
                paths = _shortest_paths(sub, sources, hops, allowed, cfg.max_paths)
            timings["frag_paths"] = _ms(mark)
            trace.candidate_paths = len(paths)

            mark = time.perf_counter()
            prefer = hops_predicted if hop_range in cfg.hop_count_ranges else None
            rerank = self._reranker(question, topic_entities, trace)
            complex_range = hop_range == "complex"
            ranked = self._rank(
                paths,
                sub,
                question_vector,
                word_match,
                prefer,
                one_per_node=complex_range,
                rerank=rerank,
                model=model,
            )
            trace.chains_reranked = min(cfg.rerank_chains, len({tuple(steps) for _n, steps in paths}))
            best = trace.best_chain_log_probability
            if rerank is None:
                trace.chains_reranked = 0
            elif best is None or (cfg.rerank_floor is not None and best < cfg.rerank_floor):
                trace.reranker = f"similarity only (the chain model is unsure: best log-probability {best})"
            timings["frag_rank"] = _ms(mark)

        kept = ranked[: cfg.keep_paths]
        seen: dict[Triplet, None] = {}
        answers: dict[str, float] = {}
        for score, nodes, steps in kept:
            triplets = _triplets(sub, nodes, steps)
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
        trace.relation_scores = relation_scores
        evidence.latency_ms.update(timings)
        return evidence

    def neighbourhood_params(self, kg: str, topic_ids: list[str], hops: int) -> dict[str, Any]:
        """The parameters of frag/neighbourhood (and of its GDS reference, frag/gds_pagerank)."""
        cfg = self.config
        return {
            "kg": kg,
            "topic_ids": topic_ids,
            "max_degree": cfg.max_degree,
            "max_fanout": cfg.max_fanout,
            "max_new": cfg.max_new,
            "max_nodes": cfg.max_nodes,
            "keep_nodes": cfg.keep_nodes,
            "damping": cfg.damping,
            "max_iterations": cfg.max_iterations,
            "ppr_concurrency": 1,  # the GDS reference only: threads cost more than they save on these sizes
            "hops": hops,
        }

    def _reranker(
        self, question: str, topic_entities: Sequence[LinkedEntity], trace: FragTrace
    ) -> Callable[[Sequence[tuple[Step, ...]]], np.ndarray] | None:
        """log P(chain | question) by the chain model, the topic entity masked as it was trained; None
        without a model (the trace says why)."""
        model = self.chain_model
        if model is None or self.config.rerank_chains <= 0:
            trace.reranker = self._no_reranker or "similarity only (rerank_chains = 0)"
            return None
        if len({e.id for e in topic_entities}) != 1:
            # the chain model reads one masked entity: with two, it ignores the second one's constraint
            # (our free-form tune questions: two-entity Hits@1 38.1 with similarity, 9.5 reranked)
            trace.reranker = "similarity only (several topic entities)"
            return None
        trace.reranker = f"gsr chain model {model.name!r}"
        text = masked(question, [e.span or e.name for e in topic_entities])

        def score(chains: Sequence[tuple[Step, ...]]) -> np.ndarray:
            steps = [[(rel, "out" if along else "in") for rel, along in chain] for chain in chains]
            scores = model.score(text, steps)
            finite = scores[np.isfinite(scores)]
            trace.best_chain_log_probability = round(float(finite.max()), 4) if finite.size else None
            return scores

        return score

    def _subgraph(self, kg: str, topic_ids: list[str], hops: int, trace: FragTrace) -> _Subgraph:
        """The neighbourhood, pruned by personalized PageRank when too big: one call (frag/neighbourhood)."""
        records, _, _ = self.driver.execute_query(
            render("frag/neighbourhood"), self.neighbourhood_params(kg, topic_ids, hops)
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
        sub = _Subgraph(ids, names, [bool(x) for x in row["expandable"]], ppr, adjacency)
        trace.kept_nodes, trace.kept_edges = len(ids), len(row["edges"])
        return sub

    def _prune_relations(
        self, kg: str, query: str, question_vector: np.ndarray, model: str | None = None
    ) -> tuple[set[str], dict[str, float], _WordMatch]:
        """The ``keep_relations`` relations most similar to the question (their stored embeddings), and for
        every relation how well its best-matching question word matches it (a word like "director" says
        more about ``directed_by`` than the whole question does)."""
        names, matrix = relation_embeddings(self.driver, kg)
        if not names:  # no Relation nodes: nothing to prune by
            return _AllRelations(), {}, _WordMatch([], None)
        similarity = matrix @ question_vector
        order = np.argsort(-similarity)[: self.config.keep_relations]
        scores = {names[i]: round(float(similarity[i]), 4) for i in order}
        words = [w for w in dict.fromkeys(re.findall(r"[\w']+", query.lower())) if w not in _FUNCTION_WORDS]
        similarity = _CHAINS.get(words, model) @ matrix.T if words else None
        if similarity is not None:  # a shared stem ("writer", "written_by") is as good as it gets
            for i, word in enumerate(words):
                for j, name in enumerate(names):
                    if _stem(word) and _stem(word) in _relation_stems(name):
                        similarity[i, j] = max(similarity[i, j], 1.0)
        word_match = _WordMatch(names, similarity)
        return set(scores), scores, word_match

    def _rank(
        self,
        paths: Sequence[tuple[list[int], list[Step]]],
        sub: _Subgraph,
        question_vector: np.ndarray,
        word_match: _WordMatch,
        prefer_hops: int | None = None,
        one_per_node: bool = False,
        rerank: Callable[[Sequence[tuple[Step, ...]]], np.ndarray] | None = None,
        model: str | None = None,
    ) -> list[tuple[float, list[int], list[Step]]]:
        """Paths by similarity of their relation chain to the question, best first.

        A chain scores the similarity of its verbalisation to the question (entity removed), plus how well its
        relations match words of the question (see :class:`_WordMatch`). With ``rerank``, the
        ``rerank_chains`` best chains are scored by it instead and rank above the rest (ties: similarity)."""
        if not paths:
            return []
        chains = list(dict.fromkeys(tuple(steps) for _, steps in paths))

        def by_similarity() -> dict[tuple[Step, ...], float]:
            similarity = _CHAINS.get([chain_text(chain) for chain in chains], model) @ question_vector
            return {
                chain: float(s) + word_match.score([r for r, _ in chain])
                for chain, s in zip(chains, similarity, strict=True)
            }

        chain_score: dict[tuple[Step, ...], float] = {}
        reranked: dict[tuple[Step, ...], float] = {}
        if rerank is not None:
            # the similarity (an embedding per new chain text) is needed only to shortlist, or as a fallback
            if len(chains) > self.config.rerank_chains:
                chain_score = by_similarity()
                shortlist = sorted(chains, key=lambda c: -chain_score[c])[: self.config.rerank_chains]
            else:
                shortlist = chains
            reranked = dict(zip(shortlist, (float(x) for x in rerank(shortlist)), strict=True))
            top_score = max((x for x in reranked.values() if np.isfinite(x)), default=None)
            floor = self.config.rerank_floor
            if top_score is None or (floor is not None and top_score < floor):
                reranked = {}  # unsure: the similarity ranking stands
        if reranked:
            if not self.config.rerank_keeps_hop_count:
                prefer_hops = None  # the chain model scores the chain's length too
            if not chain_score and any(not (c in reranked and np.isfinite(reranked[c])) for c in chains):
                chain_score = by_similarity()
            # reranked chains first (a finite log-probability), the rest by similarity, far below
            chain_score = {
                c: reranked[c] if c in reranked and np.isfinite(reranked[c]) else -1e6 + chain_score[c]
                for c in chains
            }
        elif not chain_score:
            chain_score = by_similarity()
        # Within one chain: end nodes reached by more paths first (a director of two of the topic's films),
        # then by PageRank.
        multiplicity: dict[tuple[tuple[Step, ...], int], int] = {}
        for nodes, steps in paths:
            key = (tuple(steps), nodes[-1])
            multiplicity[key] = multiplicity.get(key, 0) + 1
        scored = []
        for i, (nodes, steps) in enumerate(paths):
            chain = tuple(steps)
            length_match = prefer_hops is None or len(steps) == prefer_hops
            scored.append(
                (
                    length_match,
                    round(chain_score[chain], 6),
                    multiplicity[(chain, nodes[-1])],
                    sub.ppr[nodes[-1]],
                    i,
                )
            )

        def key(s: tuple[bool, float, int, float, int]) -> tuple[bool, float, int, float, int]:
            return (not s[0], -s[1], -s[2], -s[3], s[4])

        if one_per_node:  # complex: one shortest path per reached node, its most relevant one
            best: dict[int, tuple[bool, float, int, float, int]] = {}
            for item in scored:
                end = paths[item[4]][0][-1]
                if end not in best or key(item) < key(best[end]):
                    best[end] = item
            scored = list(best.values())  # the same order as sorting all, then keeping each node's first
        scored.sort(key=key)
        return [(s[1], paths[s[4]][0], paths[s[4]][1]) for s in scored]


class _WordMatch:
    """Similarities between the question's words and the KG's relations (stored relation embeddings).

    ``score(relations)`` is the mean, over the chain's relations, of each one's best word ("director" for
    ``directed_by``; a shared stem counts as a perfect match), plus the mean, over the question's
    relation-like words (best similarity to some relation at least ``salient``), of how well the chain
    covers each: a chain should both use relations the question names and leave none of them out
    ("screenwriter of the films starred by ... actors")."""

    salient = 0.4

    def __init__(self, names: Sequence[str], similarity: np.ndarray | None) -> None:
        self.index = {name: i for i, name in enumerate(names)}
        self.similarity = similarity  # words x relations
        if similarity is not None and similarity.size:
            self.best_word = similarity.max(axis=0)
            self.salient_words = similarity[similarity.max(axis=1) >= self.salient]
        else:
            self.similarity = None

    def score(self, relations: Sequence[str]) -> float:
        if self.similarity is None:
            return 0.0
        columns = [self.index[r] for r in relations if r in self.index]
        if not columns:
            return 0.0
        used = float(np.mean(self.best_word[columns]))
        covered = float(self.salient_words[:, columns].max(axis=1).mean()) if len(self.salient_words) else 0.0
        return used + covered


class _AllRelations(set[str]):
    """A relation filter that lets every relation through (a KG loaded without Relation nodes)."""

    def __contains__(self, item: object) -> bool:
        return True


def _ms(since: float) -> float:
    return (time.perf_counter() - since) * 1000
