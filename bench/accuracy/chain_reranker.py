"""Would a cross-encoder that rereads the path scorer's first chains pick people's chains more often?

A measurement for the next step of the question-to-path scorer (issue 35 asks for "a cross-encoder head that
reranks the top few chains"), not something kgqa runs. It builds the path scorer's own training questions as
``kgqa train all`` does (the KG's labelled questions when ``--questions`` names them, and its synthesised
ones), fine-tunes all-MiniLM-L6-v2 as a cross-encoder over "masked question [SEP] chain in words" (mean
pooling, a linear head, a softmax over each question's own chain and its clean negatives: chains walkable
from its topic that reach none of its answers), and reranks the KG's installed scorer's first ``top`` chains
by ``cross-encoder logit + weight * scorer cosine / temperature``. Reported, per kind of question:

- on the set's part (people's questions): the own chain first (*chain@1*) and a first chain that reaches a
  gold answer (*reaches@1*), for the scorer alone and for each reranking of the grid;
- with ``--questions``: chain@1 on the KG's labelled questions ``kgqa train all`` holds out (validation and
  route), which neither model trained on.

Negatives (``--negatives``): ``near`` as the scorer learns (the own chain one step longer or shorter, its
last step reversed, the rest at random); ``scorer``: the installed scorer's six best wrong chains, two near
misses and one at random (the mistakes the reranker is asked to correct).

Read the tune part only; the held-out part is for reporting what is built.

    python -m bench.accuracy.chain_reranker --kg fb15k-webqsp \\
        --questions ../shared/data/webqsp/webqsp_train_beamqa.csv \\
        --set bench/questions/fb15k_freeform.jsonl --part tune
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from kgqa.core.chains import Chain, reverse_step
from kgqa.core.relation_text import chain_text
from kgqa.graph.connection import open_driver
from kgqa.graph.walkable import walkable_chains
from kgqa.learn.train_all import (
    TrainAllOptions,
    scorer_questions,
    split_labelled,
    split_synthesised,
    worded_as_people_ask,
)
from kgqa.models import kg_models
from kgqa.models.encoder import embed
from kgqa.models.path_scorer import PathScorer, scorer_query
from kgqa.retrieve.linking import link_entities
from kgqa.training.answer_types import Arrivals
from kgqa.training.path_scorer import MiniLmEncoder, minilm_tokenizer
from kgqa.training.questions import LabelledQuestion, read_labelled_questions
from kgqa.training.synthesis import synthesise
from rich.progress import track

from bench.accuracy.path_scorer_chains import _ids

GRID = ((3, 1.0), (3, 2.0), (5, 1.0), (5, 2.0), (10, 2.0))  # (top chains reread, weight of the scorer)
MAX_TOKENS = 64


@dataclass
class Example:
    query: str  # the masked question
    own: Chain
    negatives: list[Chain]


class CrossEncoder(torch.nn.Module):
    """MiniLM over "question [SEP] chain", mean-pooled and L2-normalised as the scorer is, then a linear head:
    the same graph the stock ONNX builder exports, plus one dot product."""

    def __init__(self) -> None:
        super().__init__()
        self.encoder = MiniLmEncoder()
        self.head = torch.nn.Linear(self.encoder.bert.config.hidden_size, 1)
        self.tokenizer = minilm_tokenizer()
        self.tokenizer.enable_truncation(max_length=MAX_TOKENS)

    def forward(self, query: str, chains: Sequence[Chain]) -> torch.Tensor:
        encodings = self.tokenizer.encode_batch([f"{query} [SEP] {chain_text(c)}" for c in chains])
        ids = torch.tensor([e.ids for e in encodings])
        mask = torch.tensor([e.attention_mask for e in encodings])
        return self.head(self.encoder(ids, mask)).squeeze(-1) * 10.0


def examples(
    driver: object, kg: str, questions: Sequence[LabelledQuestion], scorer: PathScorer, how: str, seed: int
) -> list[Example]:
    rng = random.Random(seed)
    out = []
    for q in track(questions, description="reading walkable chains", transient=True):
        if not q.chain or not q.topic_ids:
            continue
        walkable = walkable_chains(driver, kg, q.topic_ids, q.answer_ids)  # type: ignore[arg-type]
        wrong = [w.chain for w in walkable if w.hits == 0 and w.chain != q.chain]
        if not wrong:
            continue
        query = scorer_query(q.text, q.topic_spans)
        near = [
            c
            for c in wrong
            if c[: len(q.chain)] == q.chain
            or q.chain[: len(c)] == c
            or (len(c) == len(q.chain) and c[-1] == reverse_step(q.chain[-1]))
        ]
        if how == "scorer":
            cosines = scorer.cosines(q.text, q.topic_spans, wrong)
            best = [wrong[i] for i in np.argsort(-cosines)[:6]]
            near = [c for c in near if c not in best]
            rest = [c for c in wrong if c not in best and c not in near]
            chosen = best + rng.sample(near, min(2, len(near))) + rng.sample(rest, min(1, len(rest)))
        else:
            near = rng.sample(near, min(4, len(near)))
            rest = [c for c in wrong if c not in near]
            chosen = near + rng.sample(rest, min(9 - len(near), len(rest)))
        out.append(Example(query, q.chain, chosen))
    return out


def train(rows: Sequence[Example], epochs: int, seed: int) -> CrossEncoder:
    torch.manual_seed(seed)
    rng = random.Random(seed)
    model = CrossEncoder()
    optimiser = torch.optim.AdamW(model.parameters(), lr=3e-5)
    batch = 4
    rows = list(rows)
    steps = epochs * ((len(rows) + batch - 1) // batch)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimiser, lambda s: min(1.0, (s + 1) / max(1, steps // 10)) * max(0.0, 1 - s / steps)
    )
    model.train()
    for _ in range(epochs):
        rng.shuffle(rows)
        for start in track(
            range(0, len(rows), batch), description="fine-tuning the cross-encoder", transient=True
        ):
            group = rows[start : start + batch]
            loss = sum(
                torch.nn.functional.cross_entropy(
                    model(r.query, [r.own, *r.negatives]).unsqueeze(0), torch.tensor([0])
                )
                for r in group
            ) / len(group)
            optimiser.zero_grad()
            loss.backward()  # type: ignore[union-attr]
            optimiser.step()
            schedule.step()
    model.eval()
    return model


def reranked(
    model: CrossEncoder, scorer: PathScorer, question: str, spans: Sequence[str], chains: Sequence[Chain]
) -> dict[str, Chain]:
    """The first chain of the scorer and of each reranking of the grid."""
    query = scorer_query(question, spans)
    cosines = scorer.cosines(question, spans, chains)
    order = [int(i) for i in np.argsort(-cosines, kind="stable")[: max(t for t, _w in GRID)]]
    with torch.no_grad():
        logits = model(query, [chains[i] for i in order]).tolist()
    out = {"scorer": chains[order[0]]}
    for top, weight in GRID:
        best = max(
            range(min(top, len(order))),
            key=lambda j: logits[j] + weight * cosines[order[j]] / scorer.temperature,
        )
        out[f"top {top}, weight {weight:g}"] = chains[order[best]]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kg", required=True)
    parser.add_argument("--set", type=Path, required=True)
    parser.add_argument("--part", default="tune", choices=["tune", "heldout"])
    parser.add_argument(
        "--questions", type=Path, help="the KG's labelled questions, as given to kgqa train all"
    )
    parser.add_argument("--negatives", default="near", choices=["near", "scorer"])
    parser.add_argument("--epochs", type=int, default=1)
    args = parser.parse_args()
    began = time.perf_counter()
    options = TrainAllOptions()
    scorer = PathScorer(kg_models.part_dir(args.kg, "path_scorer"))
    with open_driver() as driver:
        labelled = read_labelled_questions(driver, args.kg, [args.questions])[0] if args.questions else []
        synthesised = synthesise(driver, args.kg, options.synthesis, embed=embed)
        syn_train, _v, _r = split_synthesised(synthesised, options.validation_share, options.seed)
        lab_train, lab_validation, lab_route = split_labelled(
            labelled, options.route_share, options.validation_share, options.seed
        )
        asked = scorer_questions(lab_train, syn_train, options.path_scorer_questions, options.seed)
        asked = worded_as_people_ask(Arrivals(driver, args.kg), asked, options, lambda _m: None)
        rows = examples(driver, args.kg, asked, scorer, args.negatives, options.seed)
        prepared = time.perf_counter()
        model = train(rows, args.epochs, options.seed)
        trained = time.perf_counter()
        tally: dict[str, dict[str, list[tuple[bool, bool]]]] = defaultdict(lambda: defaultdict(list))
        people = [json.loads(line) for line in args.set.read_text().splitlines() if line.strip()]
        for row in track(
            [r for r in people if r["part"] == args.part], description="people's questions", transient=True
        ):
            topics, answers = _ids(driver, args.kg, row["topics"]), _ids(driver, args.kg, row["answers"])
            walkable = walkable_chains(driver, args.kg, topics, answers)
            if not walkable:
                continue
            linked = link_entities(driver, row["question"], args.kg)
            spans = [e.span for e in linked if e.id in topics and e.span] or row["topics"]
            own = tuple((r, w) for r, w in row["relation_path"]) if row.get("relation_path") else None
            reaches = {w.chain for w in walkable if w.hits}
            firsts = reranked(model, scorer, row["question"], spans, [w.chain for w in walkable])
            for kind in (row["kind"], "all"):
                for name, chain in firsts.items():
                    tally[kind][name].append((chain == own, chain in reaches))
        held: dict[str, list[bool]] = defaultdict(list)
        for q in track(lab_validation + lab_route, description="the KG's held-out questions", transient=True):
            if not q.chain or not q.topic_ids:
                continue
            walkable = walkable_chains(driver, args.kg, q.topic_ids, q.answer_ids)
            if walkable:
                chains = [w.chain for w in walkable]
                for name, chain in reranked(model, scorer, q.text, q.topic_spans, chains).items():
                    held[name].append(chain == q.chain)
    names = ["scorer", *(f"top {t}, weight {w:g}" for t, w in GRID)]
    print(f"# A cross-encoder rereading the path scorer's first chains, KG `{args.kg}`\n")
    print(
        f"Trained on {len(rows)} questions ({len(labelled)} labelled read), negatives `{args.negatives}`, "
        f"{args.epochs} epoch(s): examples {prepared - began:.0f} s, fine-tuning {trained - prepared:.0f} s "
        f"on {torch.get_num_threads()} threads.\n"
    )
    print(f"## People's questions: `{args.set.name}`, {args.part} part (chain@1 / reaches@1)\n")
    print("| kind | questions | " + " | ".join(names) + " |")
    print("|---|---:|" + "---:|" * len(names))
    for kind, by in sorted(tally.items()):
        cells = [
            f"{np.mean([c for c, _r in by[n]]):.3f} / {np.mean([r for _c, r in by[n]]):.3f}" for n in names
        ]
        print(f"| {kind} | {len(by['scorer'])} | " + " | ".join(cells) + " |")
    if held:
        print("\n## The KG's labelled questions held out from training (chain@1)\n")
        print("| questions | " + " | ".join(names) + " |")
        print("|---:|" + "---:|" * len(names))
        print(f"| {len(held['scorer'])} | " + " | ".join(f"{np.mean(held[n]):.3f}" for n in names) + " |")


if __name__ == "__main__":
    main()
