"""The torch-free encoder builder against the torch export, one run: build time, file size, embedding speed.

``kgqa.models.encoder_build.build_encoder`` writes all-MiniLM-L6-v2 as ONNX from its safetensors weights;
:func:`torch_export` below traces it with torch, as kgqa did before (the baseline; it needs the ``train``
extra). Both should give the same numbers; this script measures what the switch costs or saves:

    build       each builder in a fresh Python process (what a user waits for: interpreter, imports, build),
                and the time inside the build call alone (for ``_export`` that includes importing torch,
                which it does inside the call)
    size        model.onnx bytes
    load        creating the OnnxEncoder (onnxruntime session: graph optimisation, weights)
    batch       OnnxEncoder.embed over the same N strings (MetaQA questions and entity names), sentences/s;
                the two models take turns every 250 strings
    single      OnnxEncoder.embed_one on short questions, the two models call by call in turn, p50 ms

The machine is small and shared, so every measurement alternates the two models (the first one changes
from round to round) and the report gives medians over the rounds. Ratios are torch export / built: above 1
means the torch export's number is the larger one (a slower build, a bigger file, or more sentences/s).

    python -m bench.embedding.encoder_build [--sentences 2000] [--rounds 4] [--singles 100] [--threads 0]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

# not bench.common's REPO: the torch builder's process imports this module and would time common's imports
REPO = Path(__file__).resolve().parents[2]
DATA = Path(os.environ.get("KGQA_SHARED_DATA", REPO.parent / "shared" / "data"))
BUILT, TORCH = "built", "torch export"
CHUNK = 250  # strings per OnnxEncoder.embed call in the batch measurement (it sorts and batches by 64 inside)
# Each builder runs in its own process so that neither benefits from modules the other imported.
BUILD_CODE = {
    BUILT: "from kgqa.models.encoder_build import build_encoder as build",
    TORCH: "from bench.embedding.encoder_build import torch_export as build",
}
BUILD_MAIN = """
import json, sys, time
from pathlib import Path
{import_line}
start = time.perf_counter()
build(Path(sys.argv[1]), Path(sys.argv[2]))
print(json.dumps({{"call_s": time.perf_counter() - start, "torch": "torch" in sys.modules}}))
"""


def torch_export(source: Path, out: Path) -> None:
    """The baseline: trace the model with torch.onnx.export (opset 17), as kgqa exported it before."""
    import shutil as _shutil
    import warnings

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    from transformers import AutoModel, AutoTokenizer

    model = AutoModel.from_pretrained(str(source), attn_implementation="eager").eval()
    tokenizer = AutoTokenizer.from_pretrained(str(source))

    class LastHiddenState(torch.nn.Module):
        def __init__(self, bert: torch.nn.Module) -> None:
            super().__init__()
            self.bert = bert

        def forward(self, input_ids, attention_mask, token_type_ids):  # type: ignore[no-untyped-def]
            return self.bert(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state

    sample = tokenizer(
        ["a short one", "and a somewhat longer sample sentence"], padding=True, return_tensors="pt"
    )
    names = ["input_ids", "attention_mask", "token_type_ids"]
    dynamic = {name: {0: "batch", 1: "sequence"} for name in [*names, "last_hidden_state"]}
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            LastHiddenState(model),
            tuple(sample[n] for n in names),
            str(out / "model.onnx"),
            input_names=names,
            output_names=["last_hidden_state"],
            dynamic_axes=dynamic,
            opset_version=17,
            do_constant_folding=True,
            dynamo=False,
        )
    _shutil.copyfile(source / "vocab.txt", out / "vocab.txt")


def strings(n: int, seed: int = 13) -> tuple[list[str], list[str]]:
    """``n`` strings to embed (half MetaQA questions, half entity names) and the short questions among them.

    Without the MetaQA files (``$KGQA_SHARED_DATA/metaqa``) a fixed synthetic set of the same kinds is used.
    """
    rng = random.Random(seed)
    metaqa = DATA / "metaqa"
    questions: list[str] = []
    names: set[str] = set()
    if metaqa.is_dir():
        for hop in (1, 2, 3):
            path = metaqa / f"{hop}-hop" / "vanilla" / "qa_dev.txt"
            if path.exists():
                with path.open(encoding="utf-8") as fh:
                    questions += [line.split("\t")[0] for line in fh if line.strip()]
        kb = metaqa / "kb_dedup.txt"
        if kb.exists():
            with kb.open(encoding="utf-8") as fh:
                for line in fh:
                    parts = line.rstrip("\n").split("|")
                    if len(parts) == 3:
                        names.update((parts[0], parts[2]))
    if not questions or not names:
        words = "film actor director year genre language star write release the of who what which".split()
        questions = [
            f"what {rng.choice(words)} did [{rng.choice(words).title()} {i}] {rng.choice(words)}"
            for i in range(5 * n)
        ]
        names = {f"{rng.choice(words).title()} {rng.choice(words)} {i}" for i in range(5 * n)}
    picked_questions = rng.sample(sorted(questions), n - n // 2)
    texts = picked_questions + rng.sample(sorted(names), n // 2)
    rng.shuffle(texts)
    return texts, sorted(picked_questions, key=len)[: max(1, len(picked_questions) // 2)]


def build_once(kind: str, source: Path, out: Path) -> tuple[float, float]:
    """(process wall seconds, seconds inside the build call) for one build in a fresh interpreter."""
    code = BUILD_MAIN.format(import_line=BUILD_CODE[kind])
    start = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-c", code, str(source), str(out)],
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO,  # where `-c` finds the bench package
    )
    wall = time.perf_counter() - start
    if result.returncode != 0:
        raise RuntimeError(f"{kind} build failed:\n{result.stderr}")
    report = json.loads(result.stdout.strip().splitlines()[-1])
    if kind == BUILT and report["torch"]:
        raise RuntimeError("the torch-free builder imported torch")
    return wall, float(report["call_s"])


def alternating(rounds: int) -> list[tuple[str, str]]:
    return [(BUILT, TORCH) if r % 2 == 0 else (TORCH, BUILT) for r in range(rounds)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sentences", type=int, default=2000, help="strings embedded per model and round")
    parser.add_argument(
        "--rounds",
        type=int,
        default=4,
        help="rounds; the model that goes first alternates (use an even number)",
    )
    parser.add_argument("--singles", type=int, default=100, help="single-question calls per model and round")
    parser.add_argument(
        "--threads", type=int, default=0, help="onnxruntime intra-op threads (0: its default)"
    )
    args = parser.parse_args(argv)

    import onnxruntime  # noqa: F401  imported here so that no timed session load pays for the import
    import tokenizers  # noqa: F401
    from kgqa.models.encoder import OnnxEncoder, encoder_meta, source_dir
    from kgqa.models.encoder_build import source_fingerprint

    source = source_dir()
    meta = json.dumps(encoder_meta(source_fingerprint(source)), indent=2) + "\n"
    texts, short_questions = strings(args.sentences)
    singles = short_questions[: args.singles]
    work = Path(tempfile.mkdtemp(prefix="kgqa-encoder-bench-"))
    print(
        f"source {source}\n{len(texts)} strings ({DATA / 'metaqa'}), {len(singles)} single questions, "
        f"{args.rounds} rounds, {os.cpu_count()} CPUs, onnxruntime threads {args.threads or 'default'}"
    )
    try:
        dirs = {BUILT: work / "built", TORCH: work / "torch"}
        wall: dict[str, list[float]] = {BUILT: [], TORCH: []}
        call: dict[str, list[float]] = {BUILT: [], TORCH: []}
        for r, order in enumerate(alternating(args.rounds)):
            for kind in order:
                out = dirs[kind] if r == 0 else work / f"scratch-{r}-{kind.replace(' ', '-')}"
                out.mkdir()
                w, c = build_once(kind, source, out)
                wall[kind].append(w)
                call[kind].append(c)
                if r > 0:
                    shutil.rmtree(out)
        for directory in dirs.values():
            (directory / "encoder.json").write_text(meta)
        size = {kind: (d / "model.onnx").stat().st_size for kind, d in dirs.items()}

        load: dict[str, list[float]] = {BUILT: [], TORCH: []}
        rate: dict[str, list[float]] = {BUILT: [], TORCH: []}
        single_ms: dict[str, list[float]] = {BUILT: [], TORCH: []}
        encoders: dict[str, OnnxEncoder] = {}
        vectors: dict[str, np.ndarray] = {}
        # Untimed: the first session of a process also sets up ONNX Runtime (environment, thread pools), and
        # the first batches of a shape allocate; neither should be charged to whichever model comes first.
        for kind in (BUILT, TORCH):
            OnnxEncoder(dirs[kind], args.threads).embed(texts[:CHUNK])
        for order in alternating(args.rounds):
            for kind in order:
                start = time.perf_counter()
                encoders[kind] = OnnxEncoder(dirs[kind], args.threads)
                load[kind].append(time.perf_counter() - start)
                encoders[kind].embed(texts[:64])  # warm-up: first-run allocations
            # Chunk by chunk in turn (who goes first alternates too), so a burst of load hits both models.
            seconds = {BUILT: 0.0, TORCH: 0.0}
            parts: dict[str, list[np.ndarray]] = {BUILT: [], TORCH: []}
            for c, begin in enumerate(range(0, len(texts), CHUNK)):
                for kind in order if c % 2 == 0 else order[::-1]:
                    start = time.perf_counter()
                    parts[kind].append(encoders[kind].embed(texts[begin : begin + CHUNK]))
                    seconds[kind] += time.perf_counter() - start
            for kind in order:
                rate[kind].append(len(texts) / seconds[kind])
                vectors[kind] = np.concatenate(parts[kind])
            for question in singles:  # call by call in turn: noise bursts hit both
                for kind in order:
                    start = time.perf_counter()
                    encoders[kind].embed_one(question)
                    single_ms[kind].append(1000 * (time.perf_counter() - start))

        cosines = np.sum(vectors[BUILT] * vectors[TORCH], axis=1)
        diff = float(np.abs(vectors[BUILT] - vectors[TORCH]).max())
        rows = [
            ("build, fresh process (s)", statistics.median(wall[BUILT]), statistics.median(wall[TORCH]), 2),
            ("build call only (s)", statistics.median(call[BUILT]), statistics.median(call[TORCH]), 2),
            ("model.onnx (MB)", size[BUILT] / 1e6, size[TORCH] / 1e6, 2),
            (
                "session load (ms)",
                1000 * statistics.median(load[BUILT]),
                1000 * statistics.median(load[TORCH]),
                0,
            ),
            ("batch embed (sentences/s)", statistics.median(rate[BUILT]), statistics.median(rate[TORCH]), 0),
            (
                "single question p50 (ms)",
                statistics.median(single_ms[BUILT]),
                statistics.median(single_ms[TORCH]),
                2,
            ),
        ]
        print(f"\n{'':28}{BUILT:>14}{TORCH:>14}{'torch/built':>13}")
        for label, ours, theirs, digits in rows:
            print(f"{label:28}{ours:>14.{digits}f}{theirs:>14.{digits}f}{theirs / ours:>13.3f}")
        print(
            f"\nper round: build wall built {fmt(wall[BUILT])} torch {fmt(wall[TORCH])}; "
            f"sentences/s built {fmt(rate[BUILT], 0)} torch {fmt(rate[TORCH], 0)}"
        )
        print(
            f"agreement over {len(texts)} strings: min cosine {float(cosines.min()):.7f}, "
            f"max abs diff {diff:.2e}"
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


def fmt(values: list[float], digits: int = 2) -> str:
    return "[" + ", ".join(f"{v:.{digits}f}" for v in values) + "]"


if __name__ == "__main__":
    sys.exit(main())
