"""Progress bars (rich) with a rate and an ETA; a silent stand-in when there is no terminal."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import (
    BarColumn,
    ProgressColumn,
    SpinnerColumn,
    Task,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.progress import Progress as RichProgress
from rich.text import Text


class _RateColumn(ProgressColumn):
    """Items per second, where the items are the task's ``items`` field (triples, names), not its bytes."""

    def render(self, task: Task) -> Text:
        items = task.fields.get("items", task.completed)
        elapsed = task.finished_time if task.finished else task.elapsed
        if not elapsed or not items:
            return Text("", style="progress.data.speed")
        unit = task.fields.get("unit", "")
        return Text(f"{items:,.0f} {unit} · {items / elapsed:,.0f}/s", style="progress.data.speed")


class Step:
    """One bar. ``update(completed=..., items=...)`` moves it; safe to call often."""

    def __init__(self, progress: RichProgress | None, task_id: int | None) -> None:
        self._progress = progress
        self._task = task_id
        self._last = 0.0

    def update(self, completed: float | None = None, items: int | None = None, force: bool = False) -> None:
        if self._progress is None or self._task is None:
            return
        now = time.monotonic()
        if not force and now - self._last < 0.1:
            return
        self._last = now
        fields = {} if items is None else {"items": items}
        self._progress.update(self._task, completed=completed, **fields)  # type: ignore[arg-type]


class Progress:
    """Shared by the load steps. Disabled (a no-op) unless stderr is a terminal or ``enabled`` is forced."""

    def __init__(self, enabled: bool | None = None, console: Console | None = None) -> None:
        self.console = console or Console(stderr=True)
        self.enabled = self.console.is_terminal if enabled is None else enabled
        self._rich: RichProgress | None = None

    def __enter__(self) -> Progress:
        if self.enabled:
            self._rich = RichProgress(
                SpinnerColumn(),
                TextColumn("{task.description:<28}"),
                BarColumn(bar_width=28),
                TaskProgressColumn(),
                _RateColumn(),
                TimeElapsedColumn(),
                TextColumn("eta"),
                TimeRemainingColumn(),
                console=self.console,
                transient=False,
            )
            self._rich.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._rich is not None:
            self._rich.__exit__(None, None, None)
            self._rich = None

    @contextmanager
    def step(self, description: str, total: float | None = None, unit: str = "") -> Iterator[Step]:
        if self._rich is None:
            yield Step(None, None)
            return
        task_id = self._rich.add_task(description, total=total, unit=unit, items=0)
        step = Step(self._rich, task_id)
        try:
            yield step
        finally:
            task = next((t for t in self._rich.tasks if t.id == task_id), None)
            if task is not None and task.total is not None:
                self._rich.update(task_id, completed=task.total)
            self._rich.stop_task(task_id)

    def log(self, message: str) -> None:
        if self._rich is not None:
            self._rich.console.print(message, markup=False, highlight=False)
        else:
            self.console.print(message, markup=False, highlight=False)
