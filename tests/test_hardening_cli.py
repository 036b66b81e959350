"""Issue 30 at the command line, against the real test Neo4j: every error one line with a non-zero exit,
`kgqa cypher`'s exit code and read-only rules, and the Neo4j password never on neo4j-admin's command line.

KGs this module loads are named ``t_hard_*`` and dropped again, with their model folders."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import TEST_HOME, run_kgqa

CLI_KG = "t_hard_cli"


def _one_line_error(done: subprocess.CompletedProcess[str], code: int = 1) -> str:
    assert done.returncode == code, (done.returncode, done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kgqa: error: ") and "Traceback" not in done.stderr, lines
    return lines[0]


def test_a_huge_k_is_one_line(neo4j_env: dict[str, str]) -> None:
    done = run_kgqa("ask", "who directed Kismet", "-k", "99999999999999999999", "--method", "cosine")
    line = _one_line_error(done, code=2)
    assert "-k" in line and "1<=x<=1000" in line


def test_an_empty_claim_fails_as_an_empty_question_does(neo4j_env: dict[str, str]) -> None:
    # bad input exits with 2, as Click's own usage errors do (kgqa.core.errors)
    assert _one_line_error(run_kgqa("verify", ""), code=2) == "kgqa: error: the claim is empty"
    assert _one_line_error(run_kgqa("verify", "  "), code=2) == "kgqa: error: the claim is empty"
    assert _one_line_error(run_kgqa("ask", ""), code=2) == "kgqa: error: the question is empty"


def test_cypher_exit_code_counts_the_failed_statements_of_stdin(neo4j_env: dict[str, str]) -> None:
    script = "RETURN 1 AS a;\nRETURN nosuch(1);\nCREATE (n:KgqaNever);\nRETURN 2 AS b;\nRETURN (\n"
    done = run_kgqa("cypher", "--format", "json", input_text=script)
    assert done.returncode == 3, (done.stdout, done.stderr)
    assert done.stdout.split() == ['[{"a":', "1}]", '[{"b":', "2}]"]
    errors = done.stderr.strip().splitlines()
    assert len(errors) == 4 and errors[-1] == "kgqa: error: 3 of 5 statements failed", errors
    assert "read-only unless given --write" in errors[1]
    assert run_kgqa("cypher", input_text="RETURN 1 AS a;\n").returncode == 0


def test_cypher_reads_dbms_state_but_changes_nothing_without_write(neo4j_env: dict[str, str]) -> None:
    done = run_kgqa("cypher", "--format", "json", "CALL dbms.components() YIELD name RETURN name")
    assert done.returncode == 0 and "Neo4j Kernel" in done.stdout, done.stderr
    for changes in ("CALL db.clearQueryCaches()", "CREATE INDEX kgqa_never IF NOT EXISTS FOR (n:X) ON (n.x)"):
        assert "changes the schema" in _one_line_error(run_kgqa("cypher", changes), code=2)


def test_read_only_cypher_has_a_transaction_timeout(neo4j_env: dict[str, str]) -> None:
    done = run_kgqa("cypher", "--timeout", "1", "CALL apoc.util.sleep(5000) RETURN 1 AS one")
    assert (
        _one_line_error(done) == "kgqa: error: the statement ran longer than 1 s and was stopped (--timeout)"
    )


def test_a_driver_notification_is_printed_once(neo4j_env: dict[str, str]) -> None:
    # `schema` of gds.graph.list is deprecated: one notification from the run, none from the EXPLAIN check
    done = run_kgqa("cypher", "CALL gds.graph.list() YIELD graphName, schema RETURN count(*) AS n")
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("gds.graph.list() is deprecated") == 1, done.stderr


@pytest.fixture(scope="module")
def cli_kg(driver: Any) -> Iterator[str]:
    from kgqa.graph.kg import drop_kg
    from kgqa.loaders.load_types import LoadOptions
    from kgqa.loaders.pipeline import load
    from kgqa.models.kg_models import part_dir

    from tests.test_load_parsers import METAQA

    drop_kg(driver, CLI_KG)
    load(LoadOptions("metaqa", [METAQA], kg=CLI_KG, embeddings=False), driver=driver)
    models = part_dir(CLI_KG, "classifiers").parent
    yield CLI_KG
    drop_kg(driver, CLI_KG)
    shutil.rmtree(models, ignore_errors=True)


def test_a_corrupt_classifier_file_says_train_it_again(
    neo4j_env: dict[str, str], question_classifiers: Path, cli_kg: str
) -> None:
    from kgqa.models.kg_models import part_dir

    target = part_dir(cli_kg, "classifiers")
    target.mkdir(parents=True, exist_ok=True)
    shutil.copy(question_classifiers / "metadata.json", target / "metadata.json")  # current format
    for name in question_classifiers.iterdir():
        if name.name != "metadata.json":
            (target / name.name).write_bytes(b"\x80\x04not a pickle at all")
    done = run_kgqa("ask", "who directed [Kismet]", "--kg", cli_kg, "--method", "sgrag")
    line = _one_line_error(done, code=4)  # a model missing: the method cannot run here
    assert "no usable question classifier" in line and f"kgqa train all --kg {cli_kg}" in line, line


# ------------------------------------------------------------------------------ the password and neo4j-admin
# "-UYtest123": a generated password of the old alphabet; neo4j-admin read it as an option (exit 64)
@pytest.mark.parametrize(
    "password", ['pass word "with" \\ #odd chars', "-UYtest123", "--verbose", '-x "q" #c @f \\']
)
def test_the_password_never_reaches_neo4j_admins_command_line(
    neo4j_env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, password: str
) -> None:
    from kgqa.graph import server as server_module
    from kgqa.graph.server import ManagedServer
    from kgqa.graph.server_install import find_java

    home = tmp_path / "home"
    (home / "neo4j" / "conf").mkdir(parents=True)
    (home / "neo4j" / "lib").symlink_to(TEST_HOME / "neo4j" / "lib")  # the same jars, a fresh data folder
    (home / "neo4j" / "conf" / "neo4j.conf").write_text("dbms.security.auth_enabled=true\n")
    (home / "neo4j-password").write_text(password + "\n")
    seen: list[list[str]] = []
    real_run = subprocess.run

    def recording_run(cmd: list[str], *args: Any, **kwargs: Any) -> Any:
        seen.append([str(part) for part in cmd])
        return real_run(cmd, *args, **kwargs)

    monkeypatch.setattr(server_module.subprocess, "run", recording_run)
    ManagedServer(home=home, port=1)._ensure_password(find_java())
    assert seen and all(password not in part for cmd in seen for part in cmd), seen
    assert list(home.glob(".initial-password-*")) == []  # the argument file is gone again
    # neo4j-admin stored the password itself, not "@file": auth.ini holds its iterated, salted SHA-256
    _user, stored = (home / "neo4j" / "data" / "dbms" / "auth.ini").read_text().strip().split(":", 1)
    _algorithm, digest, salt, iterations = stored.rstrip(":").split(",")
    hashed = hashlib.sha256(bytes.fromhex(salt) + password.encode()).digest()
    for _ in range(int(iterations) - 1):
        hashed = hashlib.sha256(hashed).digest()
    assert hashed.hex() == digest
