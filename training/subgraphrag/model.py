"""The SubgraphRAG triple scorer as a torch module: the MLP over one feature row per candidate triple, and
the same function evaluated by parts, which is how training runs it."""

from __future__ import annotations

import torch
from torch import nn


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
