"""FRAG's ranker fit: the pools of labelled and synthesised questions each weigh the same (no database)."""

from __future__ import annotations

import numpy as np
from kgqa.learn.frag_ranker import _accuracy, _by_hops, _fit_margin, hops_rarely_asked
from kgqa.models.frag_ranker import FEATURES, RankerWeights
from kgqa.training.questions import LabelledQuestion

SIMILARITY, TWO_HOPS = FEATURES.index("similarity"), FEATURES.index("two_hops")


def _candidates(
    gold_similarity: float, gold_hops: int, rival_similarity: float, rival_hops: int
) -> np.ndarray:
    rows = np.zeros((2, len(FEATURES)))
    rows[0, SIMILARITY], rows[0, TWO_HOPS] = gold_similarity, float(gold_hops == 2)
    rows[1, SIMILARITY], rows[1, TWO_HOPS] = rival_similarity, float(rival_hops == 2)
    return rows


def _pool(n: int, gold_hops: int, rival_hops: int, rng: np.random.Generator) -> list[tuple[np.ndarray, int]]:
    """Questions whose gold chain is a little more like them than its rival, or a little less: how many
    hops the gold chain has tells the rest."""
    pool = []
    for _ in range(n):
        gold, rival = rng.uniform(0.5, 0.7), rng.uniform(0.5, 0.7)
        pool.append((_candidates(gold, gold_hops, rival, rival_hops), 0))
    return pool


def test_a_labelled_set_of_one_hop_chains_does_not_teach_that_two_hops_are_wrong() -> None:
    rng = np.random.default_rng(0)
    start = np.asarray(RankerWeights().vector())
    labelled = _pool(200, gold_hops=1, rival_hops=2, rng=rng)  # the labelled questions: one hop, always
    two_hop = _pool(60, gold_hops=2, rival_hops=1, rng=rng)  # the synthesised ones of two-hop chains
    alone = _fit_margin([labelled], start)
    assert alone[TWO_HOPS] < -0.1 and _accuracy(two_hop, alone) < 0.5  # what a labelled set alone teaches
    pooled = _fit_margin([labelled, two_hop], start)
    assert _accuracy(two_hop, pooled) > _accuracy(two_hop, alone) + 0.2
    # each pool weighs the same whatever its size: the small two-hop pool holds its own
    assert abs(pooled[TWO_HOPS]) < abs(alone[TWO_HOPS]) / 2


def test_synthesised_questions_are_pooled_by_hop_count() -> None:
    def question(*chain: tuple[str, str]) -> LabelledQuestion:
        return LabelledQuestion("q", ("t",), ("x",), ("a",), tuple(chain), "file:1")

    one, two = question(("r", "out")), question(("r", "out"), ("s", "in"))
    pools = _by_hops([one, two, one])
    assert pools == {"synthesised one-hop": [one, one], "synthesised two-hop": [two]}


def test_synthesised_pools_join_when_the_labelled_chains_rarely_have_a_hop_count() -> None:
    def question(hops: int) -> LabelledQuestion:
        return LabelledQuestion("q", ("t",), ("x",), ("a",), (("r", "out"),) * hops, "file:1")

    assert hops_rarely_asked([question(1)] * 9 + [question(2)]) == ["synthesised two-hop"]
    assert hops_rarely_asked([question(2)] * 9 + [question(1)]) == ["synthesised one-hop"]
    assert hops_rarely_asked([question(1), question(2), question(3)]) == []  # every length asked
