"""Query-text classifiers: question -> MetaQA type (SG-RAG) and hop count / range (FRAG)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kgqa.core.errors import ModelMissing
from kgqa.models import registry
from kgqa.models.question_classifiers import (
    PLACEHOLDER,
    QuestionClassifiers,
    hop_range,
    load_question_classifiers,
    mask_question,
)
from kgqa.training.question_classifiers import train_question_classifiers


def test_mask_question() -> None:
    assert mask_question("who directed [Lee Pace]'s films") == f"who directed {PLACEHOLDER} 's films"
    assert mask_question("Who directed Lee Pace films", ["lee pace"]) == f"who directed {PLACEHOLDER} films"
    # Longest entity text first, so a shorter one inside it does not split it.
    assert mask_question("films with Lee Pace", ["Lee", "Lee Pace"]) == f"films with {PLACEHOLDER}"
    assert mask_question("what is  Kismet about") == "what is kismet about"  # nothing to mask: as is
    assert mask_question("a (b) c", ["(b)"]) == f"a {PLACEHOLDER} c"  # regex characters are literal


def test_hop_range() -> None:
    assert [hop_range(h) for h in (1, 2, 3, 4)] == ["simple", "simple", "complex", "complex"]


@pytest.fixture(scope="module")
def classifiers(question_classifiers: Path) -> QuestionClassifiers:
    del question_classifiers  # installed in the test home by the session fixture
    return registry.question_classifiers()


def test_a_missing_model_is_one_line_naming_the_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KGQA_HOME", str(tmp_path))
    with pytest.raises(ModelMissing) as info:
        registry.question_classifiers()
    message = str(info.value)
    assert "`kgqa train classifiers`" in message and str(tmp_path) in message and "\n" not in message
    (tmp_path / "models" / "question_classifiers").mkdir(parents=True)
    (tmp_path / "models" / "question_classifiers" / "metadata.json").write_text('{"format_version": 0}')
    with pytest.raises(ModelMissing, match="no usable question classifier"):
        registry.question_classifiers()


@pytest.mark.parametrize(
    ("question", "qtype"),
    [
        ("who directed [Titanic]", "movie_to_director"),
        ("what movies did [Tom Hanks] act in", "actor_to_movie"),
        ("what genre is [Kismet]", "movie_to_genre"),
        ("which films can be described by [time travel]", "tag_to_movie"),
        ("who are the co-stars of [Lee Pace]", "actor_to_movie_to_actor"),
        ("when were the movies directed by [Sam Mendes] released", "director_to_movie_to_year"),
        (
            "the films that share actors with the film [Creepshow] were in which languages",
            "movie_to_actor_to_movie_to_language",
        ),
        (
            "who wrote the films directed by the director of [Black Snake Moan]",
            "movie_to_director_to_movie_to_writer",
        ),
    ],
)
def test_qtype_sanity(classifiers: QuestionClassifiers, question: str, qtype: str) -> None:
    prediction = classifiers.predict_qtype(question)
    assert prediction.qtype == qtype, prediction.ranked
    assert prediction.hops == qtype.count("_to_")
    assert prediction.ranked[0][0] == qtype and len(prediction.ranked) == 5


def test_without_brackets_the_linked_span_is_masked(classifiers: QuestionClassifiers) -> None:
    assert classifiers.predict_qtype("who directed Titanic", ["Titanic"]).qtype == "movie_to_director"
    prediction = classifiers.predict_qtype("what movies did tom hanks act in", ["Tom Hanks"])
    assert prediction.qtype == "actor_to_movie"


@pytest.mark.parametrize(
    ("question", "hops"),
    [
        ("what language is [Amélie] in", 1),
        ("which person directed the movies starred by [John Krasinski]", 2),
        ("who starred movies for the director of [Written on the Wind]", 3),
    ],
)
def test_hops_and_range(classifiers: QuestionClassifiers, question: str, hops: int) -> None:
    prediction = classifiers.predict_hops(question)
    assert prediction.hops == hops
    assert prediction.hop_range == ("complex" if hops == 3 else "simple")


def test_saved_metadata_is_honest(classifiers: QuestionClassifiers) -> None:
    meta = classifiers.metadata
    assert isinstance(meta["seed"], int)
    assert meta["data_files"] and not any("test" in name for name in meta["data_files"])
    assert all(len(digest) == 64 for digest in meta["data_files"].values())
    assert meta["holdout"]["patterns_held_out"] > 0
    assert meta["holdout"]["vanilla"]["qtype_accuracy_masked"] > 0.9
    assert meta["holdout"]["vanilla"]["hop_range_accuracy_masked"] > 0.95
    assert len(meta["qtypes"]) == 49


def test_train_save_load_roundtrip(tmp_path: Path, shared_data: Path) -> None:
    trained = train_question_classifiers(
        data_root=shared_data / "metaqa", out_dir=tmp_path, seed=7, fills_per_pattern=0, use_ntm=False
    )
    meta = json.loads((tmp_path / "metadata.json").read_text())
    assert meta["seed"] == 7 and meta["use_ntm"] is False
    loaded = load_question_classifiers(tmp_path)
    assert loaded is not None
    questions = ["who directed [Titanic]", "what languages are the films directed by [Joel Zwick] in"]
    before = [p.qtype for p in trained.predict_qtypes(questions)]
    assert [p.qtype for p in loaded.predict_qtypes(questions)] == before
    assert load_question_classifiers(tmp_path / "absent") is None


def test_paraphrases_reword_a_pattern_and_keep_the_entity_slot() -> None:
    import random

    from kgqa.training.paraphrase import paraphrase

    pattern = f"which person directed the movies starred by {PLACEHOLDER}"
    rewrites = {paraphrase(pattern, random.Random(seed)) for seed in range(40)}
    assert all(PLACEHOLDER in r for r in rewrites)
    assert len(rewrites) > 20 and pattern in rewrites | {pattern}
    assert any("pictures" in r or "films" in r or "flicks" in r for r in rewrites)
    assert any("made" in r or "helmed" in r for r in rewrites)
    assert paraphrase(pattern, random.Random(3)) == paraphrase(pattern, random.Random(3))


def test_paraphrased_training_is_recorded(tmp_path: Path, shared_data: Path) -> None:
    trained = train_question_classifiers(
        data_root=shared_data / "metaqa",
        out_dir=tmp_path,
        seed=7,
        fills_per_pattern=0,
        use_ntm=False,
        paraphrases_per_pattern=2,
    )
    assert trained.metadata["paraphrases_per_pattern"] == 2
    assert trained.metadata["training_examples"] == 3 * trained.metadata["patterns"]
    assert trained.predict_qtype("who made the pictures [Tom Hanks] appeared in").qtype == (
        "actor_to_movie_to_director"
    )
