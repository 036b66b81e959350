"""What every parser yields, and how parsers report bad input.

A parser turns one input file into a stream of :class:`Fact` (one KG triple between two entity ids)
and :class:`Label` (a display name for an entity id). Lines it cannot read become :class:`Issue` objects
sent to an :class:`IssueSink`; statements it reads but leaves out on purpose (literals, non-English names,
schema statements) are counted per rule in :class:`ParseStats.dropped`.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

from kgqa.core.errors import BadInput


class Fact(NamedTuple):
    head: str
    relation: str
    tail: str


class Label(NamedTuple):
    entity: str
    name: str


Record = Fact | Label

# Names and ids are indexed, and Neo4j's range index refuses a key over about 8 KB: a longer value would sink
# the whole load, so it is a skipped line like any other malformed one.
MAX_VALUE_BYTES = 4000
# C0 controls but tab and line breaks (a Turtle label may hold them), DEL and C1 controls.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
CONTROL_CHARACTER = "control character in a value"
TOO_LONG = f"value longer than {MAX_VALUE_BYTES} bytes"


def value_problem(record: Record) -> str:
    """Why ``record`` cannot be stored ("" when it can), naming the field, e.g. "control character U+0000 in
    the relation"."""
    for name, value in zip(record._fields, record, strict=True):
        if found := _CONTROL.search(value):
            return f"{CONTROL_CHARACTER}: U+{ord(found.group()):04X} in the {name}"
        if len(value) * 4 > MAX_VALUE_BYTES and len(value.encode("utf-8")) > MAX_VALUE_BYTES:
            return f"{TOO_LONG}: the {name} has {len(value.encode('utf-8')):,} bytes"
    return ""


def kept_or_rule(record: Record | str) -> Record | str:
    """A statement's record, or the rule that drops it: the statement's own, or the kind of value problem
    the record has (dropped statements are counted by rule, not listed)."""
    if isinstance(record, str):
        return record
    return value_problem(record).split(":")[0] or record


@dataclass(frozen=True)
class Issue:
    """One malformed input line: where it is and why it was skipped."""

    file: str
    line: int | str  # a line number, or a position such as "WebQTest-12[3]" for JSON inputs
    reason: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.reason}"


@dataclass
class ParseStats:
    facts: int = 0
    labels: int = 0
    dropped: Counter[str] = field(default_factory=Counter)


class IssueSink:
    """Counts malformed lines, keeps the first few, stops at the first one in strict mode.

    A file whose first ``probe`` records are all malformed is not the format the user named: that becomes one
    clear error ("does not look like ...") instead of a flood of per-line warnings.
    """

    probe = 10

    def __init__(
        self, strict: bool = False, on_issue: Callable[[Issue], None] | None = None, keep: int = 1000
    ) -> None:
        self.strict = strict
        self.on_issue = on_issue
        self.keep = keep
        self.count = 0
        self.kept: list[Issue] = []
        self._good_in_file = 0
        self._bad_in_file = 0
        self._format = ""
        self._pending: list[Issue] = []

    def start_file(self, format_description: str) -> None:
        self._good_in_file = 0
        self._bad_in_file = 0
        self._format = format_description
        self._pending: list[Issue] = []

    def good(self) -> None:
        if self._good_in_file == 0 and self._pending:
            # The file has readable lines after all: report the bad lines held back so far.
            pending, self._pending = self._pending, []
            for issue in pending:
                self._report(issue)
        self._good_in_file += 1

    def add(self, issue: Issue) -> None:
        self._bad_in_file += 1
        if self.strict:
            raise BadInput(f"{issue} (--strict stops at the first malformed line)")
        if self._good_in_file == 0 and self._bad_in_file >= self.probe and self._format:
            raise BadInput(
                f"{issue.file} does not look like {self._format}: the first {self.probe} "
                f"lines are unreadable (line {issue.line}: {issue.reason})"
            )
        self.count += 1
        if len(self.kept) < self.keep:
            self.kept.append(issue)
        if self._good_in_file == 0 and self._format:
            self._pending.append(issue)  # held back until the file shows it is the right format
        else:
            self._report(issue)

    def add_counted(self, n: int) -> None:
        """``n`` more malformed lines, counted but neither kept nor reported (a parse by ranges keeps only
        the first ``keep`` issues of each range)."""
        self.count += n

    def _report(self, issue: Issue) -> None:
        if self.on_issue is not None:
            self.on_issue(issue)

    def finish_file(self, path: str) -> None:
        """A file with bad lines and not one good one is the wrong format, however short it is."""
        if self._good_in_file == 0 and self._bad_in_file > 0 and self._format:
            first = next((i for i in reversed(self.kept) if i.file == path), None)
            detail = f" (line {first.line}: {first.reason})" if first else ""
            raise BadInput(f"{path} does not look like {self._format}: no line could be read{detail}")
