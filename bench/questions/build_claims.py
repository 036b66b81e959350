"""Build the fact-verification claim set (metaqa_claims.jsonl) for ``kgqa verify`` from the MetaQA KB.

    python -m bench.questions.build_claims [--seed 20261124] [--per-label 50]

No FactKG data exists offline, so the claims are made from the KB (``kb_dedup.txt``, never a QA split):

- **supported**: a fact of the KB (film -relation-> value for director, writer, actor, year, language, genre),
  or a two-hop path (two films with the same director / writer), said in words;
- **refuted**: the same sentence with the value swapped for a near neighbour that the KB does not relate to
  the film: another value of the same relation (a year one to five years off, another director, ...);
- **not enough evidence**: a relation the KB never records about the film ("written by" for a film without
  a writer in the KB), or a kind of fact the KB does not hold at all (where a person was born, an award
  year).

Sentences come from phrasings written by hand per relation (``PHRASINGS``); the second half of each list is
held out (``part: heldout``) and must not be tuned on. Seeded: the same seed gives the same set.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

from bench.questions.build_freeform import KB, KB_PATH

HERE = Path(__file__).resolve().parent
OUT_PATH = HERE / "metaqa_claims.jsonl"
SEED = 20261124

PHRASINGS: dict[str, list[str]] = {
    "directed_by": [
        "{f} was directed by {o}",
        "{o} directed {f}",
        "{o} is the director of {f}",
        "{f} is a film by director {o}",
    ],
    "written_by": [
        "{o} wrote {f}",
        "{f} was written by {o}",
        "the screenplay of {f} is by {o}",
        "{o} is a writer of {f}",
    ],
    "starred_actors": [
        "{o} starred in {f}",
        "{f} stars {o}",
        "{o} acted in {f}",
        "{o} appears in the cast of {f}",
    ],
    "release_year": [
        "{f} was released in {o}",
        "{f} came out in {o}",
        "{f} is a film from {o}",
        "the release year of {f} is {o}",
    ],
    "in_language": [
        "{f} is in {o}",
        "the language of {f} is {o}",
        "{f} was made in the {o} language",
        "{f} is a {o} language film",
    ],
    "has_genre": [
        "{f} is a {o} film",
        "the genre of {f} is {o}",
        "{f} belongs to the {o} genre",
        "{f} is classed as {o}",
    ],
    "same_director": [
        "{f} and {o} have the same director",
        "{f} was directed by the director of {o}",
        "the director of {f} also directed {o}",
        "{o} shares a director with {f}",
    ],
    "same_writer": [
        "{f} and {o} have the same writer",
        "{f} was written by the writer of {o}",
        "the writer of {f} also wrote {o}",
        "{o} shares a screenwriter with {f}",
    ],
}
UNRECORDED = [
    "{p} was born in {y}",
    "{p} got married in {y}",
    "{p} won an award in {y}",
    "{p} retired in {y}",
]


def film_values(kb: KB, film: str, rel: str) -> set[str]:
    return kb.out[rel].get(film, set())


def build(kb: KB, seed: int, per_label: int) -> list[dict[str, object]]:
    rng = random.Random(seed)
    films = sorted(f for f in kb.out["directed_by"] if len(f) > 3)
    rels = list(PHRASINGS)
    out: list[dict[str, object]] = []

    def add(text: str, label: str, kind: str, index: int, phrasings: int) -> None:
        part = "heldout" if index >= phrasings // 2 else "tune"
        out.append(
            {"id": f"cl-{len(out) + 1:03d}", "claim": text, "label": label, "kind": kind, "part": part}
        )

    def one(label: str) -> bool:
        rel = rng.choice(rels)
        film = rng.choice(films)
        index = rng.randrange(len(PHRASINGS[rel]))
        if rel.startswith("same_"):
            base = "directed_by" if rel == "same_director" else "written_by"
            people = film_values(kb, film, base)
            if not people:
                return False
            others = sorted(set().union(*(kb.inn[base][p] for p in people)) - {film})
            if label == "supported":
                if not others:
                    return False
                value = rng.choice(others)
            else:
                value = rng.choice(films)
                if value == film or value in others:
                    return False
        else:
            values = sorted(film_values(kb, film, rel))
            if not values:
                return False
            if label == "supported":
                value = rng.choice(values)
            elif rel == "release_year":
                value = str(int(values[0]) + rng.choice((-5, -4, -3, -2, -1, 1, 2, 3, 4, 5)))
                if value in values or value not in kb.inn[rel]:
                    return False
            else:
                value = rng.choice(sorted(kb.inn[rel]))
                if value in values:
                    return False
        if len(value) <= 3 and rel not in ("release_year",):
            return False
        add(PHRASINGS[rel][index].format(f=film, o=value), label, rel, index, len(PHRASINGS[rel]))
        return True

    def unrecorded() -> bool:
        if rng.random() < 0.5:  # a relation the KB has, but not for this film
            rel = "written_by"
            film = rng.choice([f for f in films if not film_values(kb, f, rel)])
            index = rng.randrange(len(PHRASINGS[rel]))
            writer = rng.choice(sorted(kb.inn[rel]))
            add(
                PHRASINGS[rel][index].format(f=film, o=writer),
                "not enough evidence",
                "unrecorded writer",
                index,
                4,
            )
            return True
        person = rng.choice(sorted(kb.inn["starred_actors"]))
        year = rng.choice(sorted(kb.inn["release_year"]))
        if len(person) <= 3:
            return False
        index = rng.randrange(len(UNRECORDED))
        add(
            UNRECORDED[index].format(p=person, y=year),
            "not enough evidence",
            "unrecorded kind",
            index,
            len(UNRECORDED),
        )
        return True

    for label in ("supported", "refuted"):
        n = 0
        while n < per_label:
            n += one(label)
    n = 0
    while n < per_label:
        n += unrecorded()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--per-label", type=int, default=50)
    parser.add_argument("--out", type=Path, default=OUT_PATH)
    args = parser.parse_args(argv)
    if not KB_PATH.exists():
        print(f"MetaQA KB not found: {KB_PATH} (set KGQA_SHARED_DATA)", file=sys.stderr)
        return 1
    rows = build(KB.load(KB_PATH), args.seed, args.per_label)
    with args.out.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    held = sum(1 for r in rows if r["part"] == "heldout")
    print(f"wrote {len(rows)} claims to {args.out} ({len(rows) - held} tune, {held} held out)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
