"""The numpy reference of the ``kgqa.subgraphrag.candidates`` procedure: the whole KG as triple arrays
(``LocalGraph``, cached next to the embeddings), candidates and DDE computed from them (``local_subgraph``),
and the check that procedure and reference agree (``check_reference_parity``). Training builds its features
from the reference once that check passes (``TrainConfig.source``); the unit tests use it without a
database."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
from kgqa.core.errors import KgqaError
from kgqa.graph.cypher import render
from kgqa.training.subgraphrag.cache import atomic_save_npz, cache_dir
from kgqa.training.subgraphrag.candidates import (
    DEFAULT_MAX_CANDIDATES,
    DdeLayout,
    Subgraph,
    fetch_subgraph,
)
from kgqa.training.subgraphrag.embeddings import KgIndex
from kgqa.training.subgraphrag.paths import path_weights
from neo4j import Driver


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
    atomic_save_npz(
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
