"""Each partition deduplicated in memory (no sort: neo4j-admin reads rows in any order), in the parse's worker
pool when there is one: its distinct facts become one relationships CSV part, its distinct ids one entities
CSV part, named as on the online path."""

from __future__ import annotations

import csv
import io
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from kgqa.loaders.bulk.files import (
    ENTITY_HEADER,
    FLUSH_ROWS,
    RELATIONSHIP_HEADER,
    BulkFiles,
    batches,
    csv_field,
    spool_path,
)
from kgqa.loaders.bulk.parse import StagedInput
from kgqa.loaders.progress import Progress
from kgqa.loaders.spool import escape, unescape


def prepare(staging: Path, kg: str, default_name: Callable[[str], str], progress: Progress) -> BulkFiles:
    """The import CSVs from what one :class:`BulkStager` staged: deduplicated, sorted (small inputs: the
    files are then the same from run to run), each with its header."""
    with progress.step("deduplicating", unit="triples") as step:
        part = _prepare_partition(_PartitionJob(staging, 0, ["r0000"], kg, default_name, sort=True))
        step.update(1, items=part.relationships, force=True)
    files = _bulk_files(staging, [part], sort=True)
    files.relation_counts = dict(part.relation_counts or {})
    _remove_spools(staging)
    return files


@dataclass(frozen=True)
class _PartitionJob:
    staging: Path
    partition: int
    prefixes: list[str]
    kg: str
    default_name: Callable[[str], str]
    sort: bool = False


@dataclass
class _PartitionResult:
    partition: int
    entities_csv: Path
    relationships_csv: Path
    entities: int
    relationships: int
    unmatched_labels: int
    multiline: bool
    relation_counts: Counter[str] | None  # None: no duplicate facts, the staged counts are exact


def _read_lines(path: Path) -> list[bytes]:
    """The lines of a spool file of CSV rows (no carriage return in them: see PartitionStager), newline
    kept."""
    try:
        return path.read_bytes().splitlines(keepends=True)
    except FileNotFoundError:
        return []


def _read_rows(path: Path) -> list[bytes]:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    rows = data.split(b"\n")
    rows.pop()  # after the last newline
    return rows


def _prepare_partition(job: _PartitionJob) -> _PartitionResult:
    staging, p = job.staging, job.partition
    multiline = False
    facts: set[bytes] = set()
    staged = 0
    for prefix in job.prefixes:  # rows with their newline: written back as they are
        rows = _read_lines(spool_path(staging, "facts", prefix, p))
        staged += len(rows)
        facts.update(rows)
    for prefix in job.prefixes:  # facts with a line break in a field: CSV rows that span lines
        for row in _read_rows(spool_path(staging, "mfacts", prefix, p)):
            fields = [unescape(f) for f in row.decode("utf-8").split("\t")]
            staged += 1
            facts.add((",".join(csv_field(f) for f in fields) + "\n").encode())
            multiline = True
    counts: Counter[str] | None = None
    if staged != len(facts) or job.sort:  # duplicates (or a small input): count the distinct facts
        counts = Counter(_relation_of(row) for row in facts)
    relationships_csv = spool_path(staging, "relationships", "csv", p)
    with open(relationships_csv, "wb") as out:
        if job.sort:
            out.write(RELATIONSHIP_HEADER.encode())
        # A head's relationships together: neo4j-admin then imports and links them faster (10M triples:
        # 61 CPU-s for rows grouped by head, 77 CPU-s for the same rows in hash order). Grouping is one
        # dict pass; sorted() took ~4 s per million rows. Small inputs are sorted, for stable files.
        heads: list[bytes] = []
        if job.sort:
            out.write(b"".join(sorted(facts)))
        else:
            for group in _by_head(facts, heads):
                out.write(b"".join(group))
    relationships = len(facts)
    del facts

    ids: set[str] = set()
    for prefix in job.prefixes:
        ids.update(row.decode("utf-8") for row in _read_rows(spool_path(staging, "ids", prefix, p)))
    names: dict[str, str] = {}
    unmatched = 0
    for prefix in job.prefixes:  # in file order: the last label of an id wins
        for row in _read_rows(spool_path(staging, "labels", prefix, p)):
            key, _, name = row.decode("utf-8").partition("\t")
            if key in ids:
                names[key] = name
            else:
                unmatched += 1
    kg = csv_field(job.kg)
    entities_csv = spool_path(staging, "entities", "csv", p)
    default_name = job.default_name
    with open(entities_csv, "w", encoding="utf-8", newline="") as out:
        if job.sort:
            out.write(ENTITY_HEADER)
        lines = []
        for key in sorted(ids, key=unescape) if job.sort else _heads_first(ids, heads):
            entity = unescape(key)
            name = unescape(names[key]) if key in names else default_name(entity)
            if "\n" in entity or "\r" in entity or "\n" in name or "\r" in name:
                multiline = True
            lines.append(f"{csv_field(entity)},{kg},{csv_field(name)}\n")
            if len(lines) >= FLUSH_ROWS:
                out.write("".join(lines))
                lines.clear()
        out.write("".join(lines))
    return _PartitionResult(
        p, entities_csv, relationships_csv, len(ids), relationships, unmatched, multiline, counts
    )


def _by_head(rows: Iterable[bytes], heads: list[bytes]) -> Iterator[list[bytes]]:
    """The rows in batches of up to FLUSH_ROWS rows, each head's rows next to each other; ``heads`` receives
    the heads in the order written (a quoted head is keyed by its row up to the first comma, which may be
    inside the quotes: such heads, rare, may share a group, which is harmless)."""
    groups: dict[bytes, list[bytes]] = {}
    for row in rows:
        key = row[: row.find(b",")]
        try:
            groups[key].append(row)
        except KeyError:
            groups[key] = [row]
    heads.extend(groups)
    yield from batches(groups.values(), FLUSH_ROWS)


def _heads_first(ids: set[str], heads: list[bytes]) -> Iterator[str]:
    """The escaped ids, the partition's heads first in the order their relationships were written: node ids
    then grow along the relationships file, so neo4j-admin writes and links each node's relationships
    close to the last (the unpartitioned path, whose files were sorted, had that order by construction)."""
    first: set[str] = set()
    for head in heads:
        if head[:1] == b'"':
            continue
        key = escape(head.decode("utf-8"))
        if key in ids and key not in first:
            first.add(key)
            yield key
    for key in ids:
        if key not in first:
            yield key


def _relation_of(row: bytes) -> str:
    if b'"' not in row:
        return row.split(b",", 2)[1].decode("utf-8")
    return next(csv.reader(io.StringIO(row.decode("utf-8"), newline="")))[1]


def finish(staged: StagedInput, kg: str, default_name: Callable[[str], str], progress: Progress) -> BulkFiles:
    """Deduplicates each partition and writes the import CSVs (in the worker pool when there is one, which
    is then closed)."""
    sort = staged.sort and staged.pool is None and staged.partitions == 1
    jobs = [
        _PartitionJob(staged.staging, p, staged.prefixes, kg, default_name, sort)
        for p in range(staged.partitions)
    ]
    parts: list[_PartitionResult] = []
    with progress.step("deduplicating", total=len(jobs), unit="triples") as step:
        if staged.pool is None:
            for job in jobs:
                parts.append(_prepare_partition(job))
                step.update(len(parts), items=sum(p.relationships for p in parts))
        else:
            pool = staged.pool
            try:
                for part in pool.imap_unordered(_prepare_partition, jobs):
                    parts.append(part)
                    step.update(len(parts), items=sum(p.relationships for p in parts))
                pool.close()
            finally:
                pool.terminate()
                pool.join()
                staged.pool = None
        step.update(len(jobs), items=sum(p.relationships for p in parts), force=True)
    parts.sort(key=lambda part: part.partition)
    files = _bulk_files(staged.staging, parts, sort=sort)
    files.multiline = files.multiline or staged.multiline
    counts: Counter[str] = Counter()
    for part in parts:
        counts.update(
            part.relation_counts
            if part.relation_counts is not None
            else staged.relation_counts[part.partition]
        )
    files.relation_counts = dict(counts)
    _remove_spools(staged.staging)
    return files


def _bulk_files(staging: Path, parts: list[_PartitionResult], sort: bool) -> BulkFiles:
    if sort and len(parts) == 1:  # the one part already starts with its header
        entities_csv = staging / "entities.csv"
        relationships_csv = staging / "relationships.csv"
        parts[0].entities_csv.replace(entities_csv)
        parts[0].relationships_csv.replace(relationships_csv)
        entity_parts: list[Path] = []
        relationship_parts: list[Path] = []
    else:
        entities_csv = staging / "entities-header.csv"
        relationships_csv = staging / "relationships-header.csv"
        entities_csv.write_text(ENTITY_HEADER, encoding="utf-8")
        relationships_csv.write_text(RELATIONSHIP_HEADER, encoding="utf-8")
        entity_parts = [part.entities_csv for part in parts if part.entities]
        relationship_parts = [part.relationships_csv for part in parts if part.relationships]
    return BulkFiles(
        entities_csv=entities_csv,
        relationships_csv=relationships_csv,
        entities=sum(part.entities for part in parts),
        relationships=sum(part.relationships for part in parts),
        labels_without_facts=sum(part.unmatched_labels for part in parts),
        multiline=any(part.multiline for part in parts),
        entity_parts=entity_parts,
        relationship_parts=relationship_parts,
    )


def _remove_spools(staging: Path) -> None:
    for path in staging.iterdir():
        if path.name.split("-", 1)[0] in ("facts", "mfacts", "ids", "labels"):
            path.unlink(missing_ok=True)
