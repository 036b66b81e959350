"""The managed local Neo4j: assembled from Maven Central, started with Neo4j's own bootloader.

Layout under ``$KGQA_HOME``::

    neo4j/                 NEO4J_HOME: lib/ plugins/ conf/ data/ logs/ run/
    neo4j-password         the generated password of user ``neo4j`` (mode 0600)
    server.lock            serialises concurrent start/stop calls
    bulk-import.json       present only while a bulk import has the database offline (see offline_import)

The files it runs from (jars, plugin, encoder, neo4j.conf) are put in place by
:mod:`kgqa.graph.server_install`.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from kgqa.core import config
from kgqa.core.errors import KgqaError
from kgqa.core.process import file_lock, last_line, live_pid, log_lines, log_size, port_in_use
from kgqa.core.secret_files import read_or_make_secret
from kgqa.graph.server_install import (
    find_java,
    install_encoder,
    install_plugin,
    install_server_jars,
    write_conf,
)

ENTRY_POINT = "org.neo4j.server.startup.Neo4jCommand"
ADMIN_ENTRY_POINT = "org.neo4j.server.startup.Neo4jAdminCommand"
START_TIMEOUT_S = float(os.environ.get("KGQA_START_TIMEOUT", "180"))
DATABASE = "neo4j"  # Neo4j Community's one user database: the one a bulk import replaces
# The phases of a bulk import that a kill can interrupt, as recorded in the marker file.
IMPORTING = "importing"  # the earlier store is set aside; a partial new one may be on disk
IMPORTED = "imported"  # neo4j-admin finished; the new store is whole


@dataclass
class ServerStatus:
    running: bool
    uri: str
    pid: int | None
    home: str
    log: str
    managed: bool = True
    versions: dict[str, str | None] = field(default_factory=dict)

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


class ManagedServer:
    """One local Neo4j under a kgqa home. All methods are safe to call repeatedly."""

    def __init__(self, home: Path | None = None, port: int | None = None) -> None:
        self.home = home or config.kgqa_home()
        self.port = port or config.bolt_port()
        self.neo4j_home = self.home / "neo4j"
        self.password_file = self.home / "neo4j-password"
        self.log_file = self.neo4j_home / "logs" / "neo4j.log"
        self.pid_file = self.neo4j_home / "run" / "neo4j.pid"
        self.import_marker = self.home / "bulk-import.json"
        self.aside_dir = self.neo4j_home / "data" / "kgqa-before-import"

    @property
    def uri(self) -> str:
        return f"bolt://127.0.0.1:{self.port}"

    # ----------------------------------------------------------------- public API
    def start(self, on_progress: callable | None = None) -> ServerStatus:  # type: ignore[valid-type]
        say = on_progress or (lambda _msg: None)
        java = find_java()
        with file_lock(self.home / "server.lock"):
            if self.pid() is not None:
                self._wait_for_bolt(time.monotonic() + START_TIMEOUT_S)
                return self.status()
            self._recover_interrupted_import(say)
            self._check_port_free()
            say("checking the Neo4j, GDS and APOC jars")
            install_server_jars(self.neo4j_home, say)
            install_plugin(self.neo4j_home, say)
            install_encoder(self.home, say)
            write_conf(self.neo4j_home, self.port, self.home / "models")
            self._ensure_password(java)
            say(f"starting Neo4j {config.NEO4J_VERSION} on {self.uri}")
            log_offset = log_size(self.log_file)
            proc = self._neo4j(java, "start", capture=True)
            if proc.returncode != 0:
                raise KgqaError(self._start_failure(proc.stdout + proc.stderr, log_offset))
            try:
                self._wait_for_bolt(time.monotonic() + START_TIMEOUT_S, log_offset)
            except KgqaError:
                self._neo4j(java, "stop", capture=True)
                raise
            return self.status()

    def stop(self) -> bool:
        """Stops the server; returns False when it was not running."""
        with file_lock(self.home / "server.lock"):
            if self.pid() is None:
                return False
            proc = self._neo4j(find_java(), "stop", capture=True)
            if proc.returncode != 0 and self.pid() is not None:
                raise KgqaError(
                    f"Neo4j did not stop: {last_line(proc.stdout + proc.stderr)} (log: {self.log_file})"
                )
            return True

    @contextlib.contextmanager
    def offline_import(self, kg: str) -> Iterator[Callable[[], None]]:
        """The server stopped for ``neo4j-admin database import``, and started again after it.

        neo4j-admin replaces the database, so a failed or killed import would otherwise leave neither the
        earlier KG nor the new one. The earlier store is moved aside first (a rename: instant at any size)
        and a marker records the import; the caller calls the yielded function once the import is whole.
        On an error the earlier store comes back. When the process is killed instead, the next
        ``start()`` (``kgqa server start``, or any load) finds the marker and finishes the job: the earlier
        store comes back, or, when the import had finished, the new one is kept.
        """
        self.stop()
        with file_lock(self.home / "server.lock"):
            self._recover_interrupted_import(lambda _msg: None)
            self._write_marker(kg, IMPORTING)
            self.aside_dir.mkdir(parents=True, exist_ok=True)
            for store, aside in self._stores():
                if store.exists():
                    store.rename(aside)
        try:
            yield lambda: self._write_marker(kg, IMPORTED)
        except BaseException:
            with file_lock(self.home / "server.lock"):
                self._finish_import(keep_new=False)
            self.start()
            raise
        with file_lock(self.home / "server.lock"):
            self._finish_import(keep_new=self._read_marker().get("phase") == IMPORTED)
        self.start()

    def status(self, query_versions: bool = True) -> ServerStatus:
        pid = self.pid()
        versions: dict[str, str | None] = {
            "neo4j": config.NEO4J_VERSION,
            "gds": config.GDS_VERSION,
            "apoc": config.APOC_VERSION,
            "kgqa": config.PLUGIN_VERSION,
        }
        if pid is not None and query_versions and self.password_file.exists():
            with contextlib.suppress(Exception):
                versions = _query_versions(self.uri, "neo4j", self.password())
        return ServerStatus(
            running=pid is not None,
            uri=self.uri,
            pid=pid,
            home=str(self.neo4j_home),
            log=str(self.log_file),
            versions=versions,
        )

    def password(self) -> str:
        try:
            return self.password_file.read_text().strip()
        except FileNotFoundError:
            raise KgqaError(
                f"no password at {self.password_file}: the managed server was never started here "
                "(run `kgqa server start`, or set NEO4J_URI/NEO4J_USER/NEO4J_PASSWORD)"
            ) from None

    def pid(self) -> int | None:
        """The pid of a live Neo4j started from this home, or None (a stale pid file means not running)."""
        try:
            pid = int(self.pid_file.read_text().strip())
        except (FileNotFoundError, ValueError):
            return None
        return live_pid(pid, [str(self.neo4j_home).encode()])

    # ----------------------------------------------------------------- bulk import recovery
    def _stores(self) -> list[tuple[Path, Path]]:
        """(the database's directory, where it waits during an import) for its store and its tx logs."""
        data = self.neo4j_home / "data"
        return [(data / part / DATABASE, self.aside_dir / part) for part in ("databases", "transactions")]

    def _write_marker(self, kg: str, phase: str) -> None:
        record = {
            "kg": kg,
            "pid": os.getpid(),
            "phase": phase,
            "started": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        partial = self.import_marker.with_suffix(".tmp")
        partial.write_text(json.dumps(record))
        partial.replace(self.import_marker)  # atomic: a kill leaves the old marker or the new one

    def _read_marker(self) -> dict[str, object]:
        try:
            record = json.loads(self.import_marker.read_text())
        except FileNotFoundError:
            return {}
        except (ValueError, OSError):
            return {"phase": IMPORTING}  # unreadable: the safe reading is that the import did not finish
        return record if isinstance(record, dict) else {"phase": IMPORTING}

    def _finish_import(self, keep_new: bool) -> None:
        """Keeps the new store (dropping the earlier one) or puts the earlier one back; clears the marker."""
        for store, aside in self._stores():
            if not aside.exists():
                continue
            if keep_new and store.exists():
                shutil.rmtree(aside)
            else:
                if store.exists():
                    shutil.rmtree(store)
                store.parent.mkdir(parents=True, exist_ok=True)
                aside.rename(store)
        with contextlib.suppress(OSError):
            self.aside_dir.rmdir()
        self.import_marker.unlink(missing_ok=True)

    def _recover_interrupted_import(self, say: Callable[[str], None]) -> None:
        """After a killed bulk import: put the database back as it was (or keep a finished import), or
        refuse while that import is still running. Called with the server lock held."""
        record = self._read_marker()
        if not record:
            return
        kg = record.get("kg", "?")
        pid = record.get("pid")
        owner = live_pid(pid if isinstance(pid, int) else None, [b"kgqa"])
        if owner is not None and owner != os.getpid():
            raise KgqaError(
                f"a bulk import of KG '{kg}' (pid {owner}) has the database offline; wait for it to "
                f"finish, or stop it and run `kgqa server start` (marker: {self.import_marker})"
            )
        if self._admin_running():
            raise KgqaError(
                f"neo4j-admin is still importing into {self.neo4j_home}; wait for it to exit, then run "
                "`kgqa server start`"
            )
        keep_new = record.get("phase") == IMPORTED
        self._finish_import(keep_new)
        if keep_new:
            say(
                f"a bulk load of KG '{kg}' stopped after its import: the imported graph is kept; run the "
                "same `kgqa load … --bulk` again to finish it"
            )
        else:
            say(
                f"a bulk load of KG '{kg}' was interrupted during its import: the database is back as it "
                "was before it"
            )

    def _admin_running(self) -> bool:
        """Whether a neo4j-admin process of this home is alive (it outlives a killed `kgqa load`)."""
        wanted = [ADMIN_ENTRY_POINT.encode(), str(self.neo4j_home).encode()]
        for proc in Path("/proc").iterdir():
            if proc.name.isdigit() and live_pid(int(proc.name), wanted) is not None:
                return True
        return False

    # ----------------------------------------------------------------- the initial password
    def _ensure_password(self, java: str) -> None:
        if self.password_file.exists() and (self.neo4j_home / "data" / "dbms").exists():
            return
        password = read_or_make_secret(self.password_file)
        if not (self.neo4j_home / "data" / "dbms").exists():
            # Never on the command line, where any user of the machine reads it (ps, /proc/*/cmdline):
            # neo4j-admin (picocli) reads "@file" arguments from the file, here a private one of ours. The
            # "--" ends its options, so that a password of the user's (or of an older kgqa) that starts with
            # "-" is still the password, not an option.
            argfile = self.home / f".initial-password-{os.getpid()}"
            fd = os.open(argfile, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            try:
                with os.fdopen(fd, "w") as fh:
                    fh.write("--\n" + argfile_quoted(password) + "\n")
                proc = self._admin(java, ["dbms", "set-initial-password", f"@{argfile}"])
            finally:
                argfile.unlink(missing_ok=True)
            if proc.returncode != 0:
                raise KgqaError(
                    f"could not set the Neo4j password from {self.password_file} "
                    f"({last_line(proc.stdout + proc.stderr)}); delete that file and run `kgqa server start` "
                    "again to make a new one"
                )

    # ----------------------------------------------------------------- process helpers
    def _env(self) -> dict[str, str]:
        env = dict(os.environ)
        env["NEO4J_HOME"] = str(self.neo4j_home)
        env["NEO4J_CONF"] = str(self.neo4j_home / "conf")
        env.pop("JAVA_OPTS", None)
        return env

    def _neo4j(self, java: str, command: str, capture: bool = False) -> subprocess.CompletedProcess[str]:
        cmd = [java, "-cp", str(self.neo4j_home / "lib" / "*"), ENTRY_POINT, command]
        return subprocess.run(
            cmd, env=self._env(), capture_output=capture, text=True, stdin=subprocess.DEVNULL
        )

    def _admin(self, java: str, args: list[str]) -> subprocess.CompletedProcess[str]:
        cmd = [java, "-cp", str(self.neo4j_home / "lib" / "*"), ADMIN_ENTRY_POINT, *args]
        return subprocess.run(cmd, env=self._env(), capture_output=True, text=True, stdin=subprocess.DEVNULL)

    def admin(self, args: list[str]) -> subprocess.CompletedProcess[str]:
        """Runs ``neo4j-admin`` against this home (used by the bulk loader)."""
        return self._admin(find_java(), args)

    def _check_port_free(self) -> None:
        if port_in_use("127.0.0.1", self.port):
            raise KgqaError(
                f"port {self.port} on 127.0.0.1 is in use by another process; stop it or choose another "
                f"port with KGQA_BOLT_PORT (log: {self.log_file})"
            )

    def _wait_for_bolt(self, deadline: float, log_offset: int = 0) -> None:
        from neo4j import GraphDatabase
        from neo4j.exceptions import AuthError, ServiceUnavailable

        password = self.password()
        while True:
            if self.pid() is None:
                raise KgqaError(self._start_failure("the Neo4j process exited during start", log_offset))
            try:
                with GraphDatabase.driver(self.uri, auth=("neo4j", password), connection_timeout=2) as driver:
                    driver.verify_connectivity()
                    return
            except AuthError:
                raise KgqaError(
                    f"Neo4j at {self.uri} rejected the stored password in {self.password_file}; "
                    f"the data in {self.neo4j_home / 'data'} belongs to another password"
                ) from None
            except (ServiceUnavailable, OSError):
                pass
            if time.monotonic() > deadline:
                raise KgqaError(
                    f"Neo4j did not answer on {self.uri} within {START_TIMEOUT_S:.0f}s (log: {self.log_file})"
                )
            time.sleep(0.5)

    def _start_failure(self, output: str, log_offset: int) -> str:
        reason = ""
        for line in log_lines(self.log_file, log_offset):
            if " ERROR " in line or line.startswith("Caused by"):
                reason = line
                if line.startswith("Caused by"):
                    break
        reason = re.sub(r"^\S+ \S+ ERROR ", "", reason) or last_line(output)
        return f"Neo4j failed to start: {reason} (log: {self.log_file})"


def argfile_quoted(value: str) -> str:
    """``value`` as one argument of a picocli "@file": double-quoted, with its backslashes and quotes escaped
    (a password may hold spaces, '#' or quotes, which the file's syntax would otherwise split or drop)."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _query_versions(uri: str, user: str, password: str) -> dict[str, str | None]:
    from kgqa.graph.versions import server_versions
    from neo4j import GraphDatabase

    with GraphDatabase.driver(uri, auth=(user, password), connection_timeout=3) as driver:
        return server_versions(driver)
