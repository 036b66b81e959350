"""bench/report.py: BENCHMARKS.md from the result files, no server. Tables are copied as they are,
commands recorded without their flags get them back, and every input report.toml names is found."""

from __future__ import annotations

import tomllib
from pathlib import Path

from bench import report

REPO = Path(__file__).resolve().parent.parent

MARKDOWN = """`python -m bench.serve.soak --methods sgrag --clients 4`

| first | n |
|---|---:|
| a | 1 |

## Load throughput per stage

Some text.

| stage | s |
|---|---:|
| parse | 5.0 |
| import | 28.7 |

after
"""


def test_a_table_is_copied_verbatim_from_under_its_heading(tmp_path: Path) -> None:
    path = tmp_path / "result.md"
    path.write_text(MARKDOWN, encoding="utf-8")
    assert report.md_table(path) == ["| first | n |", "|---|---:|", "| a | 1 |"]
    assert report.md_table(path, "Load throughput per stage") == [
        "| stage | s |",
        "|---|---:|",
        "| parse | 5.0 |",
        "| import | 28.7 |",
    ]
    assert report.md_table(path, "No such heading") is None
    assert report.md_table(tmp_path / "absent.md") is None
    head, rows = report.table_cells(report.md_table(path, "Load throughput per stage") or [])
    assert head == ["stage", "s"] and rows[1] == ["import", "28.7"]


def test_the_command_is_the_first_line_in_backticks(tmp_path: Path) -> None:
    path = tmp_path / "result.md"
    path.write_text(MARKDOWN, encoding="utf-8")
    assert report.first_command(path) == "python -m bench.serve.soak --methods sgrag --clients 4"


def test_a_recorded_command_gets_back_the_flags_its_script_left_out() -> None:
    command = "python -m bench.accuracy.questions_answers --set s.jsonl --methods auto --part all"
    assert (
        report.with_flags(command, {"--kg": "fb15k", "--out": "x.json"})
        == command + " --kg fb15k --out x.json"
    )
    assert report.with_flags(command + " --kg fb15k", {"--kg": "other"}) == command + " --kg fb15k"


def test_every_input_of_the_configured_report_is_found() -> None:
    config = tomllib.loads(report.CONFIG.read_text(encoding="utf-8"))
    for item in config["excerpt"]:
        assert report.md_table(REPO / item["file"], item.get("heading", "")), item
    earlier = config["metaqa"]["freeform_earlier"]
    head, _ = report.table_cells(report.md_table(REPO / earlier["file"], earlier["heading"]) or [])
    assert all(item["earlier"] in head for item in config["metaqa"]["freeform"])
    text, index, _ = report.render(config)
    for section in ("MetaQA", "FB15k-237", "WebQSP on FB15k-237", "Latency", "Load throughput", "Scale"):
        assert f"\n## {section}\n" in text
    assert "## Detail files" in text and "(bench/results/README.md)" in text
    assert "[`scale/at-scale.md`](scale/at-scale.md)" in index  # links from the index's own folder
    assert len(text.splitlines()) < 300  # a report a person reads in five minutes (issue 31)
