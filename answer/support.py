"""Where each answer came from: the walk of the evidence that reaches it from a topic entity, as a chain.

Every method leaves triplets, and some leave reasoning paths too (sgrag, FRAG). The walk that supports an
answer is the first of the method's own paths that ends at it (paths are most relevant first), else the
shortest walk to it over the evidence triplets from a topic entity, never through another topic entity. Its
chain is written as :func:`kgqa.core.chains.chain_key` writes one (``rel>`` along the stored direction,
``rel<`` against it), so that people can tell which relations an answer was read off, whatever the method.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from kgqa.answer.base import Answer
from kgqa.answer.extractive import MAX_EXPLAINED, walk_path
from kgqa.core.chains import Step, chain_key
from kgqa.core.types import Evidence, Triplet


@dataclass(frozen=True)
class AnswerSupport:
    """One answer, its score as the method gave it, and the walk that reaches it from a topic entity."""

    answer: str
    score: float
    chain: str = ""  # "" when no walk of the evidence reaches the answer from a topic entity
    path: list[Triplet] = field(default_factory=list)  # the walk's triplets, from the topic entity out

    def to_json(self) -> dict[str, Any]:
        return {
            "answer": self.answer,
            "score": round(self.score, 4),
            "chain": self.chain,
            "path": [list(t) for t in self.path],
        }


def walked_steps(path: Sequence[Triplet], start: str) -> list[Step]:
    """The steps of ``path`` walked from ``start``: "out" along a triplet's stored direction, "in"
    against it."""
    steps: list[Step] = []
    current = start
    for head, relation, tail in path:
        if head == current:
            steps.append((relation, "out"))
            current = tail
        else:
            steps.append((relation, "in"))
            current = head
    return steps


def answer_support(evidence: Evidence, answer: Answer, limit: int = MAX_EXPLAINED) -> list[AnswerSupport]:
    """The first ``limit`` answers of ``answer``, each with the walk of ``evidence`` that supports it."""
    topics = set(evidence.topic_names())
    wanted = answer.answers[:limit]
    walks: dict[str, tuple[str, list[Triplet]]] = {}
    for path in evidence.paths:
        if not path:
            continue
        start, end, connected = walk_path(path, topics)
        if connected and end in wanted and end not in walks and start in topics:
            walks[end] = (start, list(path))
    missing = [a for a in wanted if a not in walks]
    if missing:
        walks.update(_shortest_walks(evidence.triplets, topics, set(missing)))
    out = []
    for name, score in zip(wanted, answer.scores, strict=False):
        start, path = walks.get(name, ("", []))
        chain = chain_key(walked_steps(path, start)) if path else ""
        out.append(AnswerSupport(name, float(score), chain, path))
    return out


def _shortest_walks(
    triplets: Sequence[Triplet], topics: set[str], targets: set[str]
) -> dict[str, tuple[str, list[Triplet]]]:
    """For each target, a shortest walk over ``triplets`` from a topic entity (breadth first from all of them
    at once), passing through no other topic entity."""
    neighbours: dict[str, list[tuple[str, int]]] = {}
    for i, (head, _relation, tail) in enumerate(triplets):
        neighbours.setdefault(head, []).append((tail, i))
        neighbours.setdefault(tail, []).append((head, i))
    came_from: dict[str, tuple[str, int] | None] = {t: None for t in topics if t in neighbours}
    origin = {t: t for t in came_from}
    queue = deque(came_from)
    found: dict[str, tuple[str, list[Triplet]]] = {}
    while queue and len(found) < len(targets):
        node = queue.popleft()
        for other, i in neighbours.get(node, ()):
            if other in came_from or other in topics:
                continue
            came_from[other] = (node, i)
            origin[other] = origin[node]
            if other in targets:
                found[other] = (origin[other], _walk_back(other, came_from, triplets))
            queue.append(other)
    return found


def _walk_back(
    node: str, came_from: dict[str, tuple[str, int] | None], triplets: Sequence[Triplet]
) -> list[Triplet]:
    path: list[Triplet] = []
    step = came_from[node]
    while step is not None:
        previous, i = step
        path.append(triplets[i])
        step = came_from[previous]
    return path[::-1]
