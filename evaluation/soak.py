"""A soak: several clients ask questions at once for a fixed time, each in its own process with its own
driver (as separate programs would), and the figures a service owner needs come out: questions per second,
latency percentiles, errors, and the longest any question took.

Optionally the server is restarted during the soak (``restart``): every question then either answers or
fails with a one-line error (``failure_line``), none takes longer than the timeout, and the clients ask on
by themselves once the server is back. Loopback only: the clients talk to whatever NEO4J_URI / the managed
server the environment names, and every loop is bounded by the soak's end time.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import statistics
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

# What a client sends back for each question: (asked at, seconds since the soak began; took, ms; the error
# line, or None when it answered).
Record = tuple[float, float, str | None]


@dataclass
class SoakReport:
    method: str
    clients: int
    seconds: float
    answered: int
    errors: int
    questions_per_s: float
    p50_ms: float
    p95_ms: float
    longest_ms: float
    error_lines: list[str] = field(default_factory=list)  # distinct errors, as the user reads them
    multi_line_errors: int = 0  # errors that were not one line (must be 0)
    restart: tuple[float, float] | None = None  # (stopped at, back at), seconds since the soak began
    answered_after_restart: int = 0  # answers to questions asked after the server was back
    errors_after_restart: int = 0  # failures of questions asked after the server was back (must be 0)

    def row(self) -> list[str]:
        return [
            self.method,
            str(self.clients),
            f"{self.seconds:.0f}",
            str(self.answered),
            f"{self.questions_per_s:.1f}",
            f"{self.p50_ms:.1f}",
            f"{self.p95_ms:.1f}",
            f"{self.longest_ms:.0f}",
            str(self.errors),
        ]


def _percentile(values: Sequence[float], q: float) -> float:
    if not values:
        return 0.0
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


def _client(
    env: dict[str, str],
    method: str,
    kg: str | None,
    questions: Sequence[str],
    offset: int,
    ready: Any,
    go: Any,
    end_at: Any,
    out: Any,
) -> None:
    """One client: warm up (build the answerer, ask once), wait for the start, then ask until the end time."""
    os.environ.update(env)
    from kgqa.graph.connection import failure_line, open_driver
    from kgqa.qa.answering import QuestionAnswerer

    driver = open_driver()
    try:
        answerer = QuestionAnswerer(driver, method, kg, llm="none")
        answerer.ask(questions[offset % len(questions)])
        ready.release()
        go.wait()
        began = end_at.value - end_at.seconds
        records: list[Record] = []
        i = offset
        while time.time() < end_at.value:
            question = questions[i % len(questions)]
            i += 1
            start = time.time()
            error: str | None = None
            try:
                answerer.ask(question)
            except Exception as exc:  # noqa: BLE001 - every failure is counted; a bug is a line too
                error = failure_line(exc) or f"{type(exc).__name__}: {exc}"
            records.append((start - began, (time.time() - start) * 1000, error))
        out.put(records)
    except Exception as exc:  # noqa: BLE001 - a client that cannot even start is reported, not hung
        ready.release()
        out.put([(0.0, 0.0, f"client failed to start: {exc}")])
    finally:
        driver.close()


class _EndTime:
    """The shared end of the soak (a wall-clock time) and its length, readable by every client."""

    def __init__(self, ctx: Any, seconds: float) -> None:
        self._value = ctx.Value("d", 0.0)
        self.seconds = seconds

    @property
    def value(self) -> float:
        return float(self._value.value)

    def start(self) -> None:
        self._value.value = time.time() + self.seconds


def run_soak(
    questions: Sequence[str],
    method: str,
    clients: int,
    seconds: float,
    kg: str | None = None,
    env: dict[str, str] | None = None,
    restart: Callable[[], None] | None = None,
    restart_after_s: float = 0.0,
    warmup_timeout_s: float = 180.0,
) -> SoakReport:
    """``clients`` processes ask ``questions`` (round robin, each from its own offset) for ``seconds``.

    ``restart`` (e.g. stop and start the managed server) runs in this process ``restart_after_s`` into the
    soak; its start and end are recorded so that the report can say what happened after.
    """
    if clients <= 0 or seconds <= 0 or not questions:
        raise ValueError("a soak needs at least one client, one question and a positive duration")
    ctx = mp.get_context("spawn")  # a fresh interpreter per client: no driver threads forked mid-flight
    ready = ctx.Semaphore(0)
    go = ctx.Event()
    end_at = _EndTime(ctx, seconds)
    out = ctx.Queue()
    child_env = {k: v for k, v in (env or {}).items()}
    step = max(1, len(questions) // clients)
    procs = [
        ctx.Process(
            target=_client,
            args=(child_env, method, kg, list(questions), c * step, ready, go, end_at, out),
            daemon=True,
        )
        for c in range(clients)
    ]
    for proc in procs:
        proc.start()
    deadline = time.monotonic() + warmup_timeout_s
    for _ in procs:
        if not ready.acquire(timeout=max(0.1, deadline - time.monotonic())):
            for proc in procs:
                proc.kill()
            raise TimeoutError(f"the soak's clients did not warm up within {warmup_timeout_s:.0f}s")
    end_at.start()
    began = end_at.value - seconds
    go.set()
    window: list[float] = []
    restarter: threading.Thread | None = None
    if restart is not None:

        def _restart() -> None:
            time.sleep(max(0.0, began + restart_after_s - time.time()))
            window.append(time.time() - began)
            restart()
            window.append(time.time() - began)

        restarter = threading.Thread(target=_restart, daemon=True)
        restarter.start()
    records: list[Record] = []
    # Each client ends its last question after the end time; a question that hangs is bounded by the
    # driver's own timeouts, and a client that never reports is killed here.
    collect_until = time.monotonic() + seconds + 120.0
    for _ in procs:
        try:
            records.extend(out.get(timeout=max(1.0, collect_until - time.monotonic())))
        except Exception:  # noqa: BLE001 - queue.Empty: a client hung past every timeout
            records.append((seconds, (time.monotonic() - collect_until + 120.0) * 1000, "client hung"))
    for proc in procs:
        proc.join(timeout=10)
        if proc.is_alive():
            proc.kill()
    if restarter is not None:
        restarter.join(timeout=300)
    return summarize_records(method, clients, seconds, records, tuple(window) if len(window) == 2 else None)


def summarize_records(
    method: str,
    clients: int,
    seconds: float,
    records: Sequence[Record],
    restart: tuple[float, float] | None,
) -> SoakReport:
    ok = [took for _at, took, error in records if error is None]
    failed = [error for _at, _took, error in records if error is not None]
    took_all = [took for _at, took, _error in records]
    after = [r for r in records if restart is not None and r[0] >= restart[1]]
    return SoakReport(
        method=method,
        clients=clients,
        seconds=seconds,
        answered=len(ok),
        errors=len(failed),
        questions_per_s=len(ok) / seconds,
        p50_ms=_percentile(sorted(ok), 50),
        p95_ms=_percentile(sorted(ok), 95),
        longest_ms=max(took_all, default=0.0),
        error_lines=sorted(set(failed))[:10],
        multi_line_errors=sum(1 for error in failed if "\n" in error.strip()),
        restart=restart,
        answered_after_restart=sum(1 for _at, _took, error in after if error is None),
        errors_after_restart=sum(1 for _at, _took, error in after if error is not None),
    )
