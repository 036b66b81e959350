"""Benchmark readers for the native formats in ``../shared/data`` (see each folder's README).

- **MetaQA** (``metaqa/``): ``{h}-hop/vanilla/qa_{split}.txt`` lines ``question with
  [topic]<TAB>a1|a2|...``, the question types in ``{h}-hop/qa_{split}_qtype.txt`` aligned by line, and, when
  present, BeamQA's relation paths (``with_relation_paths_beamqa/{valid,test}_{h}hop.txt``, third column,
  aligned by line and checked by text). Gold triples are the KB triples (``kb_dedup.txt`` or ``kb.txt``) on
  the walks that follow the relation path from the topic entity to a gold answer without passing back
  through the topic entity (MetaQA's answer semantics).
- **WebQSP** (``webqsp/``): test is ``webqsp_test_aog.json`` (QuestionId, RawQuestion, answer names,
  topic_entity {mid: name}); ``webqsp_test_beamqa.txt`` gives the answer mids and, by its inferential chain,
  the hop count; the GPT-labelled relevant triples of SubgraphRAG
  (``subgraphrag_gpt_triples_webqsp_test.json``) are the gold triples. Questions without a gold answer are
  skipped and counted. Train is
  ``webqsp_train_beamqa.csv`` (topic mid, question, chain, answer mid; the answer's name comes from the KG);
  dev is the part of train that ``kgqa train all`` held out from every model of the KG asked.
- **CWQ** (``cwq/``, test only): ``cwq_test_tog.json`` (ID, question, topic_entity, one answer name) with
  the answer mids of ``ComplexWebQuestions_test.json``; the question type is ``compositionality_type``; gold
  triples as for WebQSP.
"""

from __future__ import annotations

import json
import random
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kgqa.core.config import shared_data_dir
from kgqa.core.errors import BadInput
from kgqa.core.text import BRACKET, normalize_answer
from kgqa.core.types import Triplet
from kgqa.evaluation import metaqa

DATASETS = ("metaqa", "webqsp", "cwq")
SPLITS = {"metaqa": metaqa.SPLITS, "webqsp": ("train", "dev", "test"), "cwq": ("test",)}


@dataclass(frozen=True)
class EvalQuestion:
    id: str
    dataset: str
    split: str
    question: str
    answers: tuple[str, ...]
    hops: int | None = None
    qtype: str | None = None
    topic_entities: tuple[tuple[str, str], ...] = ()  # (id, name) pairs the dataset gives
    relation_path: tuple[str, ...] | None = None
    answer_ids: tuple[str, ...] = ()


@dataclass
class Dataset:
    name: str
    split: str
    path: Path
    questions: list[EvalQuestion]
    notes: list[str] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)
    gold_triples: Callable[[EvalQuestion], list[Triplet] | None] = lambda _q: None


def load_dataset(
    name: str,
    split: str,
    path: Path | None = None,
    hops: Sequence[int] | None = None,
    limit: int | None = None,
    seed: int = 0,
) -> Dataset:
    """The questions of ``name``/``split``, in file order.

    With ``limit``, a sample of that many drawn with ``seed`` (the files are grouped by question type, so the
    first N would all be one type); for MetaQA the limit is spread evenly over ``hops``.
    """
    if name not in DATASETS:
        raise BadInput(f"unknown dataset {name!r}; choose one of {', '.join(DATASETS)}")
    if split not in SPLITS[name]:
        raise BadInput(f"{name} has no {split!r} split here; available: {', '.join(SPLITS[name])}")
    root = Path(path) if path is not None else shared_data_dir() / name
    if not root.is_dir():
        raise BadInput(f"{name} data not found at {root} (use --path DIR or set KGQA_SHARED_DATA)")
    if limit is not None and limit < 1:
        raise BadInput(f"--limit must be at least 1, got {limit}")
    if name == "metaqa":
        return read_metaqa(root, split, hops or metaqa.HOPS, limit, seed)
    if hops:
        raise BadInput(f"--hops applies to metaqa only, not {name}")
    if name == "webqsp":
        if split == "test":
            return read_webqsp(root, limit, seed)
        return read_webqsp_train(root, split, limit, seed)
    return read_cwq(root, limit, seed)


# --- MetaQA -------------------------------------------------------------------------------------------------


def _no_gold(_question: EvalQuestion) -> list[Triplet] | None:
    return None


def split_limit(limit: int | None, parts: int) -> list[int | None]:
    """``limit`` spread over ``parts`` as evenly as possible, the remainder to the first parts."""
    if limit is None:
        return [None] * parts
    base, extra = divmod(limit, parts)
    return [base + (1 if i < extra else 0) for i in range(parts)]


def sample_indices(total: int, limit: int | None, seed: int) -> list[int]:
    """``limit`` of ``range(total)`` drawn with ``seed``, in ascending order; all of them without a limit."""
    if limit is None or limit >= total:
        return list(range(total))
    return sorted(random.Random(seed).sample(range(total), limit))


def read_metaqa(
    root: Path, split: str, hops: Sequence[int], limit: int | None = None, seed: int = 0
) -> Dataset:
    bad = [h for h in hops if h not in metaqa.HOPS]
    if bad:
        raise BadInput(f"MetaQA has 1, 2 and 3 hops, not {bad}")
    notes: list[str] = []
    questions: list[EvalQuestion] = []
    for hop, cap in zip(sorted(set(hops)), split_limit(limit, len(set(hops))), strict=True):
        read = metaqa.read_questions(split, hop, root=root, allow_test=True)  # evaluation reports on test
        paths = _relation_paths(root, split, hop, read, notes)
        for index in sample_indices(len(read), cap, seed):
            q = read[index]
            questions.append(
                EvalQuestion(
                    id=f"metaqa-{split}-{hop}hop-{q.line + 1:05d}",
                    dataset="metaqa",
                    split=split,
                    question=q.question,
                    answers=q.answers,
                    hops=hop,
                    qtype=q.qtype,
                    topic_entities=((q.topic, q.topic),) if q.topic else (),
                    relation_path=paths.get(q.line),
                )
            )
    kb = _MetaqaKB.find(root)
    if kb is None:
        notes.append("no kb_dedup.txt/kb.txt: evidence triple recall not computed")
        gold: Callable[[EvalQuestion], list[Triplet] | None] = _no_gold
    else:
        if not any(q.relation_path for q in questions):
            notes.append("no BeamQA relation paths for this split: evidence triple recall not computed")
        else:
            notes.append(
                "gold triples: the KB triples on BeamQA's annotated relation path from the topic "
                "entity to the gold answers, never passing back through the topic entity"
            )
        gold = kb.gold_triples_for
    return Dataset("metaqa", split, root, questions, notes, {}, gold)


def _relation_paths(
    root: Path, split: str, hop: int, questions: Sequence[metaqa.MetaqaQuestion], notes: list[str]
) -> dict[int, tuple[str, ...]]:
    """BeamQA's relation path of each question, by its line (the file is line-aligned with the questions)."""
    name = {"dev": "valid", "test": "test"}[split]
    path = root / "with_relation_paths_beamqa" / f"{name}_{hop}hop.txt"
    if not path.is_file():
        return {}
    rows = metaqa.read_lines(path)
    out: dict[int, tuple[str, ...]] = {}
    mismatched = 0
    for q in questions:
        cols = rows[q.line].split("\t") if q.line < len(rows) else []
        if len(cols) >= 3 and cols[0].strip() == q.question and cols[2].strip():
            out[q.line] = tuple(r.strip() for r in cols[2].split("|"))
        else:
            mismatched += 1
    if mismatched:
        notes.append(
            f"{path.name}: {mismatched} lines do not align with the questions; no gold triples for them"
        )
    return out


class _MetaqaKB:
    """The MetaQA KB in memory, to follow relation paths for gold triples."""

    _cache: dict[Path, _MetaqaKB] = {}

    def __init__(self, path: Path) -> None:
        self.out: dict[tuple[str, str], list[str]] = defaultdict(list)
        self.inc: dict[tuple[str, str], list[str]] = defaultdict(list)
        seen: set[Triplet] = set()
        with path.open(encoding="utf-8") as handle:
            for line in handle:
                parts = line.rstrip("\n").split("|")
                if len(parts) != 3:
                    continue
                head, rel, tail = (p.strip() for p in parts)
                if (head, rel, tail) in seen:
                    continue
                seen.add((head, rel, tail))
                self.out[(head, rel)].append(tail)
                self.inc[(tail, rel)].append(head)

    @classmethod
    def find(cls, root: Path) -> _MetaqaKB | None:
        for name in ("kb_dedup.txt", "kb.txt"):
            path = (root / name).resolve()
            if path.is_file():
                if path not in cls._cache:
                    cls._cache[path] = cls(path)
                return cls._cache[path]
        return None

    def gold_triples_for(self, question: EvalQuestion) -> list[Triplet] | None:
        if not question.relation_path or not question.topic_entities:
            return None
        return self.gold_triples(question.topic_entities[0][1], question.relation_path, question.answers)

    def gold_triples(self, topic: str, path: Sequence[str], answers: Sequence[str]) -> list[Triplet]:
        """Triples on the walks topic -> ... -> gold answer along ``path`` that never revisit the topic."""
        layers: list[list[tuple[Triplet, str, str]]] = []  # per hop: (stored triple, from, to)
        frontier = {topic}
        for step in path:
            inverse = step.endswith("_inv")
            rel = step[: -len("_inv")] if inverse else step
            edges: list[tuple[Triplet, str, str]] = []
            for node in frontier:
                if inverse:
                    edges.extend(
                        ((other, rel, node), node, other)
                        for other in self.inc.get((node, rel), ())
                        if other != topic
                    )
                else:
                    edges.extend(
                        ((node, rel, other), node, other)
                        for other in self.out.get((node, rel), ())
                        if other != topic
                    )
            layers.append(edges)
            frontier = {to for _t, _f, to in edges}
        gold = {normalize_answer(a) for a in answers}
        keep = {node for node in frontier if normalize_answer(node) in gold}
        triples: set[Triplet] = set()
        for edges in reversed(layers):
            kept = [(t, frm) for t, frm, to in edges if to in keep]
            triples.update(t for t, _ in kept)
            keep = {frm for _, frm in kept}
        return sorted(triples)


# --- WebQSP and CWQ -----------------------------------------------------------------------------------------


def _load_json_records(path: Path) -> list[dict[str, Any]]:
    text = path.read_text(encoding="utf-8").strip()
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        data = [json.loads(line) for line in text.splitlines() if line.strip()]
    if isinstance(data, dict):
        data = list(data.values())
    if not isinstance(data, list):
        raise BadInput(f"{path}: expected a list of question records")
    return data


def _gpt_triples(path: Path) -> dict[str, list[Triplet]] | None:
    if not path.is_file():
        return None
    raw = json.loads(path.read_text(encoding="utf-8"))
    return {qid: [(str(h), str(r), str(t)) for h, r, t in triples] for qid, triples in raw.items()}


def _question_key(text: str) -> str:
    return normalize_answer(BRACKET.sub(" ", text))


def _topic_entities(rec: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """A WebQSP or CWQ record's topic_entity map {mid: name}, as (mid, name) pairs."""
    return tuple((str(k), str(v)) for k, v in dict(rec.get("topic_entity") or {}).items())


def _gpt_labelled_test(
    name: str,
    root: Path,
    records: list[dict[str, Any]],
    answers_of: Callable[[dict[str, Any]], tuple[str, ...]],
    question_of: Callable[[dict[str, Any], tuple[str, ...]], EvalQuestion],
    notes: list[str],
    limit: int | None,
    seed: int,
) -> Dataset:
    """A test split whose gold triples are SubgraphRAG's GPT-labelled ones (WebQSP, CWQ), sampled; records
    without a gold answer are skipped and counted. The last note speaks of those triples: it says so when
    their file is missing."""
    skipped = 0
    questions: list[EvalQuestion] = []
    for rec in records:
        answers = answers_of(rec)
        if not answers:
            skipped += 1
            continue
        questions.append(question_of(rec, answers))
    questions = [questions[i] for i in sample_indices(len(questions), limit, seed)]
    file = f"subgraphrag_gpt_triples_{name}_test.json"
    triples = _gpt_triples(root / file)
    if triples is None:
        notes = [*notes[:-1], f"no {file}: evidence triple recall not computed"]
    return Dataset(
        name,
        "test",
        root,
        questions,
        notes,
        {"no gold answer": skipped} if skipped else {},
        (lambda q: triples.get(q.id)) if triples is not None else (lambda _q: None),
    )


def read_webqsp(root: Path, limit: int | None = None, seed: int = 0) -> Dataset:
    path = root / "webqsp_test_aog.json"
    if not path.is_file():
        raise BadInput(f"WebQSP file not found: {path}")
    records = _load_json_records(path)
    chains: dict[str, int] = {}
    answer_mids: dict[str, tuple[str, ...]] = {}
    beamqa = root / "webqsp_test_beamqa.txt"
    if beamqa.is_file():
        for line in beamqa.read_text(encoding="utf-8").splitlines():
            cols = line.split("\t")
            if len(cols) >= 2 and cols[1].strip():
                answer_mids.setdefault(_question_key(cols[0]), tuple(cols[1].strip().split("|")))
            if len(cols) >= 3 and cols[2].strip():
                chains.setdefault(_question_key(cols[0]), len(cols[2].split("|")))
    notes = ["gold triples: SubgraphRAG's GPT-labelled relevant triples (names), not a full gold path set"]

    def question(rec: dict[str, Any], answers: tuple[str, ...]) -> EvalQuestion:
        text = str(rec["RawQuestion"])
        return EvalQuestion(
            id=str(rec["QuestionId"]),
            dataset="webqsp",
            split="test",
            question=text,
            answers=answers,
            hops=chains.get(_question_key(text)),
            topic_entities=_topic_entities(rec),
            answer_ids=answer_mids.get(_question_key(text), ()),
        )

    def answers(rec: dict[str, Any]) -> tuple[str, ...]:
        return tuple(str(a) for a in rec.get("answer") or [])

    return _gpt_labelled_test("webqsp", root, records, answers, question, notes, limit, seed)


def read_webqsp_train(root: Path, split: str, limit: int | None = None, seed: int = 0) -> Dataset:
    """WebQSP train (``webqsp_train_beamqa.csv``): the answer names are left to the KG (the file has mids);
    for ``dev`` the runner keeps the questions the KG's training held out."""
    import ast
    import csv

    path = root / "webqsp_train_beamqa.csv"
    if not path.is_file():
        raise BadInput(f"WebQSP train file not found: {path}")
    questions: list[EvalQuestion] = []
    skipped = 0
    with path.open(encoding="utf-8", newline="") as handle:
        for line, row in enumerate(csv.DictReader(handle), start=2):
            head, text, answer = (row.get(c, "").strip() for c in ("head", "qa", "ans"))
            if not (head and text and answer):
                skipped += 1
                continue
            try:
                chains = ast.literal_eval(row.get("rel") or "[]")
            except (ValueError, SyntaxError):
                raise BadInput(f"{path}:{line}: the rel column is not a list of chains") from None
            questions.append(
                EvalQuestion(
                    id=f"WebQTrn-{line}",
                    dataset="webqsp",
                    split=split,
                    question=text,
                    answers=(),
                    hops=len(str(chains[0]).split("|")) if chains else None,
                    topic_entities=((head, ""),),
                    answer_ids=tuple(answer.split("|")),
                )
            )
    questions = [questions[i] for i in sample_indices(len(questions), limit, seed)]
    return Dataset(
        "webqsp",
        split,
        root,
        questions,
        ["gold answers: the names the KG gives the answer mids of webqsp_train_beamqa.csv"],
        {"incomplete row": skipped} if skipped else {},
    )


def read_cwq(root: Path, limit: int | None = None, seed: int = 0) -> Dataset:
    path = root / "cwq_test_tog.json"
    if not path.is_file():
        raise BadInput(f"CWQ file not found: {path}")
    records = _load_json_records(path)
    mids: dict[str, tuple[str, ...]] = {}
    original = root / "ComplexWebQuestions_test.json"
    if original.is_file():
        for rec in _load_json_records(original):
            mids[str(rec["ID"])] = tuple(str(a) for a in rec.get("answer") or [])
    notes = [
        "gold answers: ToG's one answer name per question (the original mids are kept as answer_ids)",
        "gold triples: SubgraphRAG's GPT-labelled relevant triples (names), not a full gold path set",
    ]

    def answers(rec: dict[str, Any]) -> tuple[str, ...]:
        raw_answer = rec.get("answer")
        if isinstance(raw_answer, list):
            return tuple(str(a) for a in raw_answer)
        return (str(raw_answer),) if raw_answer else ()

    def question(rec: dict[str, Any], answers: tuple[str, ...]) -> EvalQuestion:
        qid = str(rec["ID"])
        return EvalQuestion(
            id=qid,
            dataset="cwq",
            split="test",
            question=str(rec["question"]),
            answers=answers,
            qtype=str(rec.get("compositionality_type") or "") or None,
            topic_entities=_topic_entities(rec),
            answer_ids=mids.get(qid, ()),
        )

    return _gpt_labelled_test("cwq", root, records, answers, question, notes, limit, seed)
