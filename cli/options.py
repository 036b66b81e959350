"""Options several commands share, so that each reads and is explained the same way everywhere."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]


def kg_option(verb: str) -> Decorator:
    """``--kg NAME``, optional: a command that reads one loaded KG, by default the only or latest one."""
    return click.option(
        "--kg",
        default=None,
        metavar="NAME",
        help=f"Knowledge graph to {verb} (default: the only or most recently loaded one).",
    )


def json_option(what: str) -> Decorator:
    """``--json``: print ``what`` as JSON instead of as text."""
    return click.option("--json", "as_json", is_flag=True, help=f"Print {what} as JSON.")


def count_option(
    flag: str, default: int, low: int, high: int, help: str, dest: str | None = None
) -> Decorator:
    """An integer option from ``low`` to ``high``, with its default shown in the help."""
    names = (flag, dest) if dest else (flag,)
    return click.option(*names, default=default, show_default=True, type=click.IntRange(low, high), help=help)
