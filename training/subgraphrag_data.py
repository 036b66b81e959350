"""Data for the SubgraphRAG triple scorer: embedding caches, candidate subgraphs, DDE, weak labels.

Everything here is numpy (no torch), so the benchmark and the retrievers can use it too.

* ``KgIndex`` — the stored 384-d embeddings of one KG's entities and relations, fetched once through Bolt and
  cached as ``.npz`` under ``KGQA_HOME/cache/subgraphrag/<kg>/`` (a fingerprint of the KG invalidates it).
* ``Subgraph`` — one question's candidate triples as local entity indices plus the per-entity DDE codes. The
  authoritative source is the ``kgqa.subgraphrag.candidates`` procedure (``fetch_subgraph``), so training and
  in-database inference share one DDE implementation. ``local_subgraph`` + ``dde_codes`` are a numpy reference
  of the same definition, used by the unit tests and to cross-check the procedure.
* ``shortest_path_labels`` — the weak labels: every triple on a shortest path between a topic entity and an
  answer entity, edges usable in both directions.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from kgqa.core.config import kgqa_home
from kgqa.core.errors import KgqaError
from kgqa.core.limits import ROW_CAP
from kgqa.graph.cypher import render
from neo4j import Driver
from scipy import sparse

EMBEDDING_DIM = 384
DDE_ROUNDS_FORWARD = 2
DDE_ROUNDS_REVERSE = 2
DEFAULT_MAX_CANDIDATES = ROW_CAP


@dataclass(frozen=True)
class DdeLayout:
    """What an entity code holds: the DDE (the seed one-hot s0 or not, then ``forward`` rounds along the
    triples and ``reverse`` rounds against them, SubgraphRAG's ``num_rounds`` / ``num_reverse_rounds``; two
    rounds cannot tell a distance of 3 from farther away, which 3-hop questions need), then, with
    ``path_steps``, the path code (``path_weights``: by which relations the entity is reached)."""

    include_seed: bool = True
    forward: int = DDE_ROUNDS_FORWARD
    reverse: int = DDE_ROUNDS_REVERSE
    path_steps: int = 0

    def __post_init__(self) -> None:
        if not 0 <= self.forward <= 8 or not 0 <= self.reverse <= 8:
            raise ValueError(f"DDE rounds must be within 0..8, got {self.forward} and {self.reverse}")
        if not 0 <= self.path_steps <= 4:
            raise ValueError(f"path steps must be within 0..4, got {self.path_steps}")


def dde_entity_dim(dde: DdeLayout) -> int:
    """Width of one entity's DDE code: 2 per round (+2 for the seed one-hot s0)."""
    return 2 * (dde.forward + dde.reverse + (1 if dde.include_seed else 0))


def entity_code_dim(dde: DdeLayout, embedding_dim: int = EMBEDDING_DIM) -> int:
    """Width of one entity's code as the scorer reads it: its DDE, then its path code's relation mixtures."""
    return dde_entity_dim(dde) + 2 * dde.path_steps * embedding_dim


def input_dim(dde: DdeLayout, embedding_dim: int = EMBEDDING_DIM, question_relation: bool = False) -> int:
    """Width of one feature row [z_q ‖ z_head ‖ z_rel ‖ z_tail ‖ code_head ‖ code_tail (‖ z_q ⊙ z_rel)]."""
    return (5 if question_relation else 4) * embedding_dim + 2 * entity_code_dim(dde, embedding_dim)


def cache_dir(kg: str) -> Path:
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", kg)
    return kgqa_home() / "cache" / "subgraphrag" / safe


def _atomic_save_npz(path: Path, **arrays: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name, suffix=".tmp.npz", dir=path.parent)
    os.close(fd)
    try:
        np.savez(tmp, **arrays)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


# --- the embedding cache ---------------------------------------------------------------------------------


@dataclass
class KgIndex:
    """One KG's entity and relation embeddings, addressable by entity id and relation name."""

    kg: str
    entity_ids: list[str]
    entity_names: list[str]
    entity_vectors: np.ndarray  # float32 [E, d], L2-normalised as stored by the loader
    relation_names: list[str]
    relation_vectors: np.ndarray  # float32 [R, d]
    fingerprint: str = ""
    _id_index: dict[str, int] = field(default_factory=dict, repr=False)
    _rel_index: dict[str, int] = field(default_factory=dict, repr=False)
    _name_index: dict[str, list[int]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self._id_index = {e: i for i, e in enumerate(self.entity_ids)}
        self._rel_index = {r: i for i, r in enumerate(self.relation_names)}

    @property
    def embedding_dim(self) -> int:
        return int(self.entity_vectors.shape[1])

    def entity(self, entity_id: str) -> int:
        try:
            return self._id_index[entity_id]
        except KeyError:
            raise KgqaError(f"entity {entity_id!r} is not in KG {self.kg!r}") from None

    def has_entity(self, entity_id: str) -> bool:
        return entity_id in self._id_index

    def relation(self, name: str) -> int:
        try:
            return self._rel_index[name]
        except KeyError:
            raise KgqaError(f"relation {name!r} has no (:Relation) node in KG {self.kg!r}") from None

    def entities_named(self, name: str) -> list[int]:
        """Indices of the entities with this exact name (MetaQA names are ids; Freebase names are not)."""
        if not self._name_index:
            index: dict[str, list[int]] = {}
            for i, entity_name in enumerate(self.entity_names):
                index.setdefault(entity_name, []).append(i)
            self._name_index = index
        return self._name_index.get(name, [])


def kg_fingerprint(driver: Driver, kg: str) -> str:
    records, _, _ = driver.execute_query(render("training/kg_fingerprint"), kg=kg)
    record = records[0]
    props = {k: str(v) for k, v in (record["props"] or {}).items()}
    if record["entities"] == 0:
        raise KgqaError(f"KG {kg!r} has no entities; load it first (kgqa load ...)")
    if props.get("status", "").lower() == "loading":
        raise KgqaError(f"KG {kg!r} is still loading; try again when `kgqa kgs` shows it loaded")
    blob = json.dumps(
        {"props": props, "entities": record["entities"], "relations": record["relations"]}, sort_keys=True
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def load_kg_index(driver: Driver, kg: str, refresh: bool = False) -> KgIndex:
    """The embedding cache of ``kg``, fetched from the database when missing or stale."""
    fingerprint = kg_fingerprint(driver, kg)
    path = cache_dir(kg) / "embeddings.npz"
    if path.exists() and not refresh:
        with np.load(path, allow_pickle=False) as data:
            if str(data["fingerprint"]) == fingerprint:
                return KgIndex(
                    kg,
                    data["entity_ids"].tolist(),
                    data["entity_names"].tolist(),
                    data["entity_vectors"],
                    data["relation_names"].tolist(),
                    data["relation_vectors"],
                    fingerprint,
                )
    ids: list[str] = []
    names: list[str] = []
    vectors: list[list[float]] = []
    missing = 0
    with driver.session() as session:
        for record in session.run(render("training/entities"), kg=kg):
            embedding = record["embedding"]
            if embedding is None:
                missing += 1
                continue
            ids.append(str(record["id"]))
            names.append(str(record["name"] if record["name"] is not None else record["id"]))
            vectors.append(embedding)
        relations = list(session.run(render("training/relations"), kg=kg))
    if missing:
        raise KgqaError(f"{missing} entities of KG {kg!r} have no embedding; finish loading it first")
    rel_missing = [r["name"] for r in relations if r["embedding"] is None]
    if rel_missing or not relations:
        raise KgqaError(
            f"KG {kg!r} lacks relation embeddings ({len(rel_missing)} missing of {len(relations)})"
        )
    index = KgIndex(
        kg,
        ids,
        names,
        np.asarray(vectors, dtype=np.float32),
        [str(r["name"]) for r in relations],
        np.asarray([r["embedding"] for r in relations], dtype=np.float32),
        fingerprint,
    )
    _atomic_save_npz(
        path,
        fingerprint=np.asarray(fingerprint),
        entity_ids=np.asarray(index.entity_ids),
        entity_names=np.asarray(index.entity_names),
        entity_vectors=index.entity_vectors,
        relation_names=np.asarray(index.relation_names),
        relation_vectors=index.relation_vectors,
    )
    return index


# --- one question's candidate subgraph -------------------------------------------------------------------


@dataclass
class Subgraph:
    """Candidate triples of one question with local entity indices and per-entity DDE codes."""

    entities: np.ndarray  # int64 [U] global entity indices (into KgIndex)
    entity_dde: np.ndarray  # float32 [U, dde_entity_dim]
    heads: np.ndarray  # int32 [N] local entity indices
    relations: np.ndarray  # int32 [N] relation indices (into KgIndex)
    tails: np.ndarray  # int32 [N] local entity indices
    topics: np.ndarray  # int32 local indices of the topic entities present in the subgraph
    path: sparse.csr_matrix | None = None  # [U, 2·steps·R] path weights (path_weights); None without

    @property
    def size(self) -> int:
        return int(self.heads.shape[0])

    def entity_codes(self, relation_vectors: np.ndarray) -> np.ndarray:
        """[U, code] = [DDE ‖ path code in embedding space] of each entity (float32)."""
        if self.path is None:
            return self.entity_dde
        return np.concatenate([self.entity_dde, expand_path_codes(self.path, relation_vectors)], axis=1)

    def triple_dde(self) -> np.ndarray:
        """[N, 2 * dde_entity_dim] = [dde_head ‖ dde_tail]."""
        return np.concatenate([self.entity_dde[self.heads], self.entity_dde[self.tails]], axis=1)

    def select(self, rows: np.ndarray) -> Subgraph:
        """The same subgraph restricted to some triples, keeping only the entities they use (entity codes
        stay as computed on the whole subgraph)."""
        heads, tails = self.heads[rows], self.tails[rows]
        used, inverse = np.unique(np.concatenate([heads, tails, self.topics]), return_inverse=True)
        n = heads.size
        local = inverse.astype(np.int32)
        return Subgraph(
            self.entities[used],
            self.entity_dde[used],
            local[:n],
            self.relations[rows],
            local[n : 2 * n],
            local[2 * n :],
            None if self.path is None else self.path[used],
        )


def feature_rows(
    subgraph: Subgraph, index: KgIndex, question_vector: np.ndarray, question_relation: bool = False
) -> np.ndarray:
    """The scorer's input rows [z_q ‖ z_head ‖ z_rel ‖ z_tail ‖ code_head ‖ code_tail], then z_q ⊙ z_rel when
    ``question_relation`` (float32 [N, D]); an entity's code is its DDE, then its path code if any."""
    n = subgraph.size
    zq = np.broadcast_to(question_vector.astype(np.float32), (n, question_vector.shape[-1]))
    heads = index.entity_vectors[subgraph.entities[subgraph.heads]]
    rels = index.relation_vectors[subgraph.relations]
    tails = index.entity_vectors[subgraph.entities[subgraph.tails]]
    codes = subgraph.entity_codes(index.relation_vectors)
    blocks = [zq, heads, rels, tails, codes[subgraph.heads], codes[subgraph.tails]]
    if question_relation:
        blocks.append(zq * rels)
    return np.ascontiguousarray(np.concatenate(blocks, axis=1), dtype=np.float32)


def fetch_subgraph(
    driver: Driver,
    index: KgIndex,
    topic_ids: Sequence[str],
    hops: int,
    dde: DdeLayout,
    max_candidates: int = DEFAULT_MAX_CANDIDATES,
) -> Subgraph:
    """A question's candidates and DDE codes from the ``kgqa.subgraphrag.candidates`` procedure."""
    records, _, _ = driver.execute_query(
        render("training/candidates"),
        kg=index.kg,
        topicIds=list(topic_ids),
        hops=hops,
        maxCandidates=max_candidates,
        includeSeed=dde.include_seed,
        forwardRounds=dde.forward,
        reverseRounds=dde.reverse,
    )
    width = dde_entity_dim(dde)
    local: dict[str, int] = {}
    codes: list[Sequence[float]] = []
    heads = np.empty(len(records), dtype=np.int32)
    rels = np.empty(len(records), dtype=np.int32)
    tails = np.empty(len(records), dtype=np.int32)
    for row, record in enumerate(records):
        pair = record["dde"]
        if len(pair) != 2 * width:
            raise KgqaError(
                f"kgqa.subgraphrag.candidates returned a DDE of width {len(pair)}, expected {2 * width}"
            )
        ends = ((record["headId"], pair[:width], heads), (record["tailId"], pair[width:], tails))
        for entity_id, code, out in ends:
            slot = local.get(entity_id)
            if slot is None:
                slot = local[entity_id] = len(codes)
                codes.append(code)
            out[row] = slot
        rels[row] = index.relation(record["relation"])
    entity_ids = list(local)
    topics = np.asarray([local[t] for t in topic_ids if t in local], dtype=np.int32)
    path = None
    if dde.path_steps:
        path = path_weights(
            len(entity_ids), heads, rels, tails, topics, dde.path_steps, len(index.relation_names)
        )
    return Subgraph(
        entities=np.asarray([index.entity(e) for e in entity_ids], dtype=np.int64),
        entity_dde=np.asarray(codes, dtype=np.float32).reshape(len(codes), width),
        heads=heads,
        relations=rels,
        tails=tails,
        topics=topics,
        path=path,
    )


# --- numpy reference: candidates and DDE -----------------------------------------------------------------


@dataclass
class LocalGraph:
    """A whole KG as triple arrays over global indices (for the reference implementation and tests)."""

    heads: np.ndarray  # int64 [T]
    relations: np.ndarray  # int32 [T]
    tails: np.ndarray  # int64 [T]
    n_entities: int
    n_relations: int = 0  # the KG's relation count (0: one more than the largest index used)
    _incident: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False)

    def relation_count(self) -> int:
        if self.n_relations:
            return self.n_relations
        return int(self.relations.max()) + 1 if self.relations.size else 0

    def incident(self) -> tuple[np.ndarray, np.ndarray]:
        """CSR (offsets, triple ids) of the triples incident to each entity, either direction."""
        if self._incident is None:
            ends = np.concatenate([self.heads, self.tails])
            triples = np.concatenate([np.arange(self.heads.size), np.arange(self.tails.size)])
            loops = np.concatenate([np.zeros(self.heads.size, bool), self.heads == self.tails])
            ends, triples = ends[~loops], triples[~loops]
            order = np.argsort(ends, kind="stable")
            offsets = np.zeros(self.n_entities + 1, dtype=np.int64)
            np.cumsum(np.bincount(ends, minlength=self.n_entities), out=offsets[1:])
            self._incident = (offsets, triples[order])
        return self._incident


def load_local_graph(driver: Driver, index: KgIndex) -> LocalGraph:
    """All triples of the KG (cached next to the embeddings)."""
    path = cache_dir(index.kg) / "triples.npz"
    if path.exists():
        with np.load(path, allow_pickle=False) as data:
            if str(data["fingerprint"]) == index.fingerprint:
                return LocalGraph(
                    data["heads"],
                    data["relations"],
                    data["tails"],
                    len(index.entity_ids),
                    len(index.relation_names),
                )
    heads: list[int] = []
    rels: list[int] = []
    tails: list[int] = []
    with driver.session() as session:
        for record in session.run(render("training/triples"), kg=index.kg):
            heads.append(index.entity(record["h"]))
            rels.append(index.relation(record["r"]))
            tails.append(index.entity(record["t"]))
    graph = LocalGraph(
        np.asarray(heads, np.int64),
        np.asarray(rels, np.int32),
        np.asarray(tails, np.int64),
        len(index.entity_ids),
        len(index.relation_names),
    )
    _atomic_save_npz(
        path,
        fingerprint=np.asarray(index.fingerprint),
        heads=graph.heads,
        relations=graph.relations,
        tails=graph.tails,
    )
    return graph


def dde_codes(
    n_nodes: int, heads: np.ndarray, tails: np.ndarray, topics: Iterable[int], dde: DdeLayout
) -> np.ndarray:
    """Per-entity DDE [s0?] ‖ f1 … fF ‖ r1 … rR (float32 [n_nodes, dde_entity_dim]).

    s0 is the one-hot [not-topic, topic]. A forward round gives each entity the mean of its in-neighbours'
    vectors (one term per triple, so parallel triples count twice); a reverse round the mean of its
    out-neighbours'. Entities without such neighbours get zeros. Both directions start from s0.
    """
    s0 = np.zeros((n_nodes, 2), dtype=np.float64)
    s0[:, 0] = 1.0
    topic_list = list(topics)
    s0[topic_list, 0] = 0.0
    s0[topic_list, 1] = 1.0

    def propagate(x: np.ndarray, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
        total = np.zeros_like(x)
        np.add.at(total, dst, x[src])
        count = np.bincount(dst, minlength=n_nodes).astype(np.float64)
        return np.divide(total, count[:, None], out=np.zeros_like(total), where=count[:, None] > 0)

    parts = [s0] if dde.include_seed else []
    x = s0
    for _ in range(dde.forward):
        x = propagate(x, heads, tails)
        parts.append(x)
    x = s0
    for _ in range(dde.reverse):
        x = propagate(x, tails, heads)
        parts.append(x)
    return np.concatenate(parts, axis=1).astype(np.float32)


def local_subgraph(
    graph: LocalGraph,
    topics: Sequence[int],
    hops: int,
    dde: DdeLayout,
    max_candidates: int = DEFAULT_MAX_CANDIDATES,
) -> Subgraph:
    """Reference candidates: the triples with an end within ``hops - 1`` undirected hops of a topic entity
    (i.e. reachable in at most ``hops`` steps), nearest first, capped; then DDE over that subgraph."""
    offsets, incident = graph.incident()
    dist = np.full(graph.n_entities, -1, dtype=np.int64)
    frontier = np.unique(np.asarray(topics, dtype=np.int64))
    dist[frontier] = 0
    chosen: list[np.ndarray] = []
    seen_triples = np.zeros(graph.heads.size, dtype=bool)
    total = 0
    for depth in range(hops):
        if frontier.size == 0 or total >= max_candidates:
            break
        triples = np.unique(np.concatenate([incident[offsets[e] : offsets[e + 1]] for e in frontier]))
        triples = triples[~seen_triples[triples]]
        seen_triples[triples] = True
        triples = triples[: max_candidates - total]
        chosen.append(triples)
        total += triples.size
        ends = np.concatenate([graph.heads[triples], graph.tails[triples]])
        ends = np.unique(ends[dist[ends] < 0])
        dist[ends] = depth + 1
        frontier = ends
    rows = np.concatenate(chosen) if chosen else np.zeros(0, np.int64)
    global_heads, global_tails = graph.heads[rows], graph.tails[rows]
    entities, inverse = np.unique(
        np.concatenate([np.asarray(topics, np.int64), global_heads, global_tails]), return_inverse=True
    )
    n_topics = len(topics)
    local_topics = inverse[:n_topics].astype(np.int32)
    local_heads = inverse[n_topics : n_topics + rows.size].astype(np.int32)
    local_tails = inverse[n_topics + rows.size :].astype(np.int32)
    codes = dde_codes(entities.size, local_heads, local_tails, local_topics, dde)
    local_relations = graph.relations[rows].astype(np.int32)
    path = None
    if dde.path_steps:
        path = path_weights(
            entities.size,
            local_heads,
            local_relations,
            local_tails,
            local_topics,
            dde.path_steps,
            graph.relation_count(),
        )
    return Subgraph(
        entities=entities,
        entity_dde=codes,
        heads=local_heads,
        relations=local_relations,
        tails=local_tails,
        topics=local_topics,
        path=path,
    )


# --- path codes: which relations lead to an entity --------------------------------------------------------

PATH_STEPS = 2  # the steps a path code describes (a 3-hop triple starts 2 steps out)


def path_slots(steps: int) -> int:
    """Rows of relation mixtures in one entity's path code: one per (step, direction)."""
    return 2 * steps


def path_code_dim(steps: int, embedding_dim: int = EMBEDDING_DIM) -> int:
    """Width of one entity's path code as the scorer reads it: each slot's mixture of relation vectors."""
    return path_slots(steps) * embedding_dim


def path_weights(
    n_nodes: int,
    heads: np.ndarray,
    relations: np.ndarray,
    tails: np.ndarray,
    topics: Iterable[int],
    steps: int,
    n_relations: int,
) -> sparse.csr_matrix:
    """Each entity's path code as relation weights: csr [n_nodes, 2·steps·n_relations], column
    ``(2·step + direction)·n_relations + relation``.

    Why: DDE says how far an entity is from the topic, not by which relations. A film two steps out is
    reached through its director or through its genre alike, and a triple scorer that sees only distance
    cannot tell "the films of X's director" from "the films sharing X's genre" (on MetaQA dev, held out, this
    code lifted walk Hits@1 of 3-hop questions from 38 to 55 at 1,000 training questions per hop;
    bench/results/subgraphrag/).

    Definition, over the candidate triples taken as undirected edges: entities at BFS distance d from the
    topic entities have as parents the edges to entities at distance d - 1. An entity's code is the mean over
    its parent edges (one term per triple, as DDE counts them) of the parent's code plus, when
    d <= ``steps``, a one-hot at (step d, the edge's direction, its relation): direction 0 when the walk
    follows the triple (the parent is its head), 1 against it. Topic entities, and entities the BFS does not
    reach, have empty codes. The database's ``PathCodes`` computes the same.
    """
    heads = np.asarray(heads, dtype=np.int64)
    tails = np.asarray(tails, dtype=np.int64)
    relations = np.asarray(relations, dtype=np.int64)
    width = path_slots(steps) * n_relations
    codes = sparse.csr_matrix((n_nodes, width), dtype=np.float64)
    dist = np.full(n_nodes, -1, dtype=np.int64)
    frontier = np.unique(np.asarray(list(topics), dtype=np.int64))
    dist[frontier] = 0
    level = 0
    while frontier.size:
        level += 1
        near = np.zeros(n_nodes, dtype=bool)
        near[frontier] = True
        forward = near[heads] & (dist[tails] < 0)
        backward = near[tails] & (dist[heads] < 0)
        parent = np.concatenate([heads[forward], tails[backward]])
        child = np.concatenate([tails[forward], heads[backward]])
        if child.size == 0:
            break
        direction = np.concatenate([np.zeros(forward.sum(), np.int64), np.ones(backward.sum(), np.int64)])
        relation = np.concatenate([relations[forward], relations[backward]])
        contribution = codes[parent]
        if level <= steps:
            step_columns = (2 * (level - 1) + direction) * n_relations + relation
            contribution = contribution + sparse.csr_matrix(
                (np.ones(child.size), (np.arange(child.size), step_columns)), shape=(child.size, width)
            )
        count = np.bincount(child, minlength=n_nodes).astype(np.float64)
        average = sparse.csr_matrix(
            (1.0 / count[child], (child, np.arange(child.size))), shape=(n_nodes, child.size)
        )
        codes = codes + average @ contribution
        frontier = np.unique(child)
        dist[frontier] = level
    codes.sum_duplicates()
    codes.eliminate_zeros()
    return codes


def expand_path_codes(weights: sparse.csr_matrix, relation_vectors: np.ndarray) -> np.ndarray:
    """Path codes in embedding space: float32 [n, 2·steps·d], each slot its mixture of relation vectors."""
    n_relations, dim = relation_vectors.shape
    slots = weights.shape[1] // n_relations
    out = np.zeros((weights.shape[0], slots * dim), dtype=np.float32)
    for slot in range(slots):
        block = weights[:, slot * n_relations : (slot + 1) * n_relations]
        out[:, slot * dim : (slot + 1) * dim] = block @ relation_vectors
    return out


# --- weak labels ------------------------------------------------------------------------------------------


def shortest_path_labels(
    n_nodes: int, heads: np.ndarray, tails: np.ndarray, topics: Iterable[int], answers: Iterable[int]
) -> np.ndarray:
    """True for every triple on a shortest path between a topic entity and an answer entity.

    Triples are undirected edges here. For each topic, a BFS gives distances; a triple (u, v) with
    dist[v] = dist[u] + 1 is on a shortest path to some answer iff v is an answer or leads on, along such
    steps, to one. Answers that are topic entities (distance 0) are ignored.
    """
    heads = np.asarray(heads, dtype=np.int64)
    tails = np.asarray(tails, dtype=np.int64)
    labels = np.zeros(heads.size, dtype=bool)
    answer_mask = np.zeros(n_nodes, dtype=bool)
    answer_list = list(answers)
    if not answer_list or heads.size == 0:
        return labels
    answer_mask[answer_list] = True
    src = np.concatenate([heads, tails])
    dst = np.concatenate([tails, heads])
    edge = np.concatenate([np.arange(heads.size), np.arange(heads.size)])
    dst_sorted = dst[np.argsort(src, kind="stable")]
    offsets = np.zeros(n_nodes + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=n_nodes), out=offsets[1:])
    for topic in sorted(set(topics)):
        dist = np.full(n_nodes, -1, dtype=np.int64)
        dist[topic] = 0
        frontier = np.asarray([topic], dtype=np.int64)
        depth = 0
        while frontier.size:
            depth += 1
            nxt = np.concatenate([dst_sorted[offsets[u] : offsets[u + 1]] for u in frontier])
            nxt = np.unique(nxt[dist[nxt] < 0])
            dist[nxt] = depth
            frontier = nxt
        forward = (dist[src] >= 0) & (dist[dst] == dist[src] + 1)
        f_src, f_dst, f_edge = src[forward], dst[forward], edge[forward]
        useful = answer_mask & (dist > 0)
        for level in range(int(dist.max()) - 1, -1, -1):
            at = dist[f_src] == level
            hits = f_src[at][useful[f_dst[at]]]
            useful[hits] = True
        labels[f_edge[useful[f_dst]]] = True
    return labels


MAX_LABEL_WALKS = 3_000_000  # walks enumerated per question by chain_labels before it falls back


@dataclass(frozen=True)
class ChainLabels:
    """What ``chain_labels`` decided for one question: the labels, the chains that gave them as
    ((relation index, ">" along the triple | "<" against it), ...), and their answer-set F1 (0 and no
    chains when it fell back to shortest paths, with ``fallback`` saying why)."""

    labels: np.ndarray
    chains: tuple[tuple[tuple[int, str], ...], ...]
    f1: float
    fallback: str | None = None


def chain_labels(
    n_nodes: int,
    heads: np.ndarray,
    relations: np.ndarray,
    tails: np.ndarray,
    topics: Iterable[int],
    answers: Iterable[int],
    length: int | None = None,
    max_length: int = 3,
    max_walks: int = MAX_LABEL_WALKS,
) -> ChainLabels:
    """True for every triple on a walk, from a topic entity to an answer, of the relation chains that best
    explain the answer set.

    Why not shortest paths: a 3-hop answer is often also nearer the topic by another route (a director of
    the topic film who also directed a film of its writer), and the shortest path then labels that other
    route. On 300 MetaQA dev 3-hop questions, 78 % of the shortest-path positives were off the question's
    relation path.

    A chain is a sequence of (relation, direction) steps walked from a topic entity, never straight back
    over the triple just taken and never into a topic entity (MetaQA's answer semantics). Its end set is
    everything the chain reaches; its fit is the F1 of that set against the answers. Every chain with the
    best fit labels its walks that end at an answer (chains that fit equally well, e.g. "written by" and
    "directed by" where writer and director are the same person, are all kept). ``length``: only chains of
    that many steps (a dataset that says how many hops a question has); otherwise chains of 1 to
    ``max_length`` steps compete and on an equal fit the shorter wins. Only the QA pair is needed: no gold
    relation path. Falls back to ``shortest_path_labels`` when no chain reaches an answer or the walks
    exceed ``max_walks``.
    """
    heads = np.asarray(heads, dtype=np.int64)
    tails = np.asarray(tails, dtype=np.int64)
    relations = np.asarray(relations, dtype=np.int64)
    topic_list = sorted(set(int(t) for t in topics))
    answer_list = sorted(set(int(a) for a in answers) - set(topic_list))
    empty = np.zeros(heads.size, dtype=bool)
    if heads.size == 0 or not topic_list or not answer_list:
        return ChainLabels(empty, (), 0.0, "no topic, answer or candidate")

    def fallback(why: str) -> ChainLabels:
        return ChainLabels(shortest_path_labels(n_nodes, heads, tails, topic_list, answer_list), (), 0.0, why)

    is_topic = np.zeros(n_nodes, dtype=bool)
    is_topic[topic_list] = True
    is_answer = np.zeros(n_nodes, dtype=bool)
    is_answer[answer_list] = True
    # Incidence lists: each triple once from its head (step 2r, along it) and once from its tail (2r + 1).
    src = np.concatenate([heads, tails])
    dst = np.concatenate([tails, heads])
    triple = np.concatenate([np.arange(heads.size), np.arange(heads.size)])
    step = np.concatenate([2 * relations, 2 * relations + 1])
    order = np.argsort(src, kind="stable")
    dst, triple, step = dst[order], triple[order], step[order]
    offsets = np.zeros(n_nodes + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=n_nodes), out=offsets[1:])
    n_steps = int(step.max()) + 1

    # One row per walk: its end node, the triple it arrived over, its chain id and its parent walk.
    node = np.asarray(topic_list, dtype=np.int64)
    last = np.full(node.size, -1, dtype=np.int64)
    chain = np.zeros(node.size, dtype=np.int64)
    levels: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
    chain_steps: list[np.ndarray] = []  # per level: chain id -> (parent chain id, step)
    deepest = length if length is not None else max_length
    walks = 0
    for _level in range(deepest):
        counts = offsets[node + 1] - offsets[node]
        parent = np.repeat(np.arange(node.size), counts)
        starts = np.repeat(offsets[node] - np.cumsum(counts) + counts, counts)
        at = starts + np.arange(parent.size)
        keep = (triple[at] != last[parent]) & ~is_topic[dst[at]]
        parent, at = parent[keep], at[keep]
        walks += parent.size
        if parent.size == 0:
            break
        if walks > max_walks:
            return fallback(f"more than {max_walks} walks")
        key = chain[parent] * n_steps + step[at]
        unique_keys, chain_ids = np.unique(key, return_inverse=True)
        chain_steps.append(np.stack([unique_keys // n_steps, unique_keys % n_steps], axis=1))
        node, last, chain = dst[at], triple[at], chain_ids.astype(np.int64)
        levels.append((node, last, chain, parent))

    best_f1, best_level, best_chains = 0.0, -1, np.zeros(0, dtype=np.int64)
    candidates = [length - 1] if length is not None else list(range(len(levels)))
    for level in candidates:
        if level >= len(levels):
            continue
        ends, _last, ids, _parent = levels[level]
        pairs = np.unique(ids * n_nodes + ends)
        pair_chain, pair_node = pairs // n_nodes, pairs % n_nodes
        n_chains = len(chain_steps[level])
        size = np.bincount(pair_chain, minlength=n_chains)
        hits = np.bincount(pair_chain, weights=is_answer[pair_node], minlength=n_chains)
        f1 = 2 * hits / (size + len(answer_list))
        top = float(f1.max()) if f1.size else 0.0
        if top > best_f1 + 1e-9:  # strictly better: a longer chain must beat the shorter one's fit
            best_f1, best_level = top, level
            best_chains = np.flatnonzero(f1 >= top - 1e-9)
    if best_level < 0:
        return fallback("no chain reaches an answer")

    labels = empty.copy()
    ends, arrived, ids, parent = levels[best_level]
    useful = np.isin(ids, best_chains) & is_answer[ends]
    for level in range(best_level, -1, -1):
        _ends, arrived, _ids, parent = levels[level]
        labels[arrived[useful]] = True
        if level > 0:
            previous = np.zeros(levels[level - 1][0].size, dtype=bool)
            previous[parent[useful]] = True
            useful = previous
    described: list[tuple[tuple[int, str], ...]] = []
    for chain_id in best_chains.tolist():
        steps: list[tuple[int, str]] = []
        for level in range(best_level, -1, -1):
            parent_chain, code = chain_steps[level][chain_id]
            steps.append((int(code) // 2, ">" if code % 2 == 0 else "<"))
            chain_id = int(parent_chain)
        described.append(tuple(reversed(steps)))
    return ChainLabels(labels, tuple(described), best_f1)


def question_ids(index: KgIndex, names: Iterable[str]) -> list[int]:
    """Entity indices for names (every entity bearing the name)."""
    found: list[int] = []
    for name in names:
        found.extend(index.entities_named(name))
    return sorted(set(found))


# --- the procedure and the reference agree ----------------------------------------------------------------


def triple_codes(subgraph: Subgraph) -> dict[tuple[int, int, int], tuple[float, ...]]:
    """{(head, relation, tail) global indices: rounded [dde_head ‖ dde_tail]} of a subgraph."""
    dde = np.round(subgraph.triple_dde().astype(np.float64), 5)
    return {
        (int(subgraph.entities[h]), int(r), int(subgraph.entities[t])): tuple(code.tolist())
        for h, r, t, code in zip(subgraph.heads, subgraph.relations, subgraph.tails, dde, strict=True)
    }


def check_reference_parity(
    driver: Driver,
    index: KgIndex,
    graph: LocalGraph,
    cases: Sequence[tuple[Sequence[str], int]],
    dde: DdeLayout,
    max_rows: int = 3000,
) -> int:
    """Compares ``kgqa.subgraphrag.candidates`` with ``local_subgraph`` on (topic ids, hops) cases, skipping
    any whose candidates exceed ``max_rows`` (there the cap's cut may legitimately differ). Returns how many
    were compared; raises KgqaError on the first disagreement in triples or DDE codes."""
    compared = 0
    for topic_ids, hops in cases:
        reference = local_subgraph(
            graph, [index.entity(t) for t in topic_ids], hops, dde, max_candidates=max_rows + 1
        )
        if reference.size > max_rows:
            continue
        db = fetch_subgraph(driver, index, topic_ids, hops, dde, max_candidates=max_rows + 1)
        ours, theirs = triple_codes(reference), triple_codes(db)
        if ours != theirs:
            missing = len(ours.keys() - theirs.keys()) + len(theirs.keys() - ours.keys())
            differing = sum(ours[k] != theirs[k] for k in ours.keys() & theirs.keys())
            raise KgqaError(
                f"kgqa.subgraphrag.candidates and the numpy reference disagree for topics "
                f"{topic_ids} ({missing} triples in one only, {differing} DDE codes differ); "
                "train with --source db"
            )
        compared += 1
    return compared
