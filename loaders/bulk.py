"""The bulk write path: stream a dump into ``neo4j-admin database import`` CSVs, then import them offline.

1. Parsing appends facts and labels to escaped TSV spool files (constant memory).
2. GNU ``sort`` (external merge sort, bounded memory) removes duplicate facts and orders the entity ids and
   labels, which are then merge-joined in one streaming pass: entity names come out the same as on the online
   path (the last English label in file order wins; an entity without one gets its default name).
3. The managed server is stopped, ``neo4j-admin database import full`` writes the ``neo4j`` database from the
   CSVs, and the server is started again. Neo4j Community has one user database and import needs it offline,
   so the bulk path only runs against the managed local server and only into a database that holds nothing
   but (an earlier load of) the same KG.
4. The shared finishing steps (schema, relation nodes, embeddings, indexes, counts) then run online,
   exactly as after an online load.
"""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from kgqa.core.errors import KgqaError
from kgqa.loaders.progress import Progress
from kgqa.loaders.records import Fact, Label, Record
from kgqa.loaders.spool import unescape, write_row

DATABASE = "neo4j"


@dataclass
class BulkFiles:
    entities_csv: Path
    relationships_csv: Path
    entities: int
    relationships: int
    labels_without_facts: int
    multiline: bool


class BulkStager:
    """Collects parsed records in spool files under ``staging``."""

    def __init__(self, staging: Path) -> None:
        self.staging = staging
        staging.mkdir(parents=True, exist_ok=True)
        self._facts = open(staging / "facts.tsv", "w", encoding="utf-8", newline="\n")  # noqa: SIM115
        self._labels = open(staging / "labels.tsv", "w", encoding="utf-8", newline="\n")  # noqa: SIM115
        self.facts_seen = 0
        self.labels_seen = 0

    def add(self, record: Record) -> None:
        if type(record) is Fact:
            self.facts_seen += 1
            write_row(self._facts, record.head, record.relation, record.tail)
        else:
            assert isinstance(record, Label)
            self.labels_seen += 1
            write_row(self._labels, record.entity, record.name)

    def close(self) -> None:
        self._facts.close()
        self._labels.close()


def prepare(staging: Path, kg: str, default_name: Callable[[str], str], progress: Progress) -> BulkFiles:
    """Sorts and deduplicates the spool files and writes the two import CSVs."""
    facts = staging / "facts.tsv"
    labels = staging / "labels.tsv"
    with progress.step("sorting facts") as step:
        _sort(facts, staging / "facts.sorted", unique=True)
        _sort(labels, staging / "labels.sorted", key_only=True)
        step.update(1, force=True)
    relationships_csv = staging / "relationships.csv"
    ids = staging / "ids.tsv"
    relationships = 0
    multiline = False
    with (
        progress.step("writing relationships", unit="triples") as step,
        open(relationships_csv, "w", encoding="utf-8", newline="") as out,
        open(ids, "w", encoding="utf-8", newline="\n") as ids_out,
    ):
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow([":START_ID(Entity)", ":TYPE", ":END_ID(Entity)"])
        with open(staging / "facts.sorted", encoding="utf-8", newline="\n") as fh:
            for line in fh:
                head, relation, tail = line.rstrip("\n").split("\t")
                ids_out.write(head + "\n" + tail + "\n")
                fields = [unescape(head), unescape(relation), unescape(tail)]
                multiline = multiline or any("\n" in f or "\r" in f for f in fields)
                writer.writerow(fields)
                relationships += 1
                if relationships % 50_000 == 0:
                    step.update(relationships, items=relationships)
        step.update(relationships, items=relationships, force=True)
    _sort(ids, staging / "ids.sorted", unique=True)
    entities_csv = staging / "entities.csv"
    entities = 0
    unmatched = 0
    with (
        progress.step("writing entities", unit="entities") as step,
        open(entities_csv, "w", encoding="utf-8", newline="") as out,
    ):
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["id:ID(Entity)", "kg", "name"])
        for escaped_id, name, skipped in _join_names(staging / "ids.sorted", staging / "labels.sorted"):
            unmatched += skipped
            if escaped_id is None:
                continue
            entity = unescape(escaped_id)
            name = name if name is not None else default_name(entity)
            multiline = multiline or any("\n" in f or "\r" in f for f in (entity, name))
            writer.writerow([entity, kg, name])
            entities += 1
            if entities % 50_000 == 0:
                step.update(entities, items=entities)
        step.update(entities, items=entities, force=True)
    for name in ("facts.tsv", "labels.tsv", "ids.tsv", "facts.sorted", "ids.sorted", "labels.sorted"):
        (staging / name).unlink(missing_ok=True)
    return BulkFiles(entities_csv, relationships_csv, entities, relationships, unmatched, multiline)


def _join_names(ids_sorted: Path, labels_sorted: Path) -> Iterator[tuple[str | None, str | None, int]]:
    """Merge-joins sorted escaped ids with id-sorted labels: (escaped id, last name or None, labels skipped).

    Labels whose id has no facts yield (None, None, n). Both files are in C-locale byte order of the escaped
    id, which is the code point order Python compares strings in.
    """
    labels = _label_groups(labels_sorted)
    current = next(labels, None)
    with open(ids_sorted, encoding="utf-8", newline="\n") as fh:
        for line in fh:
            entity = line.rstrip("\n")
            while current is not None and current[0] < entity:
                yield None, None, current[2]
                current = next(labels, None)
            if current is not None and current[0] == entity:
                yield entity, current[1], 0
                current = next(labels, None)
            else:
                yield entity, None, 0
    while current is not None:
        yield None, None, current[2]
        current = next(labels, None)


def _label_groups(labels_sorted: Path) -> Iterator[tuple[str, str, int]]:
    """(escaped id, last name in file order, number of labels) per id of a stably id-sorted label file."""
    key: str | None = None
    name = ""
    count = 0
    for row in _raw_rows(labels_sorted):
        if row[0] != key:
            if key is not None:
                yield key, name, count
            key, count = row[0], 0
        name = unescape(row[1])
        count += 1
    if key is not None:
        yield key, name, count


def _raw_rows(path: Path) -> Iterator[list[str]]:
    with open(path, encoding="utf-8", newline="\n") as fh:
        for line in fh:
            yield line.rstrip("\n").split("\t")


def _sort(source: Path, target: Path, unique: bool = False, key_only: bool = False) -> None:
    """GNU sort in the C locale: external, bounded memory, byte order."""
    sort = shutil.which("sort")
    if sort is None:
        raise KgqaError("the bulk path needs the `sort` command (coreutils)")
    memory = os.environ.get("KGQA_SORT_MEMORY", "25%")
    args = [sort, "-T", str(source.parent), "-S", memory, "-o", str(target)]
    if key_only:
        args += ["-s", "-t", "\t", "-k1,1"]
    if unique:
        args.append("-u")
    env = dict(os.environ, LC_ALL="C")
    proc = subprocess.run([*args, str(source)], env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise KgqaError(f"sorting {source.name} failed: {proc.stderr.strip() or proc.returncode}")


def neo4j_import(
    run_admin: Callable[[list[str]], subprocess.CompletedProcess[str]], files: BulkFiles, report: Path
) -> str:
    """Runs ``neo4j-admin database import full`` (the server must be stopped); returns its summary line."""
    args = [
        "database",
        "import",
        "full",
        "--overwrite-destination=true",
        f"--nodes=Entity={files.entities_csv}",
        f"--relationships={files.relationships_csv}",
        f"--report-file={report}",
        "--bad-tolerance=0",
        f"--multiline-fields={'true' if files.multiline else 'false'}",
        DATABASE,
    ]
    proc = run_admin(args)
    output = (proc.stdout or "") + (proc.stderr or "")
    if proc.returncode != 0:
        lines = [line.strip() for line in output.splitlines() if line.strip()]
        errors = [line for line in lines if "rror" in line or "xception" in line]
        reason = errors[0] if errors else (lines[-1] if lines else f"exit code {proc.returncode}")
        raise KgqaError(f"neo4j-admin database import failed: {reason} (report: {report})")
    done = [line.strip() for line in output.splitlines() if line.strip().startswith("IMPORT DONE")]
    return done[-1] if done else "import done"
