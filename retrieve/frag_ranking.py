"""FRAG's postprocessing: relations pruned by similarity to the question, candidate paths ranked.

Relations are pruned by the similarity of their stored embeddings (``(:Relation {embedding})``) to the
question without its topic entities; the paths over the kept relations are ranked by the KG's path ranker
(:mod:`kgqa.models.frag_ranker`) on the features of their relation chains (:func:`feature_rows`).
"""

from __future__ import annotations

import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np
from kgqa.core.errors import CannotRunHere
from kgqa.core.relation_text import chain_text as chain_words
from kgqa.core.relation_text import relation_words
from kgqa.core.text import BRACKET
from kgqa.core.types import LinkedEntity
from kgqa.graph.cypher import render
from kgqa.graph.kg import no_embeddings_line
from kgqa.models import kg_models
from kgqa.models.chain_vectors import chain_vectors_stamp, load_chain_vectors
from kgqa.models.encoder import embed
from kgqa.models.frag_ranker import FEATURES, FragRanker
from kgqa.retrieve.answer_side import asks_for_a_place, people_for_a_place
from kgqa.retrieve.frag_paths import Step, Subgraph
from neo4j import Driver

# Words that never name a relation; every other word of the question may ("director", "released", "tags").
_FUNCTION_WORDS = frozenset(
    "a an the of in on at to for from by with as is are was were be been being do does did what which who "
    "whom whose when where why how that this these those it its and or but also same together".split()
)


# Words that ask for more of the kind of thing the topic's neighbour touches ("what other films did the
# director of X make"): a chain out along a relation and back asks exactly that.
_OTHER = re.compile(r"\b(other|others|else|another|same|also|too)\b", re.IGNORECASE)
# A second topic entity's walk must meet the first's: their common end nodes rank first, by the sum of the
# two walks' scores; an end that only one topic reaches pays this.
ALONE_PENALTY = 0.5
# A chain that surely arrives at people where the question asks for a place (:mod:`kgqa.retrieve.answer_side`)
# ranks after every other: more than any chain's features sum to.
PEOPLE_FOR_A_PLACE_PENALTY = 100.0


# --- embeddings (question, relations, relation chains) ------------------------------------------------------


class _ChainCache:
    """Embeddings of verbalised relation chains; chains recur across questions, so they are computed once.
    The ones a KG's training stored (:mod:`kgqa.models.chain_vectors`) are pinned: never evicted."""

    def __init__(self, size: int = 100_000) -> None:
        self._size = size
        self._data: OrderedDict[tuple[str | None, str], np.ndarray] = OrderedDict()
        self._pinned: dict[tuple[str | None, str], np.ndarray] = {}
        self._pinned_from: dict[Path, float] = {}
        self._lock = threading.Lock()

    def pin_stored(self, directory: Path) -> None:
        """Pins the vectors stored in ``directory`` (read again when they are trained again)."""
        stamp = chain_vectors_stamp(directory)
        with self._lock:
            if stamp < 0 or self._pinned_from.get(directory) == stamp:
                return
        stored = load_chain_vectors(directory)
        with self._lock:
            self._pinned_from[directory] = stamp
            if stored is not None:
                self._pinned.update(
                    ((stored.model, t), row) for t, row in zip(stored.texts, stored.vectors, strict=True)
                )

    def get(self, texts: Sequence[str], model: str | None = None) -> np.ndarray:
        """Rows of ``texts`` by ``model`` (the KG's encoder; None: the default one)."""
        keys = [(model, t) for t in texts]
        with self._lock:
            missing = [k for k in dict.fromkeys(keys) if k not in self._pinned and k not in self._data]
        if missing:
            vectors = embed([t for _m, t in missing], model=model)
            with self._lock:
                for key, vector in zip(missing, vectors, strict=True):
                    self._data[key] = vector
                while len(self._data) > self._size:
                    self._data.popitem(last=False)
        with self._lock:
            if not keys:
                return np.zeros((0, 0), dtype=np.float32)
            return np.stack([self._pinned[k] if k in self._pinned else self._data[k] for k in keys])


_CHAINS = _ChainCache()


def use_stored_chain_vectors(kg: str) -> None:
    """Lets this process read the chain vectors KG ``kg``'s training stored, when it stored any."""
    _CHAINS.pin_stored(kg_models.part_dir(kg, "frag"))


_RELATIONS: dict[tuple[int, str], tuple[float, list[str], np.ndarray]] = {}
_RELATIONS_TTL = 300.0


def relation_embeddings(driver: Driver, kg: str) -> tuple[list[str], np.ndarray]:
    """Relation names of ``kg`` and their stored embeddings (cached per driver and KG for a few minutes)."""
    key = (id(driver), kg)
    cached = _RELATIONS.get(key)
    now = time.monotonic()
    if cached is not None and now - cached[0] < _RELATIONS_TTL:
        return cached[1], cached[2]
    records, _, _ = driver.execute_query(render("frag/relations"), {"kg": kg}, routing_="r")
    names = [str(r["name"]) for r in records]
    if not names:  # a KG loaded with --no-embeddings: nothing to rank relations by
        raise CannotRunHere(no_embeddings_line("frag", kg))
    matrix = np.asarray([r["embedding"] for r in records], dtype=np.float32).reshape(len(names), -1)
    _RELATIONS[key] = (now, names, matrix)
    return names, matrix


def relation_query(question: str, topic_entities: Sequence[LinkedEntity]) -> str:
    """The question without its topic entities: what is left asks for relations ("who directed the films
    starred in"), and the entity's own words would only pull the similarity towards unrelated relations."""
    text = BRACKET.sub(" ", question)
    if text == question:
        for entity in sorted(topic_entities, key=lambda e: -len(e.span or e.name)):
            span = entity.span or entity.name
            if span:
                text = re.sub(re.escape(span), " ", text, flags=re.IGNORECASE)
    text = " ".join(text.split())
    return text or question


def _stem(word: str) -> str:
    """A crude stem: the first four letters of words of at least four ("directed", "director" -> "dire")."""
    return word[:4] if len(word) >= 4 else ""


@lru_cache(maxsize=4096)
def _relation_word_list(name: str) -> tuple[str, ...]:
    """The content words that name a relation (its phrase and subject, not a dotted name's domain)."""
    words = relation_words(name)
    return tuple(
        w for w in dict.fromkeys(f"{words.phrase} {words.subject}".split()) if w not in _FUNCTION_WORDS
    )


@lru_cache(maxsize=4096)
def _relation_stems(name: str) -> frozenset[str]:
    """Stems of the words that name a relation (its phrase and subject, not a dotted name's domain)."""
    words = relation_words(name)
    return frozenset(s for s in (_stem(w) for w in f"{words.phrase} {words.subject}".split()) if s)


ChainSimilarity = Callable[[Sequence[tuple[Step, ...]]], np.ndarray]  # chains -> cos(question, chain)


def core_chain(chain: Sequence[Step]) -> tuple[tuple[str, str], ...]:
    """A FRAG chain as :mod:`kgqa.core.chains` writes one: (relation, "out" | "in") per step."""
    return tuple((relation, "out" if forward else "in") for relation, forward in chain)


def chain_text(chain: Sequence[Step]) -> str:
    """A relation chain in words, each hop as a question would name it (:mod:`kgqa.core.relation_text`)."""
    return chain_words(core_chain(chain))


def _step_key(step: Step) -> str:
    return f"{'out' if step[1] else 'in'}:{step[0]}"


def _arrives_at(step: Step) -> str:
    """What a step arrives at when the KG's ranker does not know: what its name says."""
    words = relation_words(step[0])
    return words.role if step[1] else (words.subject or words.phrase)


# --- relation pruning and path ranking ----------------------------------------------------------------------


def _meeting_bonus(
    paths: Sequence[tuple[list[int], list[Step]]],
    chain_score: dict[tuple[Step, ...], float],
    groups: dict[int, int],
) -> dict[int, float]:
    """End node -> what its score gains from the other spans' walks: the sum of their best walks' scores
    when several spans reach it, minus :data:`ALONE_PENALTY` when one does."""
    best: dict[int, dict[int, float]] = {}
    for nodes, steps in paths:
        group = groups.get(nodes[0])
        if group is None:
            continue
        by_group = best.setdefault(nodes[-1], {})
        score = chain_score[tuple(steps)]
        by_group[group] = max(score, by_group.get(group, -1e9))
    out: dict[int, float] = {}
    for end, by_group in best.items():
        if len(by_group) > 1:
            ranked = sorted(by_group.values(), reverse=True)
            out[end] = sum(ranked[1:])
        else:
            out[end] = -ALONE_PENALTY
    return out


def prune_relations(
    driver: Driver,
    kg: str,
    query: str,
    question_vector: np.ndarray,
    keep_relations: int,
    model: str | None = None,
    present: set[str] | None = None,
) -> tuple[set[str], dict[str, float], WordMatch]:
    """The ``keep_relations`` relations of the subgraph (``present``) most similar to the question (their
    stored embeddings), and for every relation how well its best-matching question word matches it (a
    word like "birthplace" says more about ``born_in`` than the whole question does)."""
    names, matrix = relation_embeddings(driver, kg)
    if not names:  # no Relation nodes: nothing to prune by
        return _AllRelations(), {}, WordMatch([], None)
    similarity = matrix @ question_vector
    candidates = np.asarray(
        [i for i, name in enumerate(names) if present is None or name in present], dtype=np.int64
    )
    order = candidates[np.argsort(-similarity[candidates])][:keep_relations]
    scores = {names[i]: round(float(similarity[i]), 4) for i in order}
    words = [w for w in dict.fromkeys(re.findall(r"[\w']+", query.lower())) if w not in _FUNCTION_WORDS]
    similarity = _CHAINS.get(words, model) @ matrix.T if words else None
    if similarity is not None:
        # each word of a relation's name on its own too: "born" is nearer "birth" than the whole name
        vocabulary = sorted({w for name in names for w in _relation_word_list(name)})
        if vocabulary:
            position = {w: i for i, w in enumerate(vocabulary)}
            by_word = _CHAINS.get(words, model) @ _CHAINS.get(vocabulary, model).T
            for j, name in enumerate(names):
                columns = [position[w] for w in _relation_word_list(name)]
                if columns:
                    similarity[:, j] = np.maximum(similarity[:, j], by_word[:, columns].max(axis=1))
        # a shared stem ("writer", "written_by") is as good as it gets
        for i, word in enumerate(words):
            for j, name in enumerate(names):
                if _stem(word) and _stem(word) in _relation_stems(name):
                    similarity[i, j] = max(similarity[i, j], 1.0)
    word_match = WordMatch(names, similarity)
    return set(scores), scores, word_match


def feature_rows(
    chains: Sequence[tuple[Step, ...]],
    question_vector: np.ndarray,
    word_match: WordMatch,
    prefer_hops: int | None,
    model: str | None,
    ranker: FragRanker,
    asked: str,
    question_text: str = "",
    chain_similarity: ChainSimilarity | None = None,
) -> np.ndarray:
    """One row of :data:`~kgqa.models.frag_ranker.FEATURES` per chain. ``chain_similarity``: the KG's
    question-to-path scorer's cosines, when it has one, in place of the frozen encoder's."""
    if not chains:
        return np.zeros((0, len(FEATURES)), dtype=np.float32)
    if chain_similarity is not None:
        similarity = chain_similarity(chains)
    else:
        similarity = _CHAINS.get([chain_text(chain) for chain in chains], model) @ question_vector
    kind_fit = np.zeros(len(chains), dtype=np.float32)
    learned = ranker.asked_steps.get(asked) if asked else None
    if learned is not None:  # the KG's own questions say which steps this kind of question ends with
        kind_fit = np.asarray([learned.get(_step_key(chain[-1]), 0.0) for chain in chains], dtype=np.float32)
    elif asked:
        kinds = [ranker.kinds.get(_step_key(chain[-1])) or _arrives_at(chain[-1]) for chain in chains]
        kind_fit = _CHAINS.get(kinds, model) @ _CHAINS.get([asked], model)[0]
    asks_other = bool(_OTHER.search(question_text))
    rows = []
    for chain, sim, fit in zip(chains, similarity, kind_fit, strict=True):
        used, covered, weakest = word_match.features([r for r, _ in chain])
        round_trip = any(b[0] == a[0] and b[1] != a[1] for a, b in zip(chain, chain[1:], strict=False))
        rows.append(
            [
                float(sim),
                used,
                covered,
                float(fit),
                float(len(chain) == 2),
                float(len(chain) >= 3),
                float(prefer_hops is not None and len(chain) == prefer_hops),
                float(round_trip and asks_other),
                float(round_trip and not asks_other),
                weakest,
            ]
        )
    return np.asarray(rows, dtype=np.float32)


def rank_paths(
    paths: Sequence[tuple[list[int], list[Step]]],
    sub: Subgraph,
    question_vector: np.ndarray,
    word_match: WordMatch,
    prefer_hops: int | None = None,
    one_per_node: bool = False,
    model: str | None = None,
    ranker: FragRanker | None = None,
    asked: str = "",
    question: str = "",
    groups: dict[int, int] | None = None,
    chain_similarity: ChainSimilarity | None = None,
) -> list[tuple[float, list[int], list[Step]]]:
    """Paths by how well their relation chain fits the question, best first: the KG's ranker weighs the
    chain's features (:func:`feature_rows`); ties go to end nodes reached by more paths (a director of
    two of the topic's films), then by PageRank.

    ``groups`` maps each source node to the question span it was linked from: with two or more, an end
    node that the walks of several spans reach scores the sum of each span's best walk to it, and one
    that a single span reaches pays :data:`ALONE_PENALTY` ("which films did X and Y both act in")."""
    if not paths:
        return []
    ranker = ranker or FragRanker()
    # Tens of thousands of paths on a hub's neighbourhood: the per-path work is numpy's, not a Python loop's.
    index: dict[tuple[Step, ...], int] = {}
    chain_of = np.fromiter(
        (index.setdefault(tuple(steps), len(index)) for _, steps in paths), dtype=np.int64, count=len(paths)
    )
    chains = list(index)
    features = feature_rows(
        chains, question_vector, word_match, prefer_hops, model, ranker, asked, question, chain_similarity
    )
    scores = (features @ np.asarray(ranker.weights.vector(), dtype=np.float32)).astype(np.float64)
    if asks_for_a_place(asked):
        people = people_for_a_place(asked, ranker.kinds, [core_chain(c) for c in chains])
        scores[np.asarray(people, dtype=bool)] -= PEOPLE_FOR_A_PLACE_PENALTY
    ends = np.fromiter((nodes[-1] for nodes, _ in paths), dtype=np.int64, count=len(paths))
    score = scores[chain_of]
    if groups and len(set(groups.values())) > 1:
        chain_score = {chain: float(s) for chain, s in zip(chains, scores, strict=True)}
        bonus = _meeting_bonus(paths, chain_score, groups)
        score = score + np.fromiter((bonus.get(int(e), 0.0) for e in ends), dtype=np.float64, count=len(ends))
    score = np.round(score, 6)
    # ties: end nodes reached by more paths of the same chain, then by PageRank, then the order found
    _pairs, pair_of, pair_count = np.unique(
        chain_of * len(sub.ids) + ends, return_inverse=True, return_counts=True
    )
    multiplicity = pair_count[pair_of]
    ppr = np.asarray(sub.ppr, dtype=np.float64)[ends]
    order = np.lexsort((np.arange(len(paths)), -ppr, -multiplicity, -score))
    if one_per_node:  # complex: one shortest path per reached node, its most relevant one
        _nodes, first = np.unique(ends[order], return_index=True)
        order = order[np.sort(first)]
    return [(float(score[i]), paths[i][0], paths[i][1]) for i in order]


class WordMatch:
    """Similarities between the question's words and the KG's relations (stored relation embeddings).

    ``features(relations)``: ``used``, the mean over the chain's relations of each one's best word ("born"
    for ``born_in``; a shared stem counts as a perfect match); ``covered``, the mean over the question's
    relation-like words (best similarity to some relation at least ``salient``) of how well the chain covers
    each; ``weakest``, the chain's least-named relation. A chain should both use relations the question
    names and leave none of them out ("screenwriter of the films starred by ... actors")."""

    salient = 0.4

    def __init__(self, names: Sequence[str], similarity: np.ndarray | None) -> None:
        self.index = {name: i for i, name in enumerate(names)}
        self.similarity = similarity  # words x relations
        if similarity is not None and similarity.size:
            self.best_word = similarity.max(axis=0)
            self.salient_words = similarity[similarity.max(axis=1) >= self.salient]
        else:
            self.similarity = None

    def features(self, relations: Sequence[str]) -> tuple[float, float, float]:
        """(used, covered, weakest) of a chain of these relations."""
        if self.similarity is None:
            return 0.0, 0.0, 0.0
        columns = [self.index[r] for r in relations if r in self.index]
        if not columns:
            return 0.0, 0.0, 0.0
        used = float(np.mean(self.best_word[columns]))
        covered = float(self.salient_words[:, columns].max(axis=1).mean()) if len(self.salient_words) else 0.0
        return used, covered, float(np.min(self.best_word[columns]))


class _AllRelations(set[str]):
    """A relation filter that lets every relation through (a KG loaded without Relation nodes)."""

    def __contains__(self, item: object) -> bool:
        return True
