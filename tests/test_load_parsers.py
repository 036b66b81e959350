"""Parsers and naming rules of the loaders, on the project's own fixtures (no database needed)."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pyoxigraph as ox
import pytest
from kgqa.core.errors import KgqaError
from kgqa.core.relation_text import name_words
from kgqa.loaders import dbpedia, freebase, metaqa
from kgqa.loaders.bulk import BulkStager, prepare
from kgqa.loaders.pipeline import plan_input
from kgqa.loaders.plan import InputPlan, ParseContext
from kgqa.loaders.progress import Progress
from kgqa.loaders.records import Fact, IssueSink, Label, ParseStats, Record
from kgqa.loaders.spool import escape, unescape

FIXTURES = Path(__file__).parent / "fixtures" / "loaders"
METAQA = FIXTURES / "metaqa-kb-sample.txt"
FREEBASE = FIXTURES / "freebase-rdf-sample.nt"
DBPEDIA = FIXTURES / "dbpedia"


def parse(plan: InputPlan, strict: bool = False) -> tuple[list[Record], IssueSink, ParseStats]:
    sink = IssueSink(strict=strict)
    stats = ParseStats()
    records: list[Record] = []
    for input_file in plan.files:
        sink.start_file(input_file.description)
        records.extend(input_file.parser(input_file.path, ParseContext(sink, stats)))
        sink.finish_file(str(input_file.path))
    return records, sink, stats


def facts(records: list[Record]) -> set[tuple[str, str, str]]:
    return {tuple(r) for r in records if isinstance(r, Fact)}  # type: ignore[misc]


def names(records: list[Record]) -> dict[str, str]:
    return {r.entity: r.name for r in records if isinstance(r, Label)}


# ----------------------------------------------------------------------------- MetaQA
def test_metaqa_lines_and_malformed_lines_with_file_and_line() -> None:
    records, sink, _ = parse(metaqa.plan([METAQA]))
    assert ("Kismet", "directed_by", "William Dieterle") in facts(records)
    assert ("Paris, Texas", "in_language", "English") in facts(records)
    assert ("Ünïcødé Fïlm", "has_tags", "café") in facts(records)
    assert len(records) == 13 and len(facts(records)) == 12  # line 7 repeats line 1
    assert [(i.line, i.reason) for i in sink.kept] == [
        (10, "expected 3 fields separated by '|', found 1"),
        (14, "expected 3 fields separated by '|', found 2"),
        (16, "expected 3 fields separated by '|', found 4"),
    ]
    assert all(i.file == str(METAQA) for i in sink.kept)
    assert sink.count == 3


def test_over_long_values_and_control_characters_are_skipped_lines(tmp_path: Path) -> None:
    kb = tmp_path / "kb.txt"
    lines = [
        "Kismet|directed_by|William Dieterle",
        "Kismet|written_by|" + "x" * 100_000,
        "\x00\x01|\x02\x03|\x04",
        "Kismet|has_tags|bell\x07",
        "Kismet|release_year|1944",
        "Caf\u00e9 \u00fcber|has_tags|\u65e5\u672c",  # accents and CJK are text, not controls
    ]
    kb.write_text("\n".join(lines) + "\n", encoding="utf-8")
    records, sink, _ = parse(metaqa.plan([kb]))
    assert facts(records) == {
        ("Kismet", "directed_by", "William Dieterle"),
        ("Kismet", "release_year", "1944"),
        ("Café über", "has_tags", "日本"),
    }
    assert [(i.file, i.line, i.reason) for i in sink.kept] == [
        (str(kb), 2, "value longer than 4000 bytes: the tail has 100,000 bytes"),
        (str(kb), 3, "control character in a value: U+0000 in the head"),
        (str(kb), 4, "control character in a value: U+0007 in the tail"),
    ]
    names_file = tmp_path / "names.txt"
    names_file.write_text("/m/01\tok\n/m/02\tbad\x00name\n", encoding="utf-8")
    ctx = ParseContext(IssueSink(), ParseStats())
    assert [r.name for r in freebase.parse_names(names_file, ctx)] == ["ok"]  # type: ignore[union-attr]
    assert [i.reason for i in ctx.sink.kept] == ["control character in a value: U+0000 in the name"]


def test_metaqa_strict_stops_at_the_first_malformed_line() -> None:
    with pytest.raises(KgqaError, match=r"metaqa-kb-sample.txt:10: expected 3 fields .*--strict"):
        parse(metaqa.plan([METAQA]), strict=True)


def test_metaqa_directory_resolves_to_the_kb(tmp_path: Path) -> None:
    shutil.copy(METAQA, tmp_path / "kb.txt")
    plan = metaqa.plan([tmp_path])
    assert plan.paths == [tmp_path / "kb.txt"] and plan.default_kg == "metaqa"
    with pytest.raises(KgqaError, match="no MetaQA KB in"):
        metaqa.plan([tmp_path / "kb.txt", FIXTURES])


def test_wrong_format_is_one_clear_error(tmp_path: Path) -> None:
    tsv = tmp_path / "train.txt"
    tsv.write_text("".join(f"/m/0{i}\t/film/film/genre\t/m/1{i}\n" for i in range(30)))
    with pytest.raises(KgqaError, match=r"does not look like a MetaQA kb.txt file"):
        parse(metaqa.plan([tsv]))
    short = tmp_path / "short.txt"
    short.write_text("just one line\n")
    with pytest.raises(
        KgqaError,
        match=r"short.txt does not look like a MetaQA kb.txt file .*: no line could be read \(line 1: ",
    ):
        parse(metaqa.plan([short]))
    with pytest.raises(KgqaError, match="file not found"):
        metaqa.plan([tmp_path / "missing.txt"])
    with pytest.raises(KgqaError, match="unknown source"):
        plan_input("wikidata", [tsv])


# ----------------------------------------------------------------------------- Freebase RDF dump
FREEBASE_FACTS = {
    ("m.0kismet", "film.film.directed_by", "m.0dieterle"),
    ("m.0kismet", "film.film.starring", "m.0cvt1"),
    ("m.0kismet", "common.topic.notable_types", "m.0jsg2m"),
    ("m.0cvt1", "film.performance.actor", "m.0dietrich"),
    ("m.0cvt1", "film.performance.film", "m.0kismet"),
    ("m.0cvt1", "film.performance.character", "m.0jamilla"),
    ("m.03_r3", "location.country.languages_spoken", "m.01428y"),
    ("m.03_r3", "location.country.official_language", "m.01428y"),
    ("m.01428y", "language.human_language.countries_spoken_in", "m.03_r3"),
    ("m.0cafe", "location.location.containedby", "m.052p7"),
    ("m.0nl", "common.topic.subject_of", "g.11b6ddq7_x"),
}
FREEBASE_NAMES = {
    "m.0kismet": "Kismet",
    "m.0dieterle": "William Dieterle",
    "m.0dietrich": "Marlene Dietrich",
    "m.0jamilla": "Jamilla",
    "m.0jsg2m": "Film",
    "m.03_r3": "Jamaica",
    "m.01428y": "Jamaican English",
    "m.0cafe": 'Café "Le Tab\tBar" \\ Montréal',
    "m.052p7": "Montréal",
    "m.0nl": "First line\nSecond line",
    "g.11b6ddq7_x": "\U0001f600 Emoji Topic",
    "m.0lonely": "Lonely Topic",
}


@pytest.fixture()
def freebase_gz(tmp_path: Path) -> Path:
    """The fixture as the dump ships: gzipped N-Triples without a .nt suffix."""
    target = tmp_path / "freebase-rdf-sample.gz"
    with gzip.open(target, "wb") as out:
        out.write(FREEBASE.read_bytes())
    return target


def test_freebase_rdf_dump_rules_escapes_and_malformed_lines(freebase_gz: Path) -> None:
    plan = freebase.plan([freebase_gz])
    assert (plan.format, plan.default_kg) == ("freebase-rdf", "freebase")
    records, sink, stats = parse(plan)
    assert facts(records) == FREEBASE_FACTS
    assert names(records) == FREEBASE_NAMES
    assert [(i.line, i.reason) for i in sink.kept] == [
        (21, "Unexpected escape character '\\q'"),
        (31, "Invalid IRI code point '\t'"),
    ]
    assert str(sink.kept[0]) == f"{freebase_gz}:21: Unexpected escape character '\\q'"
    assert stats.dropped == {
        "literal value": 5,
        "name not in English": 3,
        "object is not an entity": 3,
        "subject is schema, not an entity": 3,
        "predicate outside ns:": 1,
        "blank-node object": 1,
    }


def test_freebase_round_trip_to_the_dump_iris(freebase_gz: Path) -> None:
    """Every kept fact maps back to a statement of the dump, IRIs and all."""
    records, _, _ = parse(freebase.plan([freebase_gz]))
    dump = set()
    for line in FREEBASE.read_text(encoding="utf-8").splitlines():
        try:
            dump.update(
                (q.subject.value, q.predicate.value, q.object.value)
                for q in ox.parse(line.encode(), ox.RdfFormat.N_TRIPLES)
            )
        except SyntaxError:
            continue
    for head, relation, tail in facts(records):
        assert (freebase.NS + head, freebase.NS + relation, freebase.NS + tail) in dump


def test_fb15k_relation_paths_are_dotted() -> None:
    simple = "/location/country/form_of_government"
    cvt = "/people/person/spouse_s./people/marriage/type_of_union"
    assert freebase.fb15k_relation(simple) == "location.country.form_of_government"
    assert freebase.fb15k_relation(cvt) == "people.person.spouse_s..people.marriage.type_of_union"
    assert freebase.mid_from_path("/m/027rn") == "m.027rn" and freebase.mid_from_path("m.027rn") is None


def test_fb15k_directory_with_names(tmp_path: Path) -> None:
    directory = tmp_path / "fb15k-237"
    (directory / "names_kgbert").mkdir(parents=True)
    (directory / "train.txt").write_text(
        "/m/027rn\t/location/country/form_of_government\t/m/06cx9\n"
        "/m/027rn\t/location/country/form_of_government\t/m/06cx9\n"
        "/m/0bad\tnot-a-path\t/m/06cx9\n"
    )
    (directory / "valid.txt").write_text("/m/06cx9\t/a/b/c./d/e/f\t/m/027rn\n")
    (directory / "names_kgbert" / "entity2text.txt").write_text(
        "/m/027rn\tDominican Republic\n/m/06cx9\tRepublic\n/m/0zz\tUnused\n"
    )
    plan = freebase.plan([directory])
    assert (plan.format, plan.default_kg) == ("fb15k", "fb15k237")
    records, sink, _ = parse(plan)
    assert facts(records) == {
        ("m.027rn", "location.country.form_of_government", "m.06cx9"),
        ("m.06cx9", "a.b.c..d.e.f", "m.027rn"),
    }
    assert names(records) == {"m.027rn": "Dominican Republic", "m.06cx9": "Republic", "m.0zz": "Unused"}
    assert [(Path(i.file).name, i.line) for i in sink.kept] == [("train.txt", 3)]


def test_question_triples_json(tmp_path: Path) -> None:
    path = tmp_path / "subgraphrag_gpt_triples_webqsp_test.json"
    path.write_text(
        json.dumps(
            {
                "WebQTest-0": [
                    ["Jamaica", "location.country.languages_spoken", "Jamaican English"],
                    ["Jamaica", "Nova Scotia,location.location.containedby", "Canada"],
                    ["m.0cvt", "film.performance.actor", "Jamaica"],
                ],
                "WebQTest-1": [["only", "two"]],
            }
        )
    )
    plan = freebase.plan([tmp_path])
    assert (plan.format, plan.default_kg) == ("subgraphrag-json", "webqsp")
    records, sink, _ = parse(plan)
    assert facts(records) == {
        ("Jamaica", "location.country.languages_spoken", "Jamaican English"),
        ("m.0cvt", "film.performance.actor", "Jamaica"),
    }
    assert [i.line for i in sink.kept] == ["WebQTest-0[1]", "WebQTest-1[0]"]
    assert "is not a Freebase property id" in sink.kept[0].reason


# ----------------------------------------------------------------------------- DBpedia
def test_dbpedia_ntriples_and_turtle_labels() -> None:
    plan = dbpedia.plan([DBPEDIA])
    records, sink, stats = parse(plan)
    dbr = "http://dbpedia.org/resource/"
    got = facts(records)
    assert (dbr + "Albert_Einstein", "dbo:birthPlace", dbr + "Ulm") in got
    assert (dbr + "ETH_Zurich", "dbo:city", dbr + "Zürich") in got  # \u00FC in an IRI
    assert (dbr + "Berlin", "dbp:leaderName", dbr + "Kai_Wegner") in got
    assert (dbr + "Berlin", "http://example.org/ontology/twinnedWith", dbr + "Paris") in got
    assert (dbr + "AC/DC", "dbo:hometown", dbr + "Sydney") in got
    assert (dbr + "Germany", "dbo:currency", dbr + "Euro") in got  # the line after a broken one survives
    assert len(got) == 16  # Berlin dbo:country Germany is stated twice
    labels = names(records)
    assert labels[dbr + "Caf%C3%A9_de_Flore"] == 'Café de Flore "Les Deux" \\ Saint-Germain'
    assert labels[dbr + "ETH_Zurich"] == "ETH Zurich\n(Swiss Federal Institute of Technology)"
    assert labels[dbr + "Zürich"] == "Zürich" and labels[dbr + "Paris"] == "Paris"
    assert dbr + "France" not in labels and dbr + "Euro" not in labels
    assert [(Path(i.file).name, i.line) for i in sink.kept] == [("mappingbased-objects_lang=en.nt", 21)]
    assert stats.dropped == {
        "label not in English": 4,
        "link that is not a fact": 2,
        "rdf:type statement": 1,
        "literal value": 1,
    }


def test_dbpedia_relation_names_recover_the_iri_exactly() -> None:
    for iri in (
        "http://dbpedia.org/ontology/birthPlace",
        "http://dbpedia.org/property/leaderName",
        "http://xmlns.com/foaf/0.1/based_near",
        "http://example.org/ontology/twinnedWith",
        "http://dbpedia.org/ontology/",
        "urn:x:dbo:thing",
    ):
        assert dbpedia.relation_iri(dbpedia.relation_name(iri)) == iri
    assert dbpedia.relation_name("http://dbpedia.org/ontology/birthPlace") == "dbo:birthPlace"
    assert dbpedia.default_name("http://dbpedia.org/resource/Caf%C3%A9_de_Flore") == "Café de Flore"
    assert dbpedia.default_name("http://dbpedia.org/resource/Elsa_Einstein") == "Elsa Einstein"
    assert dbpedia.relation_text("dbo:birthPlace") == "birth place"
    assert dbpedia.relation_text("http://example.org/ontology/twinnedWith") == "twinned with"


def test_relation_words() -> None:
    # what the loaders store as a relation's text: its name in words, dotted domain included
    assert name_words("directed_by") == "directed by"
    assert name_words("location.country.languages_spoken") == "location country languages spoken"
    assert (
        name_words("people.person.spouse_s..people.marriage.type_of_union")
        == "people person spouse s people marriage type of union"
    )


def test_spool_escaping_round_trips() -> None:
    for text in ["plain", "tab\there", "new\nline", "back\\slash\\t", "\r\n\t\\", "ünï"]:
        escaped = escape(text)
        assert "\t" not in escaped and "\n" not in escaped
        assert unescape(escaped) == text


def test_bulk_csvs_deduplicate_and_name_like_the_online_path(tmp_path: Path) -> None:
    stager = BulkStager(tmp_path)
    for record in [
        Label("b", "first"),
        Fact("a", "r", "b"),
        Fact("a", "r", "b"),
        Fact("b", "r2", "c\nd"),
        Label("b", "second"),
        Label("zzz", "no facts"),
        Label("a", 'A "quoted"'),
    ]:
        stager.add(record)
    stager.close()
    files = prepare(tmp_path, "kg1", lambda i: f"default {i}", Progress(enabled=False))
    assert (files.entities, files.relationships, files.labels_without_facts) == (3, 2, 1)
    assert files.multiline
    import csv

    with open(files.entities_csv, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    assert rows == [
        ["id:ID(Entity)", "kg", "name"],
        ["a", "kg1", 'A "quoted"'],
        ["b", "kg1", "second"],
        ["c\nd", "kg1", "default c\nd"],
    ]
    with open(files.relationships_csv, newline="", encoding="utf-8") as fh:
        rels = list(csv.reader(fh))
    assert rels == [[":START_ID(Entity)", ":TYPE", ":END_ID(Entity)"], ["a", "r", "b"], ["b", "r2", "c\nd"]]


def test_progress_bars_show_rate_and_eta() -> None:
    import io
    import re

    from rich.console import Console

    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, width=140)
    with Progress(enabled=True, console=console) as progress:
        with progress.step("reading + writing", total=1000, unit="triples") as step:
            step.update(500, items=5000, force=True)
    text = re.sub(r"\x1b\[[0-9;?]*[a-zA-Z]", "", buffer.getvalue())
    assert "reading + writing" in text and "5,000 triples" in text and "/s" in text and "eta" in text
    assert not Progress(console=Console(file=io.StringIO())).enabled  # no terminal: no bars
