"""Training the SubgraphRAG triple scorer and installing it for the database.

Data flow (``kgqa train subgraphrag``):

1. The KG's training questions (given or synthesised) are split by question (fixed seed, per hop) into train /
   validation / holdout. A test split is never read. Holdout is never trained or tuned on.
2. For each question the candidate subgraph and its DDE come from ``kgqa.subgraphrag.candidates`` (the same
   code the in-database scorer uses), with path codes (``path_weights``: by which relations each entity is
   reached), the weak labels from ``chain_labels`` (the walks of the relation chains that best explain the
   answers; ``--labels shortest``: the paper's shortest paths). Training questions keep all positives and a
   sample of negatives (half uniform, half "hard": touching a topic entity or sharing a positive's
   relation); validation questions keep every candidate. Features are cached per configuration
   under ``KGQA_HOME/cache/subgraphrag/<kg>/``; the 384-d embeddings come from one cached fetch per KG.
3. The MLP Linear → ReLU → Linear → 1 over [z_q ‖ z_head ‖ z_rel ‖ z_tail ‖ code_head ‖ code_tail] (z_q of
   the question with its topic entity masked; an entity's code is its DDE and path code) is trained
   with BCE (positives up-weighted by the negative:positive ratio, capped), Adam, early stopping on validation
   triple recall@100. Training evaluates the first layer by parts (each entity, relation and question
   projected once per batch, then summed per row); that is the same function as the plain MLP, and the test
   suite checks it.
4. The model is written as ONNX by hand (opset 17: Gemm → Relu → Gemm → Squeeze; input ``features`` float32
   [N, input_dim], output ``scores`` float32 [N], N dynamic), checked against torch to 1e-5, and installed
   with its ``meta.json`` at ``<KGQA_HOME>/models/subgraphrag/<name>/`` by rename.

Step 2 is ``examples`` (over ``candidates``, ``reference``, ``paths``, ``labels`` and ``embeddings``), step 3
``model`` and ``fit``, step 4 ``export``; this module runs them in order.
"""

from __future__ import annotations

import datetime as _dt
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from kgqa.core.errors import BadInput, KgqaError
from kgqa.graph.kg import kg_embedding_model
from kgqa.training.questions import LabelledQuestion, bracketed_text
from kgqa.training.scorer_onnx import ONNX_OPSET
from kgqa.training.subgraphrag.candidates import Subgraph, dde_entity_dim, fetch_subgraph, input_dim
from kgqa.training.subgraphrag.config import TrainConfig
from kgqa.training.subgraphrag.embeddings import (
    EMBEDDING_DIM,
    ENCODER_NAME,
    KgIndex,
    load_kg_index,
    question_vectors,
)
from kgqa.training.subgraphrag.examples import (
    LABELLINGS,
    SubgraphSource,
    build_examples,
    cached_examples,
    candidate_hops,
    feature_cache_key,
)
from kgqa.training.subgraphrag.export import check_onnx, check_rows, install_model, split_first_layer, to_onnx
from kgqa.training.subgraphrag.fit import RECALL_AT, EmbeddingTensors, fit
from kgqa.training.subgraphrag.model import TripleScorer
from kgqa.training.subgraphrag.paths import path_slots
from kgqa.training.subgraphrag.reference import (
    LocalGraph,
    check_reference_parity,
    load_local_graph,
    local_subgraph,
)
from neo4j import Driver

FEATURE_CACHE_VERSION = 3  # 3: path codes stored with the examples
PARITY_QUESTIONS = 24


@dataclass
class TrainResult:
    directory: Path
    meta: dict[str, Any]
    history: list[dict[str, float]] = field(default_factory=list)


def make_source(driver: Driver, index: KgIndex, config: TrainConfig) -> SubgraphSource:
    if config.source == "db":

        def from_db(topic_ids: Sequence[str], hops: int) -> Subgraph:
            return fetch_subgraph(driver, index, topic_ids, hops, config.dde, config.max_candidates)

        return from_db
    if config.source in ("local", "auto"):
        graph: LocalGraph = load_local_graph(driver, index)

        def from_local(topic_ids: Sequence[str], hops: int) -> Subgraph:
            return local_subgraph(
                graph, [index.entity(t) for t in topic_ids], hops, config.dde, config.max_candidates
            )

        return from_local
    raise BadInput(f"unknown candidate source {config.source!r} (auto, db or local)")


def _cap_per_hop(questions: Sequence[LabelledQuestion], cap: int | None) -> list[LabelledQuestion]:
    if cap is None:
        return list(questions)
    counts: dict[int | None, int] = {}
    kept: list[LabelledQuestion] = []
    for q in questions:
        if counts.get(q.hops, 0) < cap:
            kept.append(q)
            counts[q.hops] = counts.get(q.hops, 0) + 1
    return kept


def train_subgraphrag(
    driver: Driver,
    config: TrainConfig,
    training: Sequence[LabelledQuestion],
    validation: Sequence[LabelledQuestion],
    out: Path,
    log: Callable[[str], None] = print,
) -> TrainResult:
    """Builds features from the KG's ``training`` questions (``validation`` stops early), trains, exports,
    checks and installs one model at ``out``; returns its directory and meta."""
    if config.hops < 1:
        raise BadInput(f"--hops must be at least 1, got {config.hops}")
    if config.labels not in LABELLINGS:
        raise BadInput(f"--labels must be one of {', '.join(LABELLINGS)}, got {config.labels!r}")
    if config.epochs < 1:
        raise BadInput(f"--epochs must be at least 1, got {config.epochs}")
    if config.limit is not None and config.limit < 1:
        raise BadInput(f"--limit must be at least 1, got {config.limit}")
    began = time.perf_counter()
    torch.manual_seed(config.seed)
    np.random.seed(config.seed)
    torch.set_num_threads(max(1, config.threads))
    index = load_kg_index(driver, config.kg)
    if index.embedding_dim != EMBEDDING_DIM:
        raise KgqaError(
            f"KG {config.kg!r} stores {index.embedding_dim}-d embeddings; the scorer expects "
            f"{EMBEDDING_DIM} ({ENCODER_NAME})"
        )
    train_q = _cap_per_hop(list(training), config.limit)
    val_q = _cap_per_hop(
        list(validation),
        config.val_questions
        if config.limit is None
        else min(config.val_questions, max(20, config.limit // 4)),
    )
    log(f"{len(train_q)} training, {len(val_q)} validation questions")
    texts = [bracketed_text(q) for q in train_q + val_q]
    # The features are the KG's stored vectors, so questions are embedded by the KG's encoder and the model
    # records it: the database refuses to score a KG embedded by another one.
    encoder = kg_embedding_model(driver, config.kg) or ENCODER_NAME
    vectors = question_vectors(texts, config.kg, config.question_mask, encoder)
    source = make_source(driver, index, config)
    if config.source == "auto":
        step = max(1, len(val_q) // PARITY_QUESTIONS)
        cases = [
            (
                [t for t in q.topic_ids if index.has_entity(t)],
                candidate_hops(config.hops, q.hops or config.hops),
            )
            for q in val_q[::step]
        ]
        compared = check_reference_parity(
            driver, index, load_local_graph(driver, index), [c for c in cases if c[0]], config.dde
        )
        if compared == 0:
            raise KgqaError("could not compare the candidates procedure with the reference; use --source db")
        log(
            f"kgqa.subgraphrag.candidates and the numpy reference agree on {compared} questions "
            "(triples and DDE); building features with the reference"
        )
    common = {
        "version": FEATURE_CACHE_VERSION,
        "kg": index.fingerprint,
        "hops": config.hops,
        "seed_dde": config.include_seed,
        "dde_rounds": [config.dde_forward, config.dde_reverse],
        "path_steps": config.path_steps,
        "max": config.max_candidates,
        "seed": config.seed,
        "source": "db" if config.source == "db" else "reference",
        "labels": config.labels,
    }
    train_rows, val_rows = range(len(train_q)), range(len(train_q), len(texts))
    train = cached_examples(
        feature_cache_key(common, train_q, train_rows, config.negatives),
        config.kg,
        lambda: build_examples(
            train_q,
            train_rows,
            index,
            source,
            config.hops,
            config.dde,
            config.negatives,
            config.seed,
            config.workers,
            desc="training features",
            labelling=config.labels,
        ),
    )
    val = cached_examples(
        feature_cache_key(common, val_q, val_rows, None),
        config.kg,
        lambda: build_examples(
            val_q,
            val_rows,
            index,
            source,
            config.hops,
            config.dde,
            None,
            config.seed,
            config.workers,
            desc="validation features",
            labelling=config.labels,
        ),
    )
    if len(train) == 0:
        raise KgqaError(
            "no training question has a path from its topic entity to an answer in its candidates"
        )
    log(
        f"features: {len(train)} training questions, {train.labels.size} rows "
        f"({int(train.labels.sum())} positive); {len(val)} validation questions, {val.labels.size} rows "
        f"({time.perf_counter() - began:.0f}s so far)"
    )
    tensors = EmbeddingTensors(
        torch.from_numpy(vectors),
        torch.from_numpy(index.entity_vectors),
        torch.from_numpy(index.relation_vectors),
    )
    model = TripleScorer(
        EMBEDDING_DIM,
        dde_entity_dim(config.dde),
        config.hidden,
        config.question_relation,
        path_slots(config.path_steps),
    )
    run_on = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if run_on.type != "cpu":
        log(f"training on {torch.cuda.get_device_name(run_on)}")
        model = model.to(run_on)
        tensors = EmbeddingTensors(
            *(t.to(run_on) for t in (tensors.questions, tensors.entities, tensors.relations))
        )
    history = fit(model, train, val, tensors, config, log)
    model = model.cpu()
    tensors = EmbeddingTensors(*(t.cpu() for t in (tensors.questions, tensors.entities, tensors.relations)))
    best = next(row for row in history if row["selected"])
    model_bytes = to_onnx(model)
    rows = check_rows(model, val, index, vectors)
    max_diff = check_onnx(model_bytes, model, rows)
    log(f"ONNX check: max |onnx - torch| = {max_diff:.2e}")
    parts_bytes, parts_diff = split_first_layer(model, rows)
    log(f"parts check: max |parts - torch| = {parts_diff:.2e}")
    meta: dict[str, Any] = {
        "input_dim": input_dim(config.dde, question_relation=config.question_relation),
        "question_relation": config.question_relation,
        "embedding_dim": EMBEDDING_DIM,
        "dde_rounds_forward": config.dde_forward,
        "dde_rounds_reverse": config.dde_reverse,
        "path_steps": config.path_steps,
        "include_seed": config.include_seed,
        "encoder": encoder,
        "hops": config.hops,
        "kg": config.kg,
        "max_candidates": config.max_candidates,
        "labels": config.labels,
        "hidden": config.hidden,
        "seed": config.seed,
        "questions": sorted({q.source.rsplit(":", 1)[0] for q in train_q}),
        "split": {"train": len(train_q), "validation": len(val_q)},
        "question_mask": config.question_mask,
        "question_text": (
            f"topic entity replaced by {config.question_mask!r} (kgqa.core.text.mask_topic)"
            if config.question_mask
            else "brackets removed (kgqa.core.text.without_brackets)"
        ),
        "epochs": len(history),
        "epochs_max": config.epochs,
        "best_epoch": int(best["epoch"]),
        "best_dev_recall@100": round(best[f"recall@{RECALL_AT}"], 4),
        "validation": {k: round(v, 4) for k, v in best.items() if k.startswith("recall") or k == "top1"},
        "negatives_per_question": config.negatives,
        "candidate_source": config.source,
        "onnx_max_abs_diff": max_diff,
        "parts_max_abs_diff": parts_diff,
        "onnx_opset": ONNX_OPSET,
        "training_seconds": round(time.perf_counter() - began, 1),
        "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
    }
    directory = install_model(out, model_bytes, meta, parts=parts_bytes)
    log(f"installed {directory}")
    return TrainResult(directory, meta, history)
