"""The layout is the data flow: imports only go down the layers, query time never imports training, no loops.

Reads every module of the ``kgqa`` packages with ``ast`` (nothing is imported), including imports inside
functions, since a lazy import up the layers is still an upward dependency.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

# Lower rank = lower layer. A package may import its own modules and any package of a lower rank.
RANK = {
    "core": 0,  # shared types, errors, configuration, text rules
    "cypher_templates": 0,
    "models": 1,  # the encoder, the classifiers' runtime, the registry of trained artefacts
    "graph": 2,  # the managed server, connections, template rendering
    "loaders": 3,
    "training": 3,
    "retrieve": 4,
    "answer": 5,
    "qa": 6,  # link -> retrieve -> answer, the method registry, stage timing
    "evaluation": 7,
    "learn": 8,  # kgqa train all: a KG's models, and auto's route measured by asking every method
    "service": 9,  # kgqa serve: the question-answering layer over HTTP
    "cli": 10,
}
# Training code is imported by `kgqa train` (cli, learn) and by itself only: query time never trains.
MAY_IMPORT_TRAINING = {"cli", "learn", "training"}


def _modules() -> dict[str, Path]:
    """Every module of every package, subpackages included (loaders.bulk, training.subgraphrag, ...)."""
    found = {}
    for package in RANK:
        for path in sorted((REPO / package).rglob("*.py")):
            parts = [package, *path.relative_to(REPO / package).with_suffix("").parts]
            if parts[-1] == "__init__":
                parts.pop()
            found["kgqa." + ".".join(parts)] = path
    return found


def _imports(path: Path) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("kgqa."))
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("kgqa."):
            out.add(node.module)
            # "from kgqa.models import registry" imports the module kgqa.models.registry
            out.update(f"{node.module}.{a.name}" for a in node.names)
    return out


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: {m for m in _imports(path) if m in modules} for name, path in modules.items()}


def _wheel_files(tmp_path: Path) -> set[str]:
    import subprocess
    import sys
    import zipfile

    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(tmp_path),
            str(REPO),
        ],
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stderr[-2000:]
    assert "would be ignored" not in built.stdout + built.stderr  # setuptools' warning for an unlisted folder
    (wheel,) = tmp_path.glob("kgqa-*.whl")
    return set(zipfile.ZipFile(wheel).namelist())


def test_the_wheel_holds_every_module_and_template(tmp_path: Path) -> None:
    """A module, a subpackage or a template folder left out of the package would be missing from a wheel."""
    shipped = _wheel_files(tmp_path)
    packaged = {n.removeprefix("kgqa/") for n in shipped if n.startswith("kgqa/")}
    sources = {
        str(p.relative_to(REPO))
        for p in REPO.rglob("*")
        if p.is_file()
        and p.relative_to(REPO).parts[0] in RANK
        and (p.suffix in {".py", ".j2"} or "static" in p.parts)
        and "__pycache__" not in p.parts
    }
    assert sources and not sources - packaged, sorted(sources - packaged)[:10]
    assert {p.parts[0] for p in map(Path, packaged) if p.suffix == ".py"} == set(RANK)


def test_imports_only_go_down() -> None:
    upward = []
    for module, targets in _graph().items():
        package = module.split(".")[1]
        for target in targets:
            other = target.split(".")[1]
            if other == package:
                continue
            if other == "training" and package not in MAY_IMPORT_TRAINING:
                upward.append(f"{module} -> {target} (query time must not import training)")
            elif RANK[other] >= RANK[package]:
                upward.append(
                    f"{module} -> {target} ({package} is layer {RANK[package]}, {other} {RANK[other]})"
                )
    assert not upward, "imports that go up or sideways:\n" + "\n".join(sorted(upward))


def test_no_import_loops() -> None:
    graph = _graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    loops: list[list[str]] = []
    counter = [0]

    def visit(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for target in graph[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                loops.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    assert not loops, f"import loops: {loops}"


def test_the_checks_can_fail(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An upward import and a loop, planted in a copy of the imports, are caught."""
    graph = defaultdict(set, {k: set(v) for k, v in _graph().items()})
    graph["kgqa.retrieve.sgrag"].add("kgqa.training.question_classifiers")
    graph["kgqa.core.text"].add("kgqa.core.types")
    graph["kgqa.core.types"].add("kgqa.core.text")
    monkeypatch.setattr(__import__(__name__, fromlist=["_graph"]), "_graph", lambda: graph)
    with pytest.raises(AssertionError, match="query time must not import training"):
        test_imports_only_go_down()
    with pytest.raises(AssertionError, match="import loops"):
        test_no_import_loops()
