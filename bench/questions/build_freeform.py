"""Build the hand-written free-form MetaQA question set (metaqa_freeform.jsonl) from its source file.

Three sub-commands, all reading the MetaQA KB (``kb_dedup.txt``, never a QA split):

    python -m bench.questions.build_freeform sample [--seed 20250611] [--out /tmp/ff_candidates.txt]
        Samples candidate topic entities with a fixed seed (uniform and degree-weighted movies and people,
        titles with punctuation / accents / common-word titles, people whose name is also a tag, years) and
        lists, for each, the relation paths whose answer set has 1..30 entities. A human writes the questions.

    python -m bench.questions.build_freeform probe "Topic" directed_by:out directed_by:in [...]
        Prints the answers of one walk (a quick check while writing).

    python -m bench.questions.build_freeform build [--src ...] [--out ...] [--strict]
        Validates metaqa_freeform.src.jsonl (exact KB topic names, relation paths, kinds, noise labels),
        computes ``answers`` by walking the KB, drops (and reports) questions whose answer set is empty or has
        more than 30 entities, assigns ``part`` (40% held out, seeded, stratified by kind) and writes
        metaqa_freeform.jsonl. A malformed source line or an unknown topic stops it with one line naming
        the file and line.

Walk semantics (MetaQA's): "out" follows head -> tail, "in" tail -> head; every hop works on the set of
entities reached so far, and the topic entity is removed from every intermediate and final set. A question
with two topics gives a path per topic (``relation_paths``) and its answer is the intersection; topics are
never answers.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DATA = Path(os.environ.get("KGQA_SHARED_DATA", HERE.parents[2] / "shared" / "data"))
KB_PATH = DATA / "metaqa" / "kb_dedup.txt"
SRC_PATH = HERE / "metaqa_freeform.src.jsonl"
OUT_PATH = HERE / "metaqa_freeform.jsonl"

RELATIONS = (
    "directed_by",
    "written_by",
    "starred_actors",
    "release_year",
    "in_language",
    "has_genre",
    "has_tags",
    "has_imdb_rating",
    "has_imdb_votes",
)
DIRECTIONS = ("in", "out")
KINDS = ("one-hop", "two-hop", "three-hop", "two-entity", "literal")
NOISE = ("lowercase", "typo", "paraphrase", "no-question-mark", "extra-words")
MAX_ANSWERS = 30
HELDOUT_SHARE = 0.4
PART_SEED = 20250611
SAMPLE_SEED = 20250611
SRC_FIELDS = {"id", "question", "topics", "relation_path", "relation_paths", "kind", "noise"}
OUT_ORDER = (
    "id",
    "question",
    "topics",
    "answers",
    "relation_path",
    "relation_paths",
    "kind",
    "noise",
    "part",
)

Step = tuple[str, str]
Path_ = list[Step]


class SourceError(Exception):
    """A source line that cannot be used; the message already names file and line."""


# --------------------------------------------------------------------------------------------- the KB


@dataclass
class KB:
    """Adjacency of the MetaQA KB by relation and direction; entity ids are their exact names."""

    out: dict[str, dict[str, set[str]]] = field(default_factory=lambda: defaultdict(lambda: defaultdict(set)))
    inn: dict[str, dict[str, set[str]]] = field(default_factory=lambda: defaultdict(lambda: defaultdict(set)))
    entities: set[str] = field(default_factory=set)

    @classmethod
    def load(cls, path: Path) -> KB:
        kb = cls()
        with path.open(encoding="utf-8") as handle:
            for number, raw in enumerate(handle, start=1):
                line = raw.rstrip("\r\n")
                if not line:
                    continue
                parts = line.split("|")
                if len(parts) != 3:
                    raise SystemExit(f"{path}:{number}: expected head|relation|tail")
                head, rel, tail = parts
                kb.out[rel][head].add(tail)
                kb.inn[rel][tail].add(head)
                kb.entities.update((head, tail))
        return kb

    def step(self, nodes: Iterable[str], rel: str, direction: str) -> set[str]:
        table = self.out[rel] if direction == "out" else self.inn[rel]
        reached: set[str] = set()
        for node in nodes:
            reached |= table.get(node, set())
        return reached

    def walk(self, topic: str, path: Sequence[Step]) -> set[str]:
        """MetaQA walk: set-based, the topic is dropped from every intermediate and final set."""
        nodes = {topic}
        for rel, direction in path:
            nodes = self.step(nodes, rel, direction) - {topic}
        return nodes

    def movies(self) -> list[str]:
        heads: set[str] = set()
        for rel in RELATIONS:
            heads |= set(self.out[rel])
        return sorted(heads)

    def tails(self, rel: str) -> list[str]:
        return sorted(self.inn[rel])


# ------------------------------------------------------------------------------------------ sampling

HAND_TITLES = ("Heat", "Up", "Crash", "Jaws")
HAND_PEOPLE = (
    "Tom Hanks",
    "Meg Ryan",
    "Woody Allen",
    "Diane Keaton",
    "Alfred Hitchcock",
    "James Stewart",
    "Denzel Washington",
    "Christopher Lee",
    "Catherine Deneuve",
    "Elizabeth Taylor",
    "Stephen King",
    "Rob Reiner",
    "Paul Verhoeven",
    "Budd Boetticher",
    "Klaus Kinski",
    "Katharine Hepburn",
    "Tom Cruise",
)

PERSON_RELS = ("directed_by", "written_by", "starred_actors")
END_RELS = ("directed_by", "written_by", "starred_actors", "release_year", "in_language", "has_genre")
SHORT = {
    "directed_by": "dir",
    "written_by": "wri",
    "starred_actors": "act",
    "release_year": "year",
    "in_language": "lang",
    "has_genre": "genre",
}


def fmt_path(path: Sequence[Step]) -> str:
    return " ".join(f"{rel}:{direction}" for rel, direction in path)


def _sizes(kb: KB, entity: str, prefix: Path_, ends: Sequence[str]) -> str:
    """'dir 4, year 2' for the ends whose walk gives 1..30 answers."""
    cells = []
    for end in ends:
        n = len(kb.walk(entity, prefix + [(end, "out")]))
        if 1 <= n <= MAX_ANSWERS:
            cells.append(f"{SHORT[end]} {n}")
    return ", ".join(cells)


def _show(values: Iterable[str], limit: int = 6) -> str:
    items = sorted(values)
    return ", ".join(items[:limit]) + (f" ... ({len(items)})" if len(items) > limit else "")


def describe(kb: KB, entity: str, role: str) -> list[str]:
    """A compact card: the entity's facts, then the sizes of the 2- and 3-hop walks that stay within 30."""
    lines = [f"## {entity!r} [{role}]"]
    if role == "movie":
        for rel in RELATIONS:
            values = kb.out[rel].get(entity, set())
            if values:
                lines.append(f"   {rel}: {_show(values, 8)}")
        for pivot in PERSON_RELS:
            two = kb.walk(entity, [(pivot, "out"), (pivot, "in")])
            if 1 <= len(two) <= MAX_ANSWERS:
                lines.append(f"   2h same {SHORT[pivot]} -> {_show(two)}")
            three = _sizes(kb, entity, [(pivot, "out"), (pivot, "in")], END_RELS)
            if three:
                lines.append(f"   3h via {SHORT[pivot]}'s films -> {three}")
        return lines
    movies = kb.inn[role].get(entity, set())
    roles = [r for r in PERSON_RELS if entity in kb.inn[r]]
    tag = entity.lower() if entity.lower() in kb.inn["has_tags"] and role in PERSON_RELS else None
    lines.append(f"   films ({role}): {_show(movies, 8)}")
    if role in PERSON_RELS:
        lines.append(f"   roles: {', '.join(roles)}" + (f"; also a tag {tag!r}" if tag else ""))
    two = _sizes(kb, entity, [(role, "in")], END_RELS)
    if two:
        lines.append(f"   2h films' -> {two}")
    cells = []
    for mid in PERSON_RELS:
        n = len(kb.walk(entity, [(role, "in"), (mid, "out"), (mid, "in")]))
        if 1 <= n <= MAX_ANSWERS:
            cells.append(f"{SHORT[mid]} {n}")
    if cells:
        lines.append(f"   3h films of the films' people (by role) -> {', '.join(cells)}")
    return lines


def weighted_sample(rng: random.Random, items: list[str], weights: list[float], k: int) -> list[str]:
    """k distinct items, drawn with probability proportional to weight (Efraimidis-Spirakis keys)."""
    keys = {item: rng.random() ** (1.0 / w) for item, w in zip(items, weights, strict=True)}
    return sorted(items, key=lambda item: -keys[item])[:k]


def _has_accent(text: str) -> bool:
    return any(unicodedata.category(ch) == "Mn" for ch in unicodedata.normalize("NFD", text))


def sample(kb: KB, seed: int) -> list[str]:
    rng = random.Random(seed)
    movies = kb.movies()
    tags = set(kb.inn["has_tags"])
    out: list[str] = []

    def block(title: str, entities: list[str], role: str | dict[str, str]) -> None:
        out.append(f"\n################ {title} ({len(entities)})")
        for entity in entities:
            r = role if isinstance(role, str) else role[entity]
            out.extend(describe(kb, entity, r))

    block("uniform movies", rng.sample(movies, 90), "movie")
    popular = [m for m in movies if len(kb.out["has_tags"].get(m, ())) >= 1]
    weights = [float(len(kb.out["has_tags"][m])) for m in popular]
    block("tag-weighted (well-known) movies", weighted_sample(rng, popular, weights, 40), "movie")
    punct = [m for m in movies if re.search(r"[^\w\s]", m) and not _has_accent(m)]
    block("titles with punctuation", rng.sample(punct, 25), "movie")
    accented = [m for m in movies if _has_accent(m)]
    block("titles with accents", rng.sample(accented, min(15, len(accented))), "movie")
    common = [m for m in movies if " " not in m and m.isalpha() and m.lower() in tags]
    block("one-word titles that are also tags (common words)", rng.sample(common, 25), "movie")
    for rel, count in (("starred_actors", 40), ("directed_by", 30), ("written_by", 30)):
        people = kb.tails(rel)
        block(f"uniform {rel} people", rng.sample(people, count), rel)
        weights = [float(len(kb.inn[rel][p])) for p in people]
        block(f"prolific {rel} people", weighted_sample(rng, people, weights, 15), rel)
    person_roles: dict[str, str] = {}
    for rel in PERSON_RELS:
        for person in kb.tails(rel):
            if person.lower() in tags and person not in person_roles:
                person_roles[person] = rel
    shared = rng.sample(sorted(person_roles), 25)
    block("people whose name is also a tag", shared, {p: person_roles[p] for p in shared})
    accented_people = sorted({p for rel in PERSON_RELS for p in kb.tails(rel) if _has_accent(p)})
    chosen = rng.sample(accented_people, 15)
    roles = {p: next(r for r in PERSON_RELS if p in kb.inn[r]) for p in chosen}
    block("people with accents", chosen, roles)
    years = [y for y in kb.tails("release_year") if 1 <= len(kb.inn["release_year"][y]) <= MAX_ANSWERS]
    block("years with at most 30 films", rng.sample(years, min(12, len(years))), "release_year")
    block("rating buckets", kb.tails("has_imdb_rating"), "has_imdb_rating")
    block("vote buckets", kb.tails("has_imdb_votes"), "has_imdb_votes")
    # Not sampled: titles the brief names as hard common words, and a few well-known people added by hand as
    # the second topic of two-entity questions (listed here so every topic of the set is accounted for).
    block("hand-picked common-word titles", [m for m in HAND_TITLES if m in kb.out["directed_by"]], "movie")
    people = {p: next(r for r in PERSON_RELS if p in kb.inn[r]) for p in HAND_PEOPLE if p in kb.entities}
    block("hand-picked people (second topics)", list(people), people)
    return out


# ------------------------------------------------------------------------------------------ building


@dataclass
class Question:
    record: dict[str, Any]
    paths: dict[str, Path_]
    line: int


def _parse_path(value: Any, where: str) -> Path_:
    if not isinstance(value, list) or not value:
        raise SourceError(f"{where}: a relation path must be a non-empty list of [relation, direction]")
    steps: Path_ = []
    for step in value:
        if not (isinstance(step, list) and len(step) == 2 and all(isinstance(s, str) for s in step)):
            raise SourceError(f"{where}: bad step {step!r}; expected [relation, 'in'|'out']")
        rel, direction = step
        if rel not in RELATIONS:
            raise SourceError(f"{where}: unknown relation {rel!r}")
        if direction not in DIRECTIONS:
            raise SourceError(f"{where}: direction must be 'in' or 'out', not {direction!r}")
        steps.append((rel, direction))
    if len(steps) > 3:
        raise SourceError(f"{where}: paths have at most 3 hops")
    return steps


def parse_source_line(text: str, where: str, kb: KB) -> tuple[dict[str, Any], dict[str, Path_]]:
    try:
        record = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SourceError(f"{where}: not valid JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(record, dict):
        raise SourceError(f"{where}: expected a JSON object")
    unknown = set(record) - SRC_FIELDS
    if unknown:
        raise SourceError(f"{where}: unknown field(s) {sorted(unknown)}")
    for key in ("id", "question", "kind"):
        if not isinstance(record.get(key), str) or not record[key].strip():
            raise SourceError(f"{where}: field {key!r} must be a non-empty string")
    topics = record.get("topics")
    if not (isinstance(topics, list) and 1 <= len(topics) <= 2 and all(isinstance(t, str) for t in topics)):
        raise SourceError(f"{where}: 'topics' must be a list of 1 or 2 strings")
    if len(set(topics)) != len(topics):
        raise SourceError(f"{where}: repeated topic")
    for topic in topics:
        if topic not in kb.entities:
            raise SourceError(f"{where}: unknown topic {topic!r} (not an exact KB name)")
    if record["kind"] not in KINDS:
        raise SourceError(f"{where}: kind {record['kind']!r} is not one of {', '.join(KINDS)}")
    noise = record.get("noise", [])
    if not (isinstance(noise, list) and all(n in NOISE for n in noise)) or len(set(noise)) != len(noise):
        raise SourceError(f"{where}: 'noise' must be a list of distinct labels from {', '.join(NOISE)}")
    has_one, has_many = "relation_path" in record, "relation_paths" in record
    if has_one == has_many:
        raise SourceError(f"{where}: give exactly one of 'relation_path' or 'relation_paths'")
    if has_one:
        if len(topics) != 1:
            raise SourceError(f"{where}: two topics need 'relation_paths' (one path per topic)")
        paths = {topics[0]: _parse_path(record["relation_path"], where)}
    else:
        given = record["relation_paths"]
        if not isinstance(given, dict) or set(given) != set(topics):
            raise SourceError(f"{where}: 'relation_paths' must have exactly the topics as keys")
        paths = {t: _parse_path(given[t], where) for t in topics}
    hops = {len(p) for p in paths.values()}
    expected = {"one-hop": 1, "two-hop": 2, "three-hop": 3}.get(record["kind"])
    if expected is not None and (len(topics) != 1 or hops != {expected}):
        raise SourceError(f"{where}: kind {record['kind']} needs one topic and a {expected}-hop path")
    if record["kind"] == "two-entity" and len(topics) != 2:
        raise SourceError(f"{where}: kind two-entity needs two topics")
    return record, paths


def read_source(path: Path, kb: KB) -> list[Question]:
    if not path.is_file():
        raise SystemExit(f"{path}: source file not found")
    questions: list[Question] = []
    seen: dict[str, int] = {}
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not text.strip():
            continue
        where = f"{path}:{number}"
        try:
            record, paths = parse_source_line(text, where, kb)
        except SourceError as exc:
            raise SystemExit(str(exc)) from None
        if record["id"] in seen:
            raise SystemExit(f"{where}: id {record['id']!r} already used on line {seen[record['id']]}")
        seen[record["id"]] = number
        questions.append(Question(record, paths, number))
    return questions


def answers_for(kb: KB, paths: dict[str, Path_]) -> set[str]:
    result: set[str] | None = None
    for topic, path in paths.items():
        reached = kb.walk(topic, path)
        result = reached if result is None else result & reached
    return (result or set()) - set(paths)


def text_warnings(q: Question, kb: KB) -> list[str]:
    """Soft checks on the wording: typo-free questions should name movies/people verbatim."""
    text = q.record["question"].casefold()
    named = [t for t in q.record["topics"] if any(t in kb.out[r] or t in kb.inn[r] for r in PERSON_RELS)]
    missing = [t for t in named if t.casefold() not in text]
    notes = []
    if "typo" in q.record["noise"] and named and not missing:
        notes.append("labelled 'typo' but every movie/person topic appears verbatim")
    if "lowercase" in q.record["noise"] and q.record["question"] != q.record["question"].lower():
        notes.append("labelled 'lowercase' but has capitals")
    if "no-question-mark" in q.record["noise"] and q.record["question"].rstrip().endswith("?"):
        notes.append("labelled 'no-question-mark' but ends with '?'")
    return notes


def assign_parts(questions: list[dict[str, Any]], seed: int, share: float = HELDOUT_SHARE) -> None:
    """Stratified by kind: round(share) of each kind is held out (40% by default), with a seeded RNG."""
    rng = random.Random(seed)
    by_kind: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for q in questions:
        by_kind[q["kind"]].append(q)
    for kind in KINDS:
        group = sorted(by_kind.get(kind, []), key=lambda q: q["id"])
        held = {q["id"] for q in rng.sample(group, round(share * len(group)))}
        for q in group:
            q["part"] = "heldout" if q["id"] in held else "tune"


def build(kb: KB, src: Path, out: Path, strict: bool, seed: int, share: float = HELDOUT_SHARE) -> int:
    questions = read_source(src, kb)
    kept: list[dict[str, Any]] = []
    dropped = 0
    for q in questions:
        where = f"{src}:{q.line}"
        for note in text_warnings(q, kb):
            print(f"{where}: warning: {q.record['id']}: {note}", file=sys.stderr)
        answers = answers_for(kb, q.paths)
        if not answers or len(answers) > MAX_ANSWERS:
            dropped += 1
            walks = "; ".join(f"{topic}: {fmt_path(path)}" for topic, path in q.paths.items())
            print(f"{where}: dropped {q.record['id']}: {len(answers)} answers ({walks})", file=sys.stderr)
            if strict:
                raise SystemExit(f"{where}: {q.record['id']} has {len(answers)} answers (--strict)")
            continue
        record = dict(q.record)
        record["answers"] = sorted(answers)
        record.setdefault("noise", [])
        kept.append(record)
    assign_parts(kept, seed, share)
    with out.open("w", encoding="utf-8") as handle:
        for record in kept:
            ordered = {k: record[k] for k in OUT_ORDER if k in record}
            handle.write(json.dumps(ordered, ensure_ascii=False) + "\n")
    kinds = Counter(r["kind"] for r in kept)
    noise = Counter(n for r in kept for n in r["noise"])
    parts = Counter(r["part"] for r in kept)
    print(f"wrote {len(kept)} questions to {out} ({dropped} dropped)")
    print("kinds: " + ", ".join(f"{k} {kinds[k]}" for k in KINDS))
    print("noise: " + ", ".join(f"{n} {noise[n]}" for n in NOISE))
    print(f"parts: tune {parts['tune']}, heldout {parts['heldout']}")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kb", type=Path, default=KB_PATH)
    sub = ap.add_subparsers(dest="command", required=True)
    p_sample = sub.add_parser("sample", help="list seeded candidate entities and their usable paths")
    p_sample.add_argument("--seed", type=int, default=SAMPLE_SEED)
    p_sample.add_argument("--out", type=Path, help="write here instead of stdout")
    p_probe = sub.add_parser("probe", help="answers of one walk: TOPIC rel:dir [rel:dir ...]")
    p_probe.add_argument("topic")
    p_probe.add_argument("steps", nargs="+")
    p_build = sub.add_parser("build", help="validate the source, compute answers, write the set")
    p_build.add_argument("--src", type=Path, default=SRC_PATH)
    p_build.add_argument("--out", type=Path, default=OUT_PATH)
    p_build.add_argument("--seed", type=int, default=PART_SEED)
    p_build.add_argument(
        "--heldout-share", type=float, default=HELDOUT_SHARE, help="share of each kind held out (1: all)"
    )
    p_build.add_argument("--strict", action="store_true", help="fail instead of dropping a question")
    args = ap.parse_args(argv)

    if not args.kb.is_file():
        raise SystemExit(f"{args.kb}: MetaQA KB not found (set KGQA_SHARED_DATA or pass --kb)")
    kb = KB.load(args.kb)
    if args.command == "sample":
        text = "\n".join(sample(kb, args.seed)) + "\n"
        if args.out:
            args.out.write_text(text, encoding="utf-8")
        else:
            sys.stdout.write(text)
        return 0
    if args.command == "probe":
        if args.topic not in kb.entities:
            raise SystemExit(f"unknown topic {args.topic!r}")
        steps = [tuple(s.split(":", 1)) for s in args.steps]
        path = _parse_path([list(s) for s in steps], "probe")
        answers = sorted(kb.walk(args.topic, path))
        print(f"{len(answers)}: " + " | ".join(answers))
        return 0
    return build(kb, args.src, args.out, args.strict, args.seed, args.heldout_share)


if __name__ == "__main__":
    sys.exit(main())
