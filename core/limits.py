"""The bounds the retrievers share, one constant each.

The procedures' ``io.kgqa.procedures.util.Limits`` holds the same numbers (a question must link and retrieve
the same way through ``kgqa ask`` as through a Cypher call); tests/test_limits.py checks that they agree.
"""

from __future__ import annotations

# Topic entities linked from a question when none are given: kgqa.link.entities' default.
LINKED_ENTITIES = 3

# Rows one question may pull out of the graph by default: SubgraphRAG's candidate triples, the paths of one
# relation chain (SG-RAG's template, GSR's walk).
ROW_CAP = 20_000
