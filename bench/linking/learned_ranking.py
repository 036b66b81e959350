"""Could a learned ranking over the linker's candidates put WebQSP's topic first more often than the linker?

A measurement for the next step of linking, not something kgqa runs. For WebQSP's train questions whose topic
is in the KG, every candidate the linker weighs (``kgqa.link.candidates``, with its features) is read, with
what the linker links. Then a linear model is fitted listwise (a softmax over each question's candidates, the
topic the target) in 5 folds by question, and the share of questions whose best-scored candidate is the
topic is compared with the linker's own first link. The features tried:

- ``features``: the linker's own features (what its learned scorer would read);
- ``+ first``: whether the candidate is the linker's first link, and whether it is linked at all;
- ``+ context``: how well the question, with the candidate's span masked, fits the chains walkable from the
  candidate (the best cosine of the KG's path scorer, over all chains and over one-step ones): which entity
  the rest of the question asks about ("the colts coach" of the team, not of the profession).

WebQSP train is the linker's tuning set; test is never read here.

    python -m bench.linking.learned_ranking --kg fb15k
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from kgqa.core.config import shared_data_dir
from kgqa.evaluation.datasets import read_webqsp_train
from kgqa.graph.connection import open_driver
from kgqa.graph.walkable import walkable_at_question
from kgqa.models import kg_models
from kgqa.models.path_scorer import PathScorer
from kgqa.retrieve.linking import LinkCandidate, link_candidates, link_entities
from rich.progress import track

from bench.linking.webqsp import in_kg

CONTEXT_ENTITIES = 5  # the best-scored distinct entities whose walkable chains are read
CONTEXT_MIN_SCORE = 0.2  # hand score below which a candidate's chains are not read


@dataclass
class Asked:
    topics: set[str]
    candidates: list[LinkCandidate]
    linked: list[str]
    fits: dict[str, tuple[float, float]]  # entity -> (best cosine of any chain, of a one-step chain)


def context_fits(
    driver: object, kg: str, scorer: PathScorer, question: str, candidates: Sequence[LinkCandidate]
) -> dict[str, tuple[float, float]]:
    fits: dict[str, tuple[float, float]] = {}
    for c in sorted(candidates, key=lambda c: -c.hand_score):
        if c.hand_score < CONTEXT_MIN_SCORE or c.id in fits or len(fits) >= CONTEXT_ENTITIES:
            continue
        chains = walkable_at_question(driver, kg, [c.id])  # type: ignore[arg-type]
        cosines = scorer.cosines(question, [c.span], chains)
        one = [x for x, chain in zip(cosines, chains, strict=True) if len(chain) == 1]
        fits[c.id] = (float(cosines.max()) if len(cosines) else 0.0, float(max(one)) if one else 0.0)
    return fits


def rows(asked: Asked, names: Sequence[str], extra: str) -> np.ndarray:
    out = []
    for c in asked.candidates:
        row = [c.features[n] for n in names]
        if extra in ("first", "both"):
            row += [float(bool(asked.linked) and asked.linked[0] == c.id), float(c.id in asked.linked)]
        if extra in ("context", "both"):
            fit = asked.fits.get(c.id, (0.0, 0.0))
            row += [fit[0], fit[1], float(c.id in asked.fits)]
        out.append(row)
    return np.asarray(out, dtype=float)


def fit_listwise(data: Sequence[tuple[np.ndarray, np.ndarray]], l2: float) -> np.ndarray:
    from scipy.optimize import minimize

    width = data[0][0].shape[1]

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        total, grad = 0.0, np.zeros(width)
        for x, y in data:
            s = x @ w
            p = np.exp(s - s.max())
            p /= p.sum()
            right = float((p * y).sum()) + 1e-12
            total -= np.log(right)
            grad -= x.T @ (p * y / right - p)
        return total / len(data) + l2 * float(w @ w), grad / len(data) + 2 * l2 * w

    return minimize(loss, np.zeros(width), jac=True, method="L-BFGS-B", options={"maxiter": 500}).x


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kg", default="fb15k")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--l2", type=float, default=0.0003)
    args = parser.parse_args()
    questions = read_webqsp_train(shared_data_dir() / "webqsp", "train").questions
    scorer = PathScorer(kg_models.part_dir(args.kg, "path_scorer"))
    asked: list[Asked] = []
    with open_driver() as driver:
        known = in_kg(driver, args.kg, sorted({i for q in questions for i, _n in q.topic_entities}))
        for q in track([q for q in questions if any(i in known for i, _n in q.topic_entities)], "linking"):
            candidates = link_candidates(driver, q.question, args.kg)
            linked = [e.id for e in link_entities(driver, q.question, args.kg)]
            fits = context_fits(driver, args.kg, scorer, q.question, candidates)
            asked.append(Asked({i for i, _n in q.topic_entities}, candidates, linked, fits))
    names = sorted(next(a.candidates[0].features for a in asked if a.candidates))
    linker = np.mean([bool(a.linked) and a.linked[0] in a.topics for a in asked])
    reachable = np.mean([any(c.id in a.topics for c in a.candidates) for a in asked])
    fold = np.random.default_rng(0).integers(0, args.folds, len(asked))
    print(f"WebQSP train on KG `{args.kg}`: {len(asked)} questions, {args.folds} folds by question\n")
    print("| ranking | topic first |\n|---|---:|")
    print(f"| the linker's first link | {100 * linker:.1f} |")
    for extra, label in (
        ("none", "features"),
        ("first", "+ first"),
        ("context", "+ context"),
        ("both", "+ both"),
    ):
        hits = 0
        for k in range(args.folds):
            train = [
                (rows(a, names, extra), np.asarray([c.id in a.topics for c in a.candidates], dtype=float))
                for a, f in zip(asked, fold, strict=True)
                if f != k and a.candidates and any(c.id in a.topics for c in a.candidates)
            ]
            w = fit_listwise(train, args.l2)
            for a, f in zip(asked, fold, strict=True):
                if f == k and a.candidates:
                    hits += a.candidates[int(np.argmax(rows(a, names, extra) @ w))].id in a.topics
        print(f"| listwise, {label} | {100 * hits / len(asked):.1f} |")
    print(f"| any candidate is the topic (the ceiling) | {100 * reachable:.1f} |")


if __name__ == "__main__":
    main()
