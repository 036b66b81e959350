"""The `kgqa` command. Each subcommand parses options, calls one library function, and formats the result."""

from __future__ import annotations

import errno
import importlib
import sys
from typing import Any

import click
from kgqa.core.errors import BadInput, KgqaError

# Each command's module is imported only when that command runs (or when help lists it): a fast start,
# and a broken optional dependency of one command (say, llama-cpp for `kgqa llm`) leaves the others working.
COMMANDS: dict[str, tuple[str, str]] = {
    "server": ("kgqa.cli.server_cmd", "server"),
    "cypher": ("kgqa.cli.cypher_cmd", "cypher"),
    "load": ("kgqa.cli.load_cmd", "load"),
    "kgs": ("kgqa.cli.load_cmd", "kgs"),
    "index": ("kgqa.cli.load_cmd", "index"),
    "ask": ("kgqa.cli.ask_cmd", "ask"),
    "link": ("kgqa.cli.link_cmd", "link"),
    "verify": ("kgqa.cli.verify_cmd", "verify"),
    "llm": ("kgqa.cli.llm_cmd", "llm"),
    "eval": ("kgqa.cli.eval_cmd", "eval_command"),
    "train": ("kgqa.cli.train_cmd", "train"),
    "serve": ("kgqa.cli.serve_cmd", "serve"),
}


class _Group(click.Group):
    """Loads commands lazily, and turns expected failures into one line on stderr and exit code 1."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(COMMANDS) | set(super().list_commands(ctx)))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        registered = super().get_command(ctx, cmd_name)
        if registered is not None or target is None:
            return registered
        module, attribute = target
        command: click.Command = getattr(importlib.import_module(module), attribute)
        return command

    def invoke(self, ctx: click.Context) -> object:
        from kgqa.graph.connection import failure_kind, failure_line
        from neo4j.exceptions import DriverError, Neo4jError

        try:
            return super().invoke(ctx)
        except (KgqaError, Neo4jError, DriverError) as exc:
            _fail(failure_line(exc) or str(exc), failure_kind(exc).exit_code)
        except FileNotFoundError as exc:
            _fail(f"file not found: {exc.filename or exc}", BadInput.exit_code)
        except KeyboardInterrupt:
            _fail("interrupted")
        return None

    def main(self, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        """Click's own usage errors in the same one line as ours (exit code 2, as Click gives them), not
        Click's three lines of usage and hint."""
        kwargs["standalone_mode"] = False
        try:
            code = super().main(*args, **kwargs)
        except click.ClickException as exc:
            click.echo(f"kgqa: error: {exc.format_message()}", err=True)
            sys.exit(exc.exit_code)
        except click.Abort:
            _fail("interrupted")
        except OSError as exc:
            if exc.errno != errno.EPIPE:  # a closed pipe (`kgqa ... | head`) is no error to report
                raise
            sys.exit(1)
        sys.exit(code if isinstance(code, int) else 0)


def _fail(message: str, code: int = KgqaError.exit_code) -> None:
    click.echo(f"kgqa: error: {message}", err=True)
    sys.exit(code)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="kgqa")
def main() -> None:
    """Question answering over knowledge graphs, native to Neo4j."""
