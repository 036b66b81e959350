"""The shared limits agree between the Python side and the procedures (one number each, issue 31)."""

from __future__ import annotations

import re
from pathlib import Path

from kgqa.core import limits
from kgqa.retrieve import cosine_baseline, linking, paths

REPO = Path(__file__).resolve().parent.parent
JAVA = REPO / "procedures" / "src" / "main" / "java" / "io" / "kgqa" / "procedures" / "util" / "Limits.java"


def _java_constant(name: str) -> int:
    match = re.search(rf"static final int {name} = ([\d_]+);", JAVA.read_text())
    assert match, f"{name} not in {JAVA}"
    return int(match.group(1).replace("_", ""))


def test_python_and_the_procedures_share_the_limits() -> None:
    assert _java_constant("LINKED_ENTITIES") == limits.LINKED_ENTITIES
    assert _java_constant("ROW_CAP") == limits.ROW_CAP


def test_the_retrievers_read_the_shared_limits() -> None:
    assert linking.DEFAULT_MAX_ENTITIES == limits.LINKED_ENTITIES
    assert paths.DEFAULT_MAX_PATHS == limits.ROW_CAP
    assert cosine_baseline.DEFAULT_MAX_CANDIDATES == limits.ROW_CAP
