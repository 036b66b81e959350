"""`kgqa.text.embed` (Java WordPiece + ONNX Runtime inside Neo4j) against sentence-transformers.

Issue 5's bar: cosine >= 0.999 on 1,000 MetaQA entity names. The server reads the encoder built under
`<KGQA_HOME>/models` (JVM property kgqa.models.dir, built by `kgqa server start`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.test_encoder_onnx import TRICKY, metaqa_names


@pytest.fixture(scope="module")
def exported(neo4j_env: dict[str, str]) -> Path:
    from kgqa.models.encoder import ensure_encoder

    return ensure_encoder(Path(neo4j_env["KGQA_HOME"]))


def _embed_in_db(driver, texts: list[str]) -> np.ndarray:  # type: ignore[no-untyped-def]
    records = driver.execute_query(
        "UNWIND range(0, size($texts) - 1) AS i RETURN i, kgqa.text.embed($texts[i]) AS v ORDER BY i",
        {"texts": texts},
    ).records
    return np.asarray([r["v"] for r in records], dtype=np.float32)


def test_in_db_embeddings_match_sentence_transformers(driver, exported: Path) -> None:  # type: ignore[no-untyped-def]
    from kgqa.models.encoder import source_dir
    from sentence_transformers import SentenceTransformer

    names = metaqa_names(1000)
    assert len(names) == 1000
    texts = names + TRICKY
    in_db = _embed_in_db(driver, texts)
    reference = SentenceTransformer(str(source_dir()), device="cpu").encode(texts, normalize_embeddings=True)
    assert in_db.shape == reference.shape == (len(texts), 384)
    cosines = np.sum(in_db * reference, axis=1)
    name_cosines = cosines[: len(names)]
    print(
        f"kgqa.text.embed vs sentence-transformers on {len(names)} MetaQA names: "
        f"min cosine {name_cosines.min():.7f}, mean {name_cosines.mean():.7f}; "
        f"tricky texts min {cosines[len(names) :].min():.7f}"
    )
    worst = int(np.argmin(cosines))
    assert cosines.min() >= 0.999, f"worst: {texts[worst]!r} cosine {cosines[worst]}"


def test_in_db_matches_python_onnx_encoder(driver, exported: Path) -> None:  # type: ignore[no-untyped-def]
    from kgqa.models.encoder import OnnxEncoder

    texts = ["who directed Kismet", "what movies did Lee Pace star in", "Ærøskøbing"]
    np.testing.assert_allclose(_embed_in_db(driver, texts), OnnxEncoder(exported).embed(texts), atol=1e-4)


def test_null_in_null_out(driver, exported: Path) -> None:  # type: ignore[no-untyped-def]
    assert driver.execute_query("RETURN kgqa.text.embed(null) AS v").records[0]["v"] is None
