"""The LLM answerer (``--llm NAME``): any OpenAI-compatible endpoint, prompted in the method's style.

Configuration comes from the environment so the same code talks to a hosted API or to ``kgqa llm serve``:

- ``OPENAI_BASE_URL`` (default: the running ``kgqa llm serve``, else ``http://127.0.0.1:8765/v1``)
- ``OPENAI_API_KEY`` (default: a placeholder; local servers ignore it)
- ``KGQA_LLM_TIMEOUT`` seconds per request (60), ``KGQA_LLM_RETRIES`` (3), ``KGQA_LLM_BACKOFF`` first
  back-off in seconds (0.5, doubled each retry, capped at 8), ``KGQA_LLM_MAX_TOKENS`` (512).

Timeouts, connection failures, HTTP 408/409/429 and 5xx are retried with exponential back-off; anything else
fails at once. Every failure surfaces as a one-line :class:`KgqaError` naming the endpoint.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from kgqa.answer.base import NO_EVIDENCE, Answer, no_answer
from kgqa.answer.prompts import (
    Message,
    Style,
    build_messages,
    map_to_entities,
    mentioned_entities,
    parse_answers,
    style_for,
)
from kgqa.core.errors import BadInput, LlmUnavailable
from kgqa.core.types import Evidence

if TYPE_CHECKING:
    from openai import OpenAI

PLACEHOLDER_KEY = "sk-no-key-needed"
RETRY_STATUS = {408, 409, 429}


def _env_float(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        return float(raw)
    except ValueError:
        raise BadInput(f"{name} must be a number, got {raw!r}") from None


def default_base_url() -> str:
    env = os.environ.get("OPENAI_BASE_URL")
    if env:
        return env
    from kgqa.answer.local_llm import DEFAULT_PORT, LocalLLMServer

    status = LocalLLMServer().status(probe=False)
    return status.url if status.running else f"http://127.0.0.1:{DEFAULT_PORT}/v1"


@dataclass
class LLMConfig:
    model: str
    base_url: str
    api_key: str = PLACEHOLDER_KEY
    timeout_s: float = 60.0
    max_retries: int = 3
    backoff_s: float = 0.5
    backoff_max_s: float = 8.0
    temperature: float = 0.0
    max_tokens: int = 512
    max_items: int | None = None  # triplets (or paths) put in the prompt; None = all the evidence
    style: Style | None = None  # None = by the evidence's method
    extra: dict[str, Any] = field(default_factory=dict)  # passed through to chat.completions.create

    @classmethod
    def from_env(cls, model: str, **overrides: Any) -> LLMConfig:
        config = cls(
            model=model,
            base_url=default_base_url(),
            api_key=os.environ.get("OPENAI_API_KEY") or PLACEHOLDER_KEY,
            timeout_s=_env_float("KGQA_LLM_TIMEOUT", 60.0),
            max_retries=int(_env_float("KGQA_LLM_RETRIES", 3)),
            backoff_s=_env_float("KGQA_LLM_BACKOFF", 0.5),
            max_tokens=int(_env_float("KGQA_LLM_MAX_TOKENS", 512)),
        )
        return replace(config, **overrides)

    def backoff(self, retry: int) -> float:
        """Seconds to wait before retry number ``retry`` (0-based): base, 2x base, 4x base, ... capped."""
        return float(min(self.backoff_max_s, self.backoff_s * (2**retry)))


@dataclass
class Completion:
    text: str
    attempts: int
    latency_ms: float
    usage: dict[str, Any]


class LLMAnswerer:
    """Answers from evidence through one chat completion; never called on empty evidence."""

    def __init__(self, config: LLMConfig, sleep: Callable[[float], None] = time.sleep) -> None:
        self.config = config
        self._sleep = sleep
        self._client: OpenAI | None = None

    @property
    def client(self) -> OpenAI:
        if self._client is None:
            from openai import OpenAI

            self._client = OpenAI(
                base_url=self.config.base_url,
                api_key=self.config.api_key,
                timeout=self.config.timeout_s,
                max_retries=0,
            )
        return self._client

    def answer(self, evidence: Evidence) -> Answer:
        style = self.config.style or style_for(evidence.method)
        base = {
            "answerer": "llm",
            "model": self.config.model,
            "endpoint": self.config.base_url,
            "style": style,
        }
        if evidence.is_empty:
            return no_answer(NO_EVIDENCE, **base, llm_called=False)
        messages = build_messages(evidence, style, self.config.max_items)
        completion = self.complete(messages)
        raw = parse_answers(completion.text)
        topics = set(evidence.topic_names())
        if raw:
            answers, unmatched = map_to_entities(raw, evidence)
            parse = "ans"
        else:
            answers, unmatched = mentioned_entities(completion.text, evidence, topics), []
            parse = "mentions" if answers else "nothing"
        dropped = [a for a in answers if a in topics]
        answers = [a for a in answers if a not in topics]
        return Answer(
            answers=answers,
            scores=[1.0 / (1 + rank) for rank in range(len(answers))],
            explanation={
                **base,
                "llm_called": True,
                "parse": parse,
                "raw_answers": raw,
                "unmatched": unmatched,
                "dropped_topic_entities": dropped,
                "attempts": completion.attempts,
                "latency_ms": completion.latency_ms,
                "usage": completion.usage,
                "prompt_chars": sum(len(m["content"]) for m in messages),
            },
            raw_output=completion.text,
        )

    def complete(self, messages: list[Message]) -> Completion:
        """One chat completion, retried with exponential back-off on transient failures."""
        import openai

        cfg = self.config
        began = time.perf_counter()
        attempt = 0
        while True:
            attempt += 1
            try:
                response = self.client.chat.completions.create(
                    model=cfg.model,
                    messages=messages,  # type: ignore[arg-type]
                    temperature=cfg.temperature,
                    max_tokens=cfg.max_tokens,
                    **cfg.extra,
                )
                break
            except (openai.APIConnectionError, openai.APIStatusError) as exc:
                if attempt > cfg.max_retries or not _retryable(exc):
                    raise LlmUnavailable(self._describe(exc, attempt)) from exc
                self._sleep(cfg.backoff(attempt - 1))
        choices = getattr(response, "choices", None) or []
        if not choices:
            raise LlmUnavailable(f"LLM endpoint {cfg.base_url} returned no choices for model {cfg.model!r}")
        text = choices[0].message.content or ""
        usage = response.usage.model_dump() if getattr(response, "usage", None) is not None else {}
        return Completion(text, attempt, (time.perf_counter() - began) * 1000, usage)

    def _describe(self, exc: Exception, attempts: int) -> str:
        import openai

        url = self.config.base_url
        tries = f"{attempts} attempt{'s' if attempts != 1 else ''}"
        if isinstance(exc, openai.APITimeoutError):
            return f"LLM endpoint {url} did not answer within {self.config.timeout_s:g}s ({tries})"
        if isinstance(exc, openai.APIConnectionError):
            cause = exc.__cause__ or exc
            reason = _one_line(str(cause) or type(cause).__name__)
            hint = (
                ""
                if os.environ.get("OPENAI_BASE_URL")
                else ("; start one with `kgqa llm serve` or set OPENAI_BASE_URL")
            )
            return f"LLM endpoint {url} is not reachable: {reason} ({tries}){hint}"
        assert isinstance(exc, openai.APIStatusError)
        hint = ""
        if exc.status_code in (401, 403):
            hint = "; check OPENAI_API_KEY"
        elif exc.status_code == 404:
            hint = f"; is model {self.config.model!r} served there?"
        reason = _one_line(_message(exc))
        return f"LLM endpoint {url} answered HTTP {exc.status_code}: {reason}{hint} ({tries})"


def _retryable(exc: Exception) -> bool:
    import openai

    if isinstance(exc, openai.APIConnectionError):  # includes APITimeoutError
        return True
    status = getattr(exc, "status_code", 0)
    return status in RETRY_STATUS or status >= 500


def _message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
        if isinstance(inner, str):
            return inner
    return str(getattr(exc, "message", "") or exc)


def _one_line(text: str, limit: int = 300) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def answer_with_llm(evidence: Evidence, model: str, **options: Any) -> Answer:
    """Answers from the model ``model`` at the configured endpoint; ``options`` override LLMConfig fields."""
    return LLMAnswerer(LLMConfig.from_env(model, **options)).answer(evidence)
