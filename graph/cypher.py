"""Renders the parameterised Jinja templates in cypher_templates/.

Jinja only shapes the query structure (hop counts, optional clauses); every value a user typed travels as a
Cypher parameter, never as template text.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import jinja2


@lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("kgqa.cypher_templates", "."),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
        autoescape=False,
    )


@lru_cache(maxsize=512)
def _render_cached(name: str, frozen: tuple[tuple[str, Any], ...]) -> str:
    return _environment().get_template(f"{name}.cypher.j2").render(**dict(frozen)).strip()


def render(name: str, **structure: Any) -> str:
    """The query text of template ``name`` (no .cypher.j2 suffix) for the given structural options."""
    frozen = tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in structure.items()))
    return _render_cached(name, frozen)
