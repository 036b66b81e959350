"""Training on a GPU when torch sees one: GSR's chain generator and SubgraphRAG's scorer train on the GPU and
export the same ONNX a CPU run would. Prints what ran where; exits non-zero on a mismatch.

    python -m bench.training.gpu_check [--vocab PATH]

``--vocab``: the encoder's WordPiece vocabulary (default: the installed weights package's); the word
embeddings are random here, since the check is about where training runs, not what it learns.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import torch


def check_gsr(vocab: Path | None) -> str:
    from kgqa.models.gsr import ChainModel
    from kgqa.training import gsr
    from kgqa.training.gsr_data import Example

    if vocab is not None:
        gsr.source_dir = lambda: vocab.parent  # type: ignore[assignment]
    rng = np.random.default_rng(0)
    gsr.word_embeddings = lambda: rng.normal(size=(30522, 384)).astype(np.float32)  # type: ignore[assignment]
    rows = [
        Example("who directed [MASK]", (("directed_by", "out"),), "retrieval"),
        Example("what did [MASK] write", (("written_by", "in"),), "retrieval"),
        Example(
            "who acted in films by [MASK]", (("directed_by", "in"), ("starred_actors", "out")), "retrieval"
        ),
    ]
    began = time.perf_counter()
    config = gsr.GsrConfig(examples=2400, d_model=64, heads=2, lr=3e-3, dropout=0.0)
    model, vocab_map, report = gsr.train(
        rows * 20, rows, ["directed_by", "written_by", "starred_actors"], config
    )
    seconds = time.perf_counter() - began
    with tempfile.TemporaryDirectory() as out:
        gsr.export(model, vocab_map, Path(out), {"kg": "gpu-check"})  # raises if ONNX and torch disagree
        best = [ChainModel(Path(out)).chains(r.text, beams=3)[0].steps for r in rows]
    assert best == [r.chain for r in rows], best
    return (
        f"GSR: trained on {gsr.device()} in {seconds:.1f}s, chain accuracy {report.valid_chain_accuracy:.2f}"
    )


def check_subgraphrag() -> str:
    from kgqa.training.subgraphrag.config import TrainConfig
    from kgqa.training.subgraphrag.export import check_onnx, check_rows, to_onnx
    from kgqa.training.subgraphrag.fit import EmbeddingTensors, fit, score_examples
    from kgqa.training.subgraphrag.model import TripleScorer

    from tests.test_subgraphrag_training import _toy_examples, _toy_index

    torch.manual_seed(0)
    index = _toy_index()
    train = _toy_examples(index, True, 40, seed=1)
    val = _toy_examples(index, True, 12, seed=2)
    questions = np.random.default_rng(3).normal(size=(40, 384)).astype(np.float32)
    on = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    tensors = EmbeddingTensors(
        torch.from_numpy(questions).to(on),
        torch.from_numpy(index.entity_vectors).to(on),
        torch.from_numpy(index.relation_vectors).to(on),
    )
    model = TripleScorer(384, 10, 16).to(on)
    began = time.perf_counter()
    history = fit(model, train, val, tensors, TrainConfig(epochs=3, batch_questions=8), log=lambda _m: None)
    seconds = time.perf_counter() - began
    on_device = score_examples(model, val, tensors)
    cpu = model.cpu()
    cpu_tensors = EmbeddingTensors(
        *(t.cpu() for t in (tensors.questions, tensors.entities, tensors.relations))
    )
    on_cpu = score_examples(cpu, val, cpu_tensors)
    diff = max(float(np.abs(a - b).max()) for a, b in zip(on_device, on_cpu, strict=True))
    assert diff < 1e-3, diff
    rows = check_rows(cpu, val, index, questions)
    assert check_onnx(to_onnx(cpu), cpu, rows) <= 1e-5
    return (
        f"SubgraphRAG: trained on {on} in {seconds:.1f}s ({len(history)} epochs, recall@100 "
        f"{history[-1]['recall@100']:.2f}); scores on {on} and on the CPU differ by {diff:.1e}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vocab", type=Path, default=None)
    args = parser.parse_args(argv)
    print(f"torch {torch.__version__}, cuda available: {torch.cuda.is_available()}", flush=True)
    if torch.cuda.is_available():
        print(f"device: {torch.cuda.get_device_name(0)}", flush=True)
    print(check_gsr(args.vocab), flush=True)
    print(check_subgraphrag(), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
