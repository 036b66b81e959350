"""Bulk-path throughput on a synthetic million-triple N-Triples file (DBpedia-shaped, written to /tmp).

    python bench/load_bulk_synthetic.py [--triples 1000000] [--entities 100000] [--embeddings]

The file (default /tmp/kgqa-synthetic-1m.nt) has ``--triples`` distinct entity-to-entity facts over 40
relations plus one ``rdfs:label@en`` per entity, and is never written inside the repository. It is loaded with
``kgqa load dbpedia --bulk`` into a private managed server (``--home``, default /tmp/kgqa-bench-bulk, port
7702) whose database neo4j-admin overwrites; the server is stopped at the end. Embeddings are skipped unless
``--embeddings`` (they run at the encoder's speed, about 700 names/s on 2 cores, whatever the write path).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

from load_metaqa import clear_private  # the bench folder is on sys.path when run as a script

DBR = "http://dbpedia.org/resource/"
DBO = "http://dbpedia.org/ontology/"
LABEL = "http://www.w3.org/2000/01/rdf-schema#label"


def generate(path: Path, triples: int, entities: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    relations = [f"{DBO}syntheticRelation{i}" for i in range(40)]
    seen: set[tuple[int, int, int]] = set()
    with open(path, "w", encoding="utf-8") as out:
        for e in range(entities):
            out.write(f'<{DBR}Entity_{e}> <{LABEL}> "Synthetic entity {e}"@en .\n')
        while len(seen) < triples:
            fact = (rng.randrange(entities), rng.randrange(len(relations)), rng.randrange(entities))
            if fact in seen:
                continue
            seen.add(fact)
            h, r, t = fact
            out.write(f"<{DBR}Entity_{h}> <{relations[r]}> <{DBR}Entity_{t}> .\n")


def kgqa(*args: str, env: dict[str, str]) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "kgqa.cli", *args], capture_output=True, text=True, env={**os.environ, **env}
    )
    if proc.returncode != 0:
        sys.exit(f"kgqa {' '.join(args)} failed: {proc.stderr.strip()[-2000:]}")
    return proc.stdout


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--triples", type=int, default=1_000_000)
    ap.add_argument("--entities", type=int, default=100_000)
    ap.add_argument("--file", type=Path, default=Path("/tmp/kgqa-synthetic-1m.nt"))
    ap.add_argument("--home", type=Path, default=Path("/tmp/kgqa-bench-bulk"))
    ap.add_argument("--port", type=int, default=7702)
    ap.add_argument("--embeddings", action="store_true")
    args = ap.parse_args()
    repo = Path(__file__).resolve().parent.parent
    if args.file.resolve().is_relative_to(repo):
        sys.exit("write the synthetic file outside the repository")
    if not args.file.exists():
        began = time.monotonic()
        generate(args.file, args.triples, args.entities)
        print(
            f"generated {args.file} ({args.file.stat().st_size / 1e6:.0f} MB) "
            f"in {time.monotonic() - began:.1f}s"
        )
    env = {"KGQA_HOME": str(args.home), "KGQA_BOLT_PORT": str(args.port), "NEO4J_URI": ""}
    kgqa("server", "start", env=env)
    clear_private(env)
    try:
        began = time.monotonic()
        load_args = [
            "load",
            "dbpedia",
            "--path",
            str(args.file),
            "--kg",
            "synthetic",
            "--bulk",
            "--force",
            "--json",
        ]
        if not args.embeddings:
            load_args.append("--no-embeddings")
        summary = json.loads(kgqa(*load_args, env=env))
        wall = time.monotonic() - began
    finally:
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
