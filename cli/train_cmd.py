"""`kgqa train all|classifiers|gsr|subgraphrag --kg NAME`: learn a KG's models from the KG (and its labelled
questions, never a test split) and install them with it."""

from __future__ import annotations

import json
from pathlib import Path

import click
from kgqa.cli.options import Decorator, count_option, json_option

KG = click.option("--kg", required=True, metavar="NAME", help="The loaded KG whose models to train.")
QUESTIONS = click.option(
    "--questions",
    "questions",
    multiple=True,
    type=click.Path(exists=True, path_type=Path),
    help="Labelled questions (repeatable): a file or a folder of them, e.g. ../shared/data/metaqa (its "
    "dev split) or ../shared/data/webqsp/webqsp_train_beamqa.csv. Test splits are never read. Without it, "
    "the KG's models learn from questions synthesised from its own relation paths.",
)
IF_MISSING = click.option(
    "--if-missing", is_flag=True, help="Keep the parts that are installed already (setup scripts)."
)
AS_JSON = json_option("the KG's profile")


GSR_EXAMPLES_HELP = (
    "Examples GSR's training reads in all (its epochs follow from how many distinct ones there are)."
)
PER_HOP_HELP = "SubgraphRAG's training questions per hop count."
ROUTE_HELP = "Held-out questions per pool that every method answers for auto's route."


def gsr_examples_option(flag: str) -> Decorator:
    return count_option(flag, 150_000, 1000, 100_000_000, GSR_EXAMPLES_HELP, dest="gsr_examples")


def subgraphrag_options(prefix: str) -> Decorator:
    """SubgraphRAG's training questions per hop count and its epochs: ``--<prefix>per-hop`` and
    ``--<prefix>epochs``."""
    per_hop = count_option(
        f"--{prefix}per-hop", 1000, 10, 1_000_000, PER_HOP_HELP, dest="subgraphrag_per_hop"
    )
    epochs = count_option(
        f"--{prefix}epochs", 6, 1, 200, "Passes over the questions.", dest="subgraphrag_epochs"
    )
    return lambda command: per_hop(epochs(command))


ROUTE_QUESTIONS = count_option("--route-questions", 150, 10, 100_000, ROUTE_HELP)


@click.group()
def train() -> None:
    """Learn what a KG's methods and `--method auto` read, from the KG itself (never from a test split)."""


def _run(
    kg: str, parts: tuple[str, ...], questions: tuple[Path, ...], if_missing: bool, **options: object
) -> object:
    from kgqa.graph.connection import open_driver
    from kgqa.learn.train_all import TrainAllOptions, train_all

    settings = TrainAllOptions(questions=questions, if_missing=if_missing, parts=parts, **options)
    with open_driver() as driver:
        try:
            profile = train_all(driver, kg, settings, log=lambda msg: click.echo(f"kgqa: {msg}", err=True))
        except ModuleNotFoundError as exc:
            raise click.ClickException(
                f"training needs {exc.name}; install the extra: "
                "pip install 'kgqa[train]' (or scripts/setup train)"
            ) from None
    return profile


def _summary(profile: object, as_json: bool) -> None:
    from kgqa.models.kg_models import KgProfile

    assert isinstance(profile, KgProfile)
    if as_json:
        click.echo(json.dumps(profile.to_json(), indent=2, sort_keys=True))
        return
    for name, report in profile.parts.items():
        metrics = ", ".join(f"{k} {v}" for k, v in report.metrics.items())
        click.echo(f"{name:12} {report.seconds:8.1f}s  {report.examples:7d} examples  {metrics}")
    if profile.methods:
        for method, pools in sorted(profile.methods.items()):
            figures = ", ".join(f"{pool} {value:.3f}" for pool, value in pools.items())
            click.echo(f"held-out Hits@1 {method:12} {figures}")


@train.command("all")
@KG
@QUESTIONS
@IF_MISSING
@gsr_examples_option("--gsr-examples")
@subgraphrag_options("subgraphrag-")
@ROUTE_QUESTIONS
@AS_JSON
def train_all_command(
    kg: str,
    questions: tuple[Path, ...],
    if_missing: bool,
    gsr_examples: int,
    subgraphrag_per_hop: int,
    subgraphrag_epochs: int,
    route_questions: int,
    as_json: bool,
) -> None:
    """Everything KG NAME's methods and auto read: the chain and hop classifiers (sgrag's templates),
    SimGRAG's relation phrases, GSR's chain generator, SubgraphRAG's scorer and auto's route, each with a
    progress bar; `kgqa kgs` then lists them and `kgqa ask --kg NAME` uses them."""
    from kgqa.learn.train_all import PARTS

    profile = _run(
        kg,
        PARTS,
        questions,
        if_missing,
        gsr_examples=gsr_examples,
        subgraphrag_per_hop=subgraphrag_per_hop,
        subgraphrag_epochs=subgraphrag_epochs,
        route_questions=route_questions,
    )
    _summary(profile, as_json)


@train.command("classifiers")
@KG
@QUESTIONS
@AS_JSON
def classifiers(kg: str, questions: tuple[Path, ...], as_json: bool) -> None:
    """The chain classifier (sgrag's templates) and the hop classifier (FRAG, SubgraphRAG): seconds."""
    _summary(_run(kg, ("classifiers",), questions, False), as_json)


@train.command("route")
@KG
@QUESTIONS
@ROUTE_QUESTIONS
@AS_JSON
def route(kg: str, questions: tuple[Path, ...], route_questions: int, as_json: bool) -> None:
    """auto's route alone: every installed method answers the held-out questions again (minutes)."""
    _summary(_run(kg, ("route",), questions, False, route_questions=route_questions), as_json)


@train.command("gsr")
@KG
@QUESTIONS
@gsr_examples_option("--examples")
@AS_JSON
def gsr(kg: str, questions: tuple[Path, ...], gsr_examples: int, as_json: bool) -> None:
    """GSR's chain generator: a small transformer encoder-decoder (torch), exported to ONNX."""
    _summary(_run(kg, ("gsr",), questions, False, gsr_examples=gsr_examples), as_json)


@train.command("subgraphrag")
@KG
@QUESTIONS
@subgraphrag_options("")
@click.option(
    "--name",
    default=None,
    help="Install it by this name (<models>/subgraphrag/NAME, used with kgqa.subgraphrag.* config.model) "
    "instead of as the KG's own scorer.",
)
@IF_MISSING
@AS_JSON
def subgraphrag(
    kg: str,
    questions: tuple[Path, ...],
    subgraphrag_epochs: int,
    subgraphrag_per_hop: int,
    name: str | None,
    if_missing: bool,
    as_json: bool,
) -> None:
    """SubgraphRAG's triple scorer (torch), exported to ONNX and run by the database."""
    if name is not None and (not name or "/" in name or name.startswith(".")):
        raise click.ClickException(f"--name must be a plain directory name, got {name!r}")
    profile = _run(
        kg,
        ("subgraphrag",),
        questions,
        if_missing,
        subgraphrag_epochs=subgraphrag_epochs,
        subgraphrag_per_hop=subgraphrag_per_hop,
        subgraphrag_name=name,
    )
    _summary(profile, as_json)
