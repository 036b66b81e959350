"""The question-to-path scorer: the pretrained all-MiniLM-L6-v2 transformer, fine-tuned per KG (bi-encoder).

The question (topic masked, :func:`kgqa.models.path_scorer.scorer_query`) and a relation chain (in words,
:func:`kgqa.core.relation_text.chain_text`) go through the same encoder; their cosine says how well the chain
answers the question. SR (Zhang et al. 2022) ranks relation paths this way; here a whole chain of one or two
steps is one text.

What it learns from decides what it prefers, so the examples are kept clean:

* **positive**: the question's own chain (labelled, or the chain its synthesised question was worded from);
* **hard negatives**: other chains walkable from the same topic that reach *none* of its answers
  (:func:`kgqa.graph.walkable.walkable_chains`): a chain that merely contains an answer is neither, so
  broad two-step chains are never taught as right;
* the other questions' chains of the batch, as in-batch negatives (InfoNCE, temperature 0.05).

The fine-tuned weights are exported to ONNX by the same numpy builder as the stock encoder
(:func:`kgqa.models.encoder_build.build_encoder`), so query time runs it through onnxruntime without torch.
The vectors of every chain seen while training are stored with it (``chains.json`` + ``chains.npy``).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import torch
from kgqa.core.chains import Chain, chain_key, reverse_step
from kgqa.core.relation_text import chain_text
from kgqa.graph.walkable import kg_chains, walkable_chains
from kgqa.models.encoder import OnnxEncoder, encoder_meta, source_dir
from kgqa.models.encoder_build import build_encoder, source_fingerprint
from kgqa.models.path_scorer import CHAINS_FILE, COSINE_FLOOR, META_FILE, VECTORS_FILE, scorer_query
from kgqa.training.chain_vectors import STORED_CHAINS
from kgqa.training.gsr import install
from kgqa.training.questions import LabelledQuestion
from neo4j import Driver
from tqdm import tqdm

MAX_TOKENS = 48


@dataclass
class PathScorerConfig:
    epochs: int = 1
    batch_size: int = 16
    hard_negatives: int = 5  # per question, from the chains walkable from its topic
    lr: float = 3e-5
    temperature: float = 0.05
    max_questions: int = 2000  # training questions read at most (a seeded sample)
    validation_questions: int = 200
    # of held-out questions whose own chain may fall below the cosine floor; None: no floor (held-out
    # questions synthesised from the KG score their own chains far higher than people's questions do)
    floor_share: float | None = 0.05
    # chains whose vectors are stored with the scorer, so that no question waits for them: the ones training
    # saw, then the KG's other one- and two-step chains, the most common first
    stored_chains: int = STORED_CHAINS
    seed: int = 13


@dataclass
class ScorerExample:
    query: str
    positive: Chain
    negatives: list[Chain]  # walkable from the topic, reaching none of the answers
    walkable: list[Chain] = field(default_factory=list)  # every candidate (validation ranks among them)


@dataclass
class PathScorerReport:
    examples: int
    validation: int  # the validation questions chain_at_1_held_out was measured on (the first ones)
    seconds: float
    device: str
    metrics: dict[str, float]


def device() -> torch.device:
    """A GPU when torch sees one, else the CPU."""
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def build_examples(
    driver: Driver,
    kg: str,
    questions: Sequence[LabelledQuestion],
    negatives: int,
    seed: int,
    desc: str,
) -> list[ScorerExample]:
    """One example per question with a chain whose topic the KG can walk from."""
    rng = random.Random(seed)
    out: list[ScorerExample] = []
    walks: dict[tuple[tuple[str, ...], tuple[str, ...]], list] = {}
    for q in tqdm(questions, desc=desc, unit="q", leave=False):
        if not q.chain or not q.topic_ids:
            continue
        key = (q.topic_ids, q.answer_ids)
        if key not in walks:
            walks[key] = walkable_chains(driver, kg, q.topic_ids, q.answer_ids)
        walkable = walks[key]
        wrong = [w.chain for w in walkable if w.hits == 0 and w.chain != q.chain]
        # The near misses a scorer confuses most: the right chain with one step too many or too few, and the
        # right relation walked the other way. The rest are drawn at random.
        near = [c for c in wrong if c[: len(q.chain)] == q.chain or q.chain[: len(c)] == c]
        near += [c for c in wrong if len(c) == len(q.chain) and c[-1] == reverse_step(q.chain[-1])]
        near = rng.sample(near, min(negatives // 2, len(near)))
        rest = [c for c in wrong if c not in near]
        out.append(
            ScorerExample(
                scorer_query(q.text, q.topic_spans),
                q.chain,
                near + rng.sample(rest, min(negatives - len(near), len(rest))),
                [w.chain for w in walkable],
            )
        )
    return out


class MiniLmEncoder(torch.nn.Module):
    """MiniLM as sentence-transformers runs it: mean pooling over the attention mask, L2-normalised."""

    def __init__(self) -> None:
        super().__init__()
        from transformers import BertModel

        self.bert = BertModel.from_pretrained(str(source_dir()), add_pooling_layer=False)

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        hidden = self.bert(input_ids=ids, attention_mask=mask, token_type_ids=torch.zeros_like(ids))[0]
        weights = mask.unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * weights).sum(1) / weights.sum(1).clamp(min=1e-9)
        return torch.nn.functional.normalize(pooled, dim=-1)


def minilm_tokenizer():  # type: ignore[no-untyped-def]
    from tokenizers import BertWordPieceTokenizer

    tokenizer = BertWordPieceTokenizer(str(source_dir() / "vocab.txt"), lowercase=True)
    tokenizer.enable_truncation(max_length=MAX_TOKENS)
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
    return tokenizer


def train_path_scorer(
    driver: Driver,
    kg: str,
    training: Sequence[LabelledQuestion],
    validation: Sequence[LabelledQuestion],
    out: Path,
    config: PathScorerConfig | None = None,
    log: Callable[[str], None] = lambda _m: None,
) -> PathScorerReport:
    """Fine-tunes the scorer on ``training``, measures it on ``validation`` (questions it never read) and
    installs it at ``out`` (ONNX, chain vectors, meta)."""
    cfg = config or PathScorerConfig()
    began = time.perf_counter()
    rng = random.Random(cfg.seed)
    torch.manual_seed(cfg.seed)
    sample = list(training)
    if len(sample) > cfg.max_questions:
        sample = rng.sample(sample, cfg.max_questions)
    train_rows = build_examples(
        driver, kg, sample, cfg.hard_negatives, cfg.seed, "path scorer: training walks"
    )
    valid_rows = build_examples(
        driver, kg, validation[: cfg.validation_questions], 0, cfg.seed, "path scorer: validation walks"
    )
    if not train_rows:
        raise ValueError("no training question has a relation chain the KG can walk from its topic")
    log(f"path scorer: {len(train_rows)} training, {len(valid_rows)} validation questions")
    run_on = device()
    tokenizer = minilm_tokenizer()
    model = MiniLmEncoder().to(run_on)

    def encode(texts: list[str]) -> torch.Tensor:
        encodings = tokenizer.encode_batch(texts)
        ids = torch.tensor([e.ids for e in encodings], device=run_on)
        mask = torch.tensor([e.attention_mask for e in encodings], device=run_on)
        return model(ids, mask)

    optimiser = torch.optim.AdamW(model.parameters(), lr=cfg.lr)
    steps = cfg.epochs * ((len(train_rows) + cfg.batch_size - 1) // cfg.batch_size)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimiser, lambda s: min(1.0, (s + 1) / max(1, steps // 10)) * max(0.0, 1 - s / max(1, steps))
    )
    with tqdm(total=steps, desc="path scorer: fine-tuning MiniLM", unit="batch", leave=False) as bar:
        for _epoch in range(cfg.epochs):
            model.train()
            rng.shuffle(train_rows)
            for start in range(0, len(train_rows), cfg.batch_size):
                batch = train_rows[start : start + cfg.batch_size]
                docs: dict[Chain, int] = {}
                for row in batch:
                    for chain in (row.positive, *row.negatives):
                        docs.setdefault(chain, len(docs))
                queries = encode([row.query for row in batch])
                chains = encode([chain_text(c) for c in docs])
                logits = queries @ chains.T / cfg.temperature
                target = torch.tensor([docs[row.positive] for row in batch], device=run_on)
                loss = torch.nn.functional.cross_entropy(logits, target)
                optimiser.zero_grad()
                loss.backward()
                optimiser.step()
                schedule.step()
                bar.update(1)
                bar.set_postfix(loss=f"{loss.item():.3f}")
    after, own_cosines = _validate(encode, valid_rows, model)
    metrics = {"chain_at_1_held_out": after}
    log(f"path scorer: the question's own chain first for {after:.3f} of the held-out questions")
    floor = 0.0
    if cfg.floor_share is not None:
        floor = metrics["cosine_floor"] = cosine_floor(own_cosines, cfg.floor_share)
        log(f"path scorer: {cfg.floor_share:.0%} of them below the cosine {floor:.3f}: no chain taken there")
    known = sorted({c for row in train_rows + valid_rows for c in (row.positive, *row.walkable)})
    seen = set(known)
    more = [c for c in kg_chains(driver, kg, cfg.stored_chains) if c not in seen]
    known += more[: max(0, cfg.stored_chains - len(known))]
    report = PathScorerReport(
        len(train_rows),
        min(len(validation), cfg.validation_questions),
        round(time.perf_counter() - began, 1),
        run_on.type,
        metrics,
    )
    _export(model, known, out, {"config": asdict(cfg), "report": asdict(report), COSINE_FLOOR: floor})
    return report


def cosine_floor(own_cosines: Sequence[float], share: float) -> float:
    """The cosine below which ``share`` of the held-out questions' own chains fall: a chain less like the
    question than that is not one the scorer recognises (0 when nothing was held out)."""
    ranked = sorted(own_cosines)
    return round(float(ranked[int(len(ranked) * share)]), 4) if ranked else 0.0


def _validate(
    encode: Callable[[list[str]], torch.Tensor], rows: Sequence[ScorerExample], model: torch.nn.Module
) -> tuple[float, list[float]]:
    """The share of questions whose own chain ranks first among the chains walkable from their topic, and
    each question's cosine to its own chain."""
    rows = [r for r in rows if r.walkable]
    if not rows:
        return 0.0, []
    model.eval()
    right = 0
    own: list[float] = []
    with torch.no_grad():
        unique = sorted({c for row in rows for c in row.walkable})
        vectors = torch.cat(
            [encode([chain_text(c) for c in unique[i : i + 256]]) for i in range(0, len(unique), 256)]
        )
        index = {c: i for i, c in enumerate(unique)}
        queries = torch.cat([encode([r.query for r in rows[i : i + 256]]) for i in range(0, len(rows), 256)])
        for row, query in zip(rows, queries, strict=True):
            candidates = vectors[[index[c] for c in row.walkable]]
            right += row.walkable[int((candidates @ query).argmax())] == row.positive
            if row.positive in index:
                own.append(float(vectors[index[row.positive]] @ query))
    return round(right / len(rows), 4), own


def _export(model: MiniLmEncoder, chains: Sequence[Chain], out: Path, meta: dict[str, object]) -> None:
    """The fine-tuned encoder as ONNX (the stock builder), its chain vectors and meta, swapped in whole."""
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    weights = Path(tempfile.mkdtemp(prefix=".weights-", dir=out.parent))
    try:
        from safetensors.torch import save_file

        # the state dict under BertModel's own names, which the numpy builder reads (not save_pretrained's)
        state = {k: v.detach().to("cpu").contiguous() for k, v in model.bert.state_dict().items()}
        save_file(state, str(weights / "model.safetensors"))
        for name in ("config.json", "vocab.txt"):
            shutil.copyfile(source_dir() / name, weights / name)
        build_encoder(weights, staging)
        encoder = {
            **encoder_meta(source_fingerprint(weights)),
            "source": "fine-tuned by kgqa.training.path_scorer",
        }
        (staging / "encoder.json").write_text(json.dumps(encoder, indent=1))
        vectors = OnnxEncoder(staging, threads=os.cpu_count() or 1).embed([chain_text(c) for c in chains])
        np.save(staging / VECTORS_FILE, vectors)
        (staging / CHAINS_FILE).write_text(json.dumps([chain_key(c) for c in chains]))
        (staging / META_FILE).write_text(json.dumps(meta, indent=1))  # last: its presence means complete
        install(staging, out)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        shutil.rmtree(weights, ignore_errors=True)
