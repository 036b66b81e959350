"""Where kgqa keeps its state, and which Neo4j it talks to.

Everything is derived from environment variables so that tests, CI and users can point the same code at a
different home or server without flags on every command.
"""

from __future__ import annotations

import os
import sysconfig
from dataclasses import dataclass
from pathlib import Path

from kgqa.core.errors import KgqaError

# The pins. docker/server-assembly/pom.xml, procedures/pom.xml and docker/compose.yaml carry the same numbers;
# tests/test_versions.py checks that they agree.
NEO4J_VERSION = "5.26.19"
GDS_VERSION = "2.13.9"
APOC_VERSION = "5.26.19"
ONNXRUNTIME_VERSION = "1.20.0"
PLUGIN_VERSION = "0.1.0"

DEFAULT_BOLT_PORT = 7687


def repo_root() -> Path:
    """The checkout kgqa runs from when it is installed editable (an installed wheel: its site-packages)."""
    return Path(__file__).resolve().parent.parent


def shipped_source(relative: str) -> Path:
    """A file of the checkout that the wheel also installs under ``<prefix>/share/kgqa`` (the server's
    sources, scripts/install-llm; see setup.py): the checkout's when kgqa runs from one, else the installed
    copy."""
    checkout = repo_root() / relative
    if checkout.exists():
        return checkout
    installed = Path(sysconfig.get_path("data")) / "share" / "kgqa" / relative
    if installed.exists():
        return installed
    raise KgqaError(
        f"{relative} is neither in a checkout ({checkout}) nor installed ({installed}): reinstall kgqa"
    )


def shared_data_dir() -> Path:
    """Benchmark data, read-only: ``$KGQA_SHARED_DATA``, else ``../shared/data`` next to the checkout."""
    env = os.environ.get("KGQA_SHARED_DATA")
    return Path(env).expanduser() if env else repo_root().parent / "shared" / "data"


def kgqa_home() -> Path:
    """Per-user state: the managed server, its password, trained models, caches."""
    env = os.environ.get("KGQA_HOME")
    return Path(env).expanduser() if env else Path.home() / ".kgqa"


def models_dir(home: Path | None = None) -> Path:
    """``<KGQA_HOME>/models``: trained artefacts, read by the managed server too (JVM kgqa.models.dir)."""
    return (home or kgqa_home()) / "models"


@dataclass(frozen=True)
class ExternalServer:
    """A server the user runs themselves, selected with NEO4J_URI / NEO4J_USER / NEO4J_PASSWORD."""

    uri: str
    user: str
    password: str


def external_server() -> ExternalServer | None:
    uri = os.environ.get("NEO4J_URI")
    if not uri:
        return None
    return ExternalServer(
        uri=uri,
        user=os.environ.get("NEO4J_USER", "neo4j"),
        password=os.environ.get("NEO4J_PASSWORD", ""),
    )


def bolt_port() -> int:
    raw = os.environ.get("KGQA_BOLT_PORT", str(DEFAULT_BOLT_PORT))
    try:
        port = int(raw)
    except ValueError:
        raise ValueError(f"KGQA_BOLT_PORT must be a port number, got {raw!r}") from None
    if not 0 < port < 65536:
        raise ValueError(f"KGQA_BOLT_PORT must be between 1 and 65535, got {port}")
    return port
