"""FRAG's chain similarity, the KG's fine-tuned question-to-path scorer's or the frozen sentence encoder's:
``auto`` on a WebQSP split of a KG trained without labelled questions, once each way, in the same run.

    python -m bench.accuracy.frag_chain_similarity --kg fb15k --split test \
        --out-dir bench/results/webqsp-fb15k-unlabelled

Prints Hits@1 overall and per hop count for both, writes each run's report (``<split>-auto-frag-<variant>``)
and the table (``frag-chain-similarity-<split>.md``, with this command) to ``--out-dir``.
Only FRAG changes between the two; sgrag asks the path scorer in both.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from kgqa.evaluation.runner import EvalConfig, run_eval
from kgqa.graph.connection import open_driver
from kgqa.qa.answering import QuestionAnswerer
from kgqa.retrieve.frag import FragConfig, FragRetriever

VARIANTS = ("path-scorer", "encoder")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--kg", required=True)
    parser.add_argument("--split", default="test", choices=("train", "dev", "test"))
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--out-dir", type=Path, required=True)
    args = parser.parse_args(argv)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    limit = f" --limit {args.limit}" if args.limit is not None else ""
    rerun = (
        f"python -m bench.accuracy.frag_chain_similarity --kg {args.kg} --split {args.split}{limit}"
        f" --out-dir {args.out_dir}"
    )
    lines = ["| FRAG's chain similarity | Hits@1 | by hops |", "|---|---:|---|"]
    with open_driver() as driver:
        for variant in VARIANTS:
            answerer = QuestionAnswerer(driver, "auto", args.kg)
            assert answerer.router is not None
            answerer.router.retrievers["frag"] = FragRetriever(
                driver, FragConfig(path_scorer=variant == "path-scorer")
            )
            out = args.out_dir / f"{args.split}-auto-frag-{variant}.json"
            config = EvalConfig(
                "webqsp",
                split=args.split,
                kg=args.kg,
                limit=args.limit,
                out=out,
                resume=False,
                chart=False,
                rerun=rerun,
            )
            report = run_eval(config, driver, answerer)
            by_hops = ", ".join(f"{h} hop: {100 * v['hits1']:.1f}" for h, v in report["by_hops"].items())
            lines.append(f"| {variant} | {100 * report['metrics']['hits1']:.1f} | {by_hops} |")
    print("\n".join(lines))
    table = args.out_dir / f"frag-chain-similarity-{args.split}.md"
    table.write_text(f"`{rerun}`\n\n" + "\n".join(lines) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
