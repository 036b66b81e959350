"""The settings of one SubgraphRAG training run (``kgqa train subgraphrag``'s options)."""

from __future__ import annotations

from dataclasses import dataclass

from kgqa.training.subgraphrag.candidates import (
    DDE_ROUNDS_FORWARD,
    DDE_ROUNDS_REVERSE,
    DEFAULT_MAX_CANDIDATES,
    DdeLayout,
)
from kgqa.training.subgraphrag.paths import PATH_STEPS


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
