"""The failures kgqa reports as one line: what went wrong, and what the user can do about it.

Each class carries its exit code (the CLI) and HTTP status (the service) here, once, so that the two front
ends cannot disagree. The route asks its next method only when one raises :class:`CannotRunHere`; any other
failure (a bug, the database gone, bad input) is reported, never mistaken for a missing model.

=====================  =========  ===========  ================================================
class                  exit code  HTTP status  meaning
=====================  =========  ===========  ================================================
KgqaError               1          400          any other failure the user can act on
BadInput                2          400          the caller's question, option or data is wrong
KgNotReady              3          409          the KG is not loaded, or its load is unfinished
CannotRunHere           4          409          a method cannot answer on this KG as installed
ModelMissing            4          409          ... because a trained model is not installed
DatabaseUnavailable     5          503          Neo4j cannot be reached or refuses the login
LlmUnavailable          6          502          the LLM endpoint fails, times out or answers empty
=====================  =========  ===========  ================================================

Click's own usage errors exit with 2 as well, so a script sees one code for "you asked it wrongly".
"""

from typing import ClassVar


class KgqaError(Exception):
    """A problem the user can act on; the message is printed as is, on one line."""

    exit_code: ClassVar[int] = 1
    http_status: ClassVar[int] = 400


class BadInput(KgqaError):
    """The caller's input is wrong: a question, an option's value, a line of a data file (named with its
    file and line)."""

    exit_code = 2


class KgNotReady(KgqaError):
    """The KG asked for is not loaded, or its load has not finished."""

    exit_code = 3
    http_status = 409


class CannotRunHere(KgqaError):
    """A method cannot answer on this KG as it is installed (no vectors, no model, a pattern the KG cannot
    match); the route passes the question to its next method."""

    exit_code = 4
    http_status = 409


class ModelMissing(CannotRunHere):
    """A trained artefact is not installed; the message names the `kgqa train ...` command that makes it."""

    def __init__(self, what: str, command: str, where: str | None = None, takes: str = "") -> None:
        location = f" at {where}" if where else ""
        duration = f" ({takes})" if takes else ""
        super().__init__(f"no {what} is installed{location}; run `{command}` to make it{duration}")
        self.what, self.command = what, command


class DatabaseUnavailable(KgqaError):
    """Neo4j cannot be reached, is not running, or refuses the credentials."""

    exit_code = 5
    http_status = 503


class LlmUnavailable(KgqaError):
    """The LLM endpoint fails, times out, or returns no choices."""

    exit_code = 6
    http_status = 502
