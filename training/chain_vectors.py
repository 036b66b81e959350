"""Embeds a KG's one- and two-step relation chains, in words, by the KG's sentence encoder, ahead of the
questions (:mod:`kgqa.models.chain_vectors` says why, and how query time reads them)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
from kgqa.core.relation_text import chain_text
from kgqa.graph.kg import kg_embedding_model
from kgqa.graph.walkable import kg_chains
from kgqa.models.chain_vectors import ChainVectors, save_chain_vectors
from kgqa.models.encoder import embed
from neo4j import Driver

STORED_CHAINS = 50_000  # at about 2 ms a chain on 2 cores: under two minutes of training at most
_BATCH = 2_000  # chains embedded between two progress lines


def store_chain_vectors(
    driver: Driver,
    kg: str,
    directory: Path,
    most: int = STORED_CHAINS,
    also: Sequence[str] = (),
    progress: Callable[[str], None] = lambda _m: None,
) -> int:
    """Embeds up to ``most`` of the KG's chains (:func:`~kgqa.graph.walkable.kg_chains`), and the texts
    ``also`` (what FRAG compares with the kind of thing a question asks for), by the encoder the KG's entities
    and relations were embedded with, and stores them in ``directory``; how many chains."""
    model = kg_embedding_model(driver, kg)
    chains = list(dict.fromkeys(chain_text(chain) for chain in kg_chains(driver, kg, most)))
    texts = list(dict.fromkeys([*chains, *also]))
    parts = []
    for start in range(0, len(texts), _BATCH):
        parts.append(embed(texts[start : start + _BATCH], model=model))
        progress(f"embedded {min(start + _BATCH, len(texts))} of {len(texts)} relation chains")
    vectors = np.concatenate(parts) if parts else np.zeros((0, 0), dtype=np.float32)
    save_chain_vectors(directory, ChainVectors(model, texts, vectors))
    return len(chains)
