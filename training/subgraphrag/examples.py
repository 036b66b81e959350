"""Training and validation examples for the triple scorer: each question's candidate subgraph with its weak
labels (training questions keep all positives and a sample of the negatives), concatenated into one
``ExampleSet`` and cached per configuration."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from kgqa.core.errors import BadInput
from kgqa.training.questions import LabelledQuestion
from kgqa.training.subgraphrag.cache import atomic_save_npz, cache_dir, cache_key
from kgqa.training.subgraphrag.candidates import DdeLayout, Subgraph, dde_entity_dim
from kgqa.training.subgraphrag.embeddings import KgIndex
from kgqa.training.subgraphrag.labels import chain_labels, shortest_path_labels
from scipy import sparse
from tqdm import tqdm

SubgraphSource = Callable[[Sequence[str], int], Subgraph]


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
        atomic_save_npz(path, **{k: v for k, v in asdict(self).items()})

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
    raise BadInput(f"unknown labelling {labelling!r} (choose from {', '.join(LABELLINGS)})")


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
    path = cache_dir(kg) / f"features-{cache_key(path_key)}.npz"
    if path.exists():
        return ExampleSet.load(path)
    examples = build()
    examples.save(path)
    return examples
