"""How calibrated auto's answer probabilities are on benchmark questions: a reliability table per `kgqa eval`
run, from its per-question file.

    python -m bench.accuracy.calibration bench/results/webqsp-fb15k/test-auto-linked.jsonl \\
        bench/results/webqsp-fb15k/test-auto-given.jsonl --out bench/results/webqsp-fb15k/calibration.md

Only questions whose first answer was scored by the KG's answer scorer (``scored_by`` in the answer's
explanation) count: their first answer's score is the probability that it is right. Each cell is the share of
those first answers that were right (Hits@1), and how many fell in the range.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from bench.common import REPO

BINS = (0.0, 0.3, 0.5, 0.7, 0.9, 1.0001)


def scored_rows(path: Path) -> tuple[str, list[tuple[float, float]]]:
    """The run's command and, per scored question, (probability of the first answer, its Hits@1)."""
    command = ""
    rows: list[tuple[float, float]] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise SystemExit(f"{path}:{number}: not JSON ({exc.msg})") from exc
        if record.get("kind") == "run":
            command = record.get("command", "")
        explanation = record.get("answer_explanation") or {}
        if record.get("kind") == "question" and record.get("answer_scores") and "scored_by" in explanation:
            rows.append((float(record["answer_scores"][0]), float(record["metrics"]["hits1"])))
    return command, rows


def table(runs: Sequence[Path]) -> list[str]:
    head = [f"{low:.1f}-{min(high, 1.0):.1f}" for low, high in zip(BINS, BINS[1:], strict=False)]
    lines = [
        "# auto's answer probabilities on benchmark questions",
        "",
        "Each cell: the share of first answers right, and how many first answers had a probability in that "
        "range (questions whose first answer the KG's answer scorer scored).",
        "",
        "| run | scored | " + " | ".join(head) + " | 0.9 or more |",
        "|---|---:|" + "---:|" * (len(head) + 1),
    ]
    commands = []
    for path in runs:
        command, rows = scored_rows(path)
        commands.append(command)
        cells = []
        for low, high in zip(BINS, BINS[1:], strict=False):
            chosen = [hit for p, hit in rows if low <= p < high]
            cells.append(f"{100 * sum(chosen) / len(chosen):.0f} % ({len(chosen)})" if chosen else "-")
        sure = [hit for p, hit in rows if p >= 0.9]
        sure_cell = f"{100 * sum(sure) / len(sure):.1f} % of {len(sure)}" if sure else "-"
        name = path.relative_to(REPO) if path.is_relative_to(REPO) else path
        lines.append(f"| `{name}` | {len(rows)} | " + " | ".join(cells) + f" | {sure_cell} |")
    lines += ["", "```bash", *[c for c in commands if c], "```", ""]
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", type=Path, help="`kgqa eval` per-question files (.jsonl)")
    parser.add_argument("--out", type=Path, help="write the table here (markdown)")
    args = parser.parse_args(argv)
    text = "\n".join(table([p.resolve() for p in args.runs]))
    print(text)
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
