"""Relation chains: the path a question walks from its topic entity, one (relation, way) step per hop.

A step is ``(relation, "out")`` when it follows the KG's stored direction (head -> tail) and
``(relation, "in")`` when it walks against it. A chain's key is its steps written ``rel>`` / ``rel<`` and
joined by ``|`` (``born_in>|born_in<``): what the question classifiers predict, what sgrag's
templates and a KG's profile store, and what ``kgqa.gsr.*`` writes as tokens.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

Step = tuple[str, str]  # (relation, "out" | "in")
Chain = tuple[Step, ...]
_MARK = {"out": ">", "in": "<"}


def step_token(step: Step) -> str:
    relation, way = step
    if way not in _MARK:
        raise ValueError(f"a step's way is 'out' or 'in', not {way!r}")
    return f"{relation}{_MARK[way]}"


def chain_key(steps: Iterable[Step]) -> str:
    """``[("born_in", "out"), ("born_in", "in")]`` -> ``"born_in>|born_in<"``."""
    return "|".join(step_token(s) for s in steps)


def parse_chain_key(key: str) -> Chain:
    """The inverse of :func:`chain_key`; a ValueError naming the part that is not ``rel>`` or ``rel<``."""
    steps: list[Step] = []
    for part in key.split("|"):
        part = part.strip()
        if len(part) < 2 or part[-1] not in "<>":
            raise ValueError(f"chain {key!r}: {part!r} is not a relation followed by > or <")
        steps.append((part[:-1], "out" if part[-1] == ">" else "in"))
    return tuple(steps)


def reverse_step(step: Step) -> Step:
    return (step[0], "in" if step[1] == "out" else "out")


def is_round_trip(chain: Sequence[Step]) -> bool:
    """A chain that goes out along a relation and straight back (``born_in>|born_in<``): the other
    entities that share the topic's neighbour."""
    return any(b == reverse_step(a) for a, b in zip(chain, chain[1:], strict=False))
