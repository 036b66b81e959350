"""Bulk-path throughput on the synthetic Freebase-shaped KG of ``bench/load/synthetic_kg.py``.

    python -m bench.load.bulk_synthetic [--entities 1000000] [--triples 10000000] [--shape freebase|dbpedia]
        [--embeddings [full|fast]] [--models-from HOME]

The dump (default under /tmp/kgqa-synthetic-<entities>-<triples>/) is generated once and never written
inside the repository. It is loaded with ``kgqa load freebase|dbpedia --bulk`` into a private managed server
(``--home``, default /tmp/kgqa-bench-bulk, port 7702) whose database neo4j-admin overwrites; the server is
stopped at the end unless ``--keep-server`` (the scale latency bench then asks questions of it). Embeddings
are skipped unless ``--embeddings`` (``full``, the default when given bare, or ``fast``). ``--models-from``
copies another kgqa home's models into the private home first, so that its encoders are not built again; the
models of that home's KGs come along but serve only those KGs: the synthetic KG's methods need their own
(``kgqa train all --kg KG`` against the private home).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path

from bench.common import REPO, clear_private, kgqa
from bench.load import synthetic_kg


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


def copy_models(source: Path, target: Path) -> None:
    """Each model folder of ``source`` that ``target`` lacks, copied (not linked: a retrain there must not
    change a measurement here)."""
    for folder in sorted(p for p in source.glob("*/*") if p.is_dir()):
        destination = target / folder.relative_to(source)
        if not destination.exists():
            shutil.copytree(folder, destination)
    for file in source.glob("*/*"):  # the classifiers are files, not folders
        destination = target / file.relative_to(source)
        if file.is_file() and not destination.exists():
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(file, destination)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--entities", type=int, default=1_000_000)
    ap.add_argument("--triples", type=int, default=10_000_000)
    ap.add_argument("--shape", choices=("freebase", "dbpedia"), default="freebase")
    ap.add_argument("--dir", type=Path, help="default /tmp/kgqa-synthetic-<entities>-<triples>")
    ap.add_argument("--kg", default="synthetic")
    ap.add_argument("--home", type=Path, default=Path("/tmp/kgqa-bench-bulk"))
    ap.add_argument("--port", type=int, default=7702)
    ap.add_argument("--embeddings", nargs="?", const="full", choices=("full", "fast"))
    ap.add_argument(
        "--models-from", type=Path, help="a kgqa home whose models/ (encoders) to copy into --home"
    )
    ap.add_argument("--keep-server", action="store_true")
    args = ap.parse_args()
    directory = args.dir or Path(f"/tmp/kgqa-synthetic-{args.entities}-{args.triples}")
    if directory.resolve().is_relative_to(REPO):
        sys.exit("write the synthetic KG outside the repository")
    path = dump(directory, args.shape, args.entities, args.triples)
    env = {"KGQA_HOME": str(args.home), "KGQA_BOLT_PORT": str(args.port), "NEO4J_URI": ""}
    if args.models_from:
        copy_models(args.models_from / "models", args.home / "models")
    kgqa("server", "start", env=env)
    clear_private(env, keep=args.kg)
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
        load_args += ["--embeddings", args.embeddings or "none"]
        summary = json.loads(kgqa(*load_args, env=env))
        wall = time.monotonic() - began
    finally:
        if not args.keep_server:
            kgqa("server", "stop", env=env)
    phases = summary["phases"]
    write_phases = ("parse_and_stage", "sort_and_csv", "dedupe_and_csv", "import")  # sort_and_csv: before
    write = sum(phases.get(p, 0.0) for p in write_phases)
    n = summary["relationships"]
    print(f"bulk load of {n:,} triples, {summary['entities']:,} entities, {summary['relations']} relations")
    for name, seconds in phases.items():
        rate = f"  ({n / seconds:,.0f} triples/s)" if name in write_phases else ""
        print(f"  {name:16} {seconds:8.1f}s{rate}")
    print(
        f"  {'write total':16} {write:8.1f}s  ({n / write:,.0f} triples/s: parse, stage, dedupe, CSV, import)"
    )
    if "embeddings" in phases:  # encoding, formatting and the vector index population
        vectors = phases["embeddings"] + phases.get("indexes", 0.0)
        print(
            f"  {'with vectors':16} {write + vectors:8.1f}s  ({n / (write + vectors):,.0f} triples/s; "
            f"{summary['embedded_entities'] / vectors:,.0f} names/s embedded and indexed)"
        )
    print(f"  {'load total':16} {summary['seconds']:8.1f}s  (wall {wall:.1f}s with start-up)")
    print(f"cpus: {os.cpu_count()}, load average (1 min): {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
