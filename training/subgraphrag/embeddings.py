"""The embeddings SubgraphRAG's features are made of: one KG's stored entity and relation vectors
(``KgIndex``, fetched once through Bolt and cached; a fingerprint of the KG invalidates the cache) and the
questions' vectors, embedded by the KG's encoder and cached by content."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from kgqa.core.errors import KgNotReady, KgqaError
from kgqa.core.text import mask_topic, without_brackets
from kgqa.graph.cypher import render
from kgqa.models.encoder import embed
from kgqa.training.subgraphrag.cache import atomic_save_npz, cache_dir, cache_key
from neo4j import Driver
from tqdm import tqdm

ENCODER_NAME = "all-MiniLM-L6-v2"
EMBEDDING_DIM = 384


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


def kg_fingerprint(driver: Driver, kg: str) -> str:
    records, _, _ = driver.execute_query(render("training/kg_fingerprint"), kg=kg)
    record = records[0]
    props = {k: str(v) for k, v in (record["props"] or {}).items()}
    if record["entities"] == 0:
        raise KgNotReady(f"KG {kg!r} has no entities; load it first (kgqa load ...)")
    if props.get("status", "").lower() == "loading":
        raise KgNotReady(f"KG {kg!r} is still loading; try again when `kgqa kgs` shows it loaded")
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
        raise KgNotReady(f"{missing} entities of KG {kg!r} have no embedding; finish loading it first")
    rel_missing = [r["name"] for r in relations if r["embedding"] is None]
    if rel_missing or not relations:
        raise KgNotReady(
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
    atomic_save_npz(
        path,
        fingerprint=np.asarray(fingerprint),
        entity_ids=np.asarray(index.entity_ids),
        entity_names=np.asarray(index.entity_names),
        entity_vectors=index.entity_vectors,
        relation_names=np.asarray(index.relation_names),
        relation_vectors=index.relation_vectors,
    )
    return index


def question_text(question: str, mask: str | None) -> str:
    """What z_q embeds: the question with its [bracketed] topic replaced by ``mask`` (the database masks the
    linked words the same way, ``QuestionText.maskTopic``), or without a mask its brackets removed."""
    return mask_topic(question, None, mask) if mask else without_brackets(question)


def question_vectors(
    texts: Sequence[str], kg: str, mask: str | None = None, encoder: str = ENCODER_NAME
) -> np.ndarray:
    """Question embeddings by ``encoder`` (the one the loader embedded the KG with), cached by content."""
    normalised = [question_text(t, mask) for t in texts]
    path = cache_dir(kg) / f"questions-{cache_key({'texts': normalised, 'encoder': encoder})}.npy"
    if path.exists():
        return np.load(path)
    vectors = np.zeros((len(normalised), EMBEDDING_DIM), dtype=np.float32)
    step = 2048
    for start in tqdm(
        range(0, len(normalised), step), desc="question embeddings", unit="batch", leave=False, disable=None
    ):
        vectors[start : start + step] = embed(normalised[start : start + step], model=encoder)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.npy")
    np.save(tmp, vectors)
    os.replace(tmp, path)
    return vectors
