"""Bulk-path throughput on the synthetic Freebase-shaped KG of ``bench/synthetic_kg.py``.

    python bench/load_bulk_synthetic.py [--entities 1000000] [--triples 10000000] [--shape freebase|dbpedia]
        [--embeddings]

The dump (default under /tmp/kgqa-synthetic-<entities>-<triples>/) is generated once and never written
inside the repository. It is loaded with ``kgqa load freebase|dbpedia --bulk`` into a private managed server
(``--home``, default /tmp/kgqa-bench-bulk, port 7702) whose database neo4j-admin overwrites; the server is
stopped at the end unless ``--keep-server`` (the scale latency bench then asks questions of it). Embeddings
are skipped unless ``--embeddings``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import synthetic_kg  # the bench folder is on sys.path when run as a script
from load_metaqa import clear_private


def dump(directory: Path, shape: str, entities: int, triples: int) -> Path:
    """The synthetic dump of that size and shape, generated when missing."""
    path = directory / f"{shape}.nt"
    if not path.exists():
        began = time.monotonic()
        synthetic_kg.main(
            [f"--entities={entities}", f"--triples={triples}", f"--out={directory}", f"--format={shape}"]
        )
        print(f"generated {path} ({path.stat().st_size / 1e6:,.0f} MB) in {time.monotonic() - began:.1f}s")
    return path


def kgqa(*args: str, env: dict[str, str]) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "kgqa.cli", *args], capture_output=True, text=True, env={**os.environ, **env}
    )
    if proc.returncode != 0:
        sys.exit(f"kgqa {' '.join(args)} failed: {proc.stderr.strip()[-2000:]}")
    return proc.stdout


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--entities", type=int, default=1_000_000)
    ap.add_argument("--triples", type=int, default=10_000_000)
    ap.add_argument("--shape", choices=("freebase", "dbpedia"), default="freebase")
    ap.add_argument("--dir", type=Path, help="default /tmp/kgqa-synthetic-<entities>-<triples>")
    ap.add_argument("--kg", default="synthetic")
    ap.add_argument("--home", type=Path, default=Path("/tmp/kgqa-bench-bulk"))
    ap.add_argument("--port", type=int, default=7702)
    ap.add_argument("--embeddings", action="store_true")
    ap.add_argument("--keep-server", action="store_true")
    args = ap.parse_args()
    directory = args.dir or Path(f"/tmp/kgqa-synthetic-{args.entities}-{args.triples}")
    if directory.resolve().is_relative_to(Path(__file__).resolve().parent.parent):
        sys.exit("write the synthetic KG outside the repository")
    path = dump(directory, args.shape, args.entities, args.triples)
    env = {"KGQA_HOME": str(args.home), "KGQA_BOLT_PORT": str(args.port), "NEO4J_URI": ""}
    kgqa("server", "start", env=env)
    clear_private(env)
    try:
        began = time.monotonic()
        load_args = [
            "load",
            args.shape,
            "--path",
            str(path),
            "--kg",
            args.kg,
            "--bulk",
            "--force",
            "--json",
        ]
        if not args.embeddings:
            load_args.append("--no-embeddings")
        summary = json.loads(kgqa(*load_args, env=env))
        wall = time.monotonic() - began
    finally:
        if not args.keep_server:
            kgqa("server", "stop", env=env)
    phases = summary["phases"]
    write = sum(phases.get(p, 0.0) for p in ("parse_and_stage", "sort_and_csv", "import"))
    n = summary["relationships"]
    print(f"bulk load of {n:,} triples, {summary['entities']:,} entities, {summary['relations']} relations")
    for name, seconds in phases.items():
        rate = (
            f"  ({n / seconds:,.0f} triples/s)"
            if name in ("parse_and_stage", "sort_and_csv", "import")
            else ""
        )
        print(f"  {name:16} {seconds:8.1f}s{rate}")
    print(
        f"  {'write total':16} {write:8.1f}s  ({n / write:,.0f} triples/s: parse, stage, sort, CSV, import)"
    )
    print(f"  {'load total':16} {summary['seconds']:8.1f}s  (wall {wall:.1f}s with start-up)")
    print(f"cpus: {os.cpu_count()}, load average (1 min): {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
