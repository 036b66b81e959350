"""`kgqa train classifiers|subgraphrag|gsr`: train a model on MetaQA dev (never test), install it by name."""

from __future__ import annotations

import json

import click

METAQA_DATA = click.option(
    "--data",
    "data_dir",
    type=click.Path(exists=True, file_okay=False),
    default=None,
    help="MetaQA folder (default ../shared/data/metaqa).",
)


IF_MISSING = click.option(
    "--if-missing",
    is_flag=True,
    help="Do nothing when a model of this name is installed already (setup scripts).",
)


@click.group()
def train() -> None:
    """Train the small models the retrievers use, on MetaQA dev (never test)."""


@train.command("classifiers")
@METAQA_DATA
@click.option(
    "--seed", default=13, show_default=True, type=int, help="Seed of the fills and the held-out split."
)
@click.option(
    "--paraphrases",
    default=0,
    show_default=True,
    type=click.IntRange(0, 20),
    help="Also train on N rewrites of each dev pattern in other everyday words, with typos (measured: no "
    "gain on our free-form tune questions, bench/classifier_paraphrases.py).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the installed models' metadata.json.")
def classifiers(data_dir: str | None, seed: int, paraphrases: int, as_json: bool) -> None:
    """The question-type (SG-RAG) and hop (FRAG, SubgraphRAG's radius) classifiers: scikit-learn, seconds."""
    from kgqa.training.question_classifiers import train_question_classifiers

    trained = train_question_classifiers(data_dir, seed=seed, paraphrases_per_pattern=paraphrases)
    if as_json:
        click.echo(json.dumps(trained.metadata, indent=2, sort_keys=True))
        return
    held = trained.metadata["holdout"]["vanilla"]
    click.echo(
        f"question classifiers installed ({trained.metadata['patterns']} patterns, "
        f"{trained.metadata['train_seconds']:.0f} s); on held-out dev patterns: question type "
        f"{held['qtype_accuracy_masked']:.3f}, hop count {held['hops_accuracy_masked']:.3f}"
    )


@train.command("subgraphrag")
@click.option("--kg", default="metaqa", show_default=True, help="KG whose stored embeddings the model reads.")
@click.option(
    "--name",
    default="default",
    show_default=True,
    help="Model name: installed at <KGQA_HOME>/models/subgraphrag/<name>/.",
)
@IF_MISSING
@click.option("--hops", default=2, show_default=True, type=int, help="Candidate radius at inference.")
@click.option(
    "--include-seed/--no-include-seed",
    default=True,
    show_default=True,
    help="Put the DDE seed one-hot s0 in the entity code (the paper does; its shipped config not).",
)
@click.option(
    "--dde-rounds",
    default="3,3",
    show_default=True,
    help="DDE rounds forward,reverse (SubgraphRAG's num_rounds, num_reverse_rounds; 3,3 sees distance 3).",
)
@click.option(
    "--path-steps",
    default=2,
    show_default=True,
    type=click.IntRange(0, 4),
    help="Steps of the path code in each entity code: by which relations it is reached (0: DDE only).",
)
@click.option("--epochs", default=12, show_default=True, type=int, help="Maximum epochs (early stopping).")
@click.option(
    "--limit",
    default=3000,
    show_default=True,
    type=click.IntRange(min=0),
    help="Training questions per hop (0: all of dev's train part, about three times as long).",
)
@click.option("--hidden", default=256, show_default=True, type=int, help="Hidden layer width.")
@click.option(
    "--question-relation/--no-question-relation",
    default=True,
    show_default=True,
    help="Give the scorer z_question ⊙ z_relation as a feature (how well a relation fits the question).",
)
@click.option("--negatives", default=256, show_default=True, type=int, help="Sampled negatives per question.")
@click.option(
    "--labels",
    type=click.Choice(["chain", "shortest"]),
    default="chain",
    show_default=True,
    help="Weak labels: the walks of the relation chains that best explain each question's answers (chain), "
    "or every shortest topic-answer path (shortest, the paper's).",
)
@click.option(
    "--question-mask",
    default="it",
    show_default=True,
    help="The word the question embedding reads in place of the topic entity; '' embeds the whole question.",
)
@click.option("--seed", default=13, show_default=True, type=int, help="Seed of the split, sampling and init.")
@click.option(
    "--max-candidates", default=20000, show_default=True, type=int, help="Candidate cap per question."
)
@click.option(
    "--source",
    type=click.Choice(["auto", "db", "local"]),
    default="auto",
    show_default=True,
    help="Candidates + DDE: kgqa.subgraphrag.candidates for every question (db), the numpy "
    "reference (local), or the reference once a sample shows the procedure agrees (auto).",
)
@METAQA_DATA
@click.option("--threads", default=1, show_default=True, type=int, help="torch threads.")
@click.option("--json", "as_json", is_flag=True, help="Print the installed model's meta.json.")
def subgraphrag(
    kg: str,
    name: str,
    hops: int,
    include_seed: bool,
    dde_rounds: str,
    path_steps: int,
    epochs: int,
    limit: int | None,
    hidden: int,
    question_relation: bool,
    negatives: int,
    labels: str,
    question_mask: str,
    seed: int,
    max_candidates: int,
    source: str,
    data_dir: str | None,
    threads: int,
    as_json: bool,
    if_missing: bool,
) -> None:
    """Train SubgraphRAG's triple scorer on MetaQA dev (never test) and install it as an ONNX model."""
    from pathlib import Path

    from kgqa.core.errors import KgqaError
    from kgqa.graph.connection import driver_session
    from kgqa.models.registry import subgraphrag_model_dir, subgraphrag_model_installed

    if if_missing and subgraphrag_model_installed(name):
        click.echo(f"SubgraphRAG model {name!r} is installed at {subgraphrag_model_dir(name)}; kept")
        return

    try:
        from kgqa.training.subgraphrag import TrainConfig, train_subgraphrag
    except ModuleNotFoundError as exc:
        raise KgqaError(f"training needs {exc.name}; install the extra: pip install 'kgqa[train]'") from None
    if not name or "/" in name or name.startswith("."):
        raise KgqaError(f"--name must be a plain directory name, got {name!r}")
    forward, _, reverse = dde_rounds.partition(",")
    if not (forward.strip().isdigit() and reverse.strip().isdigit()) or max(int(forward), int(reverse)) > 8:
        raise KgqaError(f"--dde-rounds must be two numbers 0..8 as forward,reverse, got {dde_rounds!r}")
    config = TrainConfig(
        kg=kg,
        name=name,
        hops=hops,
        include_seed=include_seed,
        dde_forward=int(forward),
        dde_reverse=int(reverse),
        path_steps=path_steps,
        epochs=epochs,
        limit=limit or None,
        hidden=hidden,
        question_relation=question_relation,
        negatives=negatives,
        labels=labels,
        question_mask=question_mask or None,
        seed=seed,
        max_candidates=max_candidates,
        source=source,
        data_dir=Path(data_dir) if data_dir else None,
        threads=threads,
    )
    with driver_session() as driver:
        result = train_subgraphrag(driver, config, log=lambda msg: click.echo(f"kgqa: {msg}", err=True))
    if as_json:
        click.echo(json.dumps(result.meta, indent=2, sort_keys=True))
    else:
        click.echo(
            f"model {name!r} installed at {result.directory} "
            f"(validation triple recall@100 {result.meta['best_dev_recall@100']:.3f})"
        )


@train.command("gsr")
@click.option(
    "--kg", default="metaqa", show_default=True, help="KG whose relations are the chain vocabulary."
)
@click.option("--name", default="default", show_default=True, help="Installed as <models>/gsr/NAME.")
@METAQA_DATA
@click.option(
    "--synthesise/--no-synthesise",
    default=True,
    show_default=True,
    help="Also train on questions synthesised from the relation chains the KG can walk.",
)
@click.option("--epochs", default=40, show_default=True, type=int)
@click.option("--seed", default=13, show_default=True, type=int)
@click.option(
    "--refit/--no-refit",
    default=True,
    show_default=True,
    help="After measuring on held-out wordings, train again on all of them (twice the time).",
)
@IF_MISSING
def gsr(
    kg: str,
    name: str,
    data_dir: str | None,
    synthesise: bool,
    epochs: int,
    seed: int,
    refit: bool,
    if_missing: bool,
) -> None:
    """GSR's chain generator: a small transformer encoder-decoder (torch), exported to ONNX.

    Trained on MetaQA dev when the KG has MetaQA's relations, on questions synthesised from the KG's own
    relation chains, and on one pseudo-question per relation."""
    from kgqa.core.errors import KgqaError
    from kgqa.graph.connection import open_driver
    from kgqa.models.gsr import gsr_models_dir
    from kgqa.models.registry import gsr_model_installed

    if if_missing and gsr_model_installed(name):
        click.echo(f"GSR model {name!r} is installed at {gsr_models_dir() / name}; kept")
        return
    try:
        from kgqa.training.gsr import GsrConfig, train_gsr_for_kg
    except ModuleNotFoundError as exc:
        raise KgqaError(f"training needs {exc.name}; install the extra: pip install 'kgqa[train]'") from None

    with open_driver() as driver:
        try:
            report = train_gsr_for_kg(
                driver,
                kg,
                gsr_models_dir() / name,
                data_dir,
                GsrConfig(epochs=epochs, seed=seed, refit=refit),
                click.echo,
                synthesise=synthesise,
            )
        except ValueError as exc:
            raise click.ClickException(str(exc)) from None
    click.echo(
        f"GSR model {name!r} installed ({report.examples} examples, {report.seconds:.0f} s); chain accuracy"
        f" on held-out wordings {report.valid_chain_accuracy:.3f}"
        + (f" (then refit on all {report.refit_examples} examples)" if report.refit_examples else "")
    )
