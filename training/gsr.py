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
from kgqa.training.gsr_data import Example, index_examples, question_examples
from kgqa.training.questions import LabelledQuestion
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
    # How many examples training reads in all: the epochs follow from the number of distinct examples (a KG
    # with few wordings takes more passes over them), between min_epochs and max_epochs.
    examples: int = 150_000
    min_epochs: int = 3
    max_epochs: int = 60
    batch_size: int = 64
    lr: float = 1e-3
    seed: int = 13

    def epochs_for(self, distinct: int) -> int:
        return max(self.min_epochs, min(self.max_epochs, round(self.examples / max(distinct, 1))))


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


def device() -> torch.device:
    """A GPU when torch sees one, else the CPU."""
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def train(
    train_rows: list[Example],
    valid_rows: list[Example],
    relations: Sequence[str],
    cfg: GsrConfig,
    progress: Callable[[str], None] = lambda _m: None,
) -> tuple[ChainGenerator, dict[str, int], TrainReport]:
    from tqdm import tqdm

    torch.manual_seed(cfg.seed)
    rng = random.Random(cfg.seed)
    run_on = device()
    tokens = chain_tokens(relations)
    vocab = {t: i for i, t in enumerate(tokens)}
    wp = WordPiece()
    rows = [(wp.ids(e.text), encode_chain(e.chain, vocab)) for e in train_rows]
    epochs = cfg.epochs_for(len(rows))
    model = ChainGenerator(word_embeddings(), len(tokens), cfg).to(run_on)
    optimiser = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=cfg.lr)
    batches = math.ceil(len(rows) / cfg.batch_size)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimiser, max_lr=cfg.lr, total_steps=epochs * batches)
    loss_fn = nn.CrossEntropyLoss(ignore_index=PAD)
    began = time.monotonic()
    for epoch in range(epochs):
        model.train()
        total = 0.0
        sample = rows
        bar = tqdm(
            _batches(sample, cfg.batch_size, rng),
            total=batches,
            desc=f"GSR epoch {epoch + 1}/{epochs}",
            unit="batch",
            leave=False,
        )
        for ids, mask, chains in bar:
            ids, mask, chains = ids.to(run_on), mask.to(run_on), chains.to(run_on)
            memory = model.encode(ids, mask)
            logits = model.decode(memory, mask, chains[:, :-1])
            loss = loss_fn(logits.reshape(-1, logits.shape[-1]), chains[:, 1:].reshape(-1))
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            schedule.step()
            total += float(loss.detach()) * ids.shape[0]
        if epoch + 1 < epochs and (epoch + 1) % max(1, epochs // 6):
            continue  # the held-out accuracy about six times in a run: greedy decoding costs
        accuracy = chain_accuracy(model, wp, valid_rows, vocab)
        progress(
            f"GSR epoch {epoch + 1}/{epochs}: loss {total / len(sample):.4f},"
            f" chain accuracy on held-out wordings {accuracy:.4f} ({time.monotonic() - began:.0f}s)"
        )
    model = model.cpu()
    report = TrainReport(
        examples=len(rows),
        validation=len(valid_rows),
        epochs=epochs,
        seconds=round(time.monotonic() - began, 1),
        valid_chain_accuracy=chain_accuracy(model, wp, valid_rows, vocab),
        parameters=sum(p.numel() for p in model.parameters()),
        trainable_parameters=sum(p.numel() for p in model.parameters() if p.requires_grad),
    )
    return model, vocab, report


@torch.no_grad()
def greedy(model: ChainGenerator, wp: WordPiece, texts: Sequence[str]) -> list[list[int]]:
    model.eval()
    on = next(model.parameters()).device
    out = []
    for text in texts:
        ids = torch.tensor([wp.ids(text)], device=on)
        mask = torch.ones_like(ids)
        memory = model.encode(ids, mask)
        prefix = [BOS]
        for _ in range(MAX_CHAIN + 1):
            nxt = int(model.decode(memory, mask, torch.tensor([prefix], device=on))[0, -1].argmax())
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
    sample = list(rows)[:1000]
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
    relations: Sequence[str],
    out: Path,
    training: Sequence[LabelledQuestion],
    validation: Sequence[LabelledQuestion],
    cfg: GsrConfig | None = None,
    progress: Callable[[str], None] = lambda _m: None,
) -> TrainReport:
    """Trains the chain generator on ``training`` (and one pseudo-question per relation and direction) and
    installs it at ``out``; ``validation`` (wordings it never trains on) measures chain accuracy.

    ``relations``: the KG's relation names, the decoder's vocabulary."""
    cfg = cfg or GsrConfig()
    train_rows = question_examples(training)
    valid_rows = question_examples(validation)
    unknown = {r for e in train_rows for r, _d in e.chain} - set(relations)
    if unknown:
        raise ValueError(f"the training chains use relations the KG does not have: {sorted(unknown)[:5]}")
    train_rows += index_examples(sorted(relations))
    if not train_rows:
        raise ValueError("no training questions with a relation chain")
    model, vocab, report = train(train_rows, valid_rows, sorted(relations), cfg, progress)
    # Exported beside the live model and swapped in whole: the database reloads a model whose files change,
    # and must never see half of a new one.
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    try:
        export(
            model,
            vocab,
            staging,
            {"config": config_dict(cfg), "report": asdict(report), "relations": sorted(relations)},
        )
        install(staging, out)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return report


def install(staging: Path, out: Path) -> None:
    """Replaces the model directory ``out`` by ``staging`` with two renames."""
    old = out.with_name(f".{out.name}-old")
    shutil.rmtree(old, ignore_errors=True)
    if out.exists():
        out.rename(old)
    staging.rename(out)
    shutil.rmtree(old, ignore_errors=True)
