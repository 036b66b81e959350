"""An input plan: which files a load reads, with which parser, and how the KG names things."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from kgqa.core.errors import BadInput
from kgqa.loaders.inputs import open_dump
from kgqa.loaders.records import Issue, IssueSink, ParseStats, Record


@dataclass
class ParseContext:
    """What a parser needs besides its file: where to report issues and counts, and a progress callback."""

    sink: IssueSink
    stats: ParseStats
    on_bytes: Callable[[int], None] = lambda _n: None  # raw bytes of the current file read so far
    # A byte range of the file (line-based parsers only; see InputFile.line_based): the parser reads
    # [start, end) and numbers lines from 1 at ``start``; the caller shifts them to the file's numbering.
    start: int = 0
    end: int | None = None

    def tick_every(self) -> int:
        return 4096


Parser = Callable[[Path, ParseContext], Iterator[Record]]


@dataclass(frozen=True)
class InputFile:
    path: Path
    parser: Parser
    description: str  # "a MetaQA kb.txt file (subject|relation|object)", used in wrong-format errors
    # One record per line, and the parser honours ParseContext.start/end: an uncompressed file can then be
    # parsed by byte ranges in parallel (the bulk path).
    line_based: bool = False


@dataclass(frozen=True)
class InputPlan:
    source: str  # metaqa | freebase | dbpedia
    format: str  # metaqa-kb | freebase-rdf | fb15k | subgraphrag-json | dbpedia-rdf
    files: list[InputFile]
    default_kg: str
    default_name: Callable[[str], str]  # the name of an entity that no label names
    relation_text: Callable[[str], str]  # the readable text of a relation, for its embedding
    notes: list[str] = field(default_factory=list)

    @property
    def paths(self) -> list[Path]:
        return [f.path for f in self.files]


def given_files(
    paths: list[Path],
    in_folder: Callable[[Path], list[Path]],
    check_file: Callable[[Path], None] = lambda _path: None,
) -> list[Path]:
    """The files a load reads, in the order given: each file (``check_file`` raises for one the loader cannot
    read), and for each folder what ``in_folder`` finds in it (it raises when nothing)."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files.extend(in_folder(path))
        elif path.is_file():
            check_file(path)
            files.append(path)
        else:
            raise BadInput(f"file not found: {path}")
    return files


def identity(value: str) -> str:
    return value


def numbered_lines(path: Path, ctx: ParseContext) -> Iterator[tuple[int, str]]:
    """The lines of ``path`` (of ctx's byte range) that are not blank, with their 1-based numbers. A line
    that is not UTF-8 is an issue of the file, not the end of the load; progress is told as bytes read."""
    every = ctx.tick_every()
    with open_dump(path, ctx.start, ctx.end) as (stream, counter):
        for number, raw in enumerate(stream, start=1):
            if number % every == 0:
                ctx.on_bytes(counter.bytes_read)
            try:
                line = raw.decode("utf-8").rstrip("\r\n")
            except UnicodeDecodeError as exc:
                ctx.sink.add(Issue(str(path), number, f"not UTF-8 ({exc.reason} at byte {exc.start})"))
                continue
            if line.strip():
                yield number, line
        ctx.on_bytes(counter.bytes_read)
