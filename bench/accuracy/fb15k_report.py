"""The FB15k-237 detail: every method on our FB15k-237 question set for each trained KG (models learned from
the KG alone, and with labelled questions), and what each part of `kgqa train all` took.

    python -m bench.accuracy.questions_answers --set bench/questions/fb15k_freeform.jsonl --kg fb15k \\
        --methods auto,sgrag,frag,simgrag,gsr,subgraphrag,cosine --out bench/results/fb15k/freeform-fb15k.json
    python -m bench.accuracy.fb15k_report   # every [[fb15k]] entry of bench/report.toml whose file is there
    python -m bench.accuracy.fb15k_report --result "LABEL=KG=FILE" [--result ...] \\
        [--out bench/results/fb15k/fb15k.md]

Each --result is LABEL=KG=FILE: a questions_answers.py output and the KG it ran on (whose profile in
KGQA_HOME, from `kgqa train all`, gives the training times). Held-out figures are the ones to read: the tune
part was used to choose the code's defaults. BENCHMARKS.md's FB15k-237 table (bench/report.py) counts Hits@1
with the same :func:`bench.common.hits`.
"""

from __future__ import annotations

import argparse
import json
import sys
import tomllib
from pathlib import Path

from kgqa.models.kg_models import read_profile

from bench.common import KINDS, REPO, hits


def section(results: list[tuple[str, str, Path]]) -> list[str]:
    lines = ["# FB15k-237: any KG, with nothing written for it", ""]
    for label, kg, path in results:
        data = json.loads(path.read_text(encoding="utf-8"))
        methods = [m for m in data if not m.startswith("_")]
        lines += [f"## {label} (KG `{kg}`)", "", f"`{data.get('_command', '')}`", ""]
        n_held = hits(data[methods[0]], "heldout")[1]
        n_tune = hits(data[methods[0]], "tune")[1]
        head = "| method | held-out all | " + " | ".join(f"held-out {k}" for k in KINDS) + " | tune all |"
        lines += [head, "|---|" + "---:|" * (len(KINDS) + 2)]
        for method in methods:
            rows = data[method]
            cells = [f"{hits(rows, 'heldout')[0]:.1f}"]
            cells += [f"{hits(rows, 'heldout', k)[0]:.1f} ({hits(rows, 'heldout', k)[1]})" for k in KINDS]
            cells.append(f"{hits(rows, 'tune')[0]:.1f}")
            lines.append(f"| {method} | " + " | ".join(cells) + " |")
        lines += ["", f"Hits@1 (%), {n_held} held-out and {n_tune} tune questions.", ""]
        profile = read_profile(kg)
        if profile is not None:
            total = sum(p.seconds for p in profile.parts.values())
            lines += [
                f"`kgqa train all --kg {kg}" + "".join(f" --questions {q}" for q in profile.questions) + "`: "
                f"{total / 60:.1f} min of training parts on this machine "
                f"({profile.labelled} labelled, {profile.synthesised} synthesised questions):",
                "",
                "| part | seconds | examples | measured |",
                "|---|---:|---:|---|",
            ]
            for name, part in profile.parts.items():
                metrics = ", ".join(f"{k} {v}" for k, v in part.metrics.items()) or "; ".join(part.notes)
                lines.append(f"| {name} | {part.seconds:.0f} | {part.examples} | {metrics} |")
            lines.append("")
    return lines


def configured() -> list[str]:
    """LABEL=KG=FILE of each [[fb15k]] entry of bench/report.toml whose file is there."""
    config = tomllib.loads((REPO / "bench" / "report.toml").read_text(encoding="utf-8"))
    return [
        f"{e['label']}={e['kg']}={REPO / e['file']}"
        for e in config.get("fb15k", [])
        if (REPO / e["file"]).is_file()
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--result", action="append", help="LABEL=KG=FILE (default: bench/report.toml's)")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "fb15k" / "fb15k.md")
    args = parser.parse_args(argv)
    results = []
    for item in args.result or configured():
        label, kg, file = (item.split("=", 2) + ["", ""])[:3]
        if not Path(file).is_file():
            parser.error(f"--result takes LABEL=KG=FILE with an existing FILE, got {item!r}")
        results.append((label, kg, Path(file)))
    if not results:
        parser.error("no result file yet: give --result LABEL=KG=FILE")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(section(results)) + "\n", encoding="utf-8")
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
