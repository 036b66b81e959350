"""``neo4j-admin database import full`` over the CSVs (the server stopped around it by the caller)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kgqa.core.errors import KgqaError
from kgqa.loaders.bulk.files import DATABASE, BulkFiles


def import_args(files: BulkFiles, report: Path) -> list[str]:
    nodes = ",".join(str(p) for p in [files.entities_csv, *files.entity_parts])
    relationships = ",".join(str(p) for p in [files.relationships_csv, *files.relationship_parts])
    args = [
        "database",
        "import",
        "full",
        "--overwrite-destination=true",
        f"--nodes=Entity={nodes}",
        f"--relationships={relationships}",
        f"--report-file={report}",
        "--bad-tolerance=0",
        f"--multiline-fields={'true' if files.multiline else 'false'}",
    ]
    args += _tuning()
    return [*args, DATABASE]


def _tuning() -> list[str]:
    """neo4j-admin options from the environment: KGQA_IMPORT_OPTIONS, split on whitespace."""
    return os.environ.get("KGQA_IMPORT_OPTIONS", "").split()


def neo4j_import(run_admin: Callable[[list[str]], Any], files: BulkFiles, report: Path) -> str:
    """Runs ``neo4j-admin database import full`` (the server must be stopped); returns its summary line."""
    proc = run_admin(import_args(files, report))
    output = (proc.stdout or "") + (proc.stderr or "")
    if proc.returncode != 0:
        lines = [line.strip() for line in output.splitlines() if line.strip()]
        errors = [line for line in lines if "rror" in line or "xception" in line]
        reason = errors[0] if errors else (lines[-1] if lines else f"exit code {proc.returncode}")
        raise KgqaError(f"neo4j-admin database import failed: {reason} (report: {report})")
    done = [line.strip() for line in output.splitlines() if line.strip().startswith("IMPORT DONE")]
    return done[-1] if done else "import done"
