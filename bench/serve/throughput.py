"""Throughput of `kgqa serve` with concurrent HTTP clients, beside the same clients in-process (the soak of
bench/serve/soak.py), measured in one run on the same questions.

    python -m bench.serve.throughput --methods sgrag,simgrag --clients 4 --seconds 60

Starts `kgqa serve` on a free loopback port against the server KGQA_HOME / NEO4J_URI names, lets each HTTP
client (a thread: the client side only waits on sockets) ask MetaQA dev questions round robin for the given
time, and prints questions per second, p50 / p95 and errors, for each `--serve-workers` count. The
in-process row runs the same number of clients as separate processes calling the question-answering layer
directly, so the ratio is what HTTP and the serving processes cost.

    python -m bench.serve.throughput --methods sgrag,simgrag --clients 4 --seconds 60 --serve-workers 1,2
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

from kgqa.evaluation.soak import SoakReport, run_soak, summarize_records

from bench.common import HEADER, dev_questions


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_serve(workers: int) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "kgqa.cli", "serve", "--port", str(port), "--workers", str(workers)],
        stderr=subprocess.DEVNULL,
    )
    for _ in range(300):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return proc, f"http://127.0.0.1:{port}"
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise SystemExit("kgqa serve did not start")


def ask(base: str, question: str, method: str, kg: str) -> str | None:
    body = json.dumps({"question": question, "method": method, "kg": kg}).encode()
    request = urllib.request.Request(
        base + "/api/ask", data=body, headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            response.read()
            return None
    except urllib.error.HTTPError as failed:
        return f"HTTP {failed.code}: {failed.read()[:200]!r}"
    except OSError as failed:
        return f"{type(failed).__name__}: {failed}"


def http_soak(
    base: str, questions: list[str], method: str, kg: str, clients: int, seconds: float, label: str
) -> SoakReport:
    for question in questions[: 4 * clients]:  # warm: each worker builds its answerer on its first question
        ask(base, question, method, kg)
    records: list[tuple[float, float, str | None]] = []
    lock = threading.Lock()
    began = time.time()
    end = began + seconds

    def client(offset: int) -> None:
        mine = []
        i = offset
        while time.time() < end:
            start = time.time()
            error = ask(base, questions[i % len(questions)], method, kg)
            mine.append((start - began, (time.time() - start) * 1000, error))
            i += 1
        with lock:
            records.extend(mine)

    step = max(1, len(questions) // clients)
    threads = [threading.Thread(target=client, args=(c * step,)) for c in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return summarize_records(label, clients, seconds, records, None)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--methods", default="sgrag,simgrag")
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--kg", default="metaqa")
    parser.add_argument("--questions", type=int, default=600)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--serve-workers", default="1", help="comma-separated: one HTTP row per count")
    args = parser.parse_args(argv)
    questions = dev_questions(args.questions, args.seed)
    env = {k: v for k, v in os.environ.items() if k.startswith(("KGQA_", "NEO4J_"))}
    print(f"`python -m bench.serve.throughput {' '.join(argv if argv is not None else sys.argv[1:])}`\n")
    print(
        f"{len(questions)} MetaQA dev questions (a third per hop, seed {args.seed}); "
        f"{os.cpu_count()} cores.\n"
    )
    rows: list[SoakReport] = []
    ratios: list[str] = []
    for method in [m for m in args.methods.split(",") if m]:
        in_process = run_soak(questions, method, args.clients, args.seconds, kg=args.kg, env=env)
        in_process.method = f"{method} in-process"
        rows.append(in_process)
        for workers in [int(w) for w in args.serve_workers.split(",") if w]:
            proc, base = start_serve(workers)
            try:
                label = f"{method} over HTTP, {workers} worker{'s' if workers > 1 else ''}"
                over_http = http_soak(base, questions, method, args.kg, args.clients, args.seconds, label)
            finally:
                proc.terminate()
                proc.wait(timeout=30)
            rows.append(over_http)
            ratio = over_http.questions_per_s / max(in_process.questions_per_s, 1e-9)
            ratios.append(f"{label}: {ratio:.2f}x the in-process questions per second.")
            ratios += [f"- error: {line}" for line in over_http.error_lines]
            print(f"  {label}: {ratio:.2f}x in-process", file=sys.stderr, flush=True)
    print(HEADER)
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        print("| " + " | ".join(row.row()) + " |")
    print()
    for line in ratios:
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
