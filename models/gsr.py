"""GSR at query time: beam search over the exported chain generator (onnxruntime, no torch).

The model directory (a KG's ``<models>/kgs/<kg>/gsr/``, written by ``kgqa train all``) holds ``encoder.onnx``,
``decoder.onnx`` and ``meta.json`` (the chain vocabulary). A chain is a list of (relation, "out" | "in")
steps; its score is the sum of its tokens' log-probabilities, EOS included.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from kgqa.core.errors import ModelMissing
from kgqa.core.text import mask_topic

PAD, BOS, EOS = 0, 1, 2
MASK = "[MASK]"  # stands for the topic entity; a special token of the encoder's vocabulary


@dataclass(frozen=True)
class Chain:
    steps: tuple[tuple[str, str], ...]
    score: float  # log-probability


def masked(question: str, spans: list[str] | None = None) -> str:
    """The question with its topic entity replaced by [MASK] (``core.text.mask_topic``), lower-cased."""
    return mask_topic(question, spans, MASK).lower().replace(MASK.lower(), MASK)


class ChainModel:
    def __init__(self, directory: Path) -> None:
        import onnxruntime as ort
        from kgqa.models.encoder import source_dir
        from tokenizers import BertWordPieceTokenizer

        if not (directory / "decoder.onnx").is_file():
            raise ModelMissing("GSR model", "kgqa train all --kg KG", str(directory))
        self.name = directory.name
        self.meta = json.loads((directory / "meta.json").read_text(encoding="utf-8"))
        self.tokens: list[str] = list(self.meta["chain_tokens"])
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        self.encoder = ort.InferenceSession(str(directory / "encoder.onnx"), options)
        self.decoder = ort.InferenceSession(str(directory / "decoder.onnx"), options)
        vocab = directory / "vocab.txt"  # written beside the model since the database tokenises too
        self.tokenizer = BertWordPieceTokenizer(
            str(vocab if vocab.is_file() else source_dir() / "vocab.txt"), lowercase=True
        )
        self.tokenizer.enable_truncation(max_length=int(self.meta["max_words"]))
        self.max_chain = int(self.meta["max_chain"])

    def step(self, token: int) -> tuple[str, str]:
        name = self.tokens[token]
        return (name[:-1], "out" if name.endswith(">") else "in")

    def _memory(self, masked_question: str) -> tuple[np.ndarray, np.ndarray]:
        ids = np.array([self.tokenizer.encode(masked_question).ids], dtype=np.int64)
        mask = np.ones_like(ids)
        return self.encoder.run(None, {"ids": ids, "mask": mask})[0], mask

    def score(self, masked_question: str, chains: Sequence[Sequence[tuple[str, str]]]) -> np.ndarray:
        """log P(chain | question) of each given chain, EOS included (teacher forcing, one decoder run per
        step over all chains); -inf for a chain with a step the model does not know or too long for it."""
        token = {name: i for i, name in enumerate(self.tokens)}
        encoded: list[list[int] | None] = []
        for chain in chains:
            ids = [token.get(rel + (">" if way == "out" else "<")) for rel, way in chain]
            known = chain and len(ids) <= self.max_chain and all(i is not None for i in ids)
            encoded.append([BOS, *[int(i) for i in ids if i is not None], EOS] if known else None)
        out = np.full(len(chains), -np.inf)
        rows = [i for i, e in enumerate(encoded) if e is not None]
        if not rows:
            return out
        memory, mask = self._memory(masked_question)
        sequences = [encoded[i] for i in rows]
        total = np.zeros(len(rows))
        for position in range(1, max(len(s) for s in sequences)):
            live = [r for r, s in enumerate(sequences) if position < len(s)]
            # chains share prefixes: the decoder runs once per distinct one
            prefixes = list(dict.fromkeys(tuple(sequences[r][:position]) for r in live))
            at = {prefix: i for i, prefix in enumerate(prefixes)}
            logprobs = self.decoder.run(
                None,
                {
                    "memory": np.repeat(memory, len(prefixes), axis=0),
                    "mask": np.repeat(mask, len(prefixes), axis=0),
                    "prefix": np.array(prefixes, dtype=np.int64),
                },
            )[0]
            for r in live:
                total[r] += logprobs[at[tuple(sequences[r][:position])], sequences[r][position]]
        out[rows] = total
        return out

    def chains(self, masked_question: str, beams: int = 10) -> list[Chain]:
        """The ``beams`` best chains, best first (beam search, length not normalised: chains are short)."""
        memory, mask = self._memory(masked_question)
        live: list[tuple[list[int], float]] = [([BOS], 0.0)]
        done: list[tuple[list[int], float]] = []
        for _ in range(self.max_chain + 1):
            prefix = np.array([p for p, _ in live], dtype=np.int64)
            n = len(live)
            logprobs = self.decoder.run(
                None,
                {
                    "memory": np.repeat(memory, n, axis=0),
                    "mask": np.repeat(mask, n, axis=0),
                    "prefix": prefix,
                },
            )[0]
            candidates = []
            for (p, s), row in zip(live, logprobs, strict=True):
                for token in np.argsort(-row, kind="stable")[: beams + 1]:
                    if token in (PAD, BOS):
                        continue
                    candidates.append((p + [int(token)], s + float(row[token])))
            candidates.sort(key=lambda c: -c[1])  # stable: ties keep the order they were proposed in
            live = []
            for p, s in candidates:  # all of them: an early stop could miss a better finished chain
                if p[-1] == EOS:
                    if len(p) > 2:
                        done.append((p, s))
                elif len(live) < beams and len(p) <= self.max_chain + 1:
                    live.append((p, s))
            if not live:
                break
        done.sort(key=lambda c: -c[1])
        return [Chain(tuple(self.step(t) for t in p[1:-1]), s) for p, s in done[:beams]]
