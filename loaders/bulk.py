"""The bulk write path: stream a dump into ``neo4j-admin database import`` CSVs, then import them offline.

1. Parsing writes facts, entity ids and names to spool files, hash-partitioned (constant memory). A big
   uncompressed line-based file is cut into byte ranges at line boundaries and the ranges are parsed by a
   pool of worker processes, one per core; a malformed line is still reported with its file:line (line
   numbers are shifted from the range's to the file's), in file order, and ``--strict`` still stops at the
   first one. Facts are staged as the CSV rows neo4j-admin reads.
2. Each partition is then deduplicated in memory (no sort: neo4j-admin reads rows in any order), also in
   parallel: its distinct facts become one relationships CSV part, its distinct ids one entities CSV part,
   named as on the online path (the last English label in file order wins; an entity without one gets its
   default name). Facts are partitioned by head and ids by id, so a partition holds every copy of its rows.
3. The managed server is stopped, ``neo4j-admin database import full`` writes the ``neo4j`` database from the
   CSVs, and the server is started again. Neo4j Community has one user database and import needs it offline,
   so the bulk path only runs against the managed local server and only into a database that holds nothing
   but (an earlier load of) the same KG.
4. The shared finishing steps (schema, relation nodes, embeddings, indexes, counts) then run online,
   exactly as after an online load; the relation counts come from step 2 instead of a scan of the graph.
"""

from __future__ import annotations

import csv
import io
import math
import multiprocessing
import os
import re
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from multiprocessing.pool import Pool
from pathlib import Path
from typing import Any

from kgqa.core.errors import KgqaError
from kgqa.loaders.inputs import compressed, count_lines, line_ranges
from kgqa.loaders.plan import InputPlan, ParseContext, Parser
from kgqa.loaders.progress import Progress
from kgqa.loaders.records import Fact, Issue, IssueSink, Label, ParseStats, Record
from kgqa.loaders.spool import escape, unescape

DATABASE = "neo4j"
ENTITY_HEADER = "id:ID(Entity),kg,name\n"
RELATIONSHIP_HEADER = ":START_ID(Entity),:TYPE,:END_ID(Entity)\n"
# Input from this size on is parsed by worker processes (smaller input: in this process, which is faster
# than starting them); a file is cut into ranges of about RANGE_BYTES, so that a worker that finishes early
# takes the next one; a partition holds about PARTITION_BYTES of input.
PARALLEL_MIN_BYTES = 32 << 20
RANGE_BYTES = 256 << 20
PARTITION_BYTES = 256 << 20
SEEN_IDS = 2_000_000  # ids a worker remembers having staged (an id seen again is not staged again)
_FLUSH = 50_000  # rows buffered per spool file
_CSV_SPECIAL = re.compile(r'[",\r\n]')


def csv_field(value: str) -> str:
    """One field as neo4j-admin's CSV reader reads it back: quoted (quotes doubled) only when needed."""
    if _CSV_SPECIAL.search(value) is None:
        return value
    return '"' + value.replace('"', '""') + '"'


@dataclass
class BulkFiles:
    """The import CSVs. ``entities_csv`` and ``relationships_csv`` start with the header line (and hold
    rows too when written by :func:`prepare`); the ``*_parts`` files hold further rows, without header."""

    entities_csv: Path
    relationships_csv: Path
    entities: int
    relationships: int
    labels_without_facts: int
    multiline: bool
    entity_parts: list[Path] = field(default_factory=list)
    relationship_parts: list[Path] = field(default_factory=list)
    relation_counts: dict[str, int] = field(default_factory=dict)  # distinct triples per relation


# ----------------------------------------------------------------------------- staging
class PartitionStager:
    """Writes parsed records to spool files ``<kind>-<prefix>-<partition>`` under ``staging``.

    - facts: the relationships CSV row ``head,relation,tail``, in the partition of the head's hash (every copy
      of a triple, and every triple of a head, lands in the same one); a fact with a line break in a field
      goes, escaped (see spool.py), to the ``mfacts`` files instead;
    - ids: each escaped entity id, in the partition of its hash (an id already staged by this stager, or by
      the same worker process, is left out: ``seen``);
    - labels: ``escaped id<TAB>escaped name`` in file order, in the partition of the id's hash.
    """

    KINDS = ("facts", "mfacts", "ids", "labels")

    def __init__(self, staging: Path, prefix: str, partitions: int, seen: set[str] | None = None) -> None:
        self.staging = staging
        self.prefix = prefix
        self.partitions = partitions
        self.seen: set[str] = set() if seen is None else seen
        self.facts_seen = 0
        self.labels_seen = 0
        self.relation_counts: list[Counter[str]] = [Counter() for _ in range(partitions)]
        self.multiline = False
        self._buffers = {kind: [[] for _ in range(partitions)] for kind in self.KINDS}
        self._files: dict[tuple[str, int], Any] = {}
        staging.mkdir(parents=True, exist_ok=True)

    def add(self, record: Record) -> None:
        if type(record) is Fact:
            self.add_fact(*record)
        else:
            assert isinstance(record, Label)
            self.add_label(record.entity, record.name)

    def add_fact(self, head: str, relation: str, tail: str) -> None:
        self.facts_seen += 1
        partitions = self.partitions
        kind = "facts"
        if _CSV_SPECIAL.search(head + relation + tail) is None:
            row = f"{head},{relation},{tail}\n".encode()
        elif any("\n" in f or "\r" in f for f in (head, relation, tail)):
            self.multiline = True
            row = f"{escape(head)}\t{escape(relation)}\t{escape(tail)}\n".encode()
            kind = "mfacts"
        else:
            row = f"{csv_field(head)},{csv_field(relation)},{csv_field(tail)}\n".encode()
        p = _partition(head, partitions)
        buffer = self._buffers[kind][p]
        buffer.append(row)
        if len(buffer) >= _FLUSH:
            self._flush(kind, p)
        counts = self.relation_counts[p]
        counts[relation] = counts.get(relation, 0) + 1
        seen = self.seen
        if head not in seen:
            self._add_id(head)
        if tail not in seen:
            self._add_id(tail)

    def _add_id(self, entity: str) -> None:
        seen = self.seen
        if len(seen) >= SEEN_IDS:
            seen.clear()
        seen.add(entity)
        row = (escape(entity) + "\n").encode()
        p = _partition(entity, self.partitions)
        buffer = self._buffers["ids"][p]
        buffer.append(row)
        if len(buffer) >= _FLUSH:
            self._flush("ids", p)

    def add_label(self, entity: str, name: str) -> None:
        self.labels_seen += 1
        p = _partition(entity, self.partitions)
        buffer = self._buffers["labels"][p]
        buffer.append(f"{escape(entity)}\t{escape(name)}\n".encode())
        if len(buffer) >= _FLUSH:
            self._flush("labels", p)

    def _flush(self, kind: str, partition: int) -> None:
        buffer = self._buffers[kind][partition]
        key = (kind, partition)
        fh = self._files.get(key)
        if fh is None:
            fh = self._files[key] = open(self.spool(kind, partition), "wb")  # noqa: SIM115 - see close()
        fh.write(b"".join(buffer))
        buffer.clear()

    def spool(self, kind: str, partition: int) -> Path:
        return spool_path(self.staging, kind, self.prefix, partition)

    def close(self) -> None:
        for kind, buffers in self._buffers.items():
            for partition, buffer in enumerate(buffers):
                if buffer:
                    self._flush(kind, partition)
        for fh in self._files.values():
            fh.close()
        self._files.clear()


def _partition(entity: str, partitions: int) -> int:
    """The partition of an entity: of its ids and labels, and of the facts it is the head of."""
    return zlib.crc32(entity.encode()) % partitions if partitions > 1 else 0


def spool_path(staging: Path, kind: str, prefix: str, partition: int) -> Path:
    return staging / f"{kind}-{prefix}-{partition:03d}"


class BulkStager(PartitionStager):
    """One partition, written by this process: what :func:`prepare` reads."""

    def __init__(self, staging: Path) -> None:
        super().__init__(staging, "r0000", 1)


def prepare(staging: Path, kg: str, default_name: Callable[[str], str], progress: Progress) -> BulkFiles:
    """The import CSVs from what one :class:`BulkStager` staged: deduplicated, sorted (small inputs: the
    files are then the same from run to run), each with its header."""
    with progress.step("deduplicating", unit="triples") as step:
        part = _prepare_partition(_PartitionJob(staging, 0, ["r0000"], kg, default_name, sort=True))
        step.update(1, items=part.relationships, force=True)
    files = _bulk_files(staging, [part], sort=True)
    files.relation_counts = dict(part.relation_counts or {})
    _remove_spools(staging)
    return files


# ----------------------------------------------------------------------------- parallel parse
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


def _context() -> Any:
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
            raise KgqaError(f"KGQA_BULK_WORKERS must be a whole number of processes, got {value!r}")
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
        context = _context()
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


# ----------------------------------------------------------------------------- deduplicate, CSVs
@dataclass(frozen=True)
class _PartitionJob:
    staging: Path
    partition: int
    prefixes: list[str]
    kg: str
    default_name: Callable[[str], str]
    sort: bool = False


@dataclass
class _PartitionResult:
    partition: int
    entities_csv: Path
    relationships_csv: Path
    entities: int
    relationships: int
    unmatched_labels: int
    multiline: bool
    relation_counts: Counter[str] | None  # None: no duplicate facts, the staged counts are exact


def _read_lines(path: Path) -> list[bytes]:
    """The lines of a spool file of CSV rows (no carriage return in them: see PartitionStager), newline
    kept."""
    try:
        return path.read_bytes().splitlines(keepends=True)
    except FileNotFoundError:
        return []


def _read_rows(path: Path) -> list[bytes]:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    rows = data.split(b"\n")
    rows.pop()  # after the last newline
    return rows


def _prepare_partition(job: _PartitionJob) -> _PartitionResult:
    staging, p = job.staging, job.partition
    multiline = False
    facts: set[bytes] = set()
    staged = 0
    for prefix in job.prefixes:  # rows with their newline: written back as they are
        rows = _read_lines(spool_path(staging, "facts", prefix, p))
        staged += len(rows)
        facts.update(rows)
    for prefix in job.prefixes:  # facts with a line break in a field: CSV rows that span lines
        for row in _read_rows(spool_path(staging, "mfacts", prefix, p)):
            fields = [unescape(f) for f in row.decode("utf-8").split("\t")]
            staged += 1
            facts.add((",".join(csv_field(f) for f in fields) + "\n").encode())
            multiline = True
    counts: Counter[str] | None = None
    if staged != len(facts) or job.sort:  # duplicates (or a small input): count the distinct facts
        counts = Counter(_relation_of(row) for row in facts)
    relationships_csv = spool_path(staging, "relationships", "csv", p)
    with open(relationships_csv, "wb") as out:
        if job.sort:
            out.write(RELATIONSHIP_HEADER.encode())
        # A head's relationships together: neo4j-admin then imports and links them faster (10M triples:
        # 61 CPU-s for rows grouped by head, 77 CPU-s for the same rows in hash order). Grouping is one
        # dict pass; sorted() took ~4 s per million rows. Small inputs are sorted, for stable files.
        heads: list[bytes] = []
        if job.sort:
            out.write(b"".join(sorted(facts)))
        else:
            for group in _by_head(facts, heads):
                out.write(b"".join(group))
    relationships = len(facts)
    del facts

    ids: set[str] = set()
    for prefix in job.prefixes:
        ids.update(row.decode("utf-8") for row in _read_rows(spool_path(staging, "ids", prefix, p)))
    names: dict[str, str] = {}
    unmatched = 0
    for prefix in job.prefixes:  # in file order: the last label of an id wins
        for row in _read_rows(spool_path(staging, "labels", prefix, p)):
            key, _, name = row.decode("utf-8").partition("\t")
            if key in ids:
                names[key] = name
            else:
                unmatched += 1
    kg = csv_field(job.kg)
    entities_csv = spool_path(staging, "entities", "csv", p)
    default_name = job.default_name
    with open(entities_csv, "w", encoding="utf-8", newline="") as out:
        if job.sort:
            out.write(ENTITY_HEADER)
        lines = []
        for key in sorted(ids, key=unescape) if job.sort else _heads_first(ids, heads):
            entity = unescape(key)
            name = unescape(names[key]) if key in names else default_name(entity)
            if "\n" in entity or "\r" in entity or "\n" in name or "\r" in name:
                multiline = True
            lines.append(f"{csv_field(entity)},{kg},{csv_field(name)}\n")
            if len(lines) >= _FLUSH:
                out.write("".join(lines))
                lines.clear()
        out.write("".join(lines))
    return _PartitionResult(
        p, entities_csv, relationships_csv, len(ids), relationships, unmatched, multiline, counts
    )


def _by_head(rows: Iterable[bytes], heads: list[bytes]) -> Iterator[list[bytes]]:
    """The rows in batches of up to _FLUSH rows, each head's rows next to each other; ``heads`` receives the
    heads in the order written (a quoted head is keyed by its row up to the first comma, which may be inside
    the quotes: such heads, rare, may share a group, which is harmless)."""
    groups: dict[bytes, list[bytes]] = {}
    for row in rows:
        key = row[: row.find(b",")]
        try:
            groups[key].append(row)
        except KeyError:
            groups[key] = [row]
    heads.extend(groups)
    batch: list[bytes] = []
    for group in groups.values():
        batch.extend(group)
        if len(batch) >= _FLUSH:
            yield batch
            batch = []
    if batch:
        yield batch


def _heads_first(ids: set[str], heads: list[bytes]) -> Iterator[str]:
    """The escaped ids, the partition's heads first in the order their relationships were written: node ids
    then grow along the relationships file, so neo4j-admin writes and links each node's relationships
    close to the last (the unpartitioned path, whose files were sorted, had that order by construction)."""
    first: set[str] = set()
    for head in heads:
        if head[:1] == b'"':
            continue
        key = escape(head.decode("utf-8"))
        if key in ids and key not in first:
            first.add(key)
            yield key
    for key in ids:
        if key not in first:
            yield key


def _relation_of(row: bytes) -> str:
    if b'"' not in row:
        return row.split(b",", 2)[1].decode("utf-8")
    return next(csv.reader(io.StringIO(row.decode("utf-8"), newline="")))[1]


def finish(staged: StagedInput, kg: str, default_name: Callable[[str], str], progress: Progress) -> BulkFiles:
    """Deduplicates each partition and writes the import CSVs (in the worker pool when there is one, which
    is then closed)."""
    sort = staged.sort and staged.pool is None and staged.partitions == 1
    jobs = [
        _PartitionJob(staged.staging, p, staged.prefixes, kg, default_name, sort)
        for p in range(staged.partitions)
    ]
    parts: list[_PartitionResult] = []
    with progress.step("deduplicating", total=len(jobs), unit="triples") as step:
        if staged.pool is None:
            for job in jobs:
                parts.append(_prepare_partition(job))
                step.update(len(parts), items=sum(p.relationships for p in parts))
        else:
            pool = staged.pool
            try:
                for part in pool.imap_unordered(_prepare_partition, jobs):
                    parts.append(part)
                    step.update(len(parts), items=sum(p.relationships for p in parts))
                pool.close()
            finally:
                pool.terminate()
                pool.join()
                staged.pool = None
        step.update(len(jobs), items=sum(p.relationships for p in parts), force=True)
    parts.sort(key=lambda part: part.partition)
    files = _bulk_files(staged.staging, parts, sort=sort)
    files.multiline = files.multiline or staged.multiline
    counts: Counter[str] = Counter()
    for part in parts:
        counts.update(
            part.relation_counts
            if part.relation_counts is not None
            else staged.relation_counts[part.partition]
        )
    files.relation_counts = dict(counts)
    _remove_spools(staged.staging)
    return files


def _bulk_files(staging: Path, parts: list[_PartitionResult], sort: bool) -> BulkFiles:
    if sort and len(parts) == 1:  # the one part already starts with its header
        entities_csv = staging / "entities.csv"
        relationships_csv = staging / "relationships.csv"
        parts[0].entities_csv.replace(entities_csv)
        parts[0].relationships_csv.replace(relationships_csv)
        entity_parts: list[Path] = []
        relationship_parts: list[Path] = []
    else:
        entities_csv = staging / "entities-header.csv"
        relationships_csv = staging / "relationships-header.csv"
        entities_csv.write_text(ENTITY_HEADER, encoding="utf-8")
        relationships_csv.write_text(RELATIONSHIP_HEADER, encoding="utf-8")
        entity_parts = [part.entities_csv for part in parts if part.entities]
        relationship_parts = [part.relationships_csv for part in parts if part.relationships]
    return BulkFiles(
        entities_csv=entities_csv,
        relationships_csv=relationships_csv,
        entities=sum(part.entities for part in parts),
        relationships=sum(part.relationships for part in parts),
        labels_without_facts=sum(part.unmatched_labels for part in parts),
        multiline=any(part.multiline for part in parts),
        entity_parts=entity_parts,
        relationship_parts=relationship_parts,
    )


def _remove_spools(staging: Path) -> None:
    for path in staging.iterdir():
        if path.name.split("-", 1)[0] in ("facts", "mfacts", "ids", "labels"):
            path.unlink(missing_ok=True)


def close_pool(staged: StagedInput) -> None:
    if staged.pool is not None:
        staged.pool.terminate()
        staged.pool.join()
        staged.pool = None


# ----------------------------------------------------------------------------- neo4j-admin
def import_args(files: BulkFiles, report: Path) -> list[str]:
    nodes = ",".join(str(p) for p in [files.entities_csv, *files.entity_parts])
    relationships = ",".join(str(p) for p in [files.relationships_csv, *files.relationship_parts])
    args = [
        "database",
        "import",
        "full",
        "--overwrite-destination=true",
        f"--nodes=Entity={nodes}",
        f"--relationships={relationships}",
        f"--report-file={report}",
        "--bad-tolerance=0",
        f"--multiline-fields={'true' if files.multiline else 'false'}",
    ]
    args += _tuning()
    return [*args, DATABASE]


def _tuning() -> list[str]:
    """neo4j-admin options from the environment: KGQA_IMPORT_OPTIONS, split on whitespace."""
    return os.environ.get("KGQA_IMPORT_OPTIONS", "").split()


def neo4j_import(run_admin: Callable[[list[str]], Any], files: BulkFiles, report: Path) -> str:
    """Runs ``neo4j-admin database import full`` (the server must be stopped); returns its summary line."""
    proc = run_admin(import_args(files, report))
    output = (proc.stdout or "") + (proc.stderr or "")
    if proc.returncode != 0:
        lines = [line.strip() for line in output.splitlines() if line.strip()]
        errors = [line for line in lines if "rror" in line or "xception" in line]
        reason = errors[0] if errors else (lines[-1] if lines else f"exit code {proc.returncode}")
        raise KgqaError(f"neo4j-admin database import failed: {reason} (report: {report})")
    done = [line.strip() for line in output.splitlines() if line.strip().startswith("IMPORT DONE")]
    return done[-1] if done else "import done"


def iter_rows(paths: Iterable[Path]) -> Iterator[list[str]]:
    """The CSV rows of the import files, headers included (tests and checks)."""
    for path in paths:
        with open(path, encoding="utf-8", newline="") as fh:
            yield from csv.reader(fh)
