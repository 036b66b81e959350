"""The `kgqa` command. Each subcommand parses options, calls one library function, and formats the result."""

from __future__ import annotations

import sys

import click
from kgqa.cli.cypher_cmd import cypher
from kgqa.cli.server_cmd import server
from kgqa.graph.errors import KgqaError


class _Group(click.Group):
    """Turns expected failures into one line on stderr and exit code 1, instead of a traceback."""

    def invoke(self, ctx: click.Context) -> object:
        from neo4j.exceptions import Neo4jError, ServiceUnavailable

        try:
            return super().invoke(ctx)
        except KgqaError as exc:
            _fail(str(exc))
        except (ServiceUnavailable, Neo4jError) as exc:
            message = getattr(exc, "message", None) or str(exc)
            _fail(f"Neo4j: {message.splitlines()[0] if message else type(exc).__name__}")
        except FileNotFoundError as exc:
            _fail(f"file not found: {exc.filename or exc}")
        except KeyboardInterrupt:
            _fail("interrupted")
        return None


def _fail(message: str) -> None:
    click.echo(f"kgqa: error: {message}", err=True)
    sys.exit(1)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="kgqa")
def main() -> None:
    """Question answering over knowledge graphs, native to Neo4j."""


main.add_command(server)
main.add_command(cypher)


def _register_optional() -> None:
    # Commands are registered lazily by module so that a broken optional dependency of one command
    # (say, llama-cpp for `kgqa llm`) does not take the whole CLI down.
    import importlib

    for module, name in (
        ("kgqa.cli.load_cmd", "load"),
        ("kgqa.cli.load_cmd", "kgs"),
        ("kgqa.cli.load_cmd", "index"),
        ("kgqa.cli.ask_cmd", "ask"),
        ("kgqa.cli.llm_cmd", "llm"),
        ("kgqa.cli.eval_cmd", "eval_command"),
        ("kgqa.cli.train_cmd", "train"),
    ):
        try:
            command = getattr(importlib.import_module(module), name)
        except ModuleNotFoundError as exc:
            if exc.name and exc.name.startswith("kgqa.cli."):
                continue
            raise
        main.add_command(command)


_register_optional()
