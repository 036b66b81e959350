"""GSR's chain generator on WebQSP: trained on the train split only, chain Hit@1 / Hit@10 on test.

    python -m bench.accuracy.gsr_webqsp [--examples 150000]

No Freebase is needed: the generator is measured on its own, against the gold inferential chains of
``webqsp_test_beamqa.txt``. One token per whole Freebase relation (WebQSP has a few hundred; GSR splits names
by their dots where a KG has thousands). The baseline, measured in the same run, ranks every chain seen in
training by the cosine similarity of its relations' words to the question (MiniLM, the project's encoder).
The model is written to a temporary folder, never installed. ``--examples``: how many examples training reads
in all (``GsrConfig.examples``; the epochs follow from the number of distinct examples).
"""

from __future__ import annotations

import argparse
import ast
import csv
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from kgqa.core.config import shared_data_dir
from kgqa.models.encoder import embed
from kgqa.models.gsr import ChainModel
from kgqa.training import gsr
from kgqa.training.gsr_data import Example, index_examples

Chain = tuple[tuple[str, str], ...]


def words(relation: str) -> str:
    return relation.replace(".", " ").replace("_", " ")


def read_train(path: Path) -> list[tuple[str, list[Chain]]]:
    out = []
    with path.open(encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            chains = [tuple((r, "out") for r in c.split("|")) for c in ast.literal_eval(row["rel"])]
            out.append((row["qa"].strip().lower(), chains))
    return out


def read_test(path: Path) -> list[tuple[str, Chain]]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        parts = line.split("\t")
        if len(parts) < 3 or not parts[2].strip():
            continue
        question = parts[0].rsplit("[", 1)[0].strip().lower()
        out.append((question, tuple((r, "out") for r in parts[2].strip().split("|"))))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=gsr.GsrConfig().examples)
    parser.add_argument("--beams", type=int, default=10)
    args = parser.parse_args(argv)
    base = shared_data_dir() / "webqsp"
    train_rows = read_train(base / "webqsp_train_beamqa.csv")
    test_rows = read_test(base / "webqsp_test_beamqa.txt")
    relations = sorted({r for _q, chains in train_rows for c in chains for r, _d in c})
    examples = [Example(q, c, "retrieval") for q, chains in train_rows for c in chains]
    examples += index_examples(relations)
    cfg = gsr.GsrConfig(examples=args.examples)
    began = time.monotonic()
    model, vocab, report = gsr.train(
        examples, [], relations, cfg, progress=lambda m: print(m, file=sys.stderr)
    )
    with tempfile.TemporaryDirectory() as folder:
        gsr.export(model, vocab, Path(folder), {"kg": "webqsp"})
        generator = ChainModel(Path(folder))
        size_mb = sum(f.stat().st_size for f in Path(folder).iterdir()) / 1e6
        hit1 = hit10 = 0
        latencies = []
        for question, gold in test_rows:
            t = time.perf_counter()
            chains = [c.steps for c in generator.chains(question, args.beams)]
            latencies.append((time.perf_counter() - t) * 1000)
            hit1 += bool(chains) and chains[0] == gold
            hit10 += gold in chains[: args.beams]
    train_seconds = time.monotonic() - began
    # baseline: every chain seen in training, ranked by similarity to the question
    known = sorted({c for _q, chains in train_rows for c in chains})
    chain_vectors = embed([" ".join(words(r) for r, _d in c) for c in known])
    question_vectors = embed([q for q, _g in test_rows])
    scores = question_vectors @ chain_vectors.T
    b1 = b10 = 0
    for i, (_q, gold) in enumerate(test_rows):
        order = np.argsort(-scores[i])[:10]
        ranked = [known[j] for j in order]
        b1 += ranked[0] == gold
        b10 += gold in ranked
    covered = sum(all(r in set(relations) for r, _d in gold) for _q, gold in test_rows)
    n = len(test_rows)
    print(f"`python -m bench.accuracy.gsr_webqsp --examples {args.examples} --beams {args.beams}`\n")
    print(
        f"{n} WebQSP test questions with a gold chain; trained on {len(train_rows)} train questions"
        f" ({len(examples)} examples, {len(relations)} relation tokens, {report.epochs} epochs) in"
        f" {report.seconds:.0f} s;"
        f" {covered} ({100 * covered / n:.1f}%) gold test chains use only relations seen in training.\n"
    )
    print("| ranker | chain Hit@1 | chain Hit@10 |\n|---|---:|---:|")
    print(f"| GSR generator (beam {args.beams}) | {100 * hit1 / n:.1f} | {100 * hit10 / n:.1f} |")
    print(f"| baseline: training chains by embedding similarity | {100 * b1 / n:.1f} | {100 * b10 / n:.1f} |")
    lat = sorted(latencies)
    print(
        f"\nGeneration (ONNX Runtime, Python, {args.beams} beams): p50 {lat[n // 2]:.1f} ms,"
        f" p95 {lat[int(n * 0.95)]:.1f} ms per question; model on disk {size_mb:.0f} MB"
        f" (total wall {train_seconds:.0f} s with training)."
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
