"""A soak against the managed server: 4, then 8 clients (separate processes, own drivers) ask MetaQA dev
questions for 60 s per method; then one soak during which the server is stopped and started again.

    python -m bench.serve.soak --methods sgrag,simgrag --clients 4,8 --seconds 60 --restart-method simgrag

Prints questions per second, p50 / p95 per answered question, the longest question, and the errors (which
must be zero without a restart). The restart row says when the server went down and came back, how many
questions were answered after it was back, and the error lines the clients read meanwhile. The server that
KGQA_HOME names is restarted: run it on a quiet machine, not beside a test run. Loopback only.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from kgqa.evaluation.soak import SoakReport, run_soak
from kgqa.graph.server import ManagedServer

from bench.common import HEADER, dev_questions


def restart_server() -> None:
    server = ManagedServer()
    server.stop()
    server.start()


def table(reports: list[SoakReport]) -> None:
    print(HEADER)
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for report in reports:
        print("| " + " | ".join(report.row()) + " |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--methods", default="sgrag,simgrag")
    parser.add_argument("--clients", default="4,8")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--kg", default="metaqa")
    parser.add_argument("--questions", type=int, default=600)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--restart-method", default="simgrag", help="'' skips the restart soak")
    parser.add_argument("--restart-after", type=float, default=15.0)
    args = parser.parse_args(argv)
    questions = dev_questions(args.questions, args.seed)
    env = {k: v for k, v in os.environ.items() if k.startswith(("KGQA_", "NEO4J_"))}
    command = " ".join(["python -m bench.serve.soak", *(argv if argv is not None else sys.argv[1:])])
    print(f"`{command}`\n")
    print(
        f"{len(questions)} MetaQA dev questions (a third per hop, seed {args.seed}), round robin; "
        f"KG `{args.kg}`."
    )
    print(f"Machine: {os.cpu_count()} cores; load average before: {os.getloadavg()[0]:.2f}.\n")
    reports = []
    for method in [m for m in args.methods.split(",") if m]:
        for clients in [int(c) for c in args.clients.split(",") if c]:
            report = run_soak(questions, method, clients, args.seconds, kg=args.kg, env=env)
            reports.append(report)
            print(f"  {method} x{clients}: {report.questions_per_s:.1f} q/s", file=sys.stderr, flush=True)
    table(reports)
    for report in reports:
        for line in report.error_lines:
            print(f"\n- {report.method} x{report.clients} error: {line}")
    if args.restart_method:
        began = time.monotonic()
        report = run_soak(
            questions,
            args.restart_method,
            4,
            args.seconds,
            kg=args.kg,
            env=env,
            restart=restart_server,
            restart_after_s=args.restart_after,
        )
        assert report.restart is not None
        down, up = report.restart
        print(f"\nWith the server stopped at {down:.1f} s and answering again at {up:.1f} s (4 clients):\n")
        table([report])
        print(
            f"\nAnswered after it was back: {report.answered_after_restart}; failed after it was back: "
            f"{report.errors_after_restart}; errors that were not one line: {report.multi_line_errors}; "
            f"longest question {report.longest_ms / 1000:.1f} s (wall {time.monotonic() - began:.0f} s)."
        )
        print("\nWhat the clients read while it was down (distinct lines):\n")
        for line in report.error_lines or ["(none: every question in flight was retried by the driver)"]:
            print(f"- {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
