"""The chain vectors a KG's training stores for FRAG: written whole or not at all, read back keyed by their
encoder, and a KG without them is trained again by ``--if-missing``."""

from __future__ import annotations

import numpy as np
import pytest
from kgqa.models.chain_vectors import (
    TEXTS_FILE,
    VECTORS_FILE,
    ChainVectors,
    chain_vectors_stamp,
    load_chain_vectors,
    save_chain_vectors,
)


def test_stored_vectors_read_back_as_written(tmp_path) -> None:  # type: ignore[no-untyped-def]
    vectors = np.eye(3, 4, dtype=np.float32)
    assert load_chain_vectors(tmp_path) is None and chain_vectors_stamp(tmp_path) < 0
    save_chain_vectors(tmp_path, ChainVectors("some-encoder", ["a", "b , c", "d"], vectors))
    stored = load_chain_vectors(tmp_path)
    assert stored is not None and stored.model == "some-encoder" and stored.texts == ["a", "b , c", "d"]
    assert np.array_equal(stored.vectors, vectors) and chain_vectors_stamp(tmp_path) > 0
    save_chain_vectors(tmp_path, ChainVectors(None, [], np.zeros((0, 4), dtype=np.float32)))
    again = load_chain_vectors(tmp_path)
    assert again is not None and again.model is None and again.texts == []
    assert sorted(p.name for p in tmp_path.iterdir()) == [TEXTS_FILE, VECTORS_FILE]  # no temporary left


def test_vectors_that_do_not_match_their_texts_are_not_read(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match="2 texts for 3 vectors"):
        save_chain_vectors(tmp_path, ChainVectors(None, ["a", "b"], np.zeros((3, 4), dtype=np.float32)))
    assert load_chain_vectors(tmp_path) is None  # nothing was written
    save_chain_vectors(tmp_path, ChainVectors(None, ["a", "b"], np.zeros((2, 4), dtype=np.float32)))
    np.save(tmp_path / VECTORS_FILE, np.zeros((5, 4), dtype=np.float32))  # another training's vectors
    assert load_chain_vectors(tmp_path) is None


def test_if_missing_trains_frag_again_when_its_chain_vectors_are_missing(
    tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kgqa.learn.train_all import part_up_to_date
    from kgqa.models import kg_models
    from kgqa.models.kg_models import KgProfile, PartReport

    monkeypatch.setenv("KGQA_HOME", str(tmp_path))
    folder = kg_models.part_dir("k", "frag")
    folder.mkdir(parents=True)
    (folder / "ranker.json").write_text("{}")
    profile = KgProfile("k", "f", "now", [], 0, 10, {"frag": PartReport(1.0, 10)})
    assert not part_up_to_date("k", "frag", profile)  # trained before FRAG stored its chain vectors
    save_chain_vectors(folder, ChainVectors(None, ["a"], np.ones((1, 4), dtype=np.float32)))
    assert part_up_to_date("k", "frag", profile)
