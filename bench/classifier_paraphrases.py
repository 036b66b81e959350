"""Do paraphrased training patterns make the question classifiers robust to free wording? Trains them (not
installed) with 0 and N rewrites per dev pattern and reports question-type and hop accuracy on held-out dev
patterns and on our free-form sets (one-topic questions, their type derived from the relation path).

    python bench/classifier_paraphrases.py --paraphrases 0,2,4,8

Free-form questions are scored per part; choose on ``tune`` (and dev), report ``heldout``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from kgqa.core.metaqa import ROLE_RELATION
from kgqa.training.question_classifiers import train_question_classifiers

SETS = [Path("bench/questions/metaqa_freeform.jsonl"), Path("bench/questions/metaqa_freeform_b.jsonl")]
ROLE_OF = {
    "starred_actors": "actor",
    "directed_by": "director",
    "written_by": "writer",
    "has_genre": "genre",
    "in_language": "language",
    "release_year": "year",
    "has_imdb_rating": "imdbrating",
    "has_imdb_votes": "imdbvotes",
}
assert set(ROLE_OF) <= set(ROLE_RELATION.values())


def qtype_of(path: list[list[str]]) -> str | None:
    """The MetaQA question type of a one-topic relation path ([["directed_by", "out"]]: movie_to_director)."""
    roles: list[str] = []
    for relation, direction in path:
        if relation == "has_tags":
            role = "tags" if direction == "out" else "tag"
        else:
            role = ROLE_OF.get(relation, "")
        if not role:
            return None
        if direction == "out":
            roles += ["movie", role] if not roles else [role]
        else:
            roles += [role, "movie"] if not roles else ["movie"]
    return "_to_".join(roles)


def rows() -> list[dict[str, Any]]:
    out = []
    for path in SETS:
        for line in path.read_text(encoding="utf-8").splitlines():
            r = json.loads(line)
            if "relation_path" in r and (qtype := qtype_of(r["relation_path"])):
                out.append({**r, "qtype": qtype, "hops": len(r["relation_path"]), "set": path.stem})
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--paraphrases", default="0,4")
    args = parser.parse_args(argv)
    questions = rows()
    parts: dict[str, list[dict[str, Any]]] = {}
    for q in questions:
        parts.setdefault(f"{q['set']} {q['part']}", []).append(q)
    print(f"`python bench/classifier_paraphrases.py --paraphrases {args.paraphrases}`\n")
    print(
        "Question type / hop count accuracy, %. Free-form: one-topic questions whose path is a MetaQA type;"
        " n: " + ", ".join(f"{k} {len(v)}" for k, v in sorted(parts.items())) + ".\n"
    )
    print(
        "| paraphrases per pattern | dev held-out patterns | "
        + " | ".join(sorted(parts))
        + " | training s |\n|---:|---:|"
        + "---:|" * (len(parts) + 1)
    )
    for n in [int(x) for x in args.paraphrases.split(",")]:
        models = train_question_classifiers(save=False, paraphrases_per_pattern=n)
        held = models.metadata["holdout"]["vanilla"]
        cells = [f"{100 * held['qtype_accuracy_masked']:.1f} / {100 * held['hops_accuracy_masked']:.1f}"]
        for name in sorted(parts):
            group = parts[name]
            texts = [q["question"] for q in group]
            entities = [q["topics"] for q in group]
            qtypes = models.predict_qtypes(texts, entities)
            hops = models.predict_hops_many(texts, entities)
            qa = sum(p.qtype == q["qtype"] for p, q in zip(qtypes, group, strict=True)) / len(group)
            ha = sum(p.hops == q["hops"] for p, q in zip(hops, group, strict=True)) / len(group)
            cells.append(f"{100 * qa:.1f} / {100 * ha:.1f}")
        print(f"| {n} | " + " | ".join(cells) + f" | {models.metadata['train_seconds']:.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
