"""`kgqa eval metaqa|webqsp|cwq`: run a benchmark split through one method and write the report."""

from __future__ import annotations

from pathlib import Path

import click
from kgqa.cli.options import json_option
from kgqa.core.errors import BadInput
from kgqa.evaluation.datasets import DATASETS, SPLITS


def _hops(_ctx: click.Context, _param: click.Parameter, value: str | None) -> tuple[int, ...] | None:
    if value is None or not value.strip():
        return None
    try:
        hops = tuple(sorted({int(part) for part in value.split(",") if part.strip()}))
    except ValueError:
        raise click.BadParameter(f"expected a comma-separated list such as 1,2,3, got {value!r}") from None
    if not hops or any(h not in (1, 2, 3) for h in hops):
        raise click.BadParameter(f"hops must be among 1,2,3, got {value!r}")
    return hops


@click.command("eval")
@click.argument("dataset", type=click.Choice(DATASETS))
@click.option(
    "--split",
    type=click.Choice(["train", "dev", "test"]),
    help="Benchmark split (default dev for metaqa, test otherwise). WebQSP's dev is the part of its train "
    "split that `kgqa train all --questions` held out from the KG's models.",
)
@click.option("--hops", callback=_hops, metavar="1,2,3", help="MetaQA hop subsets (default all).")
@click.option(
    "--limit",
    type=click.IntRange(min=1),
    metavar="N",
    help="A sample of N questions drawn with --seed (for MetaQA spread evenly over the hops).",
)
@click.option(
    "--method",
    "method",
    metavar="M",
    help="Retrieval method: sgrag, frag, subgraphrag, simgrag, gsr, cosine, auto (chosen per question), "
    "or module:Class (default sgrag for metaqa, subgraphrag otherwise).",
)
@click.option(
    "--llm",
    default="none",
    show_default=True,
    metavar="NAME",
    help="Answerer: none for the extractive answerer, else a model at OPENAI_BASE_URL.",
)
@click.option(
    "-k",
    "--k",
    "k",
    type=click.IntRange(min=1),
    default=100,
    show_default=True,
    help="Evidence size (triplets) the method may return.",
)
@click.option("--kg", metavar="NAME", help="KG to query (default metaqa, or freebase for webqsp/cwq).")
@click.option(
    "--path",
    "path",
    type=click.Path(file_okay=False, path_type=Path),
    help="The dataset folder (default ../shared/data/DATASET or $KGQA_SHARED_DATA/DATASET).",
)
@click.option(
    "--out",
    "out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Report JSON; the .jsonl, .md and .png go next to it "
    "(default eval-results/DATASET-SPLIT-METHOD-LLM-kK.json).",
)
@click.option(
    "--resume/--no-resume",
    default=True,
    show_default=True,
    help="Continue the run in --out's JSONL, skipping questions already answered.",
)
@click.option("--retry-errors", is_flag=True, help="When resuming, answer again the questions that failed.")
@click.option(
    "--seed",
    type=int,
    default=0,
    show_default=True,
    help="Seed for the --limit sample and for python/numpy (and torch if loaded).",
)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    metavar="N",
    help="Questions answered at once. Faster on a multi-core machine, but each latency then includes "
    "waiting on the others: keep 1 when latency matters.",
)
@click.option(
    "--given-topic",
    is_flag=True,
    help="WebQSP/CWQ: answer from the dataset's topic entities (as the papers do) instead of linking them "
    "from the question.",
)
@click.option(
    "--warmup",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    metavar="N",
    help="Ask N questions of another split first (train, else dev; never test), untimed and not counted: "
    "latency then is that of a warm server.",
)
@click.option("--no-progress", is_flag=True, help="No progress bar.")
@click.option("--no-chart", is_flag=True, help="Skip the PNG chart.")
@json_option("the report (instead of the table)")
def eval_command(
    dataset: str,
    split: str | None,
    hops: tuple[int, ...] | None,
    limit: int | None,
    method: str | None,
    llm: str,
    k: int,
    kg: str | None,
    path: Path | None,
    out: Path | None,
    resume: bool,
    retry_errors: bool,
    seed: int,
    workers: int,
    given_topic: bool,
    warmup: int,
    no_progress: bool,
    no_chart: bool,
    as_json: bool,
) -> None:
    """Evaluate a method on a KGQA benchmark: Hits@1, Hit, F1s, recalls, latency -> JSON/JSONL/MD/PNG."""
    import json

    from kgqa.evaluation.runner import EvalConfig, run_eval

    if not no_chart and not _installed("matplotlib"):
        # found before the questions run, not as a traceback after them
        click.echo("kgqa: note: no chart (matplotlib is not installed: pip install 'kgqa[eval]')", err=True)
        no_chart = True
    if split is None:
        split = "dev" if dataset == "metaqa" else "test"
    if split not in SPLITS[dataset]:
        raise BadInput(f"{dataset} has no {split} split here; it has {', '.join(SPLITS[dataset])}")
    config = EvalConfig(
        dataset=dataset,
        split=split,
        hops=hops,
        limit=limit,
        method=method,
        llm=llm,
        k=k,
        kg=kg,
        path=path,
        out=out,
        resume=resume,
        retry_errors=retry_errors,
        seed=seed,
        workers=workers,
        progress=not no_progress,
        chart=not no_chart,
        given_topic=given_topic,
        warmup=warmup,
    )
    report = run_eval(config)
    if as_json:
        click.echo(json.dumps(report, ensure_ascii=False, default=str))
        return
    from kgqa.evaluation.report import render_markdown

    click.echo(render_markdown(report))
    outputs = report["outputs"]
    click.echo(
        f"report {outputs['report']}\nper-question {outputs['jsonl']}\nmarkdown {outputs['markdown']}"
        + (f"\nchart {outputs['chart']}" if not no_chart else "")
    )


def _installed(module: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # ValueError: a module that was set to None (not importable)
        return False
