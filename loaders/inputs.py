"""Opening dump files: transparent gzip/bz2, and a byte counter that drives the progress bar."""

from __future__ import annotations

import bz2
import gzip
import hashlib
import io
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from kgqa.core.errors import BadInput, KgqaError

COMPRESSED = (".gz", ".bz2")


class CountingReader(io.RawIOBase):
    """Wraps a binary file and counts the (compressed) bytes read so far; with ``limit``, reads no more than
    that many bytes (a byte range of the file)."""

    def __init__(self, raw: BinaryIO, limit: int | None = None) -> None:
        self.raw = raw
        self.bytes_read = 0
        self.limit = limit

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # type: ignore[no-untyped-def, override]
        if self.limit is not None:
            left = self.limit - self.bytes_read
            if left <= 0:
                return 0
            if left < len(buffer):
                buffer = memoryview(buffer)[:left]
        n = self.raw.readinto(buffer)  # type: ignore[attr-defined]
        self.bytes_read += n or 0
        return n or 0

    def close(self) -> None:
        self.raw.close()
        super().close()


def inner_suffix(path: Path) -> str:
    """The format suffix under any compression suffix: 'x.nt.gz' -> '.nt'."""
    suffixes = [s.lower() for s in path.suffixes]
    while suffixes and suffixes[-1] in COMPRESSED:
        suffixes.pop()
    return suffixes[-1] if suffixes else ""


def compressed(path: Path) -> bool:
    return path.suffix.lower() in COMPRESSED


@contextmanager
def open_dump(
    path: Path, start: int = 0, end: int | None = None
) -> Iterator[tuple[BinaryIO, CountingReader]]:
    """(decompressed binary stream, counter of raw bytes read). ``start`` and ``end`` select a byte range of
    an uncompressed file (see :func:`line_ranges`)."""
    if not path.is_file():
        raise BadInput(f"file not found: {path}")
    if (start or end is not None) and compressed(path):
        raise BadInput(f"{path}: a compressed file is read whole, not by byte range")
    raw = open(path, "rb")  # noqa: SIM115 - closed below
    if start:
        raw.seek(start)
    counter = CountingReader(raw, None if end is None else max(0, end - start))
    buffered = io.BufferedReader(counter, buffer_size=1 << 20)
    suffix = path.suffix.lower()
    stream: BinaryIO
    if suffix == ".gz":
        stream = gzip.GzipFile(fileobj=buffered, mode="rb")  # type: ignore[assignment]
    elif suffix == ".bz2":
        stream = bz2.BZ2File(buffered, mode="rb")  # type: ignore[assignment]
    else:
        stream = buffered  # type: ignore[assignment]
    try:
        yield stream, counter
    except (OSError, EOFError) as exc:
        if isinstance(exc, FileNotFoundError):
            raise
        raise KgqaError(f"cannot read {path}: {exc}") from None
    finally:
        stream.close()
        counter.close()


def line_ranges(path: Path, parts: int, min_bytes: int = 1) -> list[tuple[int, int]]:
    """Up to ``parts`` byte ranges ``[start, end)`` that cover the file, each at least ``min_bytes`` long
    (but the last) and each ending just after a newline (or at the end of the file): no line is cut in two.
    Empty ranges are left out, so an empty file has none."""
    size = path.stat().st_size
    parts = max(1, min(parts, size // max(1, min_bytes)))
    bounds = [0]
    with open(path, "rb") as fh:
        for k in range(1, parts):
            target = max(size * k // parts, bounds[-1])
            if target >= size:
                break
            fh.seek(target - 1 if target > 0 else 0)
            if target > 0 and fh.read(1) == b"\n":
                cut = target  # the byte before the cut ends a line: cut right here
            else:
                fh.readline()  # the rest of the line the cut falls in
                cut = fh.tell()
            if bounds[-1] < cut < size:
                bounds.append(cut)
    bounds.append(size)
    return [(a, b) for a, b in zip(bounds, bounds[1:], strict=False) if b > a]


def count_lines(path: Path, end: int) -> int:
    """The number of newlines in the first ``end`` bytes of ``path``: the line number at which a range that
    starts at ``end`` begins, minus one."""
    lines = 0
    left = end
    with open(path, "rb") as fh:
        while left > 0:
            block = fh.read(min(left, 1 << 24))
            if not block:
                break
            lines += block.count(b"\n")
            left -= len(block)
    return lines


def fingerprint(paths: list[Path], extra: str = "") -> str:
    """A content hash of the input files (and the options that shape the graph)."""
    digest = hashlib.sha256(extra.encode())
    for path in paths:
        digest.update(str(path.name).encode() + b"\0")
        with open(path, "rb") as fh:
            while chunk := fh.read(1 << 22):
                digest.update(chunk)
    return digest.hexdigest()[:32]
