"""The import CSVs neo4j-admin reads: their headers, how a field is written, and the spool files' names."""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

DATABASE = "neo4j"
ENTITY_HEADER = "id:ID(Entity),kg,name\n"
RELATIONSHIP_HEADER = ":START_ID(Entity),:TYPE,:END_ID(Entity)\n"
FLUSH_ROWS = 50_000  # rows buffered per spool file
CSV_SPECIAL = re.compile(r'[",\r\n]')


def csv_field(value: str) -> str:
    """One field as neo4j-admin's CSV reader reads it back: quoted (quotes doubled) only when needed."""
    if CSV_SPECIAL.search(value) is None:
        return value
    return '"' + value.replace('"', '""') + '"'


@dataclass
class BulkFiles:
    """The import CSVs. ``entities_csv`` and ``relationships_csv`` start with the header line (and hold
    rows too when written by :func:`prepare`); the ``*_parts`` files hold further rows, without header."""

    entities_csv: Path
    relationships_csv: Path
    entities: int
    relationships: int
    labels_without_facts: int
    multiline: bool
    entity_parts: list[Path] = field(default_factory=list)
    relationship_parts: list[Path] = field(default_factory=list)
    relation_counts: dict[str, int] = field(default_factory=dict)  # distinct triples per relation
    vectors: bool = False  # the entity rows carry their name's embedding (bulk/vectors.py)


def spool_path(staging: Path, kind: str, prefix: str, partition: int) -> Path:
    return staging / f"{kind}-{prefix}-{partition:03d}"


def iter_rows(paths: Iterable[Path]) -> Iterator[list[str]]:
    """The CSV rows of the import files, headers included (tests and checks)."""
    for path in paths:
        with open(path, encoding="utf-8", newline="") as fh:
            yield from csv.reader(fh)


T = TypeVar("T")


def batches(groups: Iterable[list[T]], size: int) -> Iterator[list[T]]:
    """The groups' items in batches of at least ``size`` (the last may hold fewer); a group is never split
    between two batches."""
    batch: list[T] = []
    for group in groups:
        batch.extend(group)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch
