"""The exception types the CLI turns into a one-line message and a non-zero exit."""


class KgqaError(Exception):
    """A problem the user can act on; the message is printed as is, on one line."""


class ModelMissing(KgqaError):
    """A trained artefact is not installed; the message names the `kgqa train ...` command that makes it."""

    def __init__(self, what: str, command: str, where: str | None = None, takes: str = "") -> None:
        location = f" at {where}" if where else ""
        duration = f" ({takes})" if takes else ""
        super().__init__(f"no {what} is installed{location}; run `{command}` to make it{duration}")
        self.what, self.command = what, command
