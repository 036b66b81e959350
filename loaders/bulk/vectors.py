"""Entity name vectors as a column of the entities CSV, so neo4j-admin imports them with the nodes.

Written per entity through Cypher, a million vectors took 20 minutes (830 a second, each one a transaction's
match, a JSON parse and an insertion into a growing HNSW graph); imported as ``float[]`` values and indexed
once, they cost the CSV's formatting plus one index population (about 3,600 vectors a second on two cores).
The CSV is rewritten in chunks: the names of a chunk are embedded (distinct names once, length-sorted as
the encoder batches them) while a worker pool formats the previous chunk's vectors as text.
"""

from __future__ import annotations

import csv
import os
from collections import deque
from collections.abc import Callable
from multiprocessing.pool import AsyncResult, Pool
from pathlib import Path
from typing import TextIO

import numpy as np
from kgqa.loaders.bulk.files import ENTITY_HEADER, BulkFiles, batches, csv_field
from kgqa.loaders.bulk.parse import pool_context, workers
from kgqa.loaders.embeddings import Embedder
from kgqa.loaders.progress import Progress

VECTOR_HEADER = ENTITY_HEADER.rstrip("\n") + ",embedding:float[]\n"
CHUNK_ROWS = 8192  # rows embedded at a time and handed to one formatting job
IN_FLIGHT = 4  # formatting jobs queued behind the one being written: bounds memory
# Seven significant digits: a float32 round-trips through text within one unit in its last place, so the
# imported vector equals the one the online path writes to within 1e-7 per component.
DIGITS = 7


def add_vectors(files: BulkFiles, embed: Embedder, progress: Progress) -> int:
    """Adds an ``embedding`` column (the entity name's vector) to every entities CSV; returns the number of
    entities given one. Each file is rewritten to a temporary name and moved into place when complete."""
    paths = [files.entities_csv, *files.entity_parts]
    done = 0
    pool: Pool | None = None
    with progress.step("embeddings (into the CSV)", total=files.entities, unit="names") as step:
        try:
            if files.entities >= 4 * CHUNK_ROWS and workers() > 1:
                pool = pool_context().Pool(workers())
            for i, path in enumerate(paths):
                base = done

                def report(rows: int, base: int = base) -> None:
                    step.update(base + rows, items=base + rows)

                done += _rewrite(path, i == 0, embed, pool, report)
            step.update(done, items=done, force=True)
        finally:
            if pool is not None:
                pool.terminate()
                pool.join()
    files.vectors = True
    return done


def _rewrite(
    path: Path, with_header: bool, embed: Embedder, pool: Pool | None, report: Callable[[int], None]
) -> int:
    staged = path.with_name(path.name + ".vectors")
    written = 0
    with (
        open(path, encoding="utf-8", newline="") as src,
        open(staged, "w", encoding="utf-8", newline="") as out,
    ):
        rows = csv.reader(src)
        if with_header:
            next(rows, None)
            out.write(VECTOR_HEADER)
        pending: deque[tuple[list[list[str]], AsyncResult[list[str]] | list[str]]] = deque()
        for chunk in batches(([row] for row in rows), CHUNK_ROWS):
            vectors = _vectors([row[2] for row in chunk], embed)
            job = (
                pool.apply_async(format_vectors, (vectors,)) if pool is not None else format_vectors(vectors)
            )
            pending.append((chunk, job))
            while len(pending) > (IN_FLIGHT if pool is not None else 0):
                written += _write(out, *pending.popleft())
                report(written)
        while pending:
            written += _write(out, *pending.popleft())
            report(written)
    os.replace(staged, path)
    return written


def _vectors(names: list[str], embed: Embedder) -> np.ndarray:
    """One float32 row per name, in the names' order; each distinct name embedded once."""
    distinct = sorted(set(names), key=len)
    position = {name: i for i, name in enumerate(distinct)}
    embedded = np.asarray(embed(distinct), dtype=np.float32)
    return embedded[[position[name] for name in names]]


def format_vectors(vectors: np.ndarray) -> list[str]:
    """Each row as neo4j-admin reads a ``float[]`` field: values joined by its array delimiter, ';'."""
    template = ";".join([f"%.{DIGITS}g"] * vectors.shape[1])
    return [template % tuple(row) for row in vectors.tolist()]


def _write(out: TextIO, chunk: list[list[str]], job: AsyncResult[list[str]] | list[str]) -> int:
    texts = job if isinstance(job, list) else job.get()
    lines = [
        f"{csv_field(entity)},{csv_field(kg)},{csv_field(name)},{text}\n"
        for (entity, kg, name), text in zip(chunk, texts, strict=True)
    ]
    out.write("".join(lines))
    return len(lines)
