"""Parsed records to hash-partitioned spool files (constant memory, whatever the input's size)."""

from __future__ import annotations

import zlib
from collections import Counter
from pathlib import Path
from typing import Any

from kgqa.loaders.bulk.files import CSV_SPECIAL, FLUSH_ROWS, csv_field, spool_path
from kgqa.loaders.records import Fact, Label, Record
from kgqa.loaders.spool import escape

SEEN_IDS = 2_000_000  # ids a worker remembers having staged (an id seen again is not staged again)


class PartitionStager:
    """Writes parsed records to spool files ``<kind>-<prefix>-<partition>`` under ``staging``.

    - facts: the relationships CSV row ``head,relation,tail``, in the partition of the head's hash (every copy
      of a triple, and every triple of a head, lands in the same one); a fact with a line break in a field
      goes, escaped (see spool.py), to the ``mfacts`` files instead;
    - ids: each escaped entity id, in the partition of its hash (an id already staged by this stager, or by
      the same worker process, is left out: ``seen``);
    - labels: ``escaped id<TAB>escaped name`` in file order, in the partition of the id's hash.
    """

    KINDS = ("facts", "mfacts", "ids", "labels")

    def __init__(self, staging: Path, prefix: str, partitions: int, seen: set[str] | None = None) -> None:
        self.staging = staging
        self.prefix = prefix
        self.partitions = partitions
        self.seen: set[str] = set() if seen is None else seen
        self.facts_seen = 0
        self.labels_seen = 0
        self.relation_counts: list[Counter[str]] = [Counter() for _ in range(partitions)]
        self.multiline = False
        self._buffers = {kind: [[] for _ in range(partitions)] for kind in self.KINDS}
        self._files: dict[tuple[str, int], Any] = {}
        staging.mkdir(parents=True, exist_ok=True)

    def add(self, record: Record) -> None:
        if type(record) is Fact:
            self.add_fact(*record)
        else:
            assert isinstance(record, Label)
            self.add_label(record.entity, record.name)

    def add_fact(self, head: str, relation: str, tail: str) -> None:
        self.facts_seen += 1
        partitions = self.partitions
        kind = "facts"
        if CSV_SPECIAL.search(head + relation + tail) is None:
            row = f"{head},{relation},{tail}\n".encode()
        elif any("\n" in f or "\r" in f for f in (head, relation, tail)):
            self.multiline = True
            row = f"{escape(head)}\t{escape(relation)}\t{escape(tail)}\n".encode()
            kind = "mfacts"
        else:
            row = f"{csv_field(head)},{csv_field(relation)},{csv_field(tail)}\n".encode()
        p = _partition(head, partitions)
        buffer = self._buffers[kind][p]
        buffer.append(row)
        if len(buffer) >= FLUSH_ROWS:
            self._flush(kind, p)
        counts = self.relation_counts[p]
        counts[relation] = counts.get(relation, 0) + 1
        seen = self.seen
        if head not in seen:
            self._add_id(head)
        if tail not in seen:
            self._add_id(tail)

    def _add_id(self, entity: str) -> None:
        seen = self.seen
        if len(seen) >= SEEN_IDS:
            seen.clear()
        seen.add(entity)
        row = (escape(entity) + "\n").encode()
        p = _partition(entity, self.partitions)
        buffer = self._buffers["ids"][p]
        buffer.append(row)
        if len(buffer) >= FLUSH_ROWS:
            self._flush("ids", p)

    def add_label(self, entity: str, name: str) -> None:
        self.labels_seen += 1
        p = _partition(entity, self.partitions)
        buffer = self._buffers["labels"][p]
        buffer.append(f"{escape(entity)}\t{escape(name)}\n".encode())
        if len(buffer) >= FLUSH_ROWS:
            self._flush("labels", p)

    def _flush(self, kind: str, partition: int) -> None:
        buffer = self._buffers[kind][partition]
        key = (kind, partition)
        fh = self._files.get(key)
        if fh is None:
            fh = self._files[key] = open(self.spool(kind, partition), "wb")  # noqa: SIM115 - see close()
        fh.write(b"".join(buffer))
        buffer.clear()

    def spool(self, kind: str, partition: int) -> Path:
        return spool_path(self.staging, kind, self.prefix, partition)

    def close(self) -> None:
        for kind, buffers in self._buffers.items():
            for partition, buffer in enumerate(buffers):
                if buffer:
                    self._flush(kind, partition)
        for fh in self._files.values():
            fh.close()
        self._files.clear()


def _partition(entity: str, partitions: int) -> int:
    """The partition of an entity: of its ids and labels, and of the facts it is the head of."""
    return zlib.crc32(entity.encode()) % partitions if partitions > 1 else 0


class BulkStager(PartitionStager):
    """One partition, written by this process: what :func:`prepare` reads."""

    def __init__(self, staging: Path) -> None:
        super().__init__(staging, "r0000", 1)
