"""The training loop of the triple scorer: batches scored by parts, the per-question balanced BCE, validation
triple recall and early stopping on it."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from kgqa.training.subgraphrag.config import TrainConfig
from kgqa.training.subgraphrag.examples import ExampleSet
from kgqa.training.subgraphrag.model import TripleScorer
from scipy import sparse
from torch import nn
from tqdm import tqdm

RECALL_AT = 100
RECALL_TIE = 0.002  # validation recall@100 differences below this are ties (broken by top-1)


@dataclass
class EmbeddingTensors:
    """The question, entity and relation embedding matrices, on the device the model runs on."""

    questions: torch.Tensor
    entities: torch.Tensor
    relations: torch.Tensor


def _batch(
    examples: ExampleSet,
    picks: Sequence[int],
    tensors: EmbeddingTensors,
    model: TripleScorer,
    projection: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Logits, labels and batch position of the rows of questions ``picks``; ``projection`` is a precomputed
    ``model.entity_projection`` of every KG entity (scoring without gradients)."""
    ent_parts, dde_parts, heads, rels, tails, qs, labels = [], [], [], [], [], [], []
    path_parts: list[sparse.csr_matrix] = []
    slot = 0
    for b, i in enumerate(picks):
        e0, e1 = int(examples.entity_offsets[i]), int(examples.entity_offsets[i + 1])
        r0, r1 = examples.row_offsets[i], examples.row_offsets[i + 1]
        ent_parts.append(examples.entities[e0:e1])
        dde_parts.append(examples.entity_dde[e0:e1])
        path = examples.path_rows(e0, e1)
        if path is not None:
            path_parts.append(path)
        heads.append(examples.heads[r0:r1].astype(np.int64) + slot)
        tails.append(examples.tails[r0:r1].astype(np.int64) + slot)
        rels.append(examples.relations[r0:r1].astype(np.int64))
        qs.append(np.full(r1 - r0, b, dtype=np.int64))
        labels.append(examples.labels[r0:r1])
        slot += e1 - e0
    on = next(model.parameters()).device  # a GPU when training found one

    def put(array: np.ndarray) -> torch.Tensor:
        return torch.from_numpy(array).to(on)

    slots = np.concatenate(ent_parts)
    if projection is not None:
        entity_projection = projection[put(slots)]
    else:
        unique, inverse = np.unique(slots, return_inverse=True)
        entity_projection = model.entity_projection(tensors.entities[put(unique)])
        entity_projection = entity_projection[put(inverse)]
    question_vectors = tensors.questions[put(examples.question_rows[list(picks)])]

    def cat(parts: list[np.ndarray]) -> torch.Tensor:
        return put(np.concatenate(parts))

    entity_path = None
    if path_parts:
        coo = sparse.vstack(path_parts, format="coo")
        entity_path = torch.sparse_coo_tensor(
            put(np.vstack([coo.row, coo.col]).astype(np.int64)),
            put(coo.data.astype(np.float32)),
            size=coo.shape,
            check_invariants=False,  # built from a valid scipy matrix
        )
    logits = model.forward_parts(
        question_vectors,
        entity_projection,
        cat(dde_parts),
        tensors.relations,
        cat(qs),
        cat(heads),
        cat(rels),
        cat(tails),
        entity_path,
    )
    return logits, put(np.concatenate(labels)), cat(qs)


@torch.no_grad()
def score_examples(
    model: TripleScorer, examples: ExampleSet, tensors: EmbeddingTensors, batch_questions: int = 16
) -> list[np.ndarray]:
    """Per-question score arrays."""
    model.eval()
    projection = model.entity_projection(tensors.entities)
    out: list[np.ndarray] = []
    for start in range(0, len(examples), batch_questions):
        picks = list(range(start, min(start + batch_questions, len(examples))))
        logits, _labels, _rows = _batch(examples, picks, tensors, model, projection)
        flat = logits.cpu().numpy()
        for i in picks:
            n = int(examples.row_offsets[i + 1] - examples.row_offsets[i])
            out.append(flat[:n])
            flat = flat[n:]
    return out


def triple_recall_at(
    scores: Sequence[np.ndarray], examples: ExampleSet, k: int = RECALL_AT
) -> dict[str, float]:
    """Mean triple recall@k over questions with positives, overall and per hop, plus ``top1``: the share of
    those questions whose best-scored triple is a positive (a ranking check; not used for stopping)."""
    per_hop: dict[int, list[float]] = {}
    top1: list[float] = []
    for i, s in enumerate(scores):
        n_pos = int(examples.positives[i])
        if n_pos == 0:
            continue
        labels = examples.labels[examples.row_offsets[i] : examples.row_offsets[i + 1]]
        top = np.argsort(-s, kind="stable")[:k]
        per_hop.setdefault(int(examples.hops[i]), []).append(float(labels[top].sum()) / n_pos)
        top1.append(float(labels[top[0]]))
    result = {f"recall@{k}/{hop}hop": float(np.mean(v)) for hop, v in sorted(per_hop.items())}
    every = [x for v in per_hop.values() for x in v]
    result[f"recall@{k}"] = float(np.mean(every)) if every else 0.0
    result["top1"] = float(np.mean(top1)) if top1 else 0.0
    return result


def balanced_bce(
    logits: torch.Tensor, labels: torch.Tensor, rows: torch.Tensor, n_questions: int
) -> torch.Tensor:
    """BCE averaged per question with positives and negatives weighted equally inside each question
    (½·mean over its positives + ½·mean over its negatives), then averaged over questions.

    Per-question balancing is the positive weighting: a 1-hop question has 1–2 positive triples among
    hundreds, a 3-hop one hundreds, and neither should drown the other."""
    per_row = nn.functional.binary_cross_entropy_with_logits(logits, labels.float(), reduction="none")
    positive = labels.bool()
    sums = torch.zeros(2, n_questions, device=logits.device).index_put_(
        (positive.long(), rows), per_row, accumulate=True
    )
    counts = torch.zeros(2, n_questions, device=logits.device).index_put_(
        (positive.long(), rows), torch.ones_like(per_row), accumulate=True
    )
    present = counts > 0
    means = torch.where(present, sums / counts.clamp(min=1), torch.zeros_like(sums))
    weights = present.float() / present.float().sum(dim=0, keepdim=True).clamp(min=1)
    return (means * weights).sum(dim=0).mean()


def _time_left(history: Sequence[dict[str, float]], epochs: int) -> str:
    """ ", at most about N min left" from the epochs measured so far (early stopping may end sooner)."""
    left = epochs - len(history)
    if left <= 0:
        return ""
    per_epoch = float(np.mean([row["seconds"] for row in history]))
    return f"; at most {left} more epochs, about {max(1, round(left * per_epoch / 60))} min"


def fit(
    model: TripleScorer,
    train: ExampleSet,
    val: ExampleSet,
    tensors: EmbeddingTensors,
    config: TrainConfig,
    log: Callable[[str], None] = print,
) -> list[dict[str, float]]:
    """Adam + balanced BCE, early stopping on validation recall@100; leaves the best weights in ``model``."""
    generator = torch.Generator().manual_seed(config.seed)
    optimiser = torch.optim.Adam(model.parameters(), lr=config.lr)
    history: list[dict[str, float]] = []
    best_recall, best_top1, best_epoch, best_state, since_best = -1.0, -1.0, 0, None, 0
    for epoch in range(1, config.epochs + 1):
        model.train()
        began = time.perf_counter()
        order = torch.randperm(len(train), generator=generator).tolist()
        losses: list[float] = []
        bar = tqdm(
            range(0, len(order), config.batch_questions),
            desc=f"epoch {epoch}/{config.epochs}",
            unit="batch",
            leave=False,
            disable=None,
        )
        for start in bar:
            picks = order[start : start + config.batch_questions]
            logits, labels, rows = _batch(train, picks, tensors, model)
            loss = balanced_bce(logits, labels, rows, len(picks))
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            losses.append(float(loss.detach()))
            bar.set_postfix(loss=f"{np.mean(losses[-50:]):.4f}")
        metrics = triple_recall_at(score_examples(model, val, tensors), val)
        row = {
            "epoch": float(epoch),
            "loss": float(np.mean(losses)) if losses else 0.0,
            "seconds": time.perf_counter() - began,
            **metrics,
        }
        history.append(row)
        log(
            f"epoch {epoch}: loss {row['loss']:.4f}  val "
            + "  ".join(f"{k} {v:.3f}" for k, v in metrics.items())
            + f"  ({row['seconds']:.0f}s{_time_left(history, config.epochs)})"
        )
        recall, top1 = metrics[f"recall@{RECALL_AT}"], metrics["top1"]
        # Recall@100 decides; within RECALL_TIE of the best so far, a better top-1 ranking breaks the tie.
        tie = recall >= best_recall - RECALL_TIE
        if recall > best_recall + RECALL_TIE or (tie and top1 > best_top1 + 0.005):
            best_recall, best_top1, best_epoch, since_best = max(best_recall, recall), top1, epoch, 0
            best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
        else:
            since_best += 1
            if since_best >= config.patience:
                log(f"early stop: no validation gain for {config.patience} epochs")
                break
    if best_state is not None:
        model.load_state_dict(best_state)
    for row in history:
        row["selected"] = float(row["epoch"] == best_epoch)
    return history
