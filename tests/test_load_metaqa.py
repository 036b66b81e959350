"""The real datasets: all of MetaQA, FB15k-237 with names, WebQSP's per-question triples (../shared/data).

Marked slow (a few minutes). KG ``metaqa`` is left loaded for the rest of the suite; ``fb15k237`` and
``webqsp`` are dropped again unless they were there before this module ran. MetaQA is loaded last, so that it
stays the most recently loaded KG (the default of `kgqa ask`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from kgqa.graph.kg import drop_kg, kg_info

from tests.conftest import run_kgqa

pytestmark = pytest.mark.slow


def _load(*args: str) -> dict[str, Any]:
    result = run_kgqa("load", *args, "--json", timeout=1800)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout)


def _kgs() -> dict[str, dict[str, Any]]:
    result = run_kgqa("kgs", "--json")
    assert result.returncode == 0, result.stderr
    return {row["name"]: row for row in json.loads(result.stdout)}


@pytest.fixture()
def temporary_kg(driver: Any, request: pytest.FixtureRequest) -> Any:
    name = request.param
    existed = kg_info(driver, name) is not None
    yield name
    if not existed:
        drop_kg(driver, name)


@pytest.mark.parametrize("temporary_kg", ["fb15k237"], indirect=True)
def test_fb15k237_loads_with_names(temporary_kg: str, shared_data: Path, driver: Any) -> None:
    directory = shared_data / "fb15k-237"
    triples = set()
    for split in ("train.txt", "valid.txt", "test.txt"):
        triples.update(line for line in (directory / split).read_text().splitlines() if line.strip())
    summary = _load("freebase", "--path", str(directory), "--no-embeddings")
    assert summary["kg"] == temporary_kg and summary["format"] == "fb15k"
    row = _kgs()[temporary_kg]
    assert (row["entities"], row["relationships"], row["relations"]) == (14_541, len(triples), 237)
    unnamed = driver.execute_query(
        "MATCH (e:Entity {kg: $kg}) WHERE e.name = e.id RETURN count(e) AS n", kg=temporary_kg
    ).records[0]["n"]
    assert unnamed == 0
    named = driver.execute_query(
        "MATCH (e:Entity {kg: $kg, id: 'm.06rf7'}) RETURN e.name AS name", kg=temporary_kg
    ).records
    assert named[0]["name"] == "Schleswig-Holstein"


@pytest.mark.parametrize("temporary_kg", ["webqsp"], indirect=True)
def test_webqsp_question_triples_load_and_jamaica_is_found(
    temporary_kg: str, shared_data: Path, driver: Any
) -> None:
    path = shared_data / "webqsp" / "subgraphrag_gpt_triples_webqsp_test.json"
    summary = _load("freebase", "--path", str(path))
    assert summary["kg"] == temporary_kg and summary["skipped"] > 0  # GPT-garbled relations are reported
    data = json.loads(path.read_text())
    assert summary["relationships"] <= len({tuple(t) for triples in data.values() for t in triples})
    assert summary["relationships"] > 6000 and summary["entities"] > 5000
    exact = driver.execute_query(
        "MATCH (e:Entity {kg: $kg, name: 'Jamaica'}) RETURN e.id AS id", kg=temporary_kg
    ).records
    assert [r["id"] for r in exact] == ["Jamaica"]
    hits = driver.execute_query(
        "CALL db.index.fulltext.queryNodes('entity_name', 'jamaica') YIELD node, score "
        "WHERE node.kg = $kg RETURN node.name AS name ORDER BY score DESC LIMIT 5",
        kg=temporary_kg,
    ).records
    assert hits and hits[0]["name"] == "Jamaica"
    languages = driver.execute_query(
        "MATCH (:Entity {kg: $kg, id: 'Jamaica'})-[r:`location.country.languages_spoken`]->(l) "
        "RETURN collect(l.name) AS names",
        kg=temporary_kg,
    ).records[0]["names"]
    assert "Jamaican English" in languages


def test_all_of_metaqa(shared_data: Path, driver: Any) -> None:
    data = shared_data / "metaqa"
    first = _load("metaqa", "--path", str(data))
    print(f"\nMetaQA load: {json.dumps({k: first[k] for k in ('seconds', 'phases', 'already_loaded')})}")
    row = _kgs()["metaqa"]
    assert (row["entities"], row["relationships"], row["relations"], row["status"]) == (
        43_234,
        133_582,
        9,
        "complete",
    )
    assert row["embedding_model"] == "all-MiniLM-L6-v2"
    again = _load("metaqa", "--path", str(data), "--force")  # every MERGE once more over the loaded graph
    assert not again["already_loaded"] and again["embedded_entities"] == 0
    row = _kgs()["metaqa"]
    assert (row["entities"], row["relationships"], row["relations"]) == (43_234, 133_582, 9)
    states = {r["name"]: r["state"] for r in driver.execute_query("SHOW INDEXES YIELD name, state").records}
    for name in ("entity_embedding", "relation_embedding", "entity_name", "entity_kg_name", "entity_key"):
        assert states[name] == "ONLINE", name
    from kgqa.models.encoder import embed

    vector = embed(["Kismet"])[0].tolist()
    near = driver.execute_query(
        "CALL db.index.vector.queryNodes('entity_embedding', 50, $v) YIELD node, score "
        "WHERE node.kg = 'metaqa' RETURN node.name AS name, score ORDER BY score DESC LIMIT 5",
        v=vector,
    ).records
    assert near and near[0]["name"] == "Kismet", [r["name"] for r in near]
    films = driver.execute_query(
        "MATCH (:Entity {kg: 'metaqa', name: 'Kismet'})-[r:directed_by]->(d) RETURN collect(d.name) AS names"
    ).records[0]["names"]
    assert "William Dieterle" in films
    missing = driver.execute_query(
        "MATCH (e:Entity {kg: 'metaqa'}) WHERE e.embedding IS NULL RETURN count(e) AS n"
    ).records[0]["n"]
    assert missing == 0
