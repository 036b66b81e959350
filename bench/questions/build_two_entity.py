"""Build the two-entity MetaQA question set (metaqa_two_entity.jsonl): questions that name two entities.

    python -m bench.questions.build_two_entity [--seed 20261123] [--per-kind 20] [--out ...]

How the set is made (read only the MetaQA KB, ``kb_dedup.txt``, never a QA split):

1. For each kind below, pairs of entities are drawn from the KB with a fixed seed such that the answer set
   (the intersection of the two entities' walks, MetaQA semantics, via ``build_freeform.answers_for``) has
   1..30 entities and both names are longer than three characters.
2. The question text comes from phrasings written by hand for each kind (``KINDS``): ordinary English,
   several word orders, none taken from MetaQA's templates. Half of each kind's phrasings are *held out*:
   their questions are marked ``part: heldout`` and nothing may be tuned on them.
3. Noise, seeded: a third of the questions get one typo in one entity name (a dropped, doubled or swapped
   letter), a fifth are lowercased, some lose the question mark.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Callable
from pathlib import Path

from bench.questions.build_freeform import KB, KB_PATH, MAX_ANSWERS, answers_for

HERE = Path(__file__).resolve().parent
OUT_PATH = HERE / "metaqa_two_entity.jsonl"
SEED = 20261123

# kind -> (role of topic a, path of a, role of topic b, path of b, phrasings); {a} and {b} are the names.
# The first half of each list is for tuning, the second half is held out.
KINDS: dict[str, tuple[list[list[str]], list[list[str]], list[str]]] = {
    "actor+director": (
        [["starred_actors", "in"]],
        [["directed_by", "in"]],
        [
            "which films did {a} make with director {b}?",
            "{a} movies directed by {b}",
            "what did {b} direct that {a} acted in?",
            "Name the films {b} directed with {a} in the cast",
            "in which of {b}'s films does {a} appear",
            "movies starring {a} that were directed by {b}?",
        ],
    ),
    "two films, shared actor": (
        [["starred_actors", "out"]],
        [["starred_actors", "out"]],
        [
            "who starred in both {a} and {b}?",
            "which actors were in {a} and also in {b}",
            "who acted in {a} as well as {b}?",
            "Which actor appears in both {a} and {b}?",
            "name someone from the cast of {a} who was also in {b}",
            "who was in {a} and {b}",
        ],
    ),
    "actor+year": (
        [["starred_actors", "in"]],
        [["release_year", "in"]],
        [
            "what movies did {a} star in in {b}?",
            "{a} films released in {b}",
            "which {b} films had {a} in them?",
            "What did {a} act in during {b}?",
            "movies from {b} starring {a}",
            "in {b}, which films came out with {a}?",
        ],
    ),
    "two actors": (
        [["starred_actors", "in"]],
        [["starred_actors", "in"]],
        [
            "which movies feature both {a} and {b}?",
            "films with {a} and {b} together",
            "what films did {a} and {b} star in together?",
            "In which movies did {a} act alongside {b}?",
            "movies where {a} and {b} both appear",
            "what have {a} and {b} been in together",
        ],
    ),
    "writer+director": (
        [["written_by", "in"]],
        [["directed_by", "in"]],
        [
            "which films written by {a} were directed by {b}?",
            "what did {b} direct from a script by {a}?",
            "movies {a} wrote and {b} directed",
            "Which screenplays by {a} did {b} direct?",
            "films directed by {b} with {a} as writer",
            "what movies did {a} write for director {b}",
        ],
    ),
    "two films, shared director": (
        [["directed_by", "out"]],
        [["directed_by", "out"]],
        [
            "who directed both {a} and {b}?",
            "which director made {a} and {b}",
            "who was the director of {a} and also of {b}?",
            "Who directed {a} as well as {b}?",
            "name the filmmaker behind both {a} and {b}",
            "{a} and {b} were directed by whom",
        ],
    ),
}


def typo(name: str, rng: random.Random) -> str:
    """One slip of the keyboard in the longest word of ``name`` (dropped, doubled or swapped letter)."""
    words = name.split(" ")
    i = max(range(len(words)), key=lambda j: len(words[j]))
    w = words[i]
    if len(w) < 5:
        return name
    k = rng.randrange(1, len(w) - 2)
    kind = rng.choice(("drop", "double", "swap"))
    if kind == "drop":
        w = w[:k] + w[k + 1 :]
    elif kind == "double":
        w = w[: k + 1] + w[k] + w[k + 1 :]
    else:
        w = w[:k] + w[k + 1] + w[k] + w[k + 2 :]
    words[i] = w
    return " ".join(words)


def candidates(kb: KB, path: list[list[str]]) -> Callable[[str], set[str]]:
    """The entities a pair is drawn around: for a film-centred kind, the ones a film reaches by ``path``."""
    rel, direction = path[0]
    return lambda film: kb.step({film}, rel, "out") if direction == "in" else {film}


def draw(kb: KB, kind: str, rng: random.Random, films: list[str]) -> tuple[str, str] | None:
    path_a, path_b, _ = KINDS[kind]
    film = rng.choice(films)
    pool_a = sorted(candidates(kb, path_a)(film))
    pool_b = sorted(candidates(kb, path_b)(film))
    if path_a[0][1] == "out":  # both topics are films that share something with this film
        shared = sorted(kb.step({film}, path_a[0][0], "out"))
        if not shared:
            return None
        pivot = rng.choice(shared)
        others = sorted(kb.step({pivot}, path_a[0][0], "in") - {film})
        if not others:
            return None
        pool_a, pool_b = [film], [rng.choice(others)]
    if not pool_a or not pool_b:
        return None
    a, b = rng.choice(pool_a), rng.choice(pool_b)
    if a == b or len(a) <= 3 or len(b) <= 3:
        return None
    return a, b


def build(kb: KB, seed: int, per_kind: int) -> list[dict[str, object]]:
    rng = random.Random(seed)
    films = sorted(set(kb.out["starred_actors"]) & set(kb.out["directed_by"]))
    out: list[dict[str, object]] = []
    for kind, (path_a, path_b, phrasings) in KINDS.items():
        seen: set[tuple[str, str]] = set()
        n = 0
        while n < per_kind:
            pair = draw(kb, kind, rng, films)
            if pair is None or pair in seen:
                continue
            a, b = pair
            answers = answers_for(kb, {a: [tuple(s) for s in path_a], b: [tuple(s) for s in path_b]})
            if not answers or len(answers) > MAX_ANSWERS:
                continue
            seen.add(pair)
            index = n % len(phrasings)
            noise: list[str] = []
            shown_a, shown_b = a, b
            if rng.random() < 1 / 3:
                if rng.random() < 0.5:
                    shown_a = typo(a, rng)
                else:
                    shown_b = typo(b, rng)
                if (shown_a, shown_b) != (a, b):
                    noise.append("typo")
            text = phrasings[index].format(a=shown_a, b=shown_b)
            if rng.random() < 0.2:
                text = text.lower()
                noise.append("lowercase")
            if text.endswith("?") and rng.random() < 0.25:
                text = text[:-1]
                noise.append("no-question-mark")
            out.append(
                {
                    "id": f"te-{len(out) + 1:03d}",
                    "question": text,
                    "topics": [a, b],
                    "answers": sorted(answers),
                    "relation_paths": {a: path_a, b: path_b},
                    "kind": kind,
                    "phrasing": index,
                    "noise": noise,
                    "part": "heldout" if index >= len(phrasings) // 2 else "tune",
                }
            )
            n += 1
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--per-kind", type=int, default=20)
    parser.add_argument("--out", type=Path, default=OUT_PATH)
    args = parser.parse_args(argv)
    if not KB_PATH.exists():
        print(f"MetaQA KB not found: {KB_PATH} (set KGQA_SHARED_DATA)", file=sys.stderr)
        return 1
    rows = build(KB.load(KB_PATH), args.seed, args.per_kind)
    with args.out.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    parts = {p: sum(1 for r in rows if r["part"] == p) for p in ("tune", "heldout")}
    print(f"wrote {len(rows)} questions to {args.out} ({parts['tune']} tune, {parts['heldout']} held out)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
