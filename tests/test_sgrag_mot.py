"""The MOT wrapper every retriever reuses: kgqa.retrieve.mot over kgqa.triplets.dedupOrder."""

from __future__ import annotations

from kgqa.retrieve.mot import dedup_order, dedup_order_with_distance


def test_merges_dedups_and_orders_by_bfs(driver) -> None:  # type: ignore[no-untyped-def]
    subgraph_a = [("Lee Pace", "starred_actors_of", "The Fall"), ("The Fall", "directed_by", "Tarsem Singh")]
    subgraph_b = [
        ("Ceremony", "directed_by", "Max Winkler"),
        ("Ceremony", "starred_actors", "Lee Pace"),
        ("The Fall", "directed_by", "Tarsem Singh"),
    ]
    ordered = dedup_order(driver, subgraph_a + subgraph_b, ["Lee Pace"])
    assert ordered == [
        ("Lee Pace", "starred_actors_of", "The Fall"),
        ("Ceremony", "starred_actors", "Lee Pace"),
        ("The Fall", "directed_by", "Tarsem Singh"),
        ("Ceremony", "directed_by", "Max Winkler"),
    ]
    assert all(isinstance(t, tuple) and len(t) == 3 for t in ordered)


def test_distances_and_unconnected_last(driver) -> None:  # type: ignore[no-untyped-def]
    triplets = [["x", "r", "y"], ["a", "r", "b"], ["b", "r", "c"], ["a", "r", "b"]]
    rows = dedup_order_with_distance(driver, triplets, ["a", "a"])
    assert rows == [(("a", "r", "b"), 0), (("b", "r", "c"), 1), (("x", "r", "y"), None)]


def test_empty_and_no_topics(driver) -> None:  # type: ignore[no-untyped-def]
    assert dedup_order(driver, [], ["a"]) == []
    assert dedup_order(driver, [("a", "r", "b"), ("a", "r", "b")], []) == [("a", "r", "b")]


def test_values_are_parameters(driver) -> None:  # type: ignore[no-untyped-def]
    nasty = ("x'}) DETACH DELETE n //", "r`", '"; MATCH (n) DETACH DELETE n')
    assert dedup_order(driver, [nasty], [nasty[0]]) == [nasty]
