"""MetaQA files as Python objects: questions with their type labels, and typed entity pools from the KB.

Reads ``../shared/data/metaqa`` (or ``$KGQA_SHARED_DATA/metaqa``); never copies it. Only the classifier
training reads the dev split; the test split is read by the benchmark scripts, never by training code
(:func:`read_questions` refuses it unless ``allow_test=True``).
"""

from __future__ import annotations

import hashlib
import os
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from kgqa.graph.config import repo_root
from kgqa.graph.errors import KgqaError

BRACKET = re.compile(r"\[([^\[\]]+)\]")
HOPS = (1, 2, 3)

# The KB relation behind each role word of a MetaQA question type (movie_to_<role>, <role>_to_movie).
ROLE_RELATION: dict[str, str] = {
    "actor": "starred_actors",
    "director": "directed_by",
    "writer": "written_by",
    "genre": "has_genre",
    "language": "in_language",
    "year": "release_year",
    "tags": "has_tags",
    "tag": "has_tags",
    "imdbrating": "has_imdb_rating",
    "imdbvotes": "has_imdb_votes",
}


@dataclass(frozen=True)
class MetaqaQuestion:
    question: str  # as in the file, with the [topic entity] in brackets
    topic: str
    answers: tuple[str, ...]
    qtype: str
    hops: int
    split: str  # "dev" | "test"
    variant: str  # "vanilla" | "ntm"
    line: int  # 0-based line in the file (the qtype files are line-aligned with it)


def metaqa_dir(root: Path | str | None = None) -> Path:
    """The MetaQA folder: ``root``, else ``$KGQA_SHARED_DATA/metaqa``, else ``../shared/data/metaqa``."""
    if root is not None:
        path = Path(root)
    else:
        shared = os.environ.get("KGQA_SHARED_DATA")
        path = (Path(shared) if shared else repo_root().parent / "shared" / "data") / "metaqa"
    if not (path / "kb_dedup.txt").is_file():
        raise KgqaError(f"MetaQA data not found at {path} (no kb_dedup.txt there; set KGQA_SHARED_DATA)")
    return path


def qtype_hops(qtype: str) -> int:
    """Hop count of a question type: ``movie_to_actor_to_movie`` has 2."""
    return qtype.count("_to_")


def qtype_steps(qtype: str) -> list[tuple[str, str]]:
    """The (relation, "out"|"in") path of a question type, as in its template in sgrag/."""
    parts = qtype.split("_to_")
    return [
        (ROLE_RELATION[b], "out") if a == "movie" else (ROLE_RELATION[a], "in")
        for a, b in zip(parts, parts[1:], strict=False)
    ]


def topic_role(qtype: str) -> str:
    """What kind of entity the question starts from: movie, actor, director, writer or tag."""
    return qtype.split("_to_", 1)[0]


def question_file(root: Path, split: str, hops: int, variant: str = "vanilla") -> Path:
    return root / f"{hops}-hop" / variant / f"qa_{split}.txt"


def qtype_file(root: Path, split: str, hops: int) -> Path:
    return root / f"{hops}-hop" / f"qa_{split}_qtype.txt"


def read_questions(
    split: str, hops: int, variant: str = "vanilla", root: Path | str | None = None, allow_test: bool = False
) -> list[MetaqaQuestion]:
    """The questions of one file with their type labels (line-aligned qtype file)."""
    if split not in ("dev", "test"):
        raise ValueError(f"split must be 'dev' or 'test', got {split!r}")
    if split == "test" and not allow_test:
        raise ValueError("the MetaQA test split is for the final measurement only (pass allow_test=True)")
    base = metaqa_dir(root)
    lines = question_file(base, split, hops, variant).read_text(encoding="utf-8").splitlines()
    qtypes = qtype_file(base, split, hops).read_text(encoding="utf-8").splitlines()
    if len(lines) != len(qtypes):
        raise KgqaError(
            f"{question_file(base, split, hops, variant)} has {len(lines)} lines but its qtype "
            f"file has {len(qtypes)}"
        )
    out: list[MetaqaQuestion] = []
    for number, (line, qtype) in enumerate(zip(lines, qtypes, strict=True)):
        question, _, answers = line.partition("\t")
        match = BRACKET.search(question)
        out.append(
            MetaqaQuestion(
                question=question,
                topic=match.group(1) if match else "",
                answers=tuple(a for a in answers.split("|") if a),
                qtype=qtype.strip(),
                hops=hops,
                split=split,
                variant=variant,
                line=number,
            )
        )
    return out


def entity_pools(root: Path | str | None = None) -> dict[str, list[str]]:
    """Entity names by the role a question can start from, read off the KB relations (sorted, deterministic).

    movie = heads of any relation; actor/director/writer/tag = tails of starred_actors/directed_by/
    written_by/has_tags.
    """
    base = metaqa_dir(root)
    pools: dict[str, set[str]] = defaultdict(set)
    by_relation = {
        "starred_actors": "actor",
        "directed_by": "director",
        "written_by": "writer",
        "has_tags": "tag",
    }
    with open(base / "kb_dedup.txt", encoding="utf-8") as kb:
        for line in kb:
            parts = line.rstrip("\n").split("|")
            if len(parts) != 3:
                continue
            head, relation, tail = parts
            pools["movie"].add(head)
            role = by_relation.get(relation)
            if role is not None:
                pools[role].add(tail)
    return {role: sorted(names) for role, names in pools.items()}


def file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
