#!/usr/bin/env python3
"""Hand-written free-form questions over FB15k-237: card sampler and gold builder.

Standard library only.  The KG is the union of train/valid/test of FB15k-237, read from
``../shared/data/fb15k-237`` (relative to the repository), ``$KGQA_SHARED_DATA/fb15k-237`` or ``--data``.

Subcommands
-----------
sample   draw candidate entities with a fixed seed and print cards (facts by relation, both directions,
         and the size of every 2-hop walk with 1..20 answers).  Questions are written by hand from them.
card     print the card of named entities or mids (``card "Tom Hanks" m.0d05w3``).
find     list entities whose name contains a string.
probe    run one walk: ``probe Memento film.director.film:in people.person.place_of_birth:out``.
build    check ``fb15k_freeform.src.jsonl`` and write ``fb15k_freeform.jsonl`` with gold answers and parts.

Ids are written the way the system stores them: ``/m/0abc`` -> ``m.0abc``; ``/film/film/genre`` ->
``film.film.genre``; compound relations ``/a/b/c./d/e/f`` -> ``a.b.c..d.e.f``.

Walk rule: each hop maps the whole set reached so far (union of the neighbours along that relation and
direction; ``out`` = head -> tail).  The question's topic entities are removed from every intermediate and
final set, so they are never answers.  Two-topic questions intersect the walks of both topics.
"""

import argparse
import collections
import json
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SRC = os.path.join(HERE, "fb15k_freeform.src.jsonl")
OUT = os.path.join(HERE, "fb15k_freeform.jsonl")
SEED = 20261201
HELDOUT_SHARE = 0.4
MAX_ANSWERS = 20
KINDS = ("one-hop", "two-hop", "two-entity")
NOISE = ("lowercase", "typo", "paraphrase", "partial-name", "no-question-mark", "extra-words")


# --------------------------------------------------------------------------- ids


def mid_to_id(mid):
    """/m/0abc -> m.0abc"""
    return mid.strip("/").replace("/", ".")


def rel_to_id(rel):
    """/a/b/c./d/e/f -> a.b.c..d.e.f"""
    return "..".join(part.strip("/").replace("/", ".") for part in rel.split("./"))


def norm_rel(text):
    return rel_to_id(text) if text.startswith("/") else text


# --------------------------------------------------------------------------- KG


def data_dir(arg):
    if arg:
        return arg
    env = os.environ.get("KGQA_SHARED_DATA")
    if env:
        return os.path.join(env, "fb15k-237")
    for cand in (
        os.path.join(REPO, "..", "shared", "data", "fb15k-237"),
        os.path.join(REPO, "shared", "data", "fb15k-237"),
        "/work/shared/data/fb15k-237",
    ):
        if os.path.isdir(cand):
            return os.path.normpath(cand)
    sys.exit("cannot find the fb15k-237 folder; pass --data")


class KG:
    def __init__(self, folder):
        self.out = collections.defaultdict(lambda: collections.defaultdict(set))  # e -> rel -> tails
        self.inn = collections.defaultdict(lambda: collections.defaultdict(set))  # e -> rel -> heads
        self.rels = set()
        n = 0
        for split in ("train.txt", "valid.txt", "test.txt"):
            with open(os.path.join(folder, split), encoding="utf-8") as fh:
                for line in fh:
                    h, r, t = line.rstrip("\n").split("\t")
                    h, r, t = mid_to_id(h), rel_to_id(r), mid_to_id(t)
                    self.out[h][r].add(t)
                    self.inn[t][r].add(h)
                    self.rels.add(r)
                    n += 1
        self.n_triples = n
        self.entities = set(self.out) | set(self.inn)
        self.names = {}
        with open(os.path.join(folder, "names_kgbert", "entity2text.txt"), encoding="utf-8") as fh:
            for line in fh:
                mid, name = line.rstrip("\n").split("\t", 1)
                self.names[mid_to_id(mid)] = name

    def name(self, e):
        return self.names.get(e, e)

    def degree(self, e):
        return sum(len(v) for v in self.out.get(e, {}).values()) + sum(
            len(v) for v in self.inn.get(e, {}).values()
        )

    def step(self, ents, rel, direction):
        index = self.out if direction == "out" else self.inn
        res = set()
        for e in ents:
            if e in index:
                res |= index[e].get(rel, set())
        return res

    def walk(self, topic, path, exclude):
        cur = {topic}
        for rel, direction in path:
            cur = self.step(cur, rel, direction) - exclude
        return cur

    def edges(self, e):
        """[(rel, dir, neighbours)] for both directions."""
        res = [(r, "out", ts) for r, ts in self.out.get(e, {}).items()]
        res += [(r, "in", hs) for r, hs in self.inn.get(e, {}).items()]
        return sorted(res, key=lambda x: (x[0], x[1]))


# --------------------------------------------------------------------------- cards


def card(kg, e, max_list=12, two_hop=True, max_mid=25):
    lines = ["=" * 78, f"{kg.name(e)}  [{e}]  degree {kg.degree(e)}"]
    edges = kg.edges(e)
    for rel, d, nbrs in edges:
        names = sorted(kg.name(x) for x in nbrs)
        shown = "; ".join(names[:max_list]) + (
            f" ... (+{len(names) - max_list})" if len(names) > max_list else ""
        )
        lines.append(f"  {d:<3} {rel} ({len(nbrs)}): {shown}")
    if two_hop:
        walks = []
        for rel, d, nbrs in edges:
            mid = set(nbrs) - {e}
            if not mid or len(mid) > max_mid:
                continue
            nxt = collections.defaultdict(set)
            for m in mid:
                for r2, d2, n2 in kg.edges(m):
                    nxt[(r2, d2)] |= n2
            for (r2, d2), ans in nxt.items():
                ans = ans - {e}
                if 1 <= len(ans) <= MAX_ANSWERS and not (r2 == rel and d2 != d):
                    sample = "; ".join(sorted(kg.name(x) for x in ans)[:4])
                    walks.append(f"  2hop {rel}:{d} -> {r2}:{d2} = {len(ans)}  ({sample})")
        if walks:
            lines.append(f"  -- 2-hop walks with 1..{MAX_ANSWERS} answers: {len(walks)}")
            lines.extend(walks[:60])
            if len(walks) > 60:
                lines.append(f"  ... (+{len(walks) - 60} more walks)")
    return "\n".join(lines)


def cmd_sample(kg, args):
    rng = random.Random(args.seed)
    ents = sorted(e for e in kg.entities if e in kg.names)
    weights = [kg.degree(e) for e in ents]
    picked = []
    seen = set()

    def add(e, why):
        if e not in seen:
            seen.add(e)
            picked.append((e, why))

    # well-known entities: weighted by degree
    for e in rng.choices(ents, weights=weights, k=args.n_weighted * 3):
        if len([p for p in picked if p[1] == "weighted"]) >= args.n_weighted:
            break
        add(e, "weighted")
    # by type, weighted by degree: people, films, countries, cities, universities, bands, teams, awards, tv
    types = [
        ("person", "people.person.profession", "out"),
        ("film", "film.film.genre", "out"),
        ("country", "location.country.capital", "out"),
        ("city", "location.hud_county_place.place", "out"),
        ("university", "education.educational_institution.school_type", "out"),
        ("band", "music.group_member.membership..music.group_membership.group", "in"),
        ("sports team", "sports.sports_team.sport", "out"),
        ("award", "award.award_category.category_of", "out"),
        ("tv program", "tv.tv_program.genre", "out"),
    ]
    for label, rel, d in types:
        index = kg.out if d == "out" else kg.inn
        pool = sorted(e for e in ents if rel in index.get(e, {}))
        if not pool:
            continue
        w = [kg.degree(e) for e in pool]
        for e in rng.choices(pool, weights=w, k=args.n_type):
            add(e, label)
    # less known: uniform
    for e in rng.sample(ents, args.n_uniform):
        add(e, "uniform")
    out = open(args.out, "w", encoding="utf-8") if args.out else sys.stdout
    print(f"# seed {args.seed}, {len(picked)} cards", file=out)
    for e, why in picked:
        print(f"[{why}]", file=out)
        print(card(kg, e, two_hop=not args.no_two_hop), file=out)
    if args.out:
        out.close()
        print(f"wrote {len(picked)} cards to {args.out}")


def resolve(kg, token):
    if token.startswith("/m/"):
        token = mid_to_id(token)
    if token in kg.entities:
        return [token]
    hits = [e for e, n in kg.names.items() if n == token and e in kg.entities]
    if not hits:
        hits = [e for e, n in kg.names.items() if n.lower() == token.lower() and e in kg.entities]
    return sorted(hits, key=lambda e: -kg.degree(e))


def cmd_card(kg, args):
    for tok in args.entities:
        ids = resolve(kg, tok)
        if not ids:
            print(f"no entity named {tok!r}")
        for e in ids:
            print(card(kg, e, two_hop=not args.no_two_hop))


def cmd_find(kg, args):
    s = args.text.lower()
    hits = sorted(
        (e for e, n in kg.names.items() if s in n.lower() and e in kg.entities), key=lambda e: -kg.degree(e)
    )
    for e in hits[: args.limit]:
        print(f"{e:<12} {kg.degree(e):5d}  {kg.name(e)}")


def cmd_probe(kg, args):
    ids = resolve(kg, args.topic)
    if not ids:
        sys.exit(f"unknown topic {args.topic!r}")
    topic = ids[0]
    path = []
    for hop in args.hops:
        rel, _, d = hop.rpartition(":")
        path.append((norm_rel(rel), d))
    ans = kg.walk(topic, path, {topic})
    print(f"{kg.name(topic)} [{topic}]: {len(ans)} answers")
    for e in sorted(ans, key=kg.name)[:50]:
        print("   ", kg.name(e), e)


# --------------------------------------------------------------------------- build


class Bad(Exception):
    pass


def check_path(kg, path, where):
    if not isinstance(path, list) or not path:
        raise Bad(f"{where}: path must be a non-empty list")
    res = []
    for hop in path:
        if not (isinstance(hop, list) and len(hop) == 2):
            raise Bad(f"{where}: each hop is [relation, direction]")
        rel, d = hop
        if rel not in kg.rels:
            raise Bad(f"{where}: unknown relation {rel!r}")
        if d not in ("out", "in"):
            raise Bad(f"{where}: direction must be out or in, got {d!r}")
        res.append((rel, d))
    return res


def build_line(kg, obj):
    for key in ("id", "question", "topic_ids", "topics", "kind", "noise"):
        if key not in obj:
            raise Bad(f"missing field {key!r}")
    if obj["kind"] not in KINDS:
        raise Bad("unknown kind {!r}".format(obj["kind"]))
    if not isinstance(obj["noise"], list) or any(n not in NOISE for n in obj["noise"]):
        raise Bad("bad noise {!r}".format(obj["noise"]))
    tids, tnames = obj["topic_ids"], obj["topics"]
    if not tids or len(tids) != len(tnames) or len(set(tids)) != len(tids):
        raise Bad("topic_ids and topics must be non-empty, distinct, and of equal length")
    for t, n in zip(tids, tnames, strict=False):
        if t not in kg.entities:
            raise Bad(f"unknown topic id {t!r}")
        if kg.name(t) != n:
            raise Bad(f"topic {t} is named {kg.name(t)!r} in the KG, not {n!r}")
    exclude = set(tids)
    if len(tids) == 1:
        if "relation_path" not in obj or "relation_paths" in obj:
            raise Bad("one topic needs relation_path (and no relation_paths)")
        paths = {tids[0]: check_path(kg, obj["relation_path"], "relation_path")}
    else:
        rp = obj.get("relation_paths")
        if not isinstance(rp, dict) or set(rp) != set(tids) or "relation_path" in obj:
            raise Bad("several topics need relation_paths keyed by every topic id")
        paths = {t: check_path(kg, rp[t], f"relation_paths[{t}]") for t in tids}
        if obj["kind"] != "two-entity":
            raise Bad("two topics but kind {!r}".format(obj["kind"]))
    if obj["kind"] == "two-entity" and len(tids) != 2:
        raise Bad("two-entity needs two topics")
    if obj["kind"] == "two-hop" and len(paths[tids[0]]) != 2:
        raise Bad("two-hop needs a 2-hop path")
    if obj["kind"] == "one-hop" and len(paths[tids[0]]) != 1:
        raise Bad("one-hop needs a 1-hop path")
    ans = None
    for t in tids:
        w = kg.walk(t, paths[t], exclude)
        if not w:
            raise Bad(f"walk from {t} ({kg.name(t)}) is empty")
        ans = w if ans is None else ans & w
    if not ans:
        raise Bad("the intersection of the walks is empty")
    if len(ans) > MAX_ANSWERS:
        raise Bad(f"{len(ans)} answers (more than {MAX_ANSWERS})")
    ids = sorted(ans, key=lambda e: (kg.name(e), e))
    res = dict(obj)
    res["answers"] = [kg.name(e) for e in ids]
    res["answer_ids"] = ids
    return res, paths


def check_noise(obj):
    """The two labels that can be read off the text must agree with it."""
    q, noise = obj["question"], obj["noise"]
    if (q == q.lower()) != ("lowercase" in noise):
        raise Bad("'lowercase' label does not match the question text")
    if (not q.rstrip().endswith("?")) != ("no-question-mark" in noise):
        raise Bad("'no-question-mark' label does not match the question text")
    if len(set(noise)) != len(noise):
        raise Bad("repeated noise label")


def _count_row(label, rs):
    tune = sum(r["part"] == "tune" for r in rs)
    held = sum(r["part"] == "heldout" for r in rs)
    return f"{label:<11} {len(rs):5d} {tune:5d} {held:8d}"


def cmd_build(kg, args):
    rows, errors = [], []
    seen_ids, seen_paths, seen_first = set(), {}, {}
    with open(args.src, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            where = f"{os.path.basename(args.src)}:{lineno}"
            obj = None
            try:
                obj = json.loads(line)
                res, paths = build_line(kg, obj)
                if obj["id"] in seen_ids:
                    raise Bad("duplicate id {}".format(obj["id"]))
                seen_ids.add(obj["id"])
                check_noise(obj)
                key = frozenset((t, tuple(p)) for t, p in paths.items())
                if key in seen_paths:
                    raise Bad(f"same topics and relation paths as {seen_paths[key]}")
                seen_paths[key] = obj["id"]
                if len(paths) == 1:
                    ((t, p),) = paths.items()
                    k1 = (t, p[0])
                    if k1 in seen_first:
                        print(
                            "warning {}: {} repeats the topic and first hop of {}".format(
                                where, obj["id"], seen_first[k1]
                            ),
                            file=sys.stderr,
                        )
                    seen_first.setdefault(k1, obj["id"])
                rows.append(res)
            except (Bad, ValueError, KeyError, TypeError) as exc:
                errors.append(
                    "{}: {}{}".format(where, obj.get("id", "?") + ": " if isinstance(obj, dict) else "", exc)
                )
    if errors:
        for e in errors:
            print("BAD " + e, file=sys.stderr)
        sys.exit(1)
    # held-out: a fixed share of each kind, chosen with a fixed seed
    rng = random.Random(args.seed)
    by_kind = collections.defaultdict(list)
    for r in rows:
        by_kind[r["kind"]].append(r["id"])
    held = set()
    for kind in sorted(by_kind):
        ids = sorted(by_kind[kind])
        rng.shuffle(ids)
        held.update(ids[: round(args.heldout_share * len(ids))])
    order = [
        "id",
        "question",
        "topic_ids",
        "topics",
        "relation_path",
        "relation_paths",
        "kind",
        "noise",
        "answers",
        "answer_ids",
        "part",
    ]
    with open(args.out, "w", encoding="utf-8") as fh:
        for r in rows:
            r["part"] = "heldout" if r["id"] in held else "tune"
            fh.write(json.dumps({k: r[k] for k in order if k in r}, ensure_ascii=False) + "\n")
    # report
    print(f"wrote {len(rows)} questions to {os.path.relpath(args.out)}")
    print(f"{'kind':<11} {'all':>5} {'tune':>5} {'heldout':>8}")
    for kind in KINDS:
        rs = [r for r in rows if r["kind"] == kind]
        print(_count_row(kind, rs))
    print(_count_row("total", rows))
    rels = set()
    for r in rows:
        for p in [r["relation_path"]] if "relation_path" in r else list(r["relation_paths"].values()):
            rels.update(h[0] for h in p)
    noise = collections.Counter(n for r in rows for n in r["noise"])
    sizes = [len(r["answers"]) for r in rows]
    print(f"distinct relations: {len(rels)}")
    print(f"distinct topics: {len({t for r in rows for t in r['topic_ids']})}")
    print(
        "noise: "
        + ", ".join(f"{n} {noise[n]}" for n in NOISE)
        + f"; no label {sum(not r['noise'] for r in rows)}"
    )
    print(f"answers per question: {min(sizes)}..{max(sizes)}, {sizes.count(1)} with one answer")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", help="fb15k-237 folder (train/valid/test.txt, names_kgbert/)")
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("sample", help="print candidate cards (seeded)")
    s.add_argument("--seed", type=int, default=SEED)
    s.add_argument("--n-weighted", type=int, default=60)
    s.add_argument("--n-type", type=int, default=12)
    s.add_argument("--n-uniform", type=int, default=40)
    s.add_argument("--no-two-hop", action="store_true")
    s.add_argument("--out")
    c = sub.add_parser("card", help="print cards of named entities or mids")
    c.add_argument("entities", nargs="+")
    c.add_argument("--no-two-hop", action="store_true")
    f = sub.add_parser("find", help="entities whose name contains TEXT")
    f.add_argument("text")
    f.add_argument("--limit", type=int, default=30)
    p = sub.add_parser("probe", help="run one walk")
    p.add_argument("topic")
    p.add_argument("hops", nargs="+", help="relation:out or relation:in")
    b = sub.add_parser("build", help="check the source and write the built set")
    b.add_argument("--src", default=SRC)
    b.add_argument("--out", default=OUT)
    b.add_argument("--seed", type=int, default=SEED)
    b.add_argument("--heldout-share", type=float, default=HELDOUT_SHARE)
    args = ap.parse_args()
    kg = KG(data_dir(args.data))
    {"sample": cmd_sample, "card": cmd_card, "find": cmd_find, "probe": cmd_probe, "build": cmd_build}[
        args.cmd
    ](kg, args)


if __name__ == "__main__":
    main()
