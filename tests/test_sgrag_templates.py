"""SG-RAG's one path template, rendered per relation chain: its shape (no database), and every chain MetaQA's
dev questions walk (the chains come from the data's relation-path column, not from code) on real dev
questions."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from kgqa.core.chains import chain_key, parse_chain_key
from kgqa.retrieve.sgrag import path_query, run_template
from kgqa.training.questions import _read_bracket_tsv

QUESTIONS_PER_CHAIN = 3
# Known MetaQA quirks where no KB path gives the gold answers: answers split at a comma ("Paris, Texas"),
# and an answer equal to the topic entity. The templates are right not to produce them.
QUIRKS = {
    "what does Harry Dean Stanton star in",
    "what movies can be described by elizabeth taylor",
    "which films are about 9/11",
}
CHAINS = [
    "rel_a>",
    "rel_b<",
    "rel.with.dots..and.a.cvt>|other_rel<",
    "rel_a>|rel_a<|rel_b>",
]


@pytest.mark.parametrize("key", CHAINS)
def test_template_shape(key: str) -> None:
    steps = parse_chain_key(key)
    text = path_query(steps, key)
    # Values only as parameters: no string literals at all in the query text.
    assert "'" not in text and '"' not in text
    for param in ("$kg", "$topic_ids", "$max_paths"):
        assert param in text
    assert "LIMIT $max_paths" in text
    # The relation path in the template is the chain's, with directions.
    pattern = next(line for line in text.splitlines() if line.startswith("MATCH (n0)"))
    found = re.findall(r"(<-|-)\[r\d+:`([^`]+)`\]-(>?)", pattern)
    assert tuple((rel, "in" if left == "<-" else "out") for left, rel, _right in found) == steps
    # No backtracking through the topic entity: every later node is compared with it.
    for i in range(1, len(steps) + 1):
        assert f"n{i} <> n0" in text


def test_a_relation_that_could_close_its_quotes_is_refused() -> None:
    with pytest.raises(ValueError, match="cannot be quoted"):
        path_query((("x`]->(n) DETACH DELETE n //", "out"),), "bad")


Cases = dict[str, list[tuple[str, str, set[str]]]]


@pytest.fixture(scope="module")
def dev_chains(shared_data: Path) -> Cases:
    """Up to three dev questions per chain, from MetaQA's dev questions with their relation paths."""
    out: Cases = {}
    for path in sorted((shared_data / "metaqa" / "with_relation_paths_beamqa").glob("valid_*hop.txt")):
        for raw in _read_bracket_tsv(path):
            assert raw.chain is not None
            bucket = out.setdefault(chain_key(raw.chain), [])
            if len(bucket) < QUESTIONS_PER_CHAIN and raw.text not in QUIRKS:
                bucket.append((raw.text, raw.topics[0], set(raw.answers)))
    return out


def test_metaqa_dev_walks_its_chains(dev_chains: Cases) -> None:
    hops = {len(parse_chain_key(k)) for k in dev_chains}
    assert hops == {1, 2, 3} and len(dev_chains) >= 45


def test_every_chain_of_metaqa_dev_answers_its_questions(
    driver,  # type: ignore[no-untyped-def]
    metaqa_kg: str,
    dev_chains: Cases,
) -> None:
    for key, cases in sorted(dev_chains.items()):
        ids = {
            r["name"]: r["id"]
            for r in driver.execute_query(
                "UNWIND $names AS name MATCH (e:Entity {kg: $kg, name: name})"
                " RETURN e.name AS name, e.id AS id",
                names=[topic for _q, topic, _gold in cases],
                kg=metaqa_kg,
            ).records
        }
        for question, topic, gold in cases:
            match = run_template(driver, key, metaqa_kg, [ids[topic]])
            answers = set(match.answers)
            assert gold <= answers, f"{key} {question}: missing {sorted(gold - answers)[:5]}"
            assert topic not in answers
            assert not match.truncated
            for path in match.paths:
                assert len(path) == len(parse_chain_key(key))
                assert all(len(t) == 3 for t in path)
