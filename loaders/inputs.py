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

from kgqa.core.errors import KgqaError

COMPRESSED = (".gz", ".bz2")


class CountingReader(io.RawIOBase):
    """Wraps a binary file and counts the (compressed) bytes read so far."""

    def __init__(self, raw: BinaryIO) -> None:
        self.raw = raw
        self.bytes_read = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # type: ignore[no-untyped-def, override]
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


@contextmanager
def open_dump(path: Path) -> Iterator[tuple[BinaryIO, CountingReader]]:
    """(decompressed binary stream, counter of raw bytes read)."""
    if not path.is_file():
        raise KgqaError(f"file not found: {path}")
    counter = CountingReader(open(path, "rb"))  # noqa: SIM115 - closed below
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


def fingerprint(paths: list[Path], extra: str = "") -> str:
    """A content hash of the input files (and the options that shape the graph)."""
    digest = hashlib.sha256(extra.encode())
    for path in paths:
        digest.update(str(path.name).encode() + b"\0")
        with open(path, "rb") as fh:
            while chunk := fh.read(1 << 22):
                digest.update(chunk)
    return digest.hexdigest()[:32]
