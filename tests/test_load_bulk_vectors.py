"""The bulk path's vector column: every entity row gets its name's vector as neo4j-admin reads a ``float[]``,
whatever the name holds (quotes, commas, line breaks), in the worker pool or not.

No database: the import itself, and the vectors it stores, are checked against the online path in
test_load_bulk.py.
"""

from __future__ import annotations

import csv
import zlib
from pathlib import Path

import numpy as np
import pytest
from kgqa.loaders import bulk
from kgqa.loaders.bulk import vectors
from kgqa.loaders.progress import Progress

QUIET = Progress(enabled=False)
DIMENSIONS = 8


def _embed(names: list[str]) -> np.ndarray:
    """A deterministic stand-in encoder: a unit vector seeded by the name's checksum."""
    rows = [np.random.default_rng(zlib.crc32(name.encode())).standard_normal(DIMENSIONS) for name in names]
    out = np.asarray(rows, dtype=np.float32)
    return out / np.linalg.norm(out, axis=1, keepdims=True)


NAMES = ["Alice", 'The "Quoted" One', "Comma, Inc.", "two\nlines", "Alice", "", "Ünïcödé ß"]


def _files(tmp_path: Path, rows_per_part: list[int]) -> bulk.BulkFiles:
    header = tmp_path / "entities-header.csv"
    header.write_text(bulk.ENTITY_HEADER, encoding="utf-8")
    parts = []
    n = 0
    for p, count in enumerate(rows_per_part):
        path = tmp_path / f"entities-{p}.csv"
        with open(path, "w", encoding="utf-8", newline="") as out:
            for _ in range(count):
                name = NAMES[n % len(NAMES)]
                out.write(f"{bulk.csv_field(f'm.{n}')},kg1,{bulk.csv_field(name)}\n")
                n += 1
        parts.append(path)
    return bulk.BulkFiles(
        entities_csv=header,
        relationships_csv=tmp_path / "relationships-header.csv",
        entities=n,
        relationships=0,
        labels_without_facts=0,
        multiline=True,
        entity_parts=parts,
    )


def _read(files: bulk.BulkFiles) -> list[list[str]]:
    rows = list(bulk.iter_rows([files.entities_csv, *files.entity_parts]))
    assert rows[0] == ["id:ID(Entity)", "kg", "name", "embedding:float[]"]
    return rows[1:]


@pytest.mark.parametrize("pooled", [False, True])
def test_every_row_gets_its_names_vector(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pooled: bool
) -> None:
    if pooled:  # small chunks, so that a few hundred rows go through the worker pool
        monkeypatch.setattr(vectors, "CHUNK_ROWS", 16)
        monkeypatch.setenv("KGQA_BULK_WORKERS", "2")
    sizes = [150, 0, 97] if pooled else [5, 9]
    files = _files(tmp_path, sizes)
    assert bulk.add_vectors(files, _embed, QUIET) == sum(sizes)
    assert files.vectors
    rows = _read(files)
    assert [row[0] for row in rows] == [f"m.{n}" for n in range(sum(sizes))]  # order and ids kept
    for n, (_, kg, name, text) in enumerate(rows):
        assert kg == "kg1" and name == NAMES[n % len(NAMES)]
        vector = np.array([float(v) for v in text.split(";")], dtype=np.float32)
        assert np.allclose(vector, _embed([name])[0], rtol=0, atol=1e-7), name
    assert not list(tmp_path.glob("*.vectors"))  # the rewritten files replaced the originals


def test_each_distinct_name_of_a_chunk_is_embedded_once(tmp_path: Path) -> None:
    asked: list[str] = []

    def counting(names: list[str]) -> np.ndarray:
        asked.extend(names)
        return _embed(names)

    files = _files(tmp_path, [len(NAMES) * 3])
    bulk.add_vectors(files, counting, QUIET)
    assert sorted(asked) == sorted(set(NAMES))


def test_the_header_file_of_a_sorted_single_file_is_rewritten_in_place(tmp_path: Path) -> None:
    path = tmp_path / "entities.csv"
    with open(path, "w", encoding="utf-8", newline="") as out:
        out.write(bulk.ENTITY_HEADER)
        csv.writer(out, lineterminator="\n").writerows([["a", "kg1", "A"], ["b", "kg1", "B"]])
    files = bulk.BulkFiles(path, tmp_path / "r.csv", 2, 0, 0, False)
    bulk.add_vectors(files, _embed, QUIET)
    assert [row[:3] for row in _read(files)] == [["a", "kg1", "A"], ["b", "kg1", "B"]]
