"""Training the SubgraphRAG triple scorer and installing it for the database.

Data flow (``kgqa train subgraphrag``):

1. MetaQA dev questions are split by question (fixed seed, per hop) into train / validation / holdout. Test is
   never read. Holdout is never trained or tuned on; the benchmark reports it as "dev".
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
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import shutil
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from kgqa.core.errors import KgqaError
from kgqa.core.text import mask_topic, without_brackets
from kgqa.graph.kg import kg_embedding_model
from kgqa.models.encoder import embed
from kgqa.training.questions import LabelledQuestion, bracketed_text
from kgqa.training.scorer_onnx import (
    ONNX_OPSET,
    PARTS_FILE,
    check_parts,
    parts_onnx,
    relative_difference,
    whole_onnx,
)
from kgqa.training.subgraphrag_data import (
    DDE_ROUNDS_FORWARD,
    DDE_ROUNDS_REVERSE,
    DEFAULT_MAX_CANDIDATES,
    EMBEDDING_DIM,
    PATH_STEPS,
    DdeLayout,
    KgIndex,
    LocalGraph,
    Subgraph,
    _atomic_save_npz,
    cache_dir,
    chain_labels,
    check_reference_parity,
    dde_entity_dim,
    feature_rows,
    fetch_subgraph,
    input_dim,
    load_kg_index,
    load_local_graph,
    local_subgraph,
    path_slots,
    shortest_path_labels,
)
from neo4j import Driver
from scipy import sparse
from torch import nn
from tqdm import tqdm

ENCODER_NAME = "all-MiniLM-L6-v2"
FEATURE_CACHE_VERSION = 3  # 3: path codes stored with the examples
ONNX_TOLERANCE = 1e-5
RECALL_AT = 100
PARITY_QUESTIONS = 24
RECALL_TIE = 0.002  # validation recall@100 differences below this are ties (broken by top-1)

SubgraphSource = Callable[[Sequence[str], int], Subgraph]


@dataclass
class TrainConfig:
    kg: str = ""
    hops: int = 2  # candidate hops at inference; 3-hop questions are trained on 3-hop subgraphs
    include_seed: bool = True
    dde_forward: int = DDE_ROUNDS_FORWARD  # DDE rounds along the triples (SubgraphRAG's num_rounds)
    dde_reverse: int = DDE_ROUNDS_REVERSE  # and against them (num_reverse_rounds)
    # Steps of the path code in each entity code (by which relations the entity is reached; 0: DDE only).
    path_steps: int = PATH_STEPS
    epochs: int = 12
    # Training questions per hop (None: all of the train part). 3000 measured within 0.02 of 1000's 3-hop
    # validation recall and keeps training near 20 minutes on 2 cores; all of it takes three times as long.
    limit: int | None = 3000
    val_questions: int = 300  # validation questions per hop for early stopping
    hidden: int = 256
    # z_q ⊙ z_rel as a feature block (TripleScorer). On dev's validation part, read as relation chains:
    # Hits@1 96.0 / 99.0 / 77.5 against 93.0 / 98.5 / 76.0 without (bench/results/subgraphrag/chains-*.md)
    question_relation: bool = True
    lr: float = 1e-3
    batch_questions: int = 8
    negatives: int = 256  # sampled negatives per training question
    patience: int = 3
    seed: int = 13
    max_candidates: int = DEFAULT_MAX_CANDIDATES
    # Weak labels: "chain", the walks of the relation chains that best explain the answers (chain_labels,
    # of the question's hop count); "shortest", every shortest topic-answer path (the paper's).
    labels: str = "chain"
    # The word z_q reads in place of the topic entity (None: the whole question, brackets removed). Masked,
    # the embedding carries the question's relation words instead of a film title.
    question_mask: str | None = "it"
    # "db": every question through kgqa.subgraphrag.candidates; "local": the numpy reference of the same
    # definition; "auto": local, after checking on PARITY_QUESTIONS questions that the procedure agrees.
    source: str = "auto"
    workers: int = 2  # concurrent candidate fetches
    # torch intra-op threads. One is the default: on a small shared machine (the database on the same cores)
    # two threads were measured ~10x slower per batch than one, from threads waiting on each other.
    threads: int = 1

    @property
    def dde(self) -> DdeLayout:
        return DdeLayout(self.include_seed, self.dde_forward, self.dde_reverse, self.path_steps)


@dataclass
class TrainResult:
    directory: Path
    meta: dict[str, Any]
    history: list[dict[str, float]] = field(default_factory=list)


# --- the model --------------------------------------------------------------------------------------------


class TripleScorer(nn.Module):
    """Linear → ReLU → Linear → 1 over one feature row per candidate triple.

    With ``question_relation`` the row also carries z_q ⊙ z_rel. Over the plain concatenation the first
    layer adds W_q·z_q and W_r·z_rel, so "does this relation answer this question" has to come from the ReLU;
    the product gives it a learned, weighted dot product of the two directly (1-hop misses on MetaQA dev were
    mostly a wrong relation scored first, bench/results/subgraphrag/misses-dev.md)."""

    def __init__(
        self,
        embedding_dim: int,
        dde_dim: int,
        hidden: int,
        question_relation: bool = False,
        path_slots: int = 0,
    ) -> None:
        super().__init__()
        self.embedding_dim = embedding_dim
        self.dde_dim = dde_dim  # per entity
        self.path_slots = path_slots  # relation mixtures per entity code (2 per path step)
        self.question_relation = question_relation
        width = (5 if question_relation else 4) * embedding_dim + 2 * self.code_dim
        self.hidden = nn.Linear(width, hidden)
        self.out = nn.Linear(hidden, 1)

    @property
    def code_dim(self) -> int:
        """Width of one entity's code in a feature row: DDE, then the path code's relation mixtures."""
        return self.dde_dim + self.path_slots * self.embedding_dim

    @property
    def input_dim(self) -> int:
        return int(self.hidden.in_features)

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        return self.out(torch.relu(self.hidden(features))).squeeze(-1)

    def entity_projection(self, entity_vectors: torch.Tensor) -> torch.Tensor:
        """[n, 2·hidden]: each entity's embedding through the head block, then through the tail block."""
        d = self.embedding_dim
        weight = self.hidden.weight
        return entity_vectors @ torch.cat([weight[:, d : 2 * d], weight[:, 3 * d : 4 * d]]).T

    def forward_parts(
        self,
        questions: torch.Tensor,
        entity_projection: torch.Tensor,
        entity_dde: torch.Tensor,
        relation_vectors: torch.Tensor,
        row_question: torch.Tensor,
        row_head: torch.Tensor,
        row_relation: torch.Tensor,
        row_tail: torch.Tensor,
        entity_path: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """``forward`` of rows given by index. Row i is [questions[row_question[i]] ‖ z[row_head[i]] ‖
        relation_vectors[row_relation[i]] ‖ z[row_tail[i]] ‖ code[row_head[i]] ‖ code[row_tail[i]]] where
        ``entity_projection`` = ``self.entity_projection(z)`` and an entity's code is its ``entity_dde`` row
        followed by its path code, given as relation weights (``entity_path``, sparse [U, slots·R]) and mixed
        from ``relation_vectors`` here. Each distinct part meets the first layer once: a few times faster than
        building the rows."""
        d, e, c = self.embedding_dim, self.dde_dim, self.code_dim
        hidden = self.hidden.out_features
        weight = self.hidden.weight
        w_q, w_r = weight[:, :d], weight[:, 2 * d : 3 * d]
        head_code, tail_code = weight[:, 4 * d : 4 * d + c], weight[:, 4 * d + c : 4 * d + 2 * c]
        q = questions @ w_q.T
        r = relation_vectors @ w_r.T
        as_head = entity_projection[:, :hidden] + entity_dde @ head_code[:, :e].T
        as_tail = entity_projection[:, hidden:] + entity_dde @ tail_code[:, :e].T
        if self.path_slots:
            if entity_path is None:
                raise ValueError("this scorer reads path codes; entity_path is required")
            as_head = as_head + self._path_part(entity_path, head_code[:, e:], relation_vectors)
            as_tail = as_tail + self._path_part(entity_path, tail_code[:, e:], relation_vectors)
        pre = q[row_question] + as_head[row_head] + r[row_relation] + as_tail[row_tail] + self.hidden.bias
        if self.question_relation:
            # one product per (question, relation) pair, not per row: a batch has a handful of each
            w_qr = weight[:, 4 * d + 2 * c :]
            pairs = (questions[:, None, :] * relation_vectors[None, :, :]) @ w_qr.T  # [Q, R, hidden]
            pre = pre + pairs[row_question, row_relation]
        return self.out(torch.relu(pre)).squeeze(-1)

    def _path_part(
        self, entity_path: torch.Tensor, w_path: torch.Tensor, relation_vectors: torch.Tensor
    ) -> torch.Tensor:
        """W_path · (each slot's relation mixture) per entity: the relation vectors meet the weights once per
        (slot, relation), then the sparse weights sum them."""
        hidden, d = w_path.shape[0], self.embedding_dim
        slots = w_path.reshape(hidden, self.path_slots, d)
        per_relation = torch.einsum("hkd,rd->krh", slots, relation_vectors)
        return torch.sparse.mm(entity_path, per_relation.reshape(-1, hidden))


# --- examples ---------------------------------------------------------------------------------------------


@dataclass
class ExampleSet:
    """Many questions' (possibly subsampled) candidate triples, concatenated, with offsets."""

    question_rows: np.ndarray  # int64 [Q] row into the question-vector matrix
    hops: np.ndarray  # int64 [Q]
    entity_offsets: np.ndarray  # int64 [Q + 1]
    entities: np.ndarray  # int64 [sum U] global entity indices
    entity_dde: np.ndarray  # float32 [sum U, dde_dim]
    row_offsets: np.ndarray  # int64 [Q + 1]
    heads: np.ndarray  # int32 [sum N] local
    relations: np.ndarray  # int32 [sum N]
    tails: np.ndarray  # int32 [sum N] local
    labels: np.ndarray  # bool [sum N]
    positives: np.ndarray  # int64 [Q] positives in the full candidate set
    candidates: np.ndarray  # int64 [Q] size of the full candidate set
    # The entities' path weights as one csr matrix [sum U, path_width] (path_width 0: no path codes).
    path_indptr: np.ndarray  # int64 [sum U + 1]
    path_indices: np.ndarray  # int32 [nnz]
    path_data: np.ndarray  # float32 [nnz]
    path_width: np.ndarray  # int64 [] columns of the path weights

    def __len__(self) -> int:
        return int(self.question_rows.size)

    def path_rows(self, e0: int, e1: int) -> sparse.csr_matrix | None:
        """Path weights of the entities e0..e1 (None when these examples have no path codes)."""
        width = int(self.path_width)
        if width == 0:
            return None
        start, stop = self.path_indptr[e0], self.path_indptr[e1]
        return sparse.csr_matrix(
            (
                self.path_data[start:stop],
                self.path_indices[start:stop],
                self.path_indptr[e0 : e1 + 1] - start,
            ),
            shape=(e1 - e0, width),
        )

    def subgraph(self, i: int) -> tuple[Subgraph, np.ndarray]:
        e0, e1 = int(self.entity_offsets[i]), int(self.entity_offsets[i + 1])
        r0, r1 = self.row_offsets[i], self.row_offsets[i + 1]
        sub = Subgraph(
            self.entities[e0:e1],
            self.entity_dde[e0:e1],
            self.heads[r0:r1],
            self.relations[r0:r1],
            self.tails[r0:r1],
            np.zeros(0, np.int32),
            self.path_rows(e0, e1),
        )
        return sub, self.labels[r0:r1]

    def save(self, path: Path) -> None:
        _atomic_save_npz(path, **{k: v for k, v in asdict(self).items()})

    @classmethod
    def load(cls, path: Path) -> ExampleSet:
        with np.load(path, allow_pickle=False) as data:
            return cls(**{k: data[k] for k in cls.__dataclass_fields__})

    @classmethod
    def concat(cls, parts: list[tuple[int, int, Subgraph, np.ndarray, int, int]], dde_dim: int) -> ExampleSet:
        """From (question_row, hop, subgraph, labels, positives, candidates) tuples."""

        def offsets(sizes: list[int]) -> np.ndarray:
            out = np.zeros(len(sizes) + 1, dtype=np.int64)
            np.cumsum(sizes, out=out[1:])
            return out

        def cat(arrays: list[np.ndarray], dtype: Any, width: int | None = None) -> np.ndarray:
            if arrays:
                return np.concatenate(arrays).astype(dtype, copy=False)
            return np.zeros((0, width) if width else 0, dtype=dtype)

        paths = [p[2].path for p in parts]
        width = paths[0].shape[1] if paths and paths[0] is not None else 0
        if width and any(p is None or p.shape[1] != width for p in paths):
            raise ValueError("examples mix subgraphs with and without path codes")
        stacked = (
            sparse.vstack(paths, format="csr")
            if width
            else sparse.csr_matrix((sum(p[2].entities.size for p in parts), 0))
        )
        return cls(
            question_rows=np.asarray([p[0] for p in parts], dtype=np.int64),
            hops=np.asarray([p[1] for p in parts], dtype=np.int64),
            entity_offsets=offsets([p[2].entities.size for p in parts]),
            entities=cat([p[2].entities for p in parts], np.int64),
            entity_dde=cat([p[2].entity_dde for p in parts], np.float32, dde_dim),
            row_offsets=offsets([p[2].size for p in parts]),
            heads=cat([p[2].heads for p in parts], np.int32),
            relations=cat([p[2].relations for p in parts], np.int32),
            tails=cat([p[2].tails for p in parts], np.int32),
            labels=cat([p[3] for p in parts], bool),
            positives=np.asarray([p[4] for p in parts], dtype=np.int64),
            candidates=np.asarray([p[5] for p in parts], dtype=np.int64),
            path_indptr=stacked.indptr.astype(np.int64),
            path_indices=stacked.indices.astype(np.int32),
            path_data=stacked.data.astype(np.float32),
            path_width=np.asarray(width, dtype=np.int64),
        )


def sample_rows(
    subgraph: Subgraph, labels: np.ndarray, negatives: int, rng: np.random.Generator
) -> np.ndarray:
    """All positive rows plus up to ``negatives`` negatives: half uniform, half hard (a negative touching a
    topic entity or carrying a positive's relation)."""
    positive = np.flatnonzero(labels)
    negative = np.flatnonzero(~labels)
    if negative.size <= negatives:
        return np.sort(np.concatenate([positive, negative]))
    touches_topic = np.isin(subgraph.heads[negative], subgraph.topics) | np.isin(
        subgraph.tails[negative], subgraph.topics
    )
    same_relation = np.isin(subgraph.relations[negative], np.unique(subgraph.relations[positive]))
    hard = negative[touches_topic | same_relation]
    n_hard = min(hard.size, negatives // 2)
    picked_hard = rng.choice(hard, size=n_hard, replace=False) if n_hard else np.zeros(0, np.int64)
    rest = np.setdiff1d(negative, picked_hard, assume_unique=True)
    picked = rng.choice(rest, size=min(rest.size, negatives - n_hard), replace=False)
    return np.sort(np.concatenate([positive, picked_hard, picked]))


def candidate_hops(config_hops: int, question_hop: int) -> int:
    """Candidate radius used for a question: the configured one, widened to the question's hop count."""
    return max(config_hops, question_hop)


def build_examples(
    questions: Sequence[LabelledQuestion],
    question_rows: Sequence[int],
    index: KgIndex,
    source: SubgraphSource,
    config_hops: int,
    dde: DdeLayout,
    negatives: int | None,
    seed: int,
    workers: int = 2,
    desc: str = "features",
    labelling: str = "chain",
) -> ExampleSet:
    """Candidate subgraphs + weak labels (``labelling``: chain or shortest) for ``questions``;
    ``negatives=None`` keeps every candidate.

    Questions whose topic entity is unknown or whose answers have no path in the candidates are dropped
    from training (negatives given) but kept, with zero positives, for validation.
    """

    def one(
        item: tuple[int, LabelledQuestion, int],
    ) -> tuple[int, int, Subgraph, np.ndarray, int, int] | None:
        position, question, row = item
        topic_ids = [t for t in question.topic_ids if index.has_entity(t)]
        if not topic_ids:
            return None
        hops = question.hops or config_hops
        subgraph = source(topic_ids, candidate_hops(config_hops, hops))
        answer_rows = [index.entity(a) for a in question.answer_ids if index.has_entity(a)]
        answers = np.flatnonzero(np.isin(subgraph.entities, answer_rows))
        labels = weak_labels(subgraph, answers, question.hops, labelling)
        n_pos, n_all = int(labels.sum()), int(labels.size)
        if negatives is not None:
            if n_pos == 0:
                return None
            rows = sample_rows(subgraph, labels, negatives, np.random.default_rng([seed, position]))
            subgraph, labels = subgraph.select(rows), labels[rows]
        return row, hops, subgraph, labels, n_pos, n_all

    items = [(i, q, r) for i, (q, r) in enumerate(zip(questions, question_rows, strict=True))]
    parts: list[tuple[int, int, Subgraph, np.ndarray, int, int]] = []
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        bar = tqdm(pool.map(one, items), total=len(items), desc=desc, unit="q", leave=False, disable=None)
        for result in bar:
            if result is not None:
                parts.append(result)
    return ExampleSet.concat(parts, dde_entity_dim(dde))


LABELLINGS = ("chain", "shortest")


def weak_labels(subgraph: Subgraph, answers: np.ndarray, hops: int | None, labelling: str) -> np.ndarray:
    """The weak labels of one question's candidates (see ``TrainConfig.labels``)."""
    topics, answer_list = subgraph.topics.tolist(), answers.tolist()
    n = subgraph.entities.size
    if labelling == "shortest":
        return shortest_path_labels(n, subgraph.heads, subgraph.tails, topics, answer_list)
    if labelling == "chain":
        found = chain_labels(
            n, subgraph.heads, subgraph.relations, subgraph.tails, topics, answer_list, length=hops
        )
        return found.labels
    raise KgqaError(f"unknown labelling {labelling!r} (choose from {', '.join(LABELLINGS)})")


def _cache_key(payload: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()[:20]


def feature_cache_key(
    common: dict[str, Any], questions: Sequence[LabelledQuestion], rows: range, negatives: int | None
) -> dict[str, Any]:
    """Everything that shapes a cached feature set: the configuration (``common``), the questions, the rows
    of the question-vector matrix they point at (which depend on how many training questions precede the
    validation ones, i.e. on ``--limit``), and the negative sampling."""
    return {
        **common,
        "questions": [[q.source, q.text, q.topic_ids] for q in questions],
        "rows": [rows.start, rows.stop],
        "negatives": negatives,
    }


def cached_examples(path_key: dict[str, Any], kg: str, build: Callable[[], ExampleSet]) -> ExampleSet:
    path = cache_dir(kg) / f"features-{_cache_key(path_key)}.npz"
    if path.exists():
        return ExampleSet.load(path)
    examples = build()
    examples.save(path)
    return examples


def question_text(question: str, mask: str | None) -> str:
    """What z_q embeds: the question with its [bracketed] topic replaced by ``mask`` (the database masks the
    linked words the same way, ``QuestionText.maskTopic``), or without a mask its brackets removed."""
    return mask_topic(question, None, mask) if mask else without_brackets(question)


def question_vectors(
    texts: Sequence[str], kg: str, mask: str | None = None, encoder: str = ENCODER_NAME
) -> np.ndarray:
    """Question embeddings by ``encoder`` (the one the loader embedded the KG with), cached by content."""
    normalised = [question_text(t, mask) for t in texts]
    path = cache_dir(kg) / f"questions-{_cache_key({'texts': normalised, 'encoder': encoder})}.npy"
    if path.exists():
        return np.load(path)
    vectors = np.zeros((len(normalised), EMBEDDING_DIM), dtype=np.float32)
    step = 2048
    for start in tqdm(
        range(0, len(normalised), step), desc="question embeddings", unit="batch", leave=False, disable=None
    ):
        vectors[start : start + step] = embed(normalised[start : start + step], model=encoder)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.npy")
    np.save(tmp, vectors)
    os.replace(tmp, path)
    return vectors


# --- training ---------------------------------------------------------------------------------------------


@dataclass
class _Tensors:
    questions: torch.Tensor
    entities: torch.Tensor
    relations: torch.Tensor


def _batch(
    examples: ExampleSet,
    picks: Sequence[int],
    tensors: _Tensors,
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
    model: TripleScorer, examples: ExampleSet, tensors: _Tensors, batch_questions: int = 16
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
    tensors: _Tensors,
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


# --- ONNX -------------------------------------------------------------------------------------------------


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


# --- the whole pipeline -----------------------------------------------------------------------------------


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
    raise KgqaError(f"unknown candidate source {config.source!r} (auto, db or local)")


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
        raise KgqaError(f"--hops must be at least 1, got {config.hops}")
    if config.labels not in LABELLINGS:
        raise KgqaError(f"--labels must be one of {', '.join(LABELLINGS)}, got {config.labels!r}")
    if config.epochs < 1:
        raise KgqaError(f"--epochs must be at least 1, got {config.epochs}")
    if config.limit is not None and config.limit < 1:
        raise KgqaError(f"--limit must be at least 1, got {config.limit}")
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
    tensors = _Tensors(
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
        tensors = _Tensors(*(t.to(run_on) for t in (tensors.questions, tensors.entities, tensors.relations)))
    history = fit(model, train, val, tensors, config, log)
    model = model.cpu()
    tensors = _Tensors(*(t.cpu() for t in (tensors.questions, tensors.entities, tensors.relations)))
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
