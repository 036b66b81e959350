"""Embeddings of entity names and relation texts, written to the nodes the vector indexes read.

Pages of entities are read in id order, their distinct names embedded in length-sorted batches (less padding),
and the vectors written by a background thread while the next batch is embedded. The default model runs
as ONNX built from its weights (the same vectors as sentence-transformers, cosine > 0.9999, no torch); vectors
travel as JSON text when the server has APOC, which costs the client a third of the driver's float packing.
"""

from __future__ import annotations

import json
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from kgqa.graph.cypher import render
from kgqa.loaders.progress import Progress
from neo4j import Driver

PAGE = 20_000
ENCODE_BATCH = 1024
WRITE_BATCH = 2000

Embedder = Callable[[list[str]], np.ndarray]


def default_embedder(model: str | None = None) -> Embedder:
    """The encoder ``model`` (None: KGQA_EMBEDDING_MODEL or all-MiniLM-L6-v2) as an Embedder."""
    from kgqa.models.encoder import embed

    return lambda texts: embed(texts, batch_size=128, model=model)


def _as_json(driver: Driver) -> bool:
    return bool(driver.execute_query(render("load/has_apoc")).records[0]["present"])


@dataclass
class EmbeddingReport:
    entities: int = 0
    relations: int = 0
    seconds: float = 0.0


def embed_kg(
    driver: Driver, kg: str, progress: Progress, missing_only: bool = True, embedder: Embedder | None = None
) -> EmbeddingReport:
    began = time.monotonic()
    embed = embedder or default_embedder()
    report = EmbeddingReport()
    report.relations = embed_relations(driver, kg, embed, missing_only)
    report.entities = _embed_entities(driver, kg, embed, progress, missing_only)
    report.seconds = time.monotonic() - began
    return report


def _count(driver: Driver, kg: str, label: str, missing_only: bool) -> int:
    query = render("load/count_to_embed", label=label, missing_only=missing_only)
    return int(driver.execute_query(query, kg=kg).records[0]["n"])


def embed_relations(driver: Driver, kg: str, embed: Embedder, missing_only: bool) -> int:
    query = render("load/relations_to_embed", missing_only=missing_only)
    records = driver.execute_query(query, kg=kg).records
    if not records:
        return 0
    ids = [r["id"] for r in records]
    vectors = embed([r["name"] for r in records])
    use_json = _as_json(driver)
    rows = [
        {"id": i, "vec": json.dumps(v) if use_json else v} for i, v in zip(ids, vectors.tolist(), strict=True)
    ]
    query = render("load/set_embeddings", label="Relation", json=use_json)
    for start in range(0, len(rows), WRITE_BATCH):
        driver.execute_query(query, kg=kg, rows=rows[start : start + WRITE_BATCH])
    return len(rows)


class _Writer(threading.Thread):
    """Writes vectors while the main thread embeds the next batch."""

    def __init__(self, driver: Driver, kg: str) -> None:
        super().__init__(daemon=True, name="kgqa-embedding-writer")
        self.driver = driver
        self.kg = kg
        self.jobs: queue.Queue[list[dict[str, object]] | None] = queue.Queue(maxsize=3)
        self.error: BaseException | None = None
        self.json = _as_json(driver)
        self.query = render("load/set_embeddings", label="Entity", json=self.json)

    def run(self) -> None:
        while (rows := self.jobs.get()) is not None:
            if self.error is not None:
                continue
            try:
                if self.json:  # serialised here, while the main thread embeds the next batch
                    rows = [{"id": row["id"], "vec": json.dumps(row["vec"])} for row in rows]
                for start in range(0, len(rows), WRITE_BATCH):
                    self.driver.execute_query(self.query, kg=self.kg, rows=rows[start : start + WRITE_BATCH])
            except BaseException as exc:  # noqa: BLE001 - handed to the main thread
                self.error = exc

    def put(self, rows: list[dict[str, object]]) -> None:
        if self.error is not None:
            raise self.error
        self.jobs.put(rows)

    def finish(self) -> None:
        self.jobs.put(None)
        self.join()
        if self.error is not None:
            raise self.error


def _embed_entities(driver: Driver, kg: str, embed: Embedder, progress: Progress, missing_only: bool) -> int:
    total = _count(driver, kg, "Entity", missing_only)
    if total == 0:
        return 0
    page_query = render("load/entities_to_embed", missing_only=missing_only)
    writer = _Writer(driver, kg)
    writer.start()
    done = 0
    after = ""
    try:
        with progress.step("embeddings", total=total, unit="names") as step:
            while True:
                records = driver.execute_query(page_query, kg=kg, after=after, limit=PAGE).records
                if not records:
                    break
                after = records[-1]["id"]
                by_name: dict[str, list[str]] = {}
                for record in records:
                    by_name.setdefault(record["name"], []).append(record["id"])
                names = sorted(by_name, key=len)
                for start in range(0, len(names), ENCODE_BATCH):
                    chunk = names[start : start + ENCODE_BATCH]
                    vectors = embed(chunk).tolist()
                    rows: list[dict[str, object]] = []
                    for name, vector in zip(chunk, vectors, strict=True):
                        rows.extend({"id": i, "vec": vector} for i in by_name[name])
                    writer.put(rows)
                    done += len(rows)
                    step.update(done, items=done)
                if len(records) < PAGE:
                    break
    finally:
        writer.finish()
    return done
