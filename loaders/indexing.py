"""``build_indexes()``, the library behind `kgqa index`: a KG's embeddings recomputed (all, or the missing
ones) and every index ONLINE.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from kgqa.core.errors import KgNotReady
from kgqa.graph.cypher import render
from kgqa.graph.kg import kg_info
from kgqa.loaders.embeddings import Embedder, default_embedder, embed_kg
from kgqa.loaders.load_resources import dimensions, driver_scope, model_name, prepare_encoder
from kgqa.loaders.progress import Progress
from kgqa.loaders.schema import await_indexes, ensure_schema
from neo4j import Driver


@dataclass
class IndexReport:
    kg: str
    entities: int
    relations: int
    seconds: float
    embedding_model: str


def build_indexes(
    kg: str | None = None,
    missing_only: bool = False,
    progress: Progress | None = None,
    embedder: Embedder | None = None,
    driver: Driver | None = None,
    model: str | None = None,
) -> list[IndexReport]:
    """Recomputes embeddings (all, or only the missing ones); makes sure every index exists and is ONLINE.

    Each KG keeps the encoder it records unless ``model`` (``kgqa index --embeddings``) or
    KGQA_EMBEDDING_MODEL names another; a KG that changes encoder is embedded afresh, never half and half."""
    print_to = progress or Progress(enabled=False)
    reports = []
    with driver_scope(driver) as drv:
        listed = drv.execute_query(render("load/list_kgs", one=False)).records
        names = [kg] if kg else [r["name"] for r in listed]
        if kg and kg_info(drv, kg) is None:
            raise KgNotReady(f"no KG named {kg!r} (see `kgqa kgs`)")
        chosen = model or os.environ.get("KGQA_EMBEDDING_MODEL")
        for name in names:
            recorded = (kg_info(drv, name) or {}).get("embedding_model")
            use = chosen or recorded or model_name()
            if embedder is None:
                prepare_encoder(use, print_to)
            ensure_schema(drv, dimensions(use))
            report = embed_kg(
                drv,
                name,
                print_to,
                missing_only=missing_only and recorded in (None, use),
                embedder=embedder or default_embedder(use),
            )
            drv.execute_query(render("load/set_embedding_model"), kg=name, embedding_model=use)
            reports.append(IndexReport(name, report.entities, report.relations, report.seconds, use))
        if not names:
            ensure_schema(drv, dimensions(chosen))
        with print_to.step("indexes online", total=100, unit="%") as step:
            await_indexes(drv, on_percent=lambda percent: step.update(percent, force=True))
    return reports
