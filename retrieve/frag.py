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
3. **Retrieval** on the kept subgraph: simple -> every simple path of at most 2 hops, breadth first;
   complex -> one shortest path per reached node, at most 4 hops (among equally short ones, the most
   relevant). Paths never pass back through a topic entity, nor through a hub.
4. **Postprocessing**: relations are pruned by the similarity of their stored embeddings
   (``(:Relation {embedding})``) to the question (keep ``keep_relations`` = 64). Paths are ranked by the
   KG's path ranker (:mod:`kgqa.models.frag_ranker`, FRAG's reranking step, learned per KG by ``kgqa train
   all``): the similarity of the verbalised chain to the question with its topic entity removed, how well
   the chain's relations match the question's words (see :class:`_WordMatch`), and whether the kind of
   thing the chain arrives at is what the question asks for ("which city", "who"); ties go to end nodes
   reached by more paths, then by PageRank. The best ``keep_paths`` = 32 are kept, most relevant first.

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
from kgqa.core.errors import KgqaError, ModelMissing
from kgqa.core.question_words import asked_for
from kgqa.core.relation_text import chain_text as chain_words
from kgqa.core.relation_text import relation_words as named_words
from kgqa.core.text import BRACKET
from kgqa.core.types import Evidence, LinkedEntity, MethodTrace, Triplet
from kgqa.graph.cypher import render
from kgqa.graph.kg import kg_embedding_model, no_embeddings_line
from kgqa.models import registry
from kgqa.models.encoder import embed
from kgqa.models.frag_ranker import FEATURES, FragRanker, load_ranker
from kgqa.retrieve.base import Retriever
from neo4j import Driver

HopRange = Literal["simple", "complex"]
Step = tuple[str, bool]  # (relation name, True when walked along the stored direction)
# Words that never name a relation; every other word of the question may ("director", "released", "tags").
_FUNCTION_WORDS = frozenset(
    "a an the of in on at to for from by with as is are was were be been being do does did what which who "
    "whom whose when where why how that this these those it its and or but also same together".split()
)


# Words that ask for more of the kind of thing the topic's neighbour touches ("what other films did the
# director of X make"): a chain out along a relation and back asks exactly that.
_OTHER = re.compile(r"\b(other|others|else|another|same|also|too)\b", re.IGNORECASE)
# A second topic entity's walk must meet the first's: their common end nodes rank first, by the sum of the
# two walks' scores; an end that only one topic reaches pays this.
ALONE_PENALTY = 0.5
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
    # With FragRetriever(trace_stages=True): the entity names each stage still holds, so that a benchmark can
    # say where a gold answer was lost: "subgraph" (after PPR pruning), "path_ends" (ends of the candidate
    # paths over the kept relations), "kept" (every node on the kept paths), "kept_ends" (their end nodes).
    stages: dict[str, list[str]] | None = None


# --- the hop-range classifier -------------------------------------------------------------------------------

HopPredictor = Callable[[str, Sequence[str]], tuple[HopRange, int | None]]


def classifier_hop_predictor(kg: str) -> HopPredictor:
    """KG ``kg``'s query-only hop classifier; ModelMissing when none is installed."""
    classifiers = registry.question_classifiers(kg)

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
    if not names:  # a KG loaded with --no-embeddings: nothing to rank relations by
        raise KgqaError(no_embeddings_line("frag", kg))
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
def _relation_word_list(name: str) -> tuple[str, ...]:
    """The content words that name a relation (its phrase and subject, not a dotted name's domain)."""
    words = named_words(name)
    return tuple(
        w for w in dict.fromkeys(f"{words.phrase} {words.subject}".split()) if w not in _FUNCTION_WORDS
    )


@lru_cache(maxsize=4096)
def _relation_stems(name: str) -> frozenset[str]:
    """Stems of the words that name a relation (its phrase and subject, not a dotted name's domain)."""
    words = named_words(name)
    return frozenset(s for s in (_stem(w) for w in f"{words.phrase} {words.subject}".split()) if s)


def relation_words(name: str) -> str:
    """ "born_in" -> "born in"; "location.location.contains" -> "location contains" (repeats dropped)."""
    words = re.sub(r"[._/]+", " ", name).split()
    return " ".join(dict.fromkeys(words))


def chain_text(chain: Sequence[Step]) -> str:
    """A relation chain in words, each hop as a question would name it (:mod:`kgqa.core.relation_text`)."""
    return chain_words([(relation, "out" if forward else "in") for relation, forward in chain])


def _step_key(step: Step) -> str:
    return f"{'out' if step[1] else 'in'}:{step[0]}"


def _arrives_at(step: Step) -> str:
    """What a step arrives at when the KG's ranker does not know: what its name says."""
    words = named_words(step[0])
    return words.role if step[1] else (words.subject or words.phrase)


# --- paths on the kept subgraph -----------------------------------------------------------------------------


@dataclass
class _Candidates:
    sub: _Subgraph
    paths: list[tuple[list[int], list[Step]]]
    question_vector: np.ndarray
    word_match: _WordMatch
    prefer_hops: int | None
    model: str | None
    ranker: FragRanker
    groups: dict[int, int]


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


def _meeting_bonus(
    paths: Sequence[tuple[list[int], list[Step]]],
    chain_score: dict[tuple[Step, ...], float],
    groups: dict[int, int],
) -> dict[int, float]:
    """End node -> what its score gains from the other spans' walks: the sum of their best walks' scores
    when several spans reach it, minus :data:`ALONE_PENALTY` when one does."""
    best: dict[int, dict[int, float]] = {}
    for nodes, steps in paths:
        group = groups.get(nodes[0])
        if group is None:
            continue
        by_group = best.setdefault(nodes[-1], {})
        score = chain_score[tuple(steps)]
        by_group[group] = max(score, by_group.get(group, -1e9))
    out: dict[int, float] = {}
    for end, by_group in best.items():
        if len(by_group) > 1:
            ranked = sorted(by_group.values(), reverse=True)
            out[end] = sum(ranked[1:])
        else:
            out[end] = -ALONE_PENALTY
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
        ranker: FragRanker | None = None,
    ) -> None:
        """``hop_range`` forces simple/complex (tests, ablations); otherwise ``hop_predictor`` decides, by
        default the KG's own classifier. Without an installed classifier every question is complex (the
        paper's fallback when it cannot tell), and the trace says so. ``trace_stages`` records what each
        stage kept (``FragTrace.stages``; for benchmarks: it can be thousands of names). ``ranker``: the path
        ranker for every KG (ablations); by default each KG's own (:func:`load_ranker`)."""
        super().__init__(driver)
        self.config = config or FragConfig()
        self._ranker = ranker
        self.trace_stages = trace_stages
        self._hop_range = hop_range
        self._hop_predictor = hop_predictor

    # hop range ---------------------------------------------------------------------------------------------

    def predict_hop_range(
        self, question: str, kg: str, topic_entities: Sequence[LinkedEntity]
    ) -> tuple[HopRange, str, int | None]:
        """(hop range, where it came from, predicted hop count if the classifier gives one)."""
        if self._hop_range is not None:
            return self._hop_range, "given", None
        predictor = self._hop_predictor
        if predictor is None:
            try:
                predictor = classifier_hop_predictor(kg)
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
            ranked = self._rank(
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
            )
            timings["frag_rank"] = _ms(mark)
        sub, paths = found.sub, found.paths

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
        ranker = self._ranker or load_ranker(kg)
        sub = self._subgraph(kg, [e.id for e in topic_entities], hops, trace, ranker.hub_degree)
        timings["frag_subgraph"] = _ms(mark)

        mark = time.perf_counter()
        query = relation_query(question, topic_entities)
        model = kg_embedding_model(self.driver, kg)  # the stored relation vectors' encoder
        question_vector = embed([query], model=model)[0]
        present = {relation for edges in sub.adjacency for _n, relation, _f in edges}
        allowed, relation_scores, word_match = self._prune_relations(
            kg, query, question_vector, model, present
        )
        trace.relation_scores = relation_scores
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
        trace.ranker = ranker.learned_on or "default weights"
        trace.asked_for = asked_for(question)
        spans: dict[str, int] = {}
        groups = {
            position[e.id]: spans.setdefault(" ".join((e.span or e.name).lower().split()), len(spans))
            for e in topic_entities
            if e.id in position
        }
        prefer = hops_predicted if hop_range in cfg.hop_count_ranges else None
        return _Candidates(sub, paths, question_vector, word_match, prefer, model, ranker, groups)

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
        features = self.features(
            chains,
            found.question_vector,
            found.word_match,
            found.prefer_hops,
            found.model,
            found.ranker,
            trace.asked_for,
            question,
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
    ) -> _Subgraph:
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
        sub = _Subgraph(ids, names, [bool(x) for x in row["expandable"]], ppr, adjacency)
        trace.kept_nodes, trace.kept_edges = len(ids), len(row["edges"])
        return sub

    def _prune_relations(
        self,
        kg: str,
        query: str,
        question_vector: np.ndarray,
        model: str | None = None,
        present: set[str] | None = None,
    ) -> tuple[set[str], dict[str, float], _WordMatch]:
        """The ``keep_relations`` relations of the subgraph (``present``) most similar to the question (their
        stored embeddings), and for every relation how well its best-matching question word matches it (a
        word like "birthplace" says more about ``born_in`` than the whole question does)."""
        names, matrix = relation_embeddings(self.driver, kg)
        if not names:  # no Relation nodes: nothing to prune by
            return _AllRelations(), {}, _WordMatch([], None)
        similarity = matrix @ question_vector
        candidates = np.asarray(
            [i for i, name in enumerate(names) if present is None or name in present], dtype=np.int64
        )
        order = candidates[np.argsort(-similarity[candidates])][: self.config.keep_relations]
        scores = {names[i]: round(float(similarity[i]), 4) for i in order}
        words = [w for w in dict.fromkeys(re.findall(r"[\w']+", query.lower())) if w not in _FUNCTION_WORDS]
        similarity = _CHAINS.get(words, model) @ matrix.T if words else None
        if similarity is not None:
            # each word of a relation's name on its own too: "born" is nearer "birth" than the whole name
            vocabulary = sorted({w for name in names for w in _relation_word_list(name)})
            if vocabulary:
                position = {w: i for i, w in enumerate(vocabulary)}
                by_word = _CHAINS.get(words, model) @ _CHAINS.get(vocabulary, model).T
                for j, name in enumerate(names):
                    columns = [position[w] for w in _relation_word_list(name)]
                    if columns:
                        similarity[:, j] = np.maximum(similarity[:, j], by_word[:, columns].max(axis=1))
            # a shared stem ("writer", "written_by") is as good as it gets
            for i, word in enumerate(words):
                for j, name in enumerate(names):
                    if _stem(word) and _stem(word) in _relation_stems(name):
                        similarity[i, j] = max(similarity[i, j], 1.0)
        word_match = _WordMatch(names, similarity)
        return set(scores), scores, word_match

    def features(
        self,
        chains: Sequence[tuple[Step, ...]],
        question_vector: np.ndarray,
        word_match: _WordMatch,
        prefer_hops: int | None,
        model: str | None,
        ranker: FragRanker,
        asked: str,
        question_text: str = "",
    ) -> np.ndarray:
        """One row of :data:`~kgqa.models.frag_ranker.FEATURES` per chain."""
        if not chains:
            return np.zeros((0, len(FEATURES)), dtype=np.float32)
        similarity = _CHAINS.get([chain_text(chain) for chain in chains], model) @ question_vector
        kind_fit = np.zeros(len(chains), dtype=np.float32)
        if asked:
            kinds = [ranker.kinds.get(_step_key(chain[-1])) or _arrives_at(chain[-1]) for chain in chains]
            kind_fit = _CHAINS.get(kinds, model) @ _CHAINS.get([asked], model)[0]
        asks_other = bool(_OTHER.search(question_text))
        rows = []
        for chain, sim, fit in zip(chains, similarity, kind_fit, strict=True):
            used, covered, weakest = word_match.features([r for r, _ in chain])
            round_trip = any(b[0] == a[0] and b[1] != a[1] for a, b in zip(chain, chain[1:], strict=False))
            rows.append(
                [
                    float(sim),
                    used,
                    covered,
                    float(fit),
                    float(len(chain) == 2),
                    float(len(chain) >= 3),
                    float(prefer_hops is not None and len(chain) == prefer_hops),
                    float(round_trip and asks_other),
                    float(round_trip and not asks_other),
                    weakest,
                ]
            )
        return np.asarray(rows, dtype=np.float32)

    def _rank(
        self,
        paths: Sequence[tuple[list[int], list[Step]]],
        sub: _Subgraph,
        question_vector: np.ndarray,
        word_match: _WordMatch,
        prefer_hops: int | None = None,
        one_per_node: bool = False,
        model: str | None = None,
        ranker: FragRanker | None = None,
        asked: str = "",
        question: str = "",
        groups: dict[int, int] | None = None,
    ) -> list[tuple[float, list[int], list[Step]]]:
        """Paths by how well their relation chain fits the question, best first: the KG's ranker weighs the
        chain's features (:meth:`features`); ties go to end nodes reached by more paths (a director of
        two of the topic's films), then by PageRank.

        ``groups`` maps each source node to the question span it was linked from: with two or more, an end
        node that the walks of several spans reach scores the sum of each span's best walk to it, and one
        that a single span reaches pays :data:`ALONE_PENALTY` ("which films did X and Y both act in")."""
        if not paths:
            return []
        ranker = ranker or FragRanker()
        chains = list(dict.fromkeys(tuple(steps) for _, steps in paths))
        features = self.features(
            chains, question_vector, word_match, prefer_hops, model, ranker, asked, question
        )
        scores = features @ np.asarray(ranker.weights.vector(), dtype=np.float32)
        chain_score = {chain: float(s) for chain, s in zip(chains, scores, strict=True)}
        multiplicity: dict[tuple[tuple[Step, ...], int], int] = {}
        for nodes, steps in paths:
            key = (tuple(steps), nodes[-1])
            multiplicity[key] = multiplicity.get(key, 0) + 1
        bonus = _meeting_bonus(paths, chain_score, groups) if groups and len(set(groups.values())) > 1 else {}
        scored = []
        for i, (nodes, steps) in enumerate(paths):
            chain = tuple(steps)
            score = chain_score[chain] + bonus.get(nodes[-1], 0.0)
            scored.append((round(score, 6), multiplicity[(chain, nodes[-1])], sub.ppr[nodes[-1]], i))

        def key(s: tuple[float, int, float, int]) -> tuple[float, int, float, int]:
            return (-s[0], -s[1], -s[2], s[3])

        if one_per_node:  # complex: one shortest path per reached node, its most relevant one
            best: dict[int, tuple[float, int, float, int]] = {}
            for item in scored:
                end = paths[item[3]][0][-1]
                if end not in best or key(item) < key(best[end]):
                    best[end] = item
            scored = list(best.values())  # the same order as sorting all, then keeping each node's first
        scored.sort(key=key)
        return [(s[0], paths[s[3]][0], paths[s[3]][1]) for s in scored]


class _WordMatch:
    """Similarities between the question's words and the KG's relations (stored relation embeddings).

    ``score(relations)`` is the mean, over the chain's relations, of each one's best word ("born" for
    ``born_in``; a shared stem counts as a perfect match), plus the mean, over the question's
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

    def features(self, relations: Sequence[str]) -> tuple[float, float, float]:
        """(used, covered, weakest) of a chain of these relations."""
        if self.similarity is None:
            return 0.0, 0.0, 0.0
        columns = [self.index[r] for r in relations if r in self.index]
        if not columns:
            return 0.0, 0.0, 0.0
        used = float(np.mean(self.best_word[columns]))
        covered = float(self.salient_words[:, columns].max(axis=1).mean()) if len(self.salient_words) else 0.0
        return used, covered, float(np.min(self.best_word[columns]))

    def score(self, relations: Sequence[str]) -> float:
        used, covered, _weakest = self.features(relations)
        return used + covered


class _AllRelations(set[str]):
    """A relation filter that lets every relation through (a KG loaded without Relation nodes)."""

    def __contains__(self, item: object) -> bool:
        return True


def _ms(since: float) -> float:
    return (time.perf_counter() - since) * 1000
