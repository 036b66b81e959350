"""One question's candidate subgraph as the triple scorer reads it: the candidate triples from the
``kgqa.subgraphrag.candidates`` procedure, each entity's code (``DdeLayout``: DDE, then path code) and the
scorer's feature rows.

The procedure is the authoritative source, so training and in-database inference share one DDE
implementation; :mod:`kgqa.training.subgraphrag.reference` is a numpy reference of the same definition."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from kgqa.core.errors import KgqaError
from kgqa.core.limits import ROW_CAP
from kgqa.graph.cypher import render
from kgqa.training.subgraphrag.embeddings import EMBEDDING_DIM, KgIndex
from kgqa.training.subgraphrag.paths import expand_path_codes, path_weights
from neo4j import Driver
from scipy import sparse

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
