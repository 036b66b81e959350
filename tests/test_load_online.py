"""The online write path against the real test server: round trips, idempotence, recovery, CLI errors.

Every KG these tests create is named ``t_load_*`` and dropped again; other KGs in the shared test database
are never touched.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pyoxigraph as ox
import pytest
from kgqa.graph.kg import drop_kg, list_kgs
from kgqa.loaders import dbpedia
from kgqa.loaders.indexing import build_indexes
from kgqa.loaders.load_types import LoadOptions
from kgqa.loaders.pipeline import load
from kgqa.loaders.schema import index_states

from tests.conftest import run_kgqa
from tests.fixtures.loaders.helpers import graph_of, hashed_embed
from tests.test_load_parsers import DBPEDIA, FREEBASE, FREEBASE_FACTS, FREEBASE_NAMES, METAQA

PREFIX = "t_load_"


@pytest.fixture(scope="module", autouse=True)
def clean(driver: Any) -> Any:
    def drop_all() -> None:
        for row in driver.execute_query(
            "MATCH (k:KG) WHERE k.name STARTS WITH $p RETURN k.name AS n", p=PREFIX
        ).records:
            drop_kg(driver, row["n"])

    drop_all()
    yield
    drop_all()


def _load(driver: Any, source: str, path: Path, kg: str, **kw: Any) -> Any:
    return load(LoadOptions(source=source, paths=[path], kg=kg, **kw), embedder=hashed_embed, driver=driver)


def test_freebase_rdf_fixture_round_trips(driver: Any, tmp_path: Path) -> None:
    dump = tmp_path / "freebase-rdf-sample.gz"
    dump.write_bytes(gzip.compress(FREEBASE.read_bytes()))
    summary = _load(driver, "freebase", dump, PREFIX + "fb")
    assert (summary.entities, summary.relationships, summary.relations, summary.skipped) == (12, 11, 11, 2)
    assert summary.dropped["name of an entity without facts"] == 1  # m.0lonely
    graph = graph_of(driver, PREFIX + "fb")
    assert set(graph["triples"]) == FREEBASE_FACTS and len(graph["triples"]) == 11
    expected_names = {k: v for k, v in FREEBASE_NAMES.items() if k != "m.0lonely"} | {"m.0cvt1": "m.0cvt1"}
    assert {i: n for i, (n, _) in graph["entities"].items()} == expected_names
    assert all(e is not None and len(e) == 384 for _, e in graph["entities"].values())
    assert graph["relations"]["location.country.languages_spoken"][:2] == (
        1,
        "location country languages spoken",
    )
    assert all(e is not None for _, _, e in graph["relations"].values())
    assert graph["kg"]["status"] == "complete" and graph["kg"]["source"] == "freebase"


def test_dbpedia_fixture_round_trips(driver: Any) -> None:
    summary = _load(driver, "dbpedia", DBPEDIA, PREFIX + "dbp")
    assert summary.skipped == 1
    graph = graph_of(driver, PREFIX + "dbp")
    got = {(h, dbpedia.relation_iri(r), t) for h, r, t in graph["triples"]}
    expected = set()
    for path in sorted(DBPEDIA.iterdir()):
        fmt = ox.RdfFormat.TURTLE if path.suffix == ".ttl" else ox.RdfFormat.N_TRIPLES
        for line in path.read_bytes().splitlines() if fmt == ox.RdfFormat.N_TRIPLES else [path.read_bytes()]:
            try:
                quads = list(ox.parse(line, fmt))
            except SyntaxError:
                continue
            for q in quads:
                p = q.predicate.value
                if (
                    isinstance(q.object, ox.NamedNode)
                    and p != dbpedia.RDF_TYPE
                    and p not in dbpedia.NOT_FACTS
                ):
                    expected.add((q.subject.value, p, q.object.value))
    assert got == expected and len(graph["triples"]) == len(expected) == 16
    dbr = "http://dbpedia.org/resource/"
    names = {i: n for i, (n, _) in graph["entities"].items()}
    assert names[dbr + "Caf%C3%A9_de_Flore"] == 'Café de Flore "Les Deux" \\ Saint-Germain'
    assert names[dbr + "Elsa_Einstein"] == "Elsa Einstein"  # no label: from the IRI
    assert names[dbr + "ETH_Zurich"] == "ETH Zurich\n(Swiss Federal Institute of Technology)"
    assert dbr + "Z%C3%BCrich" not in names and names[dbr + "Zürich"] == "Zürich"
    assert "http://example.org/ontology/twinnedWith" in graph["relations"]


def test_reloading_is_idempotent_and_skips_unchanged_input(driver: Any) -> None:
    kg = PREFIX + "mq"
    first = _load(driver, "metaqa", METAQA, kg)
    assert (first.entities, first.relationships, first.relations, first.skipped) == (15, 12, 7, 3)
    again = _load(driver, "metaqa", METAQA, kg)
    assert again.already_loaded and (again.entities, again.relationships) == (15, 12)
    forced = _load(driver, "metaqa", METAQA, kg, force=True)
    assert not forced.already_loaded and (forced.entities, forced.relationships, forced.relations) == (
        15,
        12,
        7,
    )
    assert forced.embedded_entities == 0  # names unchanged: embeddings kept
    duplicates = driver.execute_query(
        "MATCH (a:Entity {kg: $kg})-[r]->(b) WITH a, type(r) AS t, b, count(*) AS n WHERE n > 1 "
        "RETURN count(*) AS dup",
        kg=kg,
    ).records[0]["dup"]
    assert duplicates == 0
    with pytest.raises(Exception, match="already holds a metaqa graph"):
        _load(driver, "dbpedia", DBPEDIA, kg)


def test_a_second_kg_leaves_the_first_alone(driver: Any) -> None:
    _load(driver, "metaqa", METAQA, PREFIX + "iso_a")
    before = graph_of(driver, PREFIX + "iso_a")
    _load(driver, "metaqa", METAQA, PREFIX + "iso_b")
    assert graph_of(driver, PREFIX + "iso_a") == before
    assert len(graph_of(driver, PREFIX + "iso_b")["triples"]) == 12


def test_kgs_listing_and_index_rebuild(driver: Any) -> None:
    kg = PREFIX + "idx"
    _load(driver, "metaqa", METAQA, kg, embeddings=False)
    row = next(r for r in list_kgs(driver) if r["name"] == kg)
    assert row["embedding_model"] is None and row["status"] == "complete"
    assert (
        driver.execute_query(
            "MATCH (e:Entity {kg: $kg}) WHERE e.embedding IS NOT NULL RETURN count(e) AS n", kg=kg
        ).records[0]["n"]
        == 0
    )
    reports = build_indexes(kg=kg, embedder=hashed_embed, driver=driver)
    assert [(r.kg, r.entities, r.relations) for r in reports] == [(kg, 15, 7)]
    states = {r["name"]: r["state"] for r in index_states(driver)}
    assert states["entity_embedding"] == states["entity_name"] == states["relation_embedding"] == "ONLINE"
    result = run_kgqa("kgs", "--json")
    assert result.returncode == 0, result.stderr
    listed = next(r for r in json.loads(result.stdout) if r["name"] == kg)
    for key in (
        "name",
        "source",
        "entities",
        "relationships",
        "relations",
        "embedding_model",
        "loaded_at",
        "status",
    ):
        assert key in listed
    assert (listed["entities"], listed["relationships"], listed["relations"]) == (15, 12, 7)
    assert listed["embedding_model"] == "all-MiniLM-L6-v2"


def _metaqa_file(path: Path, films: int) -> tuple[int, int]:
    """A MetaQA-shaped KB: (distinct entities, distinct triples)."""
    lines = []
    for i in range(films):
        lines += [
            f"Film {i}|directed_by|Director {i % 500}",
            f"Film {i}|starred_actors|Actor {i % 3000}",
            f"Film {i}|release_year|{1900 + i % 120}",
            f"Film {i}|has_genre|Genre {i % 20}",
        ]
    path.write_text("\n".join(lines) + "\n")
    return films + 500 + 3000 + 120 + 20, len(lines)


def test_an_interrupted_load_completes_when_run_again(
    driver: Any, tmp_path: Path, neo4j_env: dict[str, str]
) -> None:
    kg = PREFIX + "kill"
    kb = tmp_path / "kb.txt"
    entities, triples = _metaqa_file(kb, 12_000)
    args = [
        sys.executable,
        "-m",
        "kgqa.cli",
        "load",
        "metaqa",
        "--path",
        str(kb),
        "--kg",
        kg,
        "--batch-size",
        "500",
        "--no-embeddings",
    ]
    proc = subprocess.Popen(
        args, env={**os.environ, **neo4j_env}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + 300
    written = 0
    while time.monotonic() < deadline and proc.poll() is None:
        written = driver.execute_query(
            "MATCH (:Entity {kg: $kg})-[r]->() RETURN count(r) AS n", kg=kg
        ).records[0]["n"]
        if written >= 2000:
            break
        time.sleep(0.2)
    assert proc.poll() is None, (
        "the load finished before it could be interrupted: " + proc.stderr.read().decode()
    )
    proc.kill()
    proc.wait()
    partial = next(r for r in list_kgs(driver) if r["name"] == kg)
    assert partial["status"] == "loading" and 0 < partial["relationships"] < triples
    # a half-loaded KG does not answer from what it holds so far
    line = _one_line_error(run_kgqa("ask", "who directed film 1", "--kg", kg, "--method", "sgrag"))
    assert f"KG '{kg}' is not completely loaded (status loading)" in line
    result = run_kgqa("load", "metaqa", "--path", str(kb), "--kg", kg, "--no-embeddings", "--json")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert (summary["entities"], summary["relationships"], summary["status"]) == (
        entities,
        triples,
        "complete",
    )
    unique = driver.execute_query(
        "MATCH (a:Entity {kg: $kg})-[r]->(b) "
        "RETURN count(DISTINCT [a.id, type(r), b.id]) AS n, count(r) AS all",
        kg=kg,
    ).records[0]
    assert unique["n"] == unique["all"] == triples


def test_a_failed_load_leaves_the_kg_as_it_was(driver: Any, tmp_path: Path) -> None:
    from kgqa.core.errors import BadInput, KgqaError

    good = tmp_path / "good.txt"
    _metaqa_file(good, 50)
    bad_first = tmp_path / "bad_first.txt"
    bad_first.write_text("not a fact\n" + good.read_text())
    bad_late = tmp_path / "bad_late.txt"
    bad_late.write_text(good.read_text() + "not a fact\n")

    # a new KG that fails half way (--strict, after batches were written) leaves no trace
    new = PREFIX + "failed_new"
    with pytest.raises(KgqaError, match="bad_late.txt:201:"):
        _load(driver, "metaqa", bad_late, new, strict=True, batch_size=20)
    assert new not in {r["name"] for r in list_kgs(driver)}
    left = driver.execute_query("MATCH (e:Entity {kg: $kg}) RETURN count(e) AS n", kg=new).records
    assert left[0]["n"] == 0

    # a complete KG whose reload fails before writing anything keeps its node: complete, same counts
    kg = PREFIX + "failed_reload"
    _load(driver, "metaqa", good, kg)
    before = next(r for r in list_kgs(driver) if r["name"] == kg)
    with pytest.raises(KgqaError, match="bad_first.txt:1:"):
        _load(driver, "metaqa", bad_first, kg, strict=True, force=True)
    assert next(r for r in list_kgs(driver) if r["name"] == kg) == before

    # one that got part of the reload says so, and a rerun of a good input completes it
    with pytest.raises(BadInput, match="bad_late.txt:201:.*now holds part of this load"):  # still bad input
        _load(driver, "metaqa", bad_late, kg, strict=True, force=True, batch_size=20)
    assert next(r for r in list_kgs(driver) if r["name"] == kg)["status"] == "loading"
    assert _load(driver, "metaqa", good, kg, force=True).status == "complete"


# ----------------------------------------------------------------------------- the CLI's one-line errors
def _one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode != 0
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("kgqa: error: ")
    return lines[0]


def test_cli_strict_missing_file_wrong_format(neo4j_env: dict[str, str], tmp_path: Path) -> None:
    line = _one_line_error(
        run_kgqa(
            "load", "metaqa", "--path", str(METAQA), "--kg", PREFIX + "strict", "--strict", "--no-embeddings"
        )
    )
    assert f"{METAQA}:10: expected 3 fields" in line and "--strict" in line
    line = _one_line_error(run_kgqa("load", "metaqa", "--path", str(tmp_path / "nope.txt")))
    assert "file not found" in line and "nope.txt" in line
    line = _one_line_error(run_kgqa("load", "metaqa", "--path", str(FREEBASE), "--kg", PREFIX + "wrong"))
    assert "does not look like a MetaQA kb.txt file" in line
    line = _one_line_error(run_kgqa("load", "dbpedia", "--path", str(METAQA)))
    assert "not a DBpedia dump file" in line


def test_cli_reports_skipped_lines_and_a_summary(neo4j_env: dict[str, str]) -> None:
    result = run_kgqa("load", "metaqa", "--path", str(METAQA), "--kg", PREFIX + "cli", "--no-embeddings")
    assert result.returncode == 0, result.stderr
    assert f"kgqa: skipped {METAQA}:10: expected 3 fields separated by '|', found 1" in result.stderr
    assert f"{METAQA}:14:" in result.stderr and f"{METAQA}:16:" in result.stderr
    for label, value in (
        ("entities", "15"),
        ("relationships", "12"),
        ("relations", "7"),
        ("skipped lines", "3"),
    ):
        assert any(
            line.split()[-1] == value and line.strip().startswith(label)
            for line in result.stdout.splitlines()
        ), result.stdout
    assert "time" in result.stdout


def test_cli_unreachable_server(tmp_path: Path) -> None:
    env = {"NEO4J_URI": "bolt://127.0.0.1:1", "NEO4J_USER": "neo4j", "NEO4J_PASSWORD": "x"}
    line = _one_line_error(run_kgqa("load", "metaqa", "--path", str(METAQA), env=env))
    assert "cannot reach Neo4j at bolt://127.0.0.1:1" in line and not line.endswith(":")
    env["NEO4J_URI"] = "notaurl://x"
    line = _one_line_error(run_kgqa("kgs", env=env))
    assert "NEO4J_URI 'notaurl://x' is not a Neo4j address" in line and "bolt://" in line
    env = {"KGQA_HOME": str(tmp_path), "KGQA_BOLT_PORT": "7999"}
    line = _one_line_error(run_kgqa("kgs", env={**env, "NEO4J_URI": ""}))
    assert "server is not running" in line
