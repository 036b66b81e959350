"""`kgqa cypher`: one query, JSON/table output, parameters, and the interactive shell."""

from __future__ import annotations

import json

from tests.conftest import run_kgqa


def test_json_output_is_one_list_of_row_objects(neo4j_env: dict[str, str]) -> None:
    result = run_kgqa("cypher", "--format", "json", "UNWIND [1, 2] AS x RETURN x, toString(x) AS s")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == [{"x": 1, "s": "1"}, {"x": 2, "s": "2"}]


def test_parameters_are_passed_as_parameters(neo4j_env: dict[str, str]) -> None:
    nasty = "'}) DETACH DELETE n //"
    result = run_kgqa("cypher", "--format", "json", "-p", f"text={json.dumps(nasty)}", "RETURN $text AS t")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == [{"t": nasty}]


def test_syntax_error_is_one_line(neo4j_env: dict[str, str]) -> None:
    result = run_kgqa("cypher", "RETRUN 1")
    assert result.returncode == 1
    assert len(result.stderr.strip().splitlines()) == 1
    assert result.stderr.startswith("kgqa: error: Neo4j:")


def test_interactive_shell_reads_statements(neo4j_env: dict[str, str]) -> None:
    result = run_kgqa("cypher", "--format", "json", input_text="RETURN 1 AS a;\nRETURN\n 2 AS b;\n:exit\n")
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in result.stdout.strip().splitlines()]
    assert rows == [[{"a": 1}], [{"b": 2}]]


def test_table_output(neo4j_env: dict[str, str]) -> None:
    result = run_kgqa("cypher", "RETURN 'Kismet' AS film")
    assert result.returncode == 0
    assert "Kismet" in result.stdout and "1 row" in result.stdout


def _count(label: str) -> int:
    result = run_kgqa("cypher", "--format", "json", f"MATCH (n:{label}) RETURN count(n) AS n")
    assert result.returncode == 0, result.stderr
    return int(json.loads(result.stdout)[0]["n"])


def test_read_only_unless_write_is_given(neo4j_env: dict[str, str]) -> None:
    label = "KgqaCypherShellProbe"
    for statement in (
        f"CREATE (:{label})",
        f"MERGE (n:{label}) RETURN n",
        f"CREATE INDEX probe FOR (n:{label}) ON (n.x)",
    ):
        result = run_kgqa("cypher", statement)
        assert result.returncode == 2, statement  # refused as bad input
        line = result.stderr.strip()
        assert len(line.splitlines()) == 1 and "read-only unless given --write" in line, line
    assert _count(label) == 0
    shell = run_kgqa("cypher", input_text=f"CREATE (:{label});\nRETURN 1 AS a;\n")
    assert "read-only unless given --write" in shell.stderr and _count(label) == 0
    written = run_kgqa("cypher", "--write", f"CREATE (:{label})")
    assert written.returncode == 0, written.stderr
    assert _count(label) == 1
    assert run_kgqa("cypher", "--write", f"MATCH (n:{label}) DELETE n").returncode == 0
    assert _count(label) == 0
