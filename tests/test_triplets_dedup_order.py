"""kgqa.triplets.dedupOrder over Bolt: the MOT step every retriever relies on."""

from __future__ import annotations

import pytest
from neo4j.exceptions import ClientError

QUERY = (
    "CALL kgqa.triplets.dedupOrder($triplets, $topics) "
    "YIELD head, relation, tail, distance, position RETURN head, relation, tail, distance, position"
)


def _call(driver, triplets, topics):  # type: ignore[no-untyped-def]
    return [dict(r) for r in driver.execute_query(QUERY, {"triplets": triplets, "topics": topics}).records]


def test_duplicates_removed_and_bfs_order(driver) -> None:  # type: ignore[no-untyped-def]
    triplets = [
        ["Kismet", "directed_by", "William Dieterle"],
        ["William Dieterle", "directed", "The Accused"],
        ["Kismet", "starred_actors", "Marlene Dietrich"],
        ["Kismet", "directed_by", "William Dieterle"],
        ["The Accused", "release_year", "1949"],
    ]
    rows = _call(driver, triplets, ["Kismet"])
    assert [(r["head"], r["relation"], r["tail"]) for r in rows] == [
        ("Kismet", "directed_by", "William Dieterle"),
        ("Kismet", "starred_actors", "Marlene Dietrich"),
        ("William Dieterle", "directed", "The Accused"),
        ("The Accused", "release_year", "1949"),
    ]
    assert [r["distance"] for r in rows] == [0, 0, 1, 2]
    assert [r["position"] for r in rows] == [0, 1, 2, 3]


def test_cycles_terminate(driver) -> None:  # type: ignore[no-untyped-def]
    triplets = [["a", "r", "b"], ["b", "r", "c"], ["c", "r", "a"], ["c", "r", "d"]]
    rows = _call(driver, triplets, ["a"])
    assert [r["distance"] for r in rows] == [0, 0, 1, 1] or [r["distance"] for r in rows] == [0, 1, 0, 1]
    assert len(rows) == 4
    assert {(r["head"], r["tail"]) for r in rows} == {("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")}


def test_unknown_topic_entities_keep_input_order_last(driver) -> None:  # type: ignore[no-untyped-def]
    triplets = [["x", "r", "y"], ["a", "r", "b"], ["y", "r", "z"]]
    rows = _call(driver, triplets, ["a", "nobody"])
    assert [(r["head"], r["tail"], r["distance"]) for r in rows] == [
        ("a", "b", 0),
        ("x", "y", None),
        ("y", "z", None),
    ]
    unknown = _call(driver, triplets, ["nobody"])
    assert [(r["head"], r["distance"]) for r in unknown] == [("x", None), ("a", None), ("y", None)]


def test_empty_input(driver) -> None:  # type: ignore[no-untyped-def]
    assert _call(driver, [], ["a"]) == []
    assert _call(driver, [], []) == []


def test_malformed_triplet_is_rejected_naming_the_argument(driver) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ClientError) as error:
        _call(driver, [["a", "r"]], ["a"])
    assert "triplets" in error.value.message


def test_100k_triplets(driver) -> None:  # type: ignore[no-untyped-def]
    # A chain 0 -> 1 -> ... plus every triplet repeated once: 100k in, 50k out, ordered by distance.
    chain = [[f"e{i}", "next", f"e{i + 1}"] for i in range(50_000)]
    triplets = [t for pair in zip(chain, chain, strict=True) for t in pair]
    assert len(triplets) == 100_000
    rows = _call(driver, list(reversed(triplets)), ["e0"])
    assert len(rows) == 50_000
    assert rows[0]["head"] == "e0" and rows[0]["distance"] == 0
    assert rows[-1]["head"] == "e49999" and rows[-1]["distance"] == 49_999
    assert all(rows[i]["distance"] <= rows[i + 1]["distance"] for i in range(len(rows) - 1))
