"""What the managed local Neo4j runs from, put in place before every start.

The jars come from ``docker/server-assembly`` (Neo4j, GDS, APOC) and ``procedures/`` (our plugin), each built
by Maven once; a stamp records what was installed so that later starts skip Maven entirely. The ONNX sentence
encoder and neo4j.conf are written under the same home; :mod:`kgqa.graph.server` starts and stops the server.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

from kgqa.core import config
from kgqa.core.errors import BadInput, KgqaError

# Neo4j's stock neo4j.conf carries these JVM flags; the bootloader does not add them by itself.
_JVM_FLAGS = [
    "-XX:+UseG1GC",
    "-XX:-OmitStackTraceInFastThrow",
    "-XX:+UnlockExperimentalVMOptions",
    "-XX:+TrustFinalNonStaticFields",
    "-XX:+DisableExplicitGC",
    "-Djdk.nio.maxCachedBufferSize=1024",
    "-Dio.netty.tryReflectionSetAccessible=true",
    "-Djdk.tls.ephemeralDHKeySize=2048",
    "-Djdk.tls.rejectClientInitiatedRenegotiation=true",
    "-XX:FlightRecorderOptions=stackdepth=256",
    "-XX:+UnlockDiagnosticVMOptions",
    "-XX:+DebugNonSafepoints",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens=java.base/java.lang=ALL-UNNAMED",
    "-Dlog4j2.disable.jmx=true",
    "-Dlog4j.layout.jsonTemplate.maxStringLength=32768",
]


def install_server_jars(neo4j_home: Path, say: Callable[[str], None]) -> None:
    """Neo4j, GDS and APOC into ``neo4j_home``'s lib/ and plugins/, assembled by Maven unless its stamp says
    the same versions are there already."""
    stamp = neo4j_home / ".assembly"
    wanted = (
        f"neo4j={config.NEO4J_VERSION} gds={config.GDS_VERSION} apoc={config.APOC_VERSION} "
        f"onnxruntime={config.ONNXRUNTIME_VERSION}"
    )
    if stamp.exists() and stamp.read_text() == wanted:
        return
    pom = server_sources() / "docker" / "server-assembly" / "pom.xml"
    built = pom.parent / "target" / "neo4j-home"
    say("assembling Neo4j, GDS and APOC from Maven (first start only)")
    _maven(["-f", str(pom), "package"], what="the Neo4j server assembly")
    for sub in ("lib", "plugins"):
        target = neo4j_home / sub
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(built / sub, target)
    stamp.write_text(wanted)


def install_plugin(neo4j_home: Path, say: Callable[[str], None]) -> None:
    """Our procedures plugin into ``neo4j_home``'s plugins/, copied only when the built jar differs."""
    jar = build_plugin(say)
    target = neo4j_home / "plugins" / "kgqa-procedures.jar"
    if not target.exists() or target.read_bytes() != jar.read_bytes():
        shutil.copy2(jar, target)


def install_encoder(home: Path, say: Callable[[str], None]) -> None:
    """The ONNX sentence encoder, with which kgqa.text.embed, the linker and SubgraphRAG embed in-DB."""
    from kgqa.models.encoder import encoder_dir, ensure_encoder

    if not (encoder_dir(home) / "model.onnx").exists():
        say("building the sentence encoder as ONNX (first start only)")
    ensure_encoder(home)


def write_conf(neo4j_home: Path, port: int, models_dir: Path) -> None:
    """``neo4j_home``'s neo4j.conf: Bolt on ``port`` of 127.0.0.1 only, and the kgqa plugin's ONNX models
    read from ``models_dir``."""
    conf_dir = neo4j_home / "conf"
    conf_dir.mkdir(parents=True, exist_ok=True)
    for sub in ("data", "logs", "run", "import"):
        (neo4j_home / sub).mkdir(exist_ok=True)
    heap = os.environ.get("KGQA_HEAP", "2g")
    pagecache = os.environ.get("KGQA_PAGECACHE", "1g")
    lines = [
        "# Written by `kgqa server start`; edits are overwritten on the next start.",
        "server.default_listen_address=127.0.0.1",
        f"server.bolt.listen_address=127.0.0.1:{port}",
        "server.bolt.enabled=true",
        "server.http.enabled=false",
        "server.https.enabled=false",
        "dbms.security.auth_enabled=true",
        "dbms.security.procedures.unrestricted=gds.*,apoc.*,kgqa.*",
        "dbms.usage_report.enabled=false",
        f"server.memory.heap.initial_size={heap}",
        f"server.memory.heap.max_size={heap}",
        f"server.memory.pagecache.size={pagecache}",
        "db.tx_log.rotation.retention_policy=1G size",
        "server.directories.import=import",
        # Once the databases have stopped, Bolt waits up to 5 s for its worker pool and 5 s for its
        # connections (Neo4j's defaults): a stop took 10-15 s, 10 of them idle, and the bulk path stops
        # the server for every import. One second each is grace enough for a reply to reach a client.
        "internal.server.bolt.thread_pool_shutdown_wait_time=1s",
        "internal.server.bolt.connection_shutdown_wait_time=1s",
    ]
    lines += [f"server.jvm.additional={flag}" for flag in _JVM_FLAGS]
    lines.append(f"server.jvm.additional=-Dkgqa.models.dir={models_dir}")  # ONNX models of the kgqa plugin
    cache_mb = os.environ.get("KGQA_EMBEDDING_CACHE_MB", "").strip()
    if cache_mb:
        if not cache_mb.isdigit():
            raise BadInput(f"KGQA_EMBEDDING_CACHE_MB must be a whole number of megabytes, got {cache_mb!r}")
        lines.append(f"server.jvm.additional=-Dkgqa.embeddingCache.mb={cache_mb}")
    (conf_dir / "neo4j.conf").write_text("\n".join(lines) + "\n")


def server_sources() -> Path:
    """The folder that holds ``docker/server-assembly`` and ``procedures/``: the checkout kgqa runs from, or
    a mirror in ``<KGQA_HOME>/cache`` of the copy an installed wheel ships, because Maven writes ``target/``
    beside its pom and an installed prefix need not be writable. File times are kept, so the plugin is
    rebuilt only when the sources are newer than its jar."""
    root = config.shipped_source("procedures/pom.xml").parent.parent
    if root == config.repo_root():
        return root
    mirror = config.kgqa_home() / "cache" / f"server-sources-{config.PLUGIN_VERSION}"
    shutil.copytree(root, mirror, dirs_exist_ok=True)
    return mirror


def build_plugin(say=lambda _m: None) -> Path:  # type: ignore[no-untyped-def]
    """Builds procedures/ with Maven when its sources are newer than the jar; returns the jar."""
    project = server_sources() / "procedures"
    jar = project / "target" / f"kgqa-procedures-{config.PLUGIN_VERSION}.jar"
    sources = [project / "pom.xml", *(project / "src" / "main").rglob("*")]
    newest = max((p.stat().st_mtime for p in sources if p.is_file()), default=0.0)
    if not jar.exists() or jar.stat().st_mtime < newest:
        say("building the kgqa procedures plugin with Maven")
        _maven(["-f", str(project / "pom.xml"), "package", "-DskipTests"], what="the kgqa procedures plugin")
    if not jar.exists():
        raise KgqaError(f"Maven finished but {jar} is missing")
    return jar


def find_java() -> str:
    """The java binary (JAVA_HOME first), checked to be version 17 or newer."""
    java_home = os.environ.get("JAVA_HOME")
    candidate = str(Path(java_home) / "bin" / "java") if java_home else shutil.which("java")
    if not candidate or not Path(candidate).exists():
        raise KgqaError(
            "Java 17 or newer is required but `java` was not found (install OpenJDK 17 or set JAVA_HOME)"
        )
    version = _java_version(candidate)
    if version is None or version < 17:
        raise KgqaError(f"Java 17 or newer is required, found version {version or 'unknown'} at {candidate}")
    return candidate


@functools.lru_cache(maxsize=8)
def _java_version(java: str) -> int | None:
    """The major version of ``java`` (asked once per process: a bulk load stops, imports and starts, and
    `java -version` took up to a second each time on a busy machine)."""
    proc = subprocess.run([java, "-version"], capture_output=True, text=True)
    match = re.search(r'version "(\d+)', proc.stderr + proc.stdout)
    return int(match.group(1)) if match else None


def _maven(args: list[str], what: str) -> None:
    mvn = shutil.which("mvn")
    if mvn is None:
        raise KgqaError(f"Maven (`mvn`) is required to build {what}; install Maven 3.8+")
    proc = subprocess.run([mvn, "-q", "-B", *args], capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        errors = [line for line in proc.stdout.splitlines() if "[ERROR]" in line] or proc.stdout.splitlines()
        raise KgqaError(f"Maven failed to build {what}: {errors[0] if errors else proc.stderr.strip()}")
