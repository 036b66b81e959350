"""`kgqa verify "CLAIM"`: supported / refuted / not enough evidence, with the matched subgraph."""

from __future__ import annotations

import json

import click
from kgqa.graph.connection import open_driver
from kgqa.qa.verification import verify_claim
from rich.console import Console


@click.command()
@click.argument("claim")
@click.option(
    "--kg", default=None, help="Knowledge graph to check against (default: the only or latest one)."
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
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
