"""In-database scoring speed of SubgraphRAG and its cosine baseline, each against its older form, one run.

For each question (MetaQA, one hop subset, a seeded sample) every variant is called once, in an order that
rotates from question to question, so machine noise falls on all variants alike:

    subgraphrag  whole, store   the trained model on every 1,556-wide feature row, embeddings read from the
                                store (a copy of the model without parts.onnx, installed by name for the
                                run, cacheEmbeddings: false)
                 parts, store   parts.onnx: the first layer once per entity, relation and question
                 parts, cache   ... with entity embeddings kept in memory per KG load (the default)
    cosine       cypher         the earlier Cypher: a vector.similarity.cosine per triple end and relation
                 proc, store    kgqa.subgraphrag.cosine, each entity compared once, embeddings from the store
                 proc, cache    ... with the embedding cache (the default)

All variants of a method score the same candidates; the script checks that they return the same top-k
triples (scores within 1e-4) and prints p50/p95 per variant and the p50 ratio to the first one.

    KGQA_HOME=~/.kgqa-test KGQA_BOLT_PORT=7697 python -m bench.latency.retrieval_speed [--hops 3] [--n 40]
        [--split dev] [--model NAME] [--kg metaqa]

The model is MetaQA's own scorer (``kgqa train all --kg metaqa``), or ``--model NAME``, one installed by name
(``kgqa train subgraphrag --kg metaqa --name NAME``).
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import sys
import time
from collections.abc import Callable

from kgqa.core.config import shared_data_dir
from kgqa.core.text import without_brackets
from kgqa.graph.connection import open_driver
from kgqa.models.registry import named_model_dir, subgraphrag_model_dir
from kgqa.retrieve.subgraphrag import RETRIEVE_QUERY, embed_question
from kgqa.training.scorer_onnx import PARTS_FILE

from bench.common import add_sample_options, with_retry

DATA = shared_data_dir() / "metaqa"
# The cosine baseline as it ran before kgqa.subgraphrag.cosine: kept here only as the measured baseline.
CYPHER_COSINE = """
CALL kgqa.subgraphrag.candidates($kg, $topicIds, {hops: $hops, maxCandidates: 20000, includeSeed: false})
YIELD head, relation, tail, headId, tailId
MATCH (h:Entity {kg: $kg, id: headId})
MATCH (t:Entity {kg: $kg, id: tailId})
MATCH (r:Relation {kg: $kg, name: relation})
WITH head, relation, tail,
     vector.similarity.cosine($q, h.embedding) + vector.similarity.cosine($q, r.embedding)
     + vector.similarity.cosine($q, t.embedding) AS score
RETURN head, relation, tail, 2 * score - 3 AS score
ORDER BY score DESC
LIMIT $k
"""
COSINE_PROCEDURE = (
    "CALL kgqa.subgraphrag.cosine($kg, $topicIds, {hops: $hops, k: $k, questionEmbedding: $q,"
    " cacheEmbeddings: $cache}) YIELD head, relation, tail, score RETURN head, relation, tail, score"
)

Rows = dict[tuple[str, str, str], float]


def questions(split: str, hops: int, n: int, seed: int) -> list[str]:
    path = DATA / f"{hops}-hop" / "vanilla" / f"qa_{split}.txt"
    lines = [line.split("\t")[0] for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return random.Random(seed).sample(lines, min(n, len(lines)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    add_sample_options(parser, n=40, help="questions (one hop count)", hops=3)
    parser.add_argument("--kg", default="metaqa", help="a KG loaded from MetaQA")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--model", default=None, help="a scorer installed by name (default: the KG's own)")
    parser.add_argument("--k", type=int, default=100)
    args = parser.parse_args(argv)

    kg, radius = args.kg, max(2, args.hops)
    source = subgraphrag_model_dir(kg, args.model)
    if not (source / PARTS_FILE).is_file():
        parser.error(
            f"{source} has no {PARTS_FILE}: train the model again (kgqa train subgraphrag --kg {kg})"
        )
    whole = named_model_dir("subgraphrag", f"{args.model or kg}-bench-whole")
    shutil.rmtree(whole, ignore_errors=True)
    shutil.copytree(source, whole)
    (whole / PARTS_FILE).unlink()
    driver = open_driver()
    try:
        sample = questions(args.split, args.hops, args.questions, args.seed)

        def topic_ids(question: str) -> list[str]:
            name = question[question.index("[") + 1 : question.index("]")]
            rows = driver.execute_query(
                "MATCH (e:Entity {kg: $kg, name: $name}) RETURN e.id AS id", kg=kg, name=name
            ).records
            return [str(r["id"]) for r in rows]

        def run(query: str, **params: object) -> Callable[[], Rows]:
            def call() -> Rows:
                records = driver.execute_query(query, **params).records
                return {(r["head"], r["relation"], r["tail"]): float(r["score"]) for r in records}

            return call

        timings: dict[str, list[float]] = {}
        mismatches: dict[str, int] = {}
        warm = True
        for number, question in enumerate([sample[0], *sample]):  # the first one only warms up
            ids = topic_ids(question)
            vector = [float(x) for x in embed_question(question)]

            def retrieve(
                model: str | None,
                cache: bool,
                question: str = question,
                ids: list[str] = ids,
                vector: list[float] = vector,
            ) -> Callable[[], Rows]:
                config = {"k": args.k, "kg": kg, "topicEntities": ids, "hops": radius}
                config |= {"model": model} if model else {}  # none: the KG's own scorer
                config |= {"questionEmbedding": vector, "cacheEmbeddings": cache}
                return run(RETRIEVE_QUERY, question=without_brackets(question), config=config)

            cosine = {"hops": radius, "k": args.k, "q": vector, "kg": kg, "topicIds": ids}
            variants = {
                "subgraphrag whole, store": retrieve(whole.name, False),
                "subgraphrag parts, store": retrieve(args.model, False),
                "subgraphrag parts, cache": retrieve(args.model, True),
                "cosine cypher": run(CYPHER_COSINE, **cosine),
                "cosine proc, store": run(COSINE_PROCEDURE, cache=False, **cosine),
                "cosine proc, cache": run(COSINE_PROCEDURE, cache=True, **cosine),
            }
            names = list(variants)
            shift = number % len(names)
            results: dict[str, Rows] = {}
            for name in names[shift:] + names[:shift]:
                began = time.perf_counter()
                results[name] = with_retry(variants[name])
                if not warm:
                    timings.setdefault(name, []).append((time.perf_counter() - began) * 1000)
            warm = False
            for name in names:
                reference = results[names[0] if name.startswith("subgraphrag") else "cosine cypher"]
                got = results[name]
                common = set(got) & set(reference)
                same = len(common) >= len(reference) - 2 and all(
                    abs(got[t] - reference[t]) <= 1e-4 for t in common
                )
                if number > 0:
                    mismatches[name] = mismatches.get(name, 0) + (0 if same else 1)
    finally:
        driver.close()
        shutil.rmtree(whole, ignore_errors=True)

    model = f"model {args.model!r}" if args.model else f"{kg}'s own model"
    print(
        f"MetaQA {args.split} {args.hops}-hop, {len(sample)} questions (seed {args.seed}), candidates within "
        f"{radius} hops, top {args.k}; {model}"
    )
    print(f"{'variant':28} {'p50 ms':>8} {'p95 ms':>8} {'x p50':>7}  same top-k")
    baseline: dict[str, float] = {}
    order = [
        "subgraphrag whole, store",
        "subgraphrag parts, store",
        "subgraphrag parts, cache",
        "cosine cypher",
        "cosine proc, store",
        "cosine proc, cache",
    ]
    for name in order:
        values = timings[name]
        p50 = statistics.median(values)
        p95 = statistics.quantiles(values, n=20)[-1] if len(values) > 1 else p50
        method = name.split()[0]
        baseline.setdefault(method, p50)
        print(
            f"{name:28} {p50:8.1f} {p95:8.1f} {baseline[method] / p50:7.2f}  "
            f"{len(values) - mismatches.get(name, 0)}/{len(values)}"
        )
    return 0 if not any(mismatches.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
