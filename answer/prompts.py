"""Prompt styles for the LLM answerer, and parsing of what comes back.

The answerer knows nothing of the retrieval method except which prompt style it calls for:

- ``subgraphrag``: SubgraphRAG's system prompt, one worked example (the KG's own: ``example_messages``),
  triplets as ``(head, relation, tail)``
  lines, answers as ``ans: X`` lines;
- ``frag``: FRAG's reasoning-path prompt, paths written ``head -> relation -> tail -> relation -> ...``
  from the topic entity (a hop walked against the stored direction is written ``tail <- relation <- head``);
- ``sgrag``: SG-RAG's ``subject|relation|object`` triplet lines (the style for every other method).

All three ask for ``ans:`` lines so that one robust parser reads them back.
"""

from __future__ import annotations

import re
from typing import Literal

from kgqa.core.text import normalize_answer
from kgqa.core.types import Evidence, Triplet
from kgqa.models.kg_models import PromptExample, read_prompt_example

Style = Literal["subgraphrag", "frag", "sgrag"]
Message = dict[str, str]

STYLE_BY_METHOD: dict[str, Style] = {"subgraphrag": "subgraphrag", "frag": "frag"}


def style_for(method: str) -> Style:
    return STYLE_BY_METHOD.get(method.lower(), "sgrag")


# --- SubgraphRAG ---------------------------------------------------------------------------------------

SUBGRAPHRAG_SYSTEM = (
    "Based on the triplets retrieved from a knowledge graph, please answer the question."
    ' Please return formatted answers as a list, each prefixed with "ans:".'
)

# One worked example, in the shape of SubgraphRAG's in-context example: triplets, question, the triplets
# that answer it, then the answers as "ans:" lines. A trained KG has its own (`kgqa train all` writes it from
# the KG's questions, models.kg_models.PromptExample); this general-knowledge one is for a KG without.
DEFAULT_EXAMPLE = PromptExample(
    question="what did the collaborator of Ada Lovelace design?",
    triplets=(
        ("Ada Lovelace", "collaborator", "Charles Babbage"),
        ("Charles Babbage", "designed", "Analytical Engine"),
        ("Charles Babbage", "designed", "Difference Engine"),
        ("Ada Lovelace", "born_in", "London"),
    ),
    answers=("Analytical Engine", "Difference Engine"),
)


def example_messages(example: PromptExample) -> list[Message]:
    """The worked example as a user turn (triplets and question) and an assistant turn (the triplets that
    reach each answer, then the answers)."""
    lines = "\n".join(subgraphrag_triplet(t) for t in example.triplets)
    reasons = [
        f"- {subgraphrag_triplet(t)}: {t[2] if t[2] in example.answers else t[0]}"
        for t in example.triplets
        if t[0] in example.answers or t[2] in example.answers
    ]
    answers = "\n".join(f"ans: {a}" for a in example.answers)
    return [
        {"role": "user", "content": f"Triplets:\n{lines}\n\nQuestion:\n{example.question}"},
        {
            "role": "assistant",
            "content": "From the triplets:\n"
            + "\n".join(reasons)
            + f"\n\nTherefore, the formatted answers are:\n\n{answers}",
        },
    ]


def subgraphrag_triplet(triplet: Triplet) -> str:
    head, rel, tail = triplet
    return f"({head}, {rel}, {tail})"


def subgraphrag_messages(evidence: Evidence, max_triplets: int | None = None) -> list[Message]:
    lines = "\n".join(subgraphrag_triplet(t) for t in _cap(evidence.triplets, max_triplets))
    example = read_prompt_example(evidence.kg) or DEFAULT_EXAMPLE
    asked = f"Triplets:\n{lines}\n\nQuestion:\n{evidence.question}"
    return _chat(SUBGRAPHRAG_SYSTEM, asked, example_messages(example))


# --- FRAG ----------------------------------------------------------------------------------------------

FRAG_SYSTEM = (
    "Based on the reasoning paths, please answer the given question."
    " Please keep the answer as simple as possible and return all the possible answers as a list,"
    ' each on its own line and prefixed with "ans:".'
)


def frag_path(path: list[Triplet], topics: set[str]) -> str:
    """``head -> relation -> tail -> relation -> ...``, walked from the path's topic end."""
    from kgqa.answer.extractive import walk_path

    start, _end, _ok = walk_path(path, topics)
    parts = [start]
    current = start
    for head, rel, tail in path:
        if head == current or (tail != current):
            parts += ["->", rel, "->", tail]
            current = tail
        else:
            parts += ["<-", rel, "<-", head]
            current = head
    return " ".join(parts)


def frag_messages(evidence: Evidence, max_paths: int | None = None) -> list[Message]:
    topics = set(evidence.topic_names())
    paths = [p for p in evidence.paths if p] or [[t] for t in evidence.triplets]
    lines = "\n".join(frag_path(p, topics) for p in _cap(paths, max_paths))
    return _chat(FRAG_SYSTEM, f"Reasoning Paths:\n{lines}\n\nQuestion:\n{evidence.question}")


# --- SG-RAG --------------------------------------------------------------------------------------------

SGRAG_SYSTEM = (
    "You answer questions using only the knowledge graph triplets you are given."
    " Each triplet is written subject|relation|object."
    ' Return every answer on its own line, prefixed with "ans:", using the entity names exactly as they'
    " appear in the triplets."
)


def sgrag_triplet(triplet: Triplet) -> str:
    return "|".join(triplet)


def sgrag_messages(evidence: Evidence, max_triplets: int | None = None) -> list[Message]:
    lines = "\n".join(sgrag_triplet(t) for t in _cap(evidence.triplets, max_triplets))
    return _chat(SGRAG_SYSTEM, f"Triplets:\n{lines}\n\nQuestion: {evidence.question}")


def build_messages(
    evidence: Evidence, style: Style | None = None, max_items: int | None = None
) -> list[Message]:
    """The chat messages for ``evidence`` in the style its method calls for (or ``style``)."""
    chosen = style or style_for(evidence.method)
    if chosen == "subgraphrag":
        return subgraphrag_messages(evidence, max_items)
    if chosen == "frag":
        return frag_messages(evidence, max_items)
    return sgrag_messages(evidence, max_items)


def _chat(system: str, asked: str, examples: list[Message] | None = None) -> list[Message]:
    """The method's instructions, its worked examples if any, then the evidence and the question."""
    return [{"role": "system", "content": system}, *(examples or []), {"role": "user", "content": asked}]


def _cap(items: list, limit: int | None) -> list:  # type: ignore[type-arg]
    return items if limit is None else items[:limit]


# --- parsing -------------------------------------------------------------------------------------------

_ANS = re.compile(r"(?i)\bans\s*[:：]\s*")
_ANSWER = re.compile(r"(?i)\b(?:final\s+)?answers?\s*(?:is|are)?\s*[:：]\s*")
_BULLET = re.compile(r"^\s*(?:[-*•]+|\d+[.)])\s*")
_DECOR = re.compile(r"[*`\"“”]+")
_NOT_ANSWERS = {
    "",
    "not available",
    "none",
    "unknown",
    "n a",
    "no answer",
    "not found",
    "null",
    "nothing",
    "i dont know",
    "there is no answer",
}


def parse_answers(text: str) -> list[str]:
    """The raw answers in an LLM reply, in order: ``ans: X`` lines, else ``Answer: X`` lines.

    Robust to the usual small-model mess: markdown emphasis, bullets and numbering, ``Ans :`` spellings,
    several ``ans:`` on one line, a trailing explanation in parentheses, "not available".
    """
    found = _after(_ANS, text) or _after(_ANSWER, text)
    return [a for a in dict.fromkeys(found) if normalize_answer(a) not in _NOT_ANSWERS]


def _after(marker: re.Pattern[str], text: str) -> list[str]:
    found: list[str] = []
    for line in _DECOR.sub("", text).splitlines():
        pieces = marker.split(line)
        found.extend(_clean(piece) for piece in pieces[1:])
    return found


def _clean(piece: str) -> str:
    piece = _BULLET.sub("", piece.strip())
    return piece.strip().strip(",;").rstrip(".").strip()


def map_to_entities(raw: list[str], evidence: Evidence) -> tuple[list[str], list[str]]:
    """(answers, unmatched): each raw answer mapped to an evidence entity when it matches after
    normalisation — as a whole, by its part before or inside a parenthesis, or split on commas/"and" —
    else kept as written. Order kept, repeats dropped."""
    index: dict[str, str] = {}
    for name in evidence.entities() + [n for p in evidence.paths for t in p for n in (t[0], t[2])]:
        index.setdefault(normalize_answer(name), name)
    answers: list[str] = []
    unmatched: list[str] = []
    for item in raw:
        matched = _match(item, index)
        if matched:
            answers.extend(matched)
        else:
            answers.append(item)
            unmatched.append(item)
    return list(dict.fromkeys(answers)), unmatched


def _match(item: str, index: dict[str, str]) -> list[str]:
    key = normalize_answer(item)
    if key in index:
        return [index[key]]
    paren = re.match(r"^(.*?)\s*\((.*)\)\s*$", item)
    if paren:
        for part in (paren.group(1), paren.group(2)):
            if normalize_answer(part) in index:
                return [index[normalize_answer(part)]]
    parts = [p for p in re.split(r"\s*(?:,|;|\band\b|&)\s*", item) if p.strip()]
    if len(parts) > 1:
        hits = [index[normalize_answer(p)] for p in parts if normalize_answer(p) in index]
        if hits:
            return hits
    return []


def mentioned_entities(text: str, evidence: Evidence, exclude: set[str]) -> list[str]:
    """Evidence entities named in free text, in order of first mention (the fallback when no ``ans:``)."""
    haystack = f" {normalize_answer(text)} "
    positions: list[tuple[int, str]] = []
    for name in evidence.entities():
        key = normalize_answer(name)
        if name in exclude or not key:
            continue
        at = haystack.find(f" {key} ")
        if at >= 0:
            positions.append((at, name))
    return [name for _at, name in sorted(positions)]
