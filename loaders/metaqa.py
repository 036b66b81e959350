"""MetaQA's ``kb.txt``: one ``subject|relation|object`` triple per line; entity ids are their names."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from kgqa.core.errors import BadInput
from kgqa.core.relation_text import name_words
from kgqa.loaders.plan import (
    InputFile,
    InputPlan,
    ParseContext,
    given_files,
    identity,
    numbered_lines,
)
from kgqa.loaders.records import Fact, Issue, Record, value_problem

DESCRIPTION = "a MetaQA kb.txt file (subject|relation|object per line)"
KB_NAMES = ("kb_dedup.txt", "kb.txt")
_RELATION = re.compile(r"^[^\s|]+$")


def plan(paths: list[Path]) -> InputPlan:
    files = given_files(paths, _kb_file)
    return InputPlan(
        source="metaqa",
        format="metaqa-kb",
        files=[InputFile(f, parse_kb, DESCRIPTION, line_based=True) for f in files],
        default_kg="metaqa",
        default_name=identity,
        relation_text=name_words,
    )


def _kb_file(folder: Path) -> list[Path]:
    found = next((folder / n for n in KB_NAMES if (folder / n).is_file()), None)
    if found is None:
        raise BadInput(f"no MetaQA KB in {folder} (looked for {' or '.join(KB_NAMES)})")
    return [found]


def parse_kb(path: Path, ctx: ParseContext) -> Iterator[Record]:
    for number, line in numbered_lines(path, ctx):
        fact = _fact(line)
        if isinstance(fact, str):
            ctx.sink.add(Issue(str(path), number, fact))
            continue
        ctx.sink.good()
        yield fact


def _fact(line: str) -> Fact | str:
    parts = line.split("|")
    if len(parts) != 3:
        return f"expected 3 fields separated by '|', found {len(parts)}"
    head, relation, tail = parts
    if not head.strip():
        return "empty subject"
    if not tail.strip():
        return "empty object"
    if not _RELATION.match(relation):
        return f"invalid relation name {relation!r}"
    fact = Fact(head, relation, tail)
    return value_problem(fact) or fact
