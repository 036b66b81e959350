"""What every answerer returns, and the helpers the answerers share."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import asdict, dataclass, field
from typing import Any

from kgqa.retrieve.evidence import Evidence

NO_EVIDENCE = "no evidence found"


@dataclass
class Answer:
    """Ranked answers, best first, each with a score, and how they were reached."""

    answers: list[str]
    scores: list[float]
    explanation: dict[str, Any] = field(default_factory=dict)

    @property
    def top(self) -> str | None:
        return self.answers[0] if self.answers else None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def no_answer(reason: str, **extra: Any) -> Answer:
    return Answer(answers=[], scores=[], explanation={"reason": reason, **extra})


def has_evidence(evidence: Evidence) -> bool:
    return bool(evidence.triplets or any(evidence.paths))


def topic_names(evidence: Evidence) -> list[str]:
    """Topic entity names in linking order, without repeats."""
    return list(dict.fromkeys(e.name for e in evidence.topic_entities))


_ARTICLES = re.compile(r"\b(a|an|the)\b")
_NON_WORD = re.compile(r"[^\w\s]")
_SPACES = re.compile(r"\s+")


def normalize(text: str) -> str:
    """Lowercase, accents and punctuation stripped, articles dropped, whitespace collapsed."""
    decomposed = unicodedata.normalize("NFKD", text)
    plain = "".join(ch for ch in decomposed if not unicodedata.combining(ch)).lower()
    plain = _NON_WORD.sub(" ", plain.replace("_", " "))
    plain = _ARTICLES.sub(" ", plain)
    return _SPACES.sub(" ", plain).strip()
