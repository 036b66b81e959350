"""The database driver and the sentence encoder, as `kgqa load` and `kgqa index` both use them."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from kgqa.loaders.progress import Progress
from neo4j import Driver


@contextmanager
def driver_scope(driver: Driver | None) -> Iterator[Driver]:
    """``driver`` itself, or one opened on the configured server for the block and closed after it."""
    if driver is not None:
        yield driver
        return
    from kgqa.graph.connection import open_driver

    own = open_driver()
    try:
        yield own
    finally:
        own.close()


def model_name() -> str:
    from kgqa.models import encoder

    return encoder.model_name()


def dimensions(model: str | None = None) -> int:
    from kgqa.models import encoder

    return encoder.dimensions(model)


def prepare_encoder(model: str, progress: Progress | None) -> None:
    """Builds the fast encoder when it is not built yet (about 2 minutes once; the ONNX encoder is built by
    `kgqa server start` and on first use)."""
    from kgqa.models import encoder

    if model != encoder.STATIC_MODEL:
        return
    if progress is not None and not encoder.static_encoder_built():
        progress.log(f"kgqa: distilling the fast encoder {model} (once, about 2 minutes on 2 cores)")
    encoder.ensure_static_encoder()
