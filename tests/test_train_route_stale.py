"""auto's route measures the methods a KG has: a part trained after it makes it stale, `--if-missing` learns
it again, and until then `kgqa kgs` and `kgqa ask` say so with the command that renews it; a training that
dies leaves a profile from which `--if-missing` trains again what did not finish. Runs the real
`train_all` on the small movie KG of examples/ (loaded under its own name, dropped afterwards)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from typing import Any

import pytest
from kgqa.models import kg_models

from tests.conftest import REPO, run_kgqa

KG = "t_route_movies"
ROUTE_LOG = "auto's route"
WITHOUT_SIMGRAG = ("linking", "classifiers", "frag", "route")
EVERY_LIGHT_PART = ("linking", "classifiers", "simgrag", "frag", "route")


@pytest.fixture(scope="module")
def movies(driver: Any) -> Iterator[str]:
    from kgqa.graph.kg import drop_kg
    from kgqa.loaders.load_types import LoadOptions
    from kgqa.loaders.pipeline import load

    drop_kg(driver, KG)
    summary = load(LoadOptions("metaqa", [REPO / "examples" / "movies-kb.txt"], kg=KG), driver=driver)
    assert summary.status == "complete"
    yield KG
    drop_kg(driver, KG)


def _train(driver: Any, parts: tuple[str, ...], if_missing: bool = False) -> list[str]:
    from kgqa.learn.train_all import TrainAllOptions, train_all

    logged: list[str] = []
    train_all(
        driver, KG, TrainAllOptions(parts=parts, if_missing=if_missing, route_questions=20), logged.append
    )
    return logged


def _kgs_row() -> dict[str, Any]:
    done = run_kgqa("kgs", "--json")
    assert done.returncode == 0, done.stderr
    return next(row for row in json.loads(done.stdout) if row["name"] == KG)


def test_a_part_trained_after_the_route_makes_it_stale_and_if_missing_renews_it(
    driver: Any, movies: str
) -> None:
    assert any(ROUTE_LOG in line for line in _train(driver, WITHOUT_SIMGRAG))
    assert _kgs_row()["route_stale"] is None
    assert kg_models.read_profile(KG).route["unfamiliar_below"] == 0.0  # type: ignore[union-attr]  # no labels

    _train(driver, ("simgrag",))  # a method the route has never asked
    note = _kgs_row()["route_stale"]
    assert note and "simgrag" in note and f"kgqa train route --kg {KG}" in note
    table = run_kgqa("kgs")
    assert f"note: {note}" in table.stdout
    asked = run_kgqa("ask", "who directed The Fall", "--kg", KG, "--llm", "none", "--json")
    assert asked.returncode == 0, asked.stderr
    assert json.loads(asked.stdout)["route"]["stale"] == note

    # nothing is missing, but the route is out of date: --if-missing learns it again, and only it
    phrases = kg_models.part_dir(KG, "simgrag") / "phrases.json"
    written = phrases.stat().st_mtime_ns
    logged = _train(driver, EVERY_LIGHT_PART, if_missing=True)
    assert any(ROUTE_LOG in line for line in logged), logged
    assert phrases.stat().st_mtime_ns == written
    assert _kgs_row()["route_stale"] is None
    asked = run_kgqa("ask", "who directed The Fall", "--kg", KG, "--llm", "none", "--json")
    assert json.loads(asked.stdout)["route"]["stale"] is None

    # a part --if-missing adds gives auto a method its route never measured: the route is learned again
    shutil.rmtree(kg_models.part_dir(KG, "simgrag"))
    logged = _train(driver, EVERY_LIGHT_PART, if_missing=True)
    assert any(ROUTE_LOG in line for line in logged), logged
    assert kg_models.part_installed(KG, "simgrag") and _kgs_row()["route_stale"] is None

    # and with everything installed and the route current, --if-missing keeps it all
    logged = _train(driver, EVERY_LIGHT_PART, if_missing=True)
    assert not any(ROUTE_LOG in line for line in logged), logged


def test_the_route_alone_is_measured_with_classifiers_that_never_saw_its_questions(
    driver: Any, movies: str
) -> None:
    """A whole training refits the classifiers on the route's held-out questions once the route is measured;
    the route trained again alone must not ask sgrag questions its templates learned: the classifiers are
    fitted without them first."""
    from kgqa.learn.train_all import TrainAllOptions, train_all

    questions = (REPO / "tests" / "fixtures" / "questions" / "movies_qa.txt",)

    def train(parts: tuple[str, ...]) -> list[str]:
        logged: list[str] = []
        options = TrainAllOptions(questions=questions, parts=parts, route_questions=20)
        train_all(driver, KG, options, logged.append)
        return logged

    whole = train(("linking", "classifiers", "frag", "route"))
    assert any("refitting the classifiers on every labelled question" in line for line in whole), whole
    # the KG's own held-out wordings set how unlike them a question must be to go to FRAG and SimGRAG first
    assert any("goes to FRAG and SimGRAG first" in line for line in whole), whole
    route = kg_models.read_profile(KG).route  # type: ignore[union-attr]
    assert 0.0 < route["unfamiliar_below"] < 1.0
    alone = train(("route",))
    assert any("fitted again without the route's questions first" in line for line in alone), alone
    assert any(ROUTE_LOG in line for line in alone)
    assert any("refitting the classifiers on every labelled question" in line for line in alone)
    assert not any("fitted again" in line for line in train(("classifiers", "route")))


FRAG_LOG = "FRAG's path ranker"


def test_a_training_that_dies_keeps_what_finished_and_if_missing_trains_the_rest(
    driver: Any, movies: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A part's files without its report in the profile are what a training that died left behind (a
    crash, a kill): `--if-missing` trains that part again instead of keeping it unreported."""
    import kgqa.training.answer_types

    _train(driver, EVERY_LIGHT_PART)

    def dies(*_args: Any, **_kwargs: Any) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(kgqa.training.answer_types, "learn_answer_types", dies)
    with pytest.raises(KeyboardInterrupt):
        _train(driver, ("linking", "frag", "route"))
    monkeypatch.undo()
    died = kg_models.read_profile(KG)
    assert died is not None and died.route  # the route it did not get to stays as it was
    assert "linking" in died.parts  # finished before
    assert "frag" not in died.parts and kg_models.part_installed(KG, "frag")  # files, no report

    logged = _train(driver, EVERY_LIGHT_PART, if_missing=True)
    assert any(FRAG_LOG in line for line in logged), logged
    assert not any("entity linker" in line for line in logged), logged
    renewed = kg_models.read_profile(KG)
    assert renewed is not None and "frag" in renewed.parts and renewed.route


def test_the_route_fits_an_answer_scorer_and_auto_gives_its_probabilities(driver: Any, movies: str) -> None:
    _train(driver, WITHOUT_SIMGRAG)
    saved = kg_models.read_profile(KG).route.get("answer_scorer")  # type: ignore[union-attr]
    assert saved is not None, "the route's held-out questions held right and wrong answers to learn from"
    assert 0.0 <= saved["metrics"]["first_right"] <= 1.0 and isinstance(saved["reorder"], bool)
    asked = run_kgqa("ask", "who directed The Fall", "--kg", KG, "--llm", "none", "--json")
    assert asked.returncode == 0, asked.stderr
    result = json.loads(asked.stdout)
    assert result["answers"], result
    # every answer's score is the probability that it is right; the first one's is the confidence
    assert all(0.0 <= s <= 1.0 for s in result["answer_scores"])
    assert result["confidence"] == result["answer_scores"][0]
    assert result["explanation"]["scored_by"].startswith("auto's answer scorer")
