"""FRAG's retrieval stage: reasoning paths on the subgraph that preprocessing kept.

Simple questions take every simple path of at most 2 hops, breadth first; complex ones one shortest path per
reached node, at most 4 hops. Paths never pass back through a topic entity, nor through a hub (a node the
neighbourhood procedure marked not expandable). Ranking them is :mod:`kgqa.retrieve.frag_ranking`'s job.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from kgqa.core.types import Triplet

Step = tuple[str, bool]  # (relation name, True when walked along the stored direction)


@dataclass
class Subgraph:
    ids: list[str]
    names: list[str]
    expandable: list[bool]
    ppr: list[float]
    adjacency: list[list[tuple[int, str, bool]]]  # node -> (neighbour, relation, forward)


def simple_paths(
    sub: Subgraph, sources: Iterable[int], hops: int, allowed: set[str], limit: int
) -> list[tuple[list[int], list[Step]]]:
    """Every simple path of 1..hops hops from the sources, breadth first, through expandable nodes only."""
    topics = set(sources)
    out: list[tuple[list[int], list[Step]]] = []
    layer: list[tuple[list[int], list[Step]]] = [([s], []) for s in sources]
    for _ in range(hops):
        following: list[tuple[list[int], list[Step]]] = []
        for nodes, steps in layer:
            last = nodes[-1]
            if len(nodes) > 1 and not sub.expandable[last]:
                continue
            for neighbour, relation, forward in sub.adjacency[last]:
                if relation not in allowed or neighbour in nodes or neighbour in topics:
                    continue
                path = (nodes + [neighbour], steps + [(relation, forward)])
                out.append(path)
                following.append(path)
                if len(out) >= limit:
                    return out
        layer = following
    return out


def shortest_paths(
    sub: Subgraph, sources: Iterable[int], hops: int, allowed: set[str], limit: int, per_node: int = 8
) -> list[tuple[list[int], list[Step]]]:
    """Shortest paths (at most ``hops`` hops) from the sources to every reached node, breadth first.

    A node reached by several shortest paths keeps up to ``per_node`` of them with distinct relation chains;
    ranking then keeps the most relevant one per node, so each node still contributes one shortest path,
    not an arbitrary one (a film both written and directed by the same person is reached either way)."""
    depth: dict[int, int] = {}
    found: dict[int, dict[tuple[Step, ...], list[int]]] = {}
    for s in sources:
        depth[s] = 0
        found[s] = {(): [s]}
    frontier = list(found)
    order: list[int] = []
    for level in range(1, hops + 1):
        following: list[int] = []
        for node in frontier:
            if level > 1 and not sub.expandable[node]:
                continue
            for neighbour, relation, forward in sub.adjacency[node]:
                if relation not in allowed:
                    continue
                if neighbour not in depth:
                    depth[neighbour] = level
                    found[neighbour] = {}
                    following.append(neighbour)
                    order.append(neighbour)
                if depth[neighbour] != level:
                    continue
                chains = found[neighbour]
                for chain, nodes in found[node].items():
                    if len(chains) >= per_node:
                        break
                    extended = chain + ((relation, forward),)
                    if extended not in chains:
                        chains[extended] = nodes + [neighbour]
        frontier = following
    out: list[tuple[list[int], list[Step]]] = []
    for node in order:
        for chain, nodes in found[node].items():
            out.append((nodes, list(chain)))
        if len(out) >= limit:
            break
    return out


def path_triplets(sub: Subgraph, nodes: Sequence[int], steps: Sequence[Step]) -> list[Triplet]:
    out: list[Triplet] = []
    for (relation, forward), a, b in zip(steps, nodes, nodes[1:], strict=False):
        head, tail = (a, b) if forward else (b, a)
        out.append((sub.names[head], relation, sub.names[tail]))
    return out
