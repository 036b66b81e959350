"""Parsing the input into spool files: big line-based files cut into byte ranges parsed by worker processes,
their issues replayed into the load's sink in file order with the file's line numbers."""

from __future__ import annotations

import math
import multiprocessing
import os
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from multiprocessing.pool import Pool
from pathlib import Path
from typing import Any

from kgqa.core.errors import BadInput
from kgqa.loaders.bulk.staging import PartitionStager
from kgqa.loaders.inputs import compressed, count_lines, line_ranges
from kgqa.loaders.plan import InputPlan, ParseContext, Parser
from kgqa.loaders.progress import Progress
from kgqa.loaders.records import Fact, Issue, IssueSink, ParseStats

# Input from this size on is parsed by worker processes (smaller input: in this process, which is faster
# than starting them); a file is cut into ranges of about RANGE_BYTES, so that a worker that finishes early
# takes the next one; a partition holds about PARTITION_BYTES of input.
PARALLEL_MIN_BYTES = 32 << 20
RANGE_BYTES = 256 << 20
PARTITION_BYTES = 256 << 20


@dataclass(frozen=True)
class _RangeTask:
    index: int  # position in file order: ranges of the first file, then of the next, ...
    path: Path
    parser: Parser
    start: int
    end: int | None
    staging: Path
    partitions: int
    strict: bool
    first_of_file: bool
    keep: int


@dataclass
class _RangeResult:
    index: int
    facts: int
    labels: int
    dropped: Counter[str]
    issues: list[tuple[bool, Issue]]  # (a good line came before it in the range, the issue), the first few
    issue_count: int
    good: int
    multiline: bool
    relation_counts: list[Counter[str]]


class _Stop(Exception):
    """A range stops early: the load will fail on what it found (``--strict``, or not the format)."""


class _RangeSink(IssueSink):
    """Records a range's issues (line numbers within the range) for replay, in file order, into the load's
    sink: the first ``keep``, with whether a good line came before each; the rest are counted."""

    def __init__(self, strict: bool, probe_rule: bool, keep: int) -> None:
        super().__init__(keep=keep)
        self.strict_range = strict
        self.probe_rule = probe_rule  # the range starts the file: "does not look like" can apply
        self.goods = 0
        self.events: list[tuple[bool, Issue]] = []

    def good(self) -> None:
        self.goods += 1

    def add(self, issue: Issue) -> None:
        self.count += 1
        if len(self.events) < self.keep:
            self.events.append((self.goods > 0, issue))
        if self.strict_range or (self.probe_rule and self.goods == 0 and self.count >= self.probe):
            raise _Stop


_WORKER_SEEN: set[str] | None = None
_WORKER_PROGRESS: Any = None  # shared array: bytes read, then facts staged, per range


def _init_worker(progress: Any) -> None:
    global _WORKER_SEEN, _WORKER_PROGRESS
    _WORKER_SEEN = set()
    _WORKER_PROGRESS = progress


def pool_context() -> Any:
    """fork where there is one: the workers run only this module's functions (no driver, no terminal), and
    spawn would re-run the caller's main module, which a script without a ``__main__`` guard does not
    survive."""
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else "spawn")


def _parse_range_in_worker(task: _RangeTask) -> _RangeResult:
    shared = _WORKER_PROGRESS
    slots = len(shared) // 2

    def report(read: int, facts: int) -> None:
        shared[task.index] = read
        shared[slots + task.index] = facts

    return _parse_range(task, _WORKER_SEEN, report)


def _parse_range(task: _RangeTask, seen: set[str] | None, report: Callable[[int, int], None]) -> _RangeResult:
    sink = _RangeSink(task.strict, task.first_of_file, task.keep)
    stats = ParseStats()
    stager = PartitionStager(task.staging, f"r{task.index:04d}", task.partitions, seen)

    def on_bytes(n: int) -> None:
        report(n, stager.facts_seen)

    ctx = ParseContext(sink=sink, stats=stats, on_bytes=on_bytes, start=task.start, end=task.end)
    add_fact, add_label = stager.add_fact, stager.add_label
    try:
        for record in task.parser(task.path, ctx):
            if type(record) is Fact:
                add_fact(*record)
            else:
                add_label(*record)
    except _Stop:
        pass
    finally:
        stager.close()
    return _RangeResult(
        index=task.index,
        facts=stager.facts_seen,
        labels=stager.labels_seen,
        dropped=stats.dropped,
        issues=sink.events,
        issue_count=sink.count,
        good=sink.goods,
        multiline=stager.multiline,
        relation_counts=stager.relation_counts,
    )


@dataclass
class StagedInput:
    """What parsing staged: the spool prefixes (one per range, in file order) and the partition count."""

    staging: Path
    prefixes: list[str]
    partitions: int
    multiline: bool
    relation_counts: list[Counter[str]]  # per partition, duplicates included
    workers: int
    sort: bool = False  # one small partition: write the CSVs sorted (stable files from run to run)
    pool: Pool | None = None


def workers() -> int:
    value = os.environ.get("KGQA_BULK_WORKERS", "").strip()
    if value:
        if not value.isdigit() or int(value) < 1:
            raise BadInput(f"KGQA_BULK_WORKERS must be a whole number of processes, got {value!r}")
        return int(value)
    return os.cpu_count() or 1


def plan_ranges(
    plan: InputPlan, parallel: bool, range_bytes: int = RANGE_BYTES
) -> list[tuple[int, int, int | None]]:
    """(file index, start, end) of each range, in file order; end None: the whole (compressed) file."""
    ranges: list[tuple[int, int, int | None]] = []
    for i, input_file in enumerate(plan.files):
        size = input_file.path.stat().st_size
        if parallel and input_file.line_based and not compressed(input_file.path) and size > range_bytes:
            parts = math.ceil(size / range_bytes)
            cut = line_ranges(input_file.path, parts)
            ranges.extend((i, start, end) for start, end in cut)
        else:
            ranges.append((i, 0, None))
    return ranges


def stage(
    plan: InputPlan,
    staging: Path,
    sink: IssueSink,
    stats: ParseStats,
    progress: Progress,
    parallel: bool | None = None,
    range_bytes: int = RANGE_BYTES,
    partitions: int | None = None,
) -> StagedInput:
    """Parses every input file into partitioned spool files (see :class:`PartitionStager`).

    ``parallel`` (default: when the input is at least PARALLEL_MIN_BYTES and there is more than one core)
    runs the ranges in worker processes, which stay up for :func:`finish`. Issues reach ``sink`` in file
    order with the file's line numbers; counts reach ``stats``."""
    sizes = [f.path.stat().st_size for f in plan.files]
    total = sum(sizes)
    count = workers()
    small = total < PARALLEL_MIN_BYTES
    if parallel is None:
        parallel = count > 1 and not small
    if partitions is None:  # a partition's rows are in memory at once: about PARTITION_BYTES of input each
        partitions = 1 if small else max(count if parallel else 1, math.ceil(total / PARTITION_BYTES))
    ranges = plan_ranges(plan, parallel, range_bytes)
    tasks = [
        _RangeTask(
            index=k,
            path=plan.files[i].path,
            parser=plan.files[i].parser,
            start=start,
            end=end,
            staging=staging,
            partitions=partitions,
            strict=sink.strict,
            first_of_file=start == 0,
            keep=sink.keep,
        )
        for k, (i, start, end) in enumerate(ranges)
    ]
    staged = StagedInput(
        staging=staging,
        prefixes=[f"r{t.index:04d}" for t in tasks],
        partitions=partitions,
        multiline=False,
        relation_counts=[Counter() for _ in range(partitions)],
        workers=1,
        sort=not parallel and partitions == 1,
    )
    replay = _Replay(plan, ranges, sink, stats, staged)
    with progress.step("reading + staging", total=total or None, unit="triples") as step:
        if not parallel:
            offset = 0
            seen: set[str] = set()
            for task, (i, _, _) in zip(tasks, ranges, strict=True):
                base, before = offset, stats.facts

                def report(read: int, facts: int, base: int = base, before: int = before) -> None:
                    step.update(base + read, items=before + facts)

                replay.add(_parse_range(task, seen, report))
                offset += sizes[i]
            step.update(total, items=stats.facts, force=True)
            return staged
        context = pool_context()
        shared = context.Array("q", 2 * len(tasks), lock=False)
        staged.workers = min(count, max(len(tasks), partitions))
        pool = context.Pool(staged.workers, initializer=_init_worker, initargs=(shared,))
        staged.pool = pool
        try:
            results = pool.imap(_parse_range_in_worker, tasks)
            done = 0
            while done < len(tasks):
                try:
                    result = results.next(timeout=0.2)
                except multiprocessing.TimeoutError:
                    step.update(sum(shared[: len(tasks)]), items=sum(shared[len(tasks) :]))
                    continue
                replay.add(result)
                done += 1
                step.update(sum(shared[: len(tasks)]), items=sum(shared[len(tasks) :]))
            step.update(total, items=stats.facts, force=True)
        except BaseException:
            close_pool(staged)
            raise
    return staged


class _Replay:
    """Feeds range results, in file order, to the load's sink and stats, as one sequential parse would."""

    def __init__(
        self,
        plan: InputPlan,
        ranges: list[tuple[int, int, int | None]],
        sink: IssueSink,
        stats: ParseStats,
        staged: StagedInput,
    ) -> None:
        self.plan = plan
        self.ranges = ranges
        self.sink = sink
        self.stats = stats
        self.staged = staged

    def add(self, result: _RangeResult) -> None:
        i, start, _ = self.ranges[result.index]
        input_file = self.plan.files[i]
        last_of_file = result.index + 1 == len(self.ranges) or self.ranges[result.index + 1][0] != i
        sink = self.sink
        if start == 0:
            sink.start_file(input_file.description)
        shift = count_lines(input_file.path, start) if start and result.issues else 0
        told = False
        for good_before, issue in result.issues:
            if good_before and not told:
                sink.good()
                told = True
            if shift and isinstance(issue.line, int):
                issue = replace(issue, line=issue.line + shift)
            sink.add(issue)
        sink.add_counted(result.issue_count - len(result.issues))
        if result.good and not told:
            sink.good()
        self.stats.facts += result.facts
        self.stats.labels += result.labels
        self.stats.dropped.update(result.dropped)
        self.staged.multiline = self.staged.multiline or result.multiline
        for mine, theirs in zip(self.staged.relation_counts, result.relation_counts, strict=True):
            mine.update(theirs)
        if last_of_file:
            sink.finish_file(str(input_file.path))


def close_pool(staged: StagedInput) -> None:
    if staged.pool is not None:
        staged.pool.terminate()
        staged.pool.join()
        staged.pool = None
