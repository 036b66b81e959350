"""SubgraphRAG on MetaQA: trained in-DB scorer(s) vs the cosine baseline, per hop, at K = 50, 100, 200.

``--split dev`` uses the *holdout* part of MetaQA dev (never trained on, not used for early stopping; the
split is re-derived from the model's meta.json seed). ``--split test`` reads the test files; run it once.
Candidates use the model's hops (2), widened to 3 for 3-hop questions. Also reports in-DB retrieval latency
(p50/p95, sequential) and throughput with concurrent clients.

Needs the KG ``metaqa`` loaded with embeddings, the ``kgqa.subgraphrag.*`` procedures and trained models
(``kgqa train subgraphrag --name default``; ``--name noseed --no-include-seed`` for the DDE variant).
For the test server: ``KGQA_HOME=~/.kgqa-test KGQA_BOLT_PORT=7697``.

    python bench/subgraphrag_metaqa.py --split dev --models default,noseed --out /tmp/sgr-dev.json
    python bench/subgraphrag_metaqa.py --split test --limit 1000 --models default,noseed
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
from kgqa.core.metaqa import HOPS, read_questions
from kgqa.graph.connection import open_driver
from kgqa.training.subgraphrag import TrainConfig, candidate_hops, dev_splits, metaqa_root, model_dir
from kgqa.training.subgraphrag_data import load_kg_index, load_local_graph, question_ids
from subgraphrag_common import (
    COSINE,
    Tally,
    embed_questions,
    gold_for,
    markdown_table,
    question_metrics,
    run_cosine,
    run_model,
    throughput,
)
from tqdm import tqdm


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--split", choices=["dev", "test"], default="dev")
    ap.add_argument("--hops", default="1,2,3")
    ap.add_argument("--limit", type=int, default=None, help="questions per hop (random sample, fixed seed)")
    ap.add_argument("--kg", default="metaqa")
    ap.add_argument("--models", default="default", help="comma-separated installed model names")
    ap.add_argument("--no-cosine", action="store_true")
    ap.add_argument(
        "--select",
        default="top",
        help="comma-separated: top (the k best triples), walks (whole walks of the question's hop count"
        " first; K takes prefixes of the walk order)",
    )
    ap.add_argument("--ks", default="50,100,200")
    ap.add_argument("--max-candidates", type=int, default=20000)
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--throughput-questions", type=int, default=200)
    ap.add_argument(
        "--text-only-questions",
        type=int,
        default=50,
        help="per hop: latency of the call with nothing but the question text",
    )
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--data", type=Path, default=None, help="MetaQA folder (default ../shared/data/metaqa)")
    ap.add_argument("--out", type=Path, default=None, help="write the summary as JSON")
    args = ap.parse_args()

    ks = sorted(int(k) for k in args.ks.split(","))
    hops_wanted = [int(h) for h in args.hops.split(",")]
    models = [m for m in args.models.split(",") if m]
    selections = [s for s in args.select.split(",") if s]
    if unknown := set(selections) - {"top", "walks"}:
        ap.error(f"--select: unknown {sorted(unknown)}; choose from top, walks")
    metas = {m: json.loads((model_dir(m) / "meta.json").read_text()) for m in models}
    split_seed = metas[models[0]]["seed"] if models else args.seed
    config = TrainConfig(seed=split_seed, data_dir=args.data)
    if args.split == "dev":
        _train, _val, questions = dev_splits(config)
    else:
        root = metaqa_root(config)  # test: reported here, never trained or tuned on
        questions = [q for hops in HOPS for q in read_questions("test", hops, root=root, allow_test=True)]
    questions = [q for q in questions if q.hops in hops_wanted]
    if args.limit:
        rng = np.random.default_rng(args.seed)
        picked = []
        for hop in hops_wanted:
            group = [q for q in questions if q.hops == hop]
            order = rng.permutation(len(group))[: args.limit]
            picked += [group[i] for i in sorted(order)]
        questions = picked
    print(
        f"MetaQA {args.split}{' holdout' if args.split == 'dev' else ''}: {len(questions)} questions, "
        f"models {models}, cosine {'off' if args.no_cosine else 'on'}",
        file=sys.stderr,
    )

    driver = open_driver()
    index = load_kg_index(driver, args.kg)
    graph = load_local_graph(driver, index)
    vectors = embed_questions([q.question for q in questions])
    tally = Tally()
    ceiling: dict[str, list[float]] = {}
    base_hops = int(metas[models[0]]["hops"]) if models else 2
    began = time.perf_counter()
    for i, q in enumerate(tqdm(questions, desc="questions", unit="q", disable=None)):
        topic_idx = question_ids(index, q.topics)
        topic_ids = [index.entity_ids[t] for t in topic_idx]
        group = f"{q.hops}-hop"
        if not topic_ids:
            continue
        hops = candidate_hops(base_hops, q.hops)
        gold = gold_for(graph, index, topic_ids, question_ids(index, q.answers), q.answers, hops)
        ceiling.setdefault(group, []).append(gold.answers_in_candidates / max(1, len(set(q.answers))))
        for model in models:
            for select in selections:
                walks = q.hops if select == "walks" else None
                rows, ms = run_model(
                    driver,
                    args.kg,
                    model,
                    q.question,
                    topic_ids,
                    vectors[i],
                    max(ks),
                    hops,
                    args.max_candidates,
                    walks,
                )
                label = model if select == "top" else f"{model} walks"
                metrics = question_metrics(
                    rows, gold, list(q.topics), ks, leaf_rule=True, by_score=walks is None
                )
                tally.add(group, label, metrics, ms)
        if not args.no_cosine:
            rows, ms = run_cosine(driver, args.kg, topic_ids, vectors[i], max(ks), hops, args.max_candidates)
            tally.add(group, COSINE, question_metrics(rows, gold, list(q.topics), ks, leaf_rule=False), ms)
    summary = tally.summary()

    # Throughput with concurrent clients, per hop, first model, k = 100.
    concurrency: dict[str, dict[str, float]] = {}
    if models:
        for hop in hops_wanted:
            chosen = [(i, q) for i, q in enumerate(questions) if q.hops == hop][: args.throughput_questions]
            if not chosen:
                continue

            def call(j: int, chosen: list = chosen, hop: int = hop) -> None:  # type: ignore[type-arg]
                i, q = chosen[j]
                topic_ids = [index.entity_ids[t] for t in question_ids(index, q.topics)]
                run_model(
                    driver,
                    args.kg,
                    models[0],
                    q.question,
                    topic_ids,
                    vectors[i],
                    100,
                    candidate_hops(base_hops, hop),
                    args.max_candidates,
                )

            concurrency[f"{hop}-hop"] = throughput(call, len(chosen), args.clients)

    # Cypher-shell usage: nothing but the question text (the procedure links and embeds it in the DB).
    text_only: dict[str, dict[str, float]] = {}
    if models and args.text_only_questions:
        for hop in hops_wanted:
            chosen_q = [q for q in questions if q.hops == hop][: args.text_only_questions]
            latencies = []
            for q in chosen_q:
                began_q = time.perf_counter()
                driver.execute_query(
                    "CALL kgqa.subgraphrag.retrieve($q, {k: 100, kg: $kg, model: $model, "
                    "hops: $hops}) YIELD head RETURN count(*) AS n",
                    q=q.question,
                    kg=args.kg,
                    model=models[0],
                    hops=candidate_hops(base_hops, hop),
                )
                latencies.append((time.perf_counter() - began_q) * 1000)
            if latencies:
                text_only[f"{hop}-hop"] = {
                    "n": len(latencies),
                    "p50_ms": round(float(np.percentile(latencies, 50)), 1),
                    "p95_ms": round(float(np.percentile(latencies, 95)), 1),
                }
    driver.close()

    print(markdown_table(summary, ks))
    print(
        "\nanswer coverage of the full candidate set (ceiling of answer recall): "
        + ", ".join(f"{g} {np.mean(v):.3f}" for g, v in sorted(ceiling.items()))
    )
    print(f"\nthroughput, {args.clients} concurrent clients, model {models[0] if models else '-'}, k=100:")
    for group, row in concurrency.items():
        print(
            f"  {group}: {row['questions_per_second']} q/s (p50 {row['latency_p50_ms']} ms, "
            f"p95 {row['latency_p95_ms']} ms over {row['questions']} questions)"
        )
    if text_only:
        print(
            "\nquestion text only (linking + embedding + scoring in the DB), k=100, sequential: "
            + ", ".join(
                f"{g} p50 {r['p50_ms']} ms p95 {r['p95_ms']} ms (n={r['n']})" for g, r in text_only.items()
            )
        )
    ceilings = {row["group"]: row.get("triple_ceiling@100") for row in summary.values()}
    print(
        "triple recall@100 ceiling (min(1, 100/|gold|)): "
        + ", ".join(f"{g} {v:.3f}" for g, v in sorted(ceilings.items()) if v is not None)
    )
    print(f"\n{time.perf_counter() - began:.0f}s", file=sys.stderr)
    if args.out:
        payload = {
            "split": args.split,
            "ks": ks,
            "models": {m: metas[m] for m in models},
            "summary": summary,
            "answer_ceiling": {g: float(np.mean(v)) for g, v in ceiling.items()},
            "throughput": concurrency,
            "text_only_latency": text_only,
        }
        args.out.write_text(json.dumps(payload, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
