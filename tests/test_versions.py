"""The pinned versions agree across the Python config, the Maven builds and the Docker files."""

from __future__ import annotations

import re
from pathlib import Path

from kgqa.core import config

REPO = Path(__file__).resolve().parent.parent


def _property(pom: Path, name: str) -> str:
    match = re.search(rf"<{re.escape(name)}>([^<]+)</{re.escape(name)}>", pom.read_text())
    assert match, f"{name} not in {pom}"
    return match.group(1)


def test_server_assembly_pins_match_config() -> None:
    pom = REPO / "docker" / "server-assembly" / "pom.xml"
    assert _property(pom, "neo4j.version") == config.NEO4J_VERSION
    assert _property(pom, "gds.version") == config.GDS_VERSION
    assert _property(pom, "apoc.version") == config.APOC_VERSION
    assert _property(pom, "onnxruntime.version") == config.ONNXRUNTIME_VERSION


def test_plugin_pins_match_config() -> None:
    pom = (REPO / "procedures" / "pom.xml").read_text()
    assert f"<neo4j.version>{config.NEO4J_VERSION}</neo4j.version>" in pom
    assert re.search(
        rf"<artifactId>kgqa-procedures</artifactId>\s*<version>{config.PLUGIN_VERSION}</version>", pom
    )


def test_docker_image_matches_config() -> None:
    dockerfile = (REPO / "docker" / "Dockerfile").read_text()
    assert f"ARG NEO4J_VERSION={config.NEO4J_VERSION}" in dockerfile
    compose = (REPO / "docker" / "compose.yaml").read_text()
    assert f"Neo4j {config.NEO4J_VERSION}" in compose and f"GDS {config.GDS_VERSION}" in compose


def test_driver_decodes_with_its_rust_codec() -> None:
    from importlib.metadata import version

    import neo4j._codec.packstream.v1 as packstream

    # the extension is versioned as the driver plus one segment; a mismatch is silently not picked up
    assert version("neo4j-rust-ext").startswith(version("neo4j") + ".")
    assert packstream._rust_unpack is not None, "neo4j-rust-ext is installed but the driver does not use it"
