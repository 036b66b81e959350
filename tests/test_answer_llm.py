"""The LLM answerer against a fake OpenAI-compatible HTTP server run in-process on 127.0.0.1.

A remote LLM API is the one thing faked; the real `openai` client, HTTP and JSON are all exercised.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from kgqa.answer import NO_EVIDENCE, answer
from kgqa.answer.llm import LLMAnswerer, LLMConfig
from kgqa.core.errors import KgqaError
from kgqa.core.types import Evidence, LinkedEntity

from tests.conftest import free_port

TRIPLETS = [
    ("Film A", "starred_actors", "Lee Pace"),
    ("Film A", "directed_by", "Barry Sonnenfeld"),
    ("The Fall", "starred_actors", "Lee Pace"),
    ("The Fall", "directed_by", "Tarsem Singh"),
]


@dataclass
class Reply:
    status: int = 200
    content: str = "ans: Tarsem Singh"
    delay: float = 0.0


@dataclass
class FakeOpenAI:
    """Serves scripted replies to POST /v1/chat/completions, in order; the last one repeats."""

    replies: list[Reply] = field(default_factory=lambda: [Reply()])
    requests: list[dict[str, Any]] = field(default_factory=list)
    times: list[float] = field(default_factory=list)
    url: str = ""

    def next_reply(self) -> Reply:
        return self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]


def _handler(fake: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - silence the default logging
            pass

        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            fake.requests.append({"path": self.path, "body": body, "auth": self.headers.get("Authorization")})
            fake.times.append(time.monotonic())
            reply = fake.next_reply()
            if reply.delay:
                time.sleep(reply.delay)
            if reply.status != 200:
                self._send(
                    reply.status,
                    {"error": {"message": f"scripted failure {reply.status}", "type": "server_error"}},
                )
                return
            self._send(
                200,
                {
                    "id": "chatcmpl-test",
                    "object": "chat.completion",
                    "created": 0,
                    "model": body["model"],
                    "choices": [
                        {
                            "index": 0,
                            "finish_reason": "stop",
                            "message": {"role": "assistant", "content": reply.content},
                        }
                    ],
                    "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
                },
            )

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout tests)
                pass

    return Handler


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    state = FakeOpenAI()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    yield state
    server.shutdown()
    server.server_close()


def evidence(method: str = "sgrag", triplets: list[tuple[str, str, str]] | None = None) -> Evidence:
    return Evidence(
        question="who directed the films that Lee Pace starred in?",
        method=method,
        kg="test",
        topic_entities=[LinkedEntity("Lee Pace", "Lee Pace", 1.0, "given")],
        triplets=list(TRIPLETS if triplets is None else triplets),
    )


def answerer(url: str, sleeps: list[float] | None = None, **overrides: Any) -> LLMAnswerer:
    config = LLMConfig(
        model="test-model", base_url=url, api_key="sk-test", timeout_s=5, max_retries=3, backoff_s=0.01
    )
    for key, value in overrides.items():
        setattr(config, key, value)
    recorded = sleeps if sleeps is not None else []

    def sleep(seconds: float) -> None:
        recorded.append(seconds)
        time.sleep(seconds)

    return LLMAnswerer(config, sleep=sleep)


def test_round_trip_parses_ans_lines_and_maps_to_evidence_names(fake: FakeOpenAI) -> None:
    fake.replies = [
        Reply(content="The films are Film A and The Fall.\nans: tarsem singh\nans: Barry Sonnenfeld.")
    ]
    result = answerer(fake.url).answer(evidence("subgraphrag"))
    assert result.answers == ["Tarsem Singh", "Barry Sonnenfeld"]
    assert result.scores == [1.0, 0.5]
    assert result.explanation["style"] == "subgraphrag" and result.explanation["parse"] == "ans"
    assert result.explanation["attempts"] == 1
    (request,) = fake.requests
    assert request["path"] == "/v1/chat/completions" and request["auth"] == "Bearer sk-test"
    body = request["body"]
    assert body["model"] == "test-model" and body["temperature"] == 0
    assert [m["role"] for m in body["messages"]] == ["system", "user", "assistant", "user"]
    assert "(The Fall, directed_by, Tarsem Singh)" in body["messages"][-1]["content"]


@pytest.mark.parametrize(
    "method, marker",
    [
        ("frag", "Lee Pace <- starred_actors <- The Fall"),
        ("sgrag", "The Fall|directed_by|Tarsem Singh"),
        ("simgrag", "The Fall|directed_by|Tarsem Singh"),
    ],
)
def test_prompt_style_sent_follows_the_method(fake: FakeOpenAI, method: str, marker: str) -> None:
    result = answerer(fake.url).answer(evidence(method))
    assert result.answers == ["Tarsem Singh"]
    assert marker in fake.requests[0]["body"]["messages"][-1]["content"]


def test_topic_entity_is_never_an_answer_and_mentions_are_a_fallback(fake: FakeOpenAI) -> None:
    fake.replies = [Reply(content="ans: Lee Pace\nans: Tarsem Singh")]
    result = answerer(fake.url).answer(evidence())
    assert result.answers == ["Tarsem Singh"]
    assert result.explanation["dropped_topic_entities"] == ["Lee Pace"]
    fake.replies = [Reply(content="Lee Pace starred in The Fall, which Tarsem Singh directed.")]
    result = answerer(fake.url).answer(evidence())
    assert result.answers == ["The Fall", "Tarsem Singh"] and result.explanation["parse"] == "mentions"


def test_empty_evidence_makes_no_call(fake: FakeOpenAI) -> None:
    result = answerer(fake.url).answer(evidence(triplets=[]))
    assert result.answers == []
    assert result.explanation["reason"] == NO_EVIDENCE and result.explanation["llm_called"] is False
    assert fake.requests == []


def test_empty_evidence_needs_no_endpoint_at_all() -> None:
    result = answerer(f"http://127.0.0.1:{free_port()}/v1").answer(evidence(triplets=[]))
    assert result.explanation["reason"] == NO_EVIDENCE


def test_retries_5xx_with_exponential_backoff(fake: FakeOpenAI) -> None:
    fake.replies = [
        Reply(status=500),
        Reply(status=503),
        Reply(status=429),
        Reply(content="ans: Tarsem Singh"),
    ]
    sleeps: list[float] = []
    result = answerer(fake.url, sleeps, backoff_s=0.05).answer(evidence())
    assert result.answers == ["Tarsem Singh"]
    assert result.explanation["attempts"] == 4 and len(fake.requests) == 4
    assert sleeps == [0.05, 0.1, 0.2]
    gaps = [b - a for a, b in zip(fake.times, fake.times[1:], strict=False)]
    assert all(gap >= wanted * 0.9 for gap, wanted in zip(gaps, sleeps, strict=True))


def test_backoff_is_capped() -> None:
    config = LLMConfig(model="m", base_url="http://x", backoff_s=1.0, backoff_max_s=3.0)
    assert [config.backoff(i) for i in range(4)] == [1.0, 2.0, 3.0, 3.0]


def test_gives_up_after_the_configured_retries_with_a_clear_error(fake: FakeOpenAI) -> None:
    fake.replies = [Reply(status=500)]
    sleeps: list[float] = []
    with pytest.raises(KgqaError) as info:
        answerer(fake.url, sleeps, max_retries=2).answer(evidence())
    message = str(info.value)
    assert message == f"LLM endpoint {fake.url} answered HTTP 500: scripted failure 500 (3 attempts)"
    assert len(fake.requests) == 3 and len(sleeps) == 2


def test_client_errors_are_not_retried(fake: FakeOpenAI) -> None:
    fake.replies = [Reply(status=404)]
    with pytest.raises(KgqaError, match=r"HTTP 404: .*is model 'test-model' served there\? \(1 attempt\)"):
        answerer(fake.url).answer(evidence())
    assert len(fake.requests) == 1
    fake.replies = [Reply(status=401)]
    with pytest.raises(KgqaError, match="check OPENAI_API_KEY"):
        answerer(fake.url).answer(evidence())


def test_timeout_is_enforced_and_retried(fake: FakeOpenAI) -> None:
    fake.replies = [Reply(delay=2.0)]
    began = time.monotonic()
    with pytest.raises(KgqaError) as info:
        answerer(fake.url, timeout_s=0.3, max_retries=1).answer(evidence())
    elapsed = time.monotonic() - began
    assert str(info.value) == f"LLM endpoint {fake.url} did not answer within 0.3s (2 attempts)"
    assert len(fake.requests) == 2 and elapsed < 1.9


def test_timeout_then_success(fake: FakeOpenAI) -> None:
    fake.replies = [Reply(delay=1.0), Reply(content="ans: Barry Sonnenfeld")]
    result = answerer(fake.url, timeout_s=0.3).answer(evidence())
    assert result.answers == ["Barry Sonnenfeld"] and result.explanation["attempts"] == 2


def test_endpoint_down_is_a_clear_one_line_error() -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    sleeps: list[float] = []
    with pytest.raises(KgqaError) as info:
        answerer(url, sleeps, max_retries=2).answer(evidence())
    message = str(info.value)
    assert message.startswith(f"LLM endpoint {url} is not reachable: ")
    assert "(3 attempts)" in message and "\n" not in message
    assert "refused" in message.lower()
    assert sleeps == [0.01, 0.02]


def test_config_from_env_and_the_answer_entry_point(
    fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", fake.url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    monkeypatch.setenv("KGQA_LLM_TIMEOUT", "7.5")
    monkeypatch.setenv("KGQA_LLM_RETRIES", "1")
    config = LLMConfig.from_env("my-model")
    got = (config.base_url, config.api_key, config.timeout_s, config.max_retries)
    assert got == (fake.url, "sk-env", 7.5, 1)
    result = answer(evidence(), llm="my-model")
    assert result.answers == ["Tarsem Singh"]
    assert fake.requests[0]["body"]["model"] == "my-model" and fake.requests[0]["auth"] == "Bearer sk-env"
    monkeypatch.setenv("KGQA_LLM_TIMEOUT", "soon")
    with pytest.raises(KgqaError, match="KGQA_LLM_TIMEOUT must be a number"):
        LLMConfig.from_env("m")


def test_cli_prints_the_endpoint_error_on_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI's error path: the answerer's LlmUnavailable becomes `kgqa: error: ...` and exit 6."""
    import click
    from click.testing import CliRunner
    from kgqa.cli.main import _Group

    url = f"http://127.0.0.1:{free_port()}/v1"

    @click.group(cls=_Group)
    def group() -> None:
        pass

    @group.command()
    def ask() -> None:
        answer(evidence(), llm="m", max_retries=0)

    monkeypatch.setenv("OPENAI_BASE_URL", url)
    result = CliRunner().invoke(group, ["ask"])
    assert result.exit_code == 6  # the LLM endpoint unavailable
    assert result.output.startswith(f"kgqa: error: LLM endpoint {url} is not reachable: ")
    assert result.output.count("\n") == 1
