"""Issue 30's fuzz tests, seeded and bounded in time: random bytes, sizes, types and headers at every /api
route of `kgqa serve` (zero 5xx, zero tracebacks), and random strings, types and maps in every argument of
every ``kgqa.*`` procedure and function on the real test Neo4j (each call returns or is refused in one clean
line, and the database answers ``RETURN 1`` afterwards).

``KGQA_FUZZ_SECONDS`` (default 2) is the time per route and per procedure; ``KGQA_FUZZ_SEED`` the seed. The
counts are printed (``pytest -s``) so that they can be quoted. Text stays short here: the long-word limit has
its own tests (TextLimitsTest in the plugin), and the shared server may run an older plugin."""

from __future__ import annotations

import json
import os
import random
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from kgqa.service.app import ServiceSettings, create_app

SECONDS = float(os.environ.get("KGQA_FUZZ_SECONDS", "2"))
SEED = int(os.environ.get("KGQA_FUZZ_SEED", "30"))
LOCAL = "http://127.0.0.1:8000"
TOKEN = "fuzz-token"
CONFIG_KEYS = (
    "kg", "k", "topicEntities", "topicSpans", "maxEntities", "secondaryRatio", "beams", "model", "keep",
    "maxPaths", "allChains", "hops", "maxCandidates", "includeSeed", "questionEmbedding", "failOnTruncation",
    "cacheEmbeddings", "nodeCandidates", "relationCandidates", "maxMatches", "maxExpansions", "maxEdges",
    "directed", "injective", "prune", "ties", "entities", "bridge", "encoder", "walkLength", "maxNodes",
)  # fmt: skip
WORDS = (
    "who",
    "directed",
    "Kismet",
    "[Kismet]",
    "Lee Pace",
    "films",
    "?x",
    "UNKNOWN",
    "directed_by",
    "metaqa",
)


# ------------------------------------------------------------------------------------------ random values
def text(rng: random.Random, longest: int = 300) -> str:
    kind = rng.random()
    if kind < 0.3:
        return " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 8)))
    if kind < 0.6:  # any code point, surrogates and controls included
        return "".join(chr(rng.randint(0, 0x10FFFF)) for _ in range(rng.randint(0, longest)))
    if kind < 0.8:
        return "".join(chr(rng.randint(0, 0x7F)) for _ in range(rng.randint(0, longest)))
    return rng.choice(["", " ", "\n", "\x00", "[", "]", "[]", "[[x]]", "{", "'", '"', "\\", "%s", "é" * 50])


def value(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randint(0, 9 if depth < 3 else 6)
    if kind == 0:
        return None
    if kind == 1:
        return rng.choice([True, False])
    if kind == 2:
        return rng.choice([0, -1, 1, 2, 3, 7, 2**31, -(2**31) - 1, 2**63 - 1, -(2**63), 10**6])
    if kind == 3:
        return rng.choice([0.0, -0.5, 0.5, 1e300, -1e300, 1e-300, 3.7])
    if kind in (4, 5, 6):
        return text(rng)
    if kind in (7, 8):
        return [value(rng, depth + 1) for _ in range(rng.randint(0, 5))]
    keys = [
        rng.choice(CONFIG_KEYS) if rng.random() < 0.7 else text(rng, 20) for _ in range(rng.randint(0, 4))
    ]
    return {key: value(rng, depth + 1) for key in keys}


# ---------------------------------------------------------------------------------------------- the HTTP API
ROUTES = [
    ("GET", "/api/health"),
    ("GET", "/api/kgs"),
    ("GET", "/api/methods"),
    ("POST", "/api/ask"),
    ("POST", "/api/verify"),
]


def body_for(rng: random.Random, path: str) -> tuple[bytes | None, Any]:
    """(raw bytes, None) or (None, a JSON value) for one request."""
    kind = rng.random()
    if kind < 0.15:
        return bytes(rng.getrandbits(8) for _ in range(rng.choice([0, 1, 10, 1000, 70_000]))), None
    if kind < 0.3:
        return None, value(rng)
    field = "question" if path == "/api/ask" else "claim"
    body: dict[str, Any] = {field: text(rng) if rng.random() < 0.8 else value(rng)}
    for key in ("kg", "method", "llm", "k"):
        if rng.random() < 0.5:
            body[key] = rng.choice(
                [
                    value(rng),
                    "metaqa",
                    rng.choice(["auto", "sgrag", "simgrag", "gsr", "frag", "subgraphrag", "cosine"]),
                    "none",
                    "x" * rng.choice([1, 200, 201, 5000]),
                ]
            )
    if rng.random() < 0.2:
        body[text(rng, 10)] = value(rng)
    return None, body


@pytest.fixture(scope="module")
def clients(neo4j_env: dict[str, str], metaqa_kg: str) -> Iterator[dict[str, TestClient]]:
    local = create_app()
    remote = create_app(ServiceSettings("0.0.0.0", 8000, TOKEN))
    with (
        TestClient(local, base_url=LOCAL, raise_server_exceptions=False) as a,
        TestClient(remote, base_url=LOCAL, raise_server_exceptions=False) as b,
    ):
        yield {"loopback": a, "beyond loopback": b}


def test_fuzz_every_api_route(clients: dict[str, TestClient]) -> None:
    rng = random.Random(SEED)
    counts: Counter[str] = Counter()
    bad: list[str] = []
    for (method, path), (where, client) in [(r, c) for r in ROUTES for c in clients.items()]:
        deadline = time.monotonic() + SECONDS / len(clients)
        while time.monotonic() < deadline:
            raw, payload = body_for(rng, path)
            headers: dict[str, Any] = {}
            if rng.random() < 0.5:
                headers["Content-Type"] = rng.choice(
                    ["application/json", "text/plain", "", "multipart/form-data"]
                )
            if rng.random() < 0.3:
                headers["Authorization"] = rng.choice(
                    [
                        f"Bearer {TOKEN}",
                        "Bearer",
                        bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 40))),
                    ]
                )
            elif where == "beyond loopback":
                headers["Authorization"] = f"Bearer {TOKEN}"
            if rng.random() < 0.05:
                headers["Host"] = rng.choice(["evil.example", "127.0.0.1:1", "[::1]", ""])
            verb = method if rng.random() < 0.9 else rng.choice(["GET", "POST", "PUT", "DELETE", "PATCH"])
            content = raw if raw is not None else json.dumps(payload).encode()
            response = client.request(verb, path, content=content if verb != "GET" else None, headers=headers)
            counts["requests"] += 1
            counts[f"{response.status_code // 100}xx"] += 1
            failed = response.status_code >= 500 or "Traceback" in response.text
            if failed and not _upstream(response):
                bad.append(f"{where} {verb} {path} -> {response.status_code} {response.text[:200]}")
            elif failed:
                counts["5xx from the LLM endpoint"] += 1
    print(f"\nAPI fuzz (seed {SEED}, {SECONDS:g} s per route): {dict(counts)}")
    assert not bad, bad[:5]
    assert counts["requests"] > 0


def _upstream(response: Any) -> bool:
    """A 502 because the LLM endpoint a random llm name points at is not running: the caller's doing."""
    try:
        return response.status_code == 502 and response.json()["error"].startswith("LLM endpoint")
    except (ValueError, KeyError):
        return False


# ------------------------------------------------------------------------------------------- the procedures
def _callables(driver: Any) -> list[tuple[str, list[str], bool]]:
    """(name, argument names, is a function) of every kgqa.* procedure and function."""
    found: list[tuple[str, list[str], bool]] = []
    for kind, function in (("PROCEDURES", False), ("FUNCTIONS", True)):
        records = driver.execute_query(
            f"SHOW {kind} YIELD name, argumentDescription WHERE name STARTS WITH 'kgqa.' "
            "RETURN name, [a IN argumentDescription | a.name] AS arguments"
        ).records
        found += [(r["name"], list(r["arguments"]), function) for r in records]
    return sorted(found)


BASE = {
    "question": "who directed Kismet",
    "text": "Kismet",
    "kg": "metaqa",
    "topicIds": ["Kismet"],
    "pattern": [["Kismet", "directed_by", "?director"]],
    "triplets": [["Kismet", "directed_by", "William Dieterle"]],
    "topicEntities": ["Kismet"],
    "config": {"kg": "metaqa"},
}


def test_fuzz_every_kgqa_procedure_argument(driver: Any, metaqa_kg: str) -> None:
    from neo4j import Query
    from neo4j.exceptions import ClientError, Neo4jError

    rng = random.Random(SEED)
    counts: Counter[str] = Counter()
    bad: list[str] = []
    callables = _callables(driver)
    assert {"kgqa.link.entities", "kgqa.simgrag.retrieve", "kgqa.gsr.chains"} <= {c[0] for c in callables}
    for name, arguments, function in callables:
        placeholders = ", ".join(f"${a}" for a in arguments)
        statement = f"RETURN {name}({placeholders}) AS v" if function else f"CALL {name}({placeholders})"
        deadline = time.monotonic() + SECONDS
        while time.monotonic() < deadline:
            args = {a: BASE.get(a, None) for a in arguments}
            for argument in arguments:
                if rng.random() < 0.6:
                    args[argument] = value(rng)
                elif argument == "config" and rng.random() < 0.5:
                    args["config"] = {"kg": "metaqa", rng.choice(CONFIG_KEYS): value(rng)}
            args = _sendable(args)
            counts["calls"] += 1
            try:
                # bounded: a random config may ask for a large search; the shared server must not be held
                driver.execute_query(Query(statement, timeout=5), args)
                counts["returned"] += 1
            except ClientError as exc:
                message = exc.message or ""
                if "TransactionTimedOut" in (exc.code or ""):
                    counts["timed out (5 s)"] += 1
                elif (exc.code or "").startswith("Neo.ClientError.Statement."):
                    counts["client error (Cypher's type check)"] += 1  # before any procedure runs
                elif "\n" in message.strip() or "Caused by:" in message or "Exception" in message:
                    bad.append(f"{name}({_short(args)}): {message[:300]}")
                else:
                    counts["client error"] += 1
            except Neo4jError as exc:  # a database (server) error is a bug of ours
                bad.append(f"{name}({_short(args)}): {exc.code}: {(exc.message or '')[:300]}")
        one = driver.execute_query("RETURN 1 AS one").records[0]["one"]
        assert one == 1, f"the database does not answer after fuzzing {name}"
        counts["RETURN 1 after a procedure"] += 1
    print(f"\nprocedure fuzz (seed {SEED}, {SECONDS:g} s each, {len(callables)} callables): {dict(counts)}")
    for line in bad[:20]:
        print("  not clean:", line)
    assert not bad, f"{len(bad)} calls were not returned or refused in one clean line: {bad[:3]}"


def _sendable(data: Any) -> Any:
    """``data`` without lone surrogates, which Bolt cannot carry (the driver refuses them before sending)."""
    if isinstance(data, str):
        return data.encode("utf-8", "replace").decode("utf-8")
    if isinstance(data, list):
        return [_sendable(v) for v in data]
    if isinstance(data, dict):
        return {_sendable(k): _sendable(v) for k, v in data.items()}
    return data


def _short(args: dict[str, Any]) -> str:
    return json.dumps(args, ensure_ascii=True, default=str)[:200]
