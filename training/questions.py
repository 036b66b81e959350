"""Labelled questions a KG's models learn from: read from the files a user gives, in one shape.

``kgqa train all --kg NAME --questions PATH`` reads, from each PATH (a file, or a folder searched for
question files), every question whose split is not a test split:

- **bracket TSV** (``.txt``): ``question with [topic entity]<TAB>answer|answer[<TAB>chain]``, the format of
  MetaQA and BeamQA. The chain column is ``rel|rel_inv`` (BeamQA: ``_inv`` walks against the KG's
  direction) or ``rel>|rel<``.
- **JSON lines** (``.jsonl``): objects with ``question``, the topic as ``topic_ids`` or ``topics`` (names),
  the answers as ``answer_ids`` or ``answers`` (names), optionally
  ``relation_path`` ``[[rel, "out"|"in"], ...]``.
  A row whose ``part`` is ``heldout`` is never read: held-out questions are for reporting only.
- **WebQSP-style CSV** (``.csv`` with a header naming a question column, a topic column and an answer
  column): topic and answers as Freebase mids, the chain ``a.b.c|d.e.f`` meaning the compound relation
  ``a.b.c..d.e.f`` when the KG has it.

A folder is searched recursively; files whose name says ``test`` are never read, nor files that are not
questions (a KB, a type list). The same question text read twice (MetaQA's questions, and BeamQA's copy of
them with chains) is one question, with its chain. Names are resolved to the KG's entity ids in the database
(a name several entities share stands for all of them); a question whose topic the KG lacks is dropped and
counted. Where no chain is given, it is inferred from the KG: the chain of at most two steps from the
topic whose walk best matches the answers (:mod:`kgqa.training.chain_inference`).
"""

from __future__ import annotations

import csv
import json
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from kgqa.core.chains import Chain, Step, parse_chain_key
from kgqa.core.errors import BadInput
from kgqa.core.text import BRACKET, bracketed
from kgqa.graph.cypher import render
from neo4j import Driver, Record, RoutingControl

QUESTION_SUFFIXES = (".txt", ".tsv", ".jsonl", ".csv")
_TEST_NAME = re.compile(r"(^|[^a-z])test([^a-z]|$)", re.IGNORECASE)
_SPACES = re.compile(r"\s+")


@dataclass(frozen=True)
class LabelledQuestion:
    """One question with what answers it: the shape every trainer reads, labelled or synthesised."""

    text: str  # as a user would type it (brackets removed)
    topic_ids: tuple[str, ...]  # the KG's entity ids of the topic entities (several when a name is shared)
    topic_spans: tuple[str, ...]  # the words of ``text`` that name the topic entities
    answer_ids: tuple[str, ...]
    chain: Chain | None  # the relation chain from the topic to the answers, when known
    source: str  # "file:line", or "synthesised"
    wording: str = ""  # the wording family (synthesised questions), for splits that keep wordings apart

    @property
    def hops(self) -> int | None:
        return len(self.chain) if self.chain else None


def bracketed_text(q: LabelledQuestion) -> str:
    """The question with the first occurrence of each topic span in ``[brackets]``, as MetaQA writes its
    questions (what :func:`kgqa.core.text.mask_topic` masks); the text as is when no span is found in it."""
    text = q.text
    for span in sorted({s for s in q.topic_spans if s}, key=len, reverse=True):
        at = text.lower().find(span.lower())
        if at >= 0 and "[" not in text[at : at + len(span)]:
            text = f"{text[:at]}[{text[at : at + len(span)]}]{text[at + len(span) :]}"
    return text


@dataclass
class ReadReport:
    """What reading the question files did: counts, and the reason for every question dropped."""

    files: list[str] = field(default_factory=list)
    read: int = 0
    kept: int = 0
    dropped: Counter[str] = field(default_factory=Counter)
    chains_given: int = 0
    chains_inferred: int = 0

    def summary(self) -> str:
        dropped = ", ".join(f"{n} {why}" for why, n in self.dropped.most_common())
        return (
            f"{self.kept} of {self.read} questions from {len(self.files)} files "
            f"({self.chains_given} with their chain, {self.chains_inferred} inferred)"
            + (f"; dropped: {dropped}" if dropped else "")
        )


@dataclass(frozen=True)
class _Raw:
    """A question as read, before its names meet the KG."""

    text: str
    topics: tuple[str, ...]  # names or ids, as the file gives them
    topics_are_ids: bool
    answers: tuple[str, ...]
    answers_are_ids: bool
    chain: Chain | None
    chain_text: str  # the chain as written, when it names relations the KG may lack
    source: str
    spans: tuple[str, ...] = ()


def question_files(paths: Sequence[Path | str]) -> list[Path]:
    """The question files under ``paths`` (test splits never), sorted; a one-line error for a path that does
    not exist or holds none."""
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            raise BadInput(f"--questions {path}: no such file or folder")
        candidates = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
        here = [p for p in candidates if _is_question_file(p, given=not path.is_dir())]
        if not here:
            raise BadInput(f"--questions {path}: no question file found (see `kgqa train all --help`)")
        found += here
    return sorted(dict.fromkeys(found))


def _is_question_file(path: Path, given: bool) -> bool:
    if path.suffix.lower() not in QUESTION_SUFFIXES:
        return False
    if _TEST_NAME.search(path.stem):
        if given:
            raise BadInput(f"--questions {path}: a test split is for final reporting only, never training")
        return False
    first = _first_line(path)
    if path.suffix.lower() == ".jsonl":
        return first.startswith("{") and '"question"' in first
    if path.suffix.lower() == ".csv":
        header = {c.strip().lower() for c in first.split(",")}
        return bool(header & set(_CSV_COLUMNS["question"]))
    return "\t" in first and bool(BRACKET.search(first.split("\t", 1)[0]))


def _first_line(path: Path) -> str:
    try:
        with path.open(encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if line.strip():
                    return line.strip("\ufeff\r\n")
    except OSError:
        return ""
    return ""


def read_raw(path: Path) -> Iterator[_Raw]:
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        yield from _read_jsonl(path)
    elif suffix == ".csv":
        yield from _read_csv(path)
    else:
        yield from _read_bracket_tsv(path)


def _read_bracket_tsv(path: Path) -> Iterator[_Raw]:
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            line = line.rstrip("\r\n")
            if not line.strip():
                continue
            fields = line.split("\t")
            if len(fields) < 2:
                raise BadInput(f"{path}:{number}: expected 'question<TAB>answer|answer...[<TAB>chain]'")
            topics = tuple(bracketed(fields[0]))
            chain = _bracket_chain(fields[2], path, number) if len(fields) > 2 and fields[2].strip() else None
            yield _Raw(
                text=_plain(fields[0]),
                topics=topics,
                topics_are_ids=False,
                answers=tuple(a.strip() for a in fields[1].split("|") if a.strip()),
                answers_are_ids=False,
                chain=chain,
                chain_text="",
                source=f"{path}:{number}",
                spans=topics,
            )


def _bracket_chain(text: str, path: Path, number: int) -> Chain:
    if ">" in text or "<" in text:
        try:
            return parse_chain_key(text.strip())
        except ValueError as exc:
            raise BadInput(f"{path}:{number}: {exc}") from None
    steps: list[Step] = []
    for part in text.strip().split("|"):
        if not part:
            raise BadInput(f"{path}:{number}: empty step in chain {text!r}")
        steps.append((part[: -len("_inv")], "in") if part.endswith("_inv") else (part, "out"))
    return tuple(steps)


def _read_jsonl(path: Path) -> Iterator[_Raw]:
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                if not isinstance(row, dict) or not isinstance(row.get("question"), str):
                    raise ValueError("an object with a 'question' string")
            except ValueError as exc:
                raise BadInput(f"{path}:{number}: not a question object ({exc})") from None
            if row.get("part") == "heldout":
                continue
            ids = row.get("topic_ids")
            topics = ids if ids else row.get("topics") or bracketed(row["question"])
            answer_ids = row.get("answer_ids")
            chain = None
            if isinstance(row.get("relation_path"), list) and row["relation_path"]:
                try:
                    chain = tuple((str(r), str(w)) for r, w in row["relation_path"])
                except (TypeError, ValueError):
                    raise BadInput(f"{path}:{number}: relation_path must be [[relation, way], ...]") from None
                if any(w not in ("out", "in") for _r, w in chain):
                    raise BadInput(f"{path}:{number}: a relation_path step's way is 'out' or 'in'")
            yield _Raw(
                text=_plain(row["question"]),
                topics=tuple(str(t) for t in topics),
                topics_are_ids=bool(ids),
                answers=tuple(str(a) for a in (answer_ids or row.get("answers") or ())),
                answers_are_ids=bool(answer_ids),
                chain=chain,
                chain_text="",
                source=f"{path}:{number}",
                spans=tuple(str(t) for t in (row.get("topics") or ())) if not ids else (),
            )


_CSV_COLUMNS = {
    "question": ("question", "questions", "query", "qa"),
    "topic": ("head", "topic", "topic_entity", "topic_mid", "head_mid", "entity"),
    "answers": ("answer", "answers", "answer_mids", "ans", "tail"),
    "chain": ("relation", "relations", "rel", "path", "chain", "inferential_chain"),
}


def _read_csv(path: Path) -> Iterator[_Raw]:
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        header = {name.strip().lower(): name for name in reader.fieldnames or []}
        columns = {
            what: next((header[c] for c in names if c in header), None)
            for what, names in _CSV_COLUMNS.items()
        }
        missing = [what for what in ("question", "topic", "answers") if columns[what] is None]
        if missing:
            raise BadInput(f"{path}:1: the header names no {' or '.join(missing)} column")
        for number, row in enumerate(reader, start=2):
            question = (row.get(columns["question"]) or "").strip()
            topic = (row.get(columns["topic"]) or "").strip()
            if not question or not topic:
                continue
            answers = re.split(r"[|,;\s]+", (row.get(columns["answers"]) or "").strip())
            chain_text = (row.get(columns["chain"]) or "").strip(" []'\"") if columns["chain"] else ""
            yield _Raw(
                text=_plain(question),
                topics=(_mid(topic),),
                topics_are_ids=True,
                answers=tuple(_mid(a) for a in answers if a),
                answers_are_ids=True,
                chain=None,
                chain_text=chain_text,
                source=f"{path}:{number}",
            )


def _mid(text: str) -> str:
    """``/m/0abc`` and ``m.0abc`` both as the id the Freebase loader gives, ``m.0abc``."""
    text = text.strip()
    if text.startswith("/m/") or text.startswith("/g/"):
        return text[1:].replace("/", ".", 1)
    return text


def _plain(question: str) -> str:
    return _SPACES.sub(" ", question.replace("[", " ").replace("]", " ")).strip()


# --- resolution against the KG ------------------------------------------------------------------------------

NameIndex = Callable[[Sequence[str]], dict[str, list[str]]]


def name_index(driver: Driver, kg: str) -> NameIndex:
    """name -> the ids of the KG's entities of that name (ids are accepted as names too), in batches."""
    cache: dict[str, list[str]] = {}

    def lookup(names: Sequence[str]) -> dict[str, list[str]]:
        missing = [n for n in dict.fromkeys(names) if n not in cache]
        for start in range(0, len(missing), 5000):
            batch = missing[start : start + 5000]
            records = driver.execute_query(
                render("training/entity_ids"), {"kg": kg, "names": batch}, routing_=RoutingControl.READ
            ).records
            found = {str(r["name"]): [str(i) for i in r["ids"]] for r in records}
            for name in batch:
                cache[name] = found.get(name, [])
        return {n: cache[n] for n in names}

    return lookup


def _by_ids(driver: Driver, template: str, kg: str, ids: Iterable[str]) -> Iterator[Record]:
    """The records of ``template`` for each distinct id, asked 5000 ids at a time: a whole dataset's ids in
    one query would be one huge parameter list."""
    wanted = list(dict.fromkeys(ids))
    for start in range(0, len(wanted), 5000):
        yield from driver.execute_query(
            render(template), {"kg": kg, "ids": wanted[start : start + 5000]}, routing_=RoutingControl.READ
        ).records


def known_ids(driver: Driver, kg: str, ids: Iterable[str]) -> set[str]:
    return {str(r["id"]) for r in _by_ids(driver, "training/known_ids", kg, ids)}


def entity_names(driver: Driver, kg: str, ids: Iterable[str]) -> dict[str, str]:
    """The name of each of ``ids`` that is an entity of ``kg``."""
    return {str(r["id"]): str(r["name"]) for r in _by_ids(driver, "training/entity_names", kg, ids)}


def kg_relations(driver: Driver, kg: str) -> set[str]:
    records = driver.execute_query(render("gsr/relations"), {"kg": kg}, routing_=RoutingControl.READ).records
    return {str(r["name"]) for r in records}


def webqsp_chain(text: str, relations: set[str]) -> Chain | None:
    """A WebQSP chain ``a.b.c|d.e.f``: the compound relation ``a.b.c..d.e.f`` when the KG has it (FB15k-237
    joins CVT paths), else the relations one by one, each in whichever direction the KG stores it."""
    parts = [p.strip() for p in text.split("|") if p.strip()]
    if not parts:
        return None
    joined = "..".join(parts)
    if joined in relations:
        return ((joined, "out"),)
    steps: list[Step] = []
    for part in parts:
        if part not in relations:
            return None
        steps.append((part, "out"))
    return tuple(steps)


def _spans_from_names(driver: Driver, kg: str, questions: list[LabelledQuestion]) -> list[LabelledQuestion]:
    """Questions that name their topic by id (WebQSP's mids) get the words of the text that say its name,
    where the text says it: what a model masks, as the linker's span is masked at query time."""
    wanted = [q for q in questions if not any(q.topic_spans)]
    if not wanted:
        return questions
    names = entity_names(driver, kg, (i for q in wanted for i in q.topic_ids))
    out = []
    for q in questions:
        if any(q.topic_spans):
            out.append(q)
            continue
        lowered = q.text.lower()
        spans = []
        for entity in q.topic_ids:
            name = names.get(entity, "")
            at = lowered.find(name.lower()) if name else -1
            if at >= 0:
                spans.append(q.text[at : at + len(name)])
        out.append(replace(q, topic_spans=tuple(spans)))
    return out


def read_labelled_questions(
    driver: Driver,
    kg: str,
    paths: Sequence[Path | str],
    infer: bool = True,
    progress: Callable[[str], None] = lambda _m: None,
) -> tuple[list[LabelledQuestion], ReadReport]:
    """Every labelled question under ``paths``, resolved against KG ``kg``; the report says what was
    dropped and why."""
    from kgqa.training.chain_inference import infer_chains

    report = ReadReport()
    files = question_files(paths)
    report.files = [str(f) for f in files]
    merged: dict[str, _Raw] = {}
    for path in files:
        for raw in read_raw(path):
            report.read += 1
            key = raw.text.lower()
            if key in merged:  # a copy of the question (with its chain), or another row of its answers
                old = merged[key]
                answers = tuple(dict.fromkeys(old.answers + raw.answers))
                if old.answers_are_ids != raw.answers_are_ids:
                    answers = old.answers
                merged[key] = replace(old, chain=old.chain or raw.chain, answers=answers)
                continue
            merged[key] = raw
    progress(f"read {report.read} questions from {len(files)} files ({len(merged)} distinct)")
    relations = kg_relations(driver, kg)
    names = name_index(driver, kg)
    wanted_names = [t for r in merged.values() if not r.topics_are_ids for t in r.topics]
    wanted_names += [a for r in merged.values() if not r.answers_are_ids for a in r.answers]
    by_name = names(wanted_names)
    ids_known = known_ids(
        driver,
        kg,
        [t for r in merged.values() if r.topics_are_ids for t in r.topics]
        + [a for r in merged.values() if r.answers_are_ids for a in r.answers],
    )
    resolved: list[LabelledQuestion] = []
    for raw in merged.values():
        if raw.topics_are_ids:
            topic_ids = [t for t in raw.topics if t in ids_known]
        else:
            topic_ids = [i for t in raw.topics for i in by_name.get(t, [])]
        if not raw.topics:
            report.dropped["without a topic entity"] += 1
            continue
        if not topic_ids:
            report.dropped["whose topic the KG lacks"] += 1
            continue
        if raw.answers_are_ids:
            answer_ids = [a for a in raw.answers if a in ids_known]
        else:
            answer_ids = [i for a in raw.answers for i in by_name.get(a, [])]
        chain = raw.chain
        if chain is None and raw.chain_text:
            chain = webqsp_chain(raw.chain_text, relations)
        if chain is not None and any(r not in relations for r, _w in chain):
            chain = None
        if not answer_ids and chain is None:
            report.dropped["whose answers the KG lacks"] += 1
            continue
        spans = raw.spans or ()
        resolved.append(
            LabelledQuestion(
                text=raw.text,
                topic_ids=tuple(dict.fromkeys(topic_ids)),
                topic_spans=tuple(spans),
                answer_ids=tuple(dict.fromkeys(answer_ids)),
                chain=chain,
                source=raw.source,
            )
        )
    resolved = _spans_from_names(driver, kg, resolved)
    report.chains_given = sum(q.chain is not None for q in resolved)
    if infer:
        missing = [q for q in resolved if q.chain is None]
        if missing:
            progress(f"inferring the relation chain of {len(missing)} questions from the KG")
            chains = infer_chains(driver, kg, missing)
            report.chains_inferred = sum(c is not None for c in chains)
            by_key = {id(q): c for q, c in zip(missing, chains, strict=True)}
            resolved = [replace(q, chain=by_key[id(q)]) if id(q) in by_key else q for q in resolved]
    resolved = [q for q in resolved if q.chain is not None or q.answer_ids]
    report.kept = len(resolved)
    return resolved, report
