"""`kgqa link`: a question's linked spans, each with its entity, score and why, through the real console
entry point on the real MetaQA KG; the same entities `kgqa ask` starts from."""

from __future__ import annotations

import json
from typing import Any

from kgqa.retrieve.linking import HOW_LINKED, link_entities, link_report

from tests.conftest import run_kgqa


def test_link_shows_each_span_its_entity_and_why(metaqa_kg: str) -> None:
    done = run_kgqa("link", "which films did tom hanks and meg ryan both act in", "--kg", metaqa_kg, "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["kg"] == metaqa_kg
    spans = {row["span"]: row for row in report["linked"]}
    assert spans["tom hanks"]["name"] == "Tom Hanks" and spans["meg ryan"]["name"] == "Meg Ryan"
    for row in report["linked"]:
        assert 0 < row["score"] <= 1 and row["why"] == HOW_LINKED[row["how"]]
    # every candidate weighed, with the features a learned link scorer reads
    weighed = {(c["span"], c["name"]) for c in report["candidates"]}
    assert ("tom hanks", "Tom Hanks") in weighed and ("meg ryan", "Meg Ryan") in weighed
    assert all(0 <= c["hand_score"] and "log_degree" in c["features"] for c in report["candidates"])
    table = run_kgqa("link", "who directed Titanic", "--kg", metaqa_kg)
    assert table.returncode == 0, table.stderr
    assert "Titanic" in table.stdout and HOW_LINKED["exact"] in table.stdout
    assert "every candidate weighed" in table.stdout


def test_the_report_links_as_ask_does_and_lists_what_it_left_out(metaqa_kg: str, driver: Any) -> None:
    question = "what movies did Tom Hanks star in with the director of Heat"
    report = link_report(driver, question, metaqa_kg)
    assert [e.id for e in report.linked] == [e.id for e in link_entities(driver, question, metaqa_kg)]
    assert not {e.id for e in report.linked} & {e.id for e in report.also_found}


def test_an_unknown_kg_is_one_line_naming_it(metaqa_kg: str) -> None:
    done = run_kgqa("link", "who directed Titanic", "--kg", "no-such-kg")
    assert done.returncode != 0 and "no-such-kg" in done.stderr and len(done.stderr.strip().splitlines()) == 1
