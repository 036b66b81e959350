"""Bad calls from Cypher (issue 17): every kgqa.* procedure and function, called over Bolt with nulls,
wrong types, empty strings, negative and huge numbers, unknown KGs and unknown models, fails with a
ClientError whose message is one line, starts with the argument it blames (``question``, ``kg``,
``config.k``) and has no Java in it (no exception class name, no stack frame); the server answers after.

The table below lists the callables by name; the first test fails when ``SHOW PROCEDURES``/``SHOW FUNCTIONS``
has a ``kgqa.*`` one the table lacks, or a signature argument that no call of the table sets to null, so a new
procedure or argument cannot be forgotten. A call that is valid (a null config means the defaults, an empty
question links nothing) is in ``accepted``: it may stream rows or nothing; if it fails, it fails as cleanly.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import pytest
from neo4j import Driver
from neo4j.exceptions import ClientError, Neo4jError

HUGE = 10**12
NOBODY = "Nobody Atall"
QUESTION = "who directed [Kismet]"
# A question's vector as long as MetaQA's entity embeddings (all-MiniLM-L6-v2).
EMBEDDING = [0.05] * 384
# Java leaking into a message: a stack frame, a chained cause, an exception class.
JAVA = re.compile(r"\bat (io\.kgqa|org\.neo4j|java\.)|java\.lang|Caused by|\b[A-Z]\w*(Exception|Error)\b:?")


@dataclass(frozen=True)
class Bad:
    """One argument changed: ``where`` is ``question`` (the whole argument) or ``config.k`` (one key of a map
    argument, merged into the working map); ``blamed`` is how the message must start (default: ``where``)."""

    where: str
    value: Any
    blamed: str = ""
    # The type of a whole argument is Neo4j's to check, before the procedure runs: its message names the
    # parameter on the first line and then shows the query with a caret under it.
    by_neo4j: bool = False


@dataclass(frozen=True)
class Target:
    """A kgqa.* procedure or function: the call with one $parameter per argument, arguments that work, the
    bad changes to them, and changes that are valid."""

    query: str
    good: dict[str, Any]
    bad: list[Bad] = field(default_factory=list)
    accepted: list[Bad] = field(default_factory=list)


def numbers(*keys: str) -> list[Bad]:
    """A string where config.<key> wants a number, a negative number and a huge one."""
    return [Bad(f"config.{key}", value) for key in keys for value in ("ten", -1, HUGE)]


def kgs(where: str) -> list[Bad]:
    return [Bad(where, "no-such-kg"), Bad(where, ""), Bad(where, 5, by_neo4j="." not in where)]


def typed(where: str, value: Any) -> Bad:
    """A whole argument of the wrong type: Neo4j's check (see Bad.by_neo4j)."""
    return Bad(where, value, by_neo4j=True)


def models() -> list[Bad]:
    return [Bad("config.model", "no-such-model"), Bad("config.model", ""), Bad("config.model", "../escape")]


def questions(*values: Any) -> list[Bad]:
    return [Bad("question", value) for value in values]


def topic_ids() -> list[Bad]:
    return [
        Bad("topicIds", None),
        Bad("topicIds", []),
        Bad("topicIds", [5]),
        Bad("topicIds", [NOBODY]),
        typed("topicIds", "Kismet"),
        typed("config", "hops: 2"),
    ]


def topic_entities(*values: Any) -> list[Bad]:
    return [Bad("config.topicEntities", value) for value in values]


UNKNOWN_KEY = Bad("config.K", 5, "config")
NULL_CONFIG = Bad("config", None)


def targets(kg: str, gsr_model: str = "", subgraphrag_model: str = "") -> dict[str, Target]:
    """The table: every kgqa.* procedure and function with its bad calls."""
    del gsr_model  # each KG's own model: the calls name none
    gsr = {"question": QUESTION, "config": {"kg": kg}}
    gsr_bad = [
        *questions(None, "", "   "),
        typed("question", 5),
        typed("config", "beams: 3"),
        *numbers("beams"),
        Bad("config.beams", 2.5),
        *kgs("config.kg"),
        *models(),
        Bad("config.topicSpans", 5),
        Bad("config.topicSpans", [""]),
        UNKNOWN_KEY,
    ]
    simgrag = {"question": "who directed Kismet", "config": {"kg": kg}}
    subgraphrag = {"question": QUESTION, "config": {"kg": kg}}
    subgraphrag_bad = [
        *questions(None, "", "   "),
        typed("question", 5),
        typed("config", "k: 3"),
        *numbers("k", "hops", "maxCandidates", "pathHops"),
        Bad("config.k", 0),
        Bad("config.questionEmbedding", [1.0, 2.0]),
        Bad("config.questionEmbedding", "x"),
        Bad("config.questionEmbedding", []),
        Bad("config.includeSeed", "yes"),
        Bad("config.failOnTruncation", "yes"),
        Bad("config.cacheEmbeddings", 0),
        *kgs("config.kg"),
        *models(),
        *topic_entities([], 5, [5], [NOBODY]),
        Bad("config.topicSpans", 5),
        UNKNOWN_KEY,
    ]
    neighbourhood = {"kg": kg, "topicIds": ["Kismet"], "config": {}}
    return {
        "kgqa.gsr.chains": Target(
            "CALL kgqa.gsr.chains($question, $config)",
            gsr,
            [*gsr_bad, *topic_entities(5, [5])],
            [NULL_CONFIG],
        ),
        "kgqa.gsr.retrieve": Target(
            "CALL kgqa.gsr.retrieve($question, $config)",
            gsr,
            [
                *gsr_bad,
                *numbers("keep", "maxPaths"),
                Bad("config.allChains", "yes"),
                *topic_entities([], 5, [5], [NOBODY]),
            ],
            [NULL_CONFIG],
        ),
        "kgqa.simgrag.match": Target(
            "CALL kgqa.simgrag.match($pattern, $config)",
            {"pattern": [["Kismet", "directed_by", "?director"]], "config": {"kg": kg}},
            [
                Bad("pattern", None),
                typed("pattern", "Kismet directed_by ?director"),
                typed("config", "k: 3"),
                Bad("pattern", []),
                Bad("pattern", ["Kismet"]),
                Bad("pattern", [["Kismet", "directed_by"]]),
                Bad("pattern", [["Kis\nmet", "directed_by"]]),  # the caller's line break stays out
                Bad("pattern", [[1, "directed_by", "?director"]]),
                Bad("pattern", [["Kismet", "", "?director"]]),
                Bad("pattern", [["?film", "directed_by", "?director"]]),
                *numbers("k", "nodeCandidates", "relationCandidates", "maxEdges"),
                *numbers("maxMatches", "maxExpansions"),
                Bad("config.directed", "yes"),
                Bad("config.injective", 1),
                Bad("config.prune", "no"),
                Bad("config.ties", 0.5),
                Bad("config.entities", "Kismet"),
                Bad("config.entities", {"Kismet": [NOBODY]}),
                Bad("config.entities", {"?director": ["Kismet"]}),
                *kgs("config.kg"),
                UNKNOWN_KEY,
            ],
            [NULL_CONFIG],
        ),
        "kgqa.simgrag.pattern": Target(
            "CALL kgqa.simgrag.pattern($question, $config)",
            simgrag,
            [
                *questions(None, "", "   "),
                typed("question", 5),
                typed("config", "kg: metaqa"),
                *kgs("config.kg"),
                *topic_entities([], 5, [5], [NOBODY]),
                Bad(
                    "config",
                    {"kg": kg, "topicEntities": ["Kismet"], "topicSpans": ["a", "b"]},
                    "config.topicSpans",
                ),
                Bad("config.bridge", "yes"),
                UNKNOWN_KEY,
            ],
            [NULL_CONFIG],
        ),
        "kgqa.simgrag.retrieve": Target(
            "CALL kgqa.simgrag.retrieve($question, $config)",
            simgrag,
            [
                *questions(None, "", "   "),
                typed("question", 5),
                typed("config", "k: 3"),
                *numbers("k", "nodeCandidates", "maxEdges", "maxExpansions"),
                Bad("config.directed", "yes"),
                Bad("config.bridge", 3),
                *kgs("config.kg"),
                *topic_entities([], 5, [5], [NOBODY]),
                Bad("config.entities", {}, "config"),  # match's option, not retrieve's
                UNKNOWN_KEY,
            ],
            [NULL_CONFIG],
        ),
        "kgqa.link.entities": Target(
            "CALL kgqa.link.entities($question, $config)",
            simgrag,
            [
                *questions(None),
                typed("question", 5),
                typed("config", "kg: metaqa"),
                *numbers("maxEntities"),
                Bad("config.maxEntities", 0),
                Bad("config.secondaryRatio", "high"),
                Bad("config.secondaryRatio", -0.5),
                Bad("config.secondaryRatio", HUGE),
                *kgs("config.kg"),
                UNKNOWN_KEY,
            ],
            # documented: an empty question links nothing and streams no row
            [Bad("question", ""), Bad("question", "   "), NULL_CONFIG],
        ),
        "kgqa.link.candidates": Target(
            "CALL kgqa.link.candidates($question, $config)",
            simgrag,
            [
                *questions(None),
                typed("question", 5),
                typed("config", "kg: metaqa"),
                *kgs("config.kg"),
                UNKNOWN_KEY,
            ],
            # documented: an empty question has no candidates and streams no row
            [Bad("question", ""), Bad("question", "   "), NULL_CONFIG],
        ),
        "kgqa.triplets.dedupOrder": Target(
            "CALL kgqa.triplets.dedupOrder($triplets, $topicEntities)",
            {"triplets": [["Kismet", "directed_by", "William Dieterle"]], "topicEntities": ["Kismet"]},
            [
                Bad("triplets", None),
                typed("triplets", "Kismet|directed_by|William Dieterle"),
                Bad("triplets", ["Kismet|directed_by|William Dieterle"]),
                Bad("triplets", [["Kismet", "directed_by"]]),
                Bad("triplets", [["Kismet", "directed_by", 5]]),
                Bad("triplets", [{"head": "Kismet", "tail": "William Dieterle"}]),
                Bad("topicEntities", None),
                typed("topicEntities", "Kismet"),
                Bad("topicEntities", [5]),
                Bad("topicEntities", [None]),
            ],
            [Bad("triplets", []), Bad("topicEntities", [])],
        ),
        "kgqa.triplets.format": Target(
            "RETURN kgqa.triplets.format($triplets) AS text",
            {"triplets": [["Kismet", "directed_by", "William Dieterle"]]},
            [
                Bad("triplets", None),
                typed("triplets", "Kismet|directed_by|William Dieterle"),
                Bad("triplets", [None]),
                Bad("triplets", [["Kismet"]]),
                Bad("triplets", [[1, 2, 3]]),
            ],
            [Bad("triplets", [])],
        ),
        # documented: null in, null out; only a wrong type is wrong
        "kgqa.text.embed": Target(
            "RETURN kgqa.text.embed($text, $config) AS embedding",
            {"text": "who directed Kismet", "config": {}},
            [
                typed("text", 5),
                typed("text", ["who directed Kismet"]),
                *kgs("config.kg"),
                Bad("config.encoder", "no-such-encoder"),
                Bad("config.encoder", "../escape"),
                Bad("config.encoder", 5),
                Bad("config", {"kg": kg, "encoder": "all-MiniLM-L6-v2"}),  # one or the other
                UNKNOWN_KEY,
            ],
            [Bad("text", None), Bad("text", ""), NULL_CONFIG],
        ),
        "kgqa.version": Target("RETURN kgqa.version() AS version", {}),
        "kgqa.subgraphrag.candidates": Target(
            "CALL kgqa.subgraphrag.candidates($kg, $topicIds, $config)",
            neighbourhood,
            [
                Bad("kg", None),
                *kgs("kg"),
                *topic_ids(),
                *numbers("hops", "maxCandidates", "forwardRounds", "reverseRounds"),
                Bad("config.includeSeed", "yes"),
                Bad("config.failOnTruncation", 1),
                Bad("config", {"maxCandidates": 1, "failOnTruncation": True}, "config.maxCandidates"),
                Bad("config.kg", kg, "config"),  # the KG is the first argument here
                UNKNOWN_KEY,
            ],
            [NULL_CONFIG],
        ),
        "kgqa.subgraphrag.retrieve": Target(
            "CALL kgqa.subgraphrag.retrieve($question, $config)",
            subgraphrag,
            [*subgraphrag_bad, Bad("config.select", "best"), Bad("config.select", 5)],
            [NULL_CONFIG],
        ),
        "kgqa.subgraphrag.walks": Target(
            "CALL kgqa.subgraphrag.walks($question, $config)",
            subgraphrag,
            [
                *subgraphrag_bad,
                Bad("config.select", "paths", "config"),  # retrieve's option, not walks'
                Bad("config.rankBy", "best"),
                Bad("config.rankBy", 3),
            ],
            [NULL_CONFIG],
        ),
        "kgqa.subgraphrag.cosine": Target(
            "CALL kgqa.subgraphrag.cosine($kg, $topicIds, $config)",
            {"kg": kg, "topicIds": ["Kismet"], "config": {"questionEmbedding": EMBEDDING}},
            [
                Bad("kg", None),
                *kgs("kg"),
                *topic_ids(),
                Bad("config", None, "config.questionEmbedding"),  # required
                Bad("config.questionEmbedding", [1.0, 2.0]),
                Bad("config.questionEmbedding", "x"),
                Bad("config.questionEmbedding", []),
                *numbers("k", "hops", "maxCandidates"),
                Bad("config.cacheEmbeddings", "no"),
                Bad("config.model", "default", "config"),  # the baseline has no model
                UNKNOWN_KEY,
            ],
        ),
        "kgqa.frag.neighbourhood": Target(
            "CALL kgqa.frag.neighbourhood($kg, $topicIds, $config)",
            neighbourhood,
            [
                Bad("kg", None),
                *kgs("kg"),
                *topic_ids(),
                *numbers("hops", "maxDegree", "maxFanout", "maxNew"),
                *numbers("maxNodes", "keepNodes", "maxIterations"),
                *[Bad("config.damping", value) for value in ("high", -0.5, 1.5, HUGE)],
                *[Bad("config.tolerance", value) for value in ("small", -1, HUGE)],
                UNKNOWN_KEY,
            ],
            [NULL_CONFIG],
        ),
        "kgqa.paths.walkable": Target(
            "CALL kgqa.paths.walkable($kg, $topicIds, $config)",
            neighbourhood,
            [Bad("kg", None), *kgs("kg"), *topic_ids(), *numbers("maxVia", "fanout"), UNKNOWN_KEY],
            [NULL_CONFIG],
        ),
        "kgqa.paths.ends": Target(
            "CALL kgqa.paths.ends($kg, $topicIds, $chains, $config)",
            {**neighbourhood, "chains": ["directed_by>|directed_by<"]},
            [
                Bad("kg", None),
                *kgs("kg"),
                *topic_ids(),
                Bad("chains", None),
                Bad("chains", [5]),
                Bad("chains", [""]),
                Bad("chains", ["directed_by"]),
                Bad("chains", ["directed_by>||written_by<"]),
                typed("chains", "directed_by>"),
                *numbers("maxPaths"),
                UNKNOWN_KEY,
            ],
            [NULL_CONFIG, Bad("chains", []), Bad("chains", ["no_such_relation>"])],
        ),
    }


NAMES = sorted(targets("kg", "model", "model"))


def changed(good: dict[str, Any], bad: Bad) -> dict[str, Any]:
    arguments = dict(good)
    argument, _, key = bad.where.partition(".")
    if key:
        arguments[argument] = {**(arguments.get(argument) or {}), key: bad.value}
    else:
        arguments[argument] = bad.value
    return arguments


def problems_of(message: str, blamed: str, by_neo4j: bool = False) -> list[str]:
    """What is wrong with an error message: empty when it is one clean line that starts with ``blamed`` (for
    Neo4j's type check: a first line naming the parameter, then the query and a caret)."""
    found = []
    if by_neo4j:
        lines = message.splitlines()
        message, blamed = lines[0], f"Type mismatch for parameter '{blamed}': expected "
        if len(lines) > 3:
            found.append("more lines than the query and a caret")
    elif "\n" in message or "\r" in message:
        found.append("more than one line")
    java = JAVA.search(message)
    if java:
        found.append(f"Java in it ({java.group(0)!r})")
    if blamed and not message.startswith(blamed):
        found.append(f"does not start with {blamed!r}")
    return found


def signature_arguments(signature: str) -> list[str]:
    """The argument names of a SHOW PROCEDURES/FUNCTIONS signature, e.g. ``kgqa.x(question :: STRING, config =
    {} :: MAP) :: (…)`` -> ["question", "config"]."""
    opening = signature.index("(")
    depth = 0
    for end in range(opening, len(signature)):
        depth += {"(": 1, ")": -1}.get(signature[end], 0)
        if depth == 0:
            break
    return re.findall(r"(?:^|,)\s*(\w+)\s*(?:=[^,]*?)?::", signature[opening + 1 : end])


@pytest.fixture(scope="module")
def table(metaqa_kg: str, gsr_model: str, subgraphrag_model: str) -> dict[str, Target]:
    return targets(metaqa_kg, gsr_model, subgraphrag_model)


def test_every_kgqa_procedure_and_function_is_in_the_table(driver: Driver) -> None:
    signatures = {}
    for kind in ("PROCEDURES", "FUNCTIONS"):
        records = driver.execute_query(
            f"SHOW {kind} YIELD name, signature WHERE name STARTS WITH 'kgqa.' RETURN name, signature"
        ).records
        signatures.update({r["name"]: r["signature"] for r in records})
    assert "kgqa.subgraphrag.retrieve" in signatures and "kgqa.version" in signatures, signatures
    missing = sorted(set(signatures) - set(NAMES))
    assert not missing, f"kgqa.* callables this test does not walk: add them to targets(): {missing}"
    gone = sorted(set(NAMES) - set(signatures))
    assert not gone, f"the table names callables the server does not have: {gone}"
    table = targets("kg", "model", "model")
    for name, signature in signatures.items():
        nulls = {b.where for b in table[name].bad + table[name].accepted if b.value is None}
        unwalked = [a for a in signature_arguments(signature) if a not in nulls]
        assert not unwalked, f"{name}: no call of the table sets {unwalked} to null ({signature})"


@pytest.mark.parametrize("name", NAMES)
def test_bad_calls_fail_with_one_line_naming_the_argument(
    driver: Driver, table: dict[str, Target], name: str
) -> None:
    target = table[name]
    # the working call works, so that each bad call fails for its one change
    driver.execute_query(target.query, target.good)
    failures = []
    for bad in target.bad:
        try:
            driver.execute_query(target.query, changed(target.good, bad))
        except ClientError as error:
            problems = problems_of(str(error.message), bad.blamed or bad.where, bad.by_neo4j)
            if problems:
                failures.append(f"{bad.where} = {bad.value!r}: {', '.join(problems)}: {error.message}")
        except Neo4jError as error:
            failures.append(f"{bad.where} = {bad.value!r}: {error.code}, not a ClientError: {error.message}")
        else:
            failures.append(f"{bad.where} = {bad.value!r}: no error")
    for valid in target.accepted:
        try:
            driver.execute_query(target.query, changed(target.good, valid))
        except Neo4jError as error:
            problems = problems_of(str(error.message), "")
            if problems or not isinstance(error, ClientError):
                failures.append(f"{valid.where} = {valid.value!r} (valid): {error.code}: {error.message}")
    assert not failures, f"{name}:\n  " + "\n  ".join(failures)
    assert driver.execute_query("RETURN 1 AS one").records[0]["one"] == 1


def test_the_server_is_alive_after_the_walk(driver: Driver) -> None:
    assert driver.execute_query("RETURN 1 AS one").records[0]["one"] == 1
