"""``run_eval``: answer every question, append one JSON line per question, then write the report.

Resumable: the per-question JSONL is append-only and flushed after every question. Its first line records
the settings that make results comparable (dataset, split, method, llm, k, kg); a rerun with the same
settings skips the question ids already there (errored ones too, unless ``retry_errors``) and the report is
always rebuilt from the whole file at the end. A record for an id written later supersedes an earlier one.

An exception on one question is recorded (type, message, the last lines of the traceback) and the run goes
on; a lost database connection stops the run, since every further question would fail the same way.
The records and the report files are written by :mod:`kgqa.evaluation.results`.
"""

from __future__ import annotations

import logging
import os
import random
import sys
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from kgqa.core.errors import BadInput, KgqaError
from kgqa.core.types import LinkedEntity
from kgqa.evaluation.datasets import SPLITS, Dataset, EvalQuestion, load_dataset
from kgqa.evaluation.report import machine_info, summarize, versions
from kgqa.evaluation.results import Appender, build_record, read_jsonl, write_outputs
from kgqa.graph.cypher import render
from kgqa.graph.kg import resolve_kg
from kgqa.qa.answering import QuestionAnswerer
from kgqa.qa.methods import canonical, retriever_class

T = TypeVar("T")
R = TypeVar("R")
REPORT_FORMAT = 1
DEFAULT_KG = {"metaqa": "metaqa", "webqsp": "freebase", "cwq": "freebase"}
DEFAULT_METHOD = "auto"
MAX_CONSECUTIVE_ERRORS = 50


SIDE_FILES = {".jsonl": "jsonl", ".md": "markdown", ".png": "chart"}  # written beside the report


@dataclass
class EvalConfig:
    dataset: str
    split: str = "test"
    hops: tuple[int, ...] | None = None
    limit: int | None = None
    method: str | None = None
    llm: str = "none"
    k: int = 100
    kg: str | None = None
    path: Path | None = None
    out: Path | None = None
    resume: bool = True
    retry_errors: bool = False
    seed: int = 0
    workers: int = 1
    progress: bool = True
    chart: bool = True
    given_topic: bool = False  # WebQSP/CWQ: the dataset's topic entities instead of the linker's
    warmup: int = 0  # questions of another split asked first, untimed (see warm_up_questions)
    extra: dict[str, Any] = field(default_factory=dict)
    rerun: str = ""  # the command that reruns this, when a script with its own answerer ran it

    def __post_init__(self) -> None:
        self.method = canonical(self.method or DEFAULT_METHOD)
        self.kg = self.kg or DEFAULT_KG.get(self.dataset, self.dataset)
        self.llm = (self.llm or "none").strip() or "none"
        if self.k < 1:
            raise BadInput(f"--k must be at least 1, got {self.k}")
        if self.workers < 1:
            raise BadInput(f"--workers must be at least 1, got {self.workers}")
        if self.warmup < 0:
            raise BadInput(f"--warmup must be at least 0, got {self.warmup}")
        if self.out is not None and Path(self.out).suffix.lower() in SIDE_FILES:
            # the report would be written over the per-question records (or the Markdown, or the chart)
            raise BadInput(
                f"--out {self.out} names a file written beside the report: give the report's own name "
                f"(a .json file); its {', '.join(SIDE_FILES)} go next to it"
            )

    @property
    def report_path(self) -> Path:
        if self.out is not None:
            return Path(self.out)
        llm = "extractive" if self.llm.lower() in ("none", "extractive") else self.llm.replace("/", "_")
        method = str(self.method).replace(":", "_").replace("/", "_")
        given = "-given" if self.given_topic else ""
        return Path("eval-results") / f"{self.dataset}-{self.split}-{method}-{llm}-k{self.k}{given}.json"

    def output_paths(self) -> dict[str, Path]:
        base = self.report_path
        return {"report": base, **{what: base.with_suffix(suffix) for suffix, what in SIDE_FILES.items()}}

    def identity(self) -> dict[str, Any]:
        return {
            "dataset": self.dataset,
            "split": self.split,
            "method": self.method,
            "llm": self.llm,
            "k": self.k,
            "kg": self.kg,
            "given_topic": self.given_topic,
        }

    def command(self) -> str:
        if self.rerun:
            return self.rerun
        parts = ["kgqa", "eval", self.dataset, "--split", self.split]
        if self.hops:
            parts += ["--hops", ",".join(str(h) for h in self.hops)]
        if self.limit is not None:
            parts += ["--limit", str(self.limit)]
        parts += ["--method", str(self.method), "--llm", self.llm, "--k", str(self.k), "--kg", str(self.kg)]
        if self.path is not None:
            parts += ["--path", str(self.path)]
        if self.seed != 0:
            parts += ["--seed", str(self.seed)]
        if self.workers > 1:
            parts += ["--workers", str(self.workers)]
        if self.given_topic:
            parts += ["--given-topic"]
        if self.warmup:
            parts += ["--warmup", str(self.warmup)]
        parts += ["--out", str(self.report_path)]
        return " ".join(parts)


# --- answering the questions --------------------------------------------------------------------------------


def in_order(fn: Callable[[T], R], items: Iterable[T], workers: int) -> Iterator[R]:
    """``map(fn, items)`` with up to ``workers`` calls at once, results in input order.

    At most twice as many calls as workers are queued, so stopping early (a lost database, Ctrl-C) leaves
    little work behind; the calls not yet started are cancelled.
    """
    if workers <= 1:
        yield from map(fn, items)
        return
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="kgqa-eval") as pool:
        pending: deque[Future[R]] = deque()
        try:
            for item in items:
                pending.append(pool.submit(fn, item))
                if len(pending) >= 2 * workers:
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()
        finally:
            for future in pending:
                future.cancel()


def _fatal(exc: BaseException) -> bool:
    try:
        from neo4j.exceptions import AuthError, ServiceUnavailable, SessionExpired
    except ImportError:  # pragma: no cover
        return False
    return isinstance(exc, ServiceUnavailable | SessionExpired | AuthError)


# --- the run ------------------------------------------------------------------------------------------------


def _seed(seed: int) -> dict[str, Any]:
    random.seed(seed)
    seeds: dict[str, Any] = {"seed": seed, "PYTHONHASHSEED": os.environ.get("PYTHONHASHSEED")}
    try:
        import numpy

        numpy.random.seed(seed)
        seeds["numpy"] = seed
    except ImportError:  # pragma: no cover
        pass
    if "torch" in sys.modules:  # seed torch only when a retriever already brought it in
        sys.modules["torch"].manual_seed(seed)
        seeds["torch"] = seed
    return seeds


def _topics_for(driver: Any, kg: str, q: EvalQuestion, given: bool) -> list[LinkedEntity] | None:
    """The dataset's given topic entities that exist in the KG (WebQSP/CWQ, with ``given``); None lets the
    linker link."""
    if not given or q.dataset == "metaqa" or not q.topic_entities or driver is None:
        return None
    ids = [
        form
        for mid, _ in q.topic_entities
        for form in (mid, "/" + mid.replace(".", "/", 1), f"http://rdf.freebase.com/ns/{mid}")
    ]
    names = [name for _, name in q.topic_entities]
    rows = driver.execute_query(render("eval/given_topics"), kg=kg, ids=ids, names=names).records
    found = [LinkedEntity(id=str(r["id"]), name=str(r["name"]), score=1.0, how="given") for r in rows]
    return found or None


def warm_up_questions(config: EvalConfig, evaluated: Dataset) -> list[EvalQuestion]:
    """``config.warmup`` questions of another split of the dataset (train, else dev; never test), none of them
    evaluated: a server just started compiles its queries and fills its caches on the first questions, which
    would otherwise count in the latency of the run. Not the run's own questions: the answerer keeps
    per-question caches (the question's vector) that would flatter them."""
    others = [s for s in ("train", "dev") if s in SPLITS[config.dataset] and s != config.split]
    if not others:
        raise BadInput(
            f"{config.dataset} has no split besides {config.split} to warm up on (test is never used); "
            "run without --warmup"
        )
    sample = load_dataset(config.dataset, others[0], config.path, config.hops, 3 * config.warmup, config.seed)
    evaluated_ids = {q.id for q in evaluated.questions}
    evaluated_texts = {q.question for q in evaluated.questions}
    fresh = [q for q in sample.questions if q.id not in evaluated_ids and q.question not in evaluated_texts]
    return fresh[: config.warmup]


def warm_up(
    answerer: QuestionAnswerer, driver: Any, config: EvalConfig, questions: list[EvalQuestion]
) -> None:
    for q in questions:
        try:
            answerer.ask(q.question, _topics_for(driver, str(config.kg), q, config.given_topic))
        except Exception as exc:  # a question that fails warms up as well
            if _fatal(exc):
                raise


def scope_questions(driver: Any, config: EvalConfig, data: Dataset) -> Dataset:
    """A Freebase benchmark's questions that KG ``config.kg`` can answer (:mod:`.reachable`); for ``dev``,
    those the KG's training held out; then the ``--limit`` sample."""
    from kgqa.evaluation.reachable import held_out_questions, reachable_questions
    from kgqa.models.kg_models import read_held_out

    if config.split == "dev":
        data = held_out_questions(data, sorted(read_held_out(str(config.kg))))
    data = reachable_questions(driver, str(config.kg), data)
    if config.limit is not None and config.limit < len(data.questions):
        picked = sorted(random.Random(config.seed).sample(range(len(data.questions)), config.limit))
        data.questions = [data.questions[i] for i in picked]
    return data


def _load1() -> float | None:
    """The 1-minute load average when a question finished: how contended its latency was."""
    try:
        return round(os.getloadavg()[0], 2)
    except (OSError, AttributeError):  # pragma: no cover - not on every platform
        return None


class _Progress:
    def __init__(self, total: int, done: int, hits: float, enabled: bool, label: str) -> None:
        self.hits, self.count = hits, done
        self.bar: Any = None
        if enabled:
            from tqdm import tqdm

            self.bar = tqdm(
                total=total,
                initial=done,
                desc=label,
                unit="q",
                file=sys.stderr,
                dynamic_ncols=True,
                mininterval=0.5,
                smoothing=0.05,
            )
            self._postfix()

    def _postfix(self) -> None:
        if self.bar is not None:
            self.bar.set_postfix_str(
                f"Hits@1 {self.hits / self.count:.3f}" if self.count else "Hits@1 –", refresh=False
            )

    def update(self, hits1: float) -> None:
        self.hits += hits1
        self.count += 1
        if self.bar is not None:
            self._postfix()
            self.bar.update(1)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def run_eval(
    config: EvalConfig,
    driver: Any | None = None,
    answerer: QuestionAnswerer | None = None,
    dataset: Dataset | None = None,
) -> dict[str, Any]:
    """Evaluate ``config``; returns the report (also written as JSON, Markdown and PNG next to the JSONL)."""
    began = time.perf_counter()
    started = datetime.now(UTC).isoformat(timespec="seconds")
    # Server notifications (say, an unknown property in some query) would be logged once per question and
    # bury the progress bar; they are not evaluation results.
    logging.getLogger("neo4j.notifications").setLevel(logging.ERROR)
    # a Freebase benchmark is sampled after the KG's answerable questions are kept (see scope_questions)
    freebase = dataset is None and config.dataset != "metaqa"
    limit = None if freebase else config.limit
    data = dataset or load_dataset(config.dataset, config.split, config.path, config.hops, limit, config.seed)
    paths = config.output_paths()
    header, previous = read_jsonl(paths["jsonl"]) if config.resume else (None, {})
    if header is not None and header.get("config") != config.identity():
        raise BadInput(
            f"{paths['jsonl']} holds results for different settings ({header.get('config')}); "
            "use --no-resume to start over or --out for another file"
        )
    if config.retry_errors:
        previous = {qid: rec for qid, rec in previous.items() if not rec.get("error")}

    if answerer is None and config.method != "auto":
        retriever_class(str(config.method))  # an unknown or unavailable method fails before any work
    own_driver = driver is None and answerer is None
    if own_driver:
        from kgqa.graph.connection import open_driver

        driver = open_driver()
    try:
        kg_info = resolve_kg(driver, str(config.kg)).properties if driver is not None else {}
        if freebase:
            data = scope_questions(driver, config, data)
        if answerer is None:
            answerer = QuestionAnswerer(driver, str(config.method), str(config.kg), config.llm, config.k)
        wanted = {q.id for q in data.questions}
        todo = [q for q in data.questions if q.id not in previous]
        warmed = warm_up_questions(config, data) if config.warmup and todo else []
        warm_up(answerer, driver, config, warmed)
        seeds = _seed(config.seed)  # after the method is built, so that torch is seeded if it brought it in
        done_hits = sum(float(r["metrics"]["hits1"]) for qid, r in previous.items() if qid in wanted)
        appender = Appender(paths["jsonl"], fresh=header is None)
        current_versions = versions(driver)
        if header is None:
            header = {
                "kind": "run",
                "config": config.identity(),
                "started": started,
                "command": config.command(),
                "versions": current_versions,
                "machine": machine_info(),
            }
            appender.write(header)
        progress = _Progress(
            len(data.questions),
            len(data.questions) - len(todo),
            done_hits,
            config.progress,
            f"{config.dataset} {config.split} {config.method}",
        )

        def answer_one(q: EvalQuestion) -> dict[str, Any]:
            gold = data.gold_triples(q)
            t0 = time.perf_counter()
            try:
                answered = answerer.ask(
                    q.question, _topics_for(driver, str(config.kg), q, config.given_topic)
                )
                record = build_record(q, gold, answered)
            except Exception as exc:  # one question's failure is data, not the end of the run
                if _fatal(exc):
                    raise
                record = build_record(q, gold, None, exc, (time.perf_counter() - t0) * 1000)
            record["load1"] = _load1()
            return record

        consecutive_errors = 0
        try:
            for q, record in zip(todo, in_order(answer_one, todo, config.workers), strict=False):
                consecutive_errors = consecutive_errors + 1 if record.get("error") else 0
                appender.write(record)
                previous[q.id] = record
                progress.update(float(record["metrics"]["hits1"]))
                if consecutive_errors >= MAX_CONSECUTIVE_ERRORS:
                    raise KgqaError(
                        f"{consecutive_errors} questions in a row failed "
                        f"(last: {record['error']}); stopping. "
                        "Fix the cause and rerun with --retry-errors"
                    )
        finally:
            progress.close()
            appender.close()
        records = [previous[q.id] for q in data.questions if q.id in previous]
        report: dict[str, Any] = {
            "kgqa_eval_report": REPORT_FORMAT,
            "config": config.identity()
            | {
                "hops": list(config.hops) if config.hops else None,
                "limit": config.limit,
                "path": str(data.path),
                "workers": config.workers,
                "warmup": len(warmed),
            },
            "command": config.command(),
            "created": datetime.now(UTC).isoformat(timespec="seconds"),
            "n_questions": len(data.questions),
            "n_done": len(records),
            "complete": len(records) == len(data.questions),
            "resumed_from": len(data.questions) - len(todo),
            "wall_seconds": round(time.perf_counter() - began, 2),
            **summarize(records),
            "dataset": {
                "name": data.name,
                "split": data.split,
                "path": str(data.path),
                "skipped": data.skipped,
            },
            "notes": list(data.notes),
            "kg_info": kg_info,
            "seeds": seeds,
            "versions": current_versions,
            "machine": machine_info(),
            # a resumed run: what the first part of the JSONL was measured with
            "run_started": header.get("started"),
            "versions_at_start": header.get("versions"),
            "outputs": {k: str(v) for k, v in paths.items()},
        }
    finally:
        if own_driver and driver is not None:
            driver.close()
    write_outputs(report, paths, chart=config.chart)
    return report


def config_dict(config: EvalConfig) -> dict[str, Any]:
    return {k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(config).items()}
