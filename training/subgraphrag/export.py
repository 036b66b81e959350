"""The trained scorer as the database reads it: ONNX export (whole, and with the first layer by parts), the
checks that ONNX agrees with torch, and installation of the model directory by rename."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from kgqa.core.errors import KgqaError
from kgqa.training.scorer_onnx import (
    PARTS_FILE,
    check_parts,
    parts_onnx,
    relative_difference,
    whole_onnx,
)
from kgqa.training.subgraphrag.candidates import feature_rows
from kgqa.training.subgraphrag.embeddings import KgIndex
from kgqa.training.subgraphrag.examples import ExampleSet
from kgqa.training.subgraphrag.model import TripleScorer

ONNX_TOLERANCE = 1e-5


def to_onnx(model: TripleScorer) -> bytes:
    """The MLP as an ONNX graph (opset 17); see :func:`kgqa.training.scorer_onnx.whole_onnx`."""
    return whole_onnx({k: v.detach().cpu().numpy() for k, v in model.state_dict().items()})


def check_onnx(
    model_bytes: bytes, model: TripleScorer, rows: np.ndarray, tolerance: float = ONNX_TOLERANCE
) -> float:
    """:func:`relative_difference` of ONNX and torch scores over ``rows``; KgqaError above ``tolerance``."""
    import onnxruntime as ort

    session = ort.InferenceSession(model_bytes, providers=["CPUExecutionProvider"])
    model.eval()
    worst = 0.0
    for start in range(0, max(1, rows.shape[0]), 4096):
        chunk = np.ascontiguousarray(rows[start : start + 4096], dtype=np.float32)
        if chunk.shape[0] == 0:
            continue
        (onnx_scores,) = session.run(["scores"], {"features": chunk})
        with torch.no_grad():
            torch_scores = model(torch.from_numpy(chunk)).numpy()
        if onnx_scores.shape != torch_scores.shape:
            raise KgqaError(f"ONNX scores have shape {onnx_scores.shape}, torch {torch_scores.shape}")
        worst = max(worst, relative_difference(onnx_scores, torch_scores))
    if worst > tolerance:
        raise KgqaError(
            f"ONNX and torch scores differ by {worst:.2e} of the score scale (> {tolerance:.0e});"
            " model not installed"
        )
    return worst


def check_rows(
    model: TripleScorer,
    examples: ExampleSet,
    index: KgIndex,
    question_matrix: np.ndarray,
    max_rows: int = 20000,
    seed: int = 0,
) -> np.ndarray:
    """Real feature rows (from validation questions) plus random and edge-case rows for the ONNX check."""
    rows: list[np.ndarray] = []
    total = 0
    for i in range(len(examples)):
        sub, _labels = examples.subgraph(i)
        block = feature_rows(sub, index, question_matrix[examples.question_rows[i]], model.question_relation)
        rows.append(block[: max_rows - total])
        total += rows[-1].shape[0]
        if total >= max_rows:
            break
    rng = np.random.default_rng(seed)
    random = rng.normal(0, 0.1, size=(256, model.input_dim)).astype(np.float32)
    if model.question_relation:  # a real row's last block is the product of its question and relation blocks
        d = model.embedding_dim
        random[:, 4 * d + 2 * model.code_dim :] = random[:, :d] * random[:, 2 * d : 3 * d]
    rows.append(random)
    rows.append(np.zeros((1, model.input_dim), dtype=np.float32))
    return np.concatenate(rows)


def split_first_layer(model: TripleScorer, rows: np.ndarray) -> tuple[bytes, float]:
    """``parts.onnx`` for ``model`` (see :mod:`kgqa.training.scorer_onnx`) and its max difference from
    torch over ``rows``; KgqaError above the ONNX tolerance."""
    params = {k: v.detach().cpu().numpy() for k, v in model.state_dict().items()}
    parts = parts_onnx(params, model.embedding_dim, model.code_dim, model.question_relation)
    model.eval()
    with torch.no_grad():
        full = model(torch.from_numpy(np.ascontiguousarray(rows, dtype=np.float32))).numpy()
    try:
        worst = check_parts(
            parts, full, rows, model.embedding_dim, model.code_dim, ONNX_TOLERANCE, model.question_relation
        )
    except ValueError as exc:
        raise KgqaError(f"{exc}; model not installed") from exc
    return parts, worst


def install_model(target: Path, model_bytes: bytes, meta: dict[str, Any], parts: bytes | None = None) -> Path:
    """Writes ``model.onnx`` + ``meta.json`` (+ ``parts.onnx``) into a temporary sibling directory and renames
    it into place at ``target``."""
    root = target.parent
    name = target.name
    root.mkdir(parents=True, exist_ok=True)
    stamp = f"{os.getpid()}-{time.time_ns()}"
    tmp = root / f".{name}.tmp-{stamp}"
    tmp.mkdir()
    try:
        (tmp / "model.onnx").write_bytes(model_bytes)
        (tmp / "meta.json").write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
        if parts is not None:
            (tmp / PARTS_FILE).write_bytes(parts)
        for f in tmp.iterdir():
            with open(f, "rb") as handle:
                os.fsync(handle.fileno())
        old = root / f".{name}.old-{stamp}"
        if target.exists():
            os.rename(target, old)
        os.rename(tmp, target)
        if old.exists():
            shutil.rmtree(old, ignore_errors=True)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return target
