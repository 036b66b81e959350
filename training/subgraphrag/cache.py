"""Where the SubgraphRAG trainer keeps what it fetched or computed once (a KG's embeddings and triples,
question embeddings, feature sets): ``KGQA_HOME/cache/subgraphrag/<kg>/``, files named by a hash of what
shaped them."""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from kgqa.core.config import kgqa_home


def cache_dir(kg: str) -> Path:
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", kg)
    return kgqa_home() / "cache" / "subgraphrag" / safe


def atomic_save_npz(path: Path, **arrays: Any) -> None:
    """Writes through a temporary sibling, so a killed run leaves the old cache file or the new one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name, suffix=".tmp.npz", dir=path.parent)
    os.close(fd)
    try:
        np.savez(tmp, **arrays)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def cache_key(payload: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()[:20]
