"""Entity linking from free text, inside the database.

``link_entities(driver, question, kg)`` finds the topic entities of a question:

1. ``[brackets]`` (MetaQA style) are honoured: the bracketed text is looked up by exact name (then by id), and
   only when that fails is it linked like free text.
2. Otherwise the question is cut into word n-grams (candidate spans). Three sources propose entities:

   - **exact**: every span, in a few case variants, is looked up on the ``(kg, name)`` range index in one
     ``UNWIND`` query;
   - **full-text + fuzzy**: one Lucene query over the content words of the question (``word~1`` fuzzy terms
     for longer words, so "Choper" still finds "Chopper"); each hit is then aligned back onto a span of the
     question with a bounded Levenshtein distance;
   - **vector** (fallback only, when nothing above is convincing): content spans are embedded and the
     ``entity_embedding`` index is asked for near names; only very close names are accepted.

3. Each (entity, span) candidate gets a score in [0, 1] that prefers exact over fuzzy, longer over shorter,
   spans made of content words over spans made of question words ("what", "movies", "directed"), and, when
   the question carries capitals, capitalised spans. Overlapping spans are resolved greedily, best first.

Every user string travels as a query parameter. The Lucene query string is built from normalised words with
Lucene's special characters escaped, and is itself passed as a parameter.
"""

from __future__ import annotations

import math
import re
import time
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from kgqa.graph.cypher import render
from kgqa.retrieve.evidence import LinkedEntity
from neo4j import Driver

MAX_SPAN_TOKENS = 12
FULLTEXT_FETCH = 200  # index hits fetched (all KGs share the index) ...
FULLTEXT_KEEP = 80  # ... and kept for this KG
VECTOR_K = 25
VECTOR_MIN_COSINE = 0.9  # below this a vector neighbour is a guess, not a link
MIN_SCORE = 0.30  # a candidate below this is not returned at all
TWIN_RATIO = 0.95  # an entity with the very same name as a chosen one, on the same span, within this ratio
SECONDARY_RATIO = 0.75  # further entities must score at least this fraction of the best one

# Function words and generic question vocabulary: a span made only of these is rarely the entity meant.
# The words of the KG's relation names (e.g. "directed", "language") are added per KG at run time.
STOPWORDS: frozenset[str] = frozenset(
    """
    a about above after again against all also am an and any are as at be because been before being below
    between both but by can could did do does doing done down during each few for from further had has have
    having he her here hers herself him himself his how i if in into is it its itself just me more most my
    myself no nor not of off on once only or other our ours out over own same she should so some such than
    that the their theirs them themselves then there these they this those through to too under until up
    very was we were what when where which while who whom whose why will with would you your yours
    s t d ll m re ve
    film films movie movies picture pictures show shows book books person people someone somebody
    thing things kind kinds type types sort sorts name names named called
    act acted acting actor actors actress actresses appear appeared appearing appears cast casting
    star starred starring stars co costar costars
    direct directed directing director directors write wrote written writing writer writers screenwriter
    screenwriters release released releasing year years date dates genre genres language languages spoken
    tag tags tagged describe described description topic topics subject subjects about rated rating
    ratings votes vote popularity imdb primary main also share shared sharing same together
    tell give list find know say said show shown many much often
    was were be been being is are
    """.split()
)

# Words a title leaves in lower case ("What's in a Name?", "Lord of the Rings").
_MINOR = frozenset("a an the of in on at to for and or nor but by with from as into".split())
_RELATION_SEPARATORS = re.compile(r"[._/]+")
_TOKEN = re.compile(r"\S+")
_BRACKET = re.compile(r"\[([^\[\]]+)\]")
_OUTER_PUNCT = "\"'“”‘’`([{<)]}>,.;:!?"
_NON_WORD = re.compile(r"[^\w]+")
_LUCENE_SPECIAL = re.compile(r'([+\-!(){}\[\]^"~*?:\\/&|])')


@dataclass(frozen=True)
class _Token:
    text: str  # as typed
    start: int
    end: int
    norm: str  # lower-case, accents and punctuation removed ("" for pure punctuation)


@dataclass
class _Candidate:
    id: str
    name: str
    start: int  # token index, inclusive
    end: int  # token index, exclusive
    how: str
    match: float  # quality of the string match, in [0, 1]
    degree: int = 0  # relationships of the entity: breaks ties between equally good names
    types: tuple[str, ...] = ()  # its relationship types
    score: float = 0.0


def escape_lucene(text: str) -> str:
    """``text`` with Lucene query-parser special characters escaped (the operators AND/OR/NOT quoted out)."""
    escaped = _LUCENE_SPECIAL.sub(r"\\\1", text)
    return re.sub(r"\b(AND|OR|NOT)\b", lambda m: m.group(1).lower(), escaped)


def normalize(text: str) -> str:
    """Lower-case words without accents or punctuation, single-spaced."""
    decomposed = unicodedata.normalize("NFKD", text)
    plain = "".join(ch for ch in decomposed if not unicodedata.combining(ch)).lower()
    return " ".join(w for w in _NON_WORD.sub(" ", plain.replace("_", " ")).split() if w)


def levenshtein(a: str, b: str, bound: int) -> int:
    """Edit distance of ``a`` and ``b``, or ``bound + 1`` as soon as it is known to exceed ``bound``."""
    if abs(len(a) - len(b)) > bound:
        return bound + 1
    if a == b:
        return 0
    big = bound + 1
    previous = [j if j <= bound else big for j in range(len(b) + 1)]
    for i in range(1, len(a) + 1):
        ca = a[i - 1]
        lo, hi = max(1, i - bound), min(len(b), i + bound)
        current = [big] * (len(b) + 1)
        current[0] = i if i <= bound else big
        row_min = current[0]
        for j in range(lo, hi + 1):
            value = previous[j - 1] + (ca != b[j - 1])
            if previous[j] + 1 < value:
                value = previous[j] + 1
            if current[j - 1] + 1 < value:
                value = current[j - 1] + 1
            current[j] = value
            if value < row_min:
                row_min = value
        if row_min > bound:
            return big
        previous = current
    return min(previous[-1], big)


def allowed_edits(length: int) -> int:
    """Typos tolerated in a name of ``length`` characters: none up to 4, one up to 8, then one per 8 more."""
    if length <= 4:
        return 0
    if length <= 8:
        return 1
    return 1 + (length - 1) // 8


def _tokens(question: str) -> list[_Token]:
    return [_Token(m.group(), m.start(), m.end(), normalize(m.group())) for m in _TOKEN.finditer(question)]


def _case_variants(text: str) -> list[str]:
    """As typed, lower case, Every Word Capitalised, Title Case with minor words lower, First capital."""
    words = text.split(" ")
    capitalised = " ".join(w[:1].upper() + w[1:] for w in words)
    title = " ".join(w if k and w.lower() in _MINOR else w[:1].upper() + w[1:] for k, w in enumerate(words))
    return list(dict.fromkeys([text, text.lower(), capitalised, title, text[:1].upper() + text[1:]]))


class _Linker:
    def __init__(self, driver: Driver, kg: str) -> None:
        self.driver = driver
        self.kg = kg

    def _run(
        self, template: str, structure: dict[str, object] | None = None, **params: object
    ) -> list[dict[str, object]]:
        query = render(template, **(structure or {}))
        records, _, _ = self.driver.execute_query(query, {"kg": self.kg, **params}, routing_="r")
        return [dict(r) for r in records]

    # --- brackets ---------------------------------------------------------------------------------------

    def brackets(self, names: list[str], max_entities: int) -> list[LinkedEntity]:
        rows = self._run("linking/candidates", {"fulltext": False}, names=names)
        exact_rows: list[dict[str, object]] = rows[0]["exact"]  # type: ignore[assignment]
        exact = {str(hit["text"]): hit for hit in exact_rows}
        missing = [n for n in names if n not in exact]
        by_id = {str(r["text"]): r for r in self._run("linking/names_by_id", ids=missing)} if missing else {}
        found: list[LinkedEntity] = []
        for text in names:
            row = exact.get(text) or by_id.get(text)
            if row is not None:
                found.append(LinkedEntity(str(row["id"]), str(row["name"]), 1.0, "bracket", text))
            else:  # a bracket with a typo or other casing: link its text alone, keep the best
                found.extend(self.free(text, 1))
        unique = {e.id: e for e in reversed(found)}
        return [e for e in found if unique.get(e.id) is e][:max_entities]

    # --- free text --------------------------------------------------------------------------------------

    def free(self, question: str, max_entities: int) -> list[LinkedEntity]:
        tokens = _tokens(question)
        if not tokens:
            return []
        stop = STOPWORDS | relation_words(self.driver, self.kg)
        content = [bool(t.norm) and not all(w in stop for w in t.norm.split()) for t in tokens]
        has_case = any(c.isupper() for t in tokens[1:] for c in t.text) and not question.isupper()

        lookups = _exact_lookups(tokens)
        query = _lucene_query(tokens, content)
        rows = self._run(
            "linking/candidates",
            {"fulltext": bool(query)},
            names=list(lookups),
            query=query,
            limit=FULLTEXT_FETCH,
            keep=FULLTEXT_KEEP,
        )
        exact_rows: list[dict[str, str]] = rows[0]["exact"]  # type: ignore[assignment]
        hits: list[dict[str, str]] = rows[0]["hits"]  # type: ignore[assignment]

        candidates: dict[tuple[str, int, int], _Candidate] = {}

        def add(c: _Candidate) -> None:
            key = (c.id, c.start, c.end)
            old = candidates.get(key)
            if old is None or c.match > old.match:
                candidates[key] = c

        for row in exact_rows:
            for i, j, exact_case in lookups[row["text"]]:
                # without any capitals in the question, "ringo lam" (a tag) and "Ringo Lam" (a person) are
                # nearly equally exact: both are kept (see _resolve), the one typed as is first
                quality = 1.0 if exact_case else 0.99 if not has_case else 0.96
                add(
                    _Candidate(
                        str(row["id"]),
                        str(row["name"]),
                        i,
                        j,
                        "exact",
                        quality,
                        int(row["degree"]),
                        tuple(row.get("types") or ()),
                    )
                )
        for c in _align(hits, tokens):
            add(c)
        cues = _stems(t.norm for t in tokens)
        scored = [_score(c, tokens, content, has_case, cues) for c in candidates.values()]
        if max((c.score for c in scored), default=0.0) < MIN_SCORE:
            for c in self._vector(tokens, content):
                add(c)
            scored = [_score(c, tokens, content, has_case, cues) for c in candidates.values()]
        return _resolve(scored, tokens, max_entities)

    def _vector(self, tokens: Sequence[_Token], content: Sequence[bool]) -> list[_Candidate]:
        # Maximal runs of content words and their sub-spans up to 4 words: the names the user may mean.
        spans: dict[str, tuple[int, int]] = {}
        i = 0
        while i < len(tokens):
            if not content[i]:
                i += 1
                continue
            j = i
            while j < len(tokens) and content[j]:
                j += 1
            for a in range(i, j):
                for b in range(a + 1, min(j, a + 4) + 1):
                    spans.setdefault(" ".join(t.text for t in tokens[a:b]).strip(_OUTER_PUNCT), (a, b))
            i = j
        spans = {k: v for k, v in spans.items() if k}
        if not spans:
            return []
        from kgqa.models.encoder import embed

        texts = list(spans)
        vectors = embed(texts)
        rows = self._run("linking/vector", vectors=[v.tolist() for v in vectors], k=VECTOR_K)
        out: list[_Candidate] = []
        for row in rows:
            similarity = 2 * float(row["score"]) - 1  # type: ignore[arg-type]  # the index reports (1 + cos) / 2
            if similarity < VECTOR_MIN_COSINE:
                continue
            a, b = spans[texts[int(row["i"])]]  # type: ignore[call-overload]
            out.append(_Candidate(str(row["id"]), str(row["name"]), a, b, "vector", 0.75 * similarity))
        return out


def _exact_lookups(tokens: Sequence[_Token]) -> dict[str, list[tuple[int, int, bool]]]:
    """Strings to look up by exact name -> the spans (i, j, typed-as-is) they come from."""
    lookups: dict[str, list[tuple[int, int, bool]]] = {}
    for i in range(len(tokens)):
        if not tokens[i].norm:
            continue
        for j in range(i + 1, min(len(tokens), i + MAX_SPAN_TOKENS) + 1):
            if not tokens[j - 1].norm:
                continue
            raw = " ".join(t.text for t in tokens[i:j])
            typed = {raw, raw.strip(_OUTER_PUNCT), raw.rstrip(_OUTER_PUNCT), raw.lstrip(_OUTER_PUNCT)}
            for text in typed:
                if not text:
                    continue
                for variant in _case_variants(text):
                    lookups.setdefault(variant, []).append((i, j, variant in typed))
    return lookups


def _lucene_query(tokens: Sequence[_Token], content: Sequence[bool]) -> str:
    """One OR query over the words of the question ("" when it has no content word).

    Content words count fully and longer ones become fuzzy terms (``word~1``); question words count a little
    (``the^0.2``), so that long names made mostly of them ("We're No Angels") still rank. Each word is sent
    both as normalised and as typed (lower-case, accents and inner apostrophes kept, as the analyzer indexes
    "O'Hara" and "Chéri"), always escaped.
    """
    if not any(content):
        return ""
    terms: dict[str, None] = {}
    for t, is_content in zip(tokens, content, strict=True):
        typed = t.text.strip(_OUTER_PUNCT).lower()
        forms = dict.fromkeys([*t.norm.split(), typed] if typed and typed != t.norm else t.norm.split())
        for w in forms:
            if not is_content:
                terms.setdefault(f"{escape_lucene(w)}^0.2", None)
                continue
            edits = 0 if len(w) < 4 else 1 if len(w) < 8 else 2  # a typed word may have lost a letter
            terms.setdefault(f"{escape_lucene(w)}~{edits}" if edits else escape_lucene(w), None)
    return " ".join(terms)


def _align(hits: Sequence[dict[str, str]], tokens: Sequence[_Token]) -> list[_Candidate]:
    """Each full-text hit placed on the span of the question it matches best, if one matches closely."""
    windows: dict[str, tuple[int, int, str]] = {}
    by_length: dict[int, list[str]] = {}
    for i in range(len(tokens)):
        if not tokens[i].norm:
            continue
        for j in range(i + 1, min(len(tokens), i + MAX_SPAN_TOKENS) + 1):
            if not tokens[j - 1].norm:
                continue
            spaced = " ".join(t.norm for t in tokens[i:j] if t.norm)
            squeezed = spaced.replace(" ", "")
            if squeezed not in windows:
                windows[squeezed] = (i, j, spaced)
                by_length.setdefault(len(squeezed), []).append(squeezed)
    out: list[_Candidate] = []
    for hit in hits:
        name = str(hit["name"])
        spaced_target = normalize(name)
        target = spaced_target.replace(" ", "")
        if not target:
            continue
        found = windows.get(target)
        if found is not None:
            i, j, spaced = found
            quality, how = (0.95 if spaced == spaced_target else 0.93), "fulltext"
        else:
            bound = allowed_edits(len(target))
            best: tuple[int, str] | None = None
            letters = set(target)
            for length in range(len(target) - bound, len(target) + bound + 1):
                for window in by_length.get(length, ()):
                    # cheap necessary conditions first: a typo rarely hits both ends of a name, and each
                    # edit changes at most two letters of the alphabet used
                    if (window[0] != target[0] and window[-1] != target[-1]) or len(
                        letters.symmetric_difference(window)
                    ) > 2 * bound:
                        continue
                    d = levenshtein(window, target, bound)
                    if d <= bound and (best is None or d < best[0]):
                        best = (d, window)
            if best is None:
                continue
            i, j, _ = windows[best[1]]
            quality, how = 1 - 1.5 * best[0] / len(target), "fuzzy"
        out.append(
            _Candidate(
                str(hit["id"]),
                name,
                i,
                j,
                how,
                quality,
                int(hit.get("degree") or 0),
                tuple(hit.get("types") or ()),
            )
        )
    return out


def _stems(words: Iterable[str]) -> frozenset[str]:
    """Crude stems (first four letters of words of four letters or more): "starred", "star" -> "star"."""
    return frozenset(w[:4] for text in words for w in text.split() if len(w) >= 4)


def _score(
    c: _Candidate,
    tokens: Sequence[_Token],
    content: Sequence[bool],
    has_case: bool,
    cues: frozenset[str] = frozenset(),
) -> _Candidate:
    """How likely the span means the entity: match quality x name-likeness of the span."""
    span = range(c.start, c.end)
    content_chars = sum(len(tokens[k].norm.replace(" ", "")) for k in span if content[k])
    stop_chars = sum(len(tokens[k].norm.replace(" ", "")) for k in span if not content[k])
    content_words = sum(1 for k in span if content[k])
    name_words = max(len(normalize(c.name).split()), 1)
    # Longer names are less likely to be accidental: saturating in characters and in words.
    weight = content_chars + 0.4 * stop_chars
    score = c.match * (1 - 0.55 * math.exp(-weight / 6) - 0.15 * math.exp(-(name_words - 1)))
    # Capitals, when the question has any: sentence-initial words say nothing, so they are skipped.
    judged = [
        k
        for k in span
        if (content[k] or content_words == 0)
        and tokens[k].norm
        and k > 0
        and not (k > c.start and tokens[k].norm in _MINOR)
    ]
    capital = [
        tokens[k].text.lstrip(_OUTER_PUNCT)[:1].isupper() or tokens[k].norm[:1].isdigit() for k in judged
    ]
    capitalised = has_case and bool(capital) and all(capital)
    if content_words == 0:  # only question words ("what", "movies", "star"): rarely the entity meant
        score *= 0.6 if capitalised else 0.25
    # A content word right next to the span suggests the name goes on ("Bad Boy" in "Bad Boy Buby").
    for k in (c.start - 1, c.end):
        if 0 <= k < len(tokens) and content[k]:
            score *= 0.85
    if capitalised:
        score *= 1.12
    elif has_case and capital and not any(capital):
        score *= 0.88
    # The question talks about one of the entity's relations ("star" -> starred_actors): a small nudge that
    # decides between namesakes ("lee pace" the tag, "Lee Pace" the actor) and little else.
    if cues and c.types and cues & _stems(normalize(_RELATION_SEPARATORS.sub(" ", t)) for t in c.types):
        score *= 1.03
    c.score = score  # may exceed 1 after the nudges: ranked as is, reported capped at 1
    return c


def _resolve(candidates: list[_Candidate], tokens: Sequence[_Token], max_entities: int) -> list[LinkedEntity]:
    """Best first, no two chosen spans overlapping, no entity twice, weak leftovers dropped."""
    ordered = sorted(candidates, key=lambda c: (-round(c.score, 3), -(c.end - c.start), -c.degree, c.name))
    taken: list[tuple[int, int]] = []
    chosen: list[_Candidate] = []
    seen: set[str] = set()
    for c in ordered:
        if c.score < MIN_SCORE or len(chosen) >= max_entities:
            break
        if chosen and c.score < SECONDARY_RATIO * chosen[0].score:
            break
        if c.id in seen:
            continue
        # Same words, other entity ("ringo lam" the tag, "Ringo Lam" the person): both stand, best first.
        twin = any(
            o.start == c.start
            and o.end == c.end
            and c.score >= TWIN_RATIO * o.score
            and normalize(o.name) == normalize(c.name)
            for o in chosen
        )
        if not twin and any(c.start < e and s < c.end for s, e in taken):
            continue
        chosen.append(c)
        taken.append((c.start, c.end))
        seen.add(c.id)
    return [
        LinkedEntity(
            c.id,
            c.name,
            round(min(c.score, 1.0), 4),
            c.how,
            " ".join(t.text for t in tokens[c.start : c.end]).strip(_OUTER_PUNCT),
        )
        for c in chosen
    ]


_RELATION_WORDS: dict[tuple[int, str], tuple[float, frozenset[str]]] = {}
_RELATION_WORDS_TTL = 300.0


def relation_words(driver: Driver, kg: str) -> frozenset[str]:
    """Words of the KG's relation names ("directed_by" -> "directed"), cached per driver and KG."""
    key = (id(driver), kg)
    cached = _RELATION_WORDS.get(key)
    now = time.monotonic()
    if cached is not None and now - cached[0] < _RELATION_WORDS_TTL:
        return cached[1]
    records, _, _ = driver.execute_query(render("linking/relation_words"), {"kg": kg}, routing_="r")
    words = _relation_name_words(tuple(str(r["name"]) for r in records))
    _RELATION_WORDS[key] = (now, words)
    return words


@lru_cache(maxsize=64)
def _relation_name_words(names: tuple[str, ...]) -> frozenset[str]:
    words: set[str] = set()
    for name in names:
        for w in normalize(re.sub(r"[._/]", " ", name)).split():
            if len(w) > 2 and not w.isdigit():
                words.add(w)
    return frozenset(words)


def link_entities(driver: Driver, question: str, kg: str, max_entities: int = 3) -> list[LinkedEntity]:
    """Topic entities of ``question`` in ``kg``, best first; ``[]`` when no entity is found."""
    if max_entities <= 0 or not question.strip():
        return []
    linker = _Linker(driver, kg)
    bracketed = [b.strip() for b in _BRACKET.findall(question) if b.strip()]
    if bracketed:
        return linker.brackets(list(dict.fromkeys(bracketed)), max_entities)
    return linker.free(question, max_entities)
