"""`kgqa ask "QUESTION"`: answers with the evidence that led there."""

from __future__ import annotations

import json
from pathlib import Path

import click
from kgqa.cli.options import json_option, kg_option
from kgqa.graph.connection import open_driver
from kgqa.qa.answering import MAX_K, Result, answer_question
from kgqa.qa.methods import METHODS
from rich.console import Console
from rich.table import Table


@click.command()
@click.argument("question")
@kg_option("ask")
@click.option(
    "--method",
    default="auto",
    show_default=True,
    type=click.Choice(["auto", *METHODS]),
    help="Retrieval method.",
)
@click.option(
    "--llm",
    default="none",
    show_default=True,
    help="'none' for the offline extractive answerer, or a model name served at OPENAI_BASE_URL.",
)
@click.option(
    "-k",
    "k",
    default=100,
    show_default=True,
    type=click.IntRange(1, MAX_K),
    help="Maximum number of evidence triplets.",
)
@json_option('the answer and its evidence (README.md, "Using it")')
@click.option(
    "--graph",
    "graph_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also write the evidence, drawn as a graph, to this HTML file (opens offline).",
)
def ask(
    question: str, kg: str | None, method: str, llm: str, k: int, as_json: bool, graph_file: Path | None
) -> None:
    """Answer QUESTION from a loaded knowledge graph."""
    if graph_file is not None:
        from kgqa.service.evidence_page import check_page_path

        check_page_path(graph_file)  # before the question is asked, not after
    with open_driver() as driver:
        result = answer_question(driver, question, kg=kg, method=method, llm=llm, k=k)
    if graph_file is not None:
        from kgqa.service.evidence_page import write_evidence_html

        write_evidence_html(result.to_json(), graph_file)
    if as_json:
        click.echo(json.dumps(result.to_json(), ensure_ascii=False))
    else:
        print_result(result)


def print_result(result: Result, max_triplets: int = 25) -> None:
    console = Console()
    ev = result.evidence
    if not ev.topic_entities:
        console.print("[bold red]No entity found[/] in the question, so there is nothing to answer from.")
        console.print(f"[dim]kg {ev.kg} · method {ev.method}[/]")
        return
    linked = ", ".join(f"{e.name} [dim]({e.how}, {e.score:.2f})[/]" for e in ev.topic_entities)
    console.print(f"[bold]Topic entities:[/] {linked}")
    if result.answers:
        console.print(
            "[bold green]Answers:[/] "
            + " | ".join(result.answers[:20])
            + (f" [dim](+{len(result.answers) - 20} more)[/]" if len(result.answers) > 20 else "")
        )
    else:
        console.print(f"[bold yellow]No answer:[/] {result.answer.reason or 'nothing found'}")
    if ev.triplets:
        table = Table(
            "#",
            "subject",
            "relation",
            "object",
            title=f"Evidence ({len(ev.triplets)} triplets)",
            title_justify="left",
        )
        for i, (head, rel, tail) in enumerate(ev.triplets[:max_triplets], 1):
            table.add_row(str(i), head, rel, tail)
        console.print(table)
        if len(ev.triplets) > max_triplets:
            console.print(f"[dim]… {len(ev.triplets) - max_triplets} more (use --json for all)[/]")
    if result.route is not None:
        if result.route.stale:
            console.print(f"[yellow]note:[/] {result.route.stale}")
        for tried in result.route.tried:
            mark = "chose" if tried["method"] == result.route.chosen else "tried"
            console.print(f"[dim]auto {mark} {tried['method']} ({tried['why']}): {tried['outcome']}[/]")
    timing = " · ".join(f"{stage} {ms:.0f} ms" for stage, ms in result.latency_ms.items())
    console.print(f"[dim]kg {ev.kg} · method {ev.method} · llm {result.llm or 'none'} · {timing}[/]")
