"""Should SG-RAG fall back to a GSR chain? Measures the rule "answer from GSR's best chain when SG-RAG's
question-type classifier scores below τ, or none of its templates matched" on a hand-written question set.

    python bench/sgrag_gsr_fallback.py --set bench/questions/metaqa_freeform.jsonl \
        --set bench/questions/metaqa_two_entity.jsonl
    python bench/sgrag_gsr_fallback.py --eval-jsonl bench/results/metaqa-test-sgrag.jsonl  # how often

Both methods answer every question once (topic entities linked from the text, as a user gets them); the rule
is then applied for each τ, with and without the condition that the question has one linked entity (a
chain starts from one). The rule is chosen on the ``tune`` parts of all sets together and reported on the
``heldout`` parts. The candidate τ are the deciles of the classifier's score on tune (a score, not a
probability). The last row runs ``--method sgrag`` as shipped (``kgqa.retrieve.sgrag.FALLBACK_BELOW``).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kgqa.core.text import normalize_answer
from kgqa.graph.connection import open_driver
from kgqa.qa.answering import QuestionAnswerer
from kgqa.retrieve.gsr import GsrTrace
from kgqa.retrieve.sgrag import SgragRetriever, SgragTrace
from rich.console import Console
from rich.progress import track

STDERR = Console(stderr=True)


def first_is_gold(answers: list[str], gold: list[str]) -> bool:
    return bool(answers) and normalize_answer(answers[0]) in {normalize_answer(g) for g in gold}


def answer_all(rows: list[dict[str, Any]], kg: str) -> list[dict[str, Any]]:
    out = []
    with open_driver() as driver:
        # SG-RAG on its own (no fallback) and GSR: the rules are applied to their answers below
        alone = SgragRetriever(driver, fallback=False)
        sgrag = QuestionAnswerer(driver, "sgrag", kg, retriever=alone)
        gsr = QuestionAnswerer(driver, "gsr", kg)
        shipped = QuestionAnswerer(driver, "sgrag", kg)  # as `kgqa ask --method sgrag` runs it
        for row in track(rows, description="sgrag + gsr", console=STDERR, transient=True):
            s, g = sgrag.ask(row["question"]), gsr.ask(row["question"])
            shipped_answers = list(shipped.ask(row["question"]).answers)
            trace = s.evidence.trace
            score = trace.qtype_score if isinstance(trace, SgragTrace) else 0.0
            gt = g.evidence.trace
            chain = gt.answering_log_probability if isinstance(gt, GsrTrace) else None
            first = isinstance(gt, GsrTrace) and bool(gt.executed) and gt.executed[0] == gt.chains[0][0]
            out.append(
                {
                    "part": row["part"],
                    "score": score,
                    "matched": bool(s.evidence.paths),
                    "sgrag": first_is_gold(list(s.answers), row["answers"]),
                    "gsr": first_is_gold(list(g.answers), row["answers"]),
                    "gsr_answered": bool(g.answers),
                    "chain_log_probability": chain,
                    "first_chain_answers": first,
                    "one_entity": len(s.evidence.topic_entities) == 1,
                    "shipped": first_is_gold(shipped_answers, row["answers"]),
                }
            )
    return out


def hits(
    rows: list[dict[str, Any]],
    tau: float | None,
    on_no_match: bool,
    single: bool = True,
    chain_at_least: float | None = None,
    first_chain_only: bool = False,
) -> float:
    """Hits@1 of the rule; tau None: never on the classifier's score; single: the score counts only when the
    question has one linked entity (a GSR chain starts from one); chain_at_least: an unsure question keeps
    its template when the answering chain's beam log-probability is lower."""
    good = 0
    for r in rows:
        unsure = tau is not None and r["score"] < tau and (r["one_entity"] or not single)
        lp = r.get("chain_log_probability")
        if unsure and chain_at_least is not None and lp is not None and lp < chain_at_least and r["matched"]:
            unsure = False
        if unsure and first_chain_only and not r["first_chain_answers"] and r["matched"]:
            unsure = False
        fall_back = r["gsr_answered"] and (unsure or (on_no_match and not r["matched"]))
        good += r["gsr"] if fall_back else r["sgrag"]
    return 100 * good / max(1, len(rows))


def share(rows: list[dict[str, Any]], key: str) -> float:
    return 100 * sum(r[key] for r in rows) / max(1, len(rows))


def count_fallbacks(path: Path) -> int:
    """How many questions of an eval run fell back to a GSR chain, by reason, per hop."""
    counts: dict[tuple[int, str], int] = {}
    totals: dict[int, int] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if "question" not in row:
            continue  # the run's header
        hops = int(row.get("hops") or 0)
        totals[hops] = totals.get(hops, 0) + 1
        reason = str((row.get("trace") or {}).get("fallback_reason") or "templates")
        key = (hops, reason.split(" (")[0])
        counts[key] = counts.get(key, 0) + 1
    print(f"`python bench/sgrag_gsr_fallback.py --eval-jsonl {path}`\n")
    print("| hops | evidence from | questions | share |\n|---:|---|---:|---:|")
    for (hops, reason), n in sorted(counts.items()):
        print(f"| {hops} | {reason} | {n} | {100 * n / totals[hops]:.1f}% |")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", type=Path, action="append", default=[], help="repeatable")
    parser.add_argument("--kg", default="metaqa")
    parser.add_argument(
        "--eval-jsonl", type=Path, help="only count how often a `kgqa eval --method sgrag` run fell back"
    )
    args = parser.parse_args(argv)
    if args.eval_jsonl:
        return count_fallbacks(args.eval_jsonl)
    if not args.set:
        parser.error("give --set (repeatable) or --eval-jsonl")
    parts: dict[str, list[dict[str, Any]]] = {}
    for path in args.set:
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        answered = answer_all(rows, args.kg)
        for part in ("tune", "heldout"):
            parts[f"{path.stem} {part}"] = [r for r in answered if r["part"] == part]
    tune = [r for name, rows in parts.items() if name.endswith("tune") for r in rows]
    sets = " ".join(f"--set {p}" for p in args.set)
    print(f"`python bench/sgrag_gsr_fallback.py {sets}`\n")
    print("Hits@1 %; n: " + ", ".join(f"{name} {len(rows)}" for name, rows in parts.items()) + ".\n")
    print("| rule | " + " | ".join(parts) + " |\n|---|" + "---:|" * len(parts))

    def row(label: str, value: Callable[[list[dict[str, Any]]], float]) -> None:
        print(f"| {label} | " + " | ".join(f"{value(rows):.1f}" for rows in parts.values()) + " |")

    row("sgrag alone", lambda rows: share(rows, "sgrag"))
    row("gsr alone", lambda rows: share(rows, "gsr"))
    row("fall back on no match", lambda rows: hits(rows, None, True))
    # candidate thresholds: the deciles of the classifier's score on the tune parts (it is not a probability)
    scores = sorted(r["score"] for r in tune)
    taus = sorted({round(scores[int(q * (len(scores) - 1))], 4) for q in [d / 10 for d in range(1, 10)]})
    candidates: list[tuple[float | None, bool]] = [(None, True)]
    for single in (False, True):
        for tau in taus:
            candidates.append((tau, single))
            where = "one linked entity, " if single else ""
            row(
                f"fall back when {where}score < {tau}, or on no match",
                lambda rows, tau=tau, single=single: hits(rows, tau, True, single),
            )
    best = max(candidates, key=lambda c: (hits(tune, c[0], True, c[1]), c[0] is None))
    # a floor on the answering chain's log-probability, for every τ with one linked entity: the candidates
    # are the deciles of that log-probability on tune
    chain_lps = sorted(r["chain_log_probability"] for r in tune if r["chain_log_probability"] is not None)
    thetas = sorted({round(chain_lps[int(q / 10 * (len(chain_lps) - 1))], 4) for q in range(1, 10)})
    floors: list[tuple[float | None, float | None]] = [(best[0], None)]
    for tau in taus:
        for theta in thetas:
            floors.append((tau, theta))
    best_floor = max(floors, key=lambda c: (hits(tune, c[0], True, True, c[1]), c[1] is None))
    for tau, theta in [(best[0], t) for t in thetas] + [best_floor]:
        row(
            f"fall back when one linked entity, score < {tau} and chain log-p ≥ {theta}, or on no match",
            lambda rows, tau=tau, theta=theta: hits(rows, tau, True, True, theta),
        )
    row(
        f"fall back when one linked entity, score < {best[0]} and GSR's best chain answers, or on no match",
        lambda rows: hits(rows, best[0], True, True, None, True),
    )
    row("`--method sgrag` as shipped", lambda rows: share(rows, "shipped"))
    print(
        f"\nChosen on the tune parts together: τ = {best[0]}, one linked entity only: {best[1]}"
        f" ({hits(tune, best[0], True, best[1]):.1f} on tune). The classifier's score on tune ranges"
        f" {scores[0]:.3f} .. {scores[-1]:.3f}. With a floor on the chain's log-probability: τ ="
        f" {best_floor[0]}, floor {best_floor[1]} ({hits(tune, best_floor[0], True, True, best_floor[1]):.1f}"
        " on tune, the last rule row)."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
