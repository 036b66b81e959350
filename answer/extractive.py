"""The offline answerer (``--llm none``): answer entities read off the structure of the evidence, ranked.

Whatever the KG: an answer is an entity reached *from* the topic entities, never a topic entity, and no
walk passes back through a topic entity. Three strategies, in order of trust:

1. ``evidence.answer_candidates`` (names, best first) — a retriever that already knows the answer set
   (a template's answer column, a matched pattern's UNKNOWN node) is trusted as is;
   ``evidence.answer_scores`` may carry one score per candidate.
2. ``evidence.paths`` (reasoning paths, most relevant first) — the answers are the path end-points, walked
   from the topic entity (each hop may go either way). Ranked by the best path score
   (``evidence.path_scores``, else ``1 / (1 + rank)``), then by how many paths end there. With
   ``evidence.hops``, paths of exactly that length are preferred.
3. The triplets alone — BFS layers from the topic entities. The target depth is ``evidence.hops`` or,
   without it, the deepest layer. The relation signatures (relation + direction per hop) of the shortest
   paths to that layer are then executed as non-backtracking walks of that length, so an entity that is
   also closer to the topic by another route (a film both directed by the topic director and reached
   through a shared actor) is still found, while a walk of the wrong relation kinds is not.
   Scored by the weakest triplet on the best walk when the retriever scored triplets, else by how many
   triplets lead to it.

Ties always go to first appearance in the evidence (evidence order is relevance order).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple

from kgqa.answer.base import NO_EVIDENCE, Answer, no_answer
from kgqa.core.types import Evidence, Triplet

# Beyond this many relation signatures, the far end is reached by too many relation kinds to tell apart.
MAX_SIGNATURES = 256
MAX_EXPLAINED = 20  # answers whose supporting triplets go into the explanation

Step = tuple[str, str]  # (relation, ">" forward along the triplet | "<" against it)


def answer_extractive(evidence: Evidence, max_answers: int | None = None) -> Answer:
    """Ranked answer entities for ``evidence``; no model, no database, deterministic."""
    began = time.perf_counter()
    topics = evidence.topic_names()
    if evidence.answer_candidates:
        result = _from_candidates(evidence, set(topics))
    elif evidence.is_empty:
        result = no_answer(NO_EVIDENCE)
    elif not topics:
        result = no_answer("no topic entity was linked, so no answer can be read off the evidence")
    elif any(evidence.paths):
        result = _from_paths(evidence, topics)
    else:
        result = _from_layers(evidence, topics)
    if max_answers is not None:
        result.answers = result.answers[:max_answers]
        result.scores = result.scores[:max_answers]
    result.explanation.setdefault("answerer", "extractive")
    result.explanation["latency_ms"] = (time.perf_counter() - began) * 1000
    return result


def _hops(evidence: Evidence) -> int | None:
    return evidence.hops if evidence.hops is not None and evidence.hops > 0 else None


# --- 1. the retriever's own answer set --------------------------------------------------------------------


def _from_candidates(evidence: Evidence, topics: set[str]) -> Answer:
    candidates = evidence.answer_candidates
    scores = (
        list(evidence.answer_scores)
        if len(evidence.answer_scores) == len(candidates)
        else [1.0] * len(candidates)
    )
    answers: list[str] = []
    kept: list[float] = []
    for name, score in zip(candidates, scores, strict=True):
        if name in topics or name in answers:
            continue
        answers.append(name)
        kept.append(score)
    support = _support_triplets(evidence.triplets, answers)
    return Answer(
        answers,
        kept,
        {
            "strategy": "answer_candidates",
            "hops": _hops(evidence),
            "dropped_topic_entities": sorted(topics & set(candidates)),
            "evidence": support,
        },
    )


def _support_triplets(triplets: Iterable[Triplet], answers: list[str]) -> dict[str, list[list[str]]]:
    wanted = set(answers[:MAX_EXPLAINED])
    support: dict[str, list[list[str]]] = {}
    for head, rel, tail in triplets:
        for name in (head, tail):
            if name in wanted and len(support.setdefault(name, [])) < 3:
                support[name].append([head, rel, tail])
    return support


# --- 2. reasoning paths ------------------------------------------------------------------------------------


def walk_path(path: list[Triplet], topics: set[str]) -> tuple[str, str, bool]:
    """(start, end, connected) of a path walked from its topic end; each hop may go either way."""
    head, _rel, tail = path[0]
    if head in topics and tail not in topics:
        start = head
    elif tail in topics and head not in topics:
        start = tail
    elif head in topics:  # both ends are topic entities
        start = head
    elif len(path) > 1 and head in (path[1][0], path[1][2]) and tail not in (path[1][0], path[1][2]):
        start = tail  # the first hop is stored against the walking direction
    else:
        start = head
    current, connected = start, True
    for h, _r, t in path:
        if h == current:
            current = t
        elif t == current:
            current = h
        else:
            connected, current = False, t
    return start, current, connected


@dataclass
class _PathEnd:
    best: float
    count: int
    first: int
    path: list[Triplet]


def _from_paths(evidence: Evidence, topics: list[str]) -> Answer:
    topic_set = set(topics)
    weights = (
        list(evidence.path_scores)
        if len(evidence.path_scores) == len(evidence.paths)
        else [1.0 / (1 + rank) for rank in range(len(evidence.paths))]
    )
    hops = _hops(evidence)
    walked = [(rank, path, walk_path(path, topic_set)) for rank, path in enumerate(evidence.paths) if path]
    usable = [(rank, path) for rank, path, (_s, end, ok) in walked if ok and end not in topic_set]
    exact = [(rank, path) for rank, path in usable if hops is None or len(path) == hops]
    chosen = exact or usable

    ends: dict[str, _PathEnd] = {}
    for rank, path in chosen:
        _start, end, _ok = walk_path(path, topic_set)
        found = ends.get(end)
        if found is None:
            ends[end] = _PathEnd(weights[rank], 1, rank, list(path))
        else:
            found.count += 1
            if weights[rank] > found.best:
                found.best, found.path = weights[rank], list(path)
    ranked = sorted(ends.items(), key=lambda kv: (-kv[1].best, -kv[1].count, kv[1].first))
    explanation: dict[str, Any] = {
        "strategy": "paths",
        "hops": hops,
        "paths_used": len(chosen),
        "paths_total": len(evidence.paths),
        "hops_fallback": bool(hops is not None and not exact and usable),
        "path_counts": {name: end.count for name, end in ranked[:MAX_EXPLAINED]},
        "evidence": {name: [list(t) for t in end.path] for name, end in ranked[:MAX_EXPLAINED]},
    }
    if not ranked:
        return no_answer("no reasoning path leads away from the topic entities", **explanation)
    return Answer([name for name, _ in ranked], [end.best for _, end in ranked], explanation)


# --- 3. BFS layers over the triplets ------------------------------------------------------------------------


class _Edge(NamedTuple):
    triplet: int  # position in evidence.triplets
    other: str
    step: Step


def _adjacency(triplets: list[Triplet]) -> dict[str, list[_Edge]]:
    adj: dict[str, list[_Edge]] = {}
    for i, (head, rel, tail) in enumerate(triplets):
        if head == tail:
            continue
        adj.setdefault(head, []).append(_Edge(i, tail, (rel, ">")))
        adj.setdefault(tail, []).append(_Edge(i, head, (rel, "<")))
    return adj


def _bfs(adj: dict[str, list[_Edge]], topics: list[str]) -> tuple[dict[str, int], list[list[str]]]:
    dist = {t: 0 for t in topics}
    layers: list[list[str]] = [list(topics)]
    while layers[-1]:
        nxt: list[str] = []
        for node in layers[-1]:
            for edge in adj.get(node, ()):
                if edge.other not in dist:
                    dist[edge.other] = len(layers)
                    nxt.append(edge.other)
        layers.append(nxt)
    layers.pop()
    return dist, layers


def _far_signatures(
    adj: dict[str, list[_Edge]], dist: dict[str, int], layers: list[list[str]], depth: int
) -> set[tuple[Step, ...]] | None:
    """Relation signatures of the shortest paths to the nodes at ``depth``; None when there are too many."""
    sigs: dict[str, set[tuple[Step, ...]]] = {node: {()} for node in layers[0]}
    for d in range(depth):
        for node in layers[d]:
            for edge in adj.get(node, ()):
                if dist.get(edge.other) != d + 1:
                    continue
                target = sigs.setdefault(edge.other, set())
                target.update(s + (edge.step,) for s in sigs.get(node, ()))
                if len(target) > MAX_SIGNATURES:
                    return None
    far: set[tuple[Step, ...]] = set()
    for node in layers[depth]:
        far |= sigs.get(node, set())
        if len(far) > MAX_SIGNATURES:
            return None
    return far


@dataclass
class _State:
    score: float
    back: tuple[str, int, tuple[Step, ...]] | None  # the state this one was first/best reached from
    edge: int


def _walk(
    adj: dict[str, list[_Edge]],
    topics: list[str],
    depth: int,
    signatures: set[tuple[Step, ...]] | None,
    triplet_scores: list[float] | None,
) -> list[dict[tuple[str, int, tuple[Step, ...]], _State]]:
    """Non-backtracking walks of exactly ``depth`` hops that never revisit a topic entity."""
    topic_set = set(topics)
    prefixes = None if signatures is None else {s[:k] for s in signatures for k in range(len(s) + 1)}
    frontier: dict[tuple[str, int, tuple[Step, ...]], _State] = {
        (t, -1, ()): _State(float("inf"), None, -1) for t in topics
    }
    steps = [frontier]
    for _ in range(depth):
        nxt: dict[tuple[str, int, tuple[Step, ...]], _State] = {}
        for key, state in frontier.items():
            node, last, prefix = key
            for edge in adj.get(node, ()):
                if edge.triplet == last or edge.other in topic_set:
                    continue
                sig = prefix + (edge.step,) if prefixes is not None else ()
                if prefixes is not None and sig not in prefixes:
                    continue
                score = state.score
                if triplet_scores is not None:
                    score = min(score, triplet_scores[edge.triplet])
                new_key = (edge.other, edge.triplet, sig)
                seen = nxt.get(new_key)
                if seen is None or score > seen.score:
                    nxt[new_key] = _State(score, key, edge.triplet)
        steps.append(nxt)
        frontier = nxt
    return steps


def _chain(
    steps: list[dict[tuple[str, int, tuple[Step, ...]], _State]],
    key: tuple[str, int, tuple[Step, ...]],
    triplets: list[Triplet],
) -> list[list[str]]:
    chain: list[list[str]] = []
    for level in range(len(steps) - 1, 0, -1):
        state = steps[level][key]
        chain.append(list(triplets[state.edge]))
        assert state.back is not None
        key = state.back
    return chain[::-1]


def _show(signatures: set[tuple[Step, ...]] | None) -> list[str] | None:
    if not signatures:
        return None
    return sorted(" ".join(f"{rel}{way}" for rel, way in sig) for sig in signatures)[:10]


def _from_layers(evidence: Evidence, topics: list[str]) -> Answer:
    triplets = evidence.triplets
    adj = _adjacency(triplets)
    dist, layers = _bfs(adj, topics)
    deepest = len(layers) - 1
    if deepest == 0:
        return no_answer(
            "the topic entities do not appear in the evidence triplets",
            strategy="layers",
            topic_entities=topics,
        )
    hops = _hops(evidence)
    depth = hops if hops is not None else deepest
    signatures = _far_signatures(adj, dist, layers, depth) if depth <= deepest else None
    triplet_scores = (
        [float(s) for s in evidence.scores] if len(evidence.scores) == len(triplets) and triplets else None
    )
    steps = _walk(adj, topics, depth, signatures, triplet_scores)
    strategy = "layers"
    if not steps[-1]:  # nothing at that depth: the deepest layer is the far end we have
        depth, signatures = deepest, _far_signatures(adj, dist, layers, deepest)
        steps = _walk(adj, topics, depth, signatures, triplet_scores)
        strategy = "layers (deepest layer: nothing at the requested depth)"

    best: dict[str, tuple[float, tuple[str, int, tuple[Step, ...]]]] = {}
    support: dict[str, set[int]] = {}
    for key, state in steps[-1].items():
        node = key[0]
        support.setdefault(node, set()).add(state.edge)
        if node not in best or state.score > best[node][0]:
            best[node] = (state.score, key)
    order = {name: i for i, name in enumerate(evidence.entities())}
    if triplet_scores is not None:
        value = {node: score for node, (score, _k) in best.items()}
    else:
        top = max(len(s) for s in support.values())
        value = {node: len(s) / top for node, s in support.items()}
    ranked = sorted(best, key=lambda node: (-value[node], order.get(node, len(order))))
    explanation: dict[str, Any] = {
        "strategy": strategy,
        "hops": depth,
        "hops_source": "evidence" if hops is not None and depth == hops else "deepest layer",
        "deepest_layer": deepest,
        "signatures": _show(signatures),
        "layers": {node: dist.get(node) for node in ranked[:MAX_EXPLAINED]},
        "support": {node: len(support[node]) for node in ranked[:MAX_EXPLAINED]},
        "evidence": {node: _chain(steps, best[node][1], triplets) for node in ranked[:MAX_EXPLAINED]},
    }
    return Answer(ranked, [value[node] for node in ranked], explanation)
