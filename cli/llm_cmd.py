"""`kgqa llm serve|status|stop`: the optional local SmolLM2 behind an OpenAI-compatible server."""

from __future__ import annotations

import json
from pathlib import Path

import click
from kgqa.answer.local_llm import (
    DEFAULT_PORT,
    LLMServerStatus,
    LocalLLMServer,
    install_server,
    missing_server_modules,
)
from kgqa.cli.options import count_option, json_option


@click.group()
def llm() -> None:
    """The local LLM (SmolLM2-135M-Instruct via llama-cpp-python) for `kgqa ask --llm`."""


def _emit(status: LLMServerStatus, as_json: bool, text: str) -> None:
    click.echo(json.dumps(status.to_dict()) if as_json else text)


@llm.command()
@count_option("--port", DEFAULT_PORT, 1, 65535, "Port on 127.0.0.1.")
@click.option(
    "--model",
    "model",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="A GGUF file to serve instead of the packaged SmolLM2-135M-Instruct.",
)
@click.option(
    "--threads",
    type=click.IntRange(1, 256),
    default=None,
    help="CPU threads for generation (default: KGQA_LLM_THREADS, else half the cores).",
)
@click.option(
    "--install/--no-install",
    default=True,
    show_default=True,
    help="Install llama-cpp-python[server] first when it is missing (compiles llama.cpp the first time).",
)
@json_option("the status")
def serve(port: int, model: Path | None, threads: int | None, install: bool, as_json: bool) -> None:
    """Start the server in the background (a no-op when it runs already)."""
    server = LocalLLMServer()
    if install and server.pid() is None and missing_server_modules(server.python):
        seconds = install_server(server.python, say=lambda m: click.echo(f"kgqa: {m}", err=True))
        click.echo(f"kgqa: the local LLM server installed in {seconds:.0f}s", err=True)
    status = server.start(port=port, model=model, threads=threads)
    if status.already_running:
        text = f"the LLM server is already running at {status.url} (pid {status.pid})"
    else:
        text = (
            f"serving {status.alias} at {status.url} (pid {status.pid}) in {status.seconds:.1f}s\n"
            f'use it with: kgqa ask "..." --llm {status.alias}   (OPENAI_BASE_URL={status.url})'
        )
    _emit(status, as_json, text)


@llm.command()
@json_option("the status")
def status(as_json: bool) -> None:
    """Whether the local LLM server runs, and where."""
    current = LocalLLMServer().status()
    if current.running:
        health = "answering" if current.responding else "not answering yet"
        text = (
            f"the LLM server is running at {current.url} (pid {current.pid}, {health})\n"
            f"  model {current.model}"
        )
    else:
        text = "the LLM server is not running"
    _emit(current, as_json, text)


@llm.command()
def stop() -> None:
    """Stop the local LLM server; a no-op when it is not running."""
    stopped = LocalLLMServer().stop()
    click.echo("the LLM server stopped" if stopped else "the LLM server is not running")
