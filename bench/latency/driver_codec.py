"""What the driver's Rust codec (``neo4j-rust-ext``) saves per question against the pure-Python one, one run.

FRAG's complex (3-hop) retrieval moves a kept subgraph of thousands of edges to Python for every question, and
sgrag and SubgraphRAG move their evidence rows; decoding those Bolt messages in pure Python is CPU the
database cannot share. For each question (MetaQA, one hop subset, a seeded sample) and each method, the
retriever runs once with the pure-Python decoder and once with the Rust one, in an order that alternates from
question to question. Topic entities are linked once per question and given to both runs.

The script checks that both runs return the same evidence triplets and answer candidates, and prints p50/p95
of retrieval per method and codec with the p50 ratio.

    KGQA_HOME=~/.kgqa-test KGQA_BOLT_PORT=7697 python -m bench.latency.driver_codec [--hops 3] [--n 30]
        [--methods frag,subgraphrag,sgrag] [--split dev] [--kg metaqa]
"""

from __future__ import annotations

import argparse
import statistics
import sys

import neo4j._codec.packstream.v1 as packstream
from kgqa.core.types import Evidence
from kgqa.evaluation.datasets import load_dataset
from kgqa.graph.connection import open_driver
from kgqa.qa.answering import QuestionAnswerer
from kgqa.retrieve.linking import link_entities

from bench.common import add_sample_options, with_retry

RUST_UNPACK = packstream.Unpacker.unpack if packstream._rust_unpack else None
CODECS = ("python", "rust")


def _python_unpack(self: packstream.Unpacker, hydration_hooks: object = None) -> object:
    return self._unpack(hydration_hooks=hydration_hooks)


def use_codec(codec: str) -> None:
    # the driver picks its decoder when the module is imported; swapping the method switches it per call
    packstream.Unpacker.unpack = RUST_UNPACK if codec == "rust" else _python_unpack


def fingerprint(evidence: Evidence) -> tuple[object, ...]:
    return tuple(evidence.triplets), tuple(evidence.answer_candidates)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    add_sample_options(parser, n=30, help="questions (one hop count)", hops=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--methods", default="frag,subgraphrag,sgrag")
    parser.add_argument("--kg", default="metaqa", help="a KG loaded from MetaQA")
    args = parser.parse_args(argv)
    if RUST_UNPACK is None:
        parser.error("the driver's Rust codec is not installed: pip install 'neo4j-rust-ext'")

    kg = args.kg
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    driver = open_driver()
    timings: dict[tuple[str, str], list[float]] = {}
    differ: dict[str, int] = {}
    try:
        answerers = {m: QuestionAnswerer(driver, m, kg) for m in methods}
        dataset = load_dataset("metaqa", args.split, hops=[args.hops], limit=args.questions, seed=args.seed)
        sample = [q.question for q in dataset.questions]
        for number, question in enumerate([sample[0], *sample]):  # the first one only warms up
            linked = with_retry(lambda q=question: link_entities(driver, q, kg))
            for method, answerer in answerers.items():
                order = CODECS if number % 2 == 0 else CODECS[::-1]
                seen: dict[str, tuple[object, ...]] = {}
                for codec in order:
                    use_codec(codec)
                    result = with_retry(lambda a=answerer, q=question, t=linked: a.ask(q, t))
                    elapsed = result.latency_ms["retrieval"]
                    seen[codec] = fingerprint(result.evidence)
                    if number > 0:
                        timings.setdefault((method, codec), []).append(elapsed)
                if number > 0 and seen["python"] != seen["rust"]:
                    differ[method] = differ.get(method, 0) + 1
    finally:
        use_codec("rust")
        driver.close()

    print(f"MetaQA {args.split} {args.hops}-hop, {len(sample)} questions (seed {args.seed}), k=100")
    print(f"{'method':12} {'codec':7} {'p50 ms':>8} {'p95 ms':>8} {'x p50':>7}  same evidence")
    for method in methods:
        baseline = statistics.median(timings[(method, "python")])
        for codec in CODECS:
            values = timings[(method, codec)]
            p50 = statistics.median(values)
            p95 = statistics.quantiles(values, n=20)[-1] if len(values) > 1 else p50
            same = len(values) - differ.get(method, 0)
            print(f"{method:12} {codec:7} {p50:8.1f} {p95:8.1f} {baseline / p50:7.2f}  {same}/{len(values)}")
    return 0 if not differ else 1


if __name__ == "__main__":
    sys.exit(main())
