"""``load()``: the library behind `kgqa load`.

A load reads its input plan (which files, which parser), writes the triples (online or bulk,
:mod:`kgqa.loaders.write_paths`), then runs the finishing steps shared by both paths: relation nodes with
counts, embeddings, indexes ONLINE, and the :KG node marked complete with counts read back from the graph.
`kgqa index` is :func:`kgqa.loaders.indexing.build_indexes`.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from pathlib import Path

from kgqa.core.errors import BadInput
from kgqa.graph.cypher import render
from kgqa.graph.kg import live_counts
from kgqa.loaders import dbpedia, freebase, metaqa
from kgqa.loaders.embeddings import Embedder, default_embedder, embed_kg
from kgqa.loaders.inputs import fingerprint
from kgqa.loaders.load_resources import driver_scope, model_name, prepare_encoder
from kgqa.loaders.load_types import LoadOptions, LoadSummary, Previous
from kgqa.loaders.plan import InputPlan
from kgqa.loaders.progress import Progress
from kgqa.loaders.records import Issue, IssueSink, ParseStats
from kgqa.loaders.schema import await_indexes
from kgqa.loaders.write_paths import LoadJob, bulk_load, online_load
from neo4j import Driver

SOURCES: dict[str, Callable[[list[Path]], InputPlan]] = {
    "metaqa": metaqa.plan,
    "freebase": freebase.plan,
    "dbpedia": dbpedia.plan,
}
LOADER_VERSION = "1"  # part of the fingerprint: bump when the same input would now give a different graph
_KG_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}$")


def plan_input(source: str, paths: list[Path]) -> InputPlan:
    if source not in SOURCES:
        raise BadInput(f"unknown source {source!r} (one of {', '.join(SOURCES)})")
    if not paths:
        raise BadInput("no input: give --path")
    return SOURCES[source]([Path(p).expanduser() for p in paths])


def check_kg_name(kg: str) -> str:
    if not _KG_NAME.match(kg):
        raise BadInput(f"invalid KG name {kg!r}: use letters, digits, '_', '.' or '-' (at most 64)")
    return kg


def load(
    options: LoadOptions,
    progress: Progress | None = None,
    on_issue: Callable[[Issue], None] | None = None,
    embedder: Embedder | None = None,
    driver: Driver | None = None,
) -> LoadSummary:
    """Loads one KG. ``driver`` defaults to the configured server; the bulk path always uses the managed
    local one. ``embedder`` replaces the sentence-transformers model (tests)."""
    began = time.monotonic()
    plan = plan_input(options.source, options.paths)
    kg = check_kg_name(options.kg or plan.default_kg)
    model = (options.embedding_model or model_name()) if options.embeddings else None
    if model is not None and embedder is None:
        prepare_encoder(model, progress)  # the fast encoder's first build: before any triple is written
    summary = LoadSummary(
        kg=kg,
        source=plan.source,
        format=plan.format,
        mode="bulk" if options.bulk else "online",
        paths=[str(p) for p in plan.paths],
        notes=list(plan.notes),
        embedding_model=model,
    )
    print_to = progress or Progress(enabled=False)
    digest = fingerprint(plan.paths, extra=f"{plan.source}|{plan.format}|{LOADER_VERSION}|{model}")
    sink = IssueSink(strict=options.strict, on_issue=on_issue)
    stats = ParseStats()
    job = LoadJob(options, plan, summary, sink, stats, print_to, digest)
    previous = bulk_load(job, embedder) if options.bulk else online_load(job, driver)
    if summary.already_loaded:
        summary.seconds = time.monotonic() - began
        return summary
    assert previous is not None
    _summarise_parse(summary, sink, stats)
    return _finish_with(options, plan, summary, previous, digest, print_to, embedder, began, driver)


def _summarise_parse(summary: LoadSummary, sink: IssueSink, stats: ParseStats) -> None:
    summary.skipped = sink.count
    summary.issues = [str(i) for i in sink.kept[:50]]
    summary.dropped = dict(stats.dropped.most_common())
    summary.facts_read = stats.facts
    summary.labels_read = stats.labels


def _finish_with(
    options: LoadOptions,
    plan: InputPlan,
    summary: LoadSummary,
    previous: Previous,
    digest: str,
    progress: Progress,
    embedder: Embedder | None,
    began: float,
    driver: Driver | None,
) -> LoadSummary:
    with driver_scope(driver if not options.bulk else None) as drv:
        summary.labels_without_facts = previous.labels_without_facts
        if previous.labels_without_facts:
            summary.dropped["name of an entity without facts"] = previous.labels_without_facts
        t0 = time.monotonic()
        relations = _write_relations(drv, summary.kg, plan, previous.relation_counts)
        summary.phases["relations"] = time.monotonic() - t0
        if options.embeddings:
            model_changed = previous.embedding_model not in (None, summary.embedding_model)
            report = embed_kg(
                drv,
                summary.kg,
                progress,
                missing_only=not model_changed,
                embedder=embedder or default_embedder(summary.embedding_model),
            )
            summary.embedded_entities += report.entities
            summary.embedded_relations = report.relations
            summary.phases["embeddings"] = summary.phases.get("embeddings", 0.0) + report.seconds
        t0 = time.monotonic()
        with progress.step("indexes online", total=100, unit="%") as step:
            await_indexes(drv, on_percent=lambda percent: step.update(percent, force=True))
        summary.phases["indexes"] = time.monotonic() - t0
        counts = live_counts(drv, summary.kg)
        summary.entities, summary.relationships = counts["entities"], counts["relationships"]
        summary.relations = len(relations)
        summary.seconds = time.monotonic() - began
        drv.execute_query(
            render("load/finish_kg"),
            kg=summary.kg,
            entities=summary.entities,
            relationships=summary.relationships,
            relations=summary.relations,
            skipped=summary.skipped,
            dropped=json.dumps(summary.dropped),
            embedding_model=summary.embedding_model,
            fingerprint=digest,
            seconds=round(summary.seconds, 2),
        )
    return summary


def _write_relations(
    driver: Driver, kg: str, plan: InputPlan, counts: dict[str, int] | None = None
) -> list[str]:
    """:Relation nodes with their triple counts: ``counts`` when the load has them (the bulk path counts the
    distinct triples it writes, so a database holding only this KG needs no scan of every relationship),
    else read from the graph."""
    if counts is None:
        records = driver.execute_query(render("load/relation_counts"), kg=kg).records
        counts = {r["name"]: int(r["count"]) for r in records}
    rows = [
        {"name": name, "count": int(counts[name]), "text": plan.relation_text(name)}
        for name in sorted(counts)
    ]
    driver.execute_query(render("load/upsert_relations"), kg=kg, rows=rows)
    names = [row["name"] for row in rows]
    driver.execute_query(render("load/delete_stale_relations"), kg=kg, names=names)
    return names
