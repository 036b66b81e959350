"""The online write path: batched, idempotent writes over Bolt into a running Neo4j.

Facts are written as they are parsed, in transactions of ``batch_size`` distinct triples: the batch's entities
are MERGEd (new ones get their default name), then the batch's relationships that do not exist yet are
created. Labels wait in a spool file and are applied after the last fact, so a name may come before or after
the facts of its entity, in any file, and names of entities without facts create nothing.

Every step is safe to repeat, so a load that was interrupted is completed by running it again.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path

from kgqa.graph.cypher import render
from kgqa.loaders.progress import Progress
from kgqa.loaders.records import Fact, Label, Record
from kgqa.loaders.spool import read_rows, write_row
from neo4j import Driver, ManagedTransaction

LABEL_BATCH = 10_000


class OnlineWriter:
    def __init__(
        self,
        driver: Driver,
        kg: str,
        default_name: Callable[[str], str],
        batch_size: int = 5000,
        spool_dir: Path | None = None,
    ) -> None:
        self.driver = driver
        self.kg = kg
        self.default_name = default_name
        self.batch_size = batch_size
        self._tmp = tempfile.TemporaryDirectory(prefix="kgqa-load-", dir=spool_dir)
        self._labels_path = Path(self._tmp.name) / "labels.tsv"
        self._labels = open(self._labels_path, "w", encoding="utf-8", newline="\n")  # noqa: SIM115
        self._batch: dict[Fact, None] = {}
        self._session = driver.session()
        self.facts_seen = 0
        self.batches = 0
        self.created = 0
        self.labels_seen = 0
        self.labels_matched = 0

    def add(self, record: Record) -> None:
        if type(record) is Fact:
            self.facts_seen += 1
            self._batch[record] = None
            if len(self._batch) >= self.batch_size:
                self.flush()
        else:
            assert isinstance(record, Label)
            self.labels_seen += 1
            write_row(self._labels, record.entity, record.name)

    def flush(self) -> None:
        if not self._batch:
            return
        facts = list(self._batch)
        self._batch.clear()
        self.batches += 1
        default = self.default_name
        entities: dict[str, str] = {}
        for head, _relation, tail in facts:
            if head not in entities:
                entities[head] = default(head)
            if tail not in entities:
                entities[tail] = default(tail)
        entity_rows = [{"id": i, "name": n} for i, n in entities.items()]
        fact_rows = [{"h": h, "r": r, "t": t} for h, r, t in facts]
        self.created += self._session.execute_write(_write_batch, self.kg, entity_rows, fact_rows)

    def apply_labels(self, progress: Progress) -> int:
        """Writes the spooled names; returns how many labels matched no entity."""
        self.flush()
        self._labels.close()
        if self.labels_seen == 0:
            return 0
        with progress.step("names", total=self.labels_seen, unit="names") as step:
            batch: list[dict[str, str]] = []
            done = 0
            for entity, name in read_rows(self._labels_path):
                batch.append({"id": entity, "name": name})
                if len(batch) >= LABEL_BATCH:
                    self.labels_matched += self._session.execute_write(_write_names, self.kg, batch)
                    done += len(batch)
                    step.update(done, items=done)
                    batch = []
            if batch:
                self.labels_matched += self._session.execute_write(_write_names, self.kg, batch)
        return self.labels_seen - self.labels_matched

    def close(self) -> None:
        if not self._labels.closed:
            self._labels.close()
        self._session.close()
        self._tmp.cleanup()


def _write_batch(
    tx: ManagedTransaction, kg: str, entity_rows: list[dict[str, str]], fact_rows: list[dict[str, str]]
) -> int:
    tx.run(render("load/merge_entities"), kg=kg, rows=entity_rows).consume()
    record = tx.run(render("load/create_facts"), kg=kg, rows=fact_rows).single()
    return int(record["created"]) if record else 0


def _write_names(tx: ManagedTransaction, kg: str, rows: list[dict[str, str]]) -> int:
    record = tx.run(render("load/set_names"), kg=kg, rows=rows).single()
    return int(record["matched"]) if record else 0
