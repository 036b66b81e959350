"""README.md stays short, its links and docs/'s lead to files that exist, and every `kgqa ...` line of their
```bash blocks is a command click would accept as written (parsed, never run: no server, no subprocess)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import click
import pytest
from kgqa.cli.main import main as cli

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
MAX_README_LINES = 160

FENCE = re.compile(r"^```(\w*)\s*$")
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1")
ENV_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
EXTERNAL = re.compile(r"^(?:[a-z][a-z0-9+.-]*:|#)", re.IGNORECASE)


def _prose(text: str) -> str:
    """The text outside fenced code blocks (a Cypher list followed by a parenthesis is no link)."""
    kept: list[str] = []
    fenced = False
    for line in text.splitlines():
        if FENCE.match(line.strip()):
            fenced = not fenced
            continue
        if not fenced:
            kept.append(line)
    return "\n".join(kept)


def relative_links(markdown: Path) -> list[str]:
    """The link and image targets of MARKDOWN that name a file of the repository (no URL, no bare anchor)."""
    prose = _prose(markdown.read_text(encoding="utf-8"))
    targets: list[str] = []
    for line in prose.splitlines():
        targets += [match.group(1) for match in LINK.finditer(INLINE_CODE.sub("", line))]
    return [target for target in targets if not EXTERNAL.match(target)]


def bash_lines(markdown: Path) -> list[tuple[int, str]]:
    """The command lines of MARKDOWN's ```bash blocks, with their line numbers: backslash continuations
    joined, blank lines and comment-only lines left out."""
    lines: list[tuple[int, str]] = []
    in_bash = False
    fenced = False
    pending = ""
    pending_number = 0
    for number, line in enumerate(markdown.read_text(encoding="utf-8").splitlines(), start=1):
        fence = FENCE.match(line.strip())
        if fence:
            in_bash = not fenced and fence.group(1) in ("bash", "sh", "shell")
            fenced = not fenced
            continue
        if not in_bash:
            continue
        if not pending:
            pending_number = number
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        command = (pending + line).strip()
        pending = ""
        if command and not command.startswith("#"):
            lines.append((pending_number, command))
    return lines


def _words(command: str) -> list[str]:
    """COMMAND split as the shell would (comments dropped), less any leading VAR=value assignments."""
    words = shlex.split(command, comments=True)
    while words and ENV_ASSIGNMENT.match(words[0]):
        words = words[1:]
    return words


def check_kgqa(args: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Walk `kgqa ARGS` to its subcommand and let click parse the rest, as `kgqa` would before running it.

    A usage error (unknown command or option, a bad choice, a missing argument) fails. Paths that must exist
    (`--questions ../shared/data/...`) are placeholders here, so only their existence is not required.
    """
    ctx = click.Context(cli, info_name="kgqa")
    command: click.Command = cli
    path = ["kgqa"]
    while isinstance(command, click.Group):
        if not args:
            raise AssertionError(f"`{' '.join(path)}` needs a subcommand")
        name, args = args[0], args[1:]
        sub = command.get_command(ctx, name)
        if sub is None:
            raise AssertionError(f"`{' '.join(path)}` has no subcommand {name!r}")
        path.append(name)
        ctx = click.Context(sub, info_name=name, parent=ctx)
        command = sub
    for param in command.params:
        if isinstance(param.type, click.Path) and param.type.exists:
            monkeypatch.setattr(param.type, "exists", False)
    try:
        command.make_context(" ".join(path), list(args), resilient_parsing=False)
    except click.exceptions.UsageError as exc:
        raise AssertionError(f"`{' '.join(path)}` rejects {args}: {exc.format_message()}") from exc


def check_line(command: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A `kgqa ...` line must parse; any other line must name repository files that exist (scripts/demo)."""
    words = _words(command)
    if not words:
        return
    if words[0] == "kgqa":
        check_kgqa(words[1:], monkeypatch)
        return
    for word in words:
        if "/" in word and not word.startswith(("-", "~", "/", "$", ".")) and not EXTERNAL.match(word):
            assert (ROOT / word).exists(), f"{command!r} names {word}, which the repository does not have"


def test_readme_is_short() -> None:
    lines = len(README.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_README_LINES, f"README.md has {lines} lines (at most {MAX_README_LINES})"


@pytest.mark.parametrize("markdown", [README, *DOCS], ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_exist(markdown: Path) -> None:
    missing = [
        target
        for target in relative_links(markdown)
        if not (markdown.parent / target.split("#", 1)[0]).exists()
    ]
    assert not missing, f"{markdown.relative_to(ROOT)} links to files that do not exist: {missing}"


def test_readme_has_kgqa_commands() -> None:
    commands = [line for _, line in bash_lines(README) if _words(line)[:1] == ["kgqa"]]
    assert len(commands) >= 5, "README.md's bash blocks should show the kgqa commands users run"


@pytest.mark.parametrize("markdown", [README, *DOCS], ids=lambda p: str(p.relative_to(ROOT)))
def test_bash_commands_parse(markdown: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    failures: list[str] = []
    for number, command in bash_lines(markdown):
        try:
            check_line(command, monkeypatch)
        except AssertionError as exc:
            failures.append(f"{markdown.relative_to(ROOT)}:{number}: {exc}")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize(
    "command",
    [
        "kgqa aks 'who directed Kismet'",  # no such subcommand
        "kgqa ask 'who directed Kismet' --methd sgrag",  # no such option
        "kgqa ask 'who directed Kismet' --method sgrg",  # no such choice
        "kgqa train al --kg metaqa",  # no such sub-subcommand
        "kgqa train all",  # a required option left out
        "kgqa train",  # a group without its subcommand
        "scripts/demoo",  # a script that is not there
    ],
)
def test_the_check_catches_mistakes(command: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(AssertionError):
        check_line(command, monkeypatch)
