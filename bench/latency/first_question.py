"""How long does the first question take after `kgqa server start`? Restarts the managed server, then asks
one question per method, each in a fresh `kgqa ask` process as a user would, and prints the wall time of each
(the first one pays the server's cold caches; each also pays its own process start and model loads).

    python -m bench.latency.first_question --methods auto,sgrag,frag,simgrag,gsr,subgraphrag --kg metaqa

Run it on a quiet machine: it restarts the server that `KGQA_HOME` names. A second pass over the same methods
(warm server, fresh processes) is printed beside it, so the ratio says what is cold start.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

QUESTION = "who directed the films that Lee Pace starred in?"


def kgqa(*args: str) -> tuple[float, subprocess.CompletedProcess[str]]:
    began = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "kgqa.cli", *args], capture_output=True, text=True, timeout=900
    )
    return time.perf_counter() - began, proc


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--methods", default="auto,sgrag,frag,simgrag,gsr,subgraphrag")
    parser.add_argument("--kg", default="metaqa")
    parser.add_argument("--question", default=QUESTION)
    args = parser.parse_args(argv)
    methods = [m for m in args.methods.split(",") if m]
    kgqa("server", "stop")
    started, proc = kgqa("server", "start")
    if proc.returncode != 0:
        print(f"kgqa server start failed: {proc.stderr.strip()}", file=sys.stderr)
        return 1
    passes: list[dict[str, tuple[float, float, str]]] = []
    for _ in range(2):
        times: dict[str, tuple[float, float, str]] = {}
        for method in methods:
            seconds, proc = kgqa("ask", args.question, "--kg", args.kg, "--method", method, "--json")
            if proc.returncode != 0:
                times[method] = (seconds, float("nan"), proc.stderr.strip().splitlines()[-1])
                continue
            result = json.loads(proc.stdout)
            answers = ", ".join(result["answers"][:3])
            times[method] = (seconds, float(result["latency_ms"]["total"]) / 1000, answers)
        passes.append(times)
    print(f"`python -m bench.latency.first_question --methods {args.methods} --kg {args.kg}`\n")
    print(f"`kgqa server start` took {started:.1f} s; then, for {args.question!r}:\n")
    print("| method | first ask after start, s (process / answering) | second ask, s | answers |")
    print("|---|---:|---:|---|")
    for method in methods:
        (cold, cold_in, answers), (warm, warm_in, _) = passes[0][method], passes[1][method]
        print(f"| {method} | {cold:.1f} / {cold_in:.2f} | {warm:.1f} / {warm_in:.2f} | {answers} |")
    print(
        "\nThe methods are asked in the order listed: only the first row pays the server's cold caches. "
        "Process time includes starting Python and loading the models a method reads."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
