"""FRAG's ranker weights for one KG, fitted on the KG's labelled questions.

FRAG ranks a question's candidate relation chains by a weighted sum of features
(:data:`kgqa.models.frag_ranker.FEATURES`: similarity to the question, how well its words name the chain,
whether the chain arrives at what the question asks for, hop counts ...). How much each says differs per KG
and per question set: on a KG whose hop classifier learned from real questions the predicted hop count is
worth a lot; on one that only has questions synthesised from relation names it is not. So the weights are
fitted on the KG's own labelled questions (their chain is the positive, every other candidate FRAG finds a
negative; a listwise softmax, pulled towards the defaults), and kept only when they rank the validation
questions' chains better than the defaults. A KG without labelled questions keeps the defaults: questions
synthesised from relation names would teach the features that read relation names to trust themselves.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from kgqa.core.question_words import asked_for
from kgqa.core.types import LinkedEntity
from kgqa.models.frag_ranker import FEATURES, FragRanker, RankerWeights
from kgqa.retrieve.frag import FragConfig, FragRetriever
from kgqa.training.questions import LabelledQuestion
from neo4j import Driver
from tqdm import tqdm

QUESTIONS = 300  # labelled training questions whose candidates are collected (and as many to validate)
MIN_ASKED = 20  # labelled questions asking for one kind before the steps they end with are learned
L2 = 0.05
STEPS = 400
RATE = 0.05


@dataclass
class RankerFit:
    weights: RankerWeights
    accuracy_default: float  # validation: the gold chain ranked first, with the default weights
    accuracy_fitted: float
    questions: int
    kept: bool


def _topics(q: LabelledQuestion) -> list[LinkedEntity]:
    spans = list(q.topic_spans) + [""] * len(q.topic_ids)
    return [LinkedEntity(i, s or i, 1.0, "given", s) for i, s in zip(q.topic_ids, spans, strict=False)]


def _collect(
    retriever: FragRetriever, kg: str, questions: Sequence[LabelledQuestion], desc: str
) -> list[tuple[np.ndarray, int]]:
    """(features, index of the gold chain) per question whose gold chain FRAG finds."""
    out = []
    for q in tqdm(questions, desc=desc, unit="q", leave=False):
        if not q.chain:
            continue
        chains, features = retriever.chain_features(q.text, kg, _topics(q))
        gold = tuple((rel, way == "out") for rel, way in q.chain)
        if gold in chains and len(chains) > 1:
            out.append((features, chains.index(gold)))
    return out


def _accuracy(data: Sequence[tuple[np.ndarray, int]], w: np.ndarray) -> float:
    if not data:
        return 0.0
    return sum(int(np.argmax(f @ w)) == g for f, g in data) / len(data)


def _fit(data: Sequence[tuple[np.ndarray, int]], start: np.ndarray) -> np.ndarray:
    w = start.astype(np.float64).copy()
    for _ in range(STEPS):
        grad = -L2 * (w - start)
        for f, g in data:
            z = f @ w
            p = np.exp(z - z.max())
            p /= p.sum()
            grad += (f[g] - p @ f) / len(data)
        w += RATE * 10 * grad
    return w


def learn_asked_steps(
    questions: Sequence[LabelledQuestion], min_asked: int = MIN_ASKED
) -> dict[str, dict[str, float]]:
    """For each kind the questions ask for (:func:`asked_for`: "person" for "who", "films" for "which
    films"), the share of those asking for it whose chain ends with each step (``FragRanker.asked_steps``)."""
    ends: dict[str, Counter[str]] = defaultdict(Counter)
    for q in questions:
        asked = asked_for(q.text)
        if asked and q.chain:
            relation, way = q.chain[-1]
            ends[asked][f"{way}:{relation}"] += 1
    return {
        asked: {step: round(n / sum(counts.values()), 4) for step, n in counts.most_common()}
        for asked, counts in sorted(ends.items())
        if sum(counts.values()) >= min_asked
    }


def fit_ranker(
    driver: Driver,
    kg: str,
    training: Sequence[LabelledQuestion],
    validation: Sequence[LabelledQuestion],
    ranker: FragRanker,
    seed: int = 13,
    progress: Callable[[str], None] = lambda _m: None,
) -> RankerFit:
    rng = random.Random(seed)
    # The frozen encoder's similarity, always: the path scorer is fine-tuned on these same questions, so its
    # cosines would look surer here than on people's, and it is trained after this fit. Answering then
    # reads the path scorer's cosines in its place, which measured better with these weights (WebQSP train
    # 1,000, FRAG's answers: 168 -> 191 first right; our FB15k-237 tune questions, auto 65.4 -> 66.7).
    retriever = FragRetriever(driver, FragConfig(path_scorer=False), ranker=ranker)
    train = _collect(
        retriever, kg, rng.sample(list(training), min(QUESTIONS, len(training))), "ranker: training"
    )
    valid = _collect(
        retriever, kg, rng.sample(list(validation), min(QUESTIONS, len(validation))), "ranker: validation"
    )
    start = np.asarray(RankerWeights().vector(), dtype=np.float64)
    if not train:
        return RankerFit(RankerWeights(), 0.0, 0.0, 0, False)
    fitted = _fit(train, start)
    before, after = _accuracy(valid, start), _accuracy(valid, fitted)
    kept = after > before
    weights = RankerWeights(**{name: round(float(v), 4) for name, v in zip(FEATURES, fitted, strict=True)})
    progress(
        f"FRAG ranker on {len(train)} labelled questions: the gold chain first on validation "
        f"{after:.3f} fitted, {before:.3f} default ({'kept' if kept else 'defaults kept'})"
    )
    return RankerFit(weights if kept else RankerWeights(), before, after, len(train), kept)
