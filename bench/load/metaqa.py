"""Loads all of MetaQA through both write paths and prints load seconds, triples/s and embedding seconds.

    python -m bench.load.metaqa [--path ../shared/data/metaqa] [--paths online,bulk] [--out OUT.json]

- online: `kgqa load metaqa --force` into the configured server (KGQA_HOME/KGQA_BOLT_PORT or NEO4J_URI), as
  KG ``metaqa_bench`` (dropped first, so the load starts from nothing; dropped again unless --keep).
- bulk: `kgqa load metaqa --bulk` into a private managed server (``--bulk-home``, default
  /tmp/kgqa-bench-bulk, port 7702), which neo4j-admin may overwrite; the server is stopped at the end.

Each load runs as the CLI does, in a subprocess, so the times include start-up and the model load.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.common import REPO, clear_private

DEFAULT_DATA = REPO.parent / "shared" / "data" / "metaqa"
KG = "metaqa_bench"


def kgqa(*args: str, env: dict[str, str] | None = None) -> tuple[dict[str, Any], float]:
    began = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "kgqa.cli", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
    )
    wall = time.monotonic() - began
    if proc.returncode != 0:
        sys.exit(f"kgqa {' '.join(args)} failed: {proc.stderr.strip()[-2000:]}")
    return (json.loads(proc.stdout) if proc.stdout.strip().startswith("{") else {}), wall


def run_online(data: Path, keep: bool) -> dict[str, Any]:
    subprocess.run([sys.executable, "-m", "kgqa.cli", "kgs", "--drop", KG], capture_output=True)
    summary, wall = kgqa("load", "metaqa", "--path", str(data), "--kg", KG, "--force", "--json")
    if not keep:
        subprocess.run([sys.executable, "-m", "kgqa.cli", "kgs", "--drop", KG], capture_output=True)
    return row("online", summary, wall, write_phases=("parse_and_write", "names"))


def run_bulk(data: Path, home: Path, port: int) -> dict[str, Any]:
    env = {"KGQA_HOME": str(home), "KGQA_BOLT_PORT": str(port), "NEO4J_URI": ""}
    kgqa("server", "start", env=env)
    clear_private(env)
    try:
        summary, wall = kgqa(
            "load", "metaqa", "--path", str(data), "--kg", KG, "--bulk", "--force", "--json", env=env
        )
    finally:
        kgqa("server", "stop", env=env)
    return row(
        "bulk", summary, wall, write_phases=("parse_and_stage", "sort_and_csv", "dedupe_and_csv", "import")
    )


def row(path: str, summary: dict[str, Any], wall: float, write_phases: tuple[str, ...]) -> dict[str, Any]:
    phases = summary["phases"]
    write = sum(phases.get(p, 0.0) for p in write_phases)
    return {
        "path": path,
        "entities": summary["entities"],
        "relationships": summary["relationships"],
        "load_s": round(summary["seconds"], 1),
        "wall_s": round(wall, 1),
        "write_s": round(write, 1),
        "triples_per_s": round(summary["relationships"] / write) if write else None,
        "embedding_s": round(phases.get("embeddings", 0.0), 1),
        "indexes_s": round(phases.get("indexes", 0.0), 1),
        "phases": {k: round(v, 1) for k, v in phases.items()},
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--path", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--paths", default="online,bulk", help="comma-separated: online, bulk")
    ap.add_argument("--bulk-home", type=Path, default=Path("/tmp/kgqa-bench-bulk"))
    ap.add_argument("--bulk-port", type=int, default=7702)
    ap.add_argument("--keep", action="store_true", help="keep the online KG metaqa_bench afterwards")
    ap.add_argument(
        "--out", "--json", dest="json", metavar="FILE", type=Path, help="also write the rows as JSON here"
    )
    args = ap.parse_args()
    if not args.path.exists():
        sys.exit(f"MetaQA not found at {args.path} (give --path)")
    rows = []
    for which in args.paths.split(","):
        if which == "online":
            rows.append(run_online(args.path, args.keep))
        elif which == "bulk":
            rows.append(run_bulk(args.path, args.bulk_home, args.bulk_port))
        else:
            sys.exit(f"unknown path {which!r}")
    header = (
        f"{'path':8} {'entities':>9} {'triples':>9} {'load s':>7} {'wall s':>7} {'write s':>8} "
        f"{'triples/s':>10} {'embed s':>8} {'index s':>8}"
    )
    print(header)
    for r in rows:
        print(
            f"{r['path']:8} {r['entities']:>9,} {r['relationships']:>9,} {r['load_s']:>7} {r['wall_s']:>7} "
            f"{r['write_s']:>8} {r['triples_per_s'] or '-':>10,} {r['embedding_s']:>8} {r['indexes_s']:>8}"
        )
    for r in rows:
        print(f"{r['path']} phases: " + ", ".join(f"{k} {v}s" for k, v in r["phases"].items()))
    print(f"cpus: {os.cpu_count()}, load average (1 min): {os.getloadavg()[0]:.1f}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
