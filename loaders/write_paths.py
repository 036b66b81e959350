"""The two ways a load writes the triples: online (batched transactions through the driver) or bulk
(``neo4j-admin database import`` into the managed server, which must hold no other KG).

Both skip a KG already loaded from the same input, mark the :KG node as loading, and leave the finishing
steps (:func:`kgqa.loaders.pipeline.load`) a :class:`~kgqa.loaders.load_types.Previous`.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgqa.core import config
from kgqa.core.errors import BadInput, KgqaError
from kgqa.graph.cypher import render
from kgqa.graph.kg import drop_kg, kg_info, live_counts
from kgqa.loaders.embeddings import Embedder, default_embedder
from kgqa.loaders.load_resources import dimensions, driver_scope
from kgqa.loaders.load_types import LoadOptions, LoadSummary, Previous
from kgqa.loaders.plan import InputPlan, ParseContext
from kgqa.loaders.progress import Progress
from kgqa.loaders.records import IssueSink, ParseStats, Record
from kgqa.loaders.schema import ensure_schema
from neo4j import Driver
from neo4j.exceptions import DriverError, Neo4jError


@dataclass(frozen=True)
class LoadJob:
    """One load: its options and input, and what it records as it goes; what either write path takes."""

    options: LoadOptions
    plan: InputPlan
    summary: LoadSummary
    sink: IssueSink
    stats: ParseStats
    progress: Progress
    digest: str  # the input's fingerprint: a KG loaded from the same input is not loaded again


def online_load(job: LoadJob, driver: Driver | None) -> Previous | None:
    from kgqa.loaders.online import OnlineWriter

    plan, summary = job.plan, job.summary

    with driver_scope(driver) as drv:
        ensure_schema(drv, dimensions(summary.embedding_model))
        existing = kg_info(drv, summary.kg)
        if _skip_if_loaded(drv, existing, job):
            return None
        previous = Previous(existing.get("embedding_model") if existing else None)
        before = _kg_properties(drv, summary.kg) if existing is not None else None
        _begin(drv, summary, plan)
        writer = OnlineWriter(
            drv, summary.kg, plan.default_name, batch_size=job.options.batch_size, spool_dir=_scratch_dir()
        )
        try:
            t0 = time.monotonic()
            _parse_all(plan, job.sink, job.stats, writer.add, job.progress)
            writer.flush()
            summary.phases["parse_and_write"] = time.monotonic() - t0
            t0 = time.monotonic()
            previous.labels_without_facts = writer.apply_labels(job.progress)
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
                # the same class (its exit code: bad input, the database gone ...), with what to do now
                failed.args = (
                    f"{failed}; KG {summary.kg!r} now holds part of this load (status loading): run the load "
                    "again to complete it",
                )
            raise
        finally:
            writer.close()
        return previous


def bulk_load(job: LoadJob, embedder: Embedder | None) -> Previous | None:
    from kgqa.graph.server import ManagedServer
    from kgqa.loaders.bulk import add_vectors, close_pool, finish, neo4j_import, stage

    plan, summary = job.plan, job.summary

    if config.external_server() is not None:
        raise BadInput(
            "--bulk imports with neo4j-admin into the managed local server, but NEO4J_URI points "
            "at another server: load it without --bulk"
        )
    server = ManagedServer()
    if server.pid() is None:
        job.progress.log("kgqa: starting the local Neo4j")
        server.start(on_progress=lambda message: job.progress.log(f"kgqa: {message}"))
    with driver_scope(None) as drv:
        existing = kg_info(drv, summary.kg)
        if _skip_if_loaded(drv, existing, job):
            return None
        record = drv.execute_query(render("load/other_content"), kg=summary.kg).records[0]
        if record["kgs"] or record["foreign"]:
            held = ", ".join(sorted(record["kgs"])) or "nodes that belong to no KG"
            raise BadInput(
                f"--bulk imports into an empty database (neo4j-admin replaces it), but it "
                f"holds {held}; load without --bulk, or use a separate KGQA_HOME for the bulk "
                "import"
            )
    staging = staging_dir(summary.kg)
    staged = None
    try:
        t0 = time.monotonic()
        staged = stage(plan, staging, job.sink, job.stats, job.progress)
        _require_facts(plan, job.sink, job.stats)
        summary.phases["parse_and_stage"] = time.monotonic() - t0
        t0 = time.monotonic()
        files = finish(staged, summary.kg, plan.default_name, job.progress)
        summary.phases["dedupe_and_csv"] = time.monotonic() - t0
        if job.options.embeddings:  # imported with the nodes: the vector index is then built once
            t0 = time.monotonic()
            embed = embedder or default_embedder(summary.embedding_model)
            summary.embedded_entities = add_vectors(files, embed, job.progress)
            summary.phases["embeddings"] = time.monotonic() - t0
        t0 = time.monotonic()
        with job.progress.step("neo4j-admin import"), server.offline_import(summary.kg) as imported:
            done = neo4j_import(server.admin, files, staging / "import.report")
            imported()
        summary.phases["import"] = time.monotonic() - t0
        summary.notes.append(f"neo4j-admin: {done}")
    finally:
        if staged is not None:
            close_pool(staged)
        if not os.environ.get("KGQA_KEEP_STAGING"):
            shutil.rmtree(staging, ignore_errors=True)
    with driver_scope(None) as drv:
        ensure_schema(drv, dimensions(summary.embedding_model))
        _begin(drv, summary, plan)
    return Previous(None, files.labels_without_facts, files.relation_counts)


def _skip_if_loaded(driver: Driver, existing: dict[str, Any] | None, job: LoadJob) -> bool:
    """True when a complete KG from the same input is in the graph as recorded (counts checked live)."""
    if existing is None:
        return False
    summary = job.summary
    if existing.get("source") not in (None, summary.source):
        raise BadInput(
            f"KG {summary.kg!r} already holds a {existing['source']} graph; choose another name with --kg"
        )
    if existing.get("status") != "complete" or existing.get("fingerprint") != job.digest or job.options.force:
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
        raise BadInput(
            "no facts found in "
            + ", ".join(str(p) for p in plan.paths)
            + (f" ({sink.count} malformed lines)" if sink.count else "")
        )


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
