"""Where the time of a vector write goes, on a KG that already has embeddings: the same N vectors read back
and written again through the loader's own template (``load/set_embeddings``, JSON path), against the same
rows written as a plain unindexed float[] property and against matching and parsing them only. Each write
mode runs twice, in turns; the probe property is removed at the end.

It rewrites the KG's own vectors with their own values, so answers do not change; run it on a test or bench
home, not on one that serves users. Whether Neo4j's vector index re-inserts a vector set to an equal value is
not known here, so the indexed row is a lower bound of the cost of indexing new vectors.

    KGQA_HOME=~/.kgqa-test KGQA_BOLT_PORT=7697 python -m bench.embedding.write_probe --kg metaqa --n 20000
"""

from __future__ import annotations

import argparse
import json
import time

from kgqa.graph.connection import open_driver
from kgqa.graph.cypher import render

SET_VECTOR = "CALL db.create.setNodeVectorProperty(n, 'embedding', apoc.convert.fromJsonList(row.vec))"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kg", default="metaqa")
    parser.add_argument("--n", type=int, default=20000)
    parser.add_argument("--batch", type=int, default=2000, help="rows per query, as the loader writes them")
    args = parser.parse_args()
    with open_driver() as driver:
        records = driver.execute_query(render("bench/embedded_entities"), kg=args.kg, n=args.n).records
        rows = [{"id": r["id"], "vec": json.dumps([float(x) for x in r["vec"]])} for r in records]
        indexed = render("load/set_embeddings", label="Entity", json=True)
        assert SET_VECTOR in indexed, "the loader's template changed: update this probe"
        modes = {
            "match + JSON parse only": indexed.replace(
                SET_VECTOR, "WITH n, apoc.convert.fromJsonList(row.vec) AS v RETURN count(v) AS parsed"
            ),
            "plain float[] property": indexed.replace(
                SET_VECTOR, "SET n.embedding_probe = apoc.convert.fromJsonList(row.vec)"
            ),
            "vector property, indexed": indexed,
        }
        print(f"{len(rows)} rows of KG {args.kg}, {args.batch} per query")
        print("| write | round | s | rows/s |\n|---|---:|---:|---:|")
        for round_ in (1, 2):
            for name, query in modes.items():
                began = time.perf_counter()
                for start in range(0, len(rows), args.batch):
                    driver.execute_query(query, kg=args.kg, rows=rows[start : start + args.batch])
                elapsed = time.perf_counter() - began
                print(f"| {name} | {round_} | {elapsed:.1f} | {len(rows) / elapsed:,.0f} |")
        driver.execute_query(render("bench/remove_embedding_probe"), kg=args.kg)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
