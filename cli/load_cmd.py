"""`kgqa load`, `kgqa kgs` and `kgqa index`: thin wrappers over kgqa.loaders."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import click
from kgqa.cli.options import count_option, json_option
from kgqa.loaders.records import Issue

SHOW_ISSUES = 20


def _quiet_notifications() -> None:
    """Schema-less queries on a fresh database draw 'property key does not exist' notices: not for users."""
    logging.getLogger("neo4j.notifications").setLevel(logging.ERROR)


@click.command()
@click.argument("source", type=click.Choice(["metaqa", "freebase", "dbpedia"]))
@click.option(
    "--path",
    "paths",
    multiple=True,
    required=True,
    type=click.Path(path_type=Path),
    help="Input file or directory (repeatable), e.g. ../shared/data/metaqa, ../shared/data/fb15k-237, "
    "a WebQSP/CWQ triples JSON, or RDF .nt/.ttl[.gz|.bz2] dumps.",
)
@click.option(
    "--kg",
    default=None,
    help="KG name [default: from the source: metaqa, freebase, fb15k237, webqsp, cwq, dbpedia].",
)
@click.option("--bulk", is_flag=True, help="Import with neo4j-admin into an empty database (managed server).")
@click.option("--strict", is_flag=True, help="Stop at the first malformed line with a non-zero exit.")
@click.option("--force", is_flag=True, help="Load again even when the same input was loaded already.")
@count_option("--batch-size", 5000, 100, 100_000, "Triples per write transaction (online path).")
@click.option(
    "--embeddings",
    "embeddings",
    type=click.Choice(["full", "fast", "none"]),
    default=None,
    help="Entity and relation embeddings: full (all-MiniLM-L6-v2, or KGQA_EMBEDDING_MODEL), fast (a static "
    "model distilled from it, all-MiniLM-L6-v2-static: tens of times faster, somewhat less exact; the first "
    "use distils it, about 2 minutes, needs kgqa[train]), or none (later with `kgqa index`). "
    "Queries on the KG embed with the model it was loaded with.  [default: full]",
)
@click.option("--no-embeddings", is_flag=True, help="Skip embeddings (the same as --embeddings none).")
@json_option("the summary")
def load(
    source: str,
    paths: tuple[Path, ...],
    kg: str | None,
    bulk: bool,
    strict: bool,
    force: bool,
    batch_size: int,
    embeddings: str | None,
    no_embeddings: bool,
    as_json: bool,
) -> None:
    """Load a knowledge graph: SOURCE is metaqa, freebase or dbpedia."""
    _quiet_notifications()
    if no_embeddings and embeddings not in (None, "none"):
        raise click.UsageError(f"--no-embeddings contradicts --embeddings {embeddings}")
    from kgqa.loaders.load_types import LoadOptions
    from kgqa.loaders.pipeline import load as run_load
    from kgqa.loaders.progress import Progress
    from kgqa.models.encoder import model_for_choice

    shown = 0

    def on_issue(issue: Issue) -> None:
        nonlocal shown
        shown += 1
        if shown <= SHOW_ISSUES:
            click.echo(f"kgqa: skipped {issue}", err=True)
        elif shown == SHOW_ISSUES + 1:
            click.echo("kgqa: further malformed lines are counted, not shown", err=True)

    options = LoadOptions(
        source=source,
        paths=list(paths),
        kg=kg,
        bulk=bulk,
        strict=strict,
        force=force,
        batch_size=batch_size,
        embeddings=not no_embeddings and embeddings != "none",
        embedding_model=model_for_choice(embeddings) if embeddings not in (None, "none") else None,
    )
    with Progress() as progress:
        summary = run_load(options, progress=progress, on_issue=on_issue)
    if as_json:
        click.echo(json.dumps(summary.to_dict(), ensure_ascii=False))
        return
    for note in summary.notes:
        click.echo(f"note: {note}")
    click.echo(f"KG {summary.kg} ({summary.source}, {summary.format}, {summary.mode}): {summary.status}")
    click.echo(f"  entities       {summary.entities:>12,}")
    click.echo(f"  relationships  {summary.relationships:>12,}")
    click.echo(f"  relations      {summary.relations:>12,}")
    click.echo(f"  skipped lines  {summary.skipped:>12,}")
    for reason, count in summary.dropped.items():
        click.echo(f"  dropped        {count:>12,}  {reason}")
    if not summary.already_loaded:
        click.echo(
            f"  embeddings     {summary.embedded_entities:>12,}  entities, "
            f"{summary.embedded_relations:,} relations ({summary.embedding_model or 'skipped'})"
        )
    phases = ", ".join(f"{name} {seconds:.1f}s" for name, seconds in summary.phases.items())
    click.echo(f"  time           {summary.seconds:>11.1f}s" + (f"  ({phases})" if phases else ""))


@click.command()
@json_option("the KGs (a list)")
@click.option("--drop", "drop", default=None, metavar="NAME", help="Delete the KG NAME and everything in it.")
def kgs(as_json: bool, drop: str | None) -> None:
    """The loaded KGs: counts, embedding model, when loaded, status, and the models `kgqa train all` made
    for each (a `*` after them: the KG was reloaded since they were trained)."""
    _quiet_notifications()
    from kgqa.core.errors import KgNotReady
    from kgqa.graph.connection import open_driver
    from kgqa.graph.kg import drop_kg, list_kgs

    with open_driver() as driver:
        if drop is not None:
            if not drop_kg(driver, drop):
                raise KgNotReady(f"no KG named {drop!r}")
            click.echo(f"dropped KG {drop}")
            return
        rows = list_kgs(driver)
    if as_json:
        click.echo(json.dumps(rows, ensure_ascii=False))
        return
    from kgqa.cli.output import print_table

    columns = [
        "name",
        "source",
        "entities",
        "relationships",
        "relations",
        "embedding_model",
        "loaded_at",
        "status",
        "models",
    ]
    for row in rows:
        if row.get("models") and row.get("models_current") is False:
            row["models"] = f"{row['models']} *"
    print_table(columns, [{c: "" if row.get(c) is None else row[c] for c in columns} for row in rows])
    for row in rows:
        if row.get("route_stale"):
            click.echo(f"note: {row['route_stale']}")


@click.command()
@click.option("--kg", default=None, help="Only this KG [default: all].")
@click.option("--missing-only", is_flag=True, help="Embed only nodes without an embedding.")
@click.option(
    "--embeddings",
    "embeddings",
    type=click.Choice(["full", "fast"]),
    default=None,
    help="Re-embed with full (all-MiniLM-L6-v2) or fast (all-MiniLM-L6-v2-static) [default: the model each "
    "KG records, or KGQA_EMBEDDING_MODEL when set]. A KG that changes model is embedded afresh.",
)
def index(kg: str | None, missing_only: bool, embeddings: str | None) -> None:
    """Rebuild embeddings and indexes without reloading the triples."""
    _quiet_notifications()
    from kgqa.loaders.indexing import build_indexes
    from kgqa.loaders.progress import Progress
    from kgqa.models.encoder import model_for_choice

    model = model_for_choice(embeddings) if embeddings is not None else None
    with Progress() as progress:
        reports = build_indexes(kg=kg, missing_only=missing_only, progress=progress, model=model)
    for report in reports:
        click.echo(
            f"KG {report.kg}: embedded {report.entities:,} entities and {report.relations:,} relations "
            f"with {report.embedding_model} in {report.seconds:.1f}s"
        )
    click.echo("indexes ONLINE")
