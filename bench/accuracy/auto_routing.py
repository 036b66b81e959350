"""How should ``--method auto`` route? Every method answers every question once; routing policies are then
replayed over those answers (``kgqa.qa.routing.plan_route`` is pure), chosen on the ``tune`` parts, and
reported on the ``heldout`` parts beside each single method and ``auto`` as shipped.

    python -m bench.accuracy.auto_routing --set bench/questions/metaqa_freeform.jsonl \
        --set bench/questions/metaqa_two_entity.jsonl --metaqa-dev 300

``--metaqa-dev N`` adds a seeded sample of MetaQA dev questions (spread over the hops, as MetaQA writes them,
with brackets) to the tune pool, so that a policy that wins on free-form wording does not lose MetaQA's own.
MetaQA test is never read. Topic entities are linked once per question from its text, as a user gets them.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from kgqa.evaluation.metaqa import read_questions
from kgqa.graph.connection import open_driver
from kgqa.qa.answering import QuestionAnswerer
from kgqa.qa.methods import AUTO_CANDIDATES
from kgqa.qa.routing import DEFAULT_POLICY, QuestionSignals, RoutePolicy, Router, answered, plan_route
from kgqa.qa.routing import question_signals as signals_of
from rich.console import Console
from rich.progress import track

from bench.common import score  # the same Hits@1 / Hit as questions_answers

STDERR = Console(stderr=True)


def first_is_gold(answers: list[str], gold: list[str]) -> bool:
    return bool(score(answers, gold)[0])


def any_is_gold(answers: list[str], gold: list[str]) -> bool:
    return bool(score(answers, gold)[1])


def metaqa_dev_sample(n: int, seed: int = 7) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    rows = []
    for hops in (1, 2, 3):
        questions = read_questions("dev", hops)
        for q in rng.sample(questions, n // 3):
            rows.append(
                {
                    "id": f"dev-{hops}-{q.line}",
                    "question": q.question,
                    "answers": list(q.answers),
                    "kind": f"metaqa dev {hops}-hop",
                    "part": "tune",
                    "set": "dev_sample",  # not "metaqa_dev": our answers, not a copy of MetaQA's dev file
                }
            )
    return rows


def answer_all(rows: list[dict[str, Any]], kg: str, methods: list[str]) -> tuple[list[dict[str, Any]], dict]:
    """Per question: the route's signals, and each method's hit and whether it answered."""
    out = []
    with open_driver() as driver:
        auto = QuestionAnswerer(driver, "auto", kg)
        assert auto.router is not None
        router: Router = auto.router
        answerers: dict[str, QuestionAnswerer | str] = {}
        for m in methods:
            try:
                answerers[m] = QuestionAnswerer(driver, m, kg)
            except Exception as exc:  # a method that cannot run here is reported, not fatal
                answerers[m] = f"{type(exc).__name__}: {exc}"
        for row in track(rows, description="every method", console=STDERR, transient=True):
            topics = auto.link(row["question"], kg)
            signals = signals_of(row["question"], topics, router.templates_fit, router.classifiers)
            record: dict[str, Any] = {**row, "signals": signals, "methods": {}}
            for m, answerer in answerers.items():
                if isinstance(answerer, str):
                    record["methods"][m] = {"hit": False, "any": False, "why_not": answerer, "answers": []}
                    continue
                result = answerer.ask(row["question"], topic_entities=topics or None) if topics else None
                if result is None:
                    record["methods"][m] = {
                        "hit": False,
                        "any": False,
                        "why_not": "no topic entity",
                        "answers": [],
                    }
                    continue
                why_not = answered(result.evidence, signals.asked) or ("" if result.answers else "no answer")
                record["methods"][m] = {
                    "hit": first_is_gold(result.answers, row["answers"]),
                    "any": any_is_gold(result.answers, row["answers"]),
                    "why_not": why_not,
                    "answers": list(result.answers[:5]),
                    # SimGRAG's Graph Semantic Distance of its best match: how closely the pattern was found
                    "best_distance": getattr(result.evidence.trace, "best_distance", None),
                }
            shipped = auto.ask(row["question"])
            record["shipped"] = first_is_gold(shipped.answers, row["answers"])
            record["shipped_any"] = any_is_gold(shipped.answers, row["answers"])
            record["shipped_answers"] = list(shipped.answers[:5])
            record["shipped_chosen"] = shipped.route.chosen if shipped.route is not None else None
            out.append(record)
        available = {m: ("" if not isinstance(a, str) else a) for m, a in answerers.items()}
    return out, available


def routed_hit(record: dict[str, Any], policy: RoutePolicy, available: dict[str, str]) -> bool:
    signals: QuestionSignals = record["signals"]
    if signals.spans == 0:
        return False
    for step in plan_route(signals, available, policy):
        outcome = record["methods"].get(step.method)
        if outcome is not None and not outcome["why_not"]:
            return bool(outcome["hit"])
    return False


def share(rows: list[dict[str, Any]], hit: Callable[[dict[str, Any]], bool]) -> float:
    return 100 * sum(hit(r) for r in rows) / max(1, len(rows))


def policies(tune: list[dict[str, Any]], methods: list[str]) -> list[RoutePolicy]:
    """The candidates: the deciles of the classifier's score on tune (and never / always sure), times the
    orders of the methods for one-entity questions the classifier is unsure of and for several entities."""
    scores = sorted(r["signals"].qtype_score for r in tune if r["signals"].qtype_score is not None)
    taus = sorted({round(scores[int(d / 10 * (len(scores) - 1))], 3) for d in range(1, 10)})
    taus = [-1e9, *taus, 1e9]
    head = [m for m in ("simgrag", "gsr", "sgrag", "frag") if m in methods]
    rest = tuple(m for m in methods if m not in head)
    several = [m for m in ("simgrag", "frag", "sgrag") if m in methods]
    out = []
    for tau in taus:
        for unsure in itertools.permutations(head):
            for multi in itertools.permutations(several):
                out.append(
                    replace(
                        DEFAULT_POLICY,
                        sure_qtype=tau,
                        one_entity_unsure=tuple(unsure) + rest,
                        several_entities=tuple(multi) + tuple(m for m in methods if m not in multi),
                    )
                )
    return out


def describe(policy: RoutePolicy) -> str:
    tau = {-1e9: "always", 1e9: "never"}.get(policy.sure_qtype, f"≥ {policy.sure_qtype}")
    return (
        f"sgrag first when sure ({tau}); unsure: {'>'.join(policy.one_entity_unsure[:4])}; "
        f"several: {'>'.join(policy.several_entities[:3])}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", type=Path, action="append", default=[], help="repeatable")
    parser.add_argument("--metaqa-dev", type=int, default=0, help="add N MetaQA dev questions to tune")
    parser.add_argument("--kg", default="metaqa")
    parser.add_argument("--methods", default=",".join(AUTO_CANDIDATES))
    parser.add_argument("--part", choices=("tune", "heldout", "all"), default="all")
    parser.add_argument(
        "--out-dir",
        type=Path,
        help="write, per set, every method's and auto's answers as questions_answers --out does",
    )
    args = parser.parse_args(argv)
    methods = [m for m in args.methods.split(",") if m]
    rows: list[dict[str, Any]] = []
    for path in args.set:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if line.strip():
                try:
                    rows.append({**json.loads(line), "set": path.stem})
                except ValueError as exc:
                    print(f"{path}:{number}: not JSON ({exc})", file=sys.stderr)
                    return 1
    rows += metaqa_dev_sample(args.metaqa_dev) if args.metaqa_dev else []
    if args.part != "all":
        rows = [r for r in rows if r["part"] == args.part]
    records, available = answer_all(rows, args.kg, methods)
    parts: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        parts.setdefault(f"{r['set']} {r['part']}", []).append(r)
    parts = dict(sorted(parts.items(), key=lambda kv: (kv[0].endswith("heldout"), kv[0])))
    tune = [r for r in records if r["part"] == "tune"]
    candidates = policies(tune, methods)
    best = max(candidates, key=lambda p: share(tune, lambda r: routed_hit(r, p, available)))

    command = "python -m bench.accuracy.auto_routing " + " ".join(f"--set {p}" for p in args.set)
    command += f" --metaqa-dev {args.metaqa_dev}" if args.metaqa_dev else ""
    command += f" --methods {args.methods}" if methods != list(AUTO_CANDIDATES) else ""
    command += f" --part {args.part}" if args.part != "all" else ""
    print(f"`{command}`\n")
    print("Hits@1 %; n: " + ", ".join(f"{name} {len(rs)}" for name, rs in parts.items()) + ".\n")
    print("| answered by | " + " | ".join(parts) + " |\n|---|" + "---:|" * len(parts))

    def row(label: str, hit: Callable[[dict[str, Any]], bool]) -> None:
        print(f"| {label} | " + " | ".join(f"{share(rs, hit):.1f}" for rs in parts.values()) + " |")

    for m in methods:
        row(m, lambda r, m=m: bool(r["methods"][m]["hit"]))
    row("best single method per question (oracle)", lambda r: any(o["hit"] for o in r["methods"].values()))
    row(
        f"auto, default policy: {describe(DEFAULT_POLICY)}",
        lambda r: routed_hit(r, DEFAULT_POLICY, available),
    )
    row(f"auto, best on tune: {describe(best)}", lambda r: routed_hit(r, best, available))
    row("`--method auto` as shipped", lambda r: bool(r["shipped"]))
    print(
        f"\n{len(candidates)} policies replayed; the best on tune (all tune parts together) is listed above."
    )
    unavailable = {m: why for m, why in available.items() if why}
    if unavailable:
        print("Not available here: " + "; ".join(f"{m}: {why}" for m, why in unavailable.items()))
    if args.out_dir:
        write_answers(records, methods, args.out_dir, command)
    return 0


def write_answers(records: list[dict[str, Any]], methods: list[str], out_dir: Path, command: str) -> None:
    """Per set, ``{"_command": ..., method: [row, ...], "auto": [...]}``, as bench.report reads it."""
    out_dir.mkdir(parents=True, exist_ok=True)
    by_set: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        by_set.setdefault(r["set"], []).append(r)
    for name, rs in by_set.items():
        saved: dict[str, Any] = {"_command": command}
        for m in [*methods, "auto"]:
            saved[m] = [
                {
                    "id": r["id"],
                    "kind": r["kind"],
                    "part": r["part"],
                    "hits1": float(r["shipped"] if m == "auto" else r["methods"][m]["hit"]),
                    "hit": float(r["shipped_any"] if m == "auto" else r["methods"][m]["any"]),
                    "answers": r["shipped_answers"] if m == "auto" else r["methods"][m]["answers"],
                    **({"why_not": r["methods"][m]["why_not"]} if m != "auto" else {}),
                    **(
                        {"best_distance": r["methods"][m]["best_distance"]}
                        if m != "auto" and r["methods"][m].get("best_distance") is not None
                        else {}
                    ),
                    **(
                        {"chosen": r["shipped_chosen"], "signals": r["signals"].to_json()}
                        if m == "auto"
                        else {}
                    ),
                }
                for r in rs
            ]
        path = out_dir / f"{name}.json"
        path.write_text(json.dumps(saved, ensure_ascii=False, indent=1), encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
