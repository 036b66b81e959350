"""`kgqa verify` on the real MetaQA KG: the three labels, with the matched subgraph as the reason."""

from __future__ import annotations

import json

import pytest
from kgqa.qa.verification import NOT_ENOUGH, REFUTED, SUPPORTED, verify_claim
from neo4j import Driver

from tests.conftest import run_kgqa


@pytest.mark.parametrize(
    ("claim", "label"),
    [
        ("Kismet was directed by William Dieterle", SUPPORTED),
        ("William Dieterle directed Kismet", SUPPORTED),
        ("Kismet was directed by Ron Howard", REFUTED),
        ("Kismet was released in 1944", SUPPORTED),
        ("Kismet was released in 1950", REFUTED),
        ("the director of Kismet also directed Portrait of Jennie", SUPPORTED),
        ("Tom Hanks was born in 1956", NOT_ENOUGH),  # the KB records no births
        ("Kismet is a film", NOT_ENOUGH),  # one entity: nothing to check it against
    ],
)
def test_labels(driver: Driver, metaqa_kg: str, claim: str, label: str) -> None:
    verdict = verify_claim(driver, claim, metaqa_kg)
    assert verdict.label == label, verdict
    if label == SUPPORTED:
        assert verdict.reason and any(verdict.object in (h, t) for h, _r, t in verdict.reason)


def test_cli_json(metaqa_kg: str, neo4j_env: dict[str, str]) -> None:
    out = run_kgqa("verify", "Apollo 13 stars Tom Hanks", "--kg", metaqa_kg, "--json", env=neo4j_env)
    assert out.returncode == 0, out.stderr
    verdict = json.loads(out.stdout)
    assert verdict["label"] == SUPPORTED and verdict["reason"]
