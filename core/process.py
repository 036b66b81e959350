"""What both local servers (Neo4j, the LLM) need to be managed from a CLI that exits between calls.

State lives in files, so a later `kgqa` process can find the server an earlier one started: a lock file
serialises start and stop, a pid is only trusted when ``/proc/<pid>/cmdline`` still shows the server (a
stale pid file after a reboot must not make a stranger's process "ours"), and start failures are explained
from the server's own log.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import socket
import time
from collections.abc import Iterator, Sequence
from pathlib import Path


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """An exclusive lock held for the block; other kgqa processes wait for it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def live_pid(pid: int | None, markers: Sequence[bytes]) -> int | None:
    """``pid`` when that process is alive, not a zombie, and its command line holds every marker."""
    if pid is None:
        return None
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    if not all(marker in cmdline for marker in markers) or not alive(pid):
        return None
    return pid


def alive(pid: int) -> bool:
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)  # reap it when it is our own child
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def terminate(pid: int, timeout: float = 15.0) -> None:
    """SIGTERM the process group, then SIGKILL if it lingers."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, sig)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not alive(pid):
                return
            time.sleep(0.1)


def port_in_use(host: str, port: int) -> bool:
    """True when something already listens on ``host:port`` (or holds it, so a server could not bind)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return True
    return False


def log_size(path: Path) -> int:
    """Where a log ends now: a later failure is explained from what was written after it."""
    return path.stat().st_size if path.exists() else 0


def log_lines(path: Path, offset: int = 0) -> list[str]:
    """The non-empty lines written to ``path`` after ``offset``."""
    try:
        with open(path, "rb") as handle:
            handle.seek(offset)
            text = handle.read().decode(errors="replace")
    except OSError:
        return []
    return [line.strip() for line in text.splitlines() if line.strip()]


def last_line(text: str, limit: int = 300) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][:limit] if lines else "no output"
