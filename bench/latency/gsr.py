"""GSR inside the database: generation latency (``kgqa.gsr.chains``, 10 beams), retrieval latency
(``kgqa.gsr.retrieve``) against walking the chains with SG-RAG's Cypher path template, and the model's size.

    python -m bench.latency.gsr [--n 200] [--kg metaqa] [--model NAME]

Runs against the running server (``kgqa server start``) with the KG's GSR model (``kgqa train gsr --kg KG``,
or ``kgqa train all --kg KG``; ``--model NAME``: one installed by name, ``<models>/gsr/NAME``). Questions:
``--n`` per hop from MetaQA dev (the model's training questions: only timing and the agreement of the two
walks are reported, which training does not change; the test split stays for accuracy), topic entities
linked once beforehand, untimed. For each question, in turn and in the same run so that the machine's noise
hits all alike:

* ``chains``: ``kgqa.gsr.chains`` (tokenise, encoder, beam search over the decoder, in ONNX Runtime Java);
* ``retrieve, procedure``: ``kgqa.gsr.retrieve`` (the chains walked with the Core API, first 3 that reach
  something), the road ``kgqa ask --method gsr`` takes;
* ``retrieve, template``: ``kgqa.gsr.chains``, then each chain walked with ``cypher_templates/sgrag/path``
  until 3 reach something (one round trip per chain): the baseline the procedure has to beat;
* ``chains, Python``: the same model's beam search in onnxruntime in this process (no database), for scale.

Times are seen from the client (Bolt round trip included), in ms.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from kgqa.core.config import shared_data_dir
from kgqa.evaluation.metaqa import read_questions
from kgqa.evaluation.metrics import percentile
from kgqa.graph.connection import open_driver
from kgqa.graph.cypher import render
from kgqa.models.gsr import ChainModel, masked
from kgqa.models.registry import gsr_model_dir
from kgqa.retrieve.linking import link_entities
from kgqa.retrieve.paths import run_steps, steps_query
from neo4j import Driver, RoutingControl
from rich.console import Console
from rich.progress import track

STDERR = Console(stderr=True)
CHAINS = "CALL kgqa.gsr.chains($question, $config) YIELD chain, score RETURN chain, score"
KEEP = 3
T = TypeVar("T")


def timed(function: Callable[..., T], *args: object) -> tuple[float, T]:
    began = time.perf_counter()
    value = function(*args)
    return (time.perf_counter() - began) * 1000, value


def generate(driver: Driver, question: str, config: dict[str, object]) -> list[object]:
    return list(driver.execute_query(CHAINS, {"question": question, "config": config}).records)


def by_procedure(driver: Driver, question: str, config: dict[str, object]) -> set[str]:
    records = driver.execute_query(
        render("gsr/retrieve"), {"question": question, "config": config}, routing_=RoutingControl.READ
    ).records
    first = min((int(r["chainRank"]) for r in records), default=0)
    return {str(r["answer"]) for r in records if int(r["chainRank"]) == first}


def by_template(driver: Driver, question: str, config: dict[str, object], kg: str) -> set[str]:
    records = driver.execute_query(
        CHAINS, {"question": question, "config": config}, routing_=RoutingControl.READ
    ).records
    answers: list[set[str]] = []
    for record in records:
        steps = [(str(r), str(d)) for r, d in record["chain"]]
        match = run_steps(driver, steps_query(steps, "a chain"), "gsr", kg, list(config["topicEntities"]))  # type: ignore[arg-type]
        if match.paths:
            answers.append(set(match.answers))
            if len(answers) == KEEP:
                break
    return answers[0] if answers else set()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=200, help="questions per hop")
    parser.add_argument("--model", default=None, help="a GSR model installed by name (default: the KG's own)")
    parser.add_argument("--kg", default="metaqa")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    questions = []
    for hop in (1, 2, 3):
        rows = read_questions("dev", hop, root=shared_data_dir() / "metaqa")
        questions += [(hop, q.question) for q in rng.sample(rows, args.n)]
    directory = gsr_model_dir(args.kg, args.model)
    reference = ChainModel(directory)
    times: dict[str, list[float]] = {
        k: [] for k in ("chains", "retrieve, procedure", "retrieve, template", "chains, Python")
    }
    agree = compared = 0
    with open_driver() as driver:
        linked = {q: link_entities(driver, q, args.kg) for _h, q in questions}
        for i, (_hop, question) in enumerate(track(questions, description="GSR latency", console=STDERR)):
            topics = linked[question]
            config = {
                "kg": args.kg,
                "model": args.model,
                "beams": 10,
                "topicEntities": [e.id for e in topics] or None,
                "topicSpans": [e.span or e.name for e in topics] or None,
            }
            config = {k: v for k, v in config.items() if v is not None}
            ms_chains, _ = timed(generate, driver, question, config)
            text = masked(question, [e.span or e.name for e in topics])
            ms_python, _ = timed(reference.chains, text, 10)
            if not topics:
                continue
            ms_proc, got = timed(by_procedure, driver, question, {**config, "keep": KEEP})
            ms_tmpl, want = timed(by_template, driver, question, config, args.kg)
            if i < 10:  # warm-up: model loading, query planning
                continue
            times["chains"].append(ms_chains)
            times["chains, Python"].append(ms_python)
            times["retrieve, procedure"].append(ms_proc)
            times["retrieve, template"].append(ms_tmpl)
            compared += 1
            agree += got == want
    size = sum(f.stat().st_size for f in Path(directory).iterdir() if f.is_file()) / 1e6
    model = f" --model {args.model}" if args.model else ""
    print(f"`python -m bench.latency.gsr --n {args.n} --kg {args.kg}{model}`\n")
    print(
        f"{len(questions)} MetaQA dev questions ({args.n} per hop, seed {args.seed}), the first 10 as"
        f" warm-up; 10 beams; model `{args.model or args.kg}` on disk {size:.0f} MB.\n"
    )
    print("| step | p50 ms | p95 ms | ratio of p50 to `retrieve, template` |\n|---|---:|---:|---:|")
    base = percentile(times["retrieve, template"], 50)
    for name, values in times.items():
        p50 = percentile(values, 50)
        print(f"| {name} | {p50:.1f} | {percentile(values, 95):.1f} | {p50 / base:.2f} |")
    print(
        f"\nThe two walks give the same answer set for the first chain that reaches something on"
        f" {agree} of {compared} questions ({100 * agree / max(compared, 1):.1f}%)."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
