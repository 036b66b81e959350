"""Names per second of the two sentence encoders on the same entity names, in one run.

* full: all-MiniLM-L6-v2 as ONNX (``OnnxEncoder``, what ``kgqa load`` uses by default);
* fast: all-MiniLM-L6-v2-static, distilled from it with model2vec (``StaticEncoder``, ``--embeddings fast``).

Both embed the same names (a fixed-seed sample of MetaQA's entity names), in the loader's batches of 1024,
after a warm-up batch; the figures are wall-clock names/s on this machine, and the ratio. ``--repeat-fast N``
also times the fast encoder on the names repeated N times (a million-name load is dominated by this step).
The encoders are built first if needed (the fast one by distillation: about 2 minutes, once).

    python -m bench.embedding.fast_path [--names 5000] [--repeat-fast 20] [--threads 0]

``--vector-linking KG [KG ...]`` measures instead what the encoder of each KG does for linking: the
linker's vector fallback alone (``cypher_templates/bench/vector_nearest``), on the topic entities of
MetaQA dev questions (``--split dev`` only), written as in the KB, lower-cased, and with one letter of the
longest word deleted; top-1 is correct when the nearest entity of that KG is the topic, top-5 when it is
among the 5 nearest. Texts are embedded in the database by each KG's recorded encoder.

    python -m bench.embedding.fast_path --vector-linking metaqa metaqa-fast [--questions 1000]

KGQA_HOME picks where the encoders are built (default ~/.kgqa) and, with KGQA_BOLT_PORT, the server.
"""

from __future__ import annotations

import argparse
import os
import random
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
from kgqa.core.config import shared_data_dir
from kgqa.models.encoder import (
    DEFAULT_MODEL,
    STATIC_MODEL,
    OnnxEncoder,
    StaticEncoder,
    ensure_encoder,
    ensure_static_encoder,
)

BATCH = 1024  # loaders/embeddings.py ENCODE_BATCH
TOP = 5
OVERFETCH = 100  # nearest neighbours over all KGs in the shared index, before keeping one KG's


def metaqa_names(kb: Path, count: int, seed: int) -> list[str]:
    names: set[str] = set()
    with kb.open(encoding="utf-8") as fh:
        for line in fh:
            parts = line.rstrip("\n").split("|")
            if len(parts) == 3:
                names.update((parts[0], parts[2]))
    ordered = sorted(names)
    return random.Random(seed).sample(ordered, min(count, len(ordered)))


def names_per_second(embed: Callable[[Sequence[str]], np.ndarray], names: list[str]) -> tuple[float, float]:
    """(names/s, seconds) over ``names`` in loader-sized batches, sorted by length as the loader does."""
    embed(names[:64])  # warm-up: sessions, allocations, first-call caches
    ordered = sorted(names, key=len)
    began = time.perf_counter()
    for start in range(0, len(ordered), BATCH):
        embed(ordered[start : start + BATCH])
    seconds = time.perf_counter() - began
    return len(names) / seconds, seconds


def vector_linking(kgs: list[str], questions: int, seed: int) -> None:
    from kgqa.evaluation.metaqa import read_questions
    from kgqa.graph.connection import open_driver
    from kgqa.graph.cypher import render
    from kgqa.graph.kg import kg_embedding_model
    from neo4j import RoutingControl
    from neo4j.exceptions import ClientError

    rng = random.Random(seed)
    topics = sorted({t for hops in (1, 2, 3) for q in read_questions("dev", hops) for t in q.topics})
    sample = rng.sample(topics, min(questions, len(topics)))
    variants = {
        "as in the KB": sample,
        "lower-cased": [t.lower() for t in sample],
        "one typo": [_typo(t, random.Random(f"{seed}|{t}")) for t in sample],
    }
    query = render("bench/vector_nearest")
    print(
        f"{len(sample):,} distinct topic entities of MetaQA dev (seed {seed}); "
        "vector search alone, no name match"
    )
    with open_driver() as driver:
        for kg in kgs:
            model = kg_embedding_model(driver, kg)
            for label, texts in variants.items():
                top1 = top5 = 0
                began = time.perf_counter()
                failed = 0
                for text, gold in zip(texts, sample, strict=True):
                    try:
                        rows = driver.execute_query(
                            query, text=text, kg=kg, k=OVERFETCH, top=TOP, routing_=RoutingControl.READ
                        ).records
                    except ClientError:  # e.g. a text with no known token: the zero vector has no cosine
                        failed += 1
                        continue
                    ids = [r["id"] for r in rows]
                    top1 += bool(ids) and ids[0] == gold
                    top5 += gold in ids
                ms = (time.perf_counter() - began) * 1000 / len(texts)
                print(
                    f"{kg:<14} {model or '-':<26} {label:<13} top-1 {100 * top1 / len(texts):6.2f}%  "
                    f"top-5 {100 * top5 / len(texts):6.2f}%  {ms:5.1f} ms/query"
                    + (f"  ({failed} failed)" if failed else "")
                )


def _typo(text: str, rng: random.Random) -> str:
    """One letter of the longest word deleted (as bench/linking/metaqa.py --typos)."""
    words = text.split(" ")
    k = max(range(len(words)), key=lambda i: len(words[i]))
    if len(words[k]) < 5:
        return text
    at = rng.randrange(1, len(words[k]) - 1)
    words[k] = words[k][:at] + words[k][at + 1 :]
    return " ".join(words)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--names", type=int, default=5000, help="MetaQA entity names to embed with both encoders")
    ap.add_argument("--repeat-fast", type=int, default=20, help="the fast encoder also on names x N")
    ap.add_argument("--threads", type=int, default=0, help="ONNX Runtime intra-op threads (0: its default)")
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--vector-linking", nargs="+", metavar="KG", help="vector-only linking per KG instead")
    ap.add_argument("--questions", type=int, default=1000, help="topic entities for --vector-linking")
    args = ap.parse_args()
    if args.vector_linking:
        vector_linking(args.vector_linking, args.questions, args.seed)
        return 0

    kb = shared_data_dir() / "metaqa" / "kb_dedup.txt"
    if not kb.is_file():
        raise SystemExit(f"benchmark data not found: {kb}")
    names = metaqa_names(kb, args.names, args.seed)
    full = OnnxEncoder(ensure_encoder(), threads=args.threads)
    fast = StaticEncoder(ensure_static_encoder())
    print(f"{len(names):,} MetaQA entity names (seed {args.seed}), batches of {BATCH}, {os.cpu_count()} CPUs")
    print(f"load average before: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    full_rate, full_s = names_per_second(lambda t: full.embed(t, batch_size=128), names)
    fast_rate, fast_s = names_per_second(fast.embed, names)
    print(f"full  {DEFAULT_MODEL:<26} {full_rate:>12,.0f} names/s  ({full_s:.2f} s)")
    print(f"fast  {STATIC_MODEL:<26} {fast_rate:>12,.0f} names/s  ({fast_s:.3f} s)")
    print(f"ratio fast/full: {fast_rate / full_rate:,.0f}x")
    if args.repeat_fast > 1:
        many = names * args.repeat_fast
        rate, seconds = names_per_second(fast.embed, many)
        print(f"fast on {len(many):,} names: {rate:,.0f} names/s ({seconds:.2f} s)")
        print(
            f"1,000,000 names at these rates: full {1e6 / full_rate / 60:.1f} min, "
            f"fast {1e6 / rate:.1f} s (the encoder alone; the load also writes the vectors)"
        )
    print(f"load average after: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
