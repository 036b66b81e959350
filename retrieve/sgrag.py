"""SG-RAG (method ``sgrag``): question -> relation chain -> Cypher path template -> subgraphs -> MOT.

1. A query-text classifier (:mod:`kgqa.models.question_classifiers`, one per KG) names the relation chain
   the question walks, e.g. ``born_in>|born_in<``; the topic entity is masked first so only the
   wording decides. The chains it knows are the ones the KG's questions use (labelled, or synthesised from
   its relation paths by ``kgqa train all``): they are this KG's templates, and nobody wrote them by hand.
2. The chain fills the one path template, ``cypher_templates/sgrag/path.cypher.j2``, which follows it from
   the topic entities (``$kg``, ``$topic_ids``) and returns every matched path as ``[head, relation, tail]``
   triplets in the KG's direction, plus the path's end node. No node of a path after the start is the topic
   entity. When the best chain matches nothing from these entities, the next-best chains are tried, up to
   ``max_types``.
3. The subgraphs are merged and go through MOT (:func:`kgqa.retrieve.mot.dedup_order`: the in-database
   ``kgqa.triplets.dedupOrder``), so the prompt reads outward from the topic entity.

Where the KG has a question-to-path scorer (MiniLM fine-tuned on its questions, ``kgqa train all``), sgrag
ranks every chain walkable from the topic with it instead of taking the classifier's chain: on every question
when the KG's held-out questions said the scorer ranks better, and otherwise on a question worded unlike the
KG's labelled questions (the classifier's familiarity below the KG's learned threshold,
:func:`kgqa.models.registry.unfamiliar_below`) whose best chain the classifier is not sure of (a negative
margin) and puts within two steps (the walkable chains' length). TF-IDF knows the words of its questions only;
the scorer reads people's own ("which pictures did X appear in"): on MetaQA's free-form tune questions sgrag
went from 51.1 to 66.1. The scorer also ranks when the classifier's best chain cannot be walked from the
topic: it names a relation of something else ("born where", of a film), so the question asks a chain no
labelled question did ("where was the writer of X born"). On our FB15k-237 tune questions, on the KG trained
with WebQSP, sgrag went from 41.2 to 64.1 (the scorer trained on synthesised questions of the chains nobody
labelled too); on MetaQA's free-form A tune, from 66.1 to 69.0. A scorer trained on labelled questions learned
a cosine floor: when even the best walkable chain is less like the question than that, sgrag answers nothing
and says why (the chain least unlike "when was X born" of a director reaches the years of his films).

A question that names two things asks for what both lead to. Ranked by the scorer, each topic's best chains
are joined where their ends meet (:meth:`SgragRetriever.join`), the leading topic with the next one named by
other words of the question (a person and a tag of the same name are one thing named). Each topic's best
one-step chains are paired too, since the scorer reads the other entity's name as part of the relation
("which films did X and Meg Ryan both act in": X's co-stars' films first, X's own below its first five), and a
two-step chain weighs little beside them. On our FB15k-237 tune questions, on the KG trained without labels,
sgrag went from 63.4 to 69.3 (two-entity 30.0 -> 56.7). The classifier names
one chain, which leads somewhere from one of them ("which films did X make with director Y": X's films); the
other entity then narrows it, by the first of its one-step chains in the scorer's order whose ends meet the
walk's and leave some out (Y's films as director). Before, the classifier's chain was walked from both and
its answers merged, and the join could pair a person with its own tag. Tune questions, sgrag before / with
the narrowing / with both: MetaQA's two-entity set 57.6 / 68.2 / 72.7, MetaQA's free-form A 67.2 / 70.1 /
73.0; our FB15k-237 questions on the KG trained with WebQSP 69.3 / 70.6 / 71.2 (auto 71.9 -> 73.2), on the KG
trained without labels 64.1 unchanged. WebQSP's held-out train questions: auto 78.4 unchanged.

When no template matches, the evidence is empty and says so; ``--method auto`` then asks the next method
(:mod:`kgqa.qa.routing`), which also decides whether sgrag is asked at all when the classifier is unsure.

The evidence's ``answer_candidates`` are the template's end nodes, most supporting paths first (ties: the
order the database returned them), and ``hops`` is the chain's length. ``k`` caps the triplets, but never at
the cost of an answer: one supporting path per answer is always kept, then further paths while they fit.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from kgqa.core.chains import Chain, Step, chain_key, parse_chain_key
from kgqa.core.question_words import asked_for
from kgqa.core.types import Evidence, LinkedEntity, MethodTrace
from kgqa.graph.walkable import WALKABLE_STEPS, walkable_at_question
from kgqa.models import registry
from kgqa.models.frag_ranker import load_ranker
from kgqa.models.question_classifiers import ChainPrediction, QuestionClassifiers, hop_range
from kgqa.retrieve.answer_kinds import (
    KIND_CHAINS,
    KIND_ENDS,
    chain_fits,
    entity_kinds,
    reweighted,
    says_types,
)
from kgqa.retrieve.answer_side import asks_for_a_place, people_for_a_place
from kgqa.retrieve.base import Retriever
from kgqa.retrieve.mot import dedup_order
from kgqa.retrieve.paths import (
    DEFAULT_MAX_PATHS,
    TemplateMatch,
    chain_ends,
    rank_answers,
    run_steps,
    select_paths,
    steps_query,
)
from neo4j import Driver

DEFAULT_MAX_TYPES = 3  # chains tried, best first, until one matches
JOIN_CHAINS = 5  # per topic, the scorer's best chains tried in pairs when a question names two entities
# Two-step chains from two people meet on a crowd (their co-stars) far more often than one-step chains meet on
# what they share (their films); each second step weighs this much. With each topic's best one-step chains in
# the pairs (joinable), our FB15k-237 tune questions on the KG without labels, sgrag two-entity: 0.3 46.7,
# 0.1 53.3, 0.03 to 0 56.7 (one-hop 72.9 -> 74.1, two-hop unchanged).
JOIN_LONGER = 0.03

RankedChain = tuple[str, float, float]  # (chain key, probability among the topic's chains, cosine)


@dataclass
class SgragTrace(MethodTrace):
    chain: str  # the chain whose template gave the evidence (the classifier's best when none matched)
    chain_classified: str
    chain_score: float
    chains_ranked: list[tuple[str, float]]
    hop_range: str
    ranked_by: str = "question classifier"  # or "path scorer": among the chains walkable from the topic
    # the cosine of the masked question to the nearest wording the classifier learned (None: not asked)
    familiarity: float | None = None
    classifier_chain_unwalkable: bool = False  # its best chain reached nothing: the scorer ranked instead
    # the topics walked when the classifier's best chain led nowhere from the linked ones but from another
    # entity the same words name (the linker's alternatives); empty when the linked ones were walked
    topic_from_alternatives: list[str] = field(default_factory=list)
    cosine_floor: float = -1.0  # the path scorer's: a best chain below it is not one it recognises
    best_cosine: float | None = None  # the path scorer's best chain's cosine to the question (None: unranked)
    below_cosine_floor: float | None = None  # the best chain's cosine, when below the floor (no answer)
    people_dropped: int = 0  # ranked chains that arrive at people, for a question asking for a place
    # per chain key, how well its ends fit the kind of thing asked for, when that lowered some chain
    kind_fits: dict[str, float] = field(default_factory=dict)
    # "<entity id>: <chain>", the other topic's one-step chain that narrowed the classifier's walk
    narrowed_by: str = ""
    chains_tried: list[str] = field(default_factory=list)
    constrained_by: list[str] = field(default_factory=list)  # another topic's chain the answers also end
    answer_support: list[int] = field(default_factory=list)  # paths ending at each answer candidate
    paths_matched: int = 0
    paths_in_evidence: int = 0
    paths_truncated: bool = False  # the $max_paths guard was hit
    k_exceeded_to_keep_answers: bool = False


def path_query(steps: Sequence[Step], label: str, to_ends: bool = False) -> str:
    """The Cypher of one chain's path template (or of its paths to given ends: see
    :func:`~kgqa.retrieve.paths.steps_query`); a ValueError for a relation that is not a plain name."""
    return steps_query(steps, f"chain {label!r}", to_ends=to_ends)


def words_naming(topic_entities: Sequence[LinkedEntity]) -> dict[str, str]:
    """Per topic entity, the words of the question that name it; a given topic (no span) is named by its id,
    so that two given topics count as two things named."""
    return {e.id: e.span or e.id for e in topic_entities}


def joinable(ranked: Sequence[RankedChain], one_step_too: bool) -> list[RankedChain]:
    """The chains of one topic that the join pairs: its ``JOIN_CHAINS`` best, and, when ``one_step_too``, its
    ``JOIN_CHAINS`` best of one step. A question that names two things reads to the scorer as a longer
    relation ("which films did X and Meg Ryan both act in": X's co-stars' films first), so X's own films may
    rank below its first five."""
    head = list(ranked[:JOIN_CHAINS])
    if one_step_too:
        seen = {c for c, _p, _cos in head}
        one = [r for r in ranked if len(parse_chain_key(r[0])) == 1 and r[0] not in seen][:JOIN_CHAINS]
        head += one
    return head


def run_template(
    driver: Driver, chain: str, kg: str, topic_ids: Sequence[str], max_paths: int = DEFAULT_MAX_PATHS
) -> TemplateMatch:
    """Follows the chain ``chain`` (a chain key) from the topic entity ids."""
    return run_steps(driver, path_query(parse_chain_key(chain), chain), chain, kg, topic_ids, max_paths)


@dataclass(eq=False)
class SgragRetriever(Retriever):
    name = "sgrag"

    classifiers: QuestionClassifiers | None = None  # the chain classifier on every KG (tests); None: the KG's
    max_paths: int = DEFAULT_MAX_PATHS
    max_types: int = DEFAULT_MAX_TYPES
    use_path_scorer: bool = True
    # below this familiarity the scorer ranks even where the classifier did better on the KG's held-out
    # questions (None: the KG's learned threshold, registry.unfamiliar_below)
    unfamiliar_below: float | None = None
    use_cosine_floor: bool = True  # the path scorer's learned floor (False: measures what it changes)
    # walk the linker's alternatives to a topic when the classifier's best chain leads nowhere from it
    try_alternatives: bool = True
    # drop the scorer's chains that arrive at people when the question asks for a place (our FB15k-237 tune
    # questions: sgrag 56.2 -> 57.5, auto 71.2 -> 73.2; MetaQA: no chain is dropped)
    no_people_for_a_place: bool = True
    # lower the scorer's chains whose ends are of another kind than the question asks for (answer_kinds: our
    # FB15k-237 tune questions, sgrag 57.5 -> 62.1 and auto 73.2 -> 74.5; 976 WebQSP train questions on the
    # KG without labels, sgrag 52.6 -> 53.5 and auto 56.5 -> 56.7)
    fit_asked_kind: bool = True
    # narrow the classifier's walk from one topic by a one-step chain from another named entity (see the
    # module's docstring; on WebQSP's held-out train questions auto stayed at 78.4)
    narrow_by_another_topic: bool = True
    join_other_words: bool = True  # join only entities the question names in different words
    join_one_step: bool = True  # the join pairs each topic's best one-step chains too (see joinable)

    def classifiers_of(self, kg: str) -> QuestionClassifiers:
        return self.classifiers or registry.question_classifiers(kg)

    def classify(
        self, question: str, kg: str, topic_entities: Sequence[LinkedEntity] = ()
    ) -> ChainPrediction:
        texts = [t for e in topic_entities for t in (e.span, e.name) if t]
        return self.classifiers_of(kg).predict_chain(question, texts)

    def unknown_to_the_classifier(self, kg: str, prediction: ChainPrediction, trace: SgragTrace) -> bool:
        """Whether the classifier does not know the question: its best chain's margin is negative (the wrong
        side of every boundary it learned), within the walkable chains' two steps, and the wording is unlike
        the KG's labelled questions (records the familiarity in ``trace``). A wording it learned, or a
        chain it is sure of, keeps the classifier: "who directed X" in code-like noise is unfamiliar, yet
        its words name the relation."""
        threshold = registry.unfamiliar_below(kg) if self.unfamiliar_below is None else self.unfamiliar_below
        if threshold <= 0 or prediction.hops > WALKABLE_STEPS or prediction.score >= 0:
            return False
        trace.familiarity = prediction.familiar
        return trace.familiarity is not None and trace.familiarity < threshold

    def rank_walkable(
        self,
        question: str,
        kg: str,
        topic_ids: list[str],
        topic_entities: Sequence[LinkedEntity],
        outranked_too: bool = False,
        trace: SgragTrace | None = None,
    ) -> dict[str, list[tuple[str, float, float]]] | None:
        """Per topic entity, the chains walkable from it ranked by the KG's question-to-path scorer: (chain
        key, probability among them, cosine) best first; None when the KG has no scorer, or one that ranked
        worse than the classifier on the KG's own questions unless ``outranked_too`` (the question is unknown
        to the classifier): the classifier's ranking is used then. The cosine compares across topics; the
        probability only within one."""
        scorer = registry.path_scorer(kg, outranked_too=outranked_too) if self.use_path_scorer else None
        if scorer is None:
            return None
        out: dict[str, list[tuple[str, float, float]]] = {}
        for topic in topic_ids:
            walkable = walkable_at_question(self.driver, kg, [topic])
            spans = [t for e in topic_entities if e.id == topic for t in (e.span, e.name) if t]
            ranked = scorer.rank(question, spans, walkable)
            if self.no_people_for_a_place:
                ranked = self.without_people_for_a_place(question, kg, ranked, trace)
            if self.fit_asked_kind:
                ranked = self.fitted_to_the_asked_kind(question, kg, topic, ranked, trace)
            out[topic] = [(chain_key(c), round(p, 4), round(cos, 4)) for c, cos, p in ranked]
        if trace is not None and self.use_cosine_floor:
            trace.cosine_floor = scorer.cosine_floor
        return out

    @staticmethod
    def without_people_for_a_place(
        question: str, kg: str, ranked: list[tuple[Chain, float, float]], trace: SgragTrace | None
    ) -> list[tuple[Chain, float, float]]:
        """``ranked`` without the chains that surely arrive at people when the question asks for a place
        (:mod:`kgqa.retrieve.answer_side`), the probabilities shared again among the rest; unchanged when that
        would leave none."""
        asked = asked_for(question)
        if not asks_for_a_place(asked):
            return ranked
        people = people_for_a_place(asked, load_ranker(kg).kinds, [c for c, _cos, _p in ranked])
        kept = [r for r, dropped in zip(ranked, people, strict=True) if not dropped]
        if not kept or len(kept) == len(ranked):
            return ranked
        if trace is not None:
            trace.people_dropped += len(ranked) - len(kept)
        total = sum(p for _c, _cos, p in kept) or 1.0
        return [(c, cos, p / total) for c, cos, p in kept]

    def fitted_to_the_asked_kind(
        self,
        question: str,
        kg: str,
        topic: str,
        ranked: list[tuple[Chain, float, float]],
        trace: SgragTrace | None,
    ) -> list[tuple[Chain, float, float]]:
        """``ranked`` with its first chains' probabilities lowered where their ends are of another kind than
        the question asks for (:mod:`kgqa.retrieve.answer_kinds`), best first again; unchanged when the
        question says no kind or no end's kind is known."""
        asked = asked_for(question)
        head = ranked[:KIND_CHAINS]
        if not asked or len(ranked) < 2 or not says_types([c for c, _cos, _p in head]):
            return ranked
        keys = [chain_key(c) for c, _cos, _p in head]
        reached = chain_ends(self.driver, kg, [topic], keys, self.max_paths)
        ends = {key: sorted(reached.get(key, (set(), False))[0])[:KIND_ENDS] for key in keys}
        kinds = entity_kinds(self.driver, kg, sorted({n for names in ends.values() for n in names}))
        fits = chain_fits(asked, ends, kinds)
        lowered = reweighted([p for _c, _cos, p in head], [fits[k] for k in keys])
        if lowered is None:
            return ranked
        if trace is not None:
            trace.kind_fits.update({k: round(f, 3) for k, f in fits.items() if f is not None})
        rescored = [(c, cos, p) for (c, cos, _old), p in zip(head, lowered, strict=True)]
        return sorted(rescored, key=lambda r: -r[2]) + ranked[KIND_CHAINS:]

    def join(
        self,
        kg: str,
        by_topic: dict[str, list[tuple[str, float, float]]],
        order: Sequence[str],
        trace: SgragTrace,
        known: dict[str, dict[str, tuple[set[str], bool]]] | None = None,
    ) -> tuple[TemplateMatch, float] | None:
        """The answers two topics' chains reach together ("films both X and Y acted in"): of the pairs of each
        topic's ``JOIN_CHAINS`` best chains whose ends meet, the one the scorer finds likeliest (the product
        of the two chains' probabilities), and the confidence of the pair: the geometric mean of the two
        probabilities, on the scale of one chain's (better calibrated than the pair's share among the meeting
        ones, which was 1.0 whenever one pair met). None when no pair meets (a word linked by mistake, or a
        question about one of them only). ``known``: per topic, chain ends already read (not read again)."""
        lead, other = order[0], order[1]
        topics = {lead, other}
        tried = {t: joinable(by_topic[t], self.join_one_step) for t in (lead, other)}
        best = {t: {c for c, _p, _cos in by_topic[t][:JOIN_CHAINS]} for t in (lead, other)}
        # Only the ends are compared: a type-like topic ("actor") reaches thousands of paths, and reading
        # them all for each of the pairs took a second; the chosen pair's paths are read, to the shared ends.
        reached = {
            topic: (known or {}).get(topic)
            or chain_ends(self.driver, kg, [topic], [c for c, _p, _cos in tried[topic]], self.max_paths)
            for topic in (lead, other)
        }

        def ends(topic: str, chain: str) -> set[str]:
            return reached[topic][chain][0]

        meeting: list[tuple[float, str, str, set[str]]] = []
        for chain_a, p_a, _cos in tried[lead]:
            ends_a = ends(lead, chain_a) - topics
            if not ends_a:
                continue
            for chain_b, p_b, _cos in tried[other]:
                longer = chain_a.count("|") + chain_b.count("|")
                if longer and not (chain_a in best[lead] and chain_b in best[other]):
                    continue  # a one-step chain the scorer did not rank first pairs with one-step chains only
                common = ends_a & ends(other, chain_b)
                if common:
                    meeting.append((p_a * p_b * JOIN_LONGER**longer, chain_a, chain_b, common))
        if not meeting:
            return None
        _score, chain_a, chain_b, common = max(meeting, key=lambda m: m[0])
        shared = sorted(common)
        first, second = (
            run_steps(
                self.driver,
                path_query(parse_chain_key(chain), chain, to_ends=True),
                chain,
                kg,
                [topic],
                self.max_paths,
                ends=shared,
            )
            for topic, chain in ((lead, chain_a), (other, chain_b))
        )
        trace.chains_tried.append(chain_a)
        trace.constrained_by.append(f"{other}: {chain_b}")
        match = TemplateMatch(
            chain_a,
            first.paths + second.paths,
            first.answers + second.answers,
            reached[lead][chain_a][1] or reached[other][chain_b][1] or first.truncated or second.truncated,
        )
        p_a = next(p for c, p, _ in by_topic[lead] if c == chain_a)
        p_b = next(p for c, p, _ in by_topic[other] if c == chain_b)
        return match, (p_a * p_b) ** 0.5

    @staticmethod
    def other_named(order: Sequence[str], topic_entities: Sequence[LinkedEntity]) -> list[str]:
        """The leading topic and the next one in ``order`` named by other words of the question: two entities
        of the same words (a person and a tag of the same name) are one thing named, not two."""
        spans = words_naming(topic_entities)
        other = next((t for t in order[1:] if spans.get(t) != spans.get(order[0])), None)
        return [order[0], other] if order and other is not None else list(order[:1])

    def narrowed_by_another_topic(
        self,
        question: str,
        kg: str,
        walked: TemplateMatch,
        topic_entities: Sequence[LinkedEntity],
        trace: SgragTrace,
    ) -> TemplateMatch | None:
        """The classifier's chain walked from the one topic it leads somewhere from, narrowed to the ends that
        a one-step chain from another entity the question names reaches too ("which films did X make with
        director Y": X's films that Y directed). The other entity's chains are tried in the path scorer's
        order (its first ``JOIN_CHAINS`` of one step), and the first whose ends meet the walk's and leave some
        out narrows it; None when none does, when the chain leads somewhere from several topics or from none,
        or when the question names one thing (a second entity of the same words is an alternative, not a
        constraint)."""
        spans = words_naming(topic_entities)
        if len(set(spans.values())) < 2:
            return None
        reached = {t: chain_ends(self.driver, kg, [t], [walked.chain], self.max_paths) for t in spans}
        starts = [t for t, by_chain in reached.items() if by_chain[walked.chain][0]]
        if len(starts) != 1:
            return None
        lead = starts[0]
        walk_ends = reached[lead][walked.chain][0]
        for other in (t for t in spans if spans[t] != spans[lead]):
            ranked = self.rank_walkable(question, kg, [other], topic_entities, True, None) or {}
            one_step = [r for r in ranked.get(other, []) if len(parse_chain_key(r[0])) == 1][:JOIN_CHAINS]
            tried = replace(trace, chains_tried=[], constrained_by=[])  # kept only when it narrows
            chains = {lead: [(walked.chain, 1.0, 1.0)], other: one_step}
            joined = self.join(kg, chains, [lead, other], tried, {lead: reached[lead]})
            if joined is not None and len(set(joined[0].answers)) < len(walk_ends):
                trace.chains_tried += tried.chains_tried
                trace.constrained_by += tried.constrained_by
                trace.narrowed_by = tried.constrained_by[-1]
                return joined[0]
        return None

    def alternative_topics(
        self, kg: str, prediction: ChainPrediction, topic_entities: Sequence[LinkedEntity]
    ) -> tuple[list[LinkedEntity], TemplateMatch] | None:
        """The topic entities with one replaced by the first of its alternatives (the linker's runners-up on
        its words) from which the classifier's best chain reaches something, and that walk; None when none.
        Only for a question that names one thing: with several, the chain may join them instead (MetaQA's
        free-form tune questions: "westerns by anthony mann" was walked from "Brazilian Western", sgrag
        65.5 -> 64.9)."""
        if len({e.span for e in topic_entities}) != 1:
            return None
        chain = prediction.ranked[0][0]
        for i, entity in enumerate(topic_entities):
            for other in entity.alternatives:
                others = [e.id for j, e in enumerate(topic_entities) if j != i and e.id != other.id]
                match = run_template(self.driver, chain, kg, [other.id, *others], self.max_paths)
                if match.paths:
                    return [*topic_entities[:i], other, *topic_entities[i + 1 :]], match
        return None

    def retrieve(self, question: str, kg: str, k: int, topic_entities: list[LinkedEntity]) -> Evidence:
        began = time.perf_counter()
        prediction = self.classify(question, kg, topic_entities)
        classified = time.perf_counter()
        trace = SgragTrace(
            chain=prediction.chain,
            chain_classified=prediction.chain,
            chain_score=prediction.score,
            chains_ranked=[(c, round(s, 4)) for c, s in prediction.ranked],
            hop_range=hop_range(prediction.hops),
        )
        evidence = Evidence(question, self.name, kg, list(topic_entities), hops=prediction.hops, trace=trace)
        if not topic_entities:
            evidence.reason = "no topic entity was linked"
            evidence.latency_ms["classify"] = (classified - began) * 1000
            return evidence

        topic_ids = list(dict.fromkeys(e.id for e in topic_entities))
        unknown = self.use_path_scorer and self.unknown_to_the_classifier(kg, prediction, trace)
        by_topic = self.rank_walkable(question, kg, topic_ids, topic_entities, unknown, trace)
        walked_first: TemplateMatch | None = None
        if by_topic is None and prediction.ranked:
            walked_first = run_template(self.driver, prediction.ranked[0][0], kg, topic_ids, self.max_paths)
            unwalked = not walked_first.paths and self.try_alternatives
            swapped = self.alternative_topics(kg, prediction, topic_entities) if unwalked else None
            if swapped is not None:
                # The words name another entity too, and the classifier's chain leads somewhere from it
                # ("where was luther born": the film Luther has no birthplace, Martin Luther King has one).
                topic_entities, walked_first = swapped
                topic_ids = list(dict.fromkeys(e.id for e in topic_entities))
                evidence.topic_entities = list(topic_entities)
                trace.topic_from_alternatives = [e.name for e in topic_entities]
            elif not walked_first.paths and self.use_path_scorer:
                # The classifier's best chain cannot be walked from the topic: the question asks what no
                # labelled question did ("where was the writer of the film born"), so the scorer ranks the
                # chains the topic has. (Preferring those that end in the classifier's step: FB15k-237 tune
                # 62.7 -> 54.9, its one-hop questions 70.6 -> 56.5; MetaQA's free-form A tune 69.0 -> 70.7.)
                by_topic = self.rank_walkable(question, kg, topic_ids, topic_entities, True, trace)
                if by_topic is not None:
                    trace.classifier_chain_unwalkable = True
        narrowed = None
        if walked_first is not None and walked_first.paths and self.narrow_by_another_topic:
            narrowed = self.narrowed_by_another_topic(question, kg, walked_first, topic_entities, trace)
        order: list[str] = []
        if by_topic is not None:
            # the topic whose best chain the scorer is surest of leads; the next one may narrow its answers
            order = sorted((t for t in by_topic if by_topic[t]), key=lambda t: -by_topic[t][0][2])
            ranked = [(key, p) for key, p, _cos in by_topic[order[0]]] if order else []
            trace.chains_ranked = ranked[:10]
            trace.ranked_by = "path scorer"
            trace.best_cosine = by_topic[order[0]][0][2] if order else None
            if order and by_topic[order[0]][0][2] < trace.cosine_floor:
                # the best chain is less like the question than nearly every held-out question's own chain
                # was: the scorer recognises none of the topic's chains, so there is no answer
                trace.below_cosine_floor = by_topic[order[0]][0][2]
                order, ranked = [], []
            starts = order[:1]
            trace.chain_score = ranked[0][1] if ranked else 0.0
            evidence.confidence = trace.chain_score
        else:
            ranked, starts = prediction.ranked, topic_ids
        match = TemplateMatch(prediction.chain)
        pair = self.other_named(order, topic_entities) if self.join_other_words else order[:2]
        joined = self.join(kg, by_topic, pair, trace) if by_topic is not None and len(pair) > 1 else None
        if joined is not None:
            match, evidence.confidence = joined
            trace.chain_score = evidence.confidence
            ranked = []
        if narrowed is not None:
            match, ranked = narrowed, []
        for chain, _score in ranked[: max(1, self.max_types)]:
            trace.chains_tried.append(chain)
            if walked_first is not None and chain == walked_first.chain and by_topic is None:
                match = walked_first
            else:
                match = run_template(self.driver, chain, kg, starts, self.max_paths)
            if match.paths:
                break
        matched = time.perf_counter()

        answers, support, first_path = rank_answers(match)
        chosen, _count = select_paths(match, answers, first_path, k)
        evidence.paths = [match.paths[i] for i in chosen]
        evidence.triplets = dedup_order(
            self.driver, (t for p in evidence.paths for t in p), evidence.topic_names()
        )
        ordered = time.perf_counter()

        total = max(1, len(match.paths))
        used = match.chain if match.paths else prediction.chain  # nothing matched: report the classifier's
        hops = len(parse_chain_key(used))
        evidence.answer_candidates = answers
        evidence.answer_scores = [s / total for s in support]
        evidence.hops = hops
        trace.chain = used
        trace.hop_range = hop_range(hops)
        trace.answer_support = support
        trace.paths_matched = len(match.paths)
        trace.paths_in_evidence = len(evidence.paths)
        trace.paths_truncated = match.truncated
        trace.k_exceeded_to_keep_answers = len(evidence.triplets) > k
        if trace.below_cosine_floor is not None:
            evidence.reason = (
                "the path scorer recognises none of the chains walkable from the topic entities: the best"
                f" has cosine {trace.below_cosine_floor:.2f} to the question, below the KG's floor"
                f" {trace.cosine_floor:.2f} (which nearly every held-out question's own chain reached)"
            )
        elif not match.paths:
            evidence.reason = f"no path of the chains {trace.chains_tried} starts at the topic entities"
        evidence.latency_ms.update(
            {
                "classify": (classified - began) * 1000,
                "template": (matched - classified) * 1000,
                "mot": (ordered - matched) * 1000,
            }
        )
        return evidence
