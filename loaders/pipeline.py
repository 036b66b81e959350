"""``load()`` and ``build_indexes()``: the library behind `kgqa load` and `kgqa index`.

A load reads its input plan (which files, which parser), writes the triples (online or bulk), then runs the
finishing steps shared by both paths: relation nodes with counts, embeddings, indexes ONLINE, and the :KG node
marked complete with counts read back from the graph.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from kgqa.core import config
from kgqa.core.errors import KgqaError
from kgqa.graph.cypher import render
from kgqa.loaders import dbpedia, freebase, metaqa
from kgqa.loaders.embeddings import Embedder, default_embedder, embed_kg
from kgqa.loaders.inputs import fingerprint
from kgqa.loaders.kgs import drop_kg, kg_info, live_counts
from kgqa.loaders.plan import InputPlan, ParseContext
from kgqa.loaders.progress import Progress
from kgqa.loaders.records import Issue, IssueSink, ParseStats, Record
from kgqa.loaders.schema import await_indexes, ensure_schema
from neo4j import Driver
from neo4j.exceptions import DriverError, Neo4jError

SOURCES: dict[str, Callable[[list[Path]], InputPlan]] = {
    "metaqa": metaqa.plan,
    "freebase": freebase.plan,
    "dbpedia": dbpedia.plan,
}
LOADER_VERSION = "1"  # part of the fingerprint: bump when the same input would now give a different graph
_KG_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}$")


@dataclass
class LoadOptions:
    source: str
    paths: list[Path]
    kg: str | None = None
    bulk: bool = False
    strict: bool = False
    force: bool = False
    batch_size: int = 5000
    embeddings: bool = True
    # The sentence encoder of the KG's vectors (None: KGQA_EMBEDDING_MODEL or all-MiniLM-L6-v2); the fast
    # path is kgqa.models.encoder.STATIC_MODEL. Recorded on the :KG node as embedding_model.
    embedding_model: str | None = None


@dataclass
class LoadSummary:
    kg: str
    source: str
    format: str
    mode: str
    paths: list[str]
    status: str = "complete"
    entities: int = 0
    relationships: int = 0
    relations: int = 0
    facts_read: int = 0
    labels_read: int = 0
    skipped: int = 0
    dropped: dict[str, int] = field(default_factory=dict)
    labels_without_facts: int = 0
    embedded_entities: int = 0
    embedded_relations: int = 0
    embedding_model: str | None = None
    seconds: float = 0.0
    phases: dict[str, float] = field(default_factory=dict)
    already_loaded: bool = False
    issues: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def plan_input(source: str, paths: list[Path]) -> InputPlan:
    if source not in SOURCES:
        raise KgqaError(f"unknown source {source!r} (one of {', '.join(SOURCES)})")
    if not paths:
        raise KgqaError("no input: give --path")
    return SOURCES[source]([Path(p).expanduser() for p in paths])


def check_kg_name(kg: str) -> str:
    if not _KG_NAME.match(kg):
        raise KgqaError(f"invalid KG name {kg!r}: use letters, digits, '_', '.' or '-' (at most 64)")
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
    model = (options.embedding_model or _model_name()) if options.embeddings else None
    if model is not None and embedder is None:
        _prepare_encoder(model, progress)  # the fast encoder's first build: before any triple is written
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
    if options.bulk:
        previous = _bulk_load(options, plan, summary, sink, stats, print_to, digest, embedder)
    else:
        previous = _online_load(options, plan, summary, sink, stats, print_to, digest, driver)
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


@dataclass
class _Previous:
    """What the KG looked like before this load (None fields when it is new)."""

    embedding_model: str | None
    labels_without_facts: int = 0
    relation_counts: dict[str, int] | None = None  # distinct triples per relation, when the load counted them


def _online_load(
    options: LoadOptions,
    plan: InputPlan,
    summary: LoadSummary,
    sink: IssueSink,
    stats: ParseStats,
    progress: Progress,
    digest: str,
    driver: Driver | None,
) -> _Previous | None:
    from kgqa.loaders.online import OnlineWriter

    with _driver(driver) as drv:
        ensure_schema(drv, _dimensions(summary.embedding_model))
        existing = kg_info(drv, summary.kg)
        if _skip_if_loaded(drv, existing, summary, options, digest):
            return None
        previous = _Previous(existing.get("embedding_model") if existing else None)
        before = _kg_properties(drv, summary.kg) if existing is not None else None
        _begin(drv, summary, plan)
        writer = OnlineWriter(
            drv, summary.kg, plan.default_name, batch_size=options.batch_size, spool_dir=_scratch_dir()
        )
        try:
            t0 = time.monotonic()
            _parse_all(plan, sink, stats, writer.add, progress)
            writer.flush()
            summary.phases["parse_and_write"] = time.monotonic() - t0
            t0 = time.monotonic()
            previous.labels_without_facts = writer.apply_labels(progress)
            summary.phases["names"] = time.monotonic() - t0
        except KgqaError as failed:
            # Left as it was before the load where that can be done: a new KG goes, a KG that got nothing
            # gets its node back; a KG that got part of the load says so, and a rerun completes it.
            if existing is None or (writer.batches == 0 and before is not None):
                with suppress(Neo4jError, DriverError):  # the failure itself may be the lost server
                    if existing is None:
                        drop_kg(drv, summary.kg)
                    else:
                        drv.execute_query(render("load/restore_kg"), kg=summary.kg, before=before)
            else:
                raise KgqaError(
                    f"{failed}; KG {summary.kg!r} now holds part of this load (status loading): run the load "
                    "again to complete it"
                ) from failed
            raise
        finally:
            writer.close()
        return previous


def _bulk_load(
    options: LoadOptions,
    plan: InputPlan,
    summary: LoadSummary,
    sink: IssueSink,
    stats: ParseStats,
    progress: Progress,
    digest: str,
    embedder: Embedder | None,
) -> _Previous | None:
    from kgqa.graph.server import ManagedServer
    from kgqa.loaders.bulk import add_vectors, close_pool, finish, neo4j_import, stage

    if config.external_server() is not None:
        raise KgqaError(
            "--bulk imports with neo4j-admin into the managed local server, but NEO4J_URI points "
            "at another server: load it without --bulk"
        )
    server = ManagedServer()
    if server.pid() is None:
        progress.log("kgqa: starting the local Neo4j")
        server.start(on_progress=lambda message: progress.log(f"kgqa: {message}"))
    with _driver(None) as drv:
        existing = kg_info(drv, summary.kg)
        if _skip_if_loaded(drv, existing, summary, options, digest):
            return None
        record = drv.execute_query(render("load/other_content"), kg=summary.kg).records[0]
        if record["kgs"] or record["foreign"]:
            held = ", ".join(sorted(record["kgs"])) or "nodes that belong to no KG"
            raise KgqaError(
                f"--bulk imports into an empty database (neo4j-admin replaces it), but it "
                f"holds {held}; load without --bulk, or use a separate KGQA_HOME for the bulk "
                "import"
            )
    staging = staging_dir(summary.kg)
    staged = None
    try:
        t0 = time.monotonic()
        staged = stage(plan, staging, sink, stats, progress)
        _require_facts(plan, sink, stats)
        summary.phases["parse_and_stage"] = time.monotonic() - t0
        t0 = time.monotonic()
        files = finish(staged, summary.kg, plan.default_name, progress)
        summary.phases["dedupe_and_csv"] = time.monotonic() - t0
        if options.embeddings:  # imported with the nodes: the vector index is then built once
            t0 = time.monotonic()
            embed = embedder or default_embedder(summary.embedding_model)
            summary.embedded_entities = add_vectors(files, embed, progress)
            summary.phases["embeddings"] = time.monotonic() - t0
        t0 = time.monotonic()
        with progress.step("neo4j-admin import"), server.offline_import(summary.kg) as imported:
            done = neo4j_import(server.admin, files, staging / "import.report")
            imported()
        summary.phases["import"] = time.monotonic() - t0
        summary.notes.append(f"neo4j-admin: {done}")
    finally:
        if staged is not None:
            close_pool(staged)
        if not os.environ.get("KGQA_KEEP_STAGING"):
            shutil.rmtree(staging, ignore_errors=True)
    with _driver(None) as drv:
        ensure_schema(drv, _dimensions(summary.embedding_model))
        _begin(drv, summary, plan)
    return _Previous(None, files.labels_without_facts, files.relation_counts)


def _skip_if_loaded(
    driver: Driver, existing: dict[str, Any] | None, summary: LoadSummary, options: LoadOptions, digest: str
) -> bool:
    """True when a complete KG from the same input is in the graph as recorded (counts checked live)."""
    if existing is None:
        return False
    if existing.get("source") not in (None, summary.source):
        raise KgqaError(
            f"KG {summary.kg!r} already holds a {existing['source']} graph; choose another name with --kg"
        )
    if existing.get("status") != "complete" or existing.get("fingerprint") != digest or options.force:
        return False
    live = live_counts(driver, summary.kg)
    if any(live[key] != existing.get(key) for key in ("entities", "relationships")):
        summary.notes.append("the graph no longer matches the KG's recorded counts: loading again")
        return False
    summary.already_loaded = True
    summary.status = "complete"
    for key in ("entities", "relationships", "relations", "skipped"):
        setattr(summary, key, int(existing.get(key) or 0))
    summary.embedding_model = existing.get("embedding_model")
    summary.notes.append("already loaded from the same input: nothing to do (--force reloads)")
    return True


def _kg_properties(driver: Driver, kg: str) -> dict[str, Any] | None:
    """What :func:`_begin` changes on the KG's node, to be put back by a load that fails before writing."""
    records = driver.execute_query(render("load/kg_properties"), kg=kg).records
    return dict(records[0]) if records else None


def _begin(driver: Driver, summary: LoadSummary, plan: InputPlan) -> None:
    driver.execute_query(
        render("load/begin_kg"),
        kg=summary.kg,
        source=plan.source,
        format=plan.format,
        path=", ".join(summary.paths),
    )


def _parse_all(
    plan: InputPlan, sink: IssueSink, stats: ParseStats, add: Callable[[Record], None], progress: Progress
) -> None:
    sizes = [f.path.stat().st_size for f in plan.files]
    offset = 0
    with progress.step("reading + writing", total=sum(sizes) or None, unit="triples") as step:
        for input_file, size in zip(plan.files, sizes, strict=True):
            sink.start_file(input_file.description)
            base = offset

            def on_bytes(n: int, base: int = base) -> None:
                step.update(base + n, items=stats.facts)

            ctx = ParseContext(sink=sink, stats=stats, on_bytes=on_bytes)
            for record in input_file.parser(input_file.path, ctx):
                if len(record) == 3:
                    stats.facts += 1
                else:
                    stats.labels += 1
                add(record)
            sink.finish_file(str(input_file.path))
            offset += size
        step.update(offset, items=stats.facts, force=True)
    _require_facts(plan, sink, stats)


def _require_facts(plan: InputPlan, sink: IssueSink, stats: ParseStats) -> None:
    if stats.facts == 0:
        raise KgqaError(
            "no facts found in "
            + ", ".join(str(p) for p in plan.paths)
            + (f" ({sink.count} malformed lines)" if sink.count else "")
        )


def _finish_with(
    options: LoadOptions,
    plan: InputPlan,
    summary: LoadSummary,
    previous: _Previous,
    digest: str,
    progress: Progress,
    embedder: Embedder | None,
    began: float,
    driver: Driver | None,
) -> LoadSummary:
    with _driver(driver if not options.bulk else None) as drv:
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


# ----------------------------------------------------------------------------- kgqa index
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
    with _driver(driver) as drv:
        listed = drv.execute_query(render("load/list_kgs", one=False)).records
        names = [kg] if kg else [r["name"] for r in listed]
        if kg and kg_info(drv, kg) is None:
            raise KgqaError(f"no KG named {kg!r} (see `kgqa kgs`)")
        chosen = model or os.environ.get("KGQA_EMBEDDING_MODEL")
        for name in names:
            recorded = (kg_info(drv, name) or {}).get("embedding_model")
            use = chosen or recorded or _model_name()
            if embedder is None:
                _prepare_encoder(use, print_to)
            ensure_schema(drv, _dimensions(use))
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
            ensure_schema(drv, _dimensions(chosen))
        with print_to.step("indexes online", total=100, unit="%") as step:
            await_indexes(drv, on_percent=lambda percent: step.update(percent, force=True))
    return reports


# ----------------------------------------------------------------------------- helpers
@contextmanager
def _driver(driver: Driver | None) -> Iterator[Driver]:
    if driver is not None:
        yield driver
        return
    from kgqa.graph.connection import open_driver

    own = open_driver()
    try:
        yield own
    finally:
        own.close()


def _model_name() -> str:
    from kgqa.models import encoder

    return encoder.model_name()


def _dimensions(model: str | None = None) -> int:
    from kgqa.models import encoder

    return encoder.dimensions(model)


def _prepare_encoder(model: str, progress: Progress | None) -> None:
    """Builds the fast encoder when it is not built yet (about 2 minutes once; the ONNX encoder is built by
    `kgqa server start` and on first use)."""
    from kgqa.models import encoder

    if model != encoder.STATIC_MODEL:
        return
    if progress is not None and not encoder.static_encoder_built():
        progress.log(f"kgqa: distilling the fast encoder {model} (once, about 2 minutes on 2 cores)")
    encoder.ensure_static_encoder()


def _scratch_dir() -> Path:
    path = config.kgqa_home() / "tmp"
    path.mkdir(parents=True, exist_ok=True)
    return path


def staging_dir(kg: str) -> Path:
    path = config.kgqa_home() / "bulk" / kg
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    return path
