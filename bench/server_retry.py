"""Shared by the bench scripts: ride out a restart of the shared test server by another of its users."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TypeVar

from neo4j.exceptions import ServiceUnavailable, SessionExpired

T = TypeVar("T")


def with_retry(call: Callable[[], T], attempts: int = 60, wait_s: float = 10.0) -> T:
    """``call()``, retried while the server is unreachable (not a tuning knob: results are unchanged)."""
    for attempt in range(attempts):
        try:
            return call()
        except (ServiceUnavailable, SessionExpired):
            if attempt == attempts - 1:
                raise
            print(f"  (server unreachable, retrying in {wait_s:.0f}s)", file=sys.stderr, flush=True)
            time.sleep(wait_s)
    raise AssertionError("unreachable")
