"""`kgqa link QUESTION`: which entities a question links to, and why, as every answer method sees them."""

from __future__ import annotations

import json

import click
from kgqa.cli.options import json_option, kg_option
from kgqa.cli.output import print_table
from kgqa.graph.connection import open_driver
from kgqa.graph.kg import resolve_kg
from kgqa.retrieve.linking import link_report


@click.command()
@click.argument("question")
@kg_option("link in")
@json_option("the report")
def link(question: str, kg: str | None, as_json: bool) -> None:
    """Show the spans of QUESTION linked to entities, each with its score and why, the other entities found
    but left out, and every candidate the linker weighed (the same in-database linker as `kgqa ask`, `CALL
    kgqa.link.entities` and `CALL kgqa.link.candidates`)."""
    with open_driver() as driver:
        name = resolve_kg(driver, kg).name
        report = link_report(driver, question, name)
    data = report.to_json()
    if as_json:
        click.echo(json.dumps(data, ensure_ascii=False))
        return
    columns = ["span", "name", "id", "score", "why"]
    if data["linked"]:
        click.echo(f"linked in KG {name!r}, best first:")
        print_table(columns, data["linked"])
    else:
        click.echo(f"no entity of KG {name!r} is named in the question")
    if data["also_found"]:
        click.echo("also found, left out:")
        print_table(columns, data["also_found"])
    if data["candidates"]:
        learned = data["candidates"][0]["learned"]
        click.echo(
            "every candidate weighed, best first ("
            + ("score: the KG's learned link scorer" if learned else "the hand score; no learned link scorer")
            + "; --json gives each one's features):"
        )
        print_table(["span", "name", "how", "hand_score", "score"], data["candidates"])
