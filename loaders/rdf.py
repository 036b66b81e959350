"""Streaming RDF reading with pyoxigraph: N-Triples, N-Quads and Turtle, plain or gzip/bz2 compressed.

pyoxigraph recovers after a syntax error and carries on with the next statement, so a malformed line is
reported (file:line and the parser's reason) and skipped rather than ending the load.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from itertools import islice
from pathlib import Path

import pyoxigraph as ox
from kgqa.core.errors import BadInput
from kgqa.loaders.inputs import inner_suffix, open_dump
from kgqa.loaders.plan import ParseContext
from kgqa.loaders.records import Issue, Label, Record, kept_or_rule

FORMATS = {
    ".nt": ox.RdfFormat.N_TRIPLES,
    ".ntriples": ox.RdfFormat.N_TRIPLES,
    ".nq": ox.RdfFormat.N_QUADS,
    ".ttl": ox.RdfFormat.TURTLE,
    ".turtle": ox.RdfFormat.TURTLE,
}
RDF_SUFFIXES = tuple(FORMATS)

_PREFIX = re.compile(r"^Parser error (?:at line \d+ )?(?:between .*? and .*?|column \d+|at .*?): ")
CHUNK_LINES = 10_000


def rdf_format(path: Path, default: ox.RdfFormat | None = None) -> ox.RdfFormat:
    fmt = FORMATS.get(inner_suffix(path), default)
    if fmt is None:
        raise BadInput(f"{path}: unknown RDF file type (expected .nt, .nq or .ttl, optionally .gz or .bz2)")
    return fmt


def line_based(fmt: ox.RdfFormat) -> bool:
    """One statement per line: such a file can be read by byte ranges (ParseContext.start/end)."""
    return fmt in (ox.RdfFormat.N_TRIPLES, ox.RdfFormat.N_QUADS)


# What a source makes of one statement: a record, or the name of the rule that drops it.
Mapped = Record | str


def read_records(
    path: Path,
    ctx: ParseContext,
    fmt: ox.RdfFormat,
    slow: Callable[[object, object, object], Mapped],
    fast: Callable[[bytes], Mapped | None],
) -> Iterator[Mapped]:
    """``slow(s, p, o)`` of every statement, as :func:`read_triples` reads them; on line-based formats a line
    that ``fast`` recognises (it returns what ``slow`` would for that line, or None when it cannot tell) skips
    pyoxigraph. Runs of the other lines go to pyoxigraph as before, in file order, so records keep their
    order and a malformed line is reported with its file:line as before."""
    if not line_based(fmt):
        for s, p, o in read_triples(path, ctx, fmt):
            yield slow(s, p, o)
        return
    good = ctx.sink.good
    with open_dump(path, ctx.start, ctx.end) as (stream, counter):
        first = 1
        while lines := list(islice(stream, CHUNK_LINES)):
            pending: list[bytes] = []  # consecutive lines for pyoxigraph
            pending_first = first
            for offset, line in enumerate(lines):
                item = fast(line)
                if item is None:
                    if not pending:
                        pending_first = first + offset
                    pending.append(line)
                    continue
                if pending:
                    for s, p, o in _parse_run(pending, pending_first, path, ctx, fmt):
                        yield slow(s, p, o)
                    pending = []
                good()
                yield item
            if pending:
                for s, p, o in _parse_run(pending, pending_first, path, ctx, fmt):
                    yield slow(s, p, o)
            first += len(lines)
            ctx.on_bytes(counter.bytes_read)


def named_statement(
    s: object, p: object, o: object, record: Callable[[str, str, object], Record | str]
) -> Record | str:
    """``record(subject IRI, predicate IRI, object)`` of a statement about a named node, or the rule that
    drops the statement: a blank-node subject is no entity, and a value past the limits is not loaded."""
    if not isinstance(s, ox.NamedNode):
        return "blank-node subject"
    return kept_or_rule(record(s.value, p.value, o))  # type: ignore[attr-defined]


def english_label(entity: str, o: object, noun: str) -> Label | str:
    """The label a naming statement gives ``entity``, or the rule that drops it (``noun``: what the KG calls
    such a statement): only a non-empty English literal names an entity."""
    if not isinstance(o, ox.Literal):
        return f"{noun} that is not a literal"
    if o.language != "en":
        return f"{noun} not in English"
    if not o.value:
        return f"empty {noun}"
    return Label(entity, o.value)


def _parse_run(
    lines: list[bytes], first: int, path: Path, ctx: ParseContext, fmt: ox.RdfFormat
) -> Iterator[tuple[object, object, object]]:
    try:
        quads = list(ox.parse(b"".join(lines), fmt))
    except SyntaxError:
        quads = list(_parse_one_by_one(lines, first, path, ctx, fmt))
    for quad in quads:
        ctx.sink.good()
        yield quad.subject, quad.predicate, quad.object


def read_triples(path: Path, ctx: ParseContext, fmt: ox.RdfFormat) -> Iterator[tuple[object, object, object]]:
    """(subject, predicate, object) pyoxigraph terms; syntax errors go to ``ctx.sink``."""
    if fmt in (ox.RdfFormat.N_TRIPLES, ox.RdfFormat.N_QUADS):
        yield from _read_lines(path, ctx, fmt)
    else:
        yield from _read_stream(path, ctx, fmt)


def _read_lines(path: Path, ctx: ParseContext, fmt: ox.RdfFormat) -> Iterator[tuple[object, object, object]]:
    """Line-based formats: parse chunks of lines at full speed; a chunk with an error is parsed again line by
    line, so that a bad line costs exactly that line (a streaming parser may run on into the next one)."""
    with open_dump(path, ctx.start, ctx.end) as (stream, counter):
        first = 1
        while lines := list(islice(stream, CHUNK_LINES)):
            yield from _parse_run(lines, first, path, ctx, fmt)
            first += len(lines)
            ctx.on_bytes(counter.bytes_read)


def _parse_one_by_one(
    lines: list[bytes], first: int, path: Path, ctx: ParseContext, fmt: ox.RdfFormat
) -> Iterator[ox.Quad]:
    for offset, line in enumerate(lines):
        try:
            parsed = list(ox.parse(line, fmt))
        except SyntaxError as exc:
            ctx.sink.add(Issue(str(path), first + offset, _reason(exc)))
            continue
        yield from parsed


def _read_stream(path: Path, ctx: ParseContext, fmt: ox.RdfFormat) -> Iterator[tuple[object, object, object]]:
    """Turtle: one streaming parse; after an error the parser resumes at the next statement it can read."""
    with open_dump(path) as (stream, counter):
        quads = ox.parse(stream, fmt)
        n = 0
        while True:
            try:
                quad = next(quads)
            except StopIteration:
                break
            except SyntaxError as exc:
                ctx.sink.add(Issue(str(path), exc.lineno if exc.lineno is not None else "?", _reason(exc)))
                continue
            n += 1
            ctx.sink.good()
            if n % CHUNK_LINES == 0:
                ctx.on_bytes(counter.bytes_read)
            yield quad.subject, quad.predicate, quad.object
        ctx.on_bytes(counter.bytes_read)


def _reason(exc: SyntaxError) -> str:
    reason = _PREFIX.sub("", str(exc.msg))
    return "incomplete statement (the line ends early)" if reason == "Unexpected end of file" else reason
