"""What `kgqa train all` reads and writes before any model: labelled question files in their formats (never a
test split, never a held-out row), chains, relation names read as English, and synthesised wordings."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from kgqa.core.chains import chain_key, is_round_trip, parse_chain_key
from kgqa.core.errors import KgqaError
from kgqa.core.question_words import asked_for
from kgqa.core.relation_text import asked_role, chain_text, relation_words, step_text
from kgqa.training.questions import (
    LabelledQuestion,
    _read_bracket_tsv,
    question_files,
    read_raw,
    webqsp_chain,
)
from kgqa.training.synthesis import SOURCE, as_people_ask
from kgqa.training.wording import FAMILIES, word_kind_question, word_question, word_round_trip


def test_chain_keys_round_trip_and_refuse_what_is_not_one() -> None:
    chain = (("directed_by", "out"), ("directed_by", "in"))
    assert chain_key(chain) == "directed_by>|directed_by<"
    assert parse_chain_key("directed_by>|directed_by<") == chain
    assert is_round_trip(chain) and not is_round_trip((("a", "out"), ("b", "in")))
    for bad in ("", "directed_by", "a>|", "a>|b"):
        with pytest.raises(ValueError):
            parse_chain_key(bad)


def test_relation_names_read_as_english() -> None:
    birth = relation_words("people.person.place_of_birth")
    assert (birth.subject, birth.role, birth.domain) == ("person", "place of birth", "people")
    cvt = relation_words("film.actor.film..film.performance.film")
    assert (cvt.subject, cvt.role) == ("actor", "film")
    deep = relation_words("base.popstra.celebrity.dated..base.popstra.dated.participant")
    assert (deep.subject, deep.role, deep.phrase) == ("celebrity", "participant", "dated participant")
    plain = relation_words("directed_by")
    assert (plain.subject, plain.role) == ("", "directed by")
    assert relation_words("birthPlace").role == "birth place"
    assert asked_role(("people.person.place_of_birth", "out")) == "place of birth"
    assert asked_role(("film.director.film", "in")) == "director"
    assert step_text(("directed_by", "in")) == "directed by of"
    assert chain_text([("film.director.film", "in"), ("people.person.place_of_birth", "out")]) == (
        "director with film , person place of birth"
    )


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("Which city is the seat of Broome County?", "city"),
        ("what kind of music does radiohead play", "music"),
        ("Where was Steven Spielberg born?", "place location"),
        ("who directed jurassic park", "person"),
        ("When did Up come out?", "date year time"),
        ("how many films did he make", "number amount"),
        ("what is the capital of france", ""),
        # the noun at the end of its phrase, not a word before it or the verb after it
        ("Which punk bands are from L.A.?", "bands"),
        ("which famous composer died in Bayreuth", "composer"),
        ("which actor plays batman", "actor"),
        ("which countries border both Germany and France?", "countries"),
        ("Which other films did Zoolander's composer score?", "films"),
        ("Which politician went to the University of Delaware?", "politician"),
        ("which singer wrote hallelujah", "singer"),
        # the question's own question word, not one of a relative clause
        ("how did the guy who wrote jurassic park die", ""),
        ("what is the name of the man who wrote it", "person"),
        ("where is spain located, what continent", "continent"),
    ],
)
def test_what_a_question_asks_for(question: str, kind: str) -> None:
    assert asked_for(question) == kind


def test_wordings_come_in_two_families_and_name_the_topic() -> None:
    chain = (("film.director.film", "in"), ("people.person.place_of_birth", "out"))
    rng = random.Random(3)
    seen = {family: set() for family in FAMILIES}
    for family in FAMILIES:
        for _ in range(30):
            wording = word_question(chain, "Memento", "where", rng, family)
            assert "memento" in wording.text.lower() and wording.family == family
            seen[family].add(wording.template)
    assert not seen["A"] & seen["B"]  # the route's family is worded by templates no model saw


def test_kind_wordings_name_what_is_asked_and_keep_the_topic() -> None:
    chain = (("location.location.adjoin_s..location.adjoining_relationship.adjoins", "out"),)
    rng = random.Random(5)
    for _ in range(20):
        wording = word_kind_question(chain, "Spain", "country", rng)
        assert "country" in wording.text.lower() and "spain" in wording.text.lower() and wording.family == "A"


def test_a_kind_that_most_steps_arrive_at_is_not_asked_for() -> None:
    from kgqa.training.answer_types import specific_kinds

    kinds = {(f"r{i}", "out"): ("topic", f"kind{i % 5}", "person") for i in range(10)}
    kinds[("r0", "in")] = ("topic",)
    kinds[("r1", "in")] = ("person", "film", "actor", "award nominee")
    specific = specific_kinds(kinds, broad_share=0.5, most=3)
    assert ("r0", "in") not in specific  # nothing left to ask for
    assert specific[("r3", "out")] == ("kind3",)  # "topic" and "person" name more than half of the steps
    assert specific[("r1", "in")] == ("film", "actor", "award nominee")


def test_only_synthesised_questions_whose_step_has_a_kind_are_worded_again() -> None:
    step = ("location.location.adjoin_s..location.adjoining_relationship.adjoins", "out")
    other = ("people.person.place_of_birth", "out")

    def question(text: str, chain: tuple, source: str) -> LabelledQuestion:
        return LabelledQuestion(text, ("m.1",), ("Spain",), ("m.2",), chain, source, "A")

    questions = [question(f"q{i} Spain", (step,), SOURCE) for i in range(40)]
    questions += [question("labelled Spain", (step,), "f.csv:3"), question("birth Spain", (other,), SOURCE)]
    named = as_people_ask(questions, {step: ("country",)}, share=0.5, seed=1)
    changed = [b for a, b in zip(questions, named, strict=True) if a.text != b.text]
    assert 8 <= len(changed) <= 32  # about half of the 40 that can be
    assert all("country" in q.text.lower() and q.topic_spans[0] in q.text for q in changed)
    assert named[-2:] == questions[-2:]  # a labelled question, and a step that arrives at no kind
    assert as_people_ask(questions, {step: ("country",)}, share=0.5, seed=1) == named  # seeded
    assert as_people_ask(questions, {step: ("country",)}, share=0.0, seed=1) == questions


def test_a_round_trip_is_asked_for_others_with_the_same_neighbour() -> None:
    trip = (("film.film.cinematography", "out"), ("film.film.cinematography", "in"))
    rng = random.Random(2)
    texts = {word_round_trip(trip, "The Godfather", "film", rng).text.lower() for _ in range(30)}
    assert all("the godfather" in t and "cinematography" in t for t in texts)
    assert any("other films" in t for t in texts) and any("same" in t for t in texts)
    question = LabelledQuestion("q The Godfather", ("m.1",), ("The Godfather",), ("m.2",), trip, SOURCE, "A")
    worded = as_people_ask([question] * 20, {}, share=0.5, seed=3)  # round trips: twice the share
    assert sum(q.text != question.text for q in worded) >= 12


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_bracket_files_with_chains_in_either_notation(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "qa_dev.txt",
        "what did [Ann Actor] star in\tAlpha|Beta\tstarred_actors_inv\n"
        "who directed the films of [Ann Actor]\tDee\tstarred_actors<|directed_by>\n"
        "\n"
        "who wrote [Alpha]\tWes\n",
    )
    rows = list(_read_bracket_tsv(path))
    assert [r.chain for r in rows] == [
        (("starred_actors", "in"),),
        (("starred_actors", "in"), ("directed_by", "out")),
        None,
    ]
    assert rows[0].text == "what did Ann Actor star in" and rows[0].topics == ("Ann Actor",)
    assert rows[0].answers == ("Alpha", "Beta") and rows[0].source.endswith("qa_dev.txt:1")
    bad = _write(tmp_path / "bad_dev.txt", "a question without answers\n")
    with pytest.raises(KgqaError, match="bad_dev.txt:1"):
        list(_read_bracket_tsv(bad))


def test_folders_are_searched_but_test_splits_never_read(tmp_path: Path) -> None:
    _write(tmp_path / "1-hop" / "qa_dev.txt", "who directed [A]\tB\n")
    _write(tmp_path / "1-hop" / "qa_test.txt", "who directed [C]\tD\n")
    _write(tmp_path / "1-hop" / "qa_dev_qtype.txt", "movie_to_director\n")
    _write(tmp_path / "kb.txt", "A|directed_by|B\n")
    assert [p.name for p in question_files([tmp_path])] == ["qa_dev.txt"]
    with pytest.raises(KgqaError, match="test split is for final reporting only"):
        question_files([tmp_path / "1-hop" / "qa_test.txt"])
    with pytest.raises(KgqaError, match="no such file"):
        question_files([tmp_path / "absent"])


def test_json_lines_skip_held_out_rows(tmp_path: Path) -> None:
    rows = [
        {
            "question": "where was Ada born",
            "topic_ids": ["m.1"],
            "answer_ids": ["m.2"],
            "part": "tune",
            "relation_path": [["people.person.place_of_birth", "out"]],
        },
        {"question": "where was Alan born", "topic_ids": ["m.3"], "answer_ids": ["m.4"], "part": "heldout"},
        {"question": "who did Grace marry", "topics": ["Grace Hopper"], "answers": ["Vincent"]},
    ]
    path = _write(tmp_path / "own.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    read = list(read_raw(path))
    assert [r.text for r in read] == ["where was Ada born", "who did Grace marry"]
    assert read[0].topics_are_ids and read[0].chain == (("people.person.place_of_birth", "out"),)
    assert not read[1].topics_are_ids and read[1].spans == ("Grace Hopper",)


def test_webqsp_csv_and_its_chains(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "webqsp_train.csv",
        ",head,qa,rel,ans\n"
        "0,m.09l3p,what character did natalie portman play in star wars,"
        "['film.actor.film|film.performance.character'],m.0drf_\n"
        "1,m.03st9j,what country is the grand bahama island in,['location.location.containedby'],m.0160w\n",
    )
    read = list(read_raw(path))
    assert [r.topics for r in read] == [("m.09l3p",), ("m.03st9j",)]
    assert read[1].answers == ("m.0160w",) and read[1].chain_text == "location.location.containedby"
    relations = {"film.actor.film..film.performance.character", "location.location.containedby"}
    assert webqsp_chain("film.actor.film|film.performance.character", relations) == (
        ("film.actor.film..film.performance.character", "out"),
    )
    assert webqsp_chain("location.location.containedby", relations) == (
        ("location.location.containedby", "out"),
    )
    assert webqsp_chain("people.person.nationality", relations) is None
