"""DBpedia dumps: mapping-based objects plus ``rdfs:label`` names, as N-Triples or Turtle (optionally gz/bz2).

Kept, by rule:

- facts: IRI subject, IRI object (``dbr:Berlin dbo:country dbr:Germany``);
- names: ``rdfs:label`` literals tagged ``@en``.

Dropped and counted: literal values, labels in other languages, blank nodes, ``rdf:type`` statements and
links that are not facts about the world (``owl:sameAs``, ``prov:wasDerivedFrom``, ``foaf:isPrimaryTopicOf``,
``foaf:primaryTopic``, ``foaf:homepage``, and the ``dbo:wikiPage*`` page links).

Naming:

- entity id: the full IRI (``http://dbpedia.org/resource/Berlin``); an entity without an English label is
  named after its IRI's last segment, percent-decoded, with ``_`` as spaces (``Albert Einstein``);
- relation (the Neo4j relationship type): a prefixed name when the predicate IRI starts with one of the
  fixed namespaces in :data:`PREFIXES` (``dbo:birthPlace``, ``foaf:name``), otherwise the full IRI.
  :func:`relation_iri` recovers the exact IRI: a relation name is expanded only when its part before the
  first ``:`` is one of these prefixes, none of which is a URI scheme.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote

import pyoxigraph as ox
from kgqa.core.errors import BadInput
from kgqa.core.relation_text import name_words
from kgqa.loaders.plan import InputFile, InputPlan, ParseContext, given_files
from kgqa.loaders.rdf import (
    RDF_SUFFIXES,
    english_label,
    line_based,
    named_statement,
    rdf_format,
    read_triples,
)
from kgqa.loaders.records import Fact, Record

PREFIXES: dict[str, str] = {
    "dbo": "http://dbpedia.org/ontology/",
    "dbp": "http://dbpedia.org/property/",
    "dbr": "http://dbpedia.org/resource/",
    "foaf": "http://xmlns.com/foaf/0.1/",
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
    "owl": "http://www.w3.org/2002/07/owl#",
    "skos": "http://www.w3.org/2004/02/skos/core#",
    "dct": "http://purl.org/dc/terms/",
    "dc": "http://purl.org/dc/elements/1.1/",
    "schema": "http://schema.org/",
    "prov": "http://www.w3.org/ns/prov#",
    "wgs84": "http://www.w3.org/2003/01/geo/wgs84_pos#",
}
RDF_TYPE = PREFIXES["rdf"] + "type"
RDFS_LABEL = PREFIXES["rdfs"] + "label"
NOT_FACTS = frozenset(
    {
        PREFIXES["owl"] + "sameAs",
        PREFIXES["prov"] + "wasDerivedFrom",
        PREFIXES["foaf"] + "isPrimaryTopicOf",
        PREFIXES["foaf"] + "primaryTopic",
        PREFIXES["foaf"] + "homepage",
        PREFIXES["dbo"] + "wikiPageWikiLink",
        PREFIXES["dbo"] + "wikiPageRedirects",
        PREFIXES["dbo"] + "wikiPageDisambiguates",
        PREFIXES["dbo"] + "wikiPageExternalLink",
    }
)
DESCRIPTION = "DBpedia RDF (N-Triples or Turtle)"
# Longest namespace first, so that a namespace that extends another one wins.
_BY_LENGTH = sorted(PREFIXES.items(), key=lambda item: -len(item[1]))


def relation_name(iri: str) -> str:
    """'http://dbpedia.org/ontology/birthPlace' -> 'dbo:birthPlace'; unknown namespaces stay full IRIs."""
    for prefix, namespace in _BY_LENGTH:
        if iri.startswith(namespace) and len(iri) > len(namespace):
            return f"{prefix}:{iri[len(namespace) :]}"
    return iri


def relation_iri(name: str) -> str:
    """The exact predicate IRI of a relation name (the inverse of :func:`relation_name`)."""
    prefix, sep, local = name.partition(":")
    if sep and prefix in PREFIXES:
        return PREFIXES[prefix] + local
    return name


def default_name(iri: str) -> str:
    """The last segment of an IRI, percent-decoded, underscores as spaces."""
    local = iri.rstrip("/")
    for sep in ("#", "/"):
        if sep in local:
            local = local.rsplit(sep, 1)[1]
            break
    name = unquote(local).replace("_", " ").strip()
    return name or iri


def relation_text(name: str) -> str:
    prefix, sep, local = name.partition(":")
    if sep and prefix in PREFIXES:
        return name_words(local)
    return name_words(default_name(name))


def plan(paths: list[Path]) -> InputPlan:
    files = given_files(paths, _dump_files, _check_dump_file)
    return InputPlan(
        source="dbpedia",
        format="dbpedia-rdf",
        files=[InputFile(f, parse, DESCRIPTION, line_based=line_based(rdf_format(f))) for f in files],
        default_kg="dbpedia",
        default_name=default_name,
        relation_text=relation_text,
    )


def _dump_files(folder: Path) -> list[Path]:
    found = sorted(p for p in folder.iterdir() if p.is_file() and _is_rdf(p))
    if not found:
        raise BadInput(f"no DBpedia dump files (.nt/.ttl, optionally .gz/.bz2) in {folder}")
    return found


def _check_dump_file(path: Path) -> None:
    if not _is_rdf(path):
        raise BadInput(f"{path}: not a DBpedia dump file (expected .nt or .ttl, optionally .gz or .bz2)")


def _is_rdf(path: Path) -> bool:
    from kgqa.loaders.inputs import inner_suffix

    return inner_suffix(path) in RDF_SUFFIXES


def parse(path: Path, ctx: ParseContext) -> Iterator[Record]:
    dropped = ctx.stats.dropped
    for s, p, o in read_triples(path, ctx, rdf_format(path)):
        record = rdf_record(s, p, o)
        if isinstance(record, str):
            dropped[record] += 1
        else:
            yield record


def rdf_record(s: object, p: object, o: object) -> Record | str:
    """The fact or label a statement carries, or the rule that drops it."""
    return named_statement(s, p, o, _record)


def _record(subject: str, predicate: str, o: object) -> Record | str:
    if predicate == RDFS_LABEL:
        return english_label(subject, o, "label")
    if isinstance(o, ox.Literal):
        return "literal value"
    if not isinstance(o, ox.NamedNode):
        return "blank-node object"
    if predicate == RDF_TYPE:
        return "rdf:type statement"
    if predicate in NOT_FACTS:
        return "link that is not a fact"
    return Fact(subject, relation_name(predicate), o.value)
