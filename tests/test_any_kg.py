"""Any KG, with nothing written for it: FB15k-237 (real Freebase, 237 relations) loaded from ../shared/data,
its models learned from the KG alone by the real ``kgqa train all`` (smaller settings), and plainly worded
questions answered; and no KG's vocabulary in the code every KG runs."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from kgqa.models import kg_models

from tests.conftest import REPO, run_kgqa

KG = "fb15k"
# Smaller than `kgqa train all`'s defaults, the same code: a few minutes on 2 cores.
QUICK = {
    "gsr_examples": 20_000,
    "subgraphrag_per_hop": 60,
    "subgraphrag_epochs": 2,
    "route_questions": 40,
    "path_scorer_questions": 400,
    "path_scorer_epochs": 1,
}


@pytest.fixture(scope="module")
def fb15k(driver: Any, shared_data: Path) -> str:
    from kgqa.learn.train_all import TrainAllOptions, train_all
    from kgqa.loaders.load_types import LoadOptions
    from kgqa.loaders.pipeline import load
    from kgqa.training.synthesis import SynthesisConfig

    summary = load(LoadOptions("freebase", [shared_data / "fb15k-237"], kg=KG), driver=driver)
    assert summary.status == "complete" and summary.entities == 14_541 and summary.relations == 237
    train_all(
        driver,
        KG,
        TrainAllOptions(if_missing=True, synthesis=SynthesisConfig(max_topics=12, max_chains=300), **QUICK),
        log=lambda msg: print(f"[kgqa test fb15k] {msg}"),
    )
    return KG


def test_train_all_learns_every_part_from_the_kg_alone(fb15k: str) -> None:
    assert set(kg_models.installed_parts(fb15k)) == set(kg_models.PARTS)
    profile = kg_models.read_profile(fb15k)
    assert profile is not None and profile.route and profile.synthesised > 1000
    assert profile.questions == [] and profile.labelled == 0  # no labelled questions: the KG alone
    assert {"sgrag", "frag", "simgrag", "gsr", "subgraphrag"} <= set(profile.methods)
    listed = json.loads(run_kgqa("kgs", "--json").stdout)
    row = next(r for r in listed if r["name"] == fb15k)
    assert "classifiers" in row["models"] and "route" in row["models"] and row["models_current"] is True
    # every step and the two-step chains that meet (about 28,000 here) are embedded ahead of the questions:
    # FRAG's by the KG's encoder, the path scorer's by itself
    from kgqa.models.chain_vectors import load_chain_vectors

    stored = load_chain_vectors(kg_models.part_dir(fb15k, "frag"))
    assert stored is not None and len(stored.texts) > 20_000
    scorer_chains = json.loads((kg_models.part_dir(fb15k, "path_scorer") / "chains.json").read_text())
    assert len(scorer_chains) > 20_000


@pytest.mark.parametrize(
    ("question", "answers"),
    [
        ("Where was Steven Spielberg born?", {"Cincinnati"}),
        ("who directed jurassic park", {"Steven Spielberg"}),
        pytest.param(
            "Which countries border both Germany and France?",
            {"Luxembourg", "Switzerland", "Belgium"},
            # known miss (issue 28's note): "border" names no relation ("adjoins") closely enough, and Europe
            # joins both countries too; strict, so that the day it is answered this test says so
            marks=pytest.mark.xfail(strict=True, reason="answers Europe: 'border' is not 'adjoins'"),
        ),
        ("Where was the director of Memento born?", {"London"}),
    ],
)
def test_plain_questions_are_answered_by_auto(fb15k: str, question: str, answers: set[str]) -> None:
    done = run_kgqa("ask", question, "--kg", fb15k, "--llm", "none", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["answers"] and result["answers"][0] in answers, result["route"]


@pytest.mark.parametrize("method", ["sgrag", "frag", "simgrag", "gsr", "subgraphrag", "cosine"])
def test_every_method_runs_on_the_kg(fb15k: str, method: str) -> None:
    done = run_kgqa("ask", "what is the capital of france", "--kg", fb15k, "--method", method, "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["topic_entities"] == ["France"] and result["triplets"]


def test_sgrag_ranks_the_chains_walkable_from_the_topic_with_the_path_scorer(fb15k: str) -> None:
    """Learned from the KG alone, the fine-tuned scorer (not the classifier) picks sgrag's chain, and its
    probability is the answer's confidence."""
    done = run_kgqa("ask", "where was steven spielberg born", "--kg", fb15k, "--method", "sgrag", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    trace = result["trace"]
    assert trace["ranked_by"] == "path scorer" and len(trace["chains_ranked"]) > 5
    assert trace["chains_ranked"][0][0] == trace["chain"]  # walkable: the best is used
    assert 0.0 < result["confidence"] <= 1.0 and result["confidence"] == trace["chain_score"]
    profile = kg_models.read_profile(fb15k)
    assert profile is not None and profile.parts["path_scorer"].metrics["chain_at_1_held_out"] > 0.5
    # no labelled questions, no cosine floor: synthesised ones score their own chains far above people's
    assert "cosine_floor" not in profile.parts["path_scorer"].metrics and "below_cosine_floor" in trace
    assert trace["below_cosine_floor"] is None


def test_frag_ranks_its_chains_with_the_path_scorers_cosines(fb15k: str) -> None:
    """FRAG's chain similarity is the KG's fine-tuned scorer's, and its paths reach the answer."""
    done = run_kgqa("ask", "where was steven spielberg born", "--kg", fb15k, "--method", "frag", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["trace"]["chain_similarity"] == "path scorer"
    assert "Cincinnati" in result["answers"]


def test_sgrag_joins_two_topics_on_what_both_reach(fb15k: str, driver: Any) -> None:
    """A question naming two entities: sgrag's answers are the ends that a chain from each of them reaches,
    the pair the scorer finds likeliest, with a confidence on the scale of one chain's."""
    from kgqa.retrieve.linking import link_entities
    from kgqa.retrieve.sgrag import SgragRetriever

    question = "Which Brad Pitt movies did David Fincher direct?"
    topics = link_entities(driver, question, fb15k)
    names = {t.id: t.name for t in topics}
    assert {"Brad Pitt", "David Fincher"} <= set(names.values())
    evidence = SgragRetriever(driver).retrieve(question, fb15k, 1000, topics)  # every path, both topics
    trace = evidence.trace
    assert trace.ranked_by == "path scorer" and len(trace.constrained_by) == 1
    assert evidence.answer_candidates and 0.0 < (evidence.confidence or 0.0) <= 1.0
    reached_from: dict[str, set[str]] = {}
    for path in evidence.paths:
        start = node = next(n for n in (path[0][0], path[0][2]) if n in names.values())
        for head, _relation, tail in path:  # triplets keep the KG's direction; the walk may go against it
            node = tail if head == node else head
        reached_from.setdefault(node, set()).add(start)
    both = {a for a, starts in reached_from.items() if len(starts) == 2}
    assert set(evidence.answer_candidates) <= both, reached_from


def test_webqsp_is_scoped_to_the_questions_the_kg_can_answer(
    fb15k: str, driver: Any, shared_data: Path
) -> None:
    from kgqa.evaluation.datasets import load_dataset
    from kgqa.evaluation.reachable import ANSWER_UNREACHED, TOPIC_MISSING, reachable_questions

    data = load_dataset("webqsp", "test", shared_data / "webqsp")
    kept = reachable_questions(driver, fb15k, data)
    # FB15k-237 holds the topic of about 1,050 of WebQSP test's 1,617 answered questions, and a gold answer
    # within two hops for about 600 of those
    assert 550 <= len(kept.questions) <= 650
    assert kept.skipped[TOPIC_MISSING] > 400 and kept.skipped[ANSWER_UNREACHED] > 300
    assert len(kept.questions) + kept.skipped[TOPIC_MISSING] + kept.skipped[ANSWER_UNREACHED] == len(
        data.questions
    )
    jordan = next(q for q in kept.questions if q.id == "WebQTest-377")
    assert jordan.topic_entities == (("m.054c1", "Michael Jordan"),)
    train = reachable_questions(driver, fb15k, load_dataset("webqsp", "train", shared_data / "webqsp"))
    # train gives answer mids only: the kept questions take their names from the KG
    assert train.questions and all(q.answers for q in train.questions)


def test_the_linker_reads_the_kgs_own_words(fb15k: str, driver: Any) -> None:
    """Initials and a name without its common words, learned from the KG's names; no film word list."""
    rows = driver.execute_query(
        "CALL kgqa.link.entities($question, {kg: $kg}) YIELD name, how RETURN name, how",
        {"question": "what is the capital of the usa", "kg": fb15k},
    ).records
    assert [(r["name"], r["how"]) for r in rows][:1] == [("United States of America", "initials")]


@pytest.mark.parametrize(
    ("question", "linked"),
    [
        (
            "Who was the cinematographer on Raiders of the Lost Ark?",
            ["Indiana Jones and the Raiders of the Lost Ark"],
        ),
        ("what other films did the cinematographer of Michael Clayton shoot", ["Michael Clayton"]),
        ("Which other films did Zoolander's composer score?", ["Zoolander"]),
        ("list some famous cinematographers", ["Cinematographer-GB"]),
    ],
)
def test_a_role_said_of_a_name_is_not_a_second_topic(
    fb15k: str, driver: Any, question: str, linked: list[str]
) -> None:
    """A profession entity named like the role ("the cinematographer of X") is linked only when the question
    names nothing it is said of."""
    rows = driver.execute_query(
        "CALL kgqa.link.entities($question, {kg: $kg}) YIELD name RETURN name",
        {"question": question, "kg": fb15k},
    ).records
    assert [r["name"] for r in rows] == linked


# MetaQA's relation names and the film words a movie KG's questions use: none may be code that every KG runs.
KG_WORDS = re.compile(
    r"starred_actors|directed_by|written_by|has_genre|in_language|release_year|has_tags|imdb|"
    r"\bfilms?\b|\bmovies?\b|\bactors?\b|\bactress(es)?\b|\bdirectors?\b|\bgenres?\b|screenwriters?|\bmetaqa\b",
    re.IGNORECASE,
)


def _code_lines(path: Path) -> list[tuple[int, str]]:
    """The lines of a Python or Java file that are code: comments, docstrings and Javadoc left out."""
    text = path.read_text(encoding="utf-8")
    out: list[tuple[int, str]] = []
    in_doc = False
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if path.suffix == ".py":
            quotes = stripped.count('"""')
            if in_doc or stripped.startswith('"""'):
                if quotes == 1:
                    in_doc = not in_doc
                continue
            code = line.split("#", 1)[0]
        else:
            if in_doc:
                in_doc = "*/" not in stripped
                continue
            if stripped.startswith("/*"):
                in_doc = "*/" not in stripped
                continue
            if stripped.startswith("*") or stripped.startswith("//"):
                continue
            code = line.split("//", 1)[0]
        out.append((number, code))
    return out


def test_no_kg_vocabulary_in_the_code_every_kg_runs() -> None:
    roots = [REPO / "core", REPO / "retrieve", REPO / "qa", REPO / "procedures" / "src" / "main"]
    found = []
    for root in roots:
        for path in sorted([*root.rglob("*.py"), *root.rglob("*.java")]):
            for number, code in _code_lines(path):
                if KG_WORDS.search(code):
                    found.append(f"{path.relative_to(REPO)}:{number}: {code.strip()}")
    assert not found, "\n".join(found)


def test_sgrag_asked_where_does_not_answer_with_people(fb15k: str, driver: Any) -> None:
    """A question asking where the frontman of a band was born: the scorer likes the chain from the band's
    home town to the people born there as much as the one through its members to their birthplaces; a chain
    the KG says arrives at people is not walked for a question asking for a place."""
    from kgqa.core.chains import parse_chain_key
    from kgqa.core.question_words import asked_for
    from kgqa.models.frag_ranker import load_ranker
    from kgqa.retrieve.answer_side import people_for_a_place
    from kgqa.retrieve.linking import link_entities
    from kgqa.retrieve.sgrag import SgragRetriever

    question = "where was the frontman of coldplay born?"
    topics = link_entities(driver, question, fb15k)
    assert [t.name for t in topics] == ["Coldplay"]
    evidence = SgragRetriever(driver).retrieve(question, fb15k, 100, topics)
    trace = evidence.trace
    assert trace.ranked_by == "path scorer" and trace.people_dropped > 0
    assert evidence.answer_candidates
    kinds = load_ranker(fb15k).kinds
    assert people_for_a_place(asked_for(question), kinds, [parse_chain_key(trace.chain)]) == [False]
    unfiltered = SgragRetriever(driver, no_people_for_a_place=False).retrieve(question, fb15k, 100, topics)
    assert unfiltered.trace.people_dropped == 0


def test_the_kinds_a_step_arrives_at_are_read_off_the_kg(fb15k: str, driver: Any) -> None:
    """The path scorer's synthesised questions name their answer's kind ("which country"): the kinds are the
    head types most of a step's arrivals have."""
    from kgqa.models.frag_ranker import kind_key
    from kgqa.training.answer_types import SAMPLE, Arrivals, arrival_kinds, learn_answer_types

    birth = ("people.person.place_of_birth", "out")
    born_here = ("people.person.place_of_birth", "in")
    read = Arrivals(driver, fb15k)
    kinds = arrival_kinds(read, [birth, born_here, ("film.film.country", "out")])
    assert "location" in kinds[birth] and "person" in kinds[born_here] and "person" not in kinds[birth]
    assert "country" in kinds[("film.film.country", "out")]
    # FRAG's answer types read the very sample the kinds were read from, not the database again
    sampled = read(birth)
    assert read(birth) is sampled and len(sampled) == SAMPLE
    assert "location" in learn_answer_types(read, [birth])[kind_key(birth)].split()


def test_sgrag_lowers_the_chains_whose_ends_are_not_the_kind_asked(fb15k: str, driver: Any) -> None:
    """For "what channel", the KG's relation names say what each end is (a TV network, a language), and the
    chains whose ends are of another kind than the one asked lose probability; the others keep theirs."""
    from kgqa.retrieve.answer_kinds import KIND_GAP, entity_kinds
    from kgqa.retrieve.linking import link_entities
    from kgqa.retrieve.sgrag import SgragRetriever

    kinds = entity_kinds(driver, fb15k, ["NBC", "English Language", "no such name"])
    assert "tv network" in kinds["NBC"] and "tv network" not in kinds["English Language"]
    assert "no such name" not in kinds
    question = "What channel did Friends air on?"
    topics = link_entities(driver, question, fb15k)
    assert topics and topics[0].name == "Friends"
    fitted = SgragRetriever(driver).retrieve(question, fb15k, 100, topics).trace
    unfitted = SgragRetriever(driver, fit_asked_kind=False).retrieve(question, fb15k, 100, topics).trace
    assert fitted.ranked_by == "path scorer" and fitted.kind_fits and not unfitted.kind_fits
    best = max(fitted.kind_fits.values())
    before, after = dict(unfitted.chains_ranked), dict(fitted.chains_ranked)
    lowered = [k for k, fit in fitted.kind_fits.items() if fit < best - KIND_GAP and k in before]
    kept = [k for k, fit in fitted.kind_fits.items() if fit >= best - KIND_GAP and k in before]
    assert lowered and kept
    assert all(after[k] < before[k] for k in lowered)
    assert all(after[k] == before[k] for k in kept)
    # a question that names no kind moves nothing
    other = "Tell me about Friends"
    assert (
        not SgragRetriever(driver)
        .retrieve(other, fb15k, 100, link_entities(driver, other, fb15k))
        .trace.kind_fits
    )
