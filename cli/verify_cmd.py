"""`kgqa verify "CLAIM"`: supported / refuted / not enough evidence, with the matched subgraph."""

from __future__ import annotations

import json

import click
from kgqa.cli.options import json_option, kg_option
from kgqa.graph.connection import open_driver
from kgqa.qa.verification import verify_claim
from rich.console import Console


@click.command()
@click.argument("claim")
@kg_option("check against")
@json_option("the verdict")
def verify(claim: str, kg: str | None, as_json: bool) -> None:
    """Check CLAIM against a loaded knowledge graph (SimGRAG's fact verification)."""
    with open_driver() as driver:
        verdict = verify_claim(driver, claim, kg)
    if as_json:
        click.echo(json.dumps(verdict.to_json(), ensure_ascii=False))
        return
    console = Console()
    colour = {"supported": "green", "refuted": "red"}.get(verdict.label, "yellow")
    console.print(f"[bold {colour}]{verdict.label}[/]")
    if verdict.object:
        console.print(
            f"[dim]asked[/] {verdict.question}  [dim]→ the KG says[/] {', '.join(verdict.kg_says) or '-'}"
        )
    for head, relation, tail in verdict.reason:
        console.print(f"  {head} [dim]-{relation}->[/] {tail}")
