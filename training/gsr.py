"""GSR's relation-chain generator: a small encoder-decoder trained here in torch and exported to ONNX.

Encoder: the question's WordPiece ids (the all-MiniLM-L6-v2 vocabulary, topic entity as [MASK]) through
MiniLM's own word embeddings (frozen, so words the training questions never used still land near their
synonyms), a projection and a small transformer encoder. Decoder: a small transformer decoder over one token
per relation and direction (``directed_by>``, ``directed_by<``) plus BOS / EOS, with cross-attention on the
encoder. Exported as two ONNX graphs, ``encoder.onnx`` (ids, mask -> memory) and ``decoder.onnx`` (memory,
mask, prefix -> next-token log-probabilities), so that beam search can run in any ONNX Runtime.
"""

from __future__ import annotations

import json
import math
import random
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
from kgqa.models.encoder import source_dir
from kgqa.training.gsr_data import Example
from neo4j import Driver, RoutingControl
from torch import nn

PAD, BOS, EOS = 0, 1, 2
MAX_CHAIN = 4  # hops; the decoder writes at most MAX_CHAIN + 1 tokens (EOS)
MAX_WORDS = 40


@dataclass
class GsrConfig:
    d_model: int = 192
    heads: int = 4
    encoder_layers: int = 2
    decoder_layers: int = 2
    dropout: float = 0.1
    epochs: int = 6
    batch_size: int = 64
    lr: float = 1e-3
    seed: int = 13
    # After the run that measures chain accuracy on held-out wordings, train again on every wording: the
    # installed model then knows all of them (a tenth of MetaQA dev's wordings were never trained on before,
    # e.g. "who co-starred with": 80% of those 2-hop dev questions got the 1-hop chain).
    refit: bool = True


def chain_tokens(relations: Sequence[str]) -> list[str]:
    """The decoder's vocabulary: PAD, BOS, EOS, then every relation forwards and backwards."""
    out = ["<pad>", "<bos>", "<eos>"]
    for r in relations:
        out += [f"{r}>", f"{r}<"]
    return out


def encode_chain(chain: Sequence[tuple[str, str]], vocab: dict[str, int]) -> list[int]:
    return [BOS] + [vocab[f"{r}{'>' if d == 'out' else '<'}"] for r, d in chain] + [EOS]


class WordPiece:
    """MiniLM's tokenizer with [MASK] kept whole (the topic entity's place)."""

    def __init__(self) -> None:
        from tokenizers import BertWordPieceTokenizer

        self.tokenizer = BertWordPieceTokenizer(str(source_dir() / "vocab.txt"), lowercase=True)
        self.tokenizer.enable_truncation(max_length=MAX_WORDS)

    def ids(self, text: str) -> list[int]:
        return list(self.tokenizer.encode(text).ids)


class ChainGenerator(nn.Module):
    def __init__(self, word_embeddings: np.ndarray, chain_vocab: int, cfg: GsrConfig) -> None:
        super().__init__()
        self.words = nn.Embedding.from_pretrained(torch.tensor(word_embeddings), freeze=True, padding_idx=0)
        self.project = nn.Linear(word_embeddings.shape[1], cfg.d_model)
        self.positions = nn.Embedding(MAX_WORDS, cfg.d_model)
        layer = nn.TransformerEncoderLayer(
            cfg.d_model, cfg.heads, 4 * cfg.d_model, cfg.dropout, batch_first=True
        )
        self.encoder = nn.TransformerEncoder(layer, cfg.encoder_layers, enable_nested_tensor=False)
        self.chain = nn.Embedding(chain_vocab, cfg.d_model)
        self.chain_positions = nn.Embedding(MAX_CHAIN + 2, cfg.d_model)
        dlayer = nn.TransformerDecoderLayer(
            cfg.d_model, cfg.heads, 4 * cfg.d_model, cfg.dropout, batch_first=True
        )
        self.decoder = nn.TransformerDecoder(dlayer, cfg.decoder_layers)
        self.out = nn.Linear(cfg.d_model, chain_vocab)

    def encode(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(ids.shape[1], device=ids.device).unsqueeze(0)
        x = self.project(self.words(ids)) + self.positions(positions)
        return self.encoder(x, src_key_padding_mask=mask == 0)

    def decode(self, memory: torch.Tensor, mask: torch.Tensor, prefix: torch.Tensor) -> torch.Tensor:
        """Logits of every prefix position (training) — the last one is the next token."""
        n = prefix.shape[1]
        positions = torch.arange(n, device=prefix.device).unsqueeze(0)
        y = self.chain(prefix) + self.chain_positions(positions)
        steps = torch.arange(n, device=prefix.device)
        causal = steps.unsqueeze(0) > steps.unsqueeze(1)  # True: may not attend (a later position)
        h = self.decoder(y, memory, tgt_mask=causal, memory_key_padding_mask=mask == 0, tgt_is_causal=False)
        return self.out(h)


class _DecoderStep(nn.Module):
    """What decoder.onnx computes: log-probabilities of the token after ``prefix``."""

    def __init__(self, model: ChainGenerator) -> None:
        super().__init__()
        self.model = model

    def forward(self, memory: torch.Tensor, mask: torch.Tensor, prefix: torch.Tensor) -> torch.Tensor:
        return torch.log_softmax(self.model.decode(memory, mask, prefix)[:, -1, :], dim=-1)


class _Encoder(nn.Module):
    def __init__(self, model: ChainGenerator) -> None:
        super().__init__()
        self.model = model

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.model.encode(ids, mask)


def word_embeddings() -> np.ndarray:
    from safetensors.numpy import load_file

    tensors = load_file(str(source_dir() / "model.safetensors"))
    name = next(k for k in tensors if k.endswith("embeddings.word_embeddings.weight"))
    return tensors[name].astype(np.float32)


def _batches(rows: list[tuple[list[int], list[int]]], size: int, rng: random.Random):  # type: ignore[no-untyped-def]
    order = list(range(len(rows)))
    rng.shuffle(order)
    for start in range(0, len(order), size):
        chunk = [rows[i] for i in order[start : start + size]]
        width = max(len(w) for w, _ in chunk)
        depth = max(len(c) for _, c in chunk)
        ids = torch.zeros(len(chunk), width, dtype=torch.long)
        chains = torch.zeros(len(chunk), depth, dtype=torch.long)
        for i, (w, c) in enumerate(chunk):
            ids[i, : len(w)] = torch.tensor(w)
            chains[i, : len(c)] = torch.tensor(c)
        yield ids, (ids != 0).long(), chains


@dataclass
class TrainReport:
    examples: int
    validation: int
    epochs: int
    seconds: float
    valid_chain_accuracy: float  # greedy top-1 chain == gold, on the held-out dev questions
    parameters: int
    trainable_parameters: int
    refit_examples: int = 0  # examples of the second run on every wording (0: the model is the first run's)


def train(
    train_rows: list[Example],
    valid_rows: list[Example],
    relations: Sequence[str],
    cfg: GsrConfig,
    progress: Callable[[str], None] = lambda _m: None,
) -> tuple[ChainGenerator, dict[str, int], TrainReport]:
    torch.manual_seed(cfg.seed)
    rng = random.Random(cfg.seed)
    tokens = chain_tokens(relations)
    vocab = {t: i for i, t in enumerate(tokens)}
    wp = WordPiece()
    rows = [(wp.ids(e.text), encode_chain(e.chain, vocab)) for e in train_rows]
    model = ChainGenerator(word_embeddings(), len(tokens), cfg)
    optimiser = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=cfg.lr)
    steps = cfg.epochs * math.ceil(len(rows) / cfg.batch_size)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimiser, max_lr=cfg.lr, total_steps=steps)
    loss_fn = nn.CrossEntropyLoss(ignore_index=PAD)
    began = time.monotonic()
    for epoch in range(cfg.epochs):
        model.train()
        total = 0.0
        for ids, mask, chains in _batches(rows, cfg.batch_size, rng):
            memory = model.encode(ids, mask)
            logits = model.decode(memory, mask, chains[:, :-1])
            loss = loss_fn(logits.reshape(-1, logits.shape[-1]), chains[:, 1:].reshape(-1))
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            schedule.step()
            total += float(loss.detach()) * ids.shape[0]
        accuracy = chain_accuracy(model, wp, valid_rows, vocab)
        progress(
            f"epoch {epoch + 1}/{cfg.epochs}: loss {total / len(rows):.4f},"
            f" valid chain accuracy {accuracy:.4f}"
        )
    report = TrainReport(
        examples=len(rows),
        validation=len(valid_rows),
        epochs=cfg.epochs,
        seconds=round(time.monotonic() - began, 1),
        valid_chain_accuracy=chain_accuracy(model, wp, valid_rows, vocab),
        parameters=sum(p.numel() for p in model.parameters()),
        trainable_parameters=sum(p.numel() for p in model.parameters() if p.requires_grad),
    )
    return model, vocab, report


@torch.no_grad()
def greedy(model: ChainGenerator, wp: WordPiece, texts: Sequence[str]) -> list[list[int]]:
    model.eval()
    out = []
    for text in texts:
        ids = torch.tensor([wp.ids(text)])
        mask = torch.ones_like(ids)
        memory = model.encode(ids, mask)
        prefix = [BOS]
        for _ in range(MAX_CHAIN + 1):
            nxt = int(model.decode(memory, mask, torch.tensor([prefix]))[0, -1].argmax())
            prefix.append(nxt)
            if nxt == EOS:
                break
        out.append(prefix)
    return out


def chain_accuracy(
    model: ChainGenerator, wp: WordPiece, rows: Sequence[Example], vocab: dict[str, int]
) -> float:
    if not rows:
        return 0.0
    sample = list(rows)[:2000]
    got = greedy(model, wp, [e.text for e in sample])
    return sum(g == encode_chain(e.chain, vocab) for g, e in zip(got, sample, strict=True)) / len(sample)


def export(model: ChainGenerator, vocab: dict[str, int], out: Path, meta: dict[str, object]) -> None:
    """encoder.onnx, decoder.onnx and meta.json into ``out``; the ONNX graphs are checked against torch."""
    import onnxruntime as ort

    out.mkdir(parents=True, exist_ok=True)
    torch.backends.mha.set_fastpath_enabled(False)  # the fast path's checks do not trace
    model.eval()
    encoder, step = _Encoder(model).eval(), _DecoderStep(model).eval()
    # batch 2, 5 words, 3 chain tokens: no dimension is 0 or 1, so torch.export keeps them all symbolic
    ids = torch.tensor([[101, 2040, 103, 2000, 102], [101, 2054, 103, 102, 0]])
    mask = (ids != 0).long()
    batch, words = torch.export.Dim("batch", min=1, max=256), torch.export.Dim("words", min=2, max=MAX_WORDS)
    chain = torch.export.Dim("chain", min=1, max=MAX_CHAIN + 1)
    torch.onnx.export(
        encoder,
        (ids, mask),
        str(out / "encoder.onnx"),
        input_names=["ids", "mask"],
        output_names=["memory"],
        dynamic_shapes={"ids": {0: batch, 1: words}, "mask": {0: batch, 1: words}},
        dynamo=True,
    )
    with torch.no_grad():
        memory = encoder(ids, mask)
    prefix = torch.tensor([[BOS, 3, 5], [BOS, 4, 6]])
    torch.onnx.export(
        step,
        (memory, mask, prefix),
        str(out / "decoder.onnx"),
        input_names=["memory", "mask", "prefix"],
        output_names=["logprobs"],
        dynamic_shapes={
            "memory": {0: batch, 1: words},
            "mask": {0: batch, 1: words},
            "prefix": {0: batch, 1: chain},
        },
        dynamo=True,
    )
    # The encoder's WordPiece vocabulary travels with the model: the database tokenises with it.
    shutil.copyfile(source_dir() / "vocab.txt", out / "vocab.txt")
    tokens = [t for t, _ in sorted(vocab.items(), key=lambda kv: kv[1])]
    (out / "meta.json").write_text(
        json.dumps(
            {**meta, "chain_tokens": tokens, "max_chain": MAX_CHAIN, "max_words": MAX_WORDS}, indent=1
        ),
        encoding="utf-8",
    )
    # ONNX against torch on the example
    enc = ort.InferenceSession(str(out / "encoder.onnx"))
    dec = ort.InferenceSession(str(out / "decoder.onnx"))
    ids, mask, prefix = ids[:1, :4], mask[:1, :4], prefix[:1, :1]  # other shapes than the traced ones
    m = enc.run(None, {"ids": ids.numpy(), "mask": mask.numpy()})[0]
    lp = dec.run(None, {"memory": m, "mask": mask.numpy(), "prefix": prefix.numpy()})[0]
    with torch.no_grad():
        expected = step(encoder(ids, mask), mask, prefix).numpy()
    if not np.allclose(lp, expected, atol=1e-4):
        raise RuntimeError(f"decoder.onnx differs from torch by {float(np.abs(lp - expected).max())}")


def config_dict(cfg: GsrConfig) -> dict[str, object]:
    return asdict(cfg)


def train_gsr(
    relations: dict[str, str],
    out: Path,
    data_dir: str | None = None,
    cfg: GsrConfig | None = None,
    progress: Callable[[str], None] = lambda _m: None,
    path_chains: Sequence[tuple[tuple[str, str], ...]] = (),
    per_chain: int = 1,
    questions: bool = True,
) -> TrainReport:
    """Trains the chain generator and installs it at ``out``; the report.

    relations: the KG's relation names -> readable texts (the decoder's vocabulary). questions: train on
    MetaQA dev (retrieval; its wordings never seen in training are the validation set). path_chains: the
    chains the KG can walk (``gsr_data.walkable_chains``), ``per_chain`` synthesised questions each. The
    index pseudo-questions are always in. Without MetaQA, a tenth of the synthesised wordings validate.
    """
    from kgqa.training.gsr_data import index_examples, metaqa_examples, path_examples, split

    cfg = cfg or GsrConfig()
    synthesised = path_examples(path_chains, relations, per_chain, cfg.seed)
    if questions:
        train_rows, valid_rows = split(metaqa_examples(data_dir), 0.1, cfg.seed)
        train_rows += synthesised
    else:
        train_rows, valid_rows = split(synthesised, 0.1, cfg.seed)
    unknown = {r for e in train_rows for r, _d in e.chain} - set(relations)
    if unknown:
        raise ValueError(f"the training chains use relations the KG does not have: {sorted(unknown)}")
    train_rows += index_examples(relations)
    if not valid_rows:
        raise ValueError("no training questions: give MetaQA questions or chains to synthesise from")
    model, vocab, report = train(train_rows, valid_rows, sorted(relations), cfg, progress)
    if cfg.refit:
        progress(f"refit on every wording: the {len(valid_rows)} held-out examples join the training set")
        seconds = report.seconds
        model, vocab, refit = train(train_rows + valid_rows, valid_rows, sorted(relations), cfg, progress)
        report.refit_examples = refit.examples
        report.seconds = round(seconds + refit.seconds, 1)
    # Exported beside the live model and swapped in whole: the database reloads a model whose files change,
    # and must never see half of a new one.
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    try:
        export(
            model,
            vocab,
            staging,
            {"config": config_dict(cfg), "report": asdict(report), "relations": relations},
        )
        install(staging, out)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return report


def train_gsr_for_kg(
    driver: Driver,
    kg: str,
    out: Path,
    data_dir: str | None = None,
    cfg: GsrConfig | None = None,
    progress: Callable[[str], None] = lambda _m: None,
    synthesise: bool = True,
    per_chain: int = 1,
) -> TrainReport:
    """:func:`train_gsr` for a loaded KG: its relations are the vocabulary, its walkable chains (read from its
    entities in the database) are synthesised into questions, and MetaQA dev is used when the KG has every
    relation MetaQA's questions walk (otherwise the model learns from the KG alone)."""
    from kgqa.core.metaqa import ROLE_RELATION
    from kgqa.graph.cypher import render
    from kgqa.training.gsr_data import walkable_chains

    records = driver.execute_query(render("gsr/relations"), {"kg": kg}, routing_=RoutingControl.READ).records
    relations = {str(r["name"]): str(r["text"]) for r in records}
    if not relations:
        raise ValueError(f"KG {kg!r} has no relations; load it first")
    questions = set(ROLE_RELATION.values()) <= set(relations)
    if not questions:
        progress(f"KG {kg!r} lacks MetaQA's relations: training on questions synthesised from the KG alone")
    chains: list[tuple[tuple[str, str], ...]] = []
    if synthesise:
        signatures = driver.execute_query(
            render("gsr/signatures"), {"kg": kg}, routing_=RoutingControl.READ
        ).records
        chains = walkable_chains([(s["outgoing"], s["incoming"], int(s["entities"])) for s in signatures])
        progress(f"{len(chains)} walkable relation chains of 1-3 hops, {per_chain} questions each")
    return train_gsr(relations, out, data_dir, cfg, progress, chains, per_chain, questions)


def install(staging: Path, out: Path) -> None:
    """Replaces the model directory ``out`` by ``staging`` with two renames."""
    old = out.with_name(f".{out.name}-old")
    shutil.rmtree(old, ignore_errors=True)
    if out.exists():
        out.rename(old)
    staging.rename(out)
    shutil.rmtree(old, ignore_errors=True)
