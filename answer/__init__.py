"""Answering: evidence in, ranked answers out.

``answer(evidence, llm="none")`` is the one entry point: the extractive answerer for ``none`` (offline, no
model), otherwise the LLM answerer against an OpenAI-compatible endpoint, with the method's prompt style.
"""

from __future__ import annotations

from typing import Any

from kgqa.answer.base import NO_EVIDENCE, NO_TOPIC_ENTITY, Answer, no_answer
from kgqa.answer.extractive import answer_extractive
from kgqa.core.types import Evidence

__all__ = [
    "NO_EVIDENCE",
    "NO_TOPIC_ENTITY",
    "Answer",
    "answer",
    "answer_extractive",
    "is_offline",
    "no_answer",
]


def is_offline(llm: str | None) -> bool:
    return llm is None or llm.strip().lower() in ("", "none", "extractive")


def answer(evidence: Evidence, llm: str | None = "none", **llm_options: Any) -> Answer:
    """Answers for ``evidence``: extractive when ``llm`` is none, else through the named LLM.

    ``llm_options`` override :class:`kgqa.answer.llm.LLMConfig` fields (``timeout_s``, ``max_retries``, ...).
    """
    if is_offline(llm):
        return answer_extractive(evidence)
    from kgqa.answer.llm import answer_with_llm

    assert llm is not None
    return answer_with_llm(evidence, llm, **llm_options)
