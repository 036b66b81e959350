"""`kgqa serve`'s memory under hostile callers: its resident memory after N ordinary requests, then after N
hostile ones (every string field at and past its limit, a new `llm` name each time, oversized bodies, junk
JSON), against the managed Neo4j and a loaded KG. Prints both and their difference; the server must stay
within a few tens of MB (issue 30 asks 50).

    python -m bench.serve.memory --kg metaqa --requests 1000
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def rss_mb(pid: int) -> float:
    for line in open(f"/proc/{pid}/status", encoding="ascii"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def post(base: str, path: str, body: bytes) -> int:
    request = urllib.request.Request(base + path, body, {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            response.read()
            return int(response.status)
    except urllib.error.HTTPError as exc:
        exc.read()
        return int(exc.code)
    except (urllib.error.URLError, ConnectionError):
        return 0  # the server closed a connection it refused to read: still a refusal


QUESTIONS = ["who directed [Kismet]", "what films did Tom Hanks star in", "when was Heat released"]


def ordinary(kg: str, rng: random.Random) -> bytes:
    question = rng.choice(QUESTIONS)
    body = {"question": question, "kg": kg, "method": "auto", "k": rng.choice([10, 50, 100])}
    return json.dumps(body).encode()


def hostile(kg: str, rng: random.Random, i: int) -> bytes:
    kind = i % 5
    if kind == 0:  # a new answerer key each time: an llm name at its limit
        return json.dumps({"question": QUESTIONS[0], "kg": kg, "llm": f"m{i}".ljust(200, "x")}).encode()
    if kind == 1:  # a 5 MB llm value
        return json.dumps({"question": QUESTIONS[0], "kg": kg, "llm": "x" * 5_000_000}).encode()
    if kind == 2:  # a question past its limit
        return json.dumps({"question": "w" * 1_000_000, "kg": kg}).encode()
    if kind == 3:  # junk bytes
        return bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 60_000)))
    return json.dumps({"question": 7, "kg": ["x"] * 10_000, "k": 10**30}).encode()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kg", default="metaqa")
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=30)
    args = parser.parse_args()
    port = free_port()
    env = {**os.environ, "OPENAI_BASE_URL": f"http://127.0.0.1:{free_port()}/v1"}  # an LLM that is down
    server = subprocess.Popen(
        [sys.executable, "-m", "kgqa.cli", "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                time.sleep(0.2)
        rng = random.Random(args.seed)
        started = rss_mb(server.pid)
        codes: dict[str, dict[int, int]] = {"ordinary": {}, "hostile": {}}
        for _ in range(args.requests):
            code = post(base, "/api/ask", ordinary(args.kg, rng))
            codes["ordinary"][code] = codes["ordinary"].get(code, 0) + 1
        after_ordinary = rss_mb(server.pid)
        for i in range(args.requests):
            code = post(base, "/api/ask", hostile(args.kg, rng, i))
            codes["hostile"][code] = codes["hostile"].get(code, 0) + 1
        after_hostile = rss_mb(server.pid)
    finally:
        server.terminate()
        server.wait(timeout=30)
    print(f"`python -m bench.serve.memory --kg {args.kg} --requests {args.requests} --seed {args.seed}`\n")
    print("| stage | resident MB | status codes |")
    print("|---|---:|---|")
    print(f"| started | {started:.1f} | |")
    print(f"| after {args.requests} ordinary | {after_ordinary:.1f} | {codes['ordinary']} |")
    print(f"| after {args.requests} hostile | {after_hostile:.1f} | {codes['hostile']} |")
    print(f"\nhostile minus ordinary: {after_hostile - after_ordinary:+.1f} MB")
    return 0 if after_hostile - after_ordinary <= 50 and 500 not in codes["hostile"] else 1


if __name__ == "__main__":
    sys.exit(main())
