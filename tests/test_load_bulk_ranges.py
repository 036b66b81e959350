"""The bulk path's parallel staging: byte ranges cut at line boundaries, parsed in worker processes, give the
same records, the same CSVs and the same malformed lines (file:line, in file order) as one sequential parse.

No database: these exercise loaders/bulk/ and loaders/inputs.py on the parser fixtures, with ranges a few
hundred bytes long so that every fixture is cut in many places, mid-line included.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pyoxigraph as ox
import pytest
from kgqa.core.errors import KgqaError
from kgqa.loaders import bulk, freebase, metaqa
from kgqa.loaders.inputs import count_lines, line_ranges, open_dump
from kgqa.loaders.plan import InputPlan
from kgqa.loaders.progress import Progress
from kgqa.loaders.records import Fact, Issue, IssueSink, Label, ParseStats

from tests.test_load_parsers import FREEBASE, METAQA, parse

QUIET = Progress(enabled=False)


def _lines_of_ranges(path: Path, ranges: list[tuple[int, int]]) -> list[bytes]:
    lines: list[bytes] = []
    for start, end in ranges:
        with open_dump(path, start, end) as (stream, counter):
            lines.extend(stream)
            assert counter.bytes_read == end - start
    return lines


@pytest.mark.parametrize("parts", [1, 2, 3, 7, 50, 10_000])
def test_line_ranges_cover_the_file_and_never_cut_a_line(tmp_path: Path, parts: int) -> None:
    path = tmp_path / "x.txt"
    path.write_bytes(b"short\n" + b"a much longer line " * 20 + b"\n\nx\n" + b"last line, no newline")
    ranges = line_ranges(path, parts)
    data = path.read_bytes()
    assert ranges[0][0] == 0 and ranges[-1][1] == len(data)
    assert all(a < b for a, b in ranges) and all(
        b == c for (_, b), (c, _) in zip(ranges, ranges[1:], strict=False)
    )
    assert all(data[end - 1 : end] == b"\n" for _, end in ranges[:-1])  # every cut follows a newline
    assert _lines_of_ranges(path, ranges) == data.splitlines(keepends=True)
    assert len(ranges) <= parts


def test_line_ranges_of_an_empty_file_and_a_cut_inside_a_long_line(tmp_path: Path) -> None:
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    assert line_ranges(empty, 4) == []
    path = tmp_path / "long.txt"
    path.write_bytes(b"x" * 1000 + b"\nend\n")
    assert line_ranges(path, 2) == [(0, 1001), (1001, 1005)]  # the middle falls in line 1: cut after it
    assert line_ranges(path, 2, min_bytes=5000) == [(0, 1005)]


def test_count_lines_gives_the_line_number_a_range_starts_at(tmp_path: Path) -> None:
    path = tmp_path / "x.txt"
    path.write_bytes(b"a\nb\nc\nd\n")
    assert [count_lines(path, start) + 1 for start, _ in line_ranges(path, 4)] == [1, 2, 3, 4]


def test_a_compressed_file_is_not_read_by_range(tmp_path: Path) -> None:
    path = tmp_path / "x.nt.gz"
    path.write_bytes(b"")
    with pytest.raises(KgqaError, match="read whole"), open_dump(path, 10, 20):
        pass


def _staged(
    plan: InputPlan, tmp_path: Path, parallel: bool, range_bytes: int, strict: bool = False
) -> tuple[bulk.BulkFiles, IssueSink, ParseStats, int]:
    reported: list[Issue] = []
    sink, stats = IssueSink(strict=strict, on_issue=reported.append), ParseStats()
    staging = tmp_path / ("parallel" if parallel else "sequential")
    staged = bulk.stage(
        plan, staging, sink, stats, QUIET, parallel=parallel, range_bytes=range_bytes, partitions=3
    )
    ranges = len(staged.prefixes)
    try:
        files = bulk.finish(staged, "kg1", plan.default_name, QUIET)
    finally:
        bulk.close_pool(staged)
    assert reported == sink.kept  # every kept issue was reported, in the same order
    return files, sink, stats, ranges


def _rows(files: bulk.BulkFiles) -> tuple[list[list[str]], list[list[str]]]:
    entities = list(bulk.iter_rows([files.entities_csv, *files.entity_parts]))
    relationships = list(bulk.iter_rows([files.relationships_csv, *files.relationship_parts]))
    assert entities[0] == ["id:ID(Entity)", "kg", "name"]
    assert relationships[0] == [":START_ID(Entity)", ":TYPE", ":END_ID(Entity)"]
    return sorted(entities[1:]), sorted(relationships[1:])


@pytest.mark.parametrize("range_bytes", [97, 400])
def test_freebase_by_ranges_matches_one_parse_with_file_and_line(tmp_path: Path, range_bytes: int) -> None:
    plan = freebase.plan([FREEBASE])
    assert plan.files[0].line_based
    records, expected, _ = parse(plan)
    files, sink, stats, ranges = _staged(plan, tmp_path, parallel=True, range_bytes=range_bytes)
    assert ranges > 3  # the fixture was cut, mid-line as well (the ranges are not whole lines long)
    assert [(i.file, i.line, i.reason) for i in sink.kept] == [
        (i.file, i.line, i.reason) for i in expected.kept
    ]
    assert [i.line for i in sink.kept] == [21, 31]
    assert sink.count == expected.count == 2
    assert stats.facts == sum(type(r) is Fact for r in records)
    assert stats.labels == sum(type(r) is Label for r in records)
    assert stats.dropped == freebase_dropped()

    one, _, _, _ = _staged(plan, tmp_path, parallel=False, range_bytes=range_bytes)
    assert _rows(files) == _rows(one)
    entities, relationships = _rows(files)
    assert {tuple(r) for r in relationships} == {tuple(f) for f in records if type(f) is Fact}
    names = {r.entity: r.name for r in records if type(r) is Label}  # the last label wins
    assert all(name == names.get(entity, entity) for entity, kg, name in entities)
    assert files.relation_counts == one.relation_counts
    assert sum(files.relation_counts.values()) == files.relationships == len(relationships)


def freebase_dropped() -> dict[str, int]:
    _, _, stats = parse(freebase.plan([FREEBASE]))
    return dict(stats.dropped)


def test_metaqa_by_ranges_reports_each_malformed_line_once_at_its_line(tmp_path: Path) -> None:
    plan = metaqa.plan([METAQA])
    files, sink, stats, ranges = _staged(plan, tmp_path, parallel=True, range_bytes=60)
    assert ranges > 5
    assert [(i.line, i.reason) for i in sink.kept] == [
        (10, "expected 3 fields separated by '|', found 1"),
        (14, "expected 3 fields separated by '|', found 2"),
        (16, "expected 3 fields separated by '|', found 4"),
    ]
    assert all(str(i).startswith(f"{METAQA}:") for i in sink.kept)
    assert (stats.facts, files.relationships) == (13, 12)  # line 7 repeats line 1


def test_strict_by_ranges_stops_at_the_first_malformed_line_in_file_order(tmp_path: Path) -> None:
    with pytest.raises(KgqaError, match=rf"^{METAQA}:10: expected 3 fields .* \(--strict stops"):
        _staged(metaqa.plan([METAQA]), tmp_path, parallel=True, range_bytes=60, strict=True)


def test_a_file_of_the_wrong_format_is_still_one_error_by_ranges(tmp_path: Path) -> None:
    wrong = tmp_path / "kb.txt"
    wrong.write_text("".join(f"line {n} without separators\n" for n in range(40)))
    with pytest.raises(KgqaError, match="does not look like a MetaQA"):
        _staged(metaqa.plan([wrong]), tmp_path, parallel=True, range_bytes=80)


def test_partitioned_csvs_quote_and_keep_line_breaks(tmp_path: Path) -> None:
    stager = bulk.PartitionStager(tmp_path, "r0000", 3)
    for record in [
        Fact("a", "r", "b"),
        Fact("a", "r", "b"),
        Fact("b", "r2", "c\nd"),
        Fact('q"1', "r,2", "b"),
        Label("b", "first"),
        Label("b", "second"),
        Label("zzz", "no facts"),
        Label("a", 'A "quoted", named'),
    ]:
        stager.add(record)
    stager.close()
    counts = [dict(c) for c in stager.relation_counts]
    staged = bulk.StagedInput(tmp_path, ["r0000"], 3, stager.multiline, stager.relation_counts, 1)
    files = bulk.finish(staged, "kg1", lambda i: f"default {i}", QUIET)
    assert files.multiline and (files.entities, files.relationships, files.labels_without_facts) == (4, 3, 1)
    assert files.relation_counts == {"r": 1, "r2": 1, "r,2": 1}  # the duplicate counted once
    assert sum(sum(c.values()) for c in counts) == 4
    entities, relationships = _rows(files)
    assert entities == [
        ["a", "kg1", 'A "quoted", named'],
        ["b", "kg1", "second"],
        ["c\nd", "kg1", "default c\nd"],
        ['q"1', "kg1", 'default q"1'],
    ]
    assert relationships == [["a", "r", "b"], ["b", "r2", "c\nd"], ['q"1', "r,2", "b"]]
    with open(files.relationships_csv, newline="", encoding="utf-8") as fh:
        assert next(csv.reader(fh)) == [":START_ID(Entity)", ":TYPE", ":END_ID(Entity)"]
    args = bulk.import_args(files, tmp_path / "report")
    assert "--multiline-fields=true" in args and args[-1] == "neo4j"
    assert any(a.startswith("--nodes=Entity=") and a.count(",") == len(files.entity_parts) for a in args)


def test_the_fast_dump_reader_agrees_with_pyoxigraph_line_by_line() -> None:
    lines = FREEBASE.read_bytes().splitlines(keepends=True)
    ns = b"<http://rdf.freebase.com/ns/"
    name = ns + b"m.0a>\t" + ns + b"type.object.name>\t"
    fact = ns + b"m.0a>\t" + ns + b"a.b>\t"
    extra = [
        name + b'"caf\xc3\xa9 \xc2\x85"@en\t.\n',  # a C1 control character
        name + b'""@en\t.\n',
        name + b'"x"\t.\n',
        name + b'"Bonjour"@fr\t.\n',
        name + ns + b"m.0b>\t.\n",
        ns + b"film.film>\t" + ns + b'type.object.name>\t"F"@en\t.\n',
        ns + b"m.0a> " + ns + b"a.b> " + ns + b"m.0c>.\r\n",
        fact + b'"1999"^^<http://www.w3.org/2001/XMLSchema#gYear>\t.\n',
        fact + ns + b"m." + b"x" * 5000 + b">\t.\n",
        name + b'"x\xff"@en\t.\n',  # not UTF-8
    ]
    read_fast = 0
    for line in lines + extra:
        fast = freebase.fast_rdf_record(line)
        if fast is None:
            continue
        read_fast += 1
        quads = list(ox.parse(line, ox.RdfFormat.N_TRIPLES))
        assert len(quads) == 1, line
        q = quads[0]
        assert fast == freebase.rdf_record(q.subject, q.predicate, q.object), line
    assert read_fast >= len(lines) - 12  # escapes, blank nodes and malformed lines go to pyoxigraph
