"""SG-RAG on a tiny hand-made KG: the no-backtrack rule, KG scoping, the path guard, k, the retriever.

The graph (KG ``test_sgrag``), all relationships movie -> value as in MetaQA:

    Alpha Film  -starred_actors-> Ann Actor, Bob Actor;  -directed_by-> Dee Director;  -release_year-> 1990
    Beta Film   -starred_actors-> Ann Actor;             -directed_by-> Eve Director;  -release_year-> 1995
    Gamma Film  -starred_actors-> Bob Actor;             -directed_by-> Dee Director
    Delta Film  -starred_actors-> Cat Actor;             -directed_by-> Fay Director

A second KG ``test_sgrag_other`` holds another ``Alpha Film`` (same name and id) starring ``Zed Actor``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import pytest
from kgqa.core.chains import parse_chain_key
from kgqa.core.types import LinkedEntity
from kgqa.graph.walkable import kg_chains
from kgqa.models import registry
from kgqa.retrieve import sgrag
from kgqa.retrieve.linking import link_entities
from kgqa.retrieve.paths import chain_ends, rank_answers, run_steps, select_paths, steps_query
from kgqa.retrieve.sgrag import SgragRetriever, SgragTrace, run_template

KG = "test_sgrag"
OTHER_KG = "test_sgrag_other"
TRIPLES = [
    ("Alpha Film", "starred_actors", "Ann Actor"),
    ("Alpha Film", "starred_actors", "Bob Actor"),
    ("Alpha Film", "directed_by", "Dee Director"),
    ("Alpha Film", "release_year", "1990"),
    ("Beta Film", "starred_actors", "Ann Actor"),
    ("Beta Film", "directed_by", "Eve Director"),
    ("Beta Film", "release_year", "1995"),
    ("Gamma Film", "starred_actors", "Bob Actor"),
    ("Gamma Film", "directed_by", "Dee Director"),
    ("Delta Film", "starred_actors", "Cat Actor"),
    ("Delta Film", "directed_by", "Fay Director"),
]
OTHER_TRIPLES = [("Alpha Film", "starred_actors", "Zed Actor"), ("Omega Film", "starred_actors", "Zed Actor")]

CREATE = """
UNWIND $triples AS t
MERGE (h:Entity {kg: $kg, id: t[0]}) ON CREATE SET h.name = t[0]
MERGE (x:Entity {kg: $kg, id: t[2]}) ON CREATE SET x.name = t[2]
WITH h, x, t
CALL apoc.create.relationship(h, t[1], {}, x) YIELD rel
RETURN count(rel) AS n
"""


def _delete(driver, kg: str) -> None:  # type: ignore[no-untyped-def]
    driver.execute_query("MATCH (e:Entity {kg: $kg}) DETACH DELETE e", {"kg": kg})
    driver.execute_query("MATCH (k:KG {name: $kg}) DELETE k", {"kg": kg})


@pytest.fixture(scope="module")
def tiny_kg(driver) -> Iterator[str]:  # type: ignore[no-untyped-def]
    for kg, triples in ((KG, TRIPLES), (OTHER_KG, OTHER_TRIPLES)):
        _delete(driver, kg)
        driver.execute_query(CREATE, {"kg": kg, "triples": [list(t) for t in triples]})
        # a loaded KG has its :KG node (the linker and the retrievers only answer for loaded KGs)
        driver.execute_query("CREATE (:KG {name: $kg, source: 'test', status: 'complete'})", {"kg": kg})
    yield KG
    for kg in (KG, OTHER_KG):
        _delete(driver, kg)


def _answers(driver, chain: str, topic: str) -> list[str]:  # type: ignore[no-untyped-def]
    return sorted(set(run_template(driver, chain, KG, [topic]).answers))


def test_paths_never_pass_back_through_the_topic(driver, tiny_kg: str) -> None:  # type: ignore[no-untyped-def]
    # Co-stars of Ann: Bob (through Alpha) -- never Ann herself through Alpha or Beta.
    assert _answers(driver, "starred_actors<|starred_actors>", "Ann Actor") == ["Bob Actor"]
    # Films sharing an actor with Alpha: Beta (Ann) and Gamma (Bob), not Alpha itself.
    assert _answers(driver, "starred_actors>|starred_actors<", "Alpha Film") == ["Beta Film", "Gamma Film"]
    # Directors of those films: Eve (Beta) and Dee (Gamma). Dee is also Alpha's director, but is reached
    # through Gamma; Alpha -> Ann <- Alpha -> Dee would backtrack and is not a path.
    assert _answers(driver, "starred_actors>|starred_actors<|directed_by>", "Alpha Film") == [
        "Dee Director",
        "Eve Director",
    ]
    assert _answers(driver, "starred_actors>|starred_actors<|release_year>", "Alpha Film") == [
        "1995"
    ]  # not Alpha's 1990
    paths = run_template(driver, "starred_actors>|starred_actors<|directed_by>", KG, ["Alpha Film"]).paths
    for path in paths:
        assert all(head != "Alpha Film" for head, _rel, _tail in path[1:])


def test_triplets_keep_the_kg_direction(driver, tiny_kg: str) -> None:  # type: ignore[no-untyped-def]
    match = run_template(driver, "starred_actors<|directed_by>", KG, ["Bob Actor"])
    assert sorted(map(tuple, match.paths)) == [
        (("Alpha Film", "starred_actors", "Bob Actor"), ("Alpha Film", "directed_by", "Dee Director")),
        (("Gamma Film", "starred_actors", "Bob Actor"), ("Gamma Film", "directed_by", "Dee Director")),
    ]
    assert match.answers == ["Dee Director", "Dee Director"]
    answers, support, _first = rank_answers(match)
    assert (answers, support) == (["Dee Director"], [2])


def test_scoped_to_one_kg(driver, tiny_kg: str) -> None:  # type: ignore[no-untyped-def]
    assert _answers(driver, "starred_actors>", "Alpha Film") == ["Ann Actor", "Bob Actor"]
    other = run_template(driver, "starred_actors>", OTHER_KG, ["Alpha Film"])
    assert other.answers == ["Zed Actor"]


def test_max_paths_guard(driver, tiny_kg: str) -> None:  # type: ignore[no-untyped-def]
    full = run_template(driver, "starred_actors>|starred_actors<|directed_by>", KG, ["Alpha Film"])
    assert len(full.paths) == 2 and not full.truncated
    cut = run_template(
        driver, "starred_actors>|starred_actors<|directed_by>", KG, ["Alpha Film"], max_paths=1
    )
    assert len(cut.paths) == 1 and cut.truncated


def test_a_walks_ends_alone_and_a_walk_to_given_ends_agree_with_the_full_walk(driver, tiny_kg: str) -> None:  # type: ignore[no-untyped-def]
    chain = "starred_actors>|starred_actors<|directed_by>"
    steps = parse_chain_key(chain)
    full = run_template(driver, chain, KG, ["Alpha Film"])
    ends = chain_ends(driver, KG, ["Alpha Film"], [chain, "directed_by>"])
    assert ends[chain] == (set(full.answers), False) == ({"Dee Director", "Eve Director"}, False)
    director = run_template(driver, "directed_by>", KG, ["Alpha Film"]).answers[0]
    assert ends["directed_by>"] == ({director}, False)
    assert chain_ends(driver, KG, ["Alpha Film"], [chain], max_paths=1)[chain][1]
    assert chain_ends(driver, KG, ["Alpha Film"], []) == {}
    to_eve = run_steps(
        driver, steps_query(steps, "test", to_ends=True), chain, KG, ["Alpha Film"], ends=["Eve Director"]
    )
    assert to_eve.answers == ["Eve Director"]
    assert to_eve.paths == [p for p, a in zip(full.paths, full.answers, strict=True) if a == "Eve Director"]


def test_a_join_keeps_the_ends_both_topics_reach_and_reads_only_their_paths(driver, tiny_kg: str) -> None:  # type: ignore[no-untyped-def]
    # "which film did Dee Director make with Bob Actor": Dee directed Alpha and Gamma, Bob starred in both,
    # Ann (the likelier first chain of no one) meets neither; the pair's confidence is the geometric mean
    by_topic = {
        "Dee Director": [("directed_by<", 0.8, 0.6), ("directed_by<|release_year>", 0.2, 0.3)],
        "Bob Actor": [("starred_actors<|starred_actors>", 0.5, 0.5), ("starred_actors<", 0.5, 0.4)],
    }
    trace = SgragTrace(chain="", chain_classified="", chain_score=0.0, chains_ranked=[], hop_range="simple")
    joined = SgragRetriever(driver).join(KG, by_topic, ["Dee Director", "Bob Actor"], trace)
    assert joined is not None
    match, confidence = joined
    assert sorted(set(match.answers)) == ["Alpha Film", "Gamma Film"]
    assert confidence == pytest.approx((0.8 * 0.5) ** 0.5)
    assert trace.constrained_by == ["Bob Actor: starred_actors<"]
    assert sorted(map(tuple, match.paths)) == [
        (("Alpha Film", "directed_by", "Dee Director"),),
        (("Alpha Film", "starred_actors", "Bob Actor"),),
        (("Gamma Film", "directed_by", "Dee Director"),),
        (("Gamma Film", "starred_actors", "Bob Actor"),),
    ]
    apart = {"Dee Director": [("directed_by<", 1.0, 0.6)], "Cat Actor": [("starred_actors<", 1.0, 0.5)]}
    assert SgragRetriever(driver).join(KG, apart, ["Dee Director", "Cat Actor"], trace) is None


def test_a_join_pairs_each_topics_best_one_step_chains_too(driver, tiny_kg: str, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # "which films did Dee Director and Bob Actor both make": the scorer ranks a two-step chain of each first
    # (their films' years meet on 1990); their own films, one step each, are paired too and win
    monkeypatch.setattr(sgrag, "JOIN_CHAINS", 1)
    by_topic = {
        "Dee Director": [("directed_by<|release_year>", 0.6, 0.6), ("directed_by<", 0.4, 0.5)],
        "Bob Actor": [("starred_actors<|release_year>", 0.6, 0.6), ("starred_actors<", 0.4, 0.5)],
    }
    trace = SgragTrace(chain="", chain_classified="", chain_score=0.0, chains_ranked=[], hop_range="simple")
    joined = SgragRetriever(driver).join(KG, by_topic, ["Dee Director", "Bob Actor"], trace)
    assert joined is not None and sorted(set(joined[0].answers)) == ["Alpha Film", "Gamma Film"]
    pair = ["Dee Director", "Bob Actor"]
    only_best = SgragRetriever(driver, join_one_step=False).join(KG, by_topic, pair, trace)
    assert only_best is not None and sorted(set(only_best[0].answers)) == ["1990"]
    # a one-step chain the scorer did not rank first pairs with one-step chains only: Dee's films meet
    # Beta Film's co-stars' films on Alpha Film, but that is a second entity's two-step chain
    with_film = {
        "Dee Director": [("directed_by<|starred_actors>", 0.9, 0.6), ("directed_by<", 0.1, 0.4)],
        "Beta Film": [("starred_actors>|starred_actors<", 1.0, 0.6)],
    }
    assert SgragRetriever(driver).join(KG, with_film, ["Dee Director", "Beta Film"], trace) is None


def test_the_kgs_chains_are_its_steps_and_the_pairs_that_meet_most_first(driver, tiny_kg: str) -> None:  # type: ignore[no-untyped-def]
    chains = kg_chains(driver, KG, 1000)
    one_step = {c for c in chains if len(c) == 1}
    assert one_step == {
        ((r, w),) for r in ("starred_actors", "directed_by", "release_year") for w in ("out", "in")
    }
    assert (("directed_by", "in"), ("starred_actors", "out")) in chains  # a director's films' actors
    assert (("starred_actors", "in"), ("directed_by", "out")) in chains  # an actor's films' directors
    assert (("release_year", "out"), ("directed_by", "in")) not in chains  # a year directs nothing
    two_step = [c for c in chains if len(c) == 2]
    # four films have an actor and a director; two have a release year and a director
    assert two_step.index((("starred_actors", "in"), ("directed_by", "out"))) < two_step.index(
        (("release_year", "in"), ("directed_by", "out"))
    )
    assert len(kg_chains(driver, KG, 3)) == 3 and kg_chains(driver, KG, 0) == []


def test_a_chain_that_is_not_one_is_refused(driver) -> None:  # type: ignore[no-untyped-def]
    for chain in ("movie_to_x", "starred_actors", "", "a>|"):
        with pytest.raises(ValueError, match="is not a relation followed by"):
            run_template(driver, chain, KG, ["Alpha Film"])
    with pytest.raises(ValueError, match="cannot be quoted"):
        run_template(driver, "x`]->(n) DETACH DELETE n //>", KG, ["Alpha Film"])


def test_select_paths_keeps_every_answer_within_k(driver, tiny_kg: str) -> None:  # type: ignore[no-untyped-def]
    match = run_template(driver, "starred_actors>|starred_actors<|directed_by>", KG, ["Alpha Film"])
    answers, _support, first = rank_answers(match)
    chosen, count = select_paths(match, answers, first, k=1)
    assert {match.answers[i] for i in chosen} == set(answers)  # one path per answer even over k
    assert count == 6  # two 3-triplet paths, nothing shared
    chosen_all, _ = select_paths(match, answers, first, k=100)
    assert sorted(chosen_all) == [0, 1]


@pytest.fixture(scope="module")
def retriever(driver, metaqa_models: str) -> SgragRetriever:  # type: ignore[no-untyped-def]
    # KG metaqa's real classifiers: the tiny KG has its relations and no models of its own
    return SgragRetriever(driver, classifiers=registry.question_classifiers(metaqa_models))


def test_retriever_end_to_end(
    driver,
    tiny_kg: str,
    retriever: SgragRetriever,  # type: ignore[no-untyped-def]
) -> None:
    question = "which movies have the same actor of [Alpha Film]"
    topics = link_entities(driver, question, KG)
    assert [(t.id, t.how) for t in topics] == [("Alpha Film", "bracket")]
    evidence = retriever.retrieve(question, KG, k=100, topic_entities=topics)
    assert evidence.method == "sgrag" and isinstance(evidence.trace, SgragTrace)
    assert evidence.trace.chain == "starred_actors>|starred_actors<"
    assert evidence.hops == 2 and evidence.trace.hop_range == "simple"
    assert sorted(evidence.answer_candidates) == ["Beta Film", "Gamma Film"]
    # MOT: deduplicated, and ordered outward from the topic entity.
    assert len(evidence.triplets) == len(set(evidence.triplets)) == 4
    assert [t[0] for t in evidence.triplets[:2]] == ["Alpha Film", "Alpha Film"]
    assert {t[0] for t in evidence.triplets[2:]} == {"Beta Film", "Gamma Film"}
    assert {"classify", "template", "mot"} <= set(evidence.latency_ms)


def test_retriever_falls_back_to_a_chain_that_matches(
    driver,
    tiny_kg: str,  # type: ignore[no-untyped-def]
    retriever: SgragRetriever,
) -> None:
    # Worded like "who directed [X]" but X is an actor: directed_by> matches nothing from an actor, so a
    # next-best chain is tried; whatever it is, it must start from an actor.
    topics = [LinkedEntity(id="Ann Actor", name="Ann Actor", score=1.0, how="given")]
    evidence = retriever.retrieve("who directed [Ann Actor]", KG, k=100, topic_entities=topics)
    assert isinstance(evidence.trace, SgragTrace)
    tried = evidence.trace.chains_tried
    assert tried[0] == "directed_by>"
    assert len(tried) >= 2
    if evidence.answer_candidates:
        assert evidence.trace.chain.startswith("starred_actors<")


def test_an_alternative_the_words_also_name_is_walked_when_the_chain_leads_nowhere_from_the_linked_one(
    driver,
    tiny_kg: str,  # type: ignore[no-untyped-def]
    retriever: SgragRetriever,
) -> None:
    """The linker took the words for an actor, and also found a film they name: the classifier's chain
    (directed_by>) leads nowhere from the actor, so sgrag walks it from the film, and says so."""
    film = LinkedEntity(id="Alpha Film", name="Alpha Film", score=0.5, how="exact", span="alpha")
    actor = LinkedEntity(
        id="Ann Actor", name="Ann Actor", score=0.6, how="fuzzy", span="alpha", alternatives=(film,)
    )
    question = "who directed [alpha]"
    evidence = retriever.retrieve(question, KG, k=100, topic_entities=[actor])
    assert isinstance(evidence.trace, SgragTrace)
    assert evidence.trace.chain == "directed_by>" and evidence.answer_candidates == ["Dee Director"]
    assert [e.id for e in evidence.topic_entities] == ["Alpha Film"]
    assert evidence.trace.topic_from_alternatives == ["Alpha Film"]

    without = replace(retriever, try_alternatives=False).retrieve(question, KG, k=100, topic_entities=[actor])
    assert isinstance(without.trace, SgragTrace) and without.trace.topic_from_alternatives == []
    assert [e.id for e in without.topic_entities] == ["Ann Actor"]
    assert "Dee Director" not in without.answer_candidates

    # an alternative the chain leads nowhere from either changes nothing
    year = LinkedEntity(id="1990", name="1990", score=0.5, how="exact", span="alpha")
    stuck = replace(actor, alternatives=(year,))
    unchanged = retriever.retrieve(question, KG, k=100, topic_entities=[stuck])
    assert [e.id for e in unchanged.topic_entities] == ["Ann Actor"]


def test_no_topic_entity_gives_empty_evidence(
    driver,
    tiny_kg: str,  # type: ignore[no-untyped-def]
    retriever: SgragRetriever,
) -> None:
    question = "who directed [nobody's film'}) DETACH DELETE e //]"
    counts = driver.execute_query(
        "MATCH (e:Entity {kg: $kg}) OPTIONAL MATCH (e)-[r]->() RETURN count(DISTINCT e) AS n, count(r) AS r",
        {"kg": KG},
    ).records[0]
    topics = link_entities(driver, question, KG)
    assert topics == []
    evidence = retriever.retrieve(question, KG, k=100, topic_entities=topics)
    assert evidence.is_empty and evidence.answer_candidates == []
    assert "no topic entity" in evidence.reason
    after = driver.execute_query(
        "MATCH (e:Entity {kg: $kg}) OPTIONAL MATCH (e)-[r]->() RETURN count(DISTINCT e) AS n, count(r) AS r",
        {"kg": KG},
    ).records[0]
    assert (after["n"], after["r"]) == (counts["n"], counts["r"])


def test_a_question_worded_unlike_the_kgs_own_is_ranked_by_the_path_scorer(
    driver,
    metaqa_models: str,  # type: ignore[no-untyped-def]
) -> None:
    """Below the familiarity threshold (here set, else the KG's learned one), when the classifier is not sure
    of its chain, sgrag ranks the chains walkable from the topic with the KG's fine-tuned path scorer, which
    reads people's wording. A chain the classifier is sure of, or no threshold, keeps what the KG's held-out
    questions chose (the classifier unless the scorer won there)."""
    from kgqa.models.kg_models import part_dir
    from kgqa.models.path_scorer import ranks_sgrag

    by_default = (
        "path scorer" if ranks_sgrag(part_dir(metaqa_models, "path_scorer")) else "question classifier"
    )
    people = "any idea which flicks Tom Hanks shows up in"
    topics = [t for t in link_entities(driver, people, metaqa_models) if t.name == "Tom Hanks"]  # not the tag
    assert topics
    unlike = SgragRetriever(driver, unfamiliar_below=0.99).retrieve(people, metaqa_models, 100, topics)
    assert isinstance(unlike.trace, SgragTrace) and unlike.trace.familiarity is not None
    assert unlike.trace.familiarity < 0.99 and unlike.trace.ranked_by == "path scorer"
    classified = SgragRetriever(driver).classify(people, metaqa_models, topics)
    assert classified.score < 0  # the classifier is not sure of any chain: none of its words
    assert unlike.answer_candidates and unlike.confidence is not None

    templated = "what movies did [Tom Hanks] act in"
    like = SgragRetriever(driver, unfamiliar_below=0.99).retrieve(templated, metaqa_models, 100, topics)
    assert isinstance(like.trace, SgragTrace) and like.trace.chain_score > 0  # a chain it is sure of ...
    assert like.trace.familiarity is None and like.trace.ranked_by == by_default  # ... keeps the classifier
    never = SgragRetriever(driver, unfamiliar_below=0.0).retrieve(people, metaqa_models, 100, topics)
    assert isinstance(never.trace, SgragTrace) and never.trace.familiarity is None
    # (or the scorer ranks because the classifier's chain cannot be walked from the topic: the next test)
    assert never.trace.ranked_by == by_default or never.trace.classifier_chain_unwalkable


def test_each_topics_chains_are_ranked_against_the_question_with_that_topic_masked(
    driver,
    metaqa_models: str,
    monkeypatch,  # type: ignore[no-untyped-def]
) -> None:
    """As the scorer learned its questions: the topic whose chains it ranks is the mask, the other names stay
    words of the question (masking one of two at random once made the same question rank differently from
    one process to the next)."""
    from kgqa.models.path_scorer import TOPIC_MASK, scorer_query

    question = "which films did Tom Hanks and Meg Ryan both star in"
    topics = [
        t for t in link_entities(driver, question, metaqa_models) if t.name in ("Tom Hanks", "Meg Ryan")
    ]
    assert {t.name for t in topics} == {"Tom Hanks", "Meg Ryan"}
    scorer = registry.path_scorer(metaqa_models, outranked_too=True)
    assert scorer is not None
    read: list[str] = []
    rank = scorer.rank

    def recorded(text, spans, chains):  # type: ignore[no-untyped-def]
        read.append(scorer_query(text, spans))
        return rank(text, spans, chains)

    monkeypatch.setattr(scorer, "rank", recorded)
    ranked = SgragRetriever(driver).rank_walkable(
        question, metaqa_models, [t.id for t in topics], topics, outranked_too=True
    )
    assert ranked is not None and len(ranked) == 2
    assert sorted(read) == [
        f"which films did {TOPIC_MASK} and meg ryan both star in",
        f"which films did tom hanks and {TOPIC_MASK} both star in",
    ]


def test_a_chain_the_classifier_names_that_the_topic_lacks_is_replaced_by_the_scorers_best_walkable_one(
    driver,
    metaqa_models: str,  # type: ignore[no-untyped-def]
) -> None:
    """The classifier knows what is asked (a genre) but its chain starts at a film, and the topic is a person:
    its chain reaches nothing. sgrag then ranks the chains the person has with the path scorer, as for a
    question the classifier does not know, instead of trying the classifier's next guesses."""
    question = "what genre is Tom Hanks"
    topics = [t for t in link_entities(driver, question, metaqa_models) if t.name == "Tom Hanks"]
    assert topics
    classified = SgragRetriever(driver).classify(question, metaqa_models, topics)
    first = run_template(driver, classified.ranked[0][0], metaqa_models, [topics[0].id])
    assert first.paths == []  # the precondition: the classifier's best chain starts elsewhere

    evidence = SgragRetriever(driver).retrieve(question, metaqa_models, 100, topics)
    assert isinstance(evidence.trace, SgragTrace)
    assert evidence.trace.classifier_chain_unwalkable and evidence.trace.ranked_by == "path scorer"
    assert evidence.answer_candidates and evidence.trace.chain != classified.ranked[0][0]
    assert evidence.trace.chains_ranked and evidence.confidence == evidence.trace.chain_score

    without = SgragRetriever(driver, use_path_scorer=False).retrieve(question, metaqa_models, 100, topics)
    assert isinstance(without.trace, SgragTrace) and not without.trace.classifier_chain_unwalkable
    assert without.trace.ranked_by == "question classifier"


def test_a_best_chain_below_the_scorers_cosine_floor_is_no_answer(
    driver,
    metaqa_models: str,
    monkeypatch,  # type: ignore[no-untyped-def]
) -> None:
    """The scorer learned a floor (the cosine nearly every held-out question's own chain reached); when even
    the best chain walkable from the topic is below it, sgrag answers nothing and says why, instead of the
    least unlike chain. Here the floor is moved above and below the best chain's cosine."""
    from kgqa.core.types import Evidence
    from kgqa.models import kg_models

    profile = kg_models.read_profile(metaqa_models)
    assert profile is not None and "cosine_floor" in profile.parts["path_scorer"].metrics
    scorer = registry.path_scorer(metaqa_models, outranked_too=True)
    assert scorer is not None and scorer.cosine_floor == profile.parts["path_scorer"].metrics["cosine_floor"]
    question = "any idea which flicks Tom Hanks shows up in"
    topics = [t for t in link_entities(driver, question, metaqa_models) if t.name == "Tom Hanks"]
    ask = SgragRetriever(driver, unfamiliar_below=0.99)  # the scorer ranks this wording

    def best_cosine(evidence: Evidence) -> float:
        assert isinstance(evidence.trace, SgragTrace) and evidence.trace.ranked_by == "path scorer"
        ranked = ask.rank_walkable(question, metaqa_models, [topics[0].id], topics, outranked_too=True)
        assert ranked is not None
        return max(cos for chains in ranked.values() for _c, _p, cos in chains)

    monkeypatch.setattr(scorer, "cosine_floor", -1.0)
    answered = ask.retrieve(question, metaqa_models, 100, topics)
    best = best_cosine(answered)
    assert answered.answer_candidates and answered.trace.below_cosine_floor is None  # type: ignore[union-attr]

    monkeypatch.setattr(scorer, "cosine_floor", best + 0.01)
    refused = ask.retrieve(question, metaqa_models, 100, topics)
    assert refused.answer_candidates == [] and refused.triplets == [] and refused.confidence == 0.0
    assert isinstance(refused.trace, SgragTrace) and refused.trace.below_cosine_floor == pytest.approx(best)
    assert "recognises none of the chains" in refused.reason and refused.trace.chains_ranked


def test_the_classifiers_walk_from_one_topic_is_narrowed_by_a_one_step_chain_from_the_other(
    driver,
    metaqa_models: str,  # type: ignore[no-untyped-def]
) -> None:
    """Two named things, one chain from the classifier: it leads somewhere from one of them (the actor's
    films), and a one-step chain of the other (the director's films, in the path scorer's order) narrows its
    answers to those both reach, instead of merging what the chain reaches from each."""
    question = "which films did [Tom Hanks] act in that [Steven Spielberg] directed"
    topics = link_entities(driver, question, metaqa_models)
    assert sorted(t.name for t in topics) == ["Steven Spielberg", "Tom Hanks"]
    hanks, spielberg = (next(t.id for t in topics if t.name == n) for n in ("Tom Hanks", "Steven Spielberg"))

    merged = SgragRetriever(driver, narrow_by_another_topic=False).retrieve(
        question, metaqa_models, 100, topics
    )
    narrowed = SgragRetriever(driver).retrieve(question, metaqa_models, 100, topics)
    assert isinstance(merged.trace, SgragTrace) and isinstance(narrowed.trace, SgragTrace)
    assert merged.trace.ranked_by == narrowed.trace.ranked_by == "question classifier"
    assert merged.trace.narrowed_by == ""
    chain = narrowed.trace.chain
    assert chain == merged.trace.chain
    # the chain leads somewhere from one of them only (from the actor as MetaQA words it, or the director)
    lead, other = (
        (hanks, spielberg)
        if chain_ends(driver, metaqa_models, [hanks], [chain])[chain][0]
        else (spielberg, hanks)
    )
    walked = chain_ends(driver, metaqa_models, [lead], [chain])[chain][0]
    assert walked and not chain_ends(driver, metaqa_models, [other], [chain])[chain][0]
    by, _, other_chain = narrowed.trace.narrowed_by.partition(": ")
    assert by == other and len(parse_chain_key(other_chain)) == 1
    theirs = chain_ends(driver, metaqa_models, [other], [other_chain])[other_chain][0]
    assert narrowed.answer_candidates and set(narrowed.answer_candidates) <= walked & theirs
    assert len(narrowed.answer_candidates) < len(walked) <= len(merged.answer_candidates)


def test_a_join_pairs_entities_named_by_different_words() -> None:
    """A person and a tag of the same name are one thing the question names: the lead is joined with the
    next entity named by other words, and with none when every entity is named by the same words."""

    def named(entity: str, span: str) -> LinkedEntity:
        return LinkedEntity(id=entity, name=entity, score=1.0, how="exact", span=span)

    topics = [
        named("Diane Keaton", "diane keaton"),
        named("diane keaton (tag)", "diane keaton"),
        named("Meg Ryan", "meg ryan"),
    ]
    order = ["Diane Keaton", "diane keaton (tag)", "Meg Ryan"]
    assert SgragRetriever.other_named(order, topics) == ["Diane Keaton", "Meg Ryan"]
    assert SgragRetriever.other_named(order[:2], topics) == ["Diane Keaton"]
    assert SgragRetriever.other_named([], topics) == []
    given = [LinkedEntity(id=e, name=e, score=1.0, how="given") for e in ("Diane Keaton", "Meg Ryan")]
    assert SgragRetriever.other_named(["Diane Keaton", "Meg Ryan"], given) == ["Diane Keaton", "Meg Ryan"]
