"""What every answerer returns."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

NO_EVIDENCE = "no evidence found"
NO_TOPIC_ENTITY = "no entity found in the question"


@dataclass
class Answer:
    """Ranked answers, best first, each with a score, and how they were reached."""

    answers: list[str]
    scores: list[float]
    explanation: dict[str, Any] = field(default_factory=dict)  # for people and reports; nothing reads it
    raw_output: str | None = None  # an LLM's reply as it came back (metrics look for answers in it)

    @property
    def top(self) -> str | None:
        return self.answers[0] if self.answers else None

    @property
    def reason(self) -> str | None:
        """Why there is no answer, when there is none."""
        value = self.explanation.get("reason")
        return str(value) if value is not None and not self.answers else None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def no_answer(reason: str, **extra: Any) -> Answer:
    return Answer(answers=[], scores=[], explanation={"reason": reason, **extra})
