"""FRAG's ranker weights for one KG, fitted on the KG's labelled questions.

FRAG ranks a question's candidate relation chains by a weighted sum of features
(:data:`kgqa.models.frag_ranker.FEATURES`: similarity to the question, how well its words name the chain,
whether the chain arrives at what the question asks for, hop counts ...). How much each says differs per KG
and per question set: on a KG whose hop classifier learned from real questions the predicted hop count is
worth a lot; on one that only has questions synthesised from relation names it is not. So the weights are
fitted on the KG's own labelled questions (their chain is the positive, every other candidate FRAG finds a
negative), and kept only when they rank held-out chains better than the defaults. A KG without labelled
questions keeps the defaults: questions synthesised from relation names alone would teach the features that
read relation names to trust themselves.

A KG's labelled questions are one set of users: WebQSP's chains on FB15k-237 are one hop for nine in ten,
and weights fitted on them alone learned that a second hop is wrong (FRAG on our FB15k-237 two-hop tune
questions: 71.1 with the defaults, 7.9 fitted). So when the labelled chains rarely have a hop count, the
questions synthesised from the KG's chains, a pool of one-hop and one of two-hop ones, each weigh as much as
the labelled ones in the fit and in the check that keeps it: they stand for the users who ask what the
labelled set does not.

A listwise softmax over the labelled questions is the fit where they ask chains of every length
(MetaQA's dev questions; the margin's weights there: FRAG on our two-entity tune questions 92.4 -> 77.3).
Where the synthesised pools join, a softmax still failed the two-hop questions: it lowered its loss on
them while their gold chain fell from first (0.56 -> 0.16 on the synthesised two-hop training questions),
spreading probability over the gold chain's near twins. A margin between the gold chain and the
best-scored other one does not.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from kgqa.core.question_words import asked_for
from kgqa.core.types import LinkedEntity
from kgqa.models.frag_ranker import FEATURES, FragRanker, RankerWeights
from kgqa.retrieve.frag import FragConfig, FragRetriever
from kgqa.training.questions import LabelledQuestion
from neo4j import Driver
from tqdm import tqdm

QUESTIONS = 300  # labelled questions whose candidates are collected, to train (and as many to validate)
# the same with synthesised pools: with 300 to train, the fit on WebQSP's varied with the sample of
# synthesised ones (its labelled validation pool 0.62 to 0.71 first right)
QUESTIONS_WITH_POOLS = 1000
# a hop count that fewer of the labelled chains have than this is one their users rarely ask (WebQSP's on
# FB15k-237: 8 % two hops), and the synthesised questions of it join the fit
MIN_HOP_SHARE = 0.25
SYNTHESISED = 150  # synthesised questions per hop count, to train and as many to validate
MIN_ASKED = 20  # labelled questions asking for one kind before the steps they end with are learned
L2 = 0.05
MIN_GAIN = 0.01  # what the fitted weights must add to the validation pools' mean before they are kept
STEPS = 400
MARGIN_RATE = 0.5
SOFTMAX_RATE = 0.5
# how far the gold chain must score above the best other one before a question stops pulling: chosen on
# the validation pools of a KG trained with WebQSP train (at 0.05 and 0.1 the synthesised two-hop pool
# gained 67 against 60 at 0.3, and the labelled one lost more: 52 and 55 against 71 of 100 first right)
MARGIN = 0.3

Pool = list[tuple[np.ndarray, int]]  # per question: its candidates' features, and the gold chain's index


@dataclass
class RankerFit:
    weights: RankerWeights
    accuracy_default: float  # validation, mean over the pools: the gold chain ranked first, default weights
    accuracy_fitted: float
    questions: int  # training questions whose gold chain FRAG found, every pool
    kept: bool
    # per validation pool ("labelled", "synthesised one-hop", ...): (default, fitted) gold chain first
    pools: dict[str, tuple[float, float]] = field(default_factory=dict)
    how: str = ""  # which fit: the softmax on labelled questions, or the margin with synthesised pools


def _topics(q: LabelledQuestion) -> list[LinkedEntity]:
    spans = list(q.topic_spans) + [""] * len(q.topic_ids)
    return [LinkedEntity(i, s or i, 1.0, "given", s) for i, s in zip(q.topic_ids, spans, strict=False)]


def _collect(retriever: FragRetriever, kg: str, questions: Sequence[LabelledQuestion], desc: str) -> Pool:
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


def _accuracy(data: Pool, w: np.ndarray) -> float:
    if not data:
        return 0.0
    return sum(int(np.argmax(f @ w)) == g for f, g in data) / len(data)


def _fit_softmax(pool: Pool, start: np.ndarray) -> np.ndarray:
    """Weights near ``start`` under which the pool's gold chains take the most probability (a listwise
    softmax over each question's candidates)."""
    w = start.astype(np.float64).copy()
    for _ in range(STEPS):
        grad = -L2 * (w - start)
        for f, g in pool:
            z = f @ w
            p = np.exp(z - z.max())
            p /= p.sum()
            grad += (f[g] - p @ f) / len(pool)
        w += SOFTMAX_RATE * grad
    return w


def _fit_margin(pools: Sequence[Pool], start: np.ndarray) -> np.ndarray:
    """Weights near ``start`` under which each pool's gold chains beat the best other chain by MARGIN; each
    pool weighs the same, whatever its size."""
    w = start.astype(np.float64).copy()
    pools = [pool for pool in pools if pool]
    for _ in range(STEPS):
        grad = -L2 * (w - start)
        for pool in pools:
            for f, g in pool:
                z = f @ w
                gold = z[g]
                z[g] = -np.inf
                rival = int(np.argmax(z))
                if gold - z[rival] < MARGIN:
                    grad += (f[g] - f[rival]) / (len(pool) * len(pools))
        w += MARGIN_RATE * grad
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


def _by_hops(questions: Sequence[LabelledQuestion]) -> dict[str, list[LabelledQuestion]]:
    one = [q for q in questions if len(q.chain) == 1]
    more = [q for q in questions if len(q.chain) >= 2]
    return {"synthesised one-hop": one, "synthesised two-hop": more}


def hops_rarely_asked(training: Sequence[LabelledQuestion]) -> list[str]:
    """The synthesised pools (:func:`_by_hops`) whose hop count fewer than MIN_HOP_SHARE of the labelled
    questions' chains have: the users the labelled set does not speak for."""
    chains = [len(q.chain) for q in training if q.chain]
    if not chains:
        return []
    shares = {
        "synthesised one-hop": sum(h == 1 for h in chains),
        "synthesised two-hop": sum(h >= 2 for h in chains),
    }
    return [name for name, n in shares.items() if n < MIN_HOP_SHARE * len(chains)]


def fit_ranker(
    driver: Driver,
    kg: str,
    training: Sequence[LabelledQuestion],
    validation: Sequence[LabelledQuestion],
    ranker: FragRanker,
    synthesised_training: Sequence[LabelledQuestion] = (),
    synthesised_validation: Sequence[LabelledQuestion] = (),
    seed: int = 13,
    progress: Callable[[str], None] = lambda _m: None,
) -> RankerFit:
    """Weights fitted on the labelled questions, kept when they rank held-out chains first more often than
    the defaults. When the labelled chains rarely have some hop count (:func:`hops_rarely_asked`), the
    synthesised questions join the fit and the check, a pool per hop count."""
    rng = random.Random(seed)
    # The frozen encoder's similarity, always: the path scorer is fine-tuned on these same questions, so its
    # cosines would look surer here than on people's, and it is trained after this fit. Answering then
    # reads the path scorer's cosines in its place, which measured better with these weights (WebQSP train
    # 1,000, FRAG's answers: 168 -> 191 first right; our FB15k-237 tune questions, auto 65.4 -> 66.7).
    retriever = FragRetriever(driver, FragConfig(path_scorer=False), ranker=ranker)

    def sample(questions: Sequence[LabelledQuestion], most: int) -> list[LabelledQuestion]:
        return rng.sample(list(questions), min(most, len(questions)))

    rare = hops_rarely_asked(training)
    most = QUESTIONS_WITH_POOLS if rare else QUESTIONS
    train = [_collect(retriever, kg, sample(training, most), "ranker: labelled")]
    valid = {"labelled": _collect(retriever, kg, sample(validation, most), "ranker: validation")}
    # every hop count's pool, once one is rare: with the two-hop pool alone beside WebQSP's questions, the
    # labelled validation pool fell (0.71 -> 0.62 first right)
    for name, questions in (_by_hops(synthesised_training) if rare else {}).items():
        train.append(_collect(retriever, kg, sample(questions, SYNTHESISED), f"ranker: {name}"))
    for name, questions in (_by_hops(synthesised_validation) if rare else {}).items():
        valid[name] = _collect(retriever, kg, sample(questions, SYNTHESISED), f"ranker: {name}, validation")
    start = np.asarray(RankerWeights().vector(), dtype=np.float64)
    if not train[0]:
        return RankerFit(RankerWeights(), 0.0, 0.0, 0, False)
    how = "margin, labelled and synthesised questions" if rare else "softmax, labelled questions"
    fitted = _fit_margin(train, start) if rare else _fit_softmax(train[0], start)
    pools = {name: (_accuracy(pool, start), _accuracy(pool, fitted)) for name, pool in valid.items() if pool}
    before = float(np.mean([b for b, _ in pools.values()])) if pools else 0.0
    after = float(np.mean([a for _, a in pools.values()])) if pools else 0.0
    kept = after >= before + MIN_GAIN if rare else after > before
    weights = RankerWeights(**{name: round(float(v), 4) for name, v in zip(FEATURES, fitted, strict=True)})
    progress(
        f"FRAG ranker on {sum(map(len, train))} questions ({how}): the gold chain first on validation "
        f"{after:.3f} fitted, {before:.3f} default ({'kept' if kept else 'defaults kept'}; "
        + ", ".join(f"{name} {b:.3f} -> {a:.3f}" for name, (b, a) in pools.items())
        + ")"
    )
    return RankerFit(
        weights if kept else RankerWeights(), before, after, sum(map(len, train)), kept, pools, how
    )
