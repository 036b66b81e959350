"""Freebase in three shapes.

1. The official RDF dump (``freebase-rdf-*.gz``): gzipped, tab-separated N-Triples with
   ``<http://rdf.freebase.com/ns/...>`` IRIs. Kept, by rule:

   - facts: subject and object are entities (``ns:m.*`` / ``ns:g.*``), the predicate an ``ns:`` property;
   - names: ``ns:type.object.name`` (or ``rdfs:label``) literals tagged ``@en``.

   Dropped and counted per rule: literal values, names in other languages, schema/type subjects
   (``ns:film.film``), objects that are not entities (``type.object.type`` -> ``ns:film.film``), predicates
   outside ``ns:`` (``rdf:type``, ``ns/key/...``), blank nodes.

2. FB15k-style TSV (``/m/0abc<TAB>/film/film/genre<TAB>/m/0xyz``) with a ``mid<TAB>name`` file
   (``entity2text.txt``).

3. Per-question triple lists with names (SubgraphRAG's ``gpt_triples`` JSON for WebQSP and CWQ):
   ``{question id: [[head name, relation, tail name], ...]}``.

Naming, the same in all three so that the KGs agree:

- entity id: the mid without namespace, ``m.0abc`` (``/m/0abc`` and ``ns:m.0abc`` both map there); in the
  per-question lists, which carry names only, the id is the name;
- relation (the Neo4j relationship type): the dotted Freebase property id,
  ``location.country.languages_spoken``.
  FB15k-237's compound CVT relations (``/people/person/spouse_s./people/marriage/type_of_union``) become
  ``people.person.spouse_s..people.marriage.type_of_union``: each path is dotted and the two are joined by
  ``..``. :func:`fb15k_path` inverts it exactly (Freebase ids never contain ``.`` inside a segment);
- an entity without an English name is named by its id (CVT nodes such as ``m.0cvt``), as the research
  datasets do.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pyoxigraph as ox
from kgqa.core.errors import BadInput
from kgqa.core.relation_text import name_words
from kgqa.loaders.inputs import inner_suffix, open_dump
from kgqa.loaders.plan import InputFile, InputPlan, ParseContext, identity, numbered_lines
from kgqa.loaders.rdf import (
    RDF_SUFFIXES,
    english_label,
    line_based,
    named_statement,
    rdf_format,
    read_records,
)
from kgqa.loaders.records import MAX_VALUE_BYTES, Fact, Issue, Label, Record, kept_or_rule, value_problem

NS = "http://rdf.freebase.com/ns/"
NS_HTTPS = "https://rdf.freebase.com/ns/"
RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
NAME_PREDICATES = frozenset({NS + "type.object.name", RDFS_LABEL})

_ENTITY = re.compile(r"^[mg]\.[0-9a-z_]+$")
_PROPERTY = re.compile(r"^[A-Za-z0-9_\-]+(\.[A-Za-z0-9_\-]+)+$")
_FB15K_ENTITY = re.compile(r"^/([mg])/([0-9a-z_]+)$")
_FB15K_RELATION = re.compile(r"^(/[A-Za-z0-9_\-]+)+(\./[A-Za-z0-9_\-]+(/[A-Za-z0-9_\-]+)+)*$")

RDF_DESCRIPTION = "Freebase RDF (N-Triples with rdf.freebase.com IRIs)"
FB15K_DESCRIPTION = "an FB15k-style triple file (/m/mid<TAB>/relation/path<TAB>/m/mid)"
NAMES_DESCRIPTION = "a Freebase names file (/m/mid<TAB>name)"
JSON_DESCRIPTION = "per-question Freebase triples (JSON: {question id: [[head, relation, tail], ...]})"
FB15K_SPLITS = ("train.txt", "valid.txt", "test.txt")
NAME_FILES = ("entity2text.txt", "names_kgbert/entity2text.txt", "mid2name.tsv", "mid2name.txt")


# ----------------------------------------------------------------------------- naming
def mid_from_path(path: str) -> str | None:
    """'/m/0abc' -> 'm.0abc'."""
    match = _FB15K_ENTITY.match(path)
    return f"{match.group(1)}.{match.group(2)}" if match else None


def fb15k_relation(path: str) -> str:
    """'/film/film/genre' -> 'film.film.genre'; '/a/b/c./d/e/f' -> 'a.b.c..d.e.f'."""
    return "..".join(part.strip("/").replace("/", ".") for part in path.split("./"))


def _local(iri: str) -> str | None:
    if iri.startswith(NS):
        return iri[len(NS) :]
    if iri.startswith(NS_HTTPS):
        return iri[len(NS_HTTPS) :]
    return None


# ----------------------------------------------------------------------------- plans
def plan(paths: list[Path]) -> InputPlan:
    if len(paths) == 1 and paths[0].is_dir():
        return _plan_directory(paths[0])
    for path in paths:
        if not path.exists():
            raise BadInput(f"file not found: {path}")
        if path.is_dir():
            raise BadInput(f"{path} is a directory: give one directory, or files")
    kinds = {_kind(p) for p in paths}
    if len(kinds) != 1:
        raise BadInput("mixed Freebase input kinds in one load: " + ", ".join(str(p) for p in paths))
    kind = kinds.pop()
    if kind == "rdf":
        return _rdf_plan(paths)
    if kind == "json":
        return _json_plan(paths)
    names = _find_names(paths[0].parent)
    return _fb15k_plan(paths, names, paths[0].parent)


def _kind(path: Path) -> str:
    suffix = inner_suffix(path)
    if suffix == ".json":
        return "json"
    if suffix in RDF_SUFFIXES or (path.suffix.lower() in (".gz", ".bz2") and suffix not in (".txt", ".tsv")):
        return "rdf"  # the official dump is named freebase-rdf-latest.gz
    if suffix in (".txt", ".tsv"):
        return "fb15k"
    raise BadInput(f"{path}: unknown Freebase input (expected RDF .nt/.ttl[.gz], FB15k-style .txt, or .json)")


def _plan_directory(directory: Path) -> InputPlan:
    splits = [directory / s for s in FB15K_SPLITS if (directory / s).is_file()]
    if splits:
        return _fb15k_plan(splits, _find_names(directory), directory)
    jsons = sorted(directory.glob("*gpt_triples*.json")) or sorted(directory.glob("*triples*.json"))
    if jsons:
        return _json_plan(jsons[:1])
    rdf = sorted(p for p in directory.iterdir() if p.is_file() and _kind_or_none(p) == "rdf")
    if rdf:
        return _rdf_plan(rdf)
    raise BadInput(
        f"no Freebase input in {directory} (looked for FB15k train/valid/test.txt, "
        "*gpt_triples*.json, or RDF .nt/.ttl[.gz] files)"
    )


def _kind_or_none(path: Path) -> str | None:
    try:
        return _kind(path)
    except BadInput:
        return None


def _find_names(directory: Path) -> Path | None:
    return next((directory / n for n in NAME_FILES if (directory / n).is_file()), None)


def _rdf_plan(paths: list[Path]) -> InputPlan:
    return InputPlan(
        source="freebase",
        format="freebase-rdf",
        files=[
            InputFile(p, parse_rdf, RDF_DESCRIPTION, line_based=line_based(_dump_format(p))) for p in paths
        ],
        default_kg="freebase",
        default_name=identity,
        relation_text=name_words,
    )


def _fb15k_plan(paths: list[Path], names: Path | None, directory: Path) -> InputPlan:
    files = [InputFile(p, parse_fb15k, FB15K_DESCRIPTION, line_based=True) for p in paths]
    notes = []
    if names is not None:
        files.append(InputFile(names, parse_names, NAMES_DESCRIPTION, line_based=True))
    else:
        notes.append(f"no entity2text.txt names file next to {paths[0]}: entities are named by their mids")
    label = str(directory.resolve()).lower()
    default_kg = "fb15k237" if "237" in label else "fb15k"
    return InputPlan(
        source="freebase",
        format="fb15k",
        files=files,
        default_kg=default_kg,
        default_name=identity,
        relation_text=name_words,
        notes=notes,
    )


def _json_plan(paths: list[Path]) -> InputPlan:
    label = " ".join(str(p.resolve()).lower() for p in paths)
    default_kg = "cwq" if "cwq" in label else "webqsp" if "webqsp" in label else "freebase"
    return InputPlan(
        source="freebase",
        format="subgraphrag-json",
        files=[InputFile(p, parse_question_triples, JSON_DESCRIPTION) for p in paths],
        default_kg=default_kg,
        default_name=identity,
        relation_text=name_words,
    )


# ----------------------------------------------------------------------------- RDF dump
def _dump_format(path: Path) -> ox.RdfFormat:
    return rdf_format(path, default=ox.RdfFormat.N_TRIPLES)


def parse_rdf(path: Path, ctx: ParseContext) -> Iterator[Record]:
    dropped = ctx.stats.dropped
    for record in read_records(path, ctx, _dump_format(path), rdf_record, fast_rdf_record):
        if isinstance(record, str):
            dropped[record] += 1
        else:
            yield record


# The dump's common lines, read without pyoxigraph: three IRIs in ns: with plain characters, or two and a
# literal without escapes or control characters (with a short language tag or an XSD datatype). Anything
# else (escapes, blank nodes, other IRIs, comments) goes to pyoxigraph, which also reports malformed lines.
_FAST_IRI = rb"<http://rdf\.freebase\.com/ns/([A-Za-z0-9_.\-]+)>"
_FAST_LINE = re.compile(
    rb"^"
    + _FAST_IRI
    + rb"[ \t]+"
    + _FAST_IRI
    + rb"[ \t]+(?:"
    + _FAST_IRI
    + rb'|"([^"\\\x00-\x1f\x7f]*)"(?:@([a-z]{2,3})|\^\^<http://www\.w3\.org/2001/XMLSchema#[A-Za-z]+>)?)'
    + rb"[ \t]*\.[ \t]*\r?\n?\Z"
)
_FAST_ENTITY = re.compile(rb"[mg]\.[0-9a-z_]+\Z")


def fast_rdf_record(line: bytes) -> Record | str | None:
    """What :func:`rdf_record` makes of one dump line, without pyoxigraph; None when the line is not one of
    the plain shapes this reads (pyoxigraph then reads it)."""
    match = _FAST_LINE.match(line)
    if match is None:
        return None
    subject, predicate, obj, literal, language = match.groups()
    value = ""
    if literal is not None:
        try:
            value = literal.decode("utf-8")
        except UnicodeDecodeError:
            return None  # pyoxigraph reports it
    if _FAST_ENTITY.match(subject) is None:
        return "subject is schema, not an entity"
    if predicate == b"type.object.name":
        if literal is None:
            return "name that is not a literal"
        if language != b"en":
            return "name not in English"
        if not value:
            return "empty name"
        label = Label(subject.decode("ascii"), value)
        return kept_or_rule(label)
    if literal is not None:
        return "literal value"
    if _FAST_ENTITY.match(obj) is None:
        return "object is not an entity"
    fact = Fact(subject.decode("ascii"), predicate.decode("ascii"), obj.decode("ascii"))
    if len(line) > MAX_VALUE_BYTES:
        return kept_or_rule(fact)
    return fact


def rdf_record(s: object, p: object, o: object) -> Record | str:
    """The fact or name a dump statement carries, or the rule that drops it."""
    return named_statement(s, p, o, _record)


def _record(subject_iri: str, predicate: str, o: object) -> Record | str:
    subject = _local(subject_iri)
    if subject is None:
        return "subject outside ns:"
    if not _ENTITY.match(subject):
        return "subject is schema, not an entity"
    if predicate in NAME_PREDICATES:
        return english_label(subject, o, "name")
    if isinstance(o, ox.Literal):
        return "literal value"
    relation = _local(predicate)
    if relation is None:
        return "predicate outside ns:"
    if not isinstance(o, ox.NamedNode):
        return "blank-node object"
    obj = _local(o.value)
    if obj is None or not _ENTITY.match(obj):
        return "object is not an entity"
    return Fact(subject, relation, obj)


# ----------------------------------------------------------------------------- FB15k TSV
def parse_fb15k(path: Path, ctx: ParseContext) -> Iterator[Record]:
    for number, fields in _tsv(path, ctx):
        if len(fields) != 3:
            ctx.sink.add(Issue(str(path), number, f"expected 3 tab-separated fields, found {len(fields)}"))
            continue
        head, relation, tail = (mid_from_path(fields[0]), fields[1], mid_from_path(fields[2]))
        if head is None or tail is None:
            bad = fields[0] if head is None else fields[2]
            ctx.sink.add(Issue(str(path), number, f"{bad!r} is not a Freebase mid (/m/...)"))
            continue
        if not _FB15K_RELATION.match(relation):
            ctx.sink.add(Issue(str(path), number, f"{relation!r} is not a Freebase relation path"))
            continue
        fact = Fact(head, fb15k_relation(relation), tail)
        if problem := value_problem(fact):
            ctx.sink.add(Issue(str(path), number, problem))
            continue
        ctx.sink.good()
        yield fact


def parse_names(path: Path, ctx: ParseContext) -> Iterator[Record]:
    for number, fields in _tsv(path, ctx):
        if len(fields) != 2:
            ctx.sink.add(Issue(str(path), number, f"expected mid<TAB>name, found {len(fields)} fields"))
            continue
        mid = mid_from_path(fields[0]) or (fields[0] if _ENTITY.match(fields[0]) else None)
        if mid is None:
            ctx.sink.add(Issue(str(path), number, f"{fields[0]!r} is not a Freebase mid"))
            continue
        label = Label(mid, fields[1])
        if problem := value_problem(label):
            ctx.sink.add(Issue(str(path), number, problem))
            continue
        ctx.sink.good()
        if not fields[1].strip():
            ctx.stats.dropped["empty name"] += 1
            continue
        yield label


def _tsv(path: Path, ctx: ParseContext) -> Iterator[tuple[int, list[str]]]:
    for number, line in numbered_lines(path, ctx):
        yield number, line.split("\t")


# ----------------------------------------------------------------------------- per-question JSON
def parse_question_triples(path: Path, ctx: ParseContext) -> Iterator[Record]:
    with open_dump(path) as (stream, counter):
        try:
            data = json.load(stream)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise BadInput(f"{path} does not look like {JSON_DESCRIPTION}: {exc}") from None
        ctx.on_bytes(counter.bytes_read)
    if not isinstance(data, dict):
        raise BadInput(f"{path} does not look like {JSON_DESCRIPTION}: the top level is not an object")
    for question, triples in data.items():
        if not isinstance(triples, list):
            ctx.sink.add(Issue(str(path), question, "the value is not a list of triples"))
            continue
        for index, triple in enumerate(triples):
            where = f"{question}[{index}]"
            if (
                not isinstance(triple, list)
                or len(triple) != 3
                or not all(isinstance(x, str) for x in triple)
            ):
                ctx.sink.add(Issue(str(path), where, "not a [head, relation, tail] list of 3 strings"))
                continue
            head, relation, tail = triple
            if not head.strip() or not tail.strip():
                ctx.sink.add(Issue(str(path), where, "empty head or tail"))
                continue
            if not _PROPERTY.match(relation):
                ctx.sink.add(Issue(str(path), where, f"{relation!r} is not a Freebase property id"))
                continue
            fact = Fact(head, relation, tail)
            if problem := value_problem(fact):
                ctx.sink.add(Issue(str(path), where, problem))
                continue
            ctx.sink.good()
            yield fact
