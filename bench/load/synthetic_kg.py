"""A seeded, Freebase-shaped synthetic KG, written as the Freebase RDF dump or as DBpedia N-Triples, with
questions whose answers come from its own paths.

    python -m bench.load.synthetic_kg --entities 1000000 --triples 10000000 --out /tmp/kgqa-synth-1m
        [--format freebase|dbpedia|both] [--questions 300] [--seed 7]

What makes it Freebase-shaped (what MetaQA, with 43 thousand entities and 9 relations, lacks):

- **Mids and dotted relations**: ``m.0…`` ids, ``film.film.directed_by``-style property ids over eleven entity
  types, and the dump's tab-separated N-Triples with ``ns:type.object.name "…"@en`` names. Also a share of
  statements the loader must drop (``type.object.type``, literal dates, names in other languages).
- **CVT nodes**: nameless mediator nodes (a film's performance, a marriage, an employment, an award honour),
  about a tenth of the entities, so "who starred in X" is two hops, as in Freebase.
- **Heavy-tailed degrees**: the object of each relation is drawn from a power law over a shuffled popularity
  order, so a few countries, genres and prolific people have hundreds of thousands of edges.
- **Names with collisions**: people are first + last names from small lists, films and books are short word
  combinations, so many names are shared by several entities (the report prints how many).

The DBpedia form has the same entities with readable resource IRIs (``Name_(film)``, numbered on collision),
``dbo:`` relations, ``rdfs:label@en``, and CVT paths collapsed into one edge (DBpedia has no mediators).

Questions (``questions.jsonl``) are sampled from the graph: a topic entity whose name is unique, a relation
chain of 1 to 3 hops (through CVTs where Freebase has them), every entity at the chain's end as the answer
set (at most 20), and one of several English phrasings per chain. Nothing here is MetaQA data.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

NS = "http://rdf.freebase.com/ns/"
DBR = "http://dbpedia.org/resource/"
DBO = "http://dbpedia.org/ontology/"
RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"

# Entity types: share of the entities, and whether their nodes carry names (CVTs do not).
TYPES: dict[str, tuple[float, bool]] = {
    "person": (0.36, True),
    "film": (0.14, True),
    "book": (0.07, True),
    "album": (0.06, True),
    "organization": (0.07, True),
    "location": (0.08, True),
    "team": (0.01, True),
    "genre": (0.002, True),
    "language": (0.001, True),
    "profession": (0.002, True),
    "award": (0.003, True),
    "performance": (0.07, False),
    "marriage": (0.03, False),
    "employment": (0.03, False),
    "honor": (0.02, False),
}


@dataclass(frozen=True)
class Relation:
    name: str  # the Freebase property id
    head: str  # entity type of the subject
    tail: str  # entity type of the object
    weight: float  # share of the facts
    skew: float  # power-law exponent of the object's popularity (larger: a few objects get most edges)
    dbpedia: str | None  # the dbo: name; None where DBpedia collapses the CVT path (see COLLAPSED)


RELATIONS = [
    Relation("film.film.directed_by", "film", "person", 0.04, 2.0, "director"),
    Relation("film.film.written_by", "film", "person", 0.03, 2.0, "writer"),
    Relation("film.film.produced_by", "film", "person", 0.03, 2.0, "producer"),
    Relation("film.film.genre", "film", "genre", 0.05, 3.0, "genre"),
    Relation("film.film.country", "film", "location", 0.03, 4.0, "country"),
    Relation("film.film.language", "film", "language", 0.03, 4.0, "language"),
    Relation("film.film.starring", "film", "performance", 0.09, 1.0, None),
    Relation("film.performance.actor", "performance", "person", 0.09, 2.5, None),
    Relation("people.person.nationality", "person", "location", 0.06, 4.0, "nationality"),
    Relation("people.person.place_of_birth", "person", "location", 0.06, 3.0, "birthPlace"),
    Relation("people.person.profession", "person", "profession", 0.06, 3.0, "occupation"),
    Relation("people.person.spouse_s", "person", "marriage", 0.03, 1.0, None),
    Relation("people.marriage.spouse", "marriage", "person", 0.03, 1.5, None),
    Relation("people.person.employment_history", "person", "employment", 0.03, 1.0, None),
    Relation("business.employment_tenure.company", "employment", "organization", 0.03, 2.5, None),
    Relation("location.location.containedby", "location", "location", 0.04, 3.5, "isPartOf"),
    Relation("organization.organization.headquarters", "organization", "location", 0.03, 3.0, "headquarter"),
    Relation("book.written_work.author", "book", "person", 0.05, 2.0, "author"),
    Relation("book.book.genre", "book", "genre", 0.03, 3.0, "literaryGenre"),
    Relation("music.album.artist", "album", "person", 0.05, 2.0, "artist"),
    Relation("music.album.genre", "album", "genre", 0.03, 3.0, "genre"),
    Relation("sports.sports_team.location", "team", "location", 0.01, 2.0, "ground"),
    Relation("award.award_winner.awards_won", "person", "honor", 0.02, 1.0, None),
    Relation("award.award_honor.award", "honor", "award", 0.02, 2.5, None),
]
# CVT paths DBpedia states as one edge: (first relation, second relation) -> dbo name.
COLLAPSED = {
    ("film.film.starring", "film.performance.actor"): "starring",
    ("people.person.spouse_s", "people.marriage.spouse"): "spouse",
    ("people.person.employment_history", "business.employment_tenure.company"): "employer",
    ("award.award_winner.awards_won", "award.award_honor.award"): "award",
}

FIRST = (
    "James Mary John Patricia Robert Jennifer Michael Linda William Elizabeth David Barbara Richard Susan "
    "Joseph Jessica Thomas Sarah Charles Karen Daniel Nancy Matthew Lisa Anthony Betty Mark Margaret Donald "
    "Sandra Steven Ashley Paul Kimberly Andrew Emily Joshua Donna Kenneth Michelle Kevin Dorothy Brian Carol "
    "George Amanda Edward Melissa Ronald Deborah Timothy Stephanie Jason Rebecca Jeffrey Sharon Ryan Laura "
    "Jacob Cynthia Gary Kathleen Nicholas Amy Eric Shirley Jonathan Angela Stephen Helen Larry Anna Justin "
    "Brenda Scott Pamela Brandon Nicole Benjamin Emma Samuel Samantha Gregory Katherine Frank Christine "
    "Alexander Debra Raymond Rachel Patrick Catherine Jack Carolyn Dennis Janet Jerry Ruth Tyler Maria Aaron "
    "Heather Jose Diane Adam Virginia Henry Julie Nathan Joyce Douglas Victoria Zachary Olivia Peter Kelly "
    "Kyle Christina Walter Lauren Ethan Joan Jeremy Evelyn Harold Judith Keith Megan Christian Cheryl Roger "
    "Andrea Noah Hannah Gerald Martha Carl Jacqueline Terry Frances Sean Gloria Austin Ann Arthur Teresa "
    "Lawrence Kathryn Jesse Sara Dylan Janice Bryan Jean Joe Alice Jordan Madison Billy Doris Bruce Abigail "
    "Albert Julia Willie Judy Gabriel Grace Logan Denise Alan Amber Juan Marilyn Wayne Beverly Roy Danielle"
).split()
LAST_SYLLABLES = (
    "ander bert brook by castle dale den field ford gate grove ham hart hill holt ington kins land ley low "
    "man mere mont more ner ridge rop shaw sley son stead ston thorpe ton vale wald ward well wick win wood "
    "worth"
).split()
LAST_STEMS = (
    "Ash Bar Black Brad Brown Carl Chad Clay Cole Craw Dal Dun Ed Elm Fair Far Fen Fox Gar Glad Gold Gran "
    "Green Hal Har Haw Hen Her Hol How Ken King Kirk Lan Lang Lind Mar Mil Mor Nor Oak Pen Ral Red Row Rus "
    "San Shel Stan Stock Sum Sut Tal Ten Thorn Wal War Wes Whit Win Wol Wood Yar"
).split()
TITLE_WORDS = """
Silent River Night Garden Last Summer Broken Light Crimson Road Winter Promise Hidden City Golden
Hour Lost Empire Distant Shore Burning Sky Iron Heart Secret Harbor Falling Star Midnight Train Wild
Storm Paper Moon Glass House Shadow Line Northern Wind Bitter Sweet Endless Sea Stone Bridge Velvet
Dawn Quiet Thunder Scarlet Letter Dark Water Open Door Second Chance Frozen Lake Restless Dream Blue
Horizon Red Desert Long Journey Small Wonder Great Escape Final Hour Cold Fire Lonely Hearts Bright
Morning Hollow Crown Savage Garden Empty Room Fallen Angel Rising Tide Painted Veil Twisted Fate
Gentle Giant Sacred Ground Forgotten Song
""".split()
PLACE_STEMS = "Var Mor Kel Tan Bel Dor Ash Lin Sar Vel Cor Mal Ren Tor Hal Bran Zel Quin Ost Fen".split()
PLACE_ENDS = "holm ford ia ova burg stad mouth ton heim grad polis vik dale ora ica land by".split()
GENRES = (
    "Drama,Comedy,Thriller,Horror,Romance,Documentary,Western,Musical,Fantasy,Mystery,Crime,Animation,"
    "War,Biography,Adventure,Noir,Satire,Science fiction,Jazz,Rock,Pop,Blues,Folk,Poetry,Memoir"
).split(",")
PROFESSIONS = (
    "Actor Writer Director Producer Singer Painter Lawyer Physician Engineer Teacher Politician".split()
)

# Per chain of (relation, forward?) steps: English phrasings; {x} is the topic's name.
PHRASINGS: dict[tuple[tuple[str, bool], ...], list[str]] = {
    (("film.film.directed_by", True),): ["who directed {x}?", "who was the director of {x}", "{x} director"],
    (("film.film.directed_by", False),): [
        "which films did {x} direct?",
        "what movies were directed by {x}",
        "films directed by {x}",
    ],
    (("film.film.written_by", True),): ["who wrote {x}?", "who is the screenwriter of {x}"],
    (("film.film.genre", True),): ["what genre is {x}?", "what kind of film is {x}"],
    (("film.film.language", True),): ["what language is {x} in?", "in which language was {x} made"],
    (("people.person.place_of_birth", True),): ["where was {x} born?", "what is the birthplace of {x}"],
    (("people.person.nationality", True),): ["what is the nationality of {x}?", "which country is {x} from"],
    (("book.written_work.author", True),): ["who wrote the book {x}?", "who is the author of {x}"],
    (("book.written_work.author", False),): ["which books did {x} write?", "books written by {x}"],
    (("music.album.artist", False),): ["what albums did {x} release?", "albums by {x}"],
    (("organization.organization.headquarters", True),): [
        "where is {x} headquartered?",
        "where are the headquarters of {x}",
    ],
    (("film.film.starring", True), ("film.performance.actor", True)): [
        "who starred in {x}?",
        "who acted in {x}",
        "who are the actors in {x}",
    ],
    (("film.performance.actor", False), ("film.film.starring", False)): [
        "what films did {x} act in?",
        "which movies has {x} appeared in",
        "movies starring {x}",
    ],
    (("people.person.spouse_s", True), ("people.marriage.spouse", True)): [
        "who is {x} married to?",
        "who was the spouse of {x}",
    ],
    (("people.person.employment_history", True), ("business.employment_tenure.company", True)): [
        "which companies did {x} work for?",
        "where has {x} been employed",
    ],
    (("award.award_winner.awards_won", True), ("award.award_honor.award", True)): [
        "what awards has {x} won?",
        "which awards did {x} receive",
    ],
    (("film.film.directed_by", True), ("people.person.place_of_birth", True)): [
        "where was the director of {x} born?",
        "what is the birthplace of the person who directed {x}",
    ],
    (("film.film.directed_by", False), ("film.film.genre", True)): [
        "what genres are the films directed by {x}?",
        "which genres did {x} direct films in",
    ],
    (("book.written_work.author", True), ("people.person.nationality", True)): [
        "what is the nationality of the author of {x}?",
        "which country is the writer of {x} from",
    ],
    (("film.performance.actor", False), ("film.film.starring", False), ("film.film.directed_by", True)): [
        "who directed the films that {x} starred in?",
        "who were the directors of movies {x} acted in",
    ],
    (("film.film.directed_by", True), ("film.film.directed_by", False), ("film.film.language", True)): [
        "what languages are the films by the director of {x} in?",
        "in which languages did the director of {x} make films",
    ],
}


@dataclass
class SyntheticKg:
    types: np.ndarray  # entity index -> type index into TYPES
    names: list[str | None]  # entity index -> English name (None for CVTs)
    heads: np.ndarray
    rels: np.ndarray
    tails: np.ndarray

    def mid(self, i: int) -> str:
        return mid(i)


def mid(i: int) -> str:
    # An odd multiplier mod 2^32 is a bijection: unique, random-looking, like m.0abc12.
    return "m.0" + np.base_repr((i * 2654435761 + 40503) % 2**32, 32).lower()


def generate(entities: int, triples: int, seed: int = 7) -> SyntheticKg:
    rng = np.random.default_rng(seed)
    type_names = list(TYPES)
    shares = np.array([TYPES[t][0] for t in type_names])
    counts = np.maximum(1, np.round(shares / shares.sum() * entities)).astype(np.int64)
    counts[0] += entities - counts.sum()
    types = np.repeat(np.arange(len(type_names)), counts)
    rng.shuffle(types)
    members = {t: np.flatnonzero(types == i) for i, t in enumerate(type_names)}
    names = _names(types, type_names, rng)
    weights = np.array([r.weight for r in RELATIONS])
    # Draw a little more than asked, as duplicates are removed; top up until the count is reached.
    heads, rels, tails = (np.empty(0, np.int64) for _ in range(3))
    want = triples
    while want > 0:
        per = rng.multinomial(int(want * 1.05) + 100, weights / weights.sum())
        h_parts, r_parts, t_parts = [heads], [rels], [tails]
        for index, (relation, n) in enumerate(zip(RELATIONS, per, strict=True)):
            h_parts.append(_draw(members[relation.head], n, 1.0, rng, salt=index))
            r_parts.append(np.full(n, index, np.int64))
            t_parts.append(_draw(members[relation.tail], n, relation.skew, rng, salt=index + 100))
        heads, rels, tails = (np.concatenate(p) for p in (h_parts, r_parts, t_parts))
        keep = heads != tails
        heads, rels, tails = heads[keep], rels[keep], tails[keep]
        key = (heads * len(RELATIONS) + rels) * entities + tails
        _, first = np.unique(key, return_index=True)
        first.sort()
        heads, rels, tails = heads[first], rels[first], tails[first]
        want = triples - len(heads)
    order = rng.permutation(len(heads))[:triples]
    return SyntheticKg(types, names, heads[order], rels[order], tails[order])


def _draw(pool: np.ndarray, n: int, skew: float, rng: np.random.Generator, salt: int) -> np.ndarray:
    """n members of ``pool``, the k-th most popular with probability ~ k^(-1 + 1/skew): heavy-tailed for
    skew > 1, uniform at 1; the popularity order is a per-relation shuffle so hubs differ by relation."""
    order = np.random.default_rng(salt).permutation(len(pool))
    rank = np.minimum((len(pool) * rng.random(n) ** skew).astype(np.int64), len(pool) - 1)
    return pool[order[rank]]


def _names(types: np.ndarray, type_names: list[str], rng: np.random.Generator) -> list[str | None]:
    last = [s + e for s in LAST_STEMS for e in LAST_SYLLABLES]
    names: list[str | None] = [None] * len(types)
    for t_index, t in enumerate(type_names):
        idx = np.flatnonzero(types == t_index)
        n = len(idx)
        if not TYPES[t][1]:
            continue
        if t == "person":
            made = [
                f"{FIRST[a]} {last[b]}"
                for a, b in zip(
                    rng.integers(len(FIRST), size=n), rng.integers(len(last), size=n), strict=True
                )
            ]
        elif t in ("film", "book", "album"):
            k = rng.integers(2, 4, size=n)
            words = rng.integers(len(TITLE_WORDS), size=(n, 3))
            made = [
                ("The " if w[0] % 3 == 0 else "") + " ".join(TITLE_WORDS[x] for x in w[:kk])
                for w, kk in zip(words, k, strict=True)
            ]
        elif t in ("location", "team"):
            a, b, c = (rng.integers(m, size=n) for m in (len(PLACE_STEMS), len(PLACE_ENDS), 40))
            made = [
                PLACE_STEMS[x] + ("" if z < 20 else PLACE_STEMS[z % 20].lower()) + PLACE_ENDS[y]
                for x, y, z in zip(a, b, c, strict=True)
            ]
            if t == "team":
                made = [f"{m} {'United' if i % 2 else 'Rovers'}" for i, m in enumerate(made)]
        elif t == "organization":
            made = [
                f"{TITLE_WORDS[x]} {('Group', 'Industries', 'University', 'Records', 'Pictures')[y]}"
                for x, y in zip(rng.integers(len(TITLE_WORDS), size=n), rng.integers(5, size=n), strict=True)
            ]
        elif t == "genre":
            made = [
                GENRES[i % len(GENRES)] + ("" if i < len(GENRES) else f" {i // len(GENRES)}")
                for i in range(n)
            ]
        elif t == "profession":
            made = [
                PROFESSIONS[i % len(PROFESSIONS)] + ("" if i < len(PROFESSIONS) else f" {i}")
                for i in range(n)
            ]
        elif t == "language":
            made = [f"{PLACE_STEMS[i % 20]}{PLACE_ENDS[(i // 20) % 16]}ish" for i in range(n)]
        else:  # award
            made = [
                f"{TITLE_WORDS[i % len(TITLE_WORDS)]} Award for Best {PROFESSIONS[i % len(PROFESSIONS)]} {i}"
                for i in range(n)
            ]
        for i, name in zip(idx, made, strict=True):
            names[i] = name
    return names


# ----------------------------------------------------------------------------- writers
def write_freebase(kg: SyntheticKg, path: Path) -> int:
    """The dump's syntax: tab-separated N-Triples; facts, then names, with a share of droppable noise."""
    lines = 0
    rel_iris = [f"<{NS}{r.name}>" for r in RELATIONS]
    mids = [f"<{NS}{mid(i)}>" for i in range(len(kg.types))]
    type_iris = [f"<{NS}{_freebase_type(t)}>" for t in TYPES]
    with open(path, "w", encoding="utf-8") as out:
        for start in range(0, len(kg.heads), 500_000):
            h, r, t = (a[start : start + 500_000] for a in (kg.heads, kg.rels, kg.tails))
            out.write(
                "".join(
                    f"{mids[a]}\t{rel_iris[b]}\t{mids[c]}\t.\n"
                    for a, b, c in zip(h.tolist(), r.tolist(), t.tolist(), strict=True)
                )
            )
            lines += len(h)
        name_iri = f"<{NS}type.object.name>"
        type_iri = f"<{NS}type.object.type>"
        chunk: list[str] = []
        for i, name in enumerate(kg.names):
            chunk.append(f"{mids[i]}\t{type_iri}\t{type_iris[kg.types[i]]}\t.\n")
            if name is not None:
                chunk.append(f'{mids[i]}\t{name_iri}\t"{name}"@en\t.\n')
                if i % 10 == 0:
                    chunk.append(f'{mids[i]}\t{name_iri}\t"{name}"@de\t.\n')
            if i % 7 == 0 and kg.types[i] == 1:  # a film: a literal release date, dropped by the loader
                chunk.append(
                    f'{mids[i]}\t<{NS}film.film.initial_release_date>\t"{1930 + i % 90}"^^<http://www.w3.org/2001/XMLSchema#gYear>\t.\n'
                )
            if len(chunk) >= 200_000:
                lines += len(chunk)
                out.write("".join(chunk))
                chunk.clear()
        lines += len(chunk)
        out.write("".join(chunk))
    return lines


def _freebase_type(t: str) -> str:
    return {
        "person": "people.person",
        "film": "film.film",
        "book": "book.book",
        "album": "music.album",
        "organization": "organization.organization",
        "location": "location.location",
        "team": "sports.sports_team",
        "genre": "media_common.genre",
        "language": "language.human_language",
        "profession": "people.profession",
        "award": "award.award",
        "performance": "film.performance",
        "marriage": "people.marriage",
        "employment": "business.employment_tenure",
        "honor": "award.award_honor",
    }[t]


def dbpedia_iris(kg: SyntheticKg) -> list[str | None]:
    """Readable resource names: ``Silent_River_(film)``, numbered on collision; CVTs have none."""
    seen: dict[str, int] = {}
    type_names = list(TYPES)
    iris: list[str | None] = []
    for i, name in enumerate(kg.names):
        if name is None:
            iris.append(None)
            continue
        base = f"{name.replace(' ', '_')}_({type_names[kg.types[i]]})"
        n = seen.get(base, 0)
        seen[base] = n + 1
        iris.append(f"<{DBR}{base}{'' if n == 0 else f'_{n + 1}'}>")
    return iris


def write_dbpedia(kg: SyntheticKg, path: Path) -> int:
    """DBpedia N-Triples: dbo: relations, rdfs:label@en, every CVT path collapsed into one edge."""
    iris = dbpedia_iris(kg)
    direct = [f"<{DBO}{r.dbpedia}>" if r.dbpedia else None for r in RELATIONS]
    lines = 0
    with open(path, "w", encoding="utf-8") as out:
        h, r, t = kg.heads.tolist(), kg.rels.tolist(), kg.tails.tolist()
        chunk = [f"{iris[a]} {direct[b]} {iris[c]} .\n" for a, b, c in zip(h, r, t, strict=True) if direct[b]]
        lines += len(chunk)
        out.write("".join(chunk))
        index = {r.name: i for i, r in enumerate(RELATIONS)}
        for (first, second), dbo in COLLAPSED.items():
            a, b = _pairs(kg, index[first]), _pairs(kg, index[second])
            # join first's tails (the CVTs) with second's heads
            order = np.argsort(b[0], kind="stable")
            bh, bt = b[0][order], b[1][order]
            lo = np.searchsorted(bh, a[1], "left")
            hi = np.searchsorted(bh, a[1], "right")
            rows = []
            for head, s, e in zip(a[0].tolist(), lo.tolist(), hi.tolist(), strict=True):
                for tail in bt[s:e].tolist():
                    if head != tail and iris[head] and iris[tail]:
                        rows.append(f"{iris[head]} <{DBO}{dbo}> {iris[tail]} .\n")
            lines += len(rows)
            out.write("".join(rows))
        labels = [
            f'{iri} <{RDFS_LABEL}> "{name}"@en .\n' for iri, name in zip(iris, kg.names, strict=True) if iri
        ]
        lines += len(labels)
        out.write("".join(labels))
    return lines


def _pairs(kg: SyntheticKg, relation: int) -> tuple[np.ndarray, np.ndarray]:
    mask = kg.rels == relation
    return kg.heads[mask], kg.tails[mask]


# ----------------------------------------------------------------------------- questions
class Adjacency:
    """Per (relation, direction): sorted (from, to) arrays, looked up with searchsorted."""

    def __init__(self, kg: SyntheticKg) -> None:
        self.index: dict[tuple[int, bool], tuple[np.ndarray, np.ndarray]] = {}
        for r in range(len(RELATIONS)):
            h, t = _pairs(kg, r)
            for forward, (a, b) in ((True, (h, t)), (False, (t, h))):
                order = np.argsort(a, kind="stable")
                self.index[(r, forward)] = (a[order], b[order])

    def step(self, nodes: set[int], relation: int, forward: bool) -> set[int]:
        a, b = self.index[(relation, forward)]
        out: set[int] = set()
        for node in nodes:
            lo, hi = np.searchsorted(a, node, "left"), np.searchsorted(a, node, "right")
            out.update(b[lo:hi].tolist())
            if len(out) > 5000:
                break
        return out


def questions(kg: SyntheticKg, n: int, seed: int, max_answers: int = 20) -> Iterator[dict[str, object]]:
    """``n`` questions spread over the chains of PHRASINGS; answers computed on the graph (MetaQA's
    semantics: a walk never comes back to the topic entity)."""
    rng = np.random.default_rng(seed + 1)
    index = {r.name: i for i, r in enumerate(RELATIONS)}
    type_of = {r.name: (r.head, r.tail) for r in RELATIONS}
    counts: dict[str, int] = {}
    for name in kg.names:
        if name is not None:
            counts[name] = counts.get(name, 0) + 1
    adjacency = Adjacency(kg)
    type_names = list(TYPES)
    pools = {t: np.flatnonzero(kg.types == i) for i, t in enumerate(type_names)}
    chains = list(PHRASINGS)
    failures = dict.fromkeys(chains, 0)
    made, turn = 0, 0
    while made < n and chains:
        chain = chains[turn % len(chains)]
        turn += 1
        first, forward = chain[0]
        pool = pools[type_of[first][0 if forward else 1]]
        topic = int(pool[rng.integers(len(pool))])
        name = kg.names[topic]
        nodes = {topic}
        for relation, fwd in chain:
            nodes = adjacency.step(nodes, index[relation], fwd) - {topic}
            if not nodes:
                break
        answers = sorted({kg.names[a] for a in nodes if kg.names[a] is not None})
        if name is None or counts[name] != 1 or not answers or len(answers) > max_answers:
            failures[chain] += 1
            if failures[chain] > 2000:  # this chain rarely ends in a small answer set here: give it up
                chains.remove(chain)
            turn -= 1  # the same chain again, so that the chains stay evenly spread
            continue
        phrasings = PHRASINGS[chain]
        yield {
            "id": f"synthetic-{made}",
            "question": phrasings[int(rng.integers(len(phrasings)))].format(x=name),
            "topic": name,
            "topic_id": mid(topic),
            "answers": answers,
            "hops": len(chain),
            "chain": [[r, "forward" if f else "backward"] for r, f in chain],
        }
        made += 1


# ----------------------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--entities", type=int, default=1_000_000)
    ap.add_argument("--triples", type=int, default=10_000_000)
    ap.add_argument("--out", type=Path, required=True, help="a directory outside the repository")
    ap.add_argument("--format", choices=("freebase", "dbpedia", "both"), default="freebase")
    ap.add_argument("--questions", type=int, default=300)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args(argv)
    if args.out.resolve().is_relative_to(Path(__file__).resolve().parents[2]):
        sys.exit("write the synthetic KG outside the repository")
    args.out.mkdir(parents=True, exist_ok=True)
    began = time.monotonic()
    kg = generate(args.entities, args.triples, args.seed)
    print(f"generated {len(kg.types):,} entities, {len(kg.heads):,} facts in {time.monotonic() - began:.1f}s")
    named = [x for x in kg.names if x is not None]
    shared = len(named) - len(set(named))
    size = len(kg.types)
    degree = np.bincount(kg.tails, minlength=size) + np.bincount(kg.heads, minlength=size)
    print(
        f"  {sum(x is None for x in kg.names):,} nameless CVT nodes; "
        f"{shared:,} names shared with another entity; "
        f"degree p50 {np.percentile(degree, 50):.0f}, p99 {np.percentile(degree, 99):.0f}, "
        f"max {degree.max():,}"
    )
    for fmt in ("freebase", "dbpedia") if args.format == "both" else (args.format,):
        began = time.monotonic()
        path = args.out / ("freebase.nt" if fmt == "freebase" else "dbpedia.nt")
        lines = (write_freebase if fmt == "freebase" else write_dbpedia)(kg, path)
        megabytes = path.stat().st_size / 1e6
        print(f"  {path}: {lines:,} lines, {megabytes:,.0f} MB in {time.monotonic() - began:.1f}s")
    began = time.monotonic()
    with open(args.out / "questions.jsonl", "w", encoding="utf-8") as out:
        made = sum(out.write(json.dumps(q) + "\n") > 0 for q in questions(kg, args.questions, args.seed))
    print(f"  {args.out / 'questions.jsonl'}: {made} questions in {time.monotonic() - began:.1f}s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
