"""What the bench scripts share, so that no script imports another: riding out a restart of the shared
server, scoring answers, reading a questions_answers output, the soak table, the kgqa CLI run as a child."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from kgqa.core.text import normalize_answer
from kgqa.evaluation.metaqa import read_questions
from neo4j.exceptions import ServiceUnavailable, SessionExpired

T = TypeVar("T")

REPO = Path(__file__).resolve().parent.parent


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


# --------------------------------------------------------------------- answers to our sets (bench/questions/)
def score(answers: list[str], gold: list[str]) -> tuple[float, float]:
    """(Hits@1, Hit) of one question's answers."""
    gold_set = {normalize_answer(g) for g in gold}
    found = [normalize_answer(a) in gold_set for a in answers]
    return float(bool(found) and found[0]), float(any(found))


CONFIDENCE_BINS = (0.0, 0.3, 0.5, 0.7, 0.9, 1.01)
KINDS = ("one-hop", "two-hop", "two-entity")  # the kinds of the FB15k-237 question set


def hits(rows: list[dict[str, Any]], part: str, kind: str | None = None) -> tuple[float, int]:
    """Hits@1 (%) and the number of questions of one part (and kind) of a questions_answers.py output."""
    chosen = [r for r in rows if r["part"] == part and (kind is None or r["kind"] == kind)]
    if not chosen:
        return float("nan"), 0
    return 100 * sum(r["hits1"] for r in chosen) / len(chosen), len(chosen)


# ------------------------------------------------------------------------------------ concurrent clients
HEADER = "| method | clients | s | answered | q/s | p50 ms | p95 ms | longest ms | errors |"


def dev_questions(n: int, seed: int) -> list[str]:
    """n MetaQA dev questions, a third per hop, shuffled (dev only: nothing here is tuned on it)."""
    rng = random.Random(seed)
    picked: list[str] = []
    for hops in (1, 2, 3):
        pool = [q.question for q in read_questions("dev", hops)]
        picked += rng.sample(pool, n // 3)
    rng.shuffle(picked)
    return picked


# ------------------------------------------------------------------------ private servers, the CLI as a child
def kgqa(*args: str, env: dict[str, str]) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "kgqa.cli", *args], capture_output=True, text=True, env={**os.environ, **env}
    )
    if proc.returncode != 0:
        sys.exit(f"kgqa {' '.join(args)} failed: {proc.stderr.strip()[-2000:]}")
    return proc.stdout


def clear_private(env: dict[str, str], keep: str | None = None) -> None:
    """Drops every KG of the bench's private bulk server but ``keep``: neo4j-admin import needs a database
    that holds nothing else (an earlier load of the KG being loaded is replaced offline, far faster than a
    drop)."""
    listing = subprocess.run(
        [sys.executable, "-m", "kgqa.cli", "kgs", "--json"],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
    )
    for row in json.loads(listing.stdout or "[]"):
        if row["name"] == keep:
            continue
        subprocess.run(
            [sys.executable, "-m", "kgqa.cli", "kgs", "--drop", row["name"]],
            capture_output=True,
            env={**os.environ, **env},
        )


def add_sample_options(
    parser: Any,
    *,
    n: int,
    help: str,
    dest: str = "questions",
    alias: str = "--questions",
    hops: int | str = "1,2,3",
) -> None:
    """The options of a seeded MetaQA sample that the scripts share: ``--split``, ``--hops`` (one hop count
    when ``hops`` is a number, a comma list otherwise) and ``--n`` (with the script's older name as alias)."""
    parser.add_argument("--split", default="dev", choices=["dev", "test"])
    if isinstance(hops, int):
        parser.add_argument("--hops", type=int, default=hops, choices=[1, 2, 3])
    else:
        parser.add_argument("--hops", default=hops)
    parser.add_argument("--n", alias, dest=dest, metavar="N", type=int, default=n, help=help)
