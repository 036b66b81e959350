"""Tab-separated spool files for records that wait on disk (labels until all facts are in; bulk staging).

Fields are escaped so that any string survives a line-based round trip: backslash, tab,
newline and carriage return become ``\\\\``, ``\\t``, ``\\n``, ``\\r``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import IO

_ESCAPES = {"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"}
_UNESCAPES = {"\\\\": "\\", "\\t": "\t", "\\n": "\n", "\\r": "\r"}
_NEEDS = re.compile(r"[\\\t\n\r]")
_ESCAPED = re.compile(r"\\[\\tnr]")


def escape(value: str) -> str:
    if _NEEDS.search(value) is None:
        return value
    return _NEEDS.sub(lambda m: _ESCAPES[m.group(0)], value)


def unescape(value: str) -> str:
    if "\\" not in value:
        return value
    return _ESCAPED.sub(lambda m: _UNESCAPES[m.group(0)], value)


def write_row(fh: IO[str], *fields: str) -> None:
    fh.write("\t".join(escape(f) for f in fields) + "\n")


def read_rows(path: Path) -> Iterator[list[str]]:
    with open(path, encoding="utf-8", newline="\n") as fh:
        for line in fh:
            yield [unescape(f) for f in line.rstrip("\n").split("\t")]
