"""The fast encoder (all-MiniLM-L6-v2-static, distilled with model2vec): build, parity, use per KG.

The distillation runs once per test home (about 2 minutes on 2 cores) and is cached. Python's StaticEncoder
must give model2vec's numbers, the database's ``kgqa.text.embed`` must give Python's, a KG loaded with
``--embeddings fast`` records the model and answers with it, and a trained SubgraphRAG scorer whose features
came from another encoder is refused in one line.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import REPO, run_kgqa
from tests.test_encoder_onnx import TRICKY, metaqa_names

KG = "tiny-fast"
# Texts where the tokenizer's corners show: model2vec's added tokens, a word over 100 characters, a text past
# max_length tokens and past max_chars characters, only unknown characters.
EDGES = [
    "x [PAD] y [UNK] z",
    "a" * 150 + " film",
    " ".join(["kismet"] * 560),  # past the encoder's 256 tokens, within the procedures' 4,000 characters
    "film " * 800,
    "🎬🎬",
]


@pytest.fixture(scope="module")
def static_dir(neo4j_env: dict[str, str]) -> Path:
    from kgqa.models.encoder import ensure_static_encoder

    return ensure_static_encoder(Path(neo4j_env["KGQA_HOME"]))


def test_build_is_cached_and_keeps_384_dimensions(neo4j_env: dict[str, str], static_dir: Path) -> None:
    from kgqa.models.encoder import STATIC_MODEL, ensure_static_encoder

    began = time.monotonic()
    assert ensure_static_encoder(Path(neo4j_env["KGQA_HOME"])) == static_dir
    assert time.monotonic() - began < 5, "a second build must reuse the first"
    assert static_dir.name == STATIC_MODEL
    meta = json.loads((static_dir / "encoder.json").read_text())
    assert meta["kind"] == "static" and meta["dimension"] == 384
    vocab = (static_dir / "vocab.txt").read_text(encoding="utf-8").splitlines()
    assert len(vocab) == meta["tokens"]
    # model2vec's vocabulary is not BERT's vocab.txt: no specials besides [PAD]/[UNK], no [unusedN].
    assert vocab[:2] == ["[PAD]", "[UNK]"]
    assert "[CLS]" not in vocab and "[unused0]" not in vocab


def test_python_matches_model2vec(static_dir: Path) -> None:
    from kgqa.models.encoder import StaticEncoder
    from model2vec import StaticModel

    texts = metaqa_names(1000) + TRICKY + EDGES
    ours = StaticEncoder(static_dir)
    reference = StaticModel.from_pretrained(str(static_dir))
    np.testing.assert_allclose(ours.embed(texts), reference.encode(texts), atol=1e-6)
    for text in TRICKY + EDGES:
        assert ours.tokenize(text) == reference.tokenize([text[: ours.max_chars]])[0], text


def _embed_in_db(driver, texts: list[str], config: dict[str, str]) -> np.ndarray:  # type: ignore[no-untyped-def]
    records = driver.execute_query(
        "UNWIND range(0, size($texts) - 1) AS i RETURN kgqa.text.embed($texts[i], $config) AS v ORDER BY i",
        {"texts": texts, "config": config},
    ).records
    return np.asarray([r["v"] for r in records], dtype=np.float32)


def test_in_db_matches_python(driver, static_dir: Path) -> None:  # type: ignore[no-untyped-def]
    from kgqa.models.encoder import STATIC_MODEL, StaticEncoder

    texts = metaqa_names(1000) + TRICKY + EDGES
    in_db = _embed_in_db(driver, texts, {"encoder": STATIC_MODEL})
    ours = StaticEncoder(static_dir).embed(texts)
    worst = int(np.argmax(np.abs(in_db - ours).max(axis=1)))
    assert np.abs(in_db - ours).max() < 1e-5, f"worst: {texts[worst]!r}"


@pytest.fixture(scope="module")
def fast_kg(driver, static_dir: Path) -> Iterator[str]:  # type: ignore[no-untyped-def]
    done = run_kgqa(
        "load",
        "metaqa",
        "--path",
        str(REPO / "examples" / "movies-kb.txt"),
        "--kg",
        KG,
        "--embeddings",
        "fast",
    )
    assert done.returncode == 0, done.stderr
    yield KG
    run_kgqa("kgs", "--drop", KG)


def test_fast_load_records_the_model_and_its_vectors(driver, fast_kg: str, static_dir: Path) -> None:  # type: ignore[no-untyped-def]
    from kgqa.models.encoder import STATIC_MODEL, StaticEncoder

    listed = json.loads(run_kgqa("kgs", "--json").stdout)
    assert next(k for k in listed if k["name"] == fast_kg)["embedding_model"] == STATIC_MODEL
    row = driver.execute_query(
        "MATCH (e:Entity {kg: $kg, name: 'Tarsem Singh'}) RETURN e.embedding AS v", {"kg": fast_kg}
    ).records[0]
    np.testing.assert_allclose(row["v"], StaticEncoder(static_dir).embed_one("Tarsem Singh"), atol=1e-6)
    # The database embeds a text for this KG with the KG's model.
    by_kg = _embed_in_db(driver, ["Tarsem Singh"], {"kg": fast_kg})[0]
    np.testing.assert_allclose(by_kg, row["v"], atol=1e-5)


@pytest.mark.parametrize("method", ["simgrag", "cosine", "frag"])
def test_fast_kg_answers(fast_kg: str, method: str) -> None:
    done = run_kgqa(
        "ask", "who directed The Fall", "--kg", fast_kg, "--method", method, "--llm", "none", "--json"
    )
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert "Tarsem Singh" in answer["answers"][:3], answer


def test_text_of_unknown_tokens_only_links_and_answers(driver, fast_kg: str) -> None:  # type: ignore[no-untyped-def]
    """The static model embeds a text it knows no token of as the zero vector, which a vector index refuses
    as a query: the linker and SimGRAG must search without it, not fail."""
    rows = driver.execute_query(
        "CALL kgqa.link.entities('who directed 🎬 ᚠᚢᚦ', {kg: $kg}) YIELD id RETURN id", {"kg": fast_kg}
    ).records
    assert rows == []
    done = run_kgqa(
        "ask", "who directed ᚠᚢᚦ The Fall", "--kg", fast_kg, "--method", "simgrag", "--llm", "none", "--json"
    )
    assert done.returncode == 0, done.stderr
    assert "Tarsem Singh" in json.loads(done.stdout)["answers"][:3]


def test_subgraphrag_model_of_another_encoder_is_refused(
    driver, fast_kg: str, neo4j_env: dict[str, str]
) -> None:  # type: ignore[no-untyped-def]
    from neo4j.exceptions import ClientError

    # A real (tiny) trained scorer whose meta.json says its features came from the encoder 'tiny-encoder'.
    target = Path(neo4j_env["KGQA_HOME"]) / "models" / "subgraphrag" / "tiny-other-encoder"
    shutil.copytree(
        REPO / "procedures/src/test/resources/models/subgraphrag/tiny-mlp", target, dirs_exist_ok=True
    )
    try:
        with pytest.raises(ClientError) as refused:
            driver.execute_query(
                "CALL kgqa.subgraphrag.retrieve('who directed The Fall', "
                "{kg: $kg, model: 'tiny-other-encoder'})",
                {"kg": fast_kg},
            )
        assert (
            "SubgraphRAG model 'tiny-other-encoder' was trained on tiny-encoder embeddings but KG "
            f"'{fast_kg}' was embedded with all-MiniLM-L6-v2-static" in str(refused.value.message)
        )
    finally:
        shutil.rmtree(target, ignore_errors=True)


def test_a_kg_scores_with_its_own_model_only(driver, fast_kg: str) -> None:  # type: ignore[no-untyped-def]
    """A KG's SubgraphRAG scorer is trained on its own vectors (`kgqa train all --kg KG`): a KG without one is
    told so in one line, by Python and by the database, and is never scored by another KG's model."""
    from kgqa.core.errors import ModelMissing
    from kgqa.retrieve.subgraphrag import SubgraphRagRetriever
    from neo4j.exceptions import ClientError

    with pytest.raises(ModelMissing) as missing:
        SubgraphRagRetriever(driver).retrieve("who directed The Fall", fast_kg, 10, [])
    assert f"kgqa train all --kg {fast_kg}" in str(missing.value)
    with pytest.raises(ClientError) as refused:
        driver.execute_query(
            "CALL kgqa.subgraphrag.retrieve('who directed The Fall', {kg: $kg})", {"kg": fast_kg}
        )
    message = str(refused.value.message)
    assert (
        f"no SubgraphRAG model for KG '{fast_kg}'" in message and f"kgqa train all --kg {fast_kg}" in message
    )


def test_no_embeddings_contradicting_embeddings_is_one_line() -> None:
    done = run_kgqa("load", "metaqa", "--path", "x", "--no-embeddings", "--embeddings", "fast")
    assert done.returncode != 0
    assert "--no-embeddings contradicts --embeddings fast" in done.stderr
