"""MetaQA's question files, for the benchmark (``kgqa eval metaqa``): MetaQA is one KG among others, so
nothing below evaluation reads this module; ``kgqa train all --questions`` reads MetaQA's dev split as any
labelled question set (:mod:`kgqa.training.questions`).

Reads ``../shared/data/metaqa`` (or ``$KGQA_SHARED_DATA/metaqa``); never copies it. The test split is for
the final measurement only: :func:`read_questions` refuses it unless the caller says ``allow_test=True``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kgqa.core.config import shared_data_dir
from kgqa.core.errors import BadInput
from kgqa.core.text import bracketed

HOPS = (1, 2, 3)
SPLITS = ("dev", "test")


@dataclass(frozen=True)
class MetaqaQuestion:
    question: str  # as in the file, with the [topic entity] in brackets
    topics: tuple[str, ...]  # the bracketed names (MetaQA has one per question)
    answers: tuple[str, ...]
    qtype: str | None  # from the line-aligned qtype file; None where the split has none
    hops: int
    split: str  # "dev" | "test"
    variant: str  # "vanilla" | "ntm"
    line: int  # 0-based line in the file (the qtype and relation-path files are line-aligned with it)

    @property
    def topic(self) -> str:
        return self.topics[0] if self.topics else ""

    @property
    def key(self) -> str:
        """A stable id: ``<hops>hop-<split>-<line>`` (``-ntm`` for the paraphrased variant)."""
        suffix = "" if self.variant == "vanilla" else f"-{self.variant}"
        return f"{self.hops}hop-{self.split}-{self.line}{suffix}"


def metaqa_dir(root: Path | str | None = None) -> Path:
    """The MetaQA folder: ``root``, else ``<shared data>/metaqa``; an error when it has no KB."""
    path = Path(root) if root is not None else shared_data_dir() / "metaqa"
    if not (path / "kb_dedup.txt").is_file():
        raise BadInput(f"MetaQA data not found at {path} (no kb_dedup.txt there; set KGQA_SHARED_DATA)")
    return path


def question_file(root: Path, split: str, hops: int, variant: str = "vanilla") -> Path:
    return root / f"{hops}-hop" / variant / f"qa_{split}.txt"


def qtype_file(root: Path, split: str, hops: int) -> Path:
    return root / f"{hops}-hop" / f"qa_{split}_qtype.txt"


def read_lines(path: Path) -> list[str]:
    with path.open(encoding="utf-8") as handle:
        return [line.rstrip("\n").rstrip("\r") for line in handle]


def read_questions(
    split: str,
    hops: int,
    variant: str = "vanilla",
    root: Path | str | None = None,
    allow_test: bool = False,
) -> list[MetaqaQuestion]:
    """The questions of one file, blank lines skipped, with their type labels when the split has them."""
    if split not in SPLITS:
        raise ValueError(f"split must be 'dev' or 'test', got {split!r}")
    if split == "test" and not allow_test:
        raise ValueError("the MetaQA test split is for the final measurement only (pass allow_test=True)")
    if hops not in HOPS:
        raise BadInput(f"MetaQA has 1, 2 and 3 hops, not {hops}")
    base = metaqa_dir(root)
    path = question_file(base, split, hops, variant)
    if not path.is_file():
        raise BadInput(f"MetaQA file not found: {path}")
    lines = read_lines(path)
    types_path = qtype_file(base, split, hops)
    qtypes = read_lines(types_path) if types_path.is_file() else None
    if qtypes is not None and len(qtypes) != len(lines):
        raise BadInput(f"{types_path} has {len(qtypes)} lines but {path} has {len(lines)}: they must align")
    out: list[MetaqaQuestion] = []
    for number, line in enumerate(lines):
        if not line.strip():
            continue
        question, tab, answers = line.partition("\t")
        if not tab:
            raise BadInput(f"{path}:{number + 1}: expected 'question<TAB>answer|answer...'")
        out.append(
            MetaqaQuestion(
                question=question.strip(),
                topics=tuple(bracketed(question)),
                answers=tuple(a.strip() for a in answers.split("|") if a.strip()),
                qtype=qtypes[number].strip() if qtypes is not None else None,
                hops=hops,
                split=split,
                variant=variant,
                line=number,
            )
        )
    return out
